/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: test (single-threaded: the server runs on this thread's loop) */
/* The control server on a socket in a temporary directory: requests and the
 * PING sync, garbage closing the connection, the connection limit and the
 * replacement of idle connections when it is reached, the socket mode, the
 * EXIT connection held open through END, timeouts and the exit, and a socket
 * another daemon bound at the path left alone; queries and their replies
 * (multi-packet, errors, the query table). */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "proto/ctrl-msg.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "shared/tests.h"
#include "shared/time-util.h"
#include "udevd/ctrl-server.h"
#include "udevd/loop.h"

static char dir[64], path[128];
static struct loop *loop;
static struct ctrl_server *server;
static unsigned handled;
static int last_type;
static uint64_t ticket, synced_ticket;

static void on_handle(const struct ctrl_msg *m, void *userdata)
{
        handled++;
        last_type = m->type;
}

static uint64_t on_request_sync(void *userdata)
{
        return ++ticket;
}

static uint64_t on_synced(void *userdata)
{
        return synced_ticket;
}

/* "big N": N bytes of a known pattern; "fail": an error; else echo. */
static int on_query(const char *query, struct query_out *out, void *userdata)
{
        unsigned long n;

        if (sscanf(query, "big %lu", &n) == 1) {
                for (unsigned long i = 0; i < n; i++)
                        (void)query_printf(out, "%c", 'a' + (int)(i % 26));
                return 0;
        }
        if (strcmp(query, "fail") == 0)
                return query_fail(out, -EINVAL, "bad query\n");
        query_printf(out, "echo %s\n", query);
        return 0;
}

/* "[ARGS]\n"; "huge": more than a reply may hold. */
static int on_query_echo(const char *args, struct query_out *out, void *userdata)
{
        if (strcmp(args, "huge") == 0) {
                for (int i = 0; i < 70000; i++)
                        (void)query_printf(out, "%s", "0123456789012345678901234567890123456789"
                                                      "0123456789012345678901234567890123456789");
                return 0;
        }
        return query_printf(out, "[%s]\n", args);
}

static void setup(void)
{
        const struct ctrl_server_ops ops = {
                .handle = on_handle, .request_sync = on_request_sync, .synced = on_synced,
                .query = on_query,
        };

        snprintf(dir, sizeof(dir), "/tmp/tudev-ctrl-XXXXXX");
        ASSERT_TRUE(mkdtemp(dir) != NULL);
        snprintf(path, sizeof(path), "%s/control", dir);
        ASSERT_EQ(loop_new(&loop), 0);
        ASSERT_EQ(ctrl_server_new(loop, path, &ops, &server), 0);
        handled = 0;
        last_type = -1;
        ticket = synced_ticket = 0;
}

static void teardown(void)
{
        ctrl_server_free(server);
        loop_free(loop);
        ASSERT_TRUE(access(path, F_OK) < 0);
        rmdir(dir);
}

/* Let the server handle what is pending. */
static void spin_short(void)
{
        for (int i = 0; i < 50; i++)
                ASSERT_EQ(loop_run_once(loop, 2), 0);
}

static int client(void)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

        ASSERT_TRUE(fd >= 0);
        strcpy(sa.sun_path, path);
        ASSERT_EQ(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
        return fd;
}

static void send_msg(int fd, enum ctrl_msg_type type)
{
        struct ctrl_msg m = { .type = type };

        ASSERT_EQ(ctrl_client_send(fd, &m), 0);
}

/* true if the server closed the connection */
static bool closed(int fd)
{
        char buf[8];
        ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

        return n == 0 || (n < 0 && errno != EAGAIN);
}

static void test_requests_and_sync(void)
{
        struct stat st;
        int fd;

        setup();
        ASSERT_EQ(stat(path, &st), 0);
        ASSERT_TRUE(S_ISSOCK(st.st_mode));
        ASSERT_EQ(st.st_mode & 07777, 0600);
        fd = client();
        send_msg(fd, CTRL_MSG_RELOAD);
        send_msg(fd, CTRL_MSG_PING);
        send_msg(fd, CTRL_MSG_END);
        spin_short();
        ASSERT_EQ(handled, 1u);
        ASSERT_EQ(last_type, CTRL_MSG_RELOAD);
        ASSERT_EQ(ticket, 1u);
        ASSERT_TRUE(!closed(fd)); /* waits for the sync */
        synced_ticket = 1;
        ctrl_server_sync_done(server, 1);
        ASSERT_TRUE(closed(fd));
        close(fd);
        /* garbage ends the connection, nothing is handled */
        fd = client();
        ASSERT_EQ(send(fd, "garbage", 7, 0), 7);
        spin_short();
        ASSERT_TRUE(closed(fd));
        ASSERT_EQ(handled, 1u);
        close(fd);
        teardown();
}

static void test_idle_connections_give_way(void)
{
        int idle[CTRL_CONN_MAX], waiting[CTRL_CONN_MAX - 1], busy, extra;

        setup();
        /* all slots taken by connections that send nothing */
        for (size_t i = 0; i < CTRL_CONN_MAX; i++) {
                idle[i] = client();
                spin_short();
        }
        /* a new one replaces the least recently active idle one ... */
        busy = client();
        send_msg(busy, CTRL_MSG_PING);
        send_msg(busy, CTRL_MSG_END);
        spin_short();
        ASSERT_TRUE(closed(idle[0]));
        for (size_t i = 1; i < CTRL_CONN_MAX; i++)
                ASSERT_TRUE(!closed(idle[i]));
        ASSERT_EQ(ticket, 1u);
        ASSERT_TRUE(!closed(busy)); /* END received, waiting for the sync: kept */

        /* ... never one that sent END, nor one whose request waits to be read */
        for (size_t i = 1; i < CTRL_CONN_MAX; i++) {
                send_msg(idle[i], CTRL_MSG_RELOAD);
                send_msg(idle[i], CTRL_MSG_END);
        }
        spin_short();
        ASSERT_EQ(handled, (unsigned)CTRL_CONN_MAX - 1);
        for (size_t i = 1; i < CTRL_CONN_MAX; i++)
                ASSERT_TRUE(closed(idle[i]));
        /* now `busy` waits for its sync and the other slots are free: fill
         * them with connections that wait for a sync too */
        for (size_t i = 0; i < CTRL_CONN_MAX - 1; i++) {
                waiting[i] = client();
                send_msg(waiting[i], CTRL_MSG_PING);
                send_msg(waiting[i], CTRL_MSG_END);
                spin_short();
        }
        /* nothing idle to replace: a new connection is closed at once */
        extra = client();
        spin_short();
        ASSERT_TRUE(closed(extra));
        ASSERT_TRUE(!closed(busy));
        for (size_t i = 0; i < CTRL_CONN_MAX - 1; i++)
                ASSERT_TRUE(!closed(waiting[i]));
        synced_ticket = ticket;
        ctrl_server_sync_done(server, ticket);
        ASSERT_TRUE(closed(busy));
        for (size_t i = 0; i < CTRL_CONN_MAX - 1; i++) {
                ASSERT_TRUE(closed(waiting[i]));
                close(waiting[i]);
        }
        for (size_t i = 0; i < CTRL_CONN_MAX; i++)
                close(idle[i]);
        close(busy);
        close(extra);
        teardown();
}

static void test_exit_connection_held(void)
{
        int fd, other;

        setup();
        fd = client();
        send_msg(fd, CTRL_MSG_EXIT);
        send_msg(fd, CTRL_MSG_END);
        spin_short();
        ASSERT_EQ(handled, 1u);
        ASSERT_EQ(last_type, CTRL_MSG_EXIT);
        ASSERT_TRUE(!closed(fd)); /* END does not close it */
        ctrl_server_sync_done(server, 100);
        ctrl_server_expire(server, now_usec(CLOCK_MONOTONIC) + 2 * CTRL_CONN_TIMEOUT_USEC);
        ASSERT_TRUE(!closed(fd)); /* nor a sync, nor the timeout */
        /* the other connections are served as before */
        other = client();
        send_msg(other, CTRL_MSG_RELOAD);
        send_msg(other, CTRL_MSG_END);
        spin_short();
        ASSERT_TRUE(closed(other));
        ASSERT_TRUE(!closed(fd));
        close(other);
        /* at exit: the path goes, the connection stays open until the
         * process is gone (here: until the end of this test program) */
        ASSERT_TRUE(ctrl_server_owns_path(server));
        ASSERT_TRUE(ctrl_server_free_at_exit(server));
        server = NULL;
        ASSERT_TRUE(access(path, F_OK) < 0);
        ASSERT_TRUE(!closed(fd));
        close(fd);
        loop_free(loop);
        rmdir(dir);
}

static void test_replaced_socket_left_alone(void)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        struct stat st;
        int newer;

        /* ctrl_server_free(): another daemon's socket at the path stays */
        setup();
        ASSERT_EQ(unlink(path), 0);
        newer = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        ASSERT_TRUE(newer >= 0);
        strcpy(sa.sun_path, path);
        ASSERT_EQ(bind(newer, (struct sockaddr *)&sa, sizeof(sa)), 0);
        ASSERT_TRUE(!ctrl_server_owns_path(server));
        ctrl_server_free(server);
        ASSERT_EQ(stat(path, &st), 0);
        ASSERT_TRUE(S_ISSOCK(st.st_mode));
        loop_free(loop);
        ASSERT_EQ(unlink(path), 0);
        close(newer);
        rmdir(dir);

        /* ctrl_server_free_at_exit(): same, and it says so */
        setup();
        ASSERT_EQ(unlink(path), 0);
        newer = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        ASSERT_TRUE(newer >= 0);
        strcpy(sa.sun_path, path);
        ASSERT_EQ(bind(newer, (struct sockaddr *)&sa, sizeof(sa)), 0);
        ASSERT_TRUE(!ctrl_server_free_at_exit(server));
        ASSERT_EQ(stat(path, &st), 0);
        loop_free(loop);
        ASSERT_EQ(unlink(path), 0);
        close(newer);
        rmdir(dir);
        /* a path that is gone: nothing to remove, nobody else's */
        setup();
        ASSERT_EQ(unlink(path), 0);
        ASSERT_TRUE(ctrl_server_free_at_exit(server));
        loop_free(loop);
        rmdir(dir);
}

/* Send a query and END, then read the reply while the server runs on this
 * thread. Returns the packets' status; text into *ret (malloc'ed). */
static int query_collect(const char *query, char **ret, size_t *ret_len, bool *ret_eof)
{
        struct ctrl_msg m = { .type = CTRL_MSG_TUDEV_QUERY };
        size_t len = 0;
        char *text = NULL;
        int status = 1, fd;
        bool last = false, eof = false;

        strcpy(m.strval, query);
        fd = client();
        ASSERT_EQ(ctrl_client_send(fd, &m), 0);
        send_msg(fd, CTRL_MSG_END);
        for (int spins = 0; spins < 100000 && !eof; spins++) {
                uint8_t pkt[CTRL_REPLY_PACKET_MAX];
                size_t n;
                int st;
                bool l;
                ssize_t k;

                ASSERT_EQ(loop_run_once(loop, 0), 0);
                k = recv(fd, pkt, sizeof(pkt), MSG_DONTWAIT);
                if (k < 0) {
                        ASSERT_EQ(errno, EAGAIN);
                        continue;
                }
                if (k == 0) {
                        eof = true;
                        break;
                }
                ASSERT_TRUE(!last); /* nothing after the last packet */
                ASSERT_EQ(ctrl_reply_decode(pkt, (size_t)k, &st, &l, &n), 0);
                ASSERT_TRUE(status == 1 || status == st);
                status = st;
                last = l;
                text = realloc(text, len + n + 1);
                ASSERT_TRUE(text != NULL);
                memcpy(text + len, pkt + CTRL_REPLY_HEADER_SIZE, n);
                len += n;
                text[len] = '\0';
        }
        ASSERT_TRUE(last);
        close(fd);
        *ret = text;
        *ret_len = len;
        *ret_eof = eof;
        return status;
}

static void test_queries(void)
{
        char *text;
        size_t len;
        bool eof;

        setup();
        ASSERT_EQ(query_collect("hello world", &text, &len, &eof), 0);
        ASSERT_STREQ(text, "echo hello world\n");
        ASSERT_TRUE(eof);
        free(text);
        ASSERT_EQ(query_collect("fail", &text, &len, &eof), -EINVAL);
        ASSERT_STREQ(text, "bad query\n");
        free(text);
        /* 2 MiB: far more than the socket buffer takes, so the server has to
         * wait for EPOLLOUT; and the connection closes only after it */
        ASSERT_EQ(query_collect("big 2097152", &text, &len, &eof), 0);
        ASSERT_EQ(len, 2097152u);
        for (size_t i = 0; i < len; i++)
                if (text[i] != 'a' + (int)(i % 26))
                        ASSERT_TRUE(false);
        ASSERT_TRUE(eof);
        free(text);
        /* an empty answer is one packet */
        ASSERT_EQ(query_collect("big 0", &text, &len, &eof), 0);
        ASSERT_EQ(len, 0u);
        free(text);
        ASSERT_EQ(handled, 0u); /* queries never reach the request handler */
        teardown();
}

static void test_query_table(void)
{
        struct query_table t = {};
        struct query_out o = {};
        int dummy;

        ASSERT_EQ(query_register(&t, "echo", on_query_echo, &dummy), 0);
        ASSERT_EQ(query_register(&t, "echo", on_query_echo, NULL), -EEXIST);
        ASSERT_EQ(query_register(&t, "Bad", on_query_echo, NULL), -EINVAL);
        ASSERT_EQ(query_register(&t, "", on_query_echo, NULL), -EINVAL);
        ASSERT_EQ(query_register(&t, "a b", on_query_echo, NULL), -EINVAL);
        ASSERT_EQ(query_dispatch(&t, "echo", &o), 0);
        ASSERT_STREQ(o.buf, "[]\n");
        ASSERT_EQ(query_dispatch(&t, "echo some args", &o), 0);
        ASSERT_STREQ(o.buf, "[some args]\n");
        ASSERT_EQ(query_dispatch(&t, "echoes", &o), -ENOENT);
        ASSERT_STREQ(o.buf, "unknown query \"echoes\"\n");
        ASSERT_EQ(query_dispatch(&t, "ech", &o), -ENOENT);
        for (int i = 1; i < QUERY_HANDLERS_MAX; i++) {
                char name[16];

                snprintf(name, sizeof(name), "q%d", i);
                ASSERT_EQ(query_register(&t, name, on_query_echo, NULL), 0);
        }
        ASSERT_EQ(query_register(&t, "one-more", on_query_echo, NULL), -ENOSPC);
        /* an answer above CTRL_REPLY_MAX: -E2BIG with an error line */
        ASSERT_EQ(query_dispatch(&t, "q1 huge", &o), -E2BIG);
        ASSERT_TRUE(strstr(o.buf, "too large") != NULL);
        query_out_done(&o);
}

int main(void)
{
        log_set_max_level(getenv("TEST_DEBUG") ? LOG_DEBUG : LOG_ERR);
        if (geteuid() != 0) {
                fprintf(stderr, "skipped: the server only serves uid 0\n");
                return 0;
        }
        TEST_RUN(test_requests_and_sync);
        TEST_RUN(test_idle_connections_give_way);
        TEST_RUN(test_exit_connection_held);
        TEST_RUN(test_replaced_socket_left_alone);
        TEST_RUN(test_queries);
        TEST_RUN(test_query_table);
        return 0;
}
