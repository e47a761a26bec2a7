/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: test (single thread) */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shared/compat.h"
#include "shared/macro.h"
#include "shared/tests.h"

extern char **environ;

static void assert_same_name(const char *a, const char *b)
{
        ASSERT_TRUE((a == NULL) == (b == NULL));
        if (a)
                ASSERT_STREQ(a, b);
}

static void test_signal_abbrev(void)
{
        ASSERT_STREQ(signal_abbrev_portable(SIGHUP), "HUP");
        ASSERT_STREQ(signal_abbrev_portable(SIGTERM), "TERM");
        ASSERT_STREQ(signal_abbrev_portable(SIGKILL), "KILL");
        ASSERT_STREQ(signal_abbrev_portable(SIGCHLD), "CHLD");
        ASSERT_STREQ(signal_abbrev_portable(SIGIO), "POLL");
        ASSERT_STREQ(signal_abbrev_portable(SIGSYS), "SYS");
        ASSERT_TRUE(signal_abbrev_portable(0) == NULL);
        ASSERT_TRUE(signal_abbrev_portable(-1) == NULL);
        ASSERT_TRUE(signal_abbrev_portable(SIGRTMIN) == NULL);
        ASSERT_TRUE(signal_abbrev_portable(SIGRTMAX) == NULL);
        ASSERT_TRUE(signal_abbrev_portable(1000) == NULL);
        /* the C library's (or the same fallback) for every number */
        for (int sig = -2; sig < 130; sig++)
                assert_same_name(signal_abbrev_portable(sig), signal_abbrev(sig));
#ifdef HAVE_SIGABBREV_NP
        for (int sig = -2; sig < 130; sig++)
                assert_same_name(signal_abbrev_portable(sig), sigabbrev_np(sig));
#endif
}

static void test_errno_name(void)
{
        ASSERT_STREQ(errno_name_portable(ENOENT), "ENOENT");
        ASSERT_STREQ(errno_name_portable(EACCES), "EACCES");
        ASSERT_STREQ(errno_name_portable(EAGAIN), "EAGAIN");
        ASSERT_STREQ(errno_name_portable(EWOULDBLOCK), "EAGAIN");
        ASSERT_STREQ(errno_name_portable(ENOTSUP), "EOPNOTSUPP");
        ASSERT_STREQ(errno_name_portable(EDEADLK), "EDEADLK");
        ASSERT_STREQ(errno_name_portable(ETIMEDOUT), "ETIMEDOUT");
        ASSERT_STREQ(errno_name_portable(EHWPOISON), "EHWPOISON");
        ASSERT_STREQ(errno_name_portable(0), "0");
        ASSERT_TRUE(errno_name_portable(-ENOENT) == NULL);
        ASSERT_TRUE(errno_name_portable(100000) == NULL);
        for (int e = -2; e < 4200; e++)
                assert_same_name(errno_name_portable(e), errno_name(e));
#ifdef HAVE_STRERRORNAME_NP
        for (int e = -2; e < 4200; e++)
                assert_same_name(errno_name_portable(e), strerrorname_np(e));
#endif
}

static void test_error_message(void)
{
        char buf[128], small[8];
        const char *m;

        m = error_message(ENOENT, buf, sizeof(buf));
        ASSERT_TRUE(m != NULL && m[0] != '\0');
        ASSERT_TRUE(strcmp(m, error_message(EACCES, buf + 64, 64)) != 0);
        m = error_message(123456, buf, sizeof(buf));
        ASSERT_TRUE(m != NULL && m[0] != '\0');
        m = error_message(ENOENT, small, sizeof(small));
        ASSERT_TRUE(m != NULL);
        if (m == small)
                ASSERT_TRUE(strlen(m) < sizeof(small));
}

/* Spawn sh with fa: does fd 3 reach it (put there by a dup2 action), and
 * does fd `stray` not? */
static int spawn_sees_only_3(posix_spawn_file_actions_t *fa, int stray)
{
        char script[128];
        char *argv[] = { (char *)"sh", (char *)"-c", script, NULL };
        pid_t pid;
        int status;

        snprintf(script, sizeof(script), "[ -e /proc/self/fd/3 ] && [ ! -e /proc/self/fd/%d ]",
                 stray);
        ASSERT_EQ(posix_spawn(&pid, "/bin/sh", fa, NULL, argv, environ), 0);
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* A descriptor without O_CLOEXEC (as one inherited from whoever started the
 * daemon) does not reach the child; the one a dup2 action puts at 3 does. */
static void check_spawn_close_from(int (*close_from)(posix_spawn_file_actions_t *, int))
{
        posix_spawn_file_actions_t fa;
        int stray = fcntl(STDERR_FILENO, F_DUPFD, 40);

        ASSERT_TRUE(stray >= 40);
        ASSERT_EQ(fcntl(stray, F_GETFD) & FD_CLOEXEC, 0);
        ASSERT_EQ(posix_spawn_file_actions_init(&fa), 0);
        ASSERT_EQ(posix_spawn_file_actions_adddup2(&fa, stray, 3), 0);
        ASSERT_EQ(close_from(&fa, 4), 0);
        if (close_from == spawn_close_from_portable &&
            !(fcntl(stray, F_GETFD) & FD_CLOEXEC)) {
                /* close_range(CLOSE_RANGE_CLOEXEC) refused (kernel < 5.11,
                 * valgrind): the fallback relies on O_CLOEXEC alone */
                fprintf(stderr, "(close_range unavailable) ");
        } else
                ASSERT_TRUE(spawn_sees_only_3(&fa, stray));
        posix_spawn_file_actions_destroy(&fa);
        ASSERT_EQ(close(stray), 0);
}

static void test_spawn_close_from(void)
{
        check_spawn_close_from(spawn_close_from);
        check_spawn_close_from(spawn_close_from_portable);
        ASSERT_EQ(spawn_close_from_portable(NULL, -1), EBADF);
}

static void test_malloc_tuning(void)
{
        /* no-ops without glibc's malloc; must not disturb the heap with it */
        malloc_limit_arenas(2);
        void *p = malloc(1 << 20);
        ASSERT_TRUE(p != NULL);
        free(p);
        malloc_release_free();
}

int main(void)
{
        TEST_RUN(test_signal_abbrev);
        TEST_RUN(test_errno_name);
        TEST_RUN(test_error_message);
        TEST_RUN(test_spawn_close_from);
        TEST_RUN(test_malloc_tuning);
        return 0;
}
