/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: test (main + one server thread per socket test) */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "proto/ctrl-msg.h"
#include "shared/macro.h"
#include "shared/tests.h"
#include "shared/thread-util.h"
#include "shared/time-util.h"

static void test_type_names(void)
{
        ASSERT_STREQ(ctrl_msg_type_to_string(CTRL_MSG_END), "end");
        ASSERT_STREQ(ctrl_msg_type_to_string(CTRL_MSG_PING), "ping");
        ASSERT_STREQ(ctrl_msg_type_to_string(CTRL_MSG_EXIT), "exit");
        for (int t = 0; t < _CTRL_MSG_TYPE_MAX; t++)
                ASSERT_TRUE(ctrl_msg_type_to_string(t) != NULL);
        ASSERT_TRUE(ctrl_msg_type_to_string(_CTRL_MSG_TYPE_MAX) == NULL);
        ASSERT_TRUE(ctrl_msg_type_to_string((enum ctrl_msg_type)-1) == NULL);
}

static void test_layout(void)
{
        struct ctrl_msg m = { .type = CTRL_MSG_SET_CHILDREN_MAX, .intval = 0x01020304 };
        uint8_t out[CTRL_MSG_SIZE];
        uint32_t magic;
        int32_t type, v;

        memset(out, 0xaa, sizeof(out));
        ASSERT_EQ(ctrl_msg_encode(&m, out), CTRL_MSG_SIZE);
        ASSERT_TRUE(memcmp(out, "udev-", 5) == 0);
        ASSERT_STREQ((const char *)out, CTRL_MSG_VERSION);
        for (size_t i = strlen(CTRL_MSG_VERSION); i < 16; i++)
                ASSERT_EQ(out[i], 0);
        memcpy(&magic, out + 16, 4);
        memcpy(&type, out + 20, 4);
        memcpy(&v, out + 24, 4);
        ASSERT_EQ(magic, 0xdead1deaU);
        ASSERT_EQ(type, 6);
        ASSERT_EQ(v, 0x01020304);
        for (size_t i = 28; i < CTRL_MSG_SIZE; i++)
                ASSERT_EQ(out[i], 0);

        m = (struct ctrl_msg){ .type = CTRL_MSG_SET_ENV };
        strcpy(m.strval, "FOO=bar baz");
        ASSERT_EQ(ctrl_msg_encode(&m, out), CTRL_MSG_SIZE);
        memcpy(&type, out + 20, 4);
        ASSERT_EQ(type, 5);
        ASSERT_STREQ((const char *)out + 24, "FOO=bar baz");
        for (size_t i = 24 + strlen("FOO=bar baz"); i < CTRL_MSG_SIZE; i++)
                ASSERT_EQ(out[i], 0);

        /* Value-less types carry zeros. */
        m = (struct ctrl_msg){ .type = CTRL_MSG_PING, .intval = 99 };
        strcpy(m.strval, "ignored");
        ASSERT_EQ(ctrl_msg_encode(&m, out), CTRL_MSG_SIZE);
        for (size_t i = 24; i < CTRL_MSG_SIZE; i++)
                ASSERT_EQ(out[i], 0);
}

static void test_round_trip(void)
{
        static const struct ctrl_msg msgs[] = {
                { .type = CTRL_MSG_END },
                { .type = CTRL_MSG_SET_LOG_LEVEL, .intval = 7 },
                { .type = CTRL_MSG_SET_LOG_LEVEL, .intval = -1 },
                { .type = CTRL_MSG_STOP_EXEC_QUEUE },
                { .type = CTRL_MSG_START_EXEC_QUEUE },
                { .type = CTRL_MSG_RELOAD },
                { .type = CTRL_MSG_SET_ENV, .strval = "KEY=VALUE=with=eq" },
                { .type = CTRL_MSG_SET_ENV, .strval = "KEY=" },
                { .type = CTRL_MSG_SET_CHILDREN_MAX, .intval = 128 },
                { .type = CTRL_MSG_PING },
                { .type = CTRL_MSG_EXIT },
        };

        for (size_t i = 0; i < ARRAY_SIZE(msgs); i++) {
                uint8_t out[CTRL_MSG_SIZE];
                struct ctrl_msg d;

                memset(&d, 0x55, sizeof(d));
                ASSERT_EQ(ctrl_msg_encode(&msgs[i], out), CTRL_MSG_SIZE);
                ASSERT_EQ(ctrl_msg_decode(out, sizeof(out), &d), 0);
                ASSERT_EQ(d.type, msgs[i].type);
                if (msgs[i].type == CTRL_MSG_SET_LOG_LEVEL ||
                    msgs[i].type == CTRL_MSG_SET_CHILDREN_MAX)
                        ASSERT_EQ(d.intval, msgs[i].intval);
                else
                        ASSERT_EQ(d.intval, 0);
                if (msgs[i].type == CTRL_MSG_SET_ENV)
                        ASSERT_STREQ(d.strval, msgs[i].strval);
                else
                        ASSERT_STREQ(d.strval, "");
        }

        /* Longest possible SET_ENV: 255 bytes + NUL. */
        {
                struct ctrl_msg m = { .type = CTRL_MSG_SET_ENV }, d;
                uint8_t out[CTRL_MSG_SIZE];

                memset(m.strval, 'x', CTRL_MSG_VALUE_MAX - 1);
                m.strval[1] = '=';
                ASSERT_EQ(ctrl_msg_encode(&m, out), CTRL_MSG_SIZE);
                ASSERT_EQ(ctrl_msg_decode(out, sizeof(out), &d), 0);
                ASSERT_EQ(strlen(d.strval), CTRL_MSG_VALUE_MAX - 1);
        }
}

static void test_encode_rejects(void)
{
        struct ctrl_msg m = { .type = _CTRL_MSG_TYPE_MAX };
        uint8_t out[CTRL_MSG_SIZE];

        ASSERT_EQ(ctrl_msg_encode(&m, out), -EINVAL);
        m.type = (enum ctrl_msg_type)-1;
        ASSERT_EQ(ctrl_msg_encode(&m, out), -EINVAL);
        ASSERT_EQ(ctrl_msg_encode(NULL, out), -EINVAL);

        m = (struct ctrl_msg){ .type = CTRL_MSG_SET_ENV };
        memset(m.strval, 'a', sizeof(m.strval)); /* unterminated */
        m.strval[3] = '=';
        ASSERT_EQ(ctrl_msg_encode(&m, out), -EINVAL);
        strcpy(m.strval, "NOEQUALS");
        ASSERT_EQ(ctrl_msg_encode(&m, out), -EINVAL);
        strcpy(m.strval, "=value");
        ASSERT_EQ(ctrl_msg_encode(&m, out), -EINVAL);
        strcpy(m.strval, "A=b\nc");
        ASSERT_EQ(ctrl_msg_encode(&m, out), -EINVAL);
}

static void test_decode_rejects(void)
{
        struct ctrl_msg m = { .type = CTRL_MSG_SET_ENV, .strval = "A=b" }, d;
        uint8_t good[CTRL_MSG_SIZE + 1], bad[CTRL_MSG_SIZE + 1];
        uint32_t u;
        int32_t t;

        ASSERT_EQ(ctrl_msg_encode(&m, good), CTRL_MSG_SIZE);
        good[CTRL_MSG_SIZE] = 0;
        ASSERT_EQ(ctrl_msg_decode(good, CTRL_MSG_SIZE, &d), 0);

        ASSERT_EQ(ctrl_msg_decode(good, CTRL_MSG_SIZE - 1, &d), -EBADMSG);
        ASSERT_EQ(ctrl_msg_decode(good, CTRL_MSG_SIZE + 1, &d), -EBADMSG);
        ASSERT_EQ(ctrl_msg_decode(good, 0, &d), -EBADMSG);
        ASSERT_EQ(ctrl_msg_decode(NULL, CTRL_MSG_SIZE, &d), -EBADMSG);

        memcpy(bad, good, sizeof(good));
        u = 0xdead1debU;
        memcpy(bad + 16, &u, 4);
        ASSERT_EQ(ctrl_msg_decode(bad, CTRL_MSG_SIZE, &d), -EBADMSG);

        static const int32_t bad_types[] = { -1, 9, 100, INT32_MIN, INT32_MAX, 0x74750000,
                                             0x74750002 };
        for (size_t i = 0; i < ARRAY_SIZE(bad_types); i++) {
                memcpy(bad, good, sizeof(good));
                t = bad_types[i];
                memcpy(bad + 20, &t, 4);
                ASSERT_EQ(ctrl_msg_decode(bad, CTRL_MSG_SIZE, &d), -EBADMSG);
        }

        static const char *const bad_env[] = { "NOEQ", "=x", "A=\x01", "A=b\n", "A\x7f=1", "" };
        for (size_t i = 0; i < ARRAY_SIZE(bad_env); i++) {
                memcpy(bad, good, sizeof(good));
                memset(bad + 24, 0, CTRL_MSG_VALUE_MAX);
                memcpy(bad + 24, bad_env[i], strlen(bad_env[i]));
                ASSERT_EQ(ctrl_msg_decode(bad, CTRL_MSG_SIZE, &d), -EBADMSG);
        }

        /* Unterminated string. */
        memcpy(bad, good, sizeof(good));
        memset(bad + 24, 'a', CTRL_MSG_VALUE_MAX);
        bad[25] = '=';
        ASSERT_EQ(ctrl_msg_decode(bad, CTRL_MSG_SIZE, &d), -EBADMSG);

        /* The version field is ignored. */
        memcpy(bad, good, sizeof(good));
        memcpy(bad, "udev-252\0\0\0\0\0\0\0\0", 16);
        ASSERT_EQ(ctrl_msg_decode(bad, CTRL_MSG_SIZE, &d), 0);
        memset(bad, 0xff, 16);
        ASSERT_EQ(ctrl_msg_decode(bad, CTRL_MSG_SIZE, &d), 0);

        /* A non-string type ignores garbage in the value area. */
        memcpy(bad, good, sizeof(good));
        t = CTRL_MSG_PING;
        memcpy(bad + 20, &t, 4);
        memset(bad + 24, 0xff, CTRL_MSG_VALUE_MAX);
        ASSERT_EQ(ctrl_msg_decode(bad, CTRL_MSG_SIZE, &d), 0);
        ASSERT_EQ(d.type, CTRL_MSG_PING);
}

/* ---------------------------------------------------------------- sockets */

#define SERVER_MSGS_MAX 16

struct server {
        int fd;              /* connected socket (socketpair) or listening socket */
        bool listening;      /* accept one connection first */
        bool close_on_end;   /* false: never close (timeout test) */
        int n;
        struct ctrl_msg msgs[SERVER_MSGS_MAX];
        bool creds_ok[SERVER_MSGS_MAX];
        int errors;
};

static int server_recv(int fd, struct ctrl_msg *m, bool *creds_ok)
{
        uint8_t buf[CTRL_MSG_SIZE + 16];
        union {
                struct cmsghdr align;
                char buf[CMSG_SPACE(sizeof(struct ucred))];
        } control;
        struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
        struct msghdr mh = {
                .msg_iov = &iov,
                .msg_iovlen = 1,
                .msg_control = &control,
                .msg_controllen = sizeof(control),
        };
        ssize_t n;

        n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
        if (n <= 0)
                return n == 0 ? -ECONNRESET : -errno;
        *creds_ok = false;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
                if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
                        struct ucred cred;

                        memcpy(&cred, CMSG_DATA(c), sizeof(cred));
                        *creds_ok = cred.pid == getpid() && cred.uid == getuid();
                }
        return ctrl_msg_decode(buf, (size_t)n, m);
}

static void *server_main(void *arg)
{
        struct server *s = arg;
        int fd = s->fd, one = 1;

        if (s->listening) {
                fd = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC);
                if (fd < 0) {
                        s->errors++;
                        return NULL;
                }
        }
        if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0)
                s->errors++;

        while (s->n < SERVER_MSGS_MAX) {
                struct ctrl_msg m;
                bool creds_ok = false;
                int r = server_recv(fd, &m, &creds_ok);

                if (r < 0) {
                        if (r != -ECONNRESET)
                                s->errors++;
                        break;
                }
                s->creds_ok[s->n] = creds_ok;
                s->msgs[s->n++] = m;
                if (m.type == CTRL_MSG_END && s->close_on_end)
                        break;
                if (m.type == CTRL_MSG_END) {
                        /* keep the connection open until the client gives up */
                        char c;

                        (void)recv(fd, &c, 1, 0);
                        break;
                }
        }
        close(fd);
        return NULL;
}

static void test_socketpair_round_trip(void)
{
        struct server s = { .close_on_end = true };
        struct ctrl_msg ping = { .type = CTRL_MSG_PING };
        struct ctrl_msg env = { .type = CTRL_MSG_SET_ENV, .strval = "DEBUG=1" };
        struct ctrl_msg lvl = { .type = CTRL_MSG_SET_LOG_LEVEL, .intval = 6 };
        pthread_t t;
        int sv[2];

        ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
        /* SO_PASSCRED before anything is sent, so no message misses its creds */
        {
                int one = 1;

                ASSERT_EQ(setsockopt(sv[1], SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)), 0);
        }
        s.fd = sv[1];
        ASSERT_EQ(thread_start(&t, server_main, &s), 0);

        ASSERT_EQ(ctrl_client_send(sv[0], &lvl), 0);
        ASSERT_EQ(ctrl_client_send(sv[0], &env), 0);
        ASSERT_EQ(ctrl_client_send(sv[0], &ping), 0);
        ASSERT_EQ(ctrl_client_finish(sv[0], 5 * USEC_PER_SEC), 0);
        ASSERT_EQ(pthread_join(t, NULL), 0);
        close(sv[0]);

        ASSERT_EQ(s.errors, 0);
        ASSERT_EQ(s.n, 4);
        ASSERT_EQ(s.msgs[0].type, CTRL_MSG_SET_LOG_LEVEL);
        ASSERT_EQ(s.msgs[0].intval, 6);
        ASSERT_EQ(s.msgs[1].type, CTRL_MSG_SET_ENV);
        ASSERT_STREQ(s.msgs[1].strval, "DEBUG=1");
        ASSERT_EQ(s.msgs[2].type, CTRL_MSG_PING);
        ASSERT_EQ(s.msgs[3].type, CTRL_MSG_END);
        for (int i = 0; i < s.n; i++)
                ASSERT_TRUE(s.creds_ok[i]);

        /* Invalid message: nothing is sent. */
        {
                struct ctrl_msg bad = { .type = _CTRL_MSG_TYPE_MAX };

                ASSERT_EQ(ctrl_client_send(-1, &ping), -EBADF);
                ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
                ASSERT_EQ(ctrl_client_send(sv[0], &bad), -EINVAL);
                close(sv[1]);
                /* peer gone: EPIPE, no SIGPIPE */
                ASSERT_EQ(ctrl_client_send(sv[0], &ping), -EPIPE);
                ASSERT_EQ(ctrl_client_finish(sv[0], USEC_PER_SEC), -EPIPE);
                close(sv[0]);
        }
}

static void test_finish_timeout(void)
{
        struct server s = { .close_on_end = false };
        struct ctrl_msg ping = { .type = CTRL_MSG_PING };
        uint64_t t0, dt;
        pthread_t t;
        int sv[2];

        ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
        s.fd = sv[1];
        ASSERT_EQ(thread_start(&t, server_main, &s), 0);
        ASSERT_EQ(ctrl_client_send(sv[0], &ping), 0);

        t0 = now_usec(CLOCK_MONOTONIC);
        ASSERT_EQ(ctrl_client_finish(sv[0], 200 * USEC_PER_MSEC), -ETIMEDOUT);
        dt = now_usec(CLOCK_MONOTONIC) - t0;
        ASSERT_TRUE(dt >= 190 * USEC_PER_MSEC && dt < 5 * USEC_PER_SEC);

        close(sv[0]); /* server's recv returns 0, it closes and exits */
        ASSERT_EQ(pthread_join(t, NULL), 0);
        ASSERT_EQ(s.n, 2);
        ASSERT_EQ(s.msgs[1].type, CTRL_MSG_END);

        /* timeout 0: END is sent, no waiting */
        ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
        ASSERT_EQ(ctrl_client_finish(sv[0], 0), 0);
        {
                uint8_t buf[CTRL_MSG_SIZE + 1];
                struct ctrl_msg m;

                ASSERT_EQ(recv(sv[1], buf, sizeof(buf), MSG_DONTWAIT), CTRL_MSG_SIZE);
                ASSERT_EQ(ctrl_msg_decode(buf, CTRL_MSG_SIZE, &m), 0);
                ASSERT_EQ(m.type, CTRL_MSG_END);
        }
        close(sv[0]);
        close(sv[1]);
}

static void test_query_msg(void)
{
        struct ctrl_msg m = { .type = CTRL_MSG_TUDEV_QUERY, .strval = "stats-json" }, d;
        uint8_t out[CTRL_MSG_SIZE];
        int32_t type;

        ASSERT_STREQ(ctrl_msg_type_to_string(CTRL_MSG_TUDEV_QUERY), "tudev-query");
        ASSERT_EQ(ctrl_msg_encode(&m, out), CTRL_MSG_SIZE);
        memcpy(&type, out + 20, 4);
        ASSERT_EQ(type, 0x74750001);
        ASSERT_STREQ((const char *)out + 24, "stats-json");
        for (size_t i = 24 + strlen("stats-json"); i < CTRL_MSG_SIZE; i++)
                ASSERT_EQ(out[i], 0);
        memset(&d, 0x55, sizeof(d));
        ASSERT_EQ(ctrl_msg_decode(out, sizeof(out), &d), 0);
        ASSERT_EQ(d.type, CTRL_MSG_TUDEV_QUERY);
        ASSERT_STREQ(d.strval, "stats-json");
        /* arguments with spaces and '=' are fine */
        strcpy(m.strval, "explain --seqnum=12 /devices/virtual/net/lo");
        ASSERT_EQ(ctrl_msg_encode(&m, out), CTRL_MSG_SIZE);
        ASSERT_EQ(ctrl_msg_decode(out, sizeof(out), &d), 0);
        ASSERT_STREQ(d.strval, m.strval);

        /* empty, control characters, unterminated: refused both ways */
        static const char *const bad[] = { "", "stats\n", "a\x01", "\x7f" };
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                strcpy(m.strval, bad[i]);
                ASSERT_EQ(ctrl_msg_encode(&m, out), -EINVAL);
                strcpy(m.strval, "stats");
                ASSERT_EQ(ctrl_msg_encode(&m, out), CTRL_MSG_SIZE);
                memset(out + 24, 0, CTRL_MSG_VALUE_MAX);
                memcpy(out + 24, bad[i], strlen(bad[i]));
                ASSERT_EQ(ctrl_msg_decode(out, sizeof(out), &d), -EBADMSG);
        }
        memset(out + 24, 'q', CTRL_MSG_VALUE_MAX);
        ASSERT_EQ(ctrl_msg_decode(out, sizeof(out), &d), -EBADMSG);
}

static void test_reply_packets(void)
{
        uint8_t pkt[CTRL_REPLY_PACKET_MAX + 8], text[CTRL_REPLY_TEXT_MAX + 1];
        uint32_t u;
        size_t len;
        bool last;
        int status, n;

        memset(text, 'x', sizeof(text));
        n = ctrl_reply_encode(0, true, "hello\n", 6, pkt);
        ASSERT_EQ(n, CTRL_REPLY_HEADER_SIZE + 6);
        memcpy(&u, pkt, 4);
        ASSERT_EQ(u, 0x74757270U);
        ASSERT_EQ(ctrl_reply_decode(pkt, (size_t)n, &status, &last, &len), 0);
        ASSERT_EQ(status, 0);
        ASSERT_TRUE(last);
        ASSERT_EQ(len, 6u);
        ASSERT_TRUE(memcmp(pkt + CTRL_REPLY_HEADER_SIZE, "hello\n", 6) == 0);

        n = ctrl_reply_encode(-ENOENT, false, (const char *)text, CTRL_REPLY_TEXT_MAX, pkt);
        ASSERT_EQ(n, CTRL_REPLY_PACKET_MAX);
        ASSERT_EQ(ctrl_reply_decode(pkt, (size_t)n, &status, &last, &len), 0);
        ASSERT_EQ(status, -ENOENT);
        ASSERT_TRUE(!last);
        ASSERT_EQ(len, (size_t)CTRL_REPLY_TEXT_MAX);
        /* an empty last packet */
        n = ctrl_reply_encode(0, true, NULL, 0, pkt);
        ASSERT_EQ(n, CTRL_REPLY_HEADER_SIZE);
        ASSERT_EQ(ctrl_reply_decode(pkt, (size_t)n, &status, &last, &len), 0);
        ASSERT_EQ(len, 0u);

        ASSERT_EQ(ctrl_reply_encode(0, true, (const char *)text, CTRL_REPLY_TEXT_MAX + 1, pkt),
                  -EINVAL);
        ASSERT_EQ(ctrl_reply_encode(1, true, "x", 1, pkt), -EINVAL);

        n = ctrl_reply_encode(0, true, "abc", 3, pkt);
        ASSERT_EQ(ctrl_reply_decode(pkt, (size_t)n - 1, &status, &last, &len), -EBADMSG);
        ASSERT_EQ(ctrl_reply_decode(pkt, (size_t)n + 1, &status, &last, &len), -EBADMSG);
        ASSERT_EQ(ctrl_reply_decode(pkt, 15, &status, &last, &len), -EBADMSG);
        ASSERT_EQ(ctrl_reply_decode(pkt, CTRL_REPLY_PACKET_MAX + 1, &status, &last, &len),
                  -EBADMSG);
        pkt[0] ^= 1; /* magic */
        ASSERT_EQ(ctrl_reply_decode(pkt, (size_t)n, &status, &last, &len), -EBADMSG);
        pkt[0] ^= 1;
        u = 2; /* unknown flag */
        memcpy(pkt + 8, &u, 4);
        ASSERT_EQ(ctrl_reply_decode(pkt, (size_t)n, &status, &last, &len), -EBADMSG);
        u = 1;
        memcpy(pkt + 8, &u, 4);
        u = 5; /* positive status */
        memcpy(pkt + 4, &u, 4);
        ASSERT_EQ(ctrl_reply_decode(pkt, (size_t)n, &status, &last, &len), -EBADMSG);
}

/* A server thread that answers one query with `n_pkts` packets of the text
 * "0123456789" repeated, the last one flagged unless `truncate`. */
struct query_server {
        int fd;
        size_t n_pkts;
        bool truncate;
        int errors;
        char query[CTRL_MSG_VALUE_MAX];
};

static void *query_server_main(void *arg)
{
        struct query_server *s = arg;
        struct ctrl_msg m;
        bool creds;

        if (server_recv(s->fd, &m, &creds) < 0 || m.type != CTRL_MSG_TUDEV_QUERY)
                s->errors++;
        memcpy(s->query, m.strval, sizeof(s->query));
        if (server_recv(s->fd, &m, &creds) < 0 || m.type != CTRL_MSG_END)
                s->errors++;
        for (size_t i = 0; i < s->n_pkts; i++) {
                uint8_t pkt[CTRL_REPLY_PACKET_MAX];
                bool last = i + 1 == s->n_pkts && !s->truncate;
                int n = ctrl_reply_encode(0, last, "0123456789", 10, pkt);

                if (n < 0 || send(s->fd, pkt, (size_t)n, MSG_NOSIGNAL) != n)
                        s->errors++;
        }
        close(s->fd);
        return NULL;
}

static void test_client_query(void)
{
        struct ctrl_reply rep = {};
        pthread_t t;
        int sv[2], one = 1;

        /* a server that replies in 3 packets */
        for (int trunc = 0; trunc < 2; trunc++) {
                struct query_server qs = { .n_pkts = 3, .truncate = trunc };

                ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
                ASSERT_EQ(setsockopt(sv[1], SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)), 0);
                qs.fd = sv[1];
                ASSERT_EQ(thread_start(&t, query_server_main, &qs), 0);
                if (!trunc) {
                        ASSERT_EQ(ctrl_client_query(sv[0], "stats", 5 * USEC_PER_SEC, &rep), 0);
                        ASSERT_EQ(rep.status, 0);
                        ASSERT_EQ(rep.len, 30u);
                        ASSERT_STREQ(rep.text, "012345678901234567890123456789");
                        free(rep.text);
                } else {
                        /* EOF before the last packet: a truncated reply */
                        ASSERT_EQ(ctrl_client_query(sv[0], "stats", 5 * USEC_PER_SEC, &rep),
                                  -EPROTO);
                }
                ASSERT_EQ(pthread_join(t, NULL), 0);
                ASSERT_EQ(qs.errors, 0);
                ASSERT_STREQ(qs.query, "stats");
                close(sv[0]);
        }

        /* a server that does not know the type (systemd-udevd): it reads the
         * messages and closes after END without a word */
        {
                struct server s = { .close_on_end = true };

                ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
                ASSERT_EQ(setsockopt(sv[1], SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)), 0);
                s.fd = sv[1];
                ASSERT_EQ(thread_start(&t, server_main, &s), 0);
                ASSERT_EQ(ctrl_client_query(sv[0], "pending", 5 * USEC_PER_SEC, &rep),
                          -EOPNOTSUPP);
                ASSERT_EQ(pthread_join(t, NULL), 0);
                ASSERT_EQ(s.n, 2);
                ASSERT_EQ(s.msgs[0].type, CTRL_MSG_TUDEV_QUERY);
                ASSERT_STREQ(s.msgs[0].strval, "pending");
                ASSERT_EQ(s.msgs[1].type, CTRL_MSG_END);
                close(sv[0]);
        }

        /* a server that never answers: the deadline */
        {
                struct server s = { .close_on_end = false };

                ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
                s.fd = sv[1];
                ASSERT_EQ(thread_start(&t, server_main, &s), 0);
                ASSERT_EQ(ctrl_client_query(sv[0], "stats", 100 * USEC_PER_MSEC, &rep),
                          -ETIMEDOUT);
                close(sv[0]);
                ASSERT_EQ(pthread_join(t, NULL), 0);
        }

        /* bad queries are not sent */
        ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
        ASSERT_EQ(ctrl_client_query(sv[0], "", USEC_PER_SEC, &rep), -EINVAL);
        ASSERT_EQ(ctrl_client_query(sv[0], "a\nb", USEC_PER_SEC, &rep), -EINVAL);
        {
                char longq[CTRL_MSG_VALUE_MAX + 1];

                memset(longq, 'a', sizeof(longq) - 1);
                longq[sizeof(longq) - 1] = '\0';
                ASSERT_EQ(ctrl_client_query(sv[0], longq, USEC_PER_SEC, &rep), -ENAMETOOLONG);
        }
        ASSERT_EQ(recv(sv[1], &one, sizeof(one), MSG_DONTWAIT), -1);
        ASSERT_EQ(errno, EAGAIN);
        close(sv[0]);
        close(sv[1]);
}

static void test_connect_path(void)
{
        char dir[] = "/tmp/test-ctrl-msg.XXXXXX", path[128], longpath[200];
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        struct server s = { .listening = true, .close_on_end = true };
        struct ctrl_msg reload = { .type = CTRL_MSG_RELOAD };
        pthread_t t;
        int lfd, cfd = -1;

        ASSERT_TRUE(mkdtemp(dir) != NULL);
        snprintf(path, sizeof(path), "%s/control", dir);

        ASSERT_EQ(ctrl_client_connect(path, &cfd), -ENOENT);
        ASSERT_EQ(cfd, -1);
        memset(longpath, 'a', sizeof(longpath) - 1);
        longpath[0] = '/';
        longpath[sizeof(longpath) - 1] = '\0';
        ASSERT_EQ(ctrl_client_connect(longpath, &cfd), -ENAMETOOLONG);
        ASSERT_EQ(ctrl_client_connect("", &cfd), -EINVAL);

        lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        ASSERT_TRUE(lfd >= 0);
        strcpy(sa.sun_path, path);
        ASSERT_EQ(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);

        /* bound but not listening: refused */
        ASSERT_EQ(ctrl_client_connect(path, &cfd), -ECONNREFUSED);

        ASSERT_EQ(listen(lfd, 0), 0);
        s.fd = lfd;
        ASSERT_EQ(thread_start(&t, server_main, &s), 0);

        ASSERT_EQ(ctrl_client_connect_timeout(path, 5 * USEC_PER_SEC, &cfd), 0);
        ASSERT_TRUE(cfd >= 0);
        ASSERT_TRUE(fcntl(cfd, F_GETFD) & FD_CLOEXEC);
        ASSERT_EQ(ctrl_client_send(cfd, &reload), 0);
        ASSERT_EQ(ctrl_client_finish(cfd, USEC_INFINITY), 0);
        ASSERT_EQ(pthread_join(t, NULL), 0);
        close(cfd);

        ASSERT_EQ(s.errors, 0);
        ASSERT_EQ(s.n, 2);
        ASSERT_EQ(s.msgs[0].type, CTRL_MSG_RELOAD);
        ASSERT_TRUE(s.creds_ok[0]);

        close(lfd);
        unlink(path);
        rmdir(dir);
}

int main(void)
{
        TEST_RUN(test_type_names);
        TEST_RUN(test_layout);
        TEST_RUN(test_round_trip);
        TEST_RUN(test_encode_rejects);
        TEST_RUN(test_decode_rejects);
        TEST_RUN(test_socketpair_round_trip);
        TEST_RUN(test_finish_timeout);
        TEST_RUN(test_connect_path);
        TEST_RUN(test_query_msg);
        TEST_RUN(test_reply_packets);
        TEST_RUN(test_client_query);
        return 0;
}
