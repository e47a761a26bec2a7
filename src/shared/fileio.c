/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "shared/fileio.h"
#include "shared/macro.h"

#define ATOMIC_TEMP_TRIES 16

/* Create one directory; an existing directory is fine, anything else that
 * exists under that name is -ENOTDIR. */
static int mkdir_one(const char *path, mode_t mode)
{
        struct stat st;

        if (mkdir(path, mode) == 0)
                return 0;
        if (errno != EEXIST)
                return -errno;
        if (stat(path, &st) < 0)
                return -errno;
        return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

/* Create every directory of `path` up to (excluding) byte `end`. Bottom-up:
 * the deepest one is tried first, so the common case (it exists) costs one
 * mkdir() and one stat(); a parent is created only on ENOENT. */
static int mkdir_prefixes(const char *path, size_t end, mode_t mode)
{
        char buf[PATH_MAX];
        size_t cut[128]; /* depth */
        size_t n = 0;
        int r;

        if (end >= sizeof(buf))
                return -ENAMETOOLONG;
        memcpy(buf, path, end);
        buf[end] = '\0';
        while (end > 1 && buf[end - 1] == '/')
                buf[--end] = '\0';
        if (end == 0 || (end == 1 && buf[0] == '/'))
                return 0;

        /* Walk up until a mkdir() succeeds or finds the directory there
         * (a parent left with a trailing '/', from "a//b", is fine for mkdir). */
        for (;;) {
                r = mkdir_one(buf, mode);
                if (r != -ENOENT)
                        break;
                char *slash = strrchr(buf, '/');
                if (!slash || slash == buf || n >= ARRAY_SIZE(cut))
                        return r;
                cut[n++] = (size_t)(slash - buf);
                *slash = '\0';
        }
        /* Then back down, putting each separator back. */
        while (r >= 0 && n > 0) {
                buf[cut[--n]] = '/';
                r = mkdir_one(buf, mode);
        }
        return r;
}

int mkdir_parents(const char *path, mode_t mode)
{
        const char *slash;

        if (!path || !*path)
                return -EINVAL;
        slash = strrchr(path, '/');
        if (!slash || slash == path)
                return 0;
        return mkdir_prefixes(path, (size_t)(slash - path), mode);
}

int mkdir_p(const char *path, mode_t mode)
{
        size_t len;

        if (!path || !*path)
                return -EINVAL;
        len = strlen(path);
        while (len > 1 && path[len - 1] == '/')
                len--;
        return mkdir_prefixes(path, len, mode);
}

/* Per-thread xorshift64* state, seeded once from getrandom(): temporary
 * names need to be unlikely to collide (O_EXCL catches the rest), not secret,
 * and one getrandom() per temp file was a measurable share of an event. */
static __thread uint64_t name_rng;

uint64_t random_name_u64(void)
{
        uint64_t x = name_rng;

        if (x == 0) {
                if (getrandom(&x, sizeof(x), GRND_NONBLOCK) != (ssize_t)sizeof(x)) {
                        /* No entropy yet (early boot): mix time, pid and thread. */
                        struct timespec ts;

                        clock_gettime(CLOCK_MONOTONIC, &ts);
                        x = ((uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec) ^
                            ((uint64_t)getpid() << 32) ^ (uint64_t)gettid() ^
                            (uint64_t)(uintptr_t)&x;
                }
                if (x == 0)
                        x = 0x9e3779b97f4a7c15ULL;
        }
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        name_rng = x;
        return x * 0x2545f4914f6cdd1dULL;
}

/* Build ".#<basename><16 hex>" in the directory of `path` into buf. */
static int temp_name(const char *path, char *buf, size_t size)
{
        const char *slash = strrchr(path, '/');
        const char *base = slash ? slash + 1 : path;
        size_t dirlen = (size_t)(base - path);
        uint64_t rnd;
        int n;

        if (!*base)
                return -EINVAL;
        rnd = random_name_u64();
        n = snprintf(buf, size, "%.*s.#%s%016llx", (int)dirlen, path, base,
                     (unsigned long long)rnd);
        if (n < 0 || (size_t)n >= size)
                return -ENAMETOOLONG;
        return 0;
}

static int write_all(int fd, const void *data, size_t len)
{
        const char *p = data;

        while (len > 0) {
                ssize_t n = write(fd, p, len);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (n == 0)
                        return -EIO;
                p += n;
                len -= (size_t)n;
        }
        return 0;
}

/* The umask set through fileio_set_umask(), or -1: unknown. Written once
 * before threads start, read-only afterwards. */
static int known_umask = -1;

void fileio_set_umask(mode_t mask)
{
        mask &= 0777;
        umask(mask);
        known_umask = (int)mask;
}

/* Create a fresh temp file for `path` with `mode` (minus the umask); returns
 * the fd and its name in tmp. */
static int open_temp(const char *path, mode_t mode, char *tmp, size_t size)
{
        for (int i = 0; i < ATOMIC_TEMP_TRIES; i++) {
                int fd, r;

                r = temp_name(path, tmp, size);
                if (r < 0)
                        return r;
                fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW,
                          mode);
                if (fd >= 0)
                        return fd;
                if (errno != EEXIST)
                        return -errno;
        }
        return -EEXIST;
}

/* Whether creating a file with `mode` gives exactly `mode`. */
static bool umask_keeps(mode_t mode)
{
        return known_umask >= 0 && (mode & ~(mode_t)0777) == 0 &&
               (mode & (mode_t)known_umask) == 0;
}

int create_empty_file(const char *path, mode_t mode)
{
        int fd, r = 0;

        if (!path)
                return -EINVAL;
        if (umask_keeps(mode))
                return mknod(path, S_IFREG | mode, 0) < 0 ? -errno : 0;
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW, 0600);
        if (fd < 0)
                return -errno;
        if (fchmod(fd, mode) < 0)
                r = -errno;
        (void)close(fd);
        if (r < 0)
                (void)unlink(path);
        return r;
}

int write_file_atomic(const char *path, const void *data, size_t len, mode_t mode)
{
        char tmp[PATH_MAX];
        bool exact;
        int fd, r;

        if (!path || (!data && len > 0))
                return -EINVAL;

        /* Created with the final mode when the umask cannot narrow it (no
         * fchmod); otherwise owner-only first, widened by fchmod. */
        exact = umask_keeps(mode);
        fd = open_temp(path, exact ? mode : 0600, tmp, sizeof(tmp));
        if (fd < 0)
                return fd;

        r = exact ? 0 : (fchmod(fd, mode) < 0 ? -errno : 0);
        if (r == 0)
                r = write_all(fd, data, len);
        if (close(fd) < 0 && r == 0 && errno != EINTR)
                r = -errno;
        if (r == 0 && rename(tmp, path) < 0)
                r = -errno;
        if (r < 0)
                (void)unlink(tmp);
        return r;
}

int touch_file(const char *path, mode_t mode)
{
        _cleanup_close_ int fd = -1;
        struct stat st;

        if (!path || !*path)
                return -EINVAL;
        /* O_RDONLY|O_CREAT: an existing 0444 file can be reopened by anyone who
         * may read it; fchmod/futimens only need ownership. Parents are made
         * only when missing (the common case is one open()). */
        fd = open(path, O_RDONLY | O_CREAT | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW, mode);
        if (fd < 0 && errno == ENOENT && mkdir_parents(path, 0755) == 0)
                fd = open(path, O_RDONLY | O_CREAT | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW, mode);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EEXIST;
        if ((st.st_mode & 07777) != (mode & 07777) && fchmod(fd, mode) < 0)
                return -errno;
        if (futimens(fd, NULL) < 0)
                return -errno;
        return 0;
}

int read_fd_bounded(int fd, size_t max, char **ret, size_t *ret_len)
{
        _cleanup_free_ char *buf = NULL;
        size_t size, len = 0;
        struct stat st;

        if (fd < 0 || !ret || max >= SIZE_MAX - 1)
                return -EINVAL;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (S_ISDIR(st.st_mode))
                return -EISDIR;
        if (S_ISREG(st.st_mode) && (uintmax_t)st.st_size > max)
                return -EFBIG;

        /* Read one byte more than allowed to detect growth / non-regular files. */
        size = S_ISREG(st.st_mode) ? (size_t)st.st_size + 1 : MIN(max + 1, (size_t)4096);
        buf = malloc(size + 1);
        if (!buf)
                return -ENOMEM;

        for (;;) {
                ssize_t n;

                if (len == size) {
                        char *p;

                        if (size > max)
                                return -EFBIG;
                        size = size > max / 2 ? max + 1 : size * 2;
                        p = realloc(buf, size + 1);
                        if (!p)
                                return -ENOMEM;
                        buf = p;
                }
                n = read(fd, buf + len, size - len);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (n == 0)
                        break;
                len += (size_t)n;
                if (len > max)
                        return -EFBIG;
        }

        buf[len] = '\0';
        if (ret_len)
                *ret_len = len;
        *ret = TAKE_PTR(buf);
        return 0;
}

int read_file_bounded(const char *path, size_t max, char **ret, size_t *ret_len)
{
        _cleanup_close_ int fd = -1;

        if (!path)
                return -EINVAL;
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        return read_fd_bounded(fd, max, ret, ret_len);
}

int read_uint64_file(const char *path, uint64_t *ret)
{
        _cleanup_close_ int fd = -1;
        char buf[32], *end;
        unsigned long long v;
        ssize_t n;

        if (!path || !ret)
                return -EINVAL;
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        do
                n = read(fd, buf, sizeof(buf));
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        if (n == 0 || (size_t)n >= sizeof(buf) || buf[0] < '0' || buf[0] > '9')
                return -EINVAL;
        buf[n] = '\0';
        errno = 0;
        v = strtoull(buf, &end, 10);
        if (errno == ERANGE || v > UINT64_MAX)
                return -ERANGE;
        if (*end == '\n')
                end++;
        if (*end)
                return -EINVAL;
        *ret = (uint64_t)v;
        return 0;
}

DIR *opendir_dup(int dfd)
{
        int fd = fcntl(dfd, F_DUPFD_CLOEXEC, 3);
        DIR *dir;

        if (fd < 0)
                return NULL;
        dir = fdopendir(fd);
        if (!dir) {
                int saved = errno;
                close(fd);
                errno = saved;
                return NULL;
        }
        rewinddir(dir); /* the duplicate shares dfd's file position */
        return dir;
}
