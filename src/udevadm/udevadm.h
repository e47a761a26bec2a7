/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (udevadm is single-threaded) */
#pragma once
/* Private interface of the udevadm tool: verb entry points and the small
 * helpers the verbs share (udevadm-util.c).
 *
 * A verb receives argv with argv[0] = the verb name (so getopt messages read
 * "control: unrecognized option ..." like systemd's) and returns 0 on success
 * or a negative errno after it has logged the reason; main() turns any
 * negative value into exit status 1. */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "proto/ctrl-msg.h"
#include "proto/uevent.h"

/* `udevadm --version` prints the systemd version whose interfaces we
 * implement: scripts compare it numerically (e.g. `[ $(udevadm --version) -ge 240 ]`). */
#define UDEVADM_COMPAT_VERSION "252"

#define UDEV_RUN_DIR "/run/udev"
#define UDEV_QUEUE_FILE "/run/udev/queue"

int control_main(int argc, char *argv[]);
int settle_main(int argc, char *argv[]);
int stats_main(int argc, char *argv[]);
/* udevadm explain [--seqnum=N] [DEVPATH|SYSPATH|DEVNODE] (explain.c) */
int explain_main(int argc, char *argv[]);
int monitor_main(int argc, char *argv[]);
/* udevadm record --output=FILE [--duration=S] (record.c) */
int record_main(int argc, char *argv[]);
/* udevadm replay [--rules-dir=DIR]... FILE (replay.c) */
int replay_main(int argc, char *argv[]);
int trigger_main(int argc, char *argv[]);
int verify_main(int argc, char *argv[]);
/* cat.c */
int cat_main(int argc, char *argv[]);
/* wait.c */
int wait_main(int argc, char *argv[]);
/* lock.c: returns the command's exit status (>= 0) once it has run, which
 * main() passes on as udevadm's own, as systemd documents (systemd 252's
 * main() turns it into 0; see udevadm(8)). */
int lock_main(int argc, char *argv[]);

int udevadm_print_version(void);

/* Whether the daemon's event queue is empty, i.e. UDEV_QUEUE_FILE does not
 * exist (settle.c; also used by `wait --settle`). 1 empty, 0 not, -errno if
 * that cannot be told. */
int udev_queue_is_empty(void);

static inline void fclosep(FILE **f)
{
        if (*f)
                fclose(*f);
}

/* True if we run in a chroot (our "/" is not PID 1's root); then the
 * trigger/settle/control/monitor verbs do nothing, as systemd's do.
 * $SYSTEMD_IGNORE_CHROOT=1 disables the check. */
bool udevadm_running_in_chroot(void);

/* systemd's parse_sec(): "infinity" -> USEC_INFINITY, otherwise a time span
 * (bare number = seconds). 0 or -EINVAL/-ERANGE. */
int udevadm_parse_sec(const char *s, uint64_t *ret);
/* Block SIGINT and SIGTERM and return a signalfd for them (SFD_CLOEXEC,
 * SFD_NONBLOCK; the caller owns it): how monitor and record stop. 0 or
 * -errno. */
int udevadm_open_signalfd(int *ret_fd);

/* systemd's path_simplify(), in place: repeated slashes and "." components
 * dropped, no trailing slash ("/" stays "/", an empty relative result is
 * "."); ".." components are kept. Returns path. */
char *udevadm_path_simplify(char *path);
/* systemd's path_is_safe(): not empty, shorter than PATH_MAX, no component
 * longer than NAME_MAX and none that is "..". */
bool udevadm_path_is_safe(const char *path);
/* `path` made absolute against the working directory, then simplified.
 * *ret owned. 0, -ENOMEM, or -errno of getcwd(). */
int udevadm_path_absolute(const char *path, char **ret);

/* The -a/--action= (-c for trigger) argument: "help" prints every action
 * name and returns 0; a known name sets *ret and returns 1; otherwise
 * -EINVAL (the caller logs it in its verb's words). */
int udevadm_parse_action(const char *arg, enum uevent_action *ret);

/* A growing list of borrowed strings (option arguments). */
struct arg_list {
        const char **items; /* owned array, borrowed strings */
        size_t n;
};
int arg_list_add(struct arg_list *l, const char *s); /* 0 or -ENOMEM (logged) */
void arg_list_done(struct arg_list *l);

/* Lazily connected control-socket client: the connection is made by the
 * first message, so that a connect error is reported as the failure of that
 * request, like systemd's udevadm does. */
struct ctrl_conn {
        int fd;         /* -1 until connected */
};
#define CTRL_CONN_INIT { .fd = -1 }

/* Connect if needed, then send one request. 0 or -errno. */
int ctrl_conn_send(struct ctrl_conn *c, enum ctrl_msg_type type, int intval, const char *strval);
/* If connected: send END and, unless timeout_usec is 0, wait for the server
 * to close the connection (USEC_INFINITY: no limit). Not connected: 0.
 * 0, -ETIMEDOUT or -errno. */
int ctrl_conn_finish(struct ctrl_conn *c, uint64_t timeout_usec);
void ctrl_conn_close(struct ctrl_conn *c);

/* Ask the daemon a query (CTRL_MSG_TUDEV_QUERY, proto/ctrl-msg.h) on a new
 * connection to CTRL_SOCKET_PATH, within timeout_usec. Returns 0 with *ret
 * filled (free(ret->text); ret->status < 0: the daemon's error, its text
 * one line), -EOPNOTSUPP (the daemon does not answer queries: systemd-udevd),
 * -ENOENT/-ECONNREFUSED (no daemon), -ETIMEDOUT, -EPROTO or -errno. Logs
 * nothing. */
int udevadm_query(const char *query, uint64_t timeout_usec, struct ctrl_reply *ret);
