/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: manager */
#pragma once
/* The manager: owns the queue, the listener thread, the worker pool and the
 * control socket, and runs the main epoll loop (signalfd, control socket,
 * listener sync notifications, a 1 s housekeeping timer). */

#include "udevd/settings.h"

struct manager;

/* Debugging knobs of the manager (udevd(8), DEBUGGING), set by main(). */
struct manager_options {
        int netlink_rcvbuf;       /* --debug-netlink-rcvbuf=BYTES; 0 = 128 MiB, forced */
        const char *resync_match; /* --debug-resync-match=GLOB[|GLOB...]; NULL = all */
        /* Sockets passed by the service manager (udevd/listen-fds.h), used
         * instead of creating them; 0 = not passed (passed fds are >= 3).
         * The manager takes them. */
        int control_fd;
        int uevent_fd;
};

/* Creates /run/udev (repairing what an unclean shutdown left there, see
 * udevd/run-repair.h), the control socket, the uevent socket and the worker
 * pool, whose inotify watch thread (udevd/watch.h) starts here; the listener
 * and the workers start later (manager_start(), on demand). Borrows settings
 * and opts (may be NULL). */
int manager_new(const struct udevd_settings *settings, const struct manager_options *opts,
                struct manager **ret);
/* Start the listener thread: events come in from now on. */
int manager_start(struct manager *m);
/* Run until SIGTERM/SIGINT or a control "exit"; returns the exit status. */
int manager_run(struct manager *m);
void manager_free(struct manager *m);
