/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: test */
#include <string.h>

#include "rules/rules-arena.h"
#include "shared/tests.h"

/* Regression (found by fuzz-rules): a request larger than the young first
 * chunk but below the "own chunk" threshold overflowed the chunk. */
static void test_mid_size_allocations(void)
{
        static const size_t sizes[] = { 1, 9322, 4096, 4097, ARENA_CHUNK_SIZE / 4,
                                        ARENA_CHUNK_SIZE / 4 + 1, 7, 65536, 3 };
        struct arena *a = arena_new();

        ASSERT_TRUE(a);
        for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
                unsigned char *p = arena_alloc(a, sizes[i]);
                ASSERT_TRUE(p);
                for (size_t j = 0; j < sizes[i]; j++)
                        ASSERT_EQ(p[j], 0); /* zeroed */
                memset(p, 0xa5, sizes[i]); /* ASan: must be inside the allocation */
        }
        char big[20000];
        memset(big, 'x', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        struct arena *b = arena_new();
        char *s = arena_strdup(b, big + sizeof(big) - 9323); /* 9322 chars first */
        ASSERT_EQ(strlen(s), 9322);
        arena_free(b);
        arena_free(a);
}

int main(void)
{
        TEST_RUN(test_mid_size_allocations);
        return 0;
}
