/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: test (single-threaded) */
#include "shared/macro.h"
#include "shared/tests.h"
#include "udevd/watch-limit.h"

#define W 1000 /* window, µs */

static void test_one_pending(void)
{
        struct watch_limit wl;

        watch_limit_init(&wl, W, 16);
        ASSERT_TRUE(watch_limit_admit(&wl, "b7:0", 100));
        ASSERT_TRUE(!watch_limit_admit(&wl, "b7:0", 101));
        ASSERT_TRUE(!watch_limit_admit(&wl, "b7:0", 100 + W - 1));
        ASSERT_TRUE(watch_limit_admit(&wl, "b7:1", 101)); /* another device */
        ASSERT_EQ(watch_limit_dropped(&wl), 2);
        /* its event started: the next close writes a change again */
        watch_limit_clear(&wl, "b7:0");
        ASSERT_TRUE(watch_limit_admit(&wl, "b7:0", 102));
        ASSERT_TRUE(!watch_limit_admit(&wl, "b7:0", 103));
        /* the window passed without an event: write again, pending anew */
        ASSERT_TRUE(watch_limit_admit(&wl, "b7:0", 102 + W));
        ASSERT_TRUE(!watch_limit_admit(&wl, "b7:0", 103 + W));
        ASSERT_EQ(watch_limit_dropped(&wl), 4);
        watch_limit_clear(&wl, "c1:1"); /* unknown: harmless */
        watch_limit_done(&wl);
}

static void test_full(void)
{
        struct watch_limit wl;

        watch_limit_init(&wl, W, 2);
        ASSERT_TRUE(watch_limit_admit(&wl, "a", 0));
        ASSERT_TRUE(watch_limit_admit(&wl, "b", 10));
        /* full, nothing expired: untracked, so never dropped */
        ASSERT_TRUE(watch_limit_admit(&wl, "c", 20));
        ASSERT_TRUE(watch_limit_admit(&wl, "c", 21));
        ASSERT_TRUE(!watch_limit_admit(&wl, "a", 22));
        /* "a" expired: swept, "c" tracked */
        ASSERT_TRUE(watch_limit_admit(&wl, "c", W + 5));
        ASSERT_TRUE(!watch_limit_admit(&wl, "c", W + 6));
        ASSERT_TRUE(!watch_limit_admit(&wl, "b", W + 6));
        ASSERT_EQ(watch_limit_dropped(&wl), 3);
        watch_limit_done(&wl);
}

int main(void)
{
        TEST_RUN(test_one_pending);
        TEST_RUN(test_full);
        return 0;
}
