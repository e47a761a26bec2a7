/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: test */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shared/tests.h"
#include "shared/time-util.h"
#include "udevd/cpu-load.h"

static char root[64];

static void put_loadavg(const char *text)
{
        char path[PATH_MAX];
        FILE *f;

        /* in place, as the daemon keeps the file open: rewrite, not rename */
        snprintf(path, sizeof(path), "%s/loadavg", root);
        f = fopen(path, "we");
        ASSERT_TRUE(f);
        fputs(text, f);
        ASSERT_EQ(fclose(f), 0);
}

static void test_parse(void)
{
        unsigned v = 0;

        ASSERT_EQ(cpu_load_parse_runnable("0.50 0.40 0.30 3/250 1234\n", &v), 0);
        ASSERT_EQ(v, 3);
        ASSERT_EQ(cpu_load_parse_runnable("12.00 9.10 4.00 17/1024 99", &v), 0);
        ASSERT_EQ(v, 17);
        ASSERT_EQ(cpu_load_parse_runnable("", &v), -EINVAL);
        ASSERT_EQ(cpu_load_parse_runnable("0.50 0.40 0.30", &v), -EINVAL);
        ASSERT_EQ(cpu_load_parse_runnable("0.50 0.40 0.30 x/250 1", &v), -EINVAL);
        ASSERT_EQ(cpu_load_parse_runnable("0.50 0.40 0.30 3 250 1", &v), -EINVAL);
        ASSERT_EQ(cpu_load_parse_runnable("0.50 0.40 0.30 99999999999/2 1", &v), -EINVAL);
}

/* Busy when, besides the reader, as many tasks as CPUs are runnable; read
 * at most once per period. */
static void test_busy(void)
{
        struct cpu_load *l = NULL;
        const uint64_t ms = USEC_PER_MSEC;

        snprintf(root, sizeof(root), "/tmp/test-cpu-load.XXXXXX");
        ASSERT_TRUE(mkdtemp(root));
        ASSERT_EQ(cpu_load_new(root, 2, &l), -ENOENT);
        put_loadavg("garbage\n");
        ASSERT_EQ(cpu_load_new(root, 2, &l), -ENOENT);
        put_loadavg("1.00 1.00 1.00 2/100 5\n");
        ASSERT_EQ(cpu_load_new(root, 2, &l), 0);

        ASSERT_TRUE(!cpu_load_busy(l, 100 * ms, ms)); /* the reader and one more */
        put_loadavg("1.00 1.00 1.00 3/100 5\n");
        ASSERT_TRUE(!cpu_load_busy(l, 100 * ms + 500, ms)); /* within the period */
        ASSERT_TRUE(cpu_load_busy(l, 101 * ms, ms));         /* the reader and two */
        put_loadavg("1.00 1.00 1.00 1/100 5\n");
        ASSERT_TRUE(cpu_load_busy(l, 101 * ms + 10, ms));    /* cached */
        ASSERT_TRUE(!cpu_load_busy(l, 102 * ms, ms));
        put_loadavg("1.00 1.00 1.00 40/100 5\n");
        ASSERT_TRUE(cpu_load_busy(l, 103 * ms, ms));
        put_loadavg("nonsense\n");
        ASSERT_TRUE(!cpu_load_busy(l, 104 * ms, ms)); /* unreadable: not busy */
        cpu_load_free(l);
        l = NULL;
        /* one CPU: one other runnable task is enough */
        put_loadavg("1.00 1.00 1.00 2/100 5\n");
        ASSERT_EQ(cpu_load_new(root, 1, &l), 0);
        ASSERT_TRUE(cpu_load_busy(l, 100 * ms, ms));
        cpu_load_free(l);
}

/* The real /proc: busy while more spinning children than CPUs run (whether
 * it is free afterwards depends on the rest of the machine: not tested). */
static void test_real(void)
{
        struct cpu_load *l = NULL;
        enum { N = 3 };
        pid_t pids[N];
        bool busy = false;

        ASSERT_EQ(cpu_load_new("/proc", 1, &l), 0);
        for (int i = 0; i < N; i++) {
                pids[i] = fork();
                ASSERT_TRUE(pids[i] >= 0);
                if (pids[i] == 0)
                        for (;;)
                                ;
        }
        for (int i = 0; i < 200 && !busy; i++) {
                busy = cpu_load_busy(l, now_usec(CLOCK_MONOTONIC), 0);
                usleep(1000);
        }
        for (int i = 0; i < N; i++) {
                kill(pids[i], SIGKILL);
                ASSERT_EQ(waitpid(pids[i], NULL, 0), pids[i]);
        }
        ASSERT_TRUE(busy);
        cpu_load_free(l);
}

static void cleanup(void)
{
        char path[PATH_MAX];

        snprintf(path, sizeof(path), "%s/loadavg", root);
        unlink(path);
        rmdir(root);
}

int main(void)
{
        TEST_RUN(test_parse);
        TEST_RUN(test_busy);
        TEST_RUN(test_real);
        cleanup();
        return 0;
}
