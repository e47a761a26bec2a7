/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: test (two threads) */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "shared/macro.h"
#include "shared/tests.h"
#include "shared/thread-util.h"

#define FRAME (320 * 1024)

/* Two nested frames of FRAME bytes each, every page written: more than musl's
 * default thread stack (128 KiB), well inside THREAD_STACK_SIZE. */
static __attribute__((noinline)) unsigned deep(unsigned level)
{
        volatile unsigned char frame[FRAME];
        unsigned sum = 0;

        for (size_t i = 0; i < sizeof(frame); i += 4096)
                frame[i] = (unsigned char)(i >> 12);
        if (level > 0)
                sum = deep(level - 1);
        for (size_t i = 0; i < sizeof(frame); i += 4096)
                sum += frame[i];
        return sum;
}

static void *thread_main(void *userdata)
{
        unsigned *ret = userdata;

        *ret = deep(1);
        return NULL;
}

static void test_stack(void)
{
        _Static_assert(2 * FRAME + 64 * 1024 < THREAD_STACK_SIZE, "test frames fit");
        pthread_t t;
        unsigned sum = 0, expect = 0;

        for (size_t i = 0; i < FRAME; i += 4096)
                expect += (unsigned char)(i >> 12);
        ASSERT_EQ(thread_start(&t, thread_main, &sum), 0);
        ASSERT_EQ(pthread_join(t, NULL), 0);
        ASSERT_EQ(sum, 2 * expect);
}

int main(void)
{
        TEST_RUN(test_stack);
        return 0;
}
