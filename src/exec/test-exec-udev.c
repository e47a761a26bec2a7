/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: test (main thread; the helper runs as a re-executed copy of this binary) */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "exec/exec-client.h"
#include "exec/exec-helper.h"
#include "exec/exec-udev.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "shared/tests.h"
#include "shared/time-util.h"

static struct exec_client *client;

static int spawn(const char *cmd, char *const envp[], bool is_run, uint64_t deadline, char *out,
                 size_t out_size, bool *truncated)
{
        struct udev_spawner s = exec_udev_spawner(client);
        return s.spawn(s.userdata, cmd, envp, is_run, deadline, out, out_size, truncated);
}

static void test_results(void)
{
        char out[64];
        bool truncated = true;

        /* Quotes group and are removed; the environment is the device's. */
        ASSERT_EQ(spawn("/bin/sh -c 'echo \"$X\" \"a  b\"; exit 0'", (char *[]){ "X=1=2", NULL },
                        false, UINT64_MAX, out, sizeof(out), &truncated), 0);
        ASSERT_STREQ(out, "1=2 a  b\n");
        ASSERT_TRUE(!truncated);
        ASSERT_EQ(spawn("/bin/sh -c \"exit 3\"", NULL, false, UINT64_MAX, out, sizeof(out), NULL),
                  3);
        ASSERT_EQ(spawn("/bin/sh -c 'kill -USR1 $$'", NULL, false, UINT64_MAX, NULL, 0, NULL),
                  128 + SIGUSR1);
        /* Cut output. */
        ASSERT_EQ(spawn("/usr/bin/seq 1000", NULL, false, UINT64_MAX, out, sizeof(out),
                        &truncated), 0);
        ASSERT_TRUE(truncated);
        ASSERT_EQ(strlen(out), sizeof(out) - 1);
        /* RUN: no buffer. */
        ASSERT_EQ(spawn("/bin/echo run", NULL, true, UINT64_MAX, NULL, 0, NULL), 0);
}

static void test_failures(void)
{
        char out[64];
        uint64_t t0 = now_usec(CLOCK_MONOTONIC);

        /* At the deadline: -ETIME, with the event carrying on. */
        ASSERT_EQ(spawn("/bin/sleep 100", NULL, false, t0 + 300 * USEC_PER_MSEC, out, sizeof(out),
                        NULL), -ETIME);
        ASSERT_TRUE(now_usec(CLOCK_MONOTONIC) - t0 < 2 * USEC_PER_SEC);
        /* No '/': looked up in /lib/udev only ($PATH is not searched). */
        ASSERT_EQ(spawn("true-not-a-udev-helper", NULL, false, UINT64_MAX, out, sizeof(out), NULL),
                  -ENOENT);
        ASSERT_EQ(spawn("/nonexistent", NULL, true, UINT64_MAX, NULL, 0, NULL), -ENOENT);
        ASSERT_EQ(spawn("", NULL, false, UINT64_MAX, out, sizeof(out), NULL), -EINVAL);
        ASSERT_EQ(spawn("''", NULL, false, UINT64_MAX, out, sizeof(out), NULL), -EINVAL);
        ASSERT_EQ(spawn("/bin/true", (char *[]){ "NOEQUALS", NULL }, false, UINT64_MAX, out,
                        sizeof(out), NULL), -EINVAL);
}

int main(int argc, char *argv[])
{
        char self[PATH_MAX];

        exec_helper_run_if_requested(argc, argv);
        ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        ASSERT_TRUE(n > 0);
        self[n] = '\0';
        log_set_max_level(getenv("TEST_LOG") ? atoi(getenv("TEST_LOG")) : LOG_CRIT);
        ASSERT_EQ(exec_client_new(&(struct exec_client_config){ .helper_path = self }, &client),
                  0);
        TEST_RUN(test_results);
        TEST_RUN(test_failures);
        exec_client_free(client);
        return 0;
}
