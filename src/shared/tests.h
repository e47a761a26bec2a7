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
#define TEST_RUN(fn)                                                               \
        do {                                                                       \
                fprintf(stderr, "  %-40s ", #fn);                                  \
                fn();                                                              \
                fprintf(stderr, "ok\n");                                           \
        } while (0)
