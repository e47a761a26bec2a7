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
 *     otherwise re-checked every SETTLE_EXISTS_POLL_USEC. */

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "shared/log.h"
#include "shared/macro.h"
#include "shared/time-util.h"
#include "udevadm/udevadm.h"

#define SETTLE_DEFAULT_TIMEOUT_USEC (120 * USEC_PER_SEC)
#define SETTLE_PING_MIN_TIMEOUT_USEC (5 * USEC_PER_SEC)
#define SETTLE_EXISTS_POLL_USEC (200 * USEC_PER_MSEC)
#define SETTLE_INOTIFY_BUF 4096

struct settle_args {
        uint64_t timeout_usec;
        const char *exists; /* borrowed from argv, or NULL */
};

static int help(void)
{
        printf("%s settle [OPTIONS]\n\n"
               "Wait until the daemon has processed every queued event.\n\n"
               "  -h --help                 This text\n"
               "  -V --version              Print the version\n"
               "  -t --timeout=SEC          Give up after SEC seconds (default: 120)\n"
               "  -E --exit-if-exists=FILE  Also stop waiting once FILE exists\n",
               program_invocation_short_name);
        return 0;
}

static bool path_is_valid(const char *p)
{
        size_t n = strlen(p);

        return n > 0 && n < PATH_MAX;
}

/* 1: go on, 0: done (help/version), <0: error. */
static int parse_argv(int argc, char *argv[], struct settle_args *a)
{
        static const struct option options[] = {
                { "timeout", required_argument, NULL, 't' },
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
                        if (now >= deadline)
                                return log_error_errno(
                                        -ETIMEDOUT,
                                        "Timed out for waiting the udev queue being empty.");
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

int settle_main(int argc, char *argv[])
{
        struct settle_args a = { .timeout_usec = SETTLE_DEFAULT_TIMEOUT_USEC };
        int r;

        r = parse_argv(argc, argv, &a);
        if (r <= 0)
                return r;
        if (udevadm_running_in_chroot()) {
                log_info("Running in chroot, ignoring request.");
                return 0;
        }
        r = ping_daemon(&a);
        if (r <= 0)
                return r;
        return wait_for_queue(&a);
}
