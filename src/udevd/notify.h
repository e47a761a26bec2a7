/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: manager */
#pragma once
/* Readiness and status for supervisors, without libsystemd:
 *  - systemd: datagrams to $NOTIFY_SOCKET ("READY=1", "RELOADING=1",
 *    "STOPPING=1", "STATUS=..."), path or abstract ("@name") socket;
 *  - s6 and similar: --ready-fd=N gets one "\n" and is closed when ready. */

struct notifier {
        int ready_fd;          /* -1 if none */
        char socket_path[108]; /* "" if no NOTIFY_SOCKET */
};

/* Reads and unsets nothing: NOTIFY_SOCKET is read once at start-up (before
 * threads). ready_fd < 0: none. */
void notifier_init(struct notifier *n, int ready_fd);
/* Send a notify message (no-op without NOTIFY_SOCKET). */
int notifier_send(const struct notifier *n, const char *msg);
/* Ready: notify READY=1 + status and write/close the ready fd. */
void notifier_ready(struct notifier *n, const char *status);
