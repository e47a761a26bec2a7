/* threads: any */
#pragma once
/* File helpers for /run/udev state. All fds O_CLOEXEC. */

#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Create `path`'s missing parent directories with `mode`. 0 or -errno. */
int mkdir_parents(const char *path, mode_t mode);
/* mkdir -p of `path` itself. */
int mkdir_p(const char *path, mode_t mode);
/* A 64-bit value for temporary file names: per-thread generator seeded once
 * from getrandom(). Not for secrets. */
uint64_t random_name_u64(void);
/* Write `len` bytes atomically: temp file ".#<basename><16 hex>" in the same
 * directory, fchmod(mode), fsync-less flush, rename() over `path`. On failure
 * the temp file is removed and the old file left alone. 0 or -errno. */
int write_file_atomic(const char *path, const void *data, size_t len, mode_t mode);
/* Create if missing (mode), update timestamps; parents created 0755. */
int touch_file(const char *path, mode_t mode);
/* Read at most max bytes of a file into a new NUL-terminated buffer.
 * -EFBIG if larger than max. *ret_len excludes the NUL. */
int read_file_bounded(const char *path, size_t max, char **ret, size_t *ret_len);
/* Same for an open fd (borrowed, read from its current position). */
int read_fd_bounded(int fd, size_t max, char **ret, size_t *ret_len);
/* A directory stream over a duplicate of the directory fd `dfd` (borrowed;
 * the duplicate is O_CLOEXEC from the start and owned by the stream, rewound
 * to the beginning). NULL with errno set on failure. Free with closedir(). */
DIR *opendir_dup(int dfd);
