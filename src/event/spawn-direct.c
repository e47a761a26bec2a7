/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (no shared state; each call owns its child and pipes) */
/* A struct udev_spawner that runs PROGRAM / IMPORT{program} / RUN commands
 * directly with posix_spawn() from the calling thread, as systemd-udevd
 * spawns them:
 *
 *   - argv split like systemd (quotes group, backslashes kept), a name
 *     without '/' is looked up in UDEV_LIBEXEC_DIR, no $PATH search;
 *   - environment = exactly the envp given (the device's properties);
 *   - stdin /dev/null, stdout and stderr pipes (stdout captured up to
 *     out_size - 1 bytes, the rest drained and flagged as truncated; both
 *     logged at debug level line by line), every other fd closed
 *     (closefrom), signal mask empty and dispositions default, own process
 *     group;
 *   - deadline: warning at a third of the remaining time, at the deadline
 *     the process group gets timeout_signal + SIGCONT.
 * Not done (posix_spawn cannot): PR_SET_PDEATHSIG and the RLIMIT_NOFILE
 * reset; the exec helper (src/exec) will do those. */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "event/spawn-direct.h"
#include "event/event-format.h"
#include "shared/compat.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "shared/time-util.h"

#define SPAWN_CMD_MAX 16384
#define SPAWN_ARGV_MAX 256
#define SPAWN_LOG_LINE_MAX 1024
#define SPAWN_KILL_GRACE_USEC (5 * USEC_PER_SEC)
#define SPAWN_DRAIN_MAX (4 * 1024 * 1024) /* bytes read per pipe before closing it */

/* Collects output of one pipe; logs complete lines at debug level. */
struct pipe_reader {
        int fd;
        const char *what; /* "out" / "err" */
        char *buf;        /* capture buffer or NULL */
        size_t size, len;
        size_t total;     /* bytes read, kept or not */
        bool truncated;
        char line[SPAWN_LOG_LINE_MAX];
        size_t line_len;
};

static void reader_log_line(struct pipe_reader *pr, const char *cmd)
{
        if (pr->line_len == 0)
                return;
        pr->line[pr->line_len] = '\0';
        log_debug("'%s'(%s) '%s'", cmd, pr->what, pr->line);
        pr->line_len = 0;
}

static void reader_close(struct pipe_reader *pr, const char *cmd)
{
        reader_log_line(pr, cmd);
        pr->fd = safe_close(pr->fd);
}

/* Read one chunk: 1 if one was read, 0 if the pipe is empty for now, -1 at
 * EOF/error or once SPAWN_DRAIN_MAX bytes were read (fd closed then: a
 * program that writes more gets EPIPE). */
static int reader_read(struct pipe_reader *pr, const char *cmd)
{
        char chunk[4096];
        ssize_t n;

        if (pr->fd < 0)
                return -1;
        n = read(pr->fd, chunk, sizeof(chunk));
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return 0;
        if (n <= 0) {
                reader_close(pr, cmd);
                return -1;
        }
        if (pr->buf) {
                size_t room = pr->size - 1 - pr->len;
                size_t take = MIN((size_t)n, room);
                memcpy(pr->buf + pr->len, chunk, take);
                pr->len += take;
                pr->buf[pr->len] = '\0';
                if (take < (size_t)n)
                        pr->truncated = true;
        }
        if (log_get_max_level() >= LOG_DEBUG)
                for (ssize_t i = 0; i < n; i++) {
                        if (chunk[i] == '\n' || pr->line_len + 1 >= sizeof(pr->line)) {
                                reader_log_line(pr, cmd);
                                if (chunk[i] == '\n')
                                        continue;
                        }
                        pr->line[pr->line_len++] = chunk[i];
                }
        pr->total += (size_t)n;
        if (pr->total >= SPAWN_DRAIN_MAX) {
                pr->truncated = pr->truncated || pr->buf != NULL;
                reader_close(pr, cmd);
                return -1;
        }
        return 1;
}

static int pidfd_open_compat(pid_t pid)
{
#ifdef SYS_pidfd_open
        return (int)syscall(SYS_pidfd_open, pid, 0);
#else
        errno = ENOSYS;
        return -1;
#endif
}

static void kill_group(pid_t pid, int sig)
{
        if (kill(-pid, sig) < 0)
                (void)kill(pid, sig);
        if (sig != SIGCONT && sig != SIGKILL) {
                if (kill(-pid, SIGCONT) < 0)
                        (void)kill(pid, SIGCONT);
        }
}

static int exit_code(int status)
{
        if (WIFEXITED(status))
                return WEXITSTATUS(status);
        if (WIFSIGNALED(status))
                return 128 + WTERMSIG(status);
        return 255;
}

static void sleep_usec(uint64_t usec)
{
        struct timespec ts = { .tv_sec = (time_t)(usec / USEC_PER_SEC),
                               .tv_nsec = (long)(usec % USEC_PER_SEC * NSEC_PER_USEC) };
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

/* stdin for the child: /dev/null, or an empty pipe if there is no /dev/null. */
static int open_stdin(void)
{
        int fd = open("/dev/null", O_RDONLY | O_CLOEXEC | O_NOCTTY);
        int p[2];

        if (fd >= 0)
                return fd;
        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        safe_close(p[1]);
        return p[0];
}

static int start_child(char *argv[], char *const envp[], int out_w, int err_w, pid_t *ret)
{
        _cleanup_close_ int in = open_stdin();
        posix_spawn_file_actions_t fa;
        posix_spawnattr_t attr;
        sigset_t none, all;
        int r;

        if (in < 0)
                return in;
        sigemptyset(&none);
        sigfillset(&all);
        posix_spawn_file_actions_init(&fa);
        posix_spawnattr_init(&attr);
        posix_spawn_file_actions_adddup2(&fa, in, STDIN_FILENO);
        posix_spawn_file_actions_adddup2(&fa, out_w, STDOUT_FILENO);
        posix_spawn_file_actions_adddup2(&fa, err_w, STDERR_FILENO);
        spawn_close_from(&fa, 3);
        posix_spawnattr_setsigmask(&attr, &none);
        posix_spawnattr_setsigdefault(&attr, &all);
        posix_spawnattr_setpgroup(&attr, 0);
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
                                                POSIX_SPAWN_SETPGROUP);
        r = posix_spawn(ret, argv[0], &fa, &attr, argv, envp);
        posix_spawn_file_actions_destroy(&fa);
        posix_spawnattr_destroy(&attr);
        return -r;
}

/* Wait for the child, reading its pipes, enforcing the deadline. Once it has
 * exited, what is left in the pipes is read and the pipes are closed, as
 * systemd-udevd does: a background process that inherited them cannot hold
 * the event. */
static int supervise(const char *cmd, pid_t pid, struct pipe_reader *rd, uint64_t deadline,
                     int timeout_signal)
{
        _cleanup_close_ int pidfd = pidfd_open_compat(pid);
        uint64_t start = now_usec(CLOCK_MONOTONIC);
        uint64_t warn_at = deadline == UINT64_MAX || deadline <= start
                                   ? UINT64_MAX
                                   : start + (deadline - start) / 3;
        uint64_t kill_deadline = UINT64_MAX;
        bool exited = false, killed = false;
        int status = 0;

        while (!exited) {
                struct pollfd p[3];
                nfds_t n = 0;
                int idx[3] = { -1, -1, -1 };
                uint64_t now = now_usec(CLOCK_MONOTONIC), next = UINT64_MAX;
                int timeout_ms;

                if (!killed && deadline != UINT64_MAX && now >= deadline) {
                        log_error("Spawned process '%s' [%d] timed out after %.1f s, killing", cmd,
                                  (int)pid, (double)(now - start) / 1e6);
                        kill_group(pid, timeout_signal);
                        killed = true;
                        kill_deadline = now + SPAWN_KILL_GRACE_USEC;
                }
                if (warn_at != UINT64_MAX && now >= warn_at) {
                        log_warning("Spawned process '%s' [%d] is taking longer than %.1f s to "
                                    "complete", cmd, (int)pid, (double)(now - start) / 1e6);
                        warn_at = UINT64_MAX;
                }
                if (killed && now >= kill_deadline) {
                        /* pipes held open by a grandchild: stop reading */
                        kill_group(pid, SIGKILL);
                        for (int i = 0; i < 2; i++)
                                rd[i].fd = safe_close(rd[i].fd);
                        if (exited)
                                break;
                        kill_deadline = UINT64_MAX;
                }
                for (int i = 0; i < 2; i++)
                        if (rd[i].fd >= 0) {
                                p[n] = (struct pollfd){ .fd = rd[i].fd, .events = POLLIN };
                                idx[n++] = i;
                        }
                if (!exited && pidfd >= 0)
                        p[n++] = (struct pollfd){ .fd = pidfd, .events = POLLIN };
                if (!killed && deadline != UINT64_MAX)
                        next = deadline;
                if (warn_at < next)
                        next = warn_at;
                if (kill_deadline < next)
                        next = kill_deadline;
                if (!exited && pidfd < 0 && next > now + 100 * USEC_PER_MSEC)
                        next = now + 100 * USEC_PER_MSEC; /* no pidfd: poll waitpid */
                timeout_ms = next == UINT64_MAX ? -1
                             : next <= now      ? 0
                                                : (int)MIN((next - now + 999) / 1000, 60000u);
                if (poll(p, n, timeout_ms) < 0 && errno != EINTR)
                        return log_error_errno(errno, "poll() failed for '%s': %m", cmd);
                for (nfds_t i = 0; i < n; i++) {
                        if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
                                continue;
                        if (idx[i] >= 0)
                                while (reader_read(&rd[idx[i]], cmd) > 0 &&
                                       (p[i].revents & POLLHUP))
                                        ;
                }
                if (!exited) {
                        pid_t w = waitpid(pid, &status, WNOHANG);
                        if (w == pid)
                                exited = true;
                        else if (w < 0 && errno != EINTR)
                                return log_error_errno(errno, "waitpid() failed: %m");
                }
        }
        for (int i = 0; i < 2; i++) {
                while (reader_read(&rd[i], cmd) > 0)
                        ;
                if (rd[i].fd >= 0)
                        reader_close(&rd[i], cmd);
        }
        if (killed)
                return -ETIME;
        return exit_code(status);
}

int spawn_direct(void *userdata, const char *cmd, char *const envp[], bool is_run,
                 uint64_t deadline_usec, char *out, size_t out_size, bool *truncated)
{
        const struct spawn_direct *sd = userdata;
        char buf[SPAWN_CMD_MAX], prog[PATH_MAX];
        char *argv[SPAWN_ARGV_MAX + 1];
        int out_pipe[2] = { -1, -1 }, err_pipe[2] = { -1, -1 };
        struct pipe_reader rd[2];
        size_t argc;
        int r;
        pid_t pid;

        if (truncated)
                *truncated = false;
        if (out && out_size)
                out[0] = '\0';
        if (strlen(cmd) >= sizeof(buf))
                return -E2BIG;
        strcpy(buf, cmd);
        r = udev_split_cmdline(buf, argv, SPAWN_ARGV_MAX + 1, &argc);
        if (r == -EINVAL || (r >= 0 && argv[0][0] == '\0'))
                return log_error_errno(-EINVAL, "Invalid command '%s'", cmd);
        if (r < 0)
                return log_error_errno(r, "Failed to split command '%s': %m", cmd);
        if (argv[0][0] != '/') {
                int w = snprintf(prog, sizeof(prog), "%s/%s",
                                 sd && sd->libexec_dir ? sd->libexec_dir : UDEV_LIBEXEC_DIR,
                                 argv[0]);
                if (w < 0 || (size_t)w >= sizeof(prog))
                        return -ENAMETOOLONG;
                argv[0] = prog;
        }
        if (is_run && sd && sd->exec_delay_usec > 0) {
                log_debug("Delaying execution of \"%s\" for %.3f s.", cmd,
                          (double)sd->exec_delay_usec / 1e6);
                sleep_usec(sd->exec_delay_usec);
        }

        if (pipe2(out_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
                return log_error_errno(errno, "Failed to create pipe for command '%s': %m", cmd);
        if (pipe2(err_pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
                r = log_error_errno(errno, "Failed to create pipe for command '%s': %m", cmd);
                safe_close(out_pipe[0]);
                safe_close(out_pipe[1]);
                return r;
        }
        log_debug("Starting '%s'", cmd);
        r = start_child(argv, envp, out_pipe[1], err_pipe[1], &pid);
        safe_close(out_pipe[1]);
        safe_close(err_pipe[1]);
        if (r < 0) {
                safe_close(out_pipe[0]);
                safe_close(err_pipe[0]);
                return log_debug_errno(r, "Failed to execute '%s': %m", cmd);
        }
        rd[0] = (struct pipe_reader){ .fd = out_pipe[0], .what = "out", .buf = out,
                                      .size = out ? out_size : 0 };
        rd[1] = (struct pipe_reader){ .fd = err_pipe[0], .what = "err" };
        if (out && out_size == 0)
                rd[0].buf = NULL;
        r = supervise(cmd, pid, rd, deadline_usec,
                      sd && sd->timeout_signal > 0 ? sd->timeout_signal : SIGKILL);
        safe_close(rd[0].fd);
        safe_close(rd[1].fd);
        if (truncated)
                *truncated = rd[0].truncated;
        if (r == 0)
                log_debug("Process '%s' succeeded.", cmd);
        else if (r > 0)
                log_debug("Process '%s' failed with exit code %d.", cmd, r);
        return r;
}
