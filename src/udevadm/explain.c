/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (udevadm is single-threaded) */
/* udevadm explain [--seqnum=N] [DEVPATH|SYSPATH|DEVNODE]: the rules trace
 * the daemon kept of the last event of a device, or of event N, fetched
 * with the "explain" control query (udevd/explain-ring.h; udevadm(8)
 * UDEVADM EXPLAIN and EXPLAIN OUTPUT). */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "proto/ctrl-msg.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "shared/time-util.h"
#include "udevadm/udevadm.h"

#define EXPLAIN_TIMEOUT_USEC (10 * USEC_PER_SEC)

static int help(void)
{
        printf("%s explain [OPTIONS] [DEVPATH|SYSPATH|DEVNODE]\n\n"
               "Show how the daemon's rules processed the last event of a device.\n\n"
               "  -h --help             Show this help\n"
               "  -V --version          Show package version\n"
               "  -s --seqnum=N         The event with this SEQNUM\n",
               program_invocation_short_name);
        return 0;
}

/* The DEVPATH ("/devices/...") the daemon knows the device by: a SYSPATH or
 * a device node is resolved through sysfs; a DEVPATH of a device that is
 * gone is taken as it is. */
static int to_devpath(const char *arg, char *buf, size_t size)
{
        char path[PATH_MAX], real[PATH_MAX];
        struct stat st;

        if (strncmp(arg, "/dev/", 5) == 0) {
                if (stat(arg, &st) < 0)
                        return log_error_errno(-errno, "Cannot access %s: %m", arg);
                if (!S_ISBLK(st.st_mode) && !S_ISCHR(st.st_mode))
                        return log_error_errno(-ENODEV, "%s is not a device node", arg);
                snprintf(path, sizeof(path), "/sys/dev/%s/%u:%u",
                         S_ISBLK(st.st_mode) ? "block" : "char", major(st.st_rdev),
                         minor(st.st_rdev));
        } else if (strncmp(arg, "/sys/", 5) == 0) {
                snprintf(path, sizeof(path), "%s", arg);
        } else if (arg[0] == '/') {
                if (snprintf(path, sizeof(path), "/sys%s", arg) >= (int)sizeof(path))
                        return log_error_errno(-ENAMETOOLONG, "Path too long: %s", arg);
        } else
                return log_error_errno(-EINVAL, "Not a DEVPATH, SYSPATH or device node: %s",
                                       arg);
        if (realpath(path, real) && strncmp(real, "/sys/", 5) == 0) {
                if (strlen(real + 4) >= size)
                        return log_error_errno(-ENAMETOOLONG, "Path too long: %s", real);
                strcpy(buf, real + 4);
                return 0;
        }
        if (strncmp(arg, "/dev/", 5) == 0)
                return log_error_errno(-ENODEV, "No sysfs device for %s", arg);
        /* gone: as given */
        arg = strncmp(arg, "/sys/", 5) == 0 ? arg + 4 : arg;
        if (strlen(arg) >= size)
                return log_error_errno(-ENAMETOOLONG, "Path too long: %s", arg);
        strcpy(buf, arg);
        return 0;
}

int explain_main(int argc, char *argv[])
{
        static const struct option options[] = {
                { "seqnum", required_argument, NULL, 's' },
                { "version", no_argument, NULL, 'V' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        char devpath[CTRL_MSG_VALUE_MAX], query[CTRL_MSG_VALUE_MAX];
        struct ctrl_reply reply = {};
        uint64_t seqnum = 0;
        int c, r, w;

        while ((c = getopt_long(argc, argv, "s:Vh", options, NULL)) >= 0) {
                switch (c) {
                case 's': {
                        char *end;
                        errno = 0;
                        unsigned long long v = strtoull(optarg, &end, 10);
                        if (errno || end == optarg || *end || v == 0)
                                return log_error_errno(-EINVAL, "Invalid --seqnum: %s", optarg);
                        seqnum = v;
                        break;
                }
                case 'V':
                        return udevadm_print_version();
                case 'h':
                        return help();
                default:
                        return -EINVAL;
                }
        }
        if (optind < argc && argv[optind + 1])
                return log_error_errno(-EINVAL, "Extraneous argument: %s", argv[optind + 1]);
        if (optind >= argc && seqnum == 0)
                return log_error_errno(-EINVAL, "A device or --seqnum= is needed.");
        devpath[0] = '\0';
        if (optind < argc) {
                r = to_devpath(argv[optind], devpath, sizeof(devpath));
                if (r < 0)
                        return r;
        }
        if (seqnum > 0)
                w = snprintf(query, sizeof(query), "explain seqnum=%" PRIu64 "%s%s", seqnum,
                             devpath[0] ? " " : "", devpath);
        else
                w = snprintf(query, sizeof(query), "explain %s", devpath);
        if (w < 0 || (size_t)w >= sizeof(query))
                return log_error_errno(-ENAMETOOLONG, "DEVPATH too long for a query: %s",
                                       devpath);
        r = udevadm_query(query, EXPLAIN_TIMEOUT_USEC, &reply);
        if (r == -EOPNOTSUPP)
                return log_error_errno(r, "The running udev daemon does not keep rules traces.");
        if (r < 0)
                return log_error_errno(r, "Failed to ask the udev daemon: %m");
        if (reply.status < 0) {
                fprintf(stderr, "%.*s", (int)reply.len, reply.text ? reply.text : "");
                free(reply.text);
                return reply.status;
        }
        fwrite(reply.text, 1, reply.len, stdout);
        free(reply.text);
        return fflush(stdout) == 0 ? 0 : -EIO;
}
