/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: manager (main(), before any thread exists: it changes the environment) */
#pragma once
/* Sockets passed by a service manager: systemd's socket activation
 * (systemd-udevd-control.socket, systemd-udevd-kernel.socket), the
 * sd_listen_fds protocol, without libsystemd.
 *
 * The protocol: the manager leaves the sockets open at fds 3, 4, ... 3+N-1
 * and sets LISTEN_FDS=N and LISTEN_PID=<the daemon's PID> (LISTEN_FDNAMES
 * too, which is not needed: each fd is recognised by what it is). The fds
 * are for us only when LISTEN_PID is our own PID: a variable inherited by
 * accident from a parent that was activated names another process.
 *
 * listen_fds_take() reads the variables once, unsets LISTEN_PID, LISTEN_FDS
 * and LISTEN_FDNAMES (whatever they said: nothing this daemon starts may
 * take them as its own), sets FD_CLOEXEC on every passed fd, and sorts them:
 *   - control: an AF_UNIX SOCK_SEQPACKET socket that listens (SO_ACCEPTCONN)
 *     and is bound to `control_path` (getsockname());
 *   - uevent: an AF_NETLINK socket of protocol NETLINK_KOBJECT_UEVENT,
 *     SOCK_RAW or SOCK_DGRAM, bound to multicast group 1 (the kernel's).
 * Anything else, and a second socket of a kind already found, is logged at
 * warning level and closed. A kind not passed is created by the daemon as
 * without a service manager.
 *
 * A passed control socket belongs to the service manager: the daemon serves
 * it but never unlinks or replaces its path (udevd/ctrl-server.h), and does
 * not probe it for another daemon (udevd/instance-lock.h). */

#include <sys/types.h>

#define LISTEN_FDS_START 3
/* More than this many passed fds is taken as a malformed LISTEN_FDS. */
#define LISTEN_FDS_MAX 64

enum listen_fd_kind {
        LISTEN_FD_OTHER,   /* neither of the two: not ours */
        LISTEN_FD_CONTROL, /* the control socket */
        LISTEN_FD_UEVENT,  /* the kernel uevent socket */
};

struct listen_fds {
        int control_fd; /* -1: not passed */
        int uevent_fd;  /* -1: not passed */
};

/* Pure: the values of LISTEN_PID and LISTEN_FDS (each may be NULL) for the
 * process `self`. *ret_n: the number of fds passed to us, 0 when the
 * variables are absent or name another PID. -EINVAL (and *ret_n = 0) when
 * a value is not a decimal number in range (LISTEN_FDS at most
 * LISTEN_FDS_MAX). */
int listen_fds_parse(const char *pid_text, const char *fds_text, pid_t self, unsigned *ret_n);

/* What `fd` is, by getsockopt() and getsockname() (see above). */
enum listen_fd_kind listen_fd_classify(int fd, const char *control_path);

/* Reads and unsets the environment, adopts what was passed (see above).
 * Returns the number of sockets adopted (0, 1 or 2); ret->*_fd are -1 for
 * those not passed. Never fails: a malformed environment is logged and
 * ignored. */
int listen_fds_take(const char *control_path, struct listen_fds *ret);
