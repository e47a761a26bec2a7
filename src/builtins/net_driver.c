/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (one ethtool socket per call; no shared state) */
/* net_driver (systemd 253 and later): ID_NET_DRIVER, the driver name the
 * kernel reports for the interface through ethtool (ETHTOOL_GDRVINFO), as
 * `IMPORT{builtin}="net_driver"` in systemd 257's 50-udev-default.rules
 * expects. An interface whose driver does not answer ethtool, or that is
 * gone already, gets no property and is not an error; any other failure is
 * logged and returned. The ioctl needs the interface's network namespace:
 * the worker's. */
#include <errno.h>
#include <unistd.h>

#include "builtins/builtins-internal.h"
#include "builtins/link-netlink.h"
#include "device/device.h"
#include "event/udev-event.h"
#include "shared/log.h"

#define NET_DRIVER_MAX 64 /* > sizeof(struct ethtool_drvinfo.driver) */

static bool not_supported(int r)
{
        return r == -EOPNOTSUPP || r == -ENOTTY || r == -ENOSYS || r == -EAFNOSUPPORT ||
               r == -EPFNOSUPPORT || r == -EPROTONOSUPPORT || r == -ESOCKTNOSUPPORT ||
               r == -ENOPROTOOPT;
}

int builtin_net_driver(struct udev_event *ev, int argc, char *argv[], bool test)
{
        const char *sysname = device_sysname(ev->dev);
        char driver[NET_DRIVER_MAX];
        int fd = -1, r;

        (void)argc, (void)argv;
        if (!sysname)
                return log_warning_errno(-ENOENT, "Failed to get sysname: %m");
        r = ethtool_get_driver(&fd, sysname, driver, sizeof(driver));
        if (fd >= 0)
                close(fd);
        if (not_supported(r)) {
                log_debug_errno(r, "%s: Querying driver name via ethtool API is not supported "
                                "by device '%s', ignoring: %m", sysname, sysname);
                return 0;
        }
        if (r == -ENODEV) {
                log_debug_errno(r, "%s: Device already vanished, ignoring.", sysname);
                return 0;
        }
        if (r < 0)
                return log_warning_errno(r, "%s: Failed to get driver for '%s': %m", sysname,
                                         sysname);
        return builtin_add_property(ev, test, "ID_NET_DRIVER", driver);
}
