/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any */
#pragma once
/* Control protocol between udevadm and udevd on /run/udev/control.
 *
 * tudev speaks exactly systemd-udevd's control protocol (v252/v255), so that
 * systemd's own `udevadm control` and `udevadm settle` work against tudev and
 * ours against systemd-udevd:
 *
 *   socket: AF_UNIX, SOCK_SEQPACKET, path /run/udev/control, root only
 *           (SO_PEERCRED uid 0 on connect; SCM_CREDENTIALS uid 0 per message).
 *   message: fixed 280 bytes, host byte order:
 *     off  0  char version[16]  "udev-<ver>" NUL padded (ignored by the server)
 *     off 16  uint32 magic      0xdead1dea (mismatch: message ignored)
 *     off 20  int32  type       enum ctrl_msg_type
 *     off 24  union value[256]  int in the first 4 bytes, or a NUL-terminated string
 *   flow: the client sends one message per request, then CTRL_MSG_END, and
 *   waits for the server to close the connection. The server closes only after
 *   every request has been handled; for PING, after every uevent that reached
 *   the kernel socket before the ping has been put on the queue.
 *   Messages of any other size, without credentials, or from uid != 0 end the
 *   connection. */

#include <stddef.h>
#include <stdint.h>

#define CTRL_MSG_SIZE 280
#define CTRL_MSG_MAGIC 0xdead1deaU
#define CTRL_MSG_VALUE_MAX 256
#define CTRL_SOCKET_PATH "/run/udev/control"
/* What we put in the (ignored) version field; systemd writes "udev-<ver>". */
#define CTRL_MSG_VERSION "udev-tudev"
/* Default bound for connect() and each send() (udevadm control's default timeout). */
#define CTRL_CLIENT_TIMEOUT_USEC (60ULL * 1000000ULL)

enum ctrl_msg_type {
        CTRL_MSG_END = 0,
        CTRL_MSG_SET_LOG_LEVEL = 1,
        CTRL_MSG_STOP_EXEC_QUEUE = 2,
        CTRL_MSG_START_EXEC_QUEUE = 3,
        CTRL_MSG_RELOAD = 4,
        CTRL_MSG_SET_ENV = 5,
        CTRL_MSG_SET_CHILDREN_MAX = 6,
        CTRL_MSG_PING = 7,
        CTRL_MSG_EXIT = 8,
        _CTRL_MSG_TYPE_MAX,
};

struct ctrl_msg {
        enum ctrl_msg_type type;
        int intval;                          /* SET_LOG_LEVEL, SET_CHILDREN_MAX */
        char strval[CTRL_MSG_VALUE_MAX];     /* SET_ENV: "KEY=VALUE" (NUL-terminated) */
};

/* Serialize into exactly CTRL_MSG_SIZE bytes. Returns CTRL_MSG_SIZE or -EINVAL. */
int ctrl_msg_encode(const struct ctrl_msg *m, uint8_t out[CTRL_MSG_SIZE]);
/* Parse and validate one datagram. Returns 0, or -EBADMSG (wrong size, magic,
 * unknown type, unterminated string, SET_ENV without '=' or with control chars). */
int ctrl_msg_decode(const void *buf, size_t len, struct ctrl_msg *ret);
const char *ctrl_msg_type_to_string(enum ctrl_msg_type t);

/* Client side (udevadm): connect to `path` (CTRL_SOCKET_PATH), send messages,
 * send END and wait for the close with a deadline. */
int ctrl_client_connect(const char *path, int *ret_fd);      /* SOCK_CLOEXEC */
/* Same with an explicit bound (USEC_INFINITY: none) for connect() when the
 * server's backlog is full, and for every later send() on the socket.
 * Returns 0 (new fd in *ret_fd, caller owns it), -ENOENT / -ECONNREFUSED (no
 * server), -ETIMEDOUT, -ENAMETOOLONG or -errno. ctrl_client_connect() uses
 * CTRL_CLIENT_TIMEOUT_USEC. */
int ctrl_client_connect_timeout(const char *path, uint64_t timeout_usec, int *ret_fd);
/* One message with explicit SCM_CREDENTIALS (our pid/uid/gid). fd borrowed.
 * 0, -EINVAL (unencodable message), -ETIMEDOUT, -EPIPE (server closed) or -errno. */
int ctrl_client_send(int fd, const struct ctrl_msg *m);
/* Send END and wait up to timeout_usec (CLOCK_MONOTONIC deadline;
 * USEC_INFINITY: forever) for EOF. timeout_usec == 0 sends END and returns 0
 * without waiting, like systemd's udevadm with --timeout=0. Returns 0,
 * -ETIMEDOUT, -EPIPE/-ECONNRESET if the server had already closed the
 * connection before END could be sent (expected after EXIT), or -errno.
 * fd borrowed (the caller closes it). */
int ctrl_client_finish(int fd, uint64_t timeout_usec);
