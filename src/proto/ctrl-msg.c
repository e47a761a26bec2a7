/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <stddef.h>
#include <poll.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "proto/ctrl-msg.h"
#include "shared/macro.h"
#include "shared/time-util.h"

#define OFF_VERSION 0
#define OFF_MAGIC 16
#define OFF_TYPE 20
#define OFF_VALUE 24
_Static_assert(OFF_VALUE + CTRL_MSG_VALUE_MAX == CTRL_MSG_SIZE, "control message layout");

static const char *const type_table[_CTRL_MSG_TYPE_MAX] = {
        [CTRL_MSG_END] = "end",
        [CTRL_MSG_SET_LOG_LEVEL] = "set-log-level",
        [CTRL_MSG_STOP_EXEC_QUEUE] = "stop-exec-queue",
        [CTRL_MSG_START_EXEC_QUEUE] = "start-exec-queue",
        [CTRL_MSG_RELOAD] = "reload",
        [CTRL_MSG_SET_ENV] = "set-env",
        [CTRL_MSG_SET_CHILDREN_MAX] = "set-children-max",
        [CTRL_MSG_PING] = "ping",
        [CTRL_MSG_EXIT] = "exit",
};

const char *ctrl_msg_type_to_string(enum ctrl_msg_type t)
{
        if (t == CTRL_MSG_TUDEV_QUERY)
                return "tudev-query";
        if ((int)t < 0 || t >= _CTRL_MSG_TYPE_MAX)
                return NULL;
        return type_table[t];
}

static bool env_assignment_is_valid(const char *s);

static bool type_is_valid(int t)
{
        return (t >= 0 && t < _CTRL_MSG_TYPE_MAX) || t == CTRL_MSG_TUDEV_QUERY;
}

static bool type_has_string(int t)
{
        return t == CTRL_MSG_SET_ENV || t == CTRL_MSG_TUDEV_QUERY;
}

static bool is_printable(const char *s)
{
        for (; *s; s++)
                if ((unsigned char)*s < 0x20 || *s == 0x7f)
                        return false;
        return true;
}

/* SET_ENV: see env_assignment_is_valid(); TUDEV_QUERY: non-empty, printable. */
static bool string_is_valid(int t, const char *s)
{
        if (t == CTRL_MSG_TUDEV_QUERY)
                return s[0] != '\0' && is_printable(s);
        return env_assignment_is_valid(s);
}

static bool type_has_int(int t)
{
        return t == CTRL_MSG_SET_LOG_LEVEL || t == CTRL_MSG_SET_CHILDREN_MAX;
}

/* "KEY=VALUE" with a non-empty key and no control characters. */
static bool env_assignment_is_valid(const char *s)
{
        const char *eq = strchr(s, '=');

        if (!eq || eq == s)
                return false;
        for (; *s; s++)
                if ((unsigned char)*s < 0x20 || *s == 0x7f)
                        return false;
        return true;
}

int ctrl_msg_encode(const struct ctrl_msg *m, uint8_t out[CTRL_MSG_SIZE])
{
        uint32_t magic = CTRL_MSG_MAGIC;
        int32_t type;

        if (!m || !out || !type_is_valid((int)m->type))
                return -EINVAL;
        type = (int32_t)m->type;

        memset(out, 0, CTRL_MSG_SIZE);
        memcpy(out + OFF_VERSION, CTRL_MSG_VERSION, sizeof(CTRL_MSG_VERSION));
        memcpy(out + OFF_MAGIC, &magic, sizeof(magic));
        memcpy(out + OFF_TYPE, &type, sizeof(type));

        if (type_has_int(type)) {
                int32_t v = m->intval;

                memcpy(out + OFF_VALUE, &v, sizeof(v));
        } else if (type_has_string(type)) {
                size_t n = strnlen(m->strval, CTRL_MSG_VALUE_MAX);

                if (n >= CTRL_MSG_VALUE_MAX || !string_is_valid(type, m->strval))
                        return -EINVAL;
                memcpy(out + OFF_VALUE, m->strval, n);
        }
        return CTRL_MSG_SIZE;
}

int ctrl_msg_decode(const void *buf, size_t len, struct ctrl_msg *ret)
{
        const uint8_t *p = buf;
        struct ctrl_msg m = {};
        uint32_t magic;
        int32_t type;

        if (!buf || !ret || len != CTRL_MSG_SIZE)
                return -EBADMSG;
        memcpy(&magic, p + OFF_MAGIC, sizeof(magic));
        memcpy(&type, p + OFF_TYPE, sizeof(type));
        if (magic != CTRL_MSG_MAGIC || !type_is_valid(type))
                return -EBADMSG;
        m.type = (enum ctrl_msg_type)type;

        if (type_has_int(type)) {
                int32_t v;

                memcpy(&v, p + OFF_VALUE, sizeof(v));
                m.intval = v;
        } else if (type_has_string(type)) {
                const uint8_t *nul = memchr(p + OFF_VALUE, '\0', CTRL_MSG_VALUE_MAX);

                if (!nul)
                        return -EBADMSG;
                memcpy(m.strval, p + OFF_VALUE, (size_t)(nul - (p + OFF_VALUE)) + 1);
                if (!string_is_valid(type, m.strval))
                        return -EBADMSG;
        }

        *ret = m;
        return 0;
}

/* ---------------------------------------------------------------- replies */

#define ROFF_MAGIC 0
#define ROFF_STATUS 4
#define ROFF_FLAGS 8
#define ROFF_LEN 12
_Static_assert(ROFF_LEN + 4 == CTRL_REPLY_HEADER_SIZE, "reply header layout");

int ctrl_reply_encode(int status, bool last, const char *text, size_t len,
                      uint8_t out[CTRL_REPLY_PACKET_MAX])
{
        uint32_t magic = CTRL_REPLY_MAGIC, flags = last ? CTRL_REPLY_LAST : 0, n = (uint32_t)len;
        int32_t st = status;

        if (!out || status > 0 || len > CTRL_REPLY_TEXT_MAX || (len > 0 && !text))
                return -EINVAL;
        memcpy(out + ROFF_MAGIC, &magic, 4);
        memcpy(out + ROFF_STATUS, &st, 4);
        memcpy(out + ROFF_FLAGS, &flags, 4);
        memcpy(out + ROFF_LEN, &n, 4);
        if (len > 0)
                memcpy(out + CTRL_REPLY_HEADER_SIZE, text, len);
        return (int)(CTRL_REPLY_HEADER_SIZE + len);
}

int ctrl_reply_decode(const void *buf, size_t len, int *ret_status, bool *ret_last,
                      size_t *ret_len)
{
        const uint8_t *p = buf;
        uint32_t magic, flags, n;
        int32_t st;

        if (!buf || len < CTRL_REPLY_HEADER_SIZE || len > CTRL_REPLY_PACKET_MAX)
                return -EBADMSG;
        memcpy(&magic, p + ROFF_MAGIC, 4);
        memcpy(&st, p + ROFF_STATUS, 4);
        memcpy(&flags, p + ROFF_FLAGS, 4);
        memcpy(&n, p + ROFF_LEN, 4);
        if (magic != CTRL_REPLY_MAGIC || st > 0 || st < -4095 || (flags & ~CTRL_REPLY_LAST) ||
            n != len - CTRL_REPLY_HEADER_SIZE)
                return -EBADMSG;
        *ret_status = st;
        *ret_last = flags & CTRL_REPLY_LAST;
        *ret_len = n;
        return 0;
}

/* ---------------------------------------------------------------- client */

static int set_send_timeout(int fd, uint64_t usec)
{
        struct timeval tv = {};

        if (usec != USEC_INFINITY) {
                tv.tv_sec = (time_t)(usec / USEC_PER_SEC);
                tv.tv_usec = (suseconds_t)(usec % USEC_PER_SEC);
                if (tv.tv_sec == 0 && tv.tv_usec == 0)
                        tv.tv_usec = 1; /* 0 would mean "forever" */
        }
        if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0)
                return -errno;
        return 0;
}

int ctrl_client_connect_timeout(const char *path, uint64_t timeout_usec, int *ret_fd)
{
        _cleanup_close_ int fd = -1;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        size_t n;
        int r;

        if (!path || !ret_fd)
                return -EINVAL;
        n = strlen(path);
        if (n == 0)
                return -EINVAL;
        if (n >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        memcpy(sa.sun_path, path, n + 1);

        fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        /* A full backlog makes connect() (and a stuck server send()) wait for
         * SO_SNDTIMEO, so this bounds both. */
        r = set_send_timeout(fd, timeout_usec);
        if (r < 0)
                return r;

        for (;;) {
                if (connect(fd, (struct sockaddr *)&sa,
                            (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1)) == 0)
                        break;
                if (errno == EINTR)
                        continue;
                if (errno == EAGAIN)
                        return -ETIMEDOUT;
                return -errno;
        }

        *ret_fd = TAKE_FD(fd);
        return 0;
}

int ctrl_client_connect(const char *path, int *ret_fd)
{
        return ctrl_client_connect_timeout(path, CTRL_CLIENT_TIMEOUT_USEC, ret_fd);
}

int ctrl_client_send(int fd, const struct ctrl_msg *m)
{
        uint8_t buf[CTRL_MSG_SIZE];
        union {
                struct cmsghdr align;
                char buf[CMSG_SPACE(sizeof(struct ucred))];
        } control = {};
        struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
        struct msghdr mh = {
                .msg_iov = &iov,
                .msg_iovlen = 1,
                .msg_control = &control,
                .msg_controllen = sizeof(control),
        };
        struct cmsghdr *cmsg;
        struct ucred cred = { .pid = getpid(), .uid = getuid(), .gid = getgid() };
        ssize_t n;
        int r;

        if (fd < 0)
                return -EBADF;
        r = ctrl_msg_encode(m, buf);
        if (r < 0)
                return r;

        cmsg = CMSG_FIRSTHDR(&mh);
        cmsg->cmsg_level = SOL_SOCKET;
        cmsg->cmsg_type = SCM_CREDENTIALS;
        cmsg->cmsg_len = CMSG_LEN(sizeof(cred));
        memcpy(CMSG_DATA(cmsg), &cred, sizeof(cred));

        do
                n = sendmsg(fd, &mh, MSG_NOSIGNAL);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return errno == EAGAIN ? -ETIMEDOUT : -errno;
        if ((size_t)n != sizeof(buf))
                return -EIO;
        return 0;
}

/* Milliseconds left until `deadline` (CLOCK_MONOTONIC µs), rounded up. */
static int poll_timeout_ms(uint64_t deadline)
{
        uint64_t now, ms;

        if (deadline == USEC_INFINITY)
                return -1;
        now = now_usec(CLOCK_MONOTONIC);
        if (now >= deadline)
                return 0;
        ms = (deadline - now + USEC_PER_MSEC - 1) / USEC_PER_MSEC;
        return ms > INT_MAX ? INT_MAX : (int)ms;
}

/* Wait until the server closes the connection. */
static int wait_for_eof(int fd, uint64_t deadline)
{
        for (;;) {
                struct pollfd pfd = { .fd = fd, .events = POLLIN };
                char buf[CTRL_MSG_SIZE];
                ssize_t n;
                int r;

                r = poll(&pfd, 1, poll_timeout_ms(deadline));
                if (r < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (r == 0)
                        return -ETIMEDOUT;

                n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
                if (n == 0)
                        return 0;
                if (n < 0) {
                        if (errno == EINTR || errno == EAGAIN)
                                continue;
                        if (errno == ECONNRESET)
                                return 0;
                        return -errno;
                }
                /* The server never sends anything; ignore stray data. */
        }
}

static uint64_t deadline_after(uint64_t timeout_usec)
{
        uint64_t now;

        if (timeout_usec == USEC_INFINITY)
                return USEC_INFINITY;
        now = now_usec(CLOCK_MONOTONIC);
        return timeout_usec > USEC_INFINITY - 1 - now ? USEC_INFINITY - 1 : now + timeout_usec;
}

int ctrl_client_finish(int fd, uint64_t timeout_usec)
{
        struct ctrl_msg end = { .type = CTRL_MSG_END };
        uint64_t deadline = deadline_after(timeout_usec);
        int r;

        r = ctrl_client_send(fd, &end);
        if (r < 0)
                return r;
        if (timeout_usec == 0)
                return 0;
        return wait_for_eof(fd, deadline);
}

/* Append one reply datagram's text; 1 after the last one, 0 for more. */
static int reply_add(struct ctrl_reply *rep, const uint8_t *buf, size_t n, bool *seen)
{
        bool last;
        size_t len;
        int status;
        char *t;

        if (ctrl_reply_decode(buf, n, &status, &last, &len) < 0)
                return -EPROTO;
        if (*seen && status != rep->status)
                return -EPROTO;
        if (rep->len + len > CTRL_REPLY_MAX)
                return -EPROTO;
        t = realloc(rep->text, rep->len + len + 1);
        if (!t)
                return -ENOMEM;
        memcpy(t + rep->len, buf + CTRL_REPLY_HEADER_SIZE, len);
        rep->len += len;
        t[rep->len] = '\0';
        rep->text = t;
        rep->status = status;
        *seen = true;
        return last ? 1 : 0;
}

int ctrl_client_query(int fd, const char *query, uint64_t timeout_usec, struct ctrl_reply *ret)
{
        struct ctrl_msg m = { .type = CTRL_MSG_TUDEV_QUERY };
        struct ctrl_reply rep = {};
        uint64_t deadline = deadline_after(timeout_usec);
        bool seen = false, done = false;
        size_t n;
        int r;

        if (fd < 0)
                return -EBADF;
        if (!query || !ret)
                return -EINVAL;
        n = strlen(query);
        if (n >= sizeof(m.strval))
                return -ENAMETOOLONG;
        memcpy(m.strval, query, n + 1);
        r = ctrl_client_send(fd, &m);
        if (r >= 0) {
                struct ctrl_msg end = { .type = CTRL_MSG_END };
                r = ctrl_client_send(fd, &end);
        }
        /* A server that refused the message closes at once: EPIPE/ECONNRESET. */
        if (r == -EPIPE || r == -ECONNRESET)
                return -EOPNOTSUPP;
        if (r < 0)
                return r;

        for (;;) {
                struct pollfd pfd = { .fd = fd, .events = POLLIN };
                uint8_t buf[CTRL_REPLY_PACKET_MAX + 1];
                ssize_t k;

                r = poll(&pfd, 1, poll_timeout_ms(deadline));
                if (r < 0) {
                        if (errno == EINTR)
                                continue;
                        r = -errno;
                        break;
                }
                if (r == 0) {
                        r = -ETIMEDOUT;
                        break;
                }
                k = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
                if (k < 0 && (errno == EINTR || errno == EAGAIN))
                        continue;
                if (k < 0 && errno != ECONNRESET) {
                        r = -errno;
                        break;
                }
                if (k <= 0) { /* EOF */
                        r = !seen ? -EOPNOTSUPP : done ? 0 : -EPROTO;
                        break;
                }
                if (done) {
                        r = -EPROTO; /* data after the last datagram */
                        break;
                }
                r = reply_add(&rep, buf, (size_t)k, &seen);
                if (r < 0)
                        break;
                done = r > 0;
        }
        if (r < 0) {
                free(rep.text);
                return r;
        }
        *ret = rep;
        return 0;
}
