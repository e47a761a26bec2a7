/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (udevadm is single-threaded) */
/* udevadm monitor: print kernel uevents (group 1) and udev's processed
 * events (group 2) as they arrive, in systemd 252's format
 * (udevadm(8) UDEVADM MONITOR). */

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>

#include "shared/log.h"
#include "shared/macro.h"
#include "shared/time-util.h"
#include "udevadm/netlink-monitor.h"
#include "udevadm/udevadm.h"

struct subsystem_filter {
        const char *subsystem;
        const char *devtype; /* NULL: any */
};

struct monitor_args {
        bool show_property;
        bool print_kernel;
        bool print_udev;
        size_t n_subsystems;
        struct subsystem_filter *subsystems; /* owned array; strings borrowed from argv */
        struct arg_list tags;
};

static void monitor_args_done(struct monitor_args *a)
{
        free(a->subsystems);
        arg_list_done(&a->tags);
}

static int help(void)
{
        printf("%s monitor [OPTIONS]\n\n"
               "Print device events as they arrive.\n\n"
               "  -h --help                                This text\n"
               "  -V --version                             Print the version\n"
               "  -p --property                            Also print every property\n"
               "  -k --kernel                              Events sent by the kernel\n"
               "  -u --udev                                Events sent by the daemon\n"
               "  -s --subsystem-match=SUBSYSTEM[/DEVTYPE] Only this subsystem\n"
               "  -t --tag-match=TAG                       Only devices with this tag\n",
               program_invocation_short_name);
        return 0;
}

static int add_subsystem_filter(struct monitor_args *a, char *arg)
{
        struct subsystem_filter *n;
        char *slash = strchr(arg, '/');

        n = realloc(a->subsystems, (a->n_subsystems + 1) * sizeof(*n));
        if (!n)
                return log_error_errno(-ENOMEM, "Out of memory.");
        a->subsystems = n;
        if (slash)
                *slash = '\0'; /* argv strings are ours to modify */
        n[a->n_subsystems++] = (struct subsystem_filter){
                .subsystem = arg,
                .devtype = slash ? slash + 1 : NULL,
        };
        return 0;
}

/* 1: go on, 0: done (help/version), <0: error. */
static int parse_argv(int argc, char *argv[], struct monitor_args *a)
{
        static const struct option options[] = {
                { "property", no_argument, NULL, 'p' },
                { "environment", no_argument, NULL, 'e' }, /* alias of -p */
                { "kernel", no_argument, NULL, 'k' },
                { "udev", no_argument, NULL, 'u' },
                { "subsystem-match", required_argument, NULL, 's' },
                { "tag-match", required_argument, NULL, 't' },
                { "version", no_argument, NULL, 'V' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        int c, r;

        while ((c = getopt_long(argc, argv, "pekus:t:Vh", options, NULL)) >= 0) {
                switch (c) {
                case 'p':
                case 'e':
                        a->show_property = true;
                        break;
                case 'k':
                        a->print_kernel = true;
                        break;
                case 'u':
                        a->print_udev = true;
                        break;
                case 's':
                        if ((r = add_subsystem_filter(a, optarg)) < 0)
                                return r;
                        break;
                case 't':
                        if ((r = arg_list_add(&a->tags, optarg)) < 0)
                                return r;
                        break;
                case 'V':
                        return udevadm_print_version();
                case 'h':
                        return help();
                default:
                        return -EINVAL;
                }
        }
        /* Like systemd's, positional arguments are ignored. */
        if (!a->print_kernel && !a->print_udev)
                a->print_kernel = a->print_udev = true;
        return 1;
}

/* Userspace filters (as libudev re-applies them): any subsystem[/devtype]
 * filter, and any tag filter, must match. Kernel events carry no tags. */
static bool passes_filter(const struct monitor_args *a, const struct nlmon_event *ev)
{
        bool ok = a->n_subsystems == 0;

        for (size_t i = 0; !ok && i < a->n_subsystems; i++)
                ok = streq(a->subsystems[i].subsystem, ev->subsystem) &&
                     (!a->subsystems[i].devtype ||
                      (ev->devtype && streq(a->subsystems[i].devtype, ev->devtype)));
        if (!ok || a->tags.n == 0)
                return ok;
        for (size_t i = 0; i < a->tags.n; i++)
                if (nlmon_event_has_tag(ev, a->tags.items[i]))
                        return true;
        return false;
}

static void print_event(const struct monitor_args *a, const struct nlmon_event *ev)
{
        printf("%-6s[%llu.%06llu] %-8s %s (%s)\n",
               ev->source == NLMON_GROUP_UDEV ? "UDEV" : "KERNEL",
               (unsigned long long)(ev->recv_usec / USEC_PER_SEC),
               (unsigned long long)(ev->recv_usec % USEC_PER_SEC), ev->action, ev->devpath,
               ev->subsystem);
        if (!a->show_property)
                return;
        for (size_t i = 0; i < ev->n_props; i++)
                printf("%s=%s\n", ev->props[i].key, ev->props[i].value);
        printf("\n");
}

/* Receive and print at most one event. 1: one datagram taken, 0: nothing
 * pending, -errno on error. */
static int handle_one(const struct monitor_args *a, int fd, enum nlmon_group group,
                      struct nlmon_event *ev)
{
        int r;

        if (fd < 0)
                return 0;
        r = nlmon_receive(fd, group, ev);
        if (r == -EAGAIN)
                return 0;
        if (r < 0)
                return log_error_errno(r, "Failed to receive device event: %m");
        if (r > 0 && passes_filter(a, ev))
                print_event(a, ev);
        return 1;
}

/* Take one datagram from each socket in turn (kernel first: a kernel event
 * precedes udev's one for the same device) until both are empty, so that
 * bursts come out interleaved roughly in arrival order. */
static int drain(const struct monitor_args *a, int kfd, int ufd, struct nlmon_event *ev)
{
        for (;;) {
                int k = handle_one(a, kfd, NLMON_GROUP_KERNEL, ev);
                if (k < 0)
                        return k;
                int u = handle_one(a, ufd, NLMON_GROUP_UDEV, ev);
                if (u < 0)
                        return u;
                if (k == 0 && u == 0)
                        return 0;
        }
}

enum { POLL_SIGNAL, POLL_UDEV, POLL_KERNEL, _POLL_MAX };

static int event_loop(const struct monitor_args *a, struct pollfd pfd[_POLL_MAX])
{
        _cleanup_(nlmon_event_freep) struct nlmon_event *ev = nlmon_event_new();
        int r;

        if (!ev)
                return log_error_errno(-ENOMEM, "Out of memory.");
        for (;;) {
                if (poll(pfd, _POLL_MAX, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        return log_error_errno(errno, "Failed to run event loop: %m");
                }
                if (pfd[POLL_SIGNAL].revents)
                        return 0; /* SIGINT/SIGTERM: normal end */
                r = drain(a, pfd[POLL_KERNEL].fd, pfd[POLL_UDEV].fd, ev);
                if (r < 0)
                        return r;
        }
}

static int run(const struct monitor_args *a)
{
        _cleanup_close_ int sfd = -1, ufd = -1, kfd = -1;
        int r;

        /* Callers expect to see events as they happen. */
        setvbuf(stdout, NULL, _IOLBF, 0);

        r = udevadm_open_signalfd(&sfd);
        if (r < 0)
                return log_error_errno(r, "Failed to set up signal handling: %m");

        printf("monitor will print the received events for:\n");
        if (a->print_udev) {
                r = nlmon_open(NLMON_GROUP_UDEV, &ufd);
                if (r < 0)
                        return log_error_errno(r, "Failed to create netlink socket: %m");
                printf("UDEV - the event which udev sends out after rule processing\n");
        }
        if (a->print_kernel) {
                r = nlmon_open(NLMON_GROUP_KERNEL, &kfd);
                if (r < 0)
                        return log_error_errno(r, "Failed to create netlink socket: %m");
                printf("KERNEL - the kernel uevent\n");
        }
        printf("\n");

        struct pollfd pfd[_POLL_MAX] = {
                [POLL_SIGNAL] = { .fd = sfd, .events = POLLIN },
                [POLL_UDEV] = { .fd = ufd, .events = POLLIN },   /* fd -1: ignored */
                [POLL_KERNEL] = { .fd = kfd, .events = POLLIN },
        };
        return event_loop(a, pfd);
}

int monitor_main(int argc, char *argv[])
{
        struct monitor_args a = {};
        int r;

        r = parse_argv(argc, argv, &a);
        if (r > 0) {
                if (udevadm_running_in_chroot())
                        log_info("Running in chroot, ignoring request.");
                else
                        r = run(&a);
        }
        monitor_args_done(&a);
        return r < 0 ? r : 0;
}
