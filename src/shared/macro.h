/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any */
#pragma once
/* Small macro layer shared by every module: cleanup attributes, ownership
 * hand-over, array sizes. Nothing here allocates. */

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _noreturn_ __attribute__((noreturn))
#define _must_check_ __attribute__((warn_unused_result))
#define _likely_(x) __builtin_expect(!!(x), 1)
#define _unlikely_(x) __builtin_expect(!!(x), 0)

#define ARRAY_SIZE(a)                                                              \
        (sizeof(a) / sizeof((a)[0]) +                                              \
         0 * sizeof(char[1 - 2 * __builtin_types_compatible_p(__typeof__(a),       \
                                                              __typeof__(&(a)[0]))]))

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* Hand over ownership of a pointer / fd held in a cleanup variable. */
#define TAKE_PTR(p)                                                                \
        ({                                                                         \
                __typeof__(p) _p_ = (p);                                           \
                (p) = NULL;                                                        \
                _p_;                                                               \
        })
#define TAKE_FD(fd)                                                                \
        ({                                                                         \
                int _fd_ = (fd);                                                   \
                (fd) = -1;                                                         \
                _fd_;                                                              \
        })

static inline void freep(void *p) { free(*(void **)p); }
#define _cleanup_free_ _cleanup_(freep)

/* close() that keeps errno and accepts -1; returns -1 for "fd = safe_close(fd)". */
static inline int safe_close(int fd)
{
        if (fd >= 0) {
                int saved = errno;
                close(fd);
                errno = saved;
        }
        return -1;
}
static inline void closep(int *fd) { safe_close(*fd); }
#define _cleanup_close_ _cleanup_(closep)

/* -errno of the last failed libc call, never 0. */
static inline int negative_errno(void) { return errno > 0 ? -errno : -EIO; }

#define STRLEN(s) (sizeof(s) - 1)
#define streq(a, b) (strcmp((a), (b)) == 0)
#define strneq(a, b, n) (strncmp((a), (b), (n)) == 0)
