/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: helper process (single-threaded) */
#include <dlfcn.h>
#include <errno.h>
#include <linux/close_range.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec/exec-spawn.h"
#include "shared/macro.h"

#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif

#define _no_sanitize_ __attribute__((no_sanitize("address", "thread", "undefined"), noinline))

struct child_args {
        const struct exec_spawn_params *p;
        pid_t parent;
        volatile int err; /* set by the child if it could not exec */
};

struct rlimit64_k {
        uint64_t cur, max;
};

/* Runs in the child, on s->stack, sharing the helper's memory until execve():
 * no allocation, no libc state, no instrumentation; only syscall(). */
static _no_sanitize_ int child_main(void *userdata)
{
        struct child_args *a = userdata;
        const struct exec_spawn_params *p = a->p;
        uint64_t empty_mask = 0;

        if (syscall(SYS_setpgid, 0, 0) < 0)
                goto fail;
        if (p->death_signal > 0) {
                if (syscall(SYS_prctl, PR_SET_PDEATHSIG, p->death_signal, 0, 0, 0) < 0)
                        goto fail;
                if (syscall(SYS_getppid) != a->parent) { /* the helper died before prctl() */
                        errno = ESRCH;
                        goto fail;
                }
        }
        /* All three are >= 3, so dup3() never sees equal descriptors. */
        if (syscall(SYS_dup3, p->fd_in, STDIN_FILENO, 0) < 0 ||
            syscall(SYS_dup3, p->fd_out, STDOUT_FILENO, 0) < 0 ||
            syscall(SYS_dup3, p->fd_err, STDERR_FILENO, 0) < 0)
                goto fail;
        /* Everything is O_CLOEXEC already; this also covers descriptors a
         * library might have opened without it. */
        (void)syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC);
        if (p->nofile_soft > 0) {
                struct rlimit64_k rl;
                if (syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &rl) == 0 &&
                    rl.cur > p->nofile_soft) {
                        rl.cur = p->nofile_soft;
                        (void)syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, &rl, NULL);
                }
        }
        if (syscall(SYS_rt_sigprocmask, SIG_SETMASK, &empty_mask, NULL, sizeof(empty_mask)) < 0)
                goto fail;
        syscall(SYS_execve, p->argv[0], p->argv, p->envp);
fail:
        a->err = errno > 0 ? errno : EIO;
        syscall(SYS_exit, 127);
        return 127;
}

int exec_spawner_init(struct exec_spawner *s)
{
        void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);

        s->clone = libc ? (exec_clone_fn)dlsym(libc, "clone") : NULL;
        if (!s->clone)
                s->clone = clone;
        s->stack = aligned_alloc(64, EXEC_SPAWN_STACK_SIZE);
        return s->stack ? 0 : -ENOMEM;
}

void exec_spawner_deinit(struct exec_spawner *s)
{
        free(s->stack);
        s->stack = NULL;
}

pid_t exec_spawn(struct exec_spawner *s, const struct exec_spawn_params *p, int *ret_pidfd)
{
        struct child_args a = { .p = p, .parent = getpid() };
        int pidfd = -1;
        pid_t pid;

        if (p->fd_in < 3 || p->fd_out < 3 || p->fd_err < 3)
                return -EBADF;
        /* The stack grows down: pass its top. The parent sleeps until the
         * child has exec'd or exited (CLONE_VFORK), so one stack is enough. */
        pid = s->clone(child_main, s->stack + EXEC_SPAWN_STACK_SIZE,
                       CLONE_VM | CLONE_VFORK | CLONE_PIDFD | SIGCHLD, &a, &pidfd);
        if (pid < 0)
                return -errno;
        if (a.err == 0) {
                *ret_pidfd = pidfd;
                return pid;
        }
        siginfo_t si;
        while (waitid((idtype_t)P_PIDFD, (id_t)pidfd, &si, WEXITED) < 0 && errno == EINTR)
                ;
        safe_close(pidfd);
        return -a.err;
}
