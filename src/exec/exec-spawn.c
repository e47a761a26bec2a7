/* threads: helper process (single-threaded) */
#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec/exec-spawn.h"
#include "shared/macro.h"

/* Runs in the vfork()ed child, which shares the helper's memory until it
 * execs or exits: only system call wrappers here, no allocation, no return. */
static _noreturn_ void child_exec(const struct exec_spawn_params *p, int err_fd, pid_t parent)
{
        sigset_t none;
        int e;

        if (setpgid(0, 0) < 0)
                goto fail;
        if (p->death_signal > 0) {
                if (prctl(PR_SET_PDEATHSIG, p->death_signal) < 0)
                        goto fail;
                if (getppid() != parent) { /* the helper died before prctl() */
                        errno = ESRCH;
                        goto fail;
                }
        }
        if (dup2(p->fd_in, STDIN_FILENO) < 0 || dup2(p->fd_out, STDOUT_FILENO) < 0 ||
            dup2(p->fd_err, STDERR_FILENO) < 0)
                goto fail;
        /* Everything is O_CLOEXEC already; this also covers descriptors some
         * library might have opened without it. err_fd stays open until exec. */
        (void)close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
        if (p->nofile_soft > 0) {
                struct rlimit rl;
                if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur > p->nofile_soft) {
                        rl.rlim_cur = p->nofile_soft;
                        (void)setrlimit(RLIMIT_NOFILE, &rl);
                }
        }
        sigemptyset(&none);
        if (sigprocmask(SIG_SETMASK, &none, NULL) < 0)
                goto fail;
        execve(p->argv[0], p->argv, p->envp);
fail:
        e = errno;
        ssize_t _unused_ w = write(err_fd, &e, sizeof(e));
        _exit(127);
}

pid_t exec_spawn(const struct exec_spawn_params *p)
{
        int err_pipe[2], e = 0;
        pid_t parent = getpid(), pid;
        ssize_t n;

        if (p->fd_in < 3 || p->fd_out < 3 || p->fd_err < 3)
                return -EBADF;
        if (pipe2(err_pipe, O_CLOEXEC) < 0)
                return -errno;

        pid = vfork();
        if (pid == 0)
                child_exec(p, err_pipe[1], parent);
        if (pid < 0)
                e = errno;
        safe_close(err_pipe[1]);
        if (pid < 0) {
                safe_close(err_pipe[0]);
                return -e;
        }
        /* EOF: the exec succeeded (or the child died before it could say). */
        do
                n = read(err_pipe[0], &e, sizeof(e));
        while (n < 0 && errno == EINTR);
        safe_close(err_pipe[0]);
        if (n != (ssize_t)sizeof(e))
                return pid;
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                ;
        return e > 0 ? -e : -EIO;
}
