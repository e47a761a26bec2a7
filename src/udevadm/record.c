/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (udevadm is single-threaded) */
/* udevadm record --output=FILE [--duration=S]: the kernel's uevents (group
 * 1, as `udevadm monitor --kernel` sees them) and before each one the sysfs
 * state of its device and the device's parents (record-sysfs.h), written in
 * the recording format (record-file.h) until the duration is over or
 * SIGINT/SIGTERM arrives. `udevadm replay` reads the file (udevadm(8)). */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
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
#include "udevadm/record-file.h"
#include "udevadm/record-sysfs.h"
#include "udevadm/udevadm.h"

struct record_args {
        const char *output;
        uint64_t duration_usec; /* USEC_INFINITY: until a signal */
};

static int help(void)
{
        printf("%s record [OPTIONS]\n\n"
               "Record kernel device events and the sysfs state of their devices.\n\n"
               "  -h --help                 Show this help\n"
               "  -V --version              Show package version\n"
               "  -o --output=FILE          Write the recording to FILE (required)\n"
               "  -t --duration=SECONDS     Stop after this time (default: at SIGINT/SIGTERM)\n",
               program_invocation_short_name);
        return 0;
}

static int parse_argv(int argc, char *argv[], struct record_args *a)
{
        static const struct option options[] = {
                { "output", required_argument, NULL, 'o' },
                { "duration", required_argument, NULL, 't' },
                { "version", no_argument, NULL, 'V' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        int c, r;

        while ((c = getopt_long(argc, argv, "o:t:Vh", options, NULL)) >= 0) {
                switch (c) {
                case 'o':
                        a->output = optarg;
                        break;
                case 't':
                        r = udevadm_parse_sec(optarg, &a->duration_usec);
                        if (r < 0)
                                return log_error_errno(r, "Invalid --duration= value '%s'", optarg);
                        break;
                case 'V':
                        udevadm_print_version();
                        return 0;
                case 'h':
                        return help();
                default:
                        return -EINVAL;
                }
        }
        if (argv[optind])
                return log_error_errno(-EINVAL, "Extraneous argument: %s", argv[optind]);
        if (!a->output)
                return log_error_errno(-EINVAL, "--output=FILE is required.");
        return 1;
}

struct recorder {
        struct record_writer w;
        struct record_sysfs sysfs;
        struct nlmon_event *ev;
        char datagram[UEVENT_BUFFER_MAX];
        bool full;              /* the size cap was reached: stop */
};

/* Pending kernel events, at most RECORD_BATCH (a signal or the end of the
 * duration is noticed between batches even in a storm). 1: a whole batch
 * was taken, 0: the socket is empty (or the recording full), -errno
 * (logged). */
#define RECORD_BATCH 256
static int drain(struct recorder *rc, int fd)
{
        for (unsigned n = 0; n < RECORD_BATCH; n++) {
                int r;

                if (rc->full)
                        return 0;
                r = nlmon_receive(fd, NLMON_GROUP_KERNEL, rc->ev);
                if (r == -EAGAIN)
                        return 0;
                if (r < 0)
                        return log_error_errno(r, "Failed to receive device event: %m");
                if (r == 0 || !rc->ev->kernel)
                        continue;
                const struct uevent *u = rc->ev->kernel;
                int len = uevent_format_kernel(u, rc->datagram, sizeof(rc->datagram));
                if (len <= 0)
                        continue;
                r = record_sysfs_event(&rc->sysfs, &rc->w, u);
                if (r >= 0)
                        r = record_write_event(&rc->w, u->seqnum, rc->datagram, (size_t)len);
                if (r == -E2BIG) {
                        log_warning("The recording reached its size limit (%" PRIu64 " bytes "
                                    "or %d events); stopping.", RECORD_SIZE_MAX,
                                    RECORD_EVENTS_MAX);
                        rc->full = true;
                        return 0;
                }
                if (r < 0)
                        return log_error_errno(r, "Failed to write the recording: %m");
        }
        return 1;
}

static int record_loop(struct recorder *rc, int kfd, int sfd, uint64_t duration_usec)
{
        uint64_t end = duration_usec == USEC_INFINITY ? USEC_INFINITY
                                                      : now_usec(CLOCK_MONOTONIC) + duration_usec;
        struct pollfd pfd[2] = { { .fd = sfd, .events = POLLIN }, { .fd = kfd, .events = POLLIN } };

        while (!rc->full) {
                int timeout = -1, r;

                if (end != USEC_INFINITY) {
                        uint64_t now = now_usec(CLOCK_MONOTONIC);
                        if (now >= end)
                                break;
                        timeout = (int)MIN((end - now + 999) / 1000, (uint64_t)INT32_MAX);
                }
                if (poll(pfd, 2, timeout) < 0) {
                        if (errno == EINTR)
                                continue;
                        return log_error_errno(errno, "Failed to run event loop: %m");
                }
                r = drain(rc, kfd);
                if (r < 0)
                        return r;
                /* caught up: what is recorded so far is in the file */
                if (r == 0 && fflush(rc->w.f) != 0)
                        return log_error_errno(errno, "Failed to write the recording: %m");
                if (pfd[0].revents)
                        break;
        }
        /* what arrived before the end is still recorded (bounded: a storm
         * that goes on must not keep the recorder from stopping) */
        for (unsigned i = 0; i < 1024; i++) {
                int r = drain(rc, kfd);
                if (r <= 0)
                        return r;
        }
        return 0;
}

static int run(const struct record_args *a)
{
        _cleanup_close_ int sfd = -1, kfd = -1;
        _cleanup_(fclosep) FILE *f = NULL;
        struct recorder rc = {};
        int r;

        r = udevadm_open_signalfd(&sfd);
        if (r < 0)
                return log_error_errno(r, "Failed to set up signal handling: %m");
        rc.ev = nlmon_event_new();
        if (!rc.ev)
                return log_error_errno(-ENOMEM, "Out of memory.");
        record_sysfs_init(&rc.sysfs, "/sys");
        r = nlmon_open(NLMON_GROUP_KERNEL, &kfd);
        if (r < 0) {
                log_error_errno(r, "Failed to create netlink socket: %m");
                goto out;
        }
        f = fopen(a->output, "we");
        if (!f) {
                r = log_error_errno(errno, "Failed to open %s: %m", a->output);
                goto out;
        }
        r = record_writer_begin(&rc.w, f);
        if (r >= 0) {
                fflush(f);
                log_info("Recording kernel events to %s.", a->output);
                r = record_loop(&rc, kfd, sfd, a->duration_usec);
        }
        if (r >= 0) {
                r = record_writer_end(&rc.w);
                if (r < 0)
                        log_error_errno(r, "Failed to write %s: %m", a->output);
        }
        if (r >= 0 && fclose(TAKE_PTR(f)) != 0)
                r = log_error_errno(errno, "Failed to write %s: %m", a->output);
        if (r >= 0) {
                log_info("Recorded %" PRIu64 " events, %" PRIu64 " device snapshots, %" PRIu64
                         " bytes.", rc.w.events, rc.sysfs.snapshots, rc.w.bytes);
                if (rc.sysfs.entries_skipped)
                        log_warning("%" PRIu64 " sysfs entries past the limit of %d per device "
                                    "were not recorded.", rc.sysfs.entries_skipped,
                                    RECORD_ENTRIES_MAX);
                if (rc.sysfs.names_skipped)
                        log_warning("%" PRIu64 " sysfs entries with names the recording cannot "
                                    "hold were not recorded.", rc.sysfs.names_skipped);
        }
out:
        record_sysfs_done(&rc.sysfs);
        nlmon_event_free(rc.ev);
        return r;
}

int record_main(int argc, char *argv[])
{
        struct record_args a = { .duration_usec = USEC_INFINITY };
        int r = parse_argv(argc, argv, &a);

        if (r <= 0)
                return r;
        return run(&a);
}
