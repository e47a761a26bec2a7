/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (udevadm is single-threaded) */
/* udevadm settle: wait until the daemon's event queue is empty
 * (udevadm(8), "UDEVADM SETTLE"; the control messages are those of
 * proto/ctrl-msg.h).
 *
 *  1. As root: PING + END on /run/udev/control and wait for the close, so
 *     that every uevent the kernel sent before has reached the queue. No
 *     daemon (socket absent or refused): nothing to wait for, exit 0.
 *     Not root: /run/udev/control must at least exist.
 *  2. Done as soon as /run/udev/queue does not exist (or the
 *     --exit-if-exists file exists): checked once, then after each inotify
 *     IN_DELETE event in /run/udev, until the timeout. An --exit-if-exists
 *     file elsewhere is watched through its directory when possible and
 *     otherwise re-checked every SETTLE_EXISTS_POLL_USEC.
 *  2'. Scoped (--seqnum, --subsystem, --devpath; proto/event-scope.h): the
 *     daemon is asked "pending-count SCOPE" (proto/ctrl-msg.h QUERIES) at
 *     once, then every SETTLE_POLL_MIN_USEC doubling up to
 *     SETTLE_POLL_MAX_USEC, until it answers 0 or /run/udev/queue is gone.
 *     A daemon that does not answer queries (systemd-udevd): exit status
 *     SETTLE_EXIT_UNSUPPORTED.
 *  3. On timeout, plain or scoped: the pending events in the scope are
 *     printed to stderr (pending-report.h), then exit status 1. */

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

#include "shared/log.h"
#include "shared/macro.h"
#include "shared/time-util.h"
#include "udevadm/pending-report.h"
#include "udevadm/udevadm.h"

#define SETTLE_DEFAULT_TIMEOUT_USEC (120 * USEC_PER_SEC)
#define SETTLE_PING_MIN_TIMEOUT_USEC (5 * USEC_PER_SEC)
#define SETTLE_EXISTS_POLL_USEC (200 * USEC_PER_MSEC)
#define SETTLE_INOTIFY_BUF 4096
#define SETTLE_POLL_MIN_USEC (1 * USEC_PER_MSEC)
#define SETTLE_POLL_MAX_USEC (10 * USEC_PER_MSEC)
/* Exit status of a scoped settle the daemon cannot answer (udevadm(8)). */
#define SETTLE_EXIT_UNSUPPORTED 2
#define SETTLE_SYSFS_ROOT "/sys"

struct settle_args {
        uint64_t timeout_usec;
        const char *exists; /* borrowed from argv, or NULL */
        struct event_scope scope; /* empty: plain settle */
};

static int help(void)
{
        printf("%s settle [OPTIONS]\n\n"
               "Wait until the daemon has processed every queued event.\n\n"
               "  -h --help                 This text\n"
               "  -V --version              Print the version\n"
               "  -t --timeout=SEC          Give up after SEC seconds (default: 120)\n"
               "  -E --exit-if-exists=FILE  Also stop waiting once FILE exists\n"
               "     --seqnum=N             Only wait for the events up to SEQNUM N\n"
               "     --subsystem=SUBSYSTEM  Only wait for the events of this subsystem\n"
               "     --devpath=DEVPATH      Only wait for the events of this device and\n"
               "                            the devices below it\n",
               program_invocation_short_name);
        return 0;
}

static bool path_is_valid(const char *p)
{
        size_t n = strlen(p);

        return n > 0 && n < PATH_MAX;
}

/* --devpath: a devpath ("/devices/...") or a path under /sys (a link such
 * as /sys/class/net/eth0 is resolved while the device exists). */
static int parse_devpath(const char *arg, char out[EVENT_SCOPE_DEVPATH_MAX])
{
        char path[PATH_MAX], real[PATH_MAX];
        const char *dp;
        int n;

        if (arg[0] != '/' || !udevadm_path_is_safe(arg))
                return -EINVAL;
        if (strncmp(arg, SETTLE_SYSFS_ROOT, strlen(SETTLE_SYSFS_ROOT)) == 0 &&
            (arg[strlen(SETTLE_SYSFS_ROOT)] == '/' || !arg[strlen(SETTLE_SYSFS_ROOT)]))
                n = snprintf(path, sizeof(path), "%s", arg);
        else
                n = snprintf(path, sizeof(path), "%s%s", SETTLE_SYSFS_ROOT, arg);
        if (n < 0 || (size_t)n >= sizeof(path))
                return -ENAMETOOLONG;
        udevadm_path_simplify(path);
        if (realpath(path, real) &&
            strncmp(real, SETTLE_SYSFS_ROOT "/", strlen(SETTLE_SYSFS_ROOT) + 1) == 0)
                dp = real + strlen(SETTLE_SYSFS_ROOT);
        else
                dp = path + strlen(SETTLE_SYSFS_ROOT);
        if (strlen(dp) < 2 || dp[0] != '/')
                return -EINVAL;
        if (strlen(dp) >= EVENT_SCOPE_DEVPATH_MAX)
                return -ENAMETOOLONG;
        strcpy(out, dp);
        return 0;
}

static int parse_subsystem(const char *arg, char out[EVENT_SCOPE_SUBSYSTEM_MAX])
{
        if (!arg[0] || strlen(arg) >= EVENT_SCOPE_SUBSYSTEM_MAX)
                return -EINVAL;
        for (const char *p = arg; *p; p++)
                if ((unsigned char)*p <= ' ' || *p == 0x7f || *p == '/')
                        return -EINVAL;
        strcpy(out, arg);
        return 0;
}

enum {
        ARG_SEQNUM = 0x100,
        ARG_SUBSYSTEM,
        ARG_DEVPATH,
};

/* 1: go on, 0: done (help/version), <0: error. */
static int parse_argv(int argc, char *argv[], struct settle_args *a)
{
        static const struct option options[] = {
                { "timeout", required_argument, NULL, 't' },
                { "seqnum", required_argument, NULL, ARG_SEQNUM },
                { "subsystem", required_argument, NULL, ARG_SUBSYSTEM },
                { "devpath", required_argument, NULL, ARG_DEVPATH },
                { "exit-if-exists", required_argument, NULL, 'E' },
                { "version", no_argument, NULL, 'V' },
                { "help", no_argument, NULL, 'h' },
                { "seq-start", required_argument, NULL, 's' }, /* removed */
                { "seq-end", required_argument, NULL, 'e' },   /* removed */
                { "quiet", no_argument, NULL, 'q' },           /* removed */
                {}
        };
        int c, r;

        while ((c = getopt_long(argc, argv, "t:E:Vhs:e:q", options, NULL)) >= 0) {
                switch (c) {
                case 't':
                        r = udevadm_parse_sec(optarg, &a->timeout_usec);
                        if (r < 0)
                                return log_error_errno(r, "Failed to parse timeout value '%s': %m",
                                                       optarg);
                        break;
                case 'E':
                        if (!path_is_valid(optarg))
                                return log_error_errno(-EINVAL, "Invalid path: %s", optarg);
                        a->exists = optarg;
                        break;
                case ARG_SEQNUM: {
                        char *end;

                        errno = 0;
                        unsigned long long n = strtoull(optarg, &end, 10);
                        if (optarg[0] < '0' || optarg[0] > '9' || *end || errno != 0 || n == 0)
                                return log_error_errno(-EINVAL, "Invalid SEQNUM: %s", optarg);
                        a->scope.seqnum = n;
                        break;
                }
                case ARG_SUBSYSTEM:
                        if (parse_subsystem(optarg, a->scope.subsystem) < 0)
                                return log_error_errno(-EINVAL, "Invalid subsystem: %s", optarg);
                        break;
                case ARG_DEVPATH:
                        r = parse_devpath(optarg, a->scope.devpath);
                        if (r < 0)
                                return log_error_errno(r, "Invalid device path '%s': %m",
                                                       optarg);
                        break;
                case 'V':
                        return udevadm_print_version();
                case 'h':
                        return help();
                case 's':
                case 'e':
                case 'q':
                        log_info("Option -%c no longer supported.", c);
                        return -EINVAL;
                default:
                        return -EINVAL;
                }
        }
        return 1;
}

/* Make sure the daemon has queued everything the kernel sent before now.
 * 1: go on waiting for the queue, 0: no daemon (settled), <0: error. */
static int ping_daemon(const struct settle_args *a)
{
        struct ctrl_conn conn = CTRL_CONN_INIT;
        uint64_t t = MAX(SETTLE_PING_MIN_TIMEOUT_USEC, a->timeout_usec);
        int r;

        if (getuid() != 0) {
                /* Unprivileged: at least check that a daemon is running. */
                if (access(CTRL_SOCKET_PATH, F_OK) < 0) {
                        if (errno == ENOENT)
                                return log_error_errno(errno, "systemd-udevd is not running.");
                        return log_error_errno(errno, "Failed to check if %s exists: %m",
                                               CTRL_SOCKET_PATH);
                }
                return 1;
        }

        r = ctrl_conn_send(&conn, CTRL_MSG_PING, 0, NULL);
        if (r < 0) {
                ctrl_conn_close(&conn);
                log_debug_errno(r, "Failed to connect to udev daemon, ignoring: %m");
                return 0;
        }
        r = ctrl_conn_finish(&conn, t);
        ctrl_conn_close(&conn);
        if (r < 0)
                return log_error_errno(r, "Failed to wait for daemon to reply: %m");
        return 1;
}

int udev_queue_is_empty(void)
{
        if (access(UDEV_QUEUE_FILE, F_OK) >= 0)
                return 0;
        return errno == ENOENT ? 1 : negative_errno();
}

static bool settled(const struct settle_args *a)
{
        if (a->exists) {
                if (access(a->exists, F_OK) >= 0)
                        return true;
                if (errno != ENOENT)
                        log_warning_errno(errno,
                                          "Failed to check the existence of \"%s\", ignoring: %m",
                                          a->exists);
        }
        int r = udev_queue_is_empty();
        if (r < 0)
                log_warning_errno(r, "Failed to check if udev queue is empty, ignoring: %m");
        return r > 0;
}

/* Watch the directory of the --exit-if-exists file for it to appear.
 * Returns true if a watch is in place (no polling needed). */
static bool watch_exists_file(int ifd, const char *path)
{
        char dir[PATH_MAX];
        const char *slash = strrchr(path, '/');
        size_t n;

        if (!slash) {
                if (!getcwd(dir, sizeof(dir)))
                        return false;
        } else {
                n = slash == path ? 1 : (size_t)(slash - path);
                if (n >= sizeof(dir))
                        return false;
                memcpy(dir, path, n);
                dir[n] = '\0';
        }
        if (streq(dir, UDEV_RUN_DIR))
                return inotify_add_watch(ifd, dir, IN_DELETE | IN_CREATE | IN_MOVED_TO |
                                                           IN_ATTRIB | IN_ONLYDIR) >= 0;
        return inotify_add_watch(ifd, dir, IN_CREATE | IN_MOVED_TO | IN_ATTRIB | IN_ONLYDIR) >= 0;
}

static int wait_for_queue(const struct settle_args *a)
{
        _cleanup_close_ int ifd = -1;
        bool poll_exists = false;
        uint64_t deadline = a->timeout_usec == USEC_INFINITY
                                    ? USEC_INFINITY
                                    : now_usec(CLOCK_BOOTTIME) + a->timeout_usec;

        ifd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
        if (ifd < 0)
                return log_error_errno(errno, "Failed to create inotify object: %m");
        if (inotify_add_watch(ifd, UDEV_RUN_DIR, IN_DELETE | IN_ONLYDIR) < 0)
                return log_error_errno(errno, "Failed to add inotify watch for %s: %m",
                                       UDEV_RUN_DIR);
        if (a->exists)
                poll_exists = !watch_exists_file(ifd, a->exists);

        for (;;) {
                uint64_t wait = USEC_INFINITY;
                char buf[SETTLE_INOTIFY_BUF]
                        __attribute__((aligned(__alignof__(struct inotify_event))));
                struct pollfd p = { .fd = ifd, .events = POLLIN };

                /* Checked after the watch is in place, so no deletion is missed. */
                if (settled(a))
                        return 0;
                if (deadline != USEC_INFINITY) {
                        uint64_t now = now_usec(CLOCK_BOOTTIME);
                        if (now >= deadline) {
                                log_error("Timed out for waiting the udev queue being empty.");
                                return -ETIMEDOUT;
                        }
                        wait = deadline - now;
                }
                if (poll_exists)
                        wait = MIN(wait, SETTLE_EXISTS_POLL_USEC);
                int ms = wait == USEC_INFINITY
                                 ? -1
                                 : (int)MIN((wait + USEC_PER_MSEC - 1) / USEC_PER_MSEC,
                                            (uint64_t)INT_MAX);
                if (poll(&p, 1, ms) < 0 && errno != EINTR)
                        return log_error_errno(errno, "Event loop failed: %m");
                /* Drain; the events themselves do not matter, only the re-check. */
                while (read(ifd, buf, sizeof(buf)) > 0)
                        ;
        }
}

static uint64_t deadline_of(uint64_t timeout_usec)
{
        return timeout_usec == USEC_INFINITY ? USEC_INFINITY
                                             : now_usec(CLOCK_BOOTTIME) + timeout_usec;
}

/* The bound for one query: what is left, but at least the ping's minimum
 * (a busy daemon still gets time to answer a --timeout=0 check). */
static uint64_t query_timeout(uint64_t deadline)
{
        uint64_t now;

        if (deadline == USEC_INFINITY)
                return USEC_INFINITY;
        now = now_usec(CLOCK_BOOTTIME);
        return MAX(SETTLE_PING_MIN_TIMEOUT_USEC, deadline > now ? deadline - now : 0);
}

/* 1: events in scope are pending, 0: none, SETTLE_EXIT_UNSUPPORTED, <0: error
 * (logged). */
static int scope_pending(const char *query, uint64_t deadline)
{
        struct ctrl_reply rep;
        uint64_t n = 0;
        char *end;
        int r;

        r = udevadm_query(query, query_timeout(deadline), &rep);
        if (r == -EOPNOTSUPP) {
                log_error("The running udev daemon does not support --seqnum, --subsystem or "
                          "--devpath (it does not answer queries; not tudev?).");
                return SETTLE_EXIT_UNSUPPORTED;
        }
        if (r < 0)
                return log_error_errno(r, "Failed to query the udev daemon: %m");
        if (rep.status < 0) {
                log_error("The daemon refused the query: %.*s", (int)strcspn(rep.text ?: "", "\n"),
                          rep.text ?: "");
                r = rep.status == -ENOENT ? SETTLE_EXIT_UNSUPPORTED : rep.status;
        } else {
                errno = 0;
                n = rep.text ? strtoull(rep.text, &end, 10) : 0;
                if (!rep.text || end == rep.text || *end != '\n' || errno != 0)
                        r = log_error_errno(-EPROTO, "Malformed answer from the udev daemon.");
                else
                        r = n > 0;
        }
        free(rep.text);
        return r;
}

static int wait_for_scope(const struct settle_args *a)
{
        char query[CTRL_MSG_VALUE_MAX];
        uint64_t deadline = deadline_of(a->timeout_usec);
        uint64_t interval = SETTLE_POLL_MIN_USEC;
        int r;

        r = event_scope_format(&a->scope, "pending-count", query, sizeof(query));
        if (r < 0)
                return log_error_errno(r, "Scope too long for a query to the daemon: %m");
        for (bool first = true;; first = false) {
                /* The first answer also tells whether the daemon supports it. */
                if (!first && settled(a))
                        return 0;
                r = scope_pending(query, deadline);
                if (r <= 0 || r == SETTLE_EXIT_UNSUPPORTED)
                        return r;
                if (a->exists && access(a->exists, F_OK) >= 0)
                        return 0;
                if (deadline != USEC_INFINITY) {
                        uint64_t now = now_usec(CLOCK_BOOTTIME);

                        if (now >= deadline) {
                                log_error("Timed out waiting for the events in the scope.");
                                return -ETIMEDOUT;
                        }
                        interval = MIN(interval, deadline - now);
                }
                struct timespec ts = { .tv_sec = (time_t)(interval / USEC_PER_SEC),
                                       .tv_nsec = (long)(interval % USEC_PER_SEC * 1000) };
                nanosleep(&ts, NULL);
                interval = MIN(interval * 2, SETTLE_POLL_MAX_USEC);
        }
}

int settle_main(int argc, char *argv[])
{
        struct settle_args a = { .timeout_usec = SETTLE_DEFAULT_TIMEOUT_USEC };
        bool scoped;
        int r;

        r = parse_argv(argc, argv, &a);
        if (r <= 0)
                return r;
        if (udevadm_running_in_chroot()) {
                log_info("Running in chroot, ignoring request.");
                return 0;
        }
        scoped = !event_scope_is_empty(&a.scope);
        r = ping_daemon(&a);
        if (r <= 0)
                return r;
        r = scoped ? wait_for_scope(&a) : wait_for_queue(&a);
        if (r == -ETIMEDOUT)
                (void)pending_report(scoped ? &a.scope : NULL, NULL, NULL,
                                     SETTLE_PING_MIN_TIMEOUT_USEC);
        return r;
}
