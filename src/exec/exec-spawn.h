/* threads: helper process (single-threaded callers only: uses vfork) */
#pragma once
/* Start one program the way udev starts PROGRAM/IMPORT{program}/RUN programs.
 *
 * The child, between vfork() and execve():
 *   - becomes the leader of a new process group (timeouts signal the group);
 *   - gets PR_SET_PDEATHSIG (if the helper dies, its programs are told);
 *   - gets fd_in/fd_out/fd_err as 0/1/2; every other descriptor is marked
 *     close-on-exec (close_range), so the program sees only 0, 1 and 2;
 *   - gets the soft RLIMIT_NOFILE lowered to nofile_soft (if non-zero);
 *   - gets an empty signal mask (dispositions are already the defaults in the
 *     helper, which never installs handlers or ignores signals);
 *   - execs argv[0] with exactly envp as its environment.
 * An exec failure is reported through a close-on-exec pipe, which also works
 * where vfork() behaves like fork() (ThreadSanitizer builds). */

#include <sys/resource.h>
#include <sys/types.h>

struct exec_spawn_params {
        char *const *argv;    /* argv[0]: absolute path */
        char *const *envp;    /* complete environment */
        int fd_in, fd_out, fd_err; /* borrowed; must all be >= 3 */
        rlim_t nofile_soft;   /* 0: keep */
        int death_signal;     /* 0: none */
};

/* Returns the child's pid (> 0), or -errno if it could not be started (the
 * failed child has then been reaped). */
pid_t exec_spawn(const struct exec_spawn_params *p);
