/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: manager (main(), before any thread exists) */
#pragma once
/* One udev daemon at a time (udevd(8), "SINGLE INSTANCE").
 *
 * instance_lock_take() runs before anything else in the daemon touches the
 * run directory (/run/udev): no start-up repair, no unlink of a control
 * socket, no queue flag until it has returned a lock.
 *
 *   1. <run_dir> is created if missing (0755), then <run_dir>/udevd.lock is
 *      opened (created 0644 if missing; O_RDWR, O_CLOEXEC, O_NOFOLLOW) and
 *      locked with flock(LOCK_EX | LOCK_NB). Held by another open file
 *      description: a tudev udevd runs (or is still exiting); refuse.
 *      An flock belongs to the open file description, so the kernel drops it
 *      when the last fd of it is closed -- when the daemon dies, however it
 *      dies: a crash leaves no stale lock, and a lock file left behind is no
 *      obstacle (it is never removed: removing it would let two daemons lock
 *      two different files).
 *   2. with the lock taken, the control socket <control_path> is tried with
 *      a non-blocking connect(): if it accepts, or its backlog is full
 *      (EAGAIN), a daemon that does not take this lock (systemd-udevd)
 *      serves it; refuse. ECONNREFUSED (a socket left by a dead daemon, or
 *      not a socket) or ENOENT: nobody serves it, and a stale socket is
 *      replaced later by the control server's bind. Any other error cannot
 *      tell; it is logged at debug level and the start goes on.
 *   3. our PID is written into the lock file ("<pid>\n"), so that the next
 *      daemon refused can name us.
 *
 * A refusal is one error message naming the running daemon, e.g.
 *   another udev daemon is running (PID 123, /run/udev/control answers); not starting
 * (PID from the lock file, else from SO_PEERCRED of the socket; left out
 * when neither knows it), and nothing under <run_dir> is changed except
 * that a missing lock file or directory is created.
 *
 * The lock fd must reach no other process: it is O_CLOEXEC, and the daemon
 * starts its children (exec helper, tudev-probe) with posix_spawn() and
 * closefrom. --daemon forks after the lock is taken: parent and child share
 * the open file description, so the lock is held throughout and stays with
 * the child once the parent has exited; the child then calls
 * instance_lock_set_pid(). */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define INSTANCE_LOCK_NAME "udevd.lock"

/* control_path NULL: the control socket was passed by the service manager
 * (udevd/listen-fds.h); step 2 is skipped, as that socket is the one this
 * daemon serves.
 * The lock fd (>= 0, O_CLOEXEC; keep it open for the daemon's life), or
 * -EBUSY after logging the refusal, or -errno (logged) if the lock file
 * cannot be created or locked. */
int instance_lock_take(const char *run_dir, const char *control_path);
/* Rewrite the PID in the lock file (after --daemon's fork). 0 or -errno. */
int instance_lock_set_pid(int fd, pid_t pid);
/* Release the lock (LOCK_UN, then close). For the very end of the daemon,
 * after its last write under the run directory: a client waiting for the
 * daemon's connections to close (`udevadm control --exit`) must find the
 * lock free when it sees them close, whatever order the kernel closes the
 * fds of a dying process in. Returns -1 for "fd = instance_lock_release(fd)". */
int instance_lock_release(int fd);

/* ---- pure helpers (unit-tested) ---- */

/* What a connect() to the control socket says about a daemon behind it. */
enum ctrl_probe {
        CTRL_PROBE_ANSWERS, /* connected, or backlog full: a daemon serves it */
        CTRL_PROBE_NOBODY,  /* ENOENT, ECONNREFUSED: no daemon (stale or no socket) */
        CTRL_PROBE_UNKNOWN, /* any other error */
};
/* From connect()'s result: 0 for success, else its errno (positive). */
enum ctrl_probe ctrl_probe_from_errno(int err);

/* The PID in a lock file's text: decimal digits, optional trailing newline,
 * > 0 and within pid_t. 0 or -EINVAL. */
int instance_lock_parse_pid(const char *text, size_t len, pid_t *ret);

/* The refusal message (without a trailing newline) into buf[size]:
 * pid <= 0 means unknown; `answers`: the control socket answered, else the
 * lock file is named as the evidence. Returns what snprintf() returns. */
int instance_lock_format_refusal(char *buf, size_t size, pid_t pid, bool answers,
                                 const char *control_path, const char *lock_path);
