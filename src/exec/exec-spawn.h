/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: helper process (single-threaded callers only) */
#pragma once
/* Start one program the way udev starts PROGRAM/IMPORT{program}/RUN programs,
 * with clone(CLONE_VM | CLONE_VFORK | CLONE_PIDFD): no page tables are copied
 * (cost independent of the caller's size), and the pidfd comes with the pid.
 *
 * The child, between clone() and execve(), using raw system calls only:
 *   - becomes the leader of a new process group (timeouts signal the group);
 *   - gets PR_SET_PDEATHSIG (if the helper dies, its programs are told);
 *   - gets fd_in/fd_out/fd_err as 0/1/2; every other descriptor is marked
 *     close-on-exec (close_range), so the program sees only 0, 1 and 2;
 *   - gets the soft RLIMIT_NOFILE lowered to nofile_soft (if non-zero);
 *   - gets an empty signal mask (dispositions are already the defaults in the
 *     helper, which never installs handlers and resets ignored signals);
 *   - execs argv[0] with exactly envp as its environment.
 * The child shares the helper's memory until it execs, so an exec failure is
 * simply stored for the parent to read.
 *
 * glibc's own clone() is called, looked up in libc's scope: ThreadSanitizer
 * intercepts clone() as a fork and would re-initialise its state from inside
 * a child that shares our memory. The child function is not instrumented. */

#include <stddef.h>
#include <sys/resource.h>
#include <sys/types.h>

#define EXEC_SPAWN_STACK_SIZE (64 * 1024)

typedef int (*exec_clone_fn)(int (*fn)(void *), void *stack, int flags, void *arg, ...);

struct exec_spawner {
        exec_clone_fn clone;
        char *stack;          /* EXEC_SPAWN_STACK_SIZE bytes, for the child until it execs */
};

struct exec_spawn_params {
        char *const *argv;    /* argv[0]: absolute path */
        char *const *envp;    /* complete environment */
        int fd_in, fd_out, fd_err; /* borrowed; must all be >= 3 */
        rlim_t nofile_soft;   /* 0: keep */
        int death_signal;     /* 0: none */
};

/* 0 or -ENOMEM. */
int exec_spawner_init(struct exec_spawner *s);
void exec_spawner_deinit(struct exec_spawner *s);

/* Returns the child's pid (> 0) and its pidfd in *ret_pidfd (O_CLOEXEC, owned
 * by the caller), or -errno if it could not be started (the failed child has
 * then been reaped). */
pid_t exec_spawn(struct exec_spawner *s, const struct exec_spawn_params *p, int *ret_pidfd);
