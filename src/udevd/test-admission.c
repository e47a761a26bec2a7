/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: test (single-threaded; the clock is a variable, nothing sleeps) */
#include <stdint.h>

#include "shared/tests.h"
#include "udevd/admission.h"

#define STALL 1000 /* µs */

/* Two CPUs, at most 4 running: CPU-bound events start up to the CPUs, then
 * wait for a finish; each start, finish or wait is progress. */
static void test_cpu_limit(void)
{
        struct admission a;
        uint64_t t = 5000;

        admission_init(&a, 2, 4, STALL);
        ASSERT_EQ(admission_room(&a, t), 2);
        ASSERT_EQ(admission_deadline(&a), 0);
        admission_started(&a, t);
        ASSERT_EQ(admission_room(&a, t), 1);
        admission_started(&a, t);
        ASSERT_EQ(a.running, 2);
        ASSERT_EQ(admission_room(&a, t), 0);
        ASSERT_EQ(admission_deadline(&a), t + STALL);
        /* just before the stall period: still nothing */
        ASSERT_EQ(admission_room(&a, t + STALL - 1), 0);
        /* one finishes: its place is free at once, and the stall clock restarts */
        t += 500;
        admission_finished(&a, false, t);
        ASSERT_EQ(admission_room(&a, t), 1);
        admission_started(&a, t);
        ASSERT_EQ(admission_deadline(&a), t + STALL);
        ASSERT_EQ(admission_hard_room(&a), 2);
}

/* No progress for a stall period: one more may start beyond the CPUs, then
 * one per further period, never beyond max_running. */
static void test_stall_rule(void)
{
        struct admission a;
        uint64_t t = 1;

        admission_init(&a, 1, 3, STALL);
        admission_started(&a, t);
        ASSERT_EQ(admission_room(&a, t + STALL - 1), 0);
        ASSERT_EQ(admission_room(&a, t + STALL), 1);
        ASSERT_EQ(admission_room(&a, t + 100 * STALL), 1); /* one at a time, however long */
        t += 3 * STALL;
        admission_started(&a, t); /* the stall start: progress */
        ASSERT_EQ(admission_room(&a, t), 0);
        ASSERT_EQ(admission_deadline(&a), t + STALL);
        ASSERT_EQ(admission_room(&a, t + STALL), 1);
        t += STALL;
        admission_started(&a, t);
        /* max_running reached: no stall start, no deadline */
        ASSERT_EQ(admission_hard_room(&a), 0);
        ASSERT_EQ(admission_room(&a, t + 1000 * STALL), 0);
        ASSERT_EQ(admission_deadline(&a), UINT64_MAX);
        /* lowering the limit below the running count: still nothing */
        admission_set_limits(&a, 1, 2, STALL);
        ASSERT_EQ(admission_room(&a, t + 1000 * STALL), 0);
        admission_finished(&a, false, t + 10);
        ASSERT_EQ(admission_room(&a, t + 1000 * STALL), 0);
        admission_finished(&a, false, t + 20);
        ASSERT_EQ(a.running, 1);
        ASSERT_EQ(admission_room(&a, t + 20), 0);
        ASSERT_EQ(admission_room(&a, t + 20 + STALL), 1);
}

/* Waiting events do not count against the CPUs; a wait that begins or ends
 * is progress. */
static void test_waiting(void)
{
        struct admission a;
        uint64_t t = 100;

        admission_init(&a, 1, 0, STALL);
        admission_started(&a, t);
        ASSERT_EQ(admission_room(&a, t), 0);
        t += 700;
        admission_wait_begins(&a, t); /* its program runs */
        ASSERT_EQ(a.waiting, 1);
        ASSERT_EQ(admission_room(&a, t), 1);
        ASSERT_EQ(admission_deadline(&a), 0);
        admission_started(&a, t);
        admission_wait_begins(&a, t + 1);
        admission_started(&a, t + 1);
        ASSERT_EQ(a.running, 3);
        ASSERT_EQ(admission_room(&a, t + 1), 0);
        /* the first one's program ends: two compute now, one over the limit;
         * progress, so the stall rule waits a whole period from here */
        t += 300;
        admission_wait_ends(&a, t);
        ASSERT_EQ(admission_room(&a, t + STALL - 1), 0);
        ASSERT_EQ(admission_deadline(&a), t + STALL);
        ASSERT_EQ(admission_room(&a, t + STALL), 1);
        /* the waiting one finishes while waiting (timed out, given up) */
        admission_finished(&a, true, t + 5);
        ASSERT_EQ(a.waiting, 0);
        ASSERT_EQ(a.running, 2);
        admission_finished(&a, false, t + 6);
        ASSERT_EQ(admission_room(&a, t + 6), 0); /* one computes, one CPU */
        admission_finished(&a, false, t + 7);
        ASSERT_EQ(admission_room(&a, t + 7), 1);
        ASSERT_EQ(a.running, 0);
}

/* No limits: everything may start; no per-CPU limit alone. */
static void test_no_limits(void)
{
        struct admission a;

        admission_init(&a, 0, 0, STALL);
        ASSERT_EQ(admission_room(&a, 0), UINT32_MAX);
        for (int i = 0; i < 100; i++)
                admission_started(&a, 10);
        ASSERT_EQ(admission_room(&a, 10), UINT32_MAX);
        ASSERT_EQ(admission_deadline(&a), 0);
        admission_set_limits(&a, 0, 101, STALL);
        ASSERT_EQ(admission_room(&a, 10), 1);
        admission_set_limits(&a, 4, 0, STALL);
        ASSERT_EQ(admission_room(&a, 10), 0);
        ASSERT_EQ(admission_room(&a, 10 + STALL), 1);
}

/* A stale `now` (a caller that read the clock before another thread's
 * transition) neither moves progress back nor counts as a stall. */
static void test_time_order(void)
{
        struct admission a;

        admission_init(&a, 1, 0, STALL);
        admission_started(&a, 5000);
        admission_wait_begins(&a, 4000);
        ASSERT_EQ(a.last_progress, 5000);
        admission_wait_ends(&a, 4500);
        ASSERT_EQ(admission_room(&a, 4999), 0);
        ASSERT_EQ(admission_room(&a, 5000 + STALL), 1);
        /* a huge period never wraps the deadline */
        admission_set_limits(&a, 1, 0, UINT64_MAX);
        ASSERT_EQ(admission_deadline(&a), UINT64_MAX);
        ASSERT_EQ(admission_room(&a, UINT64_MAX - 1), 0);
}

int main(void)
{
        TEST_RUN(test_cpu_limit);
        TEST_RUN(test_stall_rule);
        TEST_RUN(test_waiting);
        TEST_RUN(test_no_limits);
        TEST_RUN(test_time_order);
        return 0;
}
