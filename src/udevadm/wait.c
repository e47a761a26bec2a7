/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (udevadm is single-threaded) */
/* udevadm wait: wait until devices exist and are initialized, or are gone
 * (udevadm(8), "UDEVADM WAIT"; the behaviour of systemd 252's udevadm wait).
 *
 *   udevadm wait [-t SEC] [--initialized=BOOL] [--removed] [--settle] DEVICE...
 *
 * DEVICE is a /sys path or a /dev node or symlink. A device is
 *   initialized: it can be looked up (udevice_new_from_path()) and has a
 *                database record (udevice_is_initialized());
 *   added:       (--initialized=no) it can be looked up;
 *   removed:     (--removed) the path itself (not followed) does not exist.
 * With --settle the event queue must also be empty (udev_queue_is_empty()).
 *
 * All devices are checked once; if not all are ready, the check is repeated
 * after every event of the udev monitor (the kernel monitor too when only
 * existence matters), after every change in /run/udev with --settle, and, when
 * only existence matters, every WAIT_PERIODIC_USEC (the kernel does not always
 * announce loop devices): there the devices must have been seen ready by two
 * ticks in a row, to give their event a chance to arrive first, as systemd
 * does. Only events of the awaited kind trigger a check: "remove" events with
 * --removed, the others otherwise. systemd first compares the event's names
 * (sysname, DEVNAME, DEVLINKS) with the arguments to save checks; a check
 * costs a few system calls per device, so here every such event triggers one,
 * which also notices arguments no name of an event matches (/sys/dev/block/M:m,
 * /dev/block/M:m).
 *
 * Exit status 0 once everything is ready; 1 on bad arguments, on setup errors
 * and on timeout ("Timed out for waiting devices being <state>."). */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "builtins/builtin-util.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "shared/time-util.h"
#include "udevadm/netlink-monitor.h"
#include "udevadm/udevadm.h"
#include "udevadm/udevice.h"

#define WAIT_PERIODIC_USEC (250 * USEC_PER_MSEC)
#define WAIT_PERIODIC_HITS 2
#define WAIT_INOTIFY_BUF 4096

enum wait_until {
        WAIT_UNTIL_INITIALIZED,
        WAIT_UNTIL_ADDED,
        WAIT_UNTIL_REMOVED,
};

static const char *const wait_until_name[] = {
        [WAIT_UNTIL_INITIALIZED] = "initialized",
        [WAIT_UNTIL_ADDED] = "added",
        [WAIT_UNTIL_REMOVED] = "removed",
};

struct wait_args {
        enum wait_until until;
        uint64_t timeout_usec;
        bool settle;
        char **devices; /* owned array of owned, simplified paths */
        size_t n_devices;
};

static void wait_args_done(struct wait_args *a)
{
        for (size_t i = 0; i < a->n_devices; i++)
                free(a->devices[i]);
        free(a->devices);
        a->devices = NULL;
        a->n_devices = 0;
}

static int help(void)
{
        printf("%s wait [OPTIONS] DEVICE [DEVICE...]\n\n"
               "Wait until devices or device symlinks exist and are initialized.\n\n"
               "  -h --help             This text\n"
               "  -V --version          Print the version\n"
               "  -t --timeout=SEC      Give up after SEC seconds (default: infinity)\n"
               "     --initialized=BOOL Also wait for the daemon to initialize them\n"
               "                        (default: yes)\n"
               "     --removed          Wait until they are gone instead\n"
               "     --settle           Also wait until the event queue is empty\n",
               program_invocation_short_name);
        return 0;
}

/* 1: go on, 0: done (help/version), <0: error. */
static int parse_argv(int argc, char *argv[], struct wait_args *a)
{
        enum {
                ARG_INITIALIZED = 0x100,
                ARG_REMOVED,
                ARG_SETTLE,
        };
        static const struct option options[] = {
                { "timeout", required_argument, NULL, 't' },
                { "initialized", required_argument, NULL, ARG_INITIALIZED },
                { "removed", no_argument, NULL, ARG_REMOVED },
                { "settle", no_argument, NULL, ARG_SETTLE },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                {}
        };
        int c, r;

        while ((c = getopt_long(argc, argv, "t:hV", options, NULL)) >= 0) {
                switch (c) {
                case 't':
                        r = udevadm_parse_sec(optarg, &a->timeout_usec);
                        if (r < 0)
                                return log_error_errno(r,
                                                       "Failed to parse -t/--timeout= parameter: %s",
                                                       optarg);
                        break;
                case ARG_INITIALIZED:
                        r = parse_boolean(optarg);
                        if (r < 0)
                                return log_error_errno(r,
                                                       "Failed to parse --initialized= parameter: %s",
                                                       optarg);
                        a->until = r ? WAIT_UNTIL_INITIALIZED : WAIT_UNTIL_ADDED;
                        break;
                case ARG_REMOVED:
                        a->until = WAIT_UNTIL_REMOVED;
                        break;
                case ARG_SETTLE:
                        a->settle = true;
                        break;
                case 'V':
                        return udevadm_print_version();
                case 'h':
                        return help();
                default:
                        return -EINVAL;
                }
        }
        if (optind >= argc)
                return log_error_errno(-EINVAL, "Too few arguments, expected at least one "
                                                "device path or device symlink.");

        a->devices = calloc((size_t)(argc - optind), sizeof(char *));
        if (!a->devices)
                return log_error_errno(-ENOMEM, "Out of memory.");
        for (int i = optind; i < argc; i++) {
                char *p = strdup(argv[i]);

                if (!p)
                        return log_error_errno(-ENOMEM, "Out of memory.");
                a->devices[a->n_devices++] = udevadm_path_simplify(p);
        }
        return 1;
}

static int check_arguments(const struct wait_args *a)
{
        for (size_t i = 0; i < a->n_devices; i++) {
                const char *p = a->devices[i];

                if (!udevadm_path_is_safe(p))
                        return log_error_errno(-EINVAL, "Device path cannot contain \"..\".");
                if (!path_startswith(p, "/dev") && !path_startswith(p, "/sys"))
                        return log_error_errno(-EINVAL, "Specified path \"%s\" does not start "
                                                        "with \"/dev/\" or \"/sys/\".", p);
        }
        return 0;
}

/* 1: this device is in the awaited state, 0: not (yet), -errno: unknown. */
static int check_device(const struct wait_args *a, const char *path)
{
        _cleanup_(udevice_freep) struct udevice *d = NULL;
        struct stat st;
        int r;

        if (a->until == WAIT_UNTIL_REMOVED) {
                if (fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) >= 0)
                        return 0;
                return errno == ENOENT ? 1 : negative_errno();
        }
        r = udevice_new_from_path(path, &d);
        if (r == -ENODEV)
                return 0;
        if (r < 0)
                return r;
        if (a->until == WAIT_UNTIL_INITIALIZED)
                return udevice_is_initialized(d);
        return 1;
}

/* Everything ready? Errors are logged and count as "not ready", except a
 * failure to tell whether the queue is empty, which counts as empty. */
static bool check_all(const struct wait_args *a)
{
        const char *state = wait_until_name[a->until];
        int r;

        if (a->settle) {
                r = udev_queue_is_empty();
                if (r == 0)
                        return false;
                if (r < 0)
                        log_warning_errno(r, "Failed to check if udev queue is empty, "
                                             "assuming empty: %m");
        }
        for (size_t i = 0; i < a->n_devices; i++) {
                r = check_device(a, a->devices[i]);
                if (r < 0)
                        log_warning_errno(r, "Failed to check if device \"%s\" is %s, "
                                             "assuming not %s: %m", a->devices[i], state, state);
                if (r <= 0)
                        return false;
        }
        return true;
}

enum { POLL_UDEV, POLL_KERNEL, POLL_INOTIFY, _POLL_MAX };

struct waiter {
        const struct wait_args *args;
        struct pollfd pfd[_POLL_MAX];   /* fd -1: not used */
        struct nlmon_event *ev;         /* owned */
        uint64_t deadline;              /* CLOCK_BOOTTIME, or USEC_INFINITY */
        uint64_t next_tick;             /* CLOCK_BOOTTIME, or USEC_INFINITY */
        unsigned ticks_ready;
};

static void waiter_done(struct waiter *w)
{
        for (size_t i = 0; i < _POLL_MAX; i++)
                w->pfd[i].fd = safe_close(w->pfd[i].fd);
        nlmon_event_free(w->ev);
        w->ev = NULL;
}

static int setup(struct waiter *w)
{
        const struct wait_args *a = w->args;
        int r;

        for (size_t i = 0; i < _POLL_MAX; i++)
                w->pfd[i] = (struct pollfd){ .fd = -1, .events = POLLIN };
        w->deadline = a->timeout_usec == USEC_INFINITY
                              ? USEC_INFINITY
                              : now_usec(CLOCK_BOOTTIME) + a->timeout_usec;
        w->next_tick = USEC_INFINITY;

        w->ev = nlmon_event_new();
        if (!w->ev)
                return log_error_errno(-ENOMEM, "Out of memory.");
        if (a->settle) {
                w->pfd[POLL_INOTIFY].fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
                if (w->pfd[POLL_INOTIFY].fd < 0 ||
                    inotify_add_watch(w->pfd[POLL_INOTIFY].fd, UDEV_RUN_DIR,
                                      IN_CREATE | IN_DELETE | IN_ONLYDIR) < 0)
                        return log_error_errno(errno, "Failed to set up inotify: %m");
        }
        r = nlmon_open(NLMON_GROUP_UDEV, &w->pfd[POLL_UDEV].fd);
        if (r < 0)
                return log_error_errno(r, "Failed to set up udev uevent monitor: %m");
        if (a->until == WAIT_UNTIL_ADDED) {
                /* Existence is visible as soon as the kernel announces the
                 * device; the udev monitor still matters for symlinks. */
                r = nlmon_open(NLMON_GROUP_KERNEL, &w->pfd[POLL_KERNEL].fd);
                if (r < 0)
                        return log_error_errno(r, "Failed to set up kernel uevent monitor: %m");
                w->next_tick = now_usec(CLOCK_BOOTTIME) + WAIT_PERIODIC_USEC;
        }
        return 0;
}

/* Take every pending datagram of one monitor socket. Returns true if one of
 * them may have changed the outcome of a check: an event of the awaited kind,
 * or a datagram that was dropped (its kind is unknown). */
static bool drain_monitor(struct waiter *w, int fd, enum nlmon_group group)
{
        bool want_remove = w->args->until == WAIT_UNTIL_REMOVED, relevant = false;

        if (fd < 0)
                return false;
        for (;;) {
                int r = nlmon_receive(fd, group, w->ev);

                if (r == -EAGAIN)
                        return relevant;
                if (r < 0) {
                        log_debug_errno(r, "Failed to receive device event, ignoring: %m");
                        return true;
                }
                if (r == 0 || streq(w->ev->action, "remove") == want_remove)
                        relevant = true;
        }
}

static bool drain_inotify(int fd)
{
        char buf[WAIT_INOTIFY_BUF] __attribute__((aligned(__alignof__(struct inotify_event))));
        bool any = false;

        if (fd < 0)
                return false;
        while (read(fd, buf, sizeof(buf)) > 0)
                any = true;
        return any;
}

static int poll_timeout_ms(const struct waiter *w, uint64_t now)
{
        uint64_t until = MIN(w->deadline, w->next_tick), left;

        if (until == USEC_INFINITY)
                return -1;
        left = until > now ? until - now : 0;
        return (int)MIN((left + USEC_PER_MSEC - 1) / USEC_PER_MSEC, (uint64_t)INT_MAX);
}

/* 0 once everything is ready, -ETIMEDOUT (logged) or another -errno. */
static int event_loop(struct waiter *w)
{
        const struct wait_args *a = w->args;

        for (;;) {
                uint64_t now = now_usec(CLOCK_BOOTTIME);
                bool recheck;

                if (now >= w->deadline)
                        return log_error_errno(-ETIMEDOUT,
                                               "Timed out for waiting devices being %s.",
                                               wait_until_name[a->until]);
                if (poll(w->pfd, _POLL_MAX, poll_timeout_ms(w, now)) < 0 && errno != EINTR)
                        return log_error_errno(errno, "Event loop failed: %m");

                /* Events first: a device announced meanwhile ends the wait
                 * before the periodic check looks at it. */
                recheck = drain_monitor(w, w->pfd[POLL_UDEV].fd, NLMON_GROUP_UDEV);
                recheck |= drain_monitor(w, w->pfd[POLL_KERNEL].fd, NLMON_GROUP_KERNEL);
                recheck |= drain_inotify(w->pfd[POLL_INOTIFY].fd);
                if (recheck && check_all(a))
                        return 0;

                now = now_usec(CLOCK_BOOTTIME);
                if (now >= w->next_tick) {
                        w->ticks_ready = check_all(a) ? w->ticks_ready + 1 : 0;
                        if (w->ticks_ready >= WAIT_PERIODIC_HITS) {
                                log_debug("All requested devices popped up without receiving "
                                          "kernel uevents.");
                                return 0;
                        }
                        w->next_tick = now + WAIT_PERIODIC_USEC;
                }
        }
}

int wait_main(int argc, char *argv[])
{
        struct wait_args a = { .until = WAIT_UNTIL_INITIALIZED, .timeout_usec = USEC_INFINITY };
        struct waiter w = { .args = &a };
        int r;

        r = parse_argv(argc, argv, &a);
        if (r <= 0)
                goto out;
        r = check_arguments(&a);
        if (r < 0)
                goto out;
        /* Maybe nothing to wait for; checked again once the monitors are
         * listening, so that nothing that happens meanwhile is missed. */
        if (!check_all(&a)) {
                r = setup(&w);
                if (r >= 0 && !check_all(&a))
                        r = event_loop(&w);
                waiter_done(&w);
        }
out:
        wait_args_done(&a);
        return r < 0 ? r : 0;
}
