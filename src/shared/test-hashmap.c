/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: test (single thread) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/hashmap.h"
#include "shared/macro.h"
#include "shared/tests.h"

static void test_basic(void)
{
        struct hashmap h;
        int v1, v2, v3;
        const char *path = "/devices/a/b";

        hashmap_init(&h);
        ASSERT_TRUE(hashmap_get(&h, "x", 1) == NULL);
        ASSERT_TRUE(hashmap_remove(&h, "x", 1) == NULL);
        ASSERT_EQ(hashmap_put(&h, "x", 1, &v1), 0);
        ASSERT_EQ(hashmap_put(&h, "y", 1, &v2), 0);
        ASSERT_EQ(hashmap_size(&h), 2);
        ASSERT_TRUE(hashmap_get(&h, "x", 1) == &v1);
        ASSERT_TRUE(hashmap_get(&h, "xy", 2) == NULL);
        ASSERT_EQ(hashmap_put(&h, "x", 1, &v3), 0); /* replace */
        ASSERT_EQ(hashmap_size(&h), 2);
        ASSERT_TRUE(hashmap_get(&h, "x", 1) == &v3);
        ASSERT_EQ(hashmap_put(&h, "x", 1, NULL), -EINVAL);

        /* keys that are prefixes of a longer string, not NUL-terminated */
        ASSERT_EQ(hashmap_put(&h, path, 8, &v1), 0);  /* "/devices" */
        ASSERT_EQ(hashmap_put(&h, path, 10, &v2), 0); /* "/devices/a" */
        ASSERT_TRUE(hashmap_get(&h, "/devices", 8) == &v1);
        ASSERT_TRUE(hashmap_get(&h, "/devices/a", 10) == &v2);
        ASSERT_TRUE(hashmap_get(&h, path, 12) == NULL);

        /* remove only if the value matches */
        ASSERT_TRUE(!hashmap_remove_value(&h, "/devices", 8, &v2));
        ASSERT_TRUE(hashmap_remove_value(&h, "/devices", 8, &v1));
        ASSERT_TRUE(hashmap_get(&h, "/devices", 8) == NULL);
        ASSERT_TRUE(hashmap_remove(&h, "/devices/a", 10) == &v2);
        ASSERT_EQ(hashmap_size(&h), 2);

        /* the empty key is a key */
        ASSERT_EQ(hashmap_put(&h, "", 0, &v1), 0);
        ASSERT_TRUE(hashmap_get(&h, "", 0) == &v1);
        ASSERT_EQ(hashmap_size(&h), 3);
        hashmap_deinit(&h);
        hashmap_deinit(&h);
        ASSERT_EQ(hashmap_size(&h), 0);
}

static void test_reanchor(void)
{
        struct hashmap h;
        char *a = strdup("/devices/p/c"), *b = strdup("/devices/p/d");
        int v1, v2;
        const char *key;
        size_t len, state = 0;

        ASSERT_TRUE(a && b);
        hashmap_init(&h);
        ASSERT_EQ(hashmap_put(&h, a, 10, &v1), 0);
        ASSERT_EQ(hashmap_put(&h, b, 10, &v2), 0); /* same key, now stored as b's bytes */
        free(a);                                    /* a's bytes are no longer used */
        ASSERT_TRUE(hashmap_get(&h, "/devices/p", 10) == &v2);
        ASSERT_TRUE(hashmap_iterate(&h, &state, &key, &len, NULL));
        ASSERT_TRUE(key == b);
        ASSERT_EQ(len, 10);
        ASSERT_TRUE(!hashmap_iterate(&h, &state, NULL, NULL, NULL));
        hashmap_deinit(&h);
        free(b);
}

/* Random operations checked against a plain array. */
static void test_random(void)
{
        enum { KEYS = 3000, OPS = 200000 };
        static char names[KEYS][16];
        static int present[KEYS], values[KEYS];
        struct hashmap h;
        unsigned seed = 42;
        size_t n = 0, state = 0, seen = 0;
        void *v;

        hashmap_init(&h);
        for (unsigned i = 0; i < KEYS; i++)
                snprintf(names[i], sizeof(names[i]), "k%u", i * 7919);
        for (unsigned op = 0; op < OPS; op++) {
                unsigned k = (unsigned)rand_r(&seed) % KEYS;
                unsigned r = (unsigned)rand_r(&seed) % 3;
                size_t len = strlen(names[k]);

                if (r == 0) {
                        ASSERT_EQ(hashmap_put(&h, names[k], len, &values[k]), 0);
                        n += !present[k];
                        present[k] = 1;
                } else if (r == 1) {
                        v = hashmap_remove(&h, names[k], len);
                        ASSERT_TRUE(v == (present[k] ? &values[k] : NULL));
                        n -= present[k];
                        present[k] = 0;
                } else {
                        v = hashmap_get(&h, names[k], len);
                        ASSERT_TRUE(v == (present[k] ? &values[k] : NULL));
                }
                ASSERT_EQ(hashmap_size(&h), n);
        }
        for (unsigned i = 0; i < KEYS; i++)
                ASSERT_TRUE(hashmap_get(&h, names[i], strlen(names[i])) ==
                            (present[i] ? &values[i] : NULL));
        while (hashmap_iterate(&h, &state, NULL, NULL, &v)) {
                ASSERT_TRUE(present[(int *)v - values]);
                seen++;
        }
        ASSERT_EQ(seen, n);
        hashmap_deinit(&h);
}

/* Owned values, keys pointing into them (as the watch set and the device
 * enumerator use it): all freed, the table empty and reusable. Whether
 * every value was freed is for ASan and valgrind to say. */
static void test_deinit_free_values(void)
{
        struct hashmap h;
        char name[16];

        hashmap_init(&h);
        hashmap_deinit_free_values(&h); /* empty: nothing to free */
        for (int i = 0; i < 100; i++) {
                snprintf(name, sizeof(name), "b8:%d", i);
                char *copy = strdup(name);
                ASSERT_TRUE(copy != NULL);
                ASSERT_EQ(hashmap_put(&h, copy, strlen(copy), copy), 0);
        }
        free(hashmap_remove(&h, "b8:7", 4));
        ASSERT_EQ(hashmap_size(&h), 99);
        hashmap_deinit_free_values(&h);
        ASSERT_EQ(hashmap_size(&h), 0);
        ASSERT_TRUE(hashmap_get(&h, "b8:1", 4) == NULL);
        hashmap_deinit(&h);
}

static void test_reserve(void)
{
        struct hashmap h;
        static char keys[1000][8];
        int v;

        hashmap_init(&h);
        ASSERT_EQ(hashmap_reserve(&h, 1000), 0);
        {
                const struct hashmap_entry *buckets = h.buckets;

                for (unsigned i = 0; i < 1000; i++) {
                        snprintf(keys[i], sizeof(keys[i]), "%u", i);
                        ASSERT_EQ(hashmap_put(&h, keys[i], strlen(keys[i]), &v), 0);
                }
                ASSERT_TRUE(h.buckets == buckets); /* no growth needed */
        }
        ASSERT_EQ(hashmap_reserve(&h, SIZE_MAX), -ENOMEM);
        ASSERT_EQ(hashmap_size(&h), 1000);
        for (unsigned i = 0; i < 1000; i++)
                ASSERT_TRUE(hashmap_remove(&h, keys[i], strlen(keys[i])) == &v);
        ASSERT_EQ(hashmap_size(&h), 0);
        hashmap_deinit(&h);
}

int main(void)
{
        TEST_RUN(test_basic);
        TEST_RUN(test_reanchor);
        TEST_RUN(test_random);
        TEST_RUN(test_reserve);
        TEST_RUN(test_deinit_free_values);
        return 0;
}
