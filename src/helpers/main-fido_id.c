/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: main only (single-threaded program) */
/* fido_id [SYSFS_PATH]: ID_FIDO_TOKEN=1 and ID_SECURITY_TOKEN=1 when the
 * hidraw device (from the event's environment, DEVPATH & co., or the syspath
 * given) sits on a HID device whose report descriptor declares the FIDO
 * CTAPHID usage, for 60-fido-id.rules; options, output and exit status of
 * systemd 252's fido_id (work in hid-fido.c). Exit 0 whether a token or not;
 * 1 for a bad command line, an environment without a complete device
 * (DEVPATH, SUBSYSTEM, ACTION, SEQNUM), no parent device, a report
 * descriptor that cannot be read, is empty or is malformed. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers/hid-fido.h"
#include "shared/log.h"
#include "shared/macro.h"

#define SYSFS "/sys"

/* The device of the event in the environment, as sd-device takes it: its
 * syspath, without looking at the file system. 0 and *ret or -EINVAL. */
static int syspath_from_environment(char **ret)
{
        static const char *const actions[] = { "add",     "remove", "change", "move",
                                               "online",  "offline", "bind",  "unbind" };
        const char *devpath = getenv("DEVPATH"), *subsystem = getenv("SUBSYSTEM");
        const char *action = getenv("ACTION"), *seqnum = getenv("SEQNUM");
        unsigned long long n;
        bool action_ok = false;
        char *end;

        if (action)
                for (size_t i = 0; i < ARRAY_SIZE(actions); i++)
                        action_ok = action_ok || streq(action, actions[i]);
        if (!devpath || devpath[0] != '/' || !devpath[1] || !subsystem || !action_ok || !seqnum)
                return -EINVAL;
        errno = 0;
        n = strtoull(seqnum, &end, 10);
        if (errno || end == seqnum || *end || seqnum[0] == '-' || n == 0)
                return -EINVAL;
        return asprintf(ret, SYSFS "%s", devpath) < 0 ? -ENOMEM : 0;
}

int main(int argc, char *argv[])
{
        _cleanup_free_ char *syspath = NULL, *parent = NULL, *desc_path = NULL;
        _cleanup_close_ int fd = -1;
        uint8_t desc[HID_DESCRIPTOR_MAX];
        ssize_t len;
        int r;

        log_set_target(LOG_TARGET_CONSOLE, "fido_id");
        log_set_console_plain(true);
        if (argc > 2) {
                log_error("Usage: %s [SYSFS_PATH]", program_invocation_short_name);
                return 1;
        }
        if (argc == 1) {
                r = syspath_from_environment(&syspath);
                if (r < 0) {
                        log_error_errno(r, "Failed to get current device from environment: %m");
                        return 1;
                }
        } else {
                if (strncmp(argv[1], SYSFS "/", STRLEN(SYSFS "/")) != 0)
                        r = -EINVAL;
                else
                        r = hid_device_syspath(SYSFS, argv[1], &syspath);
                if (r < 0) {
                        log_error_errno(r, "Failed to get device from syspath: %m");
                        return 1;
                }
        }

        r = hid_parent_syspath(SYSFS, syspath, &parent);
        if (r == -ENODEV)
                r = -ENOENT; /* as sd_device_get_parent() says it */
        if (r < 0) {
                log_error_errno(r, "Failed to get parent HID device: %m");
                return 1;
        }
        if (asprintf(&desc_path, "%s/report_descriptor", parent) < 0)
                return 1;
        fd = open(desc_path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
                log_error_errno(negative_errno(), "Failed to open report descriptor at '%s': %m",
                                desc_path);
                return 1;
        }
        /* one read, as systemd: sysfs hands out the whole descriptor */
        len = read(fd, desc, sizeof(desc));
        if (len < 0) {
                log_error_errno(negative_errno(), "Failed to read report descriptor at '%s': %m",
                                desc_path);
                return 1;
        }
        if (len == 0) {
                log_debug("Empty report descriptor at '%s'.", desc_path);
                return 1;
        }
        r = hid_fido_is_token(desc, (size_t)len);
        if (r < 0) {
                log_debug("Failed to parse report descriptor at '%s'.", desc_path);
                return 1;
        }
        if (r > 0)
                fputs("ID_FIDO_TOKEN=1\nID_SECURITY_TOKEN=1\n", stdout);
        return fflush(stdout) == 0 ? 0 : 1;
}
