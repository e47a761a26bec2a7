/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any */
#pragma once
/* Minimal unit-test support: each test-*.c is its own binary whose main() calls
 * TEST_RUN(fn) for each test; a failed check prints file:line and exits 1. */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ASSERT_TRUE(expr)                                                          \
        do {                                                                       \
                if (!(expr)) {                                                     \
                        fprintf(stderr, "%s:%d: assertion failed: %s\n", __FILE__, \
                                __LINE__, #expr);                                  \
                        abort();                                                   \
                }                                                                  \
        } while (0)
#define ASSERT_EQ(a, b)                                                            \
        do {                                                                       \
                intmax_t _a = (intmax_t)(a), _b = (intmax_t)(b);                   \
                if (_a != _b) {                                                    \
                        fprintf(stderr, "%s:%d: %s == %s failed: %jd != %jd\n",    \
                                __FILE__, __LINE__, #a, #b, _a, _b);               \
                        abort();                                                   \
                }                                                                  \
        } while (0)
#define ASSERT_STREQ(a, b)                                                         \
        do {                                                                       \
                const char *_a = (a), *_b = (b);                                   \
                if (!_a || !_b || strcmp(_a, _b) != 0) {                           \
                        fprintf(stderr, "%s:%d: %s == %s failed: \"%s\" != \"%s\"\n", \
                                __FILE__, __LINE__, #a, #b, _a ? _a : "(null)",    \
                                _b ? _b : "(null)");                               \
                        abort();                                                   \
                }                                                                  \
        } while (0)
/* TESTS_SKIP="name1 name2" in the environment skips those tests (used where a
 * tool cannot run them, e.g. spawning under valgrind 3.19 which lacks pidfd_open). */
static inline int test_skipped(const char *name)
{
        const char *list = getenv("TESTS_SKIP");
        size_t n = strlen(name);

        for (const char *p = list ? strstr(list, name) : NULL; p; p = strstr(p + 1, name))
                if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
                        return 1;
        return 0;
}

#define TEST_RUN(fn)                                                               \
        do {                                                                       \
                fprintf(stderr, "  %-40s ", #fn);                                  \
                if (test_skipped(#fn)) {                                           \
                        fprintf(stderr, "skipped (TESTS_SKIP)\n");                 \
                        break;                                                     \
                }                                                                  \
                fn();                                                              \
                fprintf(stderr, "ok\n");                                           \
        } while (0)
