/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: test (single-threaded: the server runs on this thread's loop) */
/* The control server on a socket in a temporary directory: requests and the
 * PING sync, garbage closing the connection, the connection limit and the
 * replacement of idle connections when it is reached, the socket mode, the
 * EXIT connection held open through END, timeouts and the exit, and a socket
 * another daemon bound at the path left alone. */

#include <errno.h>
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

static void setup(void)
{
        const struct ctrl_server_ops ops = {
                .handle = on_handle, .request_sync = on_request_sync, .synced = on_synced,
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
        return 0;
}
