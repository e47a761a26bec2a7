/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any */
#pragma once
/* The C library functions tudev needs that only glibc has, under names that
 * say what they do. Where configure found the C library's own function
 * (-DHAVE_... in LIBC_DEFS, config.mk) the name calls exactly that function,
 * so a glibc build behaves as if it called it directly. Elsewhere (musl:
 * Alpine, Void) the name is tudev's fallback in compat.c, described with each
 * name below. The fallbacks are *_portable(); all but error_message's (which
 * needs POSIX's strerror_r()) are compiled on every C library, so that
 * test-compat.c compares them with glibc's functions where both exist.
 * `make check-musl` builds tudev against musl (docs/portability.md). */

#include <spawn.h>
#include <stddef.h>
#include <string.h>
#if defined(HAVE_MALLOPT_ARENA_MAX) || defined(HAVE_MALLOC_TRIM)
#include <malloc.h>
#endif

/* The abbreviation of signal `sig` without "SIG" ("TERM" for SIGTERM), or
 * NULL for a number that is not one of the standard signals (real-time
 * signals included): glibc's sigabbrev_np(). The fallback has a table of the
 * standard signals of Linux with glibc's names (SIGIO, alias SIGPOLL, is
 * "POLL" as there). Static strings. */
const char *signal_abbrev_portable(int sig);
static inline const char *signal_abbrev(int sig)
{
#ifdef HAVE_SIGABBREV_NP
        return sigabbrev_np(sig);
#else
        return signal_abbrev_portable(sig);
#endif
}

/* The symbolic name of errno value `err` ("ENOENT"), "0" for 0, NULL for a
 * value that is no errno (negative ones included): glibc's strerrorname_np().
 * The fallback has a table of every errno value of Linux, with glibc's name
 * where two names share a value (EAGAIN, not EWOULDBLOCK; EOPNOTSUPP, not
 * ENOTSUP; EDEADLK, not EDEADLOCK). Static strings. */
const char *errno_name_portable(int err);
static inline const char *errno_name(int err)
{
#ifdef HAVE_STRERRORNAME_NP
        return strerrorname_np(err);
#else
        return errno_name_portable(err);
#endif
}

/* The message of errno value `err` ("No such file or directory"), never
 * NULL: glibc's strerror_r() of _GNU_SOURCE, which returns a static string or
 * fills buf. The fallback calls POSIX's strerror_r() (musl's) into buf, which
 * it returns; "Unknown error N" for a value the C library rejects (musl's
 * messages are its own, often worded unlike glibc's). */
#ifndef HAVE_STRERROR_R_CHAR_P
const char *error_message_portable(int err, char *buf, size_t size);
#endif
static inline const char *error_message(int err, char *buf, size_t size)
{
#ifdef HAVE_STRERROR_R_CHAR_P
        return strerror_r(err, buf, size);
#else
        return error_message_portable(err, buf, size);
#endif
}

/* Let no descriptor >= lowfd reach the program that posix_spawn() starts with
 * `fa`, other than those fa's own actions put there (dup2, open): glibc's
 * posix_spawn_file_actions_addclosefrom_np(fa, lowfd). Returns 0 or a
 * positive errno, as the posix_spawn_file_actions_*() it is chained with.
 *
 * The fallback adds nothing to fa: it marks every descriptor >= lowfd of this
 * process close-on-exec now (close_range(CLOSE_RANGE_CLOEXEC), Linux 5.11;
 * where that fails it does nothing) and returns 0. That is enough because
 * every descriptor tudev opens is O_CLOEXEC already (open, socket, pipe2,
 * accept4, epoll, eventfd, signalfd, timerfd, inotify; each spawn site's
 * descriptors for the child go through a dup2 action, which drops the flag in
 * the child only): the call only catches descriptors tudev did not open, those
 * inherited from whoever started it or left by a library without O_CLOEXEC.
 * Marking them changes nothing in this process, which never passes
 * descriptors across an exec of its own. The callers (spawn_helper() in
 * exec/exec-client.c, start_child() in rules/spawn-direct.c, the prober pool
 * in builtins/blkid.c) call it while building fa for posix_spawn(). */
int spawn_close_from_portable(posix_spawn_file_actions_t *fa, int lowfd);
static inline int spawn_close_from(posix_spawn_file_actions_t *fa, int lowfd)
{
#ifdef HAVE_POSIX_SPAWN_FILE_ACTIONS_ADDCLOSEFROM_NP
        return posix_spawn_file_actions_addclosefrom_np(fa, lowfd);
#else
        return spawn_close_from_portable(fa, lowfd);
#endif
}

/* Use at most n malloc arenas (call before any thread starts): glibc's
 * mallopt(M_ARENA_MAX, n), whose default is one arena per thread up to 8 per
 * CPU. Elsewhere nothing: musl's malloc has no per-thread arenas. */
static inline void malloc_limit_arenas(int n)
{
#ifdef HAVE_MALLOPT_ARENA_MAX
        (void)mallopt(M_ARENA_MAX, n);
#else
        (void)n;
#endif
}

/* Give the heap's free memory back to the kernel: glibc's malloc_trim(0).
 * Elsewhere nothing: musl's malloc (mallocng) unmaps freed memory itself. */
static inline void malloc_release_free(void)
{
#ifdef HAVE_MALLOC_TRIM
        (void)malloc_trim(0);
#endif
}
