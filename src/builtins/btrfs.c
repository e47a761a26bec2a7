/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (no state outside the call) */
/* The btrfs builtin, as systemd 252's
 * udev-builtin-btrfs.c:
 *
 *   btrfs ready DEVNODE
 *
 * Asks the kernel (BTRFS_IOC_DEVICES_READY on /dev/btrfs-control) whether
 * every member device of the btrfs filesystem on DEVNODE is present:
 * ID_BTRFS_READY=1 if so, 0 if not; also 0 when the btrfs driver is absent
 * (no control node), so that an initrd without btrfs.ko does not mount a
 * half-assembled filesystem. */
#include <errno.h>
#include <fcntl.h>
#include <linux/btrfs.h>
#include <string.h>
#include <sys/ioctl.h>

#include "builtins/builtins-internal.h"
#include "device/device.h"
#include "event/udev-event.h"
#include "shared/log.h"
#include "shared/macro.h"

#define BTRFS_CONTROL "/dev/btrfs-control"

int builtin_btrfs(struct udev_event *ev, int argc, char *argv[], bool test)
{
        const char *sysname = device_sysname(ev->dev);
        struct btrfs_ioctl_vol_args args = {};
        _cleanup_close_ int fd = -1;
        int r;

        if (argc != 3 || !streq(argv[1], "ready"))
                return log_error_errno(-EINVAL, "%s: Invalid arguments", sysname);

        fd = open(BTRFS_CONTROL, O_RDWR | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) {
                r = negative_errno();
                /* driver not there: not ready (yet) */
                if (r == -ENOENT || r == -ENXIO || r == -ENODEV)
                        return builtin_add_property(ev, test, "ID_BTRFS_READY", "0");
                return log_debug_errno(r, "%s: Failed to open %s: %m", sysname, BTRFS_CONTROL);
        }
        /* the kernel takes a NUL-terminated path; longer ones are cut, as systemd does */
        strncpy(args.name, argv[2], sizeof(args.name) - 1);
        r = ioctl(fd, BTRFS_IOC_DEVICES_READY, &args);
        if (r < 0)
                return log_debug_errno(negative_errno(),
                                       "%s: Failed to call BTRFS_IOC_DEVICES_READY: %m", sysname);
        return builtin_add_property(ev, test, "ID_BTRFS_READY", r == 0 ? "1" : "0");
}
