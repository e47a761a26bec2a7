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
 *   connection.
 *
 * QUERIES (tudev extension; systemd's udevadm never sends them):
 *   request: type CTRL_MSG_TUDEV_QUERY (0x74750001), value = the query, a
 *     NUL-terminated string of 1..255 printable bytes: a name, optionally
 *     followed by one space and arguments ("stats", "stats-json", "pending",
 *     "explain ..."). Then END, as for every request.
 *   reply: the server answers on the same connection, in order, with one or
 *     more datagrams of at most CTRL_REPLY_PACKET_MAX bytes each:
 *       off  0  uint32 magic   CTRL_REPLY_MAGIC
 *       off  4  int32  status  0, or a negative errno (the same in every
 *                              datagram of one reply): -ENOENT unknown query,
 *                              -EINVAL bad arguments, -E2BIG too large, ...
 *       off  8  uint32 flags   CTRL_REPLY_LAST on the reply's last datagram
 *       off 12  uint32 length  bytes of text that follow (<= CTRL_REPLY_TEXT_MAX)
 *       off 16  text           part of the reply text (no NUL); the text of
 *                              an error is one line saying what went wrong
 *     then closes the connection after END, as usual. The whole text is at
 *     most CTRL_REPLY_MAX bytes.
 *   A systemd-udevd ignores the unknown type and closes the connection
 *   without a reply: a client that reads EOF before any reply datagram knows
 *   the daemon does not support queries (ctrl_client_query(): -EOPNOTSUPP).
 *   Older tudev daemons close the connection at once (unknown type). */

#include <stdbool.h>
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
        /* tudev extension (see QUERIES above), far outside systemd's range. */
        CTRL_MSG_TUDEV_QUERY = 0x74750001,
};

struct ctrl_msg {
        enum ctrl_msg_type type;
        int intval;                          /* SET_LOG_LEVEL, SET_CHILDREN_MAX */
        char strval[CTRL_MSG_VALUE_MAX];     /* SET_ENV: "KEY=VALUE", TUDEV_QUERY: the
                                              * query (NUL-terminated) */
};

#define CTRL_REPLY_MAGIC 0x74757270U /* "turp" */
#define CTRL_REPLY_HEADER_SIZE 16
#define CTRL_REPLY_PACKET_MAX 4096
#define CTRL_REPLY_TEXT_MAX (CTRL_REPLY_PACKET_MAX - CTRL_REPLY_HEADER_SIZE)
#define CTRL_REPLY_MAX (4U * 1024 * 1024)
#define CTRL_REPLY_LAST 0x1U

/* Serialize into exactly CTRL_MSG_SIZE bytes. Returns CTRL_MSG_SIZE or -EINVAL. */
int ctrl_msg_encode(const struct ctrl_msg *m, uint8_t out[CTRL_MSG_SIZE]);
/* Parse and validate one datagram. Returns 0, or -EBADMSG (wrong size, magic,
 * unknown type, unterminated string, SET_ENV without '=' or with control chars,
 * TUDEV_QUERY empty or with control chars). */
int ctrl_msg_decode(const void *buf, size_t len, struct ctrl_msg *ret);
const char *ctrl_msg_type_to_string(enum ctrl_msg_type t);

/* One reply datagram: header + `len` (<= CTRL_REPLY_TEXT_MAX) bytes of text
 * into out[0..CTRL_REPLY_PACKET_MAX-1]. Returns its size or -EINVAL. */
int ctrl_reply_encode(int status, bool last, const char *text, size_t len,
                      uint8_t out[CTRL_REPLY_PACKET_MAX]);
/* Check one received reply datagram; the text is buf[CTRL_REPLY_HEADER_SIZE..
 * + *ret_len]. 0 or -EBADMSG (size, magic, length, status > 0, unknown flag). */
int ctrl_reply_decode(const void *buf, size_t len, int *ret_status, bool *ret_last,
                      size_t *ret_len);

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

/* A query's answer: status (0 or -errno from the server) and its text
 * (malloc'ed, NUL-terminated, owned by the caller: free(text)). */
struct ctrl_reply {
        int status;
        char *text;
        size_t len;
};
/* Send TUDEV_QUERY `query` and END on a connected fd (borrowed), read the
 * reply until the server closes the connection, within timeout_usec
 * (USEC_INFINITY: no limit). Returns 0 (*ret filled; ret->status may be < 0),
 * -EOPNOTSUPP (the server closed without replying: systemd-udevd, or an old
 * tudev), -EPROTO (malformed or truncated reply), -ENAMETOOLONG/-EINVAL (bad
 * query), -ETIMEDOUT, -ENOMEM or -errno. */
int ctrl_client_query(int fd, const char *query, uint64_t timeout_usec, struct ctrl_reply *ret);
