/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (udevadm is single-threaded) */
/* udevadm stats: the running daemon's event statistics (udevadm(8), "UDEVADM
 * STATS"), fetched with the "stats", "stats-json" or "stats-prometheus" query
 * (proto/ctrl-msg.h QUERIES; the daemon formats them, udevd/stats.h). */

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/log.h"
#include "shared/macro.h"
#include "shared/time-util.h"
#include "udevadm/udevadm.h"

#define STATS_DEFAULT_TIMEOUT_USEC (10 * USEC_PER_SEC)

static int help(void)
{
        printf("%s stats [OPTIONS]\n\n"
               "Show the running daemon's event statistics.\n\n"
               "  -h --help            This text\n"
               "  -V --version         Print the version\n"
               "  -j --json            JSON, for scripts\n"
               "  -p --prometheus      Prometheus text format (node_exporter textfile)\n"
               "  -t --timeout=SEC     Give up after SEC seconds (default: 10)\n",
               program_invocation_short_name);
        return 0;
}

int stats_main(int argc, char *argv[])
{
        static const struct option options[] = {
                { "json", no_argument, NULL, 'j' },
                { "prometheus", no_argument, NULL, 'p' },
                { "timeout", required_argument, NULL, 't' },
                { "version", no_argument, NULL, 'V' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        const char *query = "stats";
        uint64_t timeout = STATS_DEFAULT_TIMEOUT_USEC;
        struct ctrl_reply rep;
        int c, r;

        while ((c = getopt_long(argc, argv, "jpt:Vh", options, NULL)) >= 0) {
                switch (c) {
                case 'j':
                        query = "stats-json";
                        break;
                case 'p':
                        query = "stats-prometheus";
                        break;
                case 't':
                        r = udevadm_parse_sec(optarg, &timeout);
                        if (r < 0)
                                return log_error_errno(r, "Failed to parse timeout value '%s': %m",
                                                       optarg);
                        break;
                case 'V':
                        return udevadm_print_version();
                case 'h':
                        return help();
                default:
                        return -EINVAL;
                }
        }
        if (optind < argc)
                return log_error_errno(-EINVAL, "Unexpected argument: %s", argv[optind]);

        r = udevadm_query(query, timeout, &rep);
        if (r == -EOPNOTSUPP)
                return log_error_errno(r, "The running udev daemon does not answer queries "
                                       "(not tudev?): %m");
        if (r == -ENOENT || r == -ECONNREFUSED)
                return log_error_errno(r, "The udev daemon is not running: %m");
        if (r < 0)
                return log_error_errno(r, "Failed to query the udev daemon: %m");
        if (rep.status < 0) {
                log_error("The daemon refused the query: %.*s", (int)strcspn(rep.text ?: "", "\n"),
                          rep.text ?: "");
                r = rep.status;
        } else if (rep.len > 0 && fwrite(rep.text, 1, rep.len, stdout) != rep.len) {
                r = log_error_errno(-EIO, "Failed to write the statistics: %m");
        }
        free(rep.text);
        if (fflush(stdout) != 0 && r >= 0)
                r = log_error_errno(-errno, "Failed to write the statistics: %m");
        return r;
}
