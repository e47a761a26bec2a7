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

#include <stdint.h>

#define CTRL_MSG_SIZE 280
#define CTRL_MSG_MAGIC 0xdead1deaU
#define CTRL_MSG_VALUE_MAX 256
#define CTRL_SOCKET_PATH "/run/udev/control"

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
int ctrl_client_send(int fd, const struct ctrl_msg *m);      /* 0 or -errno */
/* Send END and wait up to timeout_usec for EOF. 0, -ETIMEDOUT or -errno. */
int ctrl_client_finish(int fd, uint64_t timeout_usec);
