/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: test (single thread) */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "shared/macro.h"
#include "shared/minheap.h"
#include "shared/tests.h"

static void test_order(void)
{
        static const uint64_t keys[] = { 5, 1, 9, 3, 3, 7, 0, 8, 2, 6, 4 };
        struct minheap h = MINHEAP_INIT;
        uint64_t items[ARRAY_SIZE(keys)], prev = 0;

        ASSERT_TRUE(minheap_pop(&h) == NULL);
        ASSERT_TRUE(minheap_peek(&h) == NULL);
        ASSERT_EQ(minheap_reserve(&h, ARRAY_SIZE(keys)), 0);
        for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
                items[i] = keys[i];
                minheap_push(&h, keys[i], &items[i]);
        }
        ASSERT_EQ(minheap_size(&h), ARRAY_SIZE(keys));
        ASSERT_TRUE(*(uint64_t *)minheap_peek(&h) == 0);
        for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
                uint64_t *it = minheap_pop(&h);

                ASSERT_TRUE(it != NULL);
                ASSERT_TRUE(*it >= prev);
                prev = *it;
        }
        ASSERT_TRUE(minheap_pop(&h) == NULL);
        ASSERT_EQ(minheap_size(&h), 0);
        minheap_done(&h);
}

/* Pushes between pops, as the event queue does: every pop returns the
 * smallest key present at that moment. */
static void test_interleaved(void)
{
        struct minheap h = MINHEAP_INIT;
        uint64_t present[64] = { 0 }; /* count per key */
        unsigned seed = 1;

        ASSERT_EQ(minheap_reserve(&h, 4096), 0);
        for (int round = 0; round < 4000; round++) {
                if (minheap_size(&h) < 4000 && (rand_r(&seed) % 3 != 0 || minheap_size(&h) == 0)) {
                        uint64_t k = (uint64_t)(rand_r(&seed) % 64);

                        present[k]++;
                        minheap_push(&h, k, (void *)(uintptr_t)(k + 1));
                } else {
                        uint64_t k = (uint64_t)(uintptr_t)minheap_pop(&h) - 1, min = 0;

                        while (present[min] == 0)
                                min++;
                        ASSERT_TRUE(k == min);
                        present[k]--;
                }
        }
        minheap_clear(&h);
        ASSERT_TRUE(minheap_pop(&h) == NULL);
        minheap_done(&h);
}

static void test_reserve(void)
{
        struct minheap h = MINHEAP_INIT;

        ASSERT_EQ(minheap_reserve(&h, 0), 0);
        ASSERT_EQ(minheap_reserve(&h, 100), 0);
        ASSERT_TRUE(h.alloc >= 100);
        ASSERT_EQ(minheap_reserve(&h, SIZE_MAX), -ENOMEM);
        ASSERT_TRUE(h.alloc >= 100); /* unchanged */
        minheap_done(&h);
        ASSERT_TRUE(h.v == NULL && h.alloc == 0);
}

int main(void)
{
        TEST_RUN(test_order);
        TEST_RUN(test_interleaved);
        TEST_RUN(test_reserve);
        return 0;
}
