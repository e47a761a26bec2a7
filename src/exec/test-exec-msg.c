/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: test (single thread) */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <syslog.h>
#include <unistd.h>

#include "exec/exec-msg.h"
#include "shared/macro.h"
#include "shared/tests.h"

static char *argv_storage[EXEC_ARGC_MAX + 1];
static char *env_storage[EXEC_ENVC_MAX + 1];

static const struct exec_msg_request_view base = {
        .id = 42,
        .deadline_usec = 123456789,
        .kill_grace_usec = 5000000,
        .timeout_signal = SIGTERM,
};

static void test_roundtrip(void)
{
        char *argv[] = { "/bin/sh", "-c", "echo \"$A\"", "", "a b", NULL };
        char *envp[] = { "A=1", "B=x=y=z", "C=line1\nline2\n", "EMPTY=", NULL };
        struct exec_msg_request_view v;
        void *msg;
        size_t size;

        ASSERT_EQ(exec_msg_request_build(&base, argv, envp, &msg, &size), 0);
        ASSERT_EQ(exec_msg_request_parse(msg, size, argv_storage, env_storage, &v), 0);
        ASSERT_EQ(v.id, 42);
        ASSERT_EQ(v.deadline_usec, 123456789);
        ASSERT_EQ(v.kill_grace_usec, 5000000);
        ASSERT_EQ(v.timeout_signal, SIGTERM);
        ASSERT_EQ(v.argc, 5);
        ASSERT_EQ(v.envc, 4);
        for (size_t i = 0; i < 5; i++)
                ASSERT_STREQ(v.argv[i], argv[i]);
        ASSERT_TRUE(v.argv[5] == NULL);
        for (size_t i = 0; i < 4; i++)
                ASSERT_STREQ(v.envp[i], envp[i]);
        ASSERT_TRUE(v.envp[4] == NULL);
        free(msg);

        /* No level by default; a level travels in the flags. */
        ASSERT_TRUE(!v.set_log_level);
        struct exec_msg_request_view lv = base;
        lv.set_log_level = true;
        for (int level = LOG_EMERG; level <= LOG_DEBUG; level++) {
                lv.log_level = level;
                ASSERT_EQ(exec_msg_request_build(&lv, argv, envp, &msg, &size), 0);
                ASSERT_EQ(exec_msg_request_parse(msg, size, argv_storage, env_storage, &v), 0);
                ASSERT_TRUE(v.set_log_level);
                ASSERT_EQ(v.log_level, level);
                if (level < LOG_DEBUG)
                        free(msg);
        }
        lv.log_level = LOG_DEBUG + 1;
        ASSERT_EQ(exec_msg_request_build(&lv, argv, envp, &msg, &size), -EINVAL);
        lv.log_level = -1;
        ASSERT_EQ(exec_msg_request_build(&lv, argv, envp, &msg, &size), -EINVAL);
        free(msg);

        /* No environment at all. */
        ASSERT_EQ(exec_msg_request_build(&base, argv, NULL, &msg, &size), 0);
        ASSERT_EQ(exec_msg_request_parse(msg, size, argv_storage, env_storage, &v), 0);
        ASSERT_EQ(v.envc, 0);
        ASSERT_TRUE(v.envp[0] == NULL);
        free(msg);
}

static void test_build_rejects(void)
{
        char *rel[] = { "sh", NULL };
        char *ok[] = { "/bin/true", NULL };
        char *empty[] = { NULL };
        char *bad_env1[] = { "NOEQUALS", NULL };
        char *bad_env2[] = { "=value", NULL };
        struct exec_msg_request_view v = base;
        void *msg = NULL;
        size_t size;

        ASSERT_EQ(exec_msg_request_build(&base, rel, NULL, &msg, &size), -EINVAL);
        ASSERT_EQ(exec_msg_request_build(&base, empty, NULL, &msg, &size), -EINVAL);
        ASSERT_EQ(exec_msg_request_build(&base, NULL, NULL, &msg, &size), -EINVAL);
        ASSERT_EQ(exec_msg_request_build(&base, ok, bad_env1, &msg, &size), -EINVAL);
        ASSERT_EQ(exec_msg_request_build(&base, ok, bad_env2, &msg, &size), -EINVAL);
        v.timeout_signal = 0;
        ASSERT_EQ(exec_msg_request_build(&v, ok, NULL, &msg, &size), -EINVAL);
        v.timeout_signal = NSIG;
        ASSERT_EQ(exec_msg_request_build(&v, ok, NULL, &msg, &size), -EINVAL);
        v = base;
        v.kill_grace_usec = EXEC_KILL_GRACE_MAX_USEC + 1;
        ASSERT_EQ(exec_msg_request_build(&v, ok, NULL, &msg, &size), -EINVAL);

        /* Limits: bytes and counts. */
        char *big = malloc(EXEC_STRINGS_MAX + 1);
        memset(big, 'x', EXEC_STRINGS_MAX);
        big[0] = '/';
        big[EXEC_STRINGS_MAX] = '\0';
        char *too_long[] = { big, NULL };
        ASSERT_EQ(exec_msg_request_build(&base, too_long, NULL, &msg, &size), -E2BIG);
        free(big);
        char **many = calloc(EXEC_ARGC_MAX + 2, sizeof(char *));
        for (size_t i = 0; i < EXEC_ARGC_MAX + 1; i++)
                many[i] = "/x";
        ASSERT_EQ(exec_msg_request_build(&base, many, NULL, &msg, &size), -E2BIG);
        many[EXEC_ARGC_MAX] = NULL; /* exactly the limit */
        ASSERT_EQ(exec_msg_request_build(&base, many, NULL, &msg, &size), 0);
        free(msg);
        free(many);
        ASSERT_TRUE(true);
}

/* Build a valid message, let `mutate` damage a copy, expect -EBADMSG. */
static void expect_bad(void (*mutate)(char *buf, size_t *size))
{
        char *argv[] = { "/bin/echo", "hi", NULL };
        char *envp[] = { "A=1", NULL };
        struct exec_msg_request_view v;
        void *msg;
        size_t size;

        ASSERT_EQ(exec_msg_request_build(&base, argv, envp, &msg, &size), 0);
        char *copy = malloc(size + 16);
        memcpy(copy, msg, size);
        mutate(copy, &size);
        ASSERT_EQ(exec_msg_request_parse(copy, size, argv_storage, env_storage, &v), -EBADMSG);
        free(copy);
        free(msg);
}

static struct exec_msg_request *hdr(char *buf) { return (struct exec_msg_request *)buf; }

static void m_magic(char *b, size_t *s) { hdr(b)->magic ^= 1; }
static void m_size_field(char *b, size_t *s) { hdr(b)->size += 1; }
static void m_short(char *b, size_t *s) { *s = sizeof(struct exec_msg_request) - 1; }
static void m_truncated(char *b, size_t *s) { *s -= 1; hdr(b)->size -= 1; } /* last NUL gone */
static void m_trailing(char *b, size_t *s) { b[*s] = 'x'; *s += 1; hdr(b)->size += 1; }
static void m_argc0(char *b, size_t *s) { hdr(b)->argc = 0; hdr(b)->envc = 3; }
static void m_argc_big(char *b, size_t *s) { hdr(b)->argc = EXEC_ARGC_MAX + 1; }
static void m_envc_big(char *b, size_t *s) { hdr(b)->envc = EXEC_ENVC_MAX + 1; }
static void m_more_strings(char *b, size_t *s) { hdr(b)->envc = 2; }
static void m_fewer_strings(char *b, size_t *s) { hdr(b)->envc = 0; }
static void m_flags(char *b, size_t *s) { hdr(b)->flags = 0x10; }
static void m_log_level(char *b, size_t *s) { hdr(b)->flags = LOG_DEBUG + 2; }
static void m_signal(char *b, size_t *s) { hdr(b)->timeout_signal = -1; }
static void m_grace(char *b, size_t *s) { hdr(b)->kill_grace_usec = UINT64_MAX; }
static void m_relative(char *b, size_t *s) { b[sizeof(struct exec_msg_request)] = 'b'; }
static void m_env_noeq(char *b, size_t *s) { b[*s - 3] = 'X'; } /* "A=1" -> "AX1" */
static void m_env_empty_key(char *b, size_t *s)
{
        /* "A=1\0" -> "=11\0" */
        b[*s - 4] = '=';
        b[*s - 3] = '1';
}

static void test_parse_rejects(void)
{
        expect_bad(m_magic);
        expect_bad(m_size_field);
        expect_bad(m_short);
        expect_bad(m_truncated);
        expect_bad(m_trailing);
        expect_bad(m_argc0);
        expect_bad(m_argc_big);
        expect_bad(m_envc_big);
        expect_bad(m_more_strings);
        expect_bad(m_fewer_strings);
        expect_bad(m_flags);
        expect_bad(m_log_level);
        expect_bad(m_signal);
        expect_bad(m_grace);
        expect_bad(m_relative);
        expect_bad(m_env_noeq);
        expect_bad(m_env_empty_key);
}

static void test_reply_check(void)
{
        struct exec_msg_reply r = { .magic = EXEC_MSG_REPLY_MAGIC, .id = 7, .pid = 100 };
        char big[sizeof(r) + 1] = { 0 };

        ASSERT_EQ(exec_msg_reply_check(&r, sizeof(r), 7), 0);
        ASSERT_EQ(exec_msg_reply_check(&r, sizeof(r), 8), -EBADMSG);
        ASSERT_EQ(exec_msg_reply_check(&r, sizeof(r) - 1, 7), -EBADMSG);
        memcpy(big, &r, sizeof(r));
        ASSERT_EQ(exec_msg_reply_check(big, sizeof(big), 7), -EBADMSG);
        r.magic = EXEC_MSG_REQUEST_MAGIC;
        ASSERT_EQ(exec_msg_reply_check(&r, sizeof(r), 7), -EBADMSG);
        r.magic = EXEC_MSG_REPLY_MAGIC;
        r.error = -1;
        ASSERT_EQ(exec_msg_reply_check(&r, sizeof(r), 7), -EBADMSG);
}

static bool fd_open(int fd) { return fcntl(fd, F_GETFD) >= 0; }

static int count_open_fds(void)
{
        int n = 0;
        for (int fd = 0; fd < 256; fd++)
                n += fd_open(fd);
        return n;
}

/* Descriptor passing: exact counts arrive; too many is MSG_CTRUNC and
 * nothing leaks; oversized datagrams are MSG_TRUNC. */
static void test_fd_passing(void)
{
        int sv[2], fds[EXEC_MSG_FDS], got[EXEC_MSG_FDS], extra[6];
        char buf[64];
        size_t n_fds;

        ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
        for (int i = 0; i < EXEC_MSG_FDS; i++)
                fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
        int before = count_open_fds();

        ASSERT_EQ(exec_msg_send(sv[0], "abc", 3, fds, EXEC_MSG_FDS, 0), 0);
        ASSERT_EQ(exec_msg_recv(sv[1], buf, sizeof(buf), got, &n_fds), 3);
        ASSERT_EQ(n_fds, EXEC_MSG_FDS);
        for (int i = 0; i < EXEC_MSG_FDS; i++) {
                ASSERT_TRUE(fd_open(got[i]));
                ASSERT_TRUE(fcntl(got[i], F_GETFD) & FD_CLOEXEC);
        }
        exec_close_fds(got, EXEC_MSG_FDS);
        ASSERT_EQ(count_open_fds(), before);

        /* Fewer descriptors: received and counted (the caller rejects them). */
        ASSERT_EQ(exec_msg_send(sv[0], "x", 1, fds, 2, 0), 0);
        ASSERT_EQ(exec_msg_recv(sv[1], buf, sizeof(buf), got, &n_fds), 1);
        ASSERT_EQ(n_fds, 2);
        exec_close_fds(got, n_fds);

        /* Six descriptors: rejected, none left open. */
        for (int i = 0; i < 6; i++)
                extra[i] = fds[i % EXEC_MSG_FDS];
        struct iovec iov = { .iov_base = "y", .iov_len = 1 };
        union {
                struct cmsghdr h;
                char b[CMSG_SPACE(sizeof(extra))];
        } control = { 0 };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.b,
                             .msg_controllen = sizeof(control.b) };
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(extra));
        memcpy(CMSG_DATA(c), extra, sizeof(extra));
        ASSERT_EQ(sendmsg(sv[0], &mh, 0), 1);
        ASSERT_EQ(exec_msg_recv(sv[1], buf, sizeof(buf), got, &n_fds), -EBADMSG);
        ASSERT_EQ(n_fds, 0);
        ASSERT_EQ(count_open_fds(), before);

        /* Oversized datagram with descriptors: rejected, none left open. */
        char large[128] = { 0 };
        ASSERT_EQ(exec_msg_send(sv[0], large, sizeof(large), fds, EXEC_MSG_FDS, 0), 0);
        ASSERT_EQ(exec_msg_recv(sv[1], buf, sizeof(buf), got, &n_fds), -EBADMSG);
        ASSERT_EQ(count_open_fds(), before);

        /* Nothing queued. */
        ASSERT_EQ(exec_msg_recv(sv[1], buf, sizeof(buf), got, &n_fds), -EAGAIN);
        /* End of stream. */
        safe_close(sv[0]);
        ASSERT_EQ(exec_msg_recv(sv[1], buf, sizeof(buf), got, &n_fds), 0);
        ASSERT_EQ(n_fds, 0);
        safe_close(sv[1]);
        exec_close_fds(fds, EXEC_MSG_FDS);
}

int main(void)
{
        TEST_RUN(test_roundtrip);
        TEST_RUN(test_build_rejects);
        TEST_RUN(test_parse_rejects);
        TEST_RUN(test_reply_check);
        TEST_RUN(test_fd_passing);
        return 0;
}
