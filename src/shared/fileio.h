/* SPDX-License-Identifier: GPL-2.0-or-later */
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
/* Set the process umask and remember it, so that write_file_atomic() knows
 * whether creating its temporary file with `mode` already gives `mode`.
 * Call before any thread starts; a process that never calls it (or changes
 * its umask elsewhere afterwards: don't) keeps the fchmod() of every write. */
void fileio_set_umask(mode_t mask);
/* Write `len` bytes atomically: temp file ".#<basename><16 hex>" in the same
 * directory created with `mode` (fchmod(mode) only when the umask known from
 * fileio_set_umask() would narrow it, or none is known), fsync-less flush,
 * rename() over `path`. On failure the temp file is removed and the old file
 * left alone. 0 or -errno. */
int write_file_atomic(const char *path, const void *data, size_t len, mode_t mode);
/* Create `path` as a new empty file with exactly `mode` in one step (mknod
 * when the umask known from fileio_set_umask() cannot narrow the mode);
 * -EEXIST if something is there already: the caller replaces it with
 * write_file_atomic(). Readers see no file or the whole (empty) file. */
int create_empty_file(const char *path, mode_t mode);
/* Create if missing (mode), update timestamps; parents created 0755. */
int touch_file(const char *path, mode_t mode);
/* Read at most max bytes of a file into a new NUL-terminated buffer.
 * -EFBIG if larger than max. *ret_len excludes the NUL. */
int read_file_bounded(const char *path, size_t max, char **ret, size_t *ret_len);
/* Same for an open fd (borrowed, read from its current position). */
int read_fd_bounded(int fd, size_t max, char **ret, size_t *ret_len);
/* A file holding one unsigned decimal number and at most a newline after it
 * (/sys/kernel/uevent_seqnum): 0, -errno, -EINVAL for anything else (empty,
 * a sign, other bytes, over 31 bytes), -ERANGE if it does not fit. */
int read_uint64_file(const char *path, uint64_t *ret);
/* A directory stream over a duplicate of the directory fd `dfd` (borrowed;
 * the duplicate is O_CLOEXEC from the start and owned by the stream, rewound
 * to the beginning). NULL with errno set on failure. Free with closedir(). */
DIR *opendir_dup(int dfd);
