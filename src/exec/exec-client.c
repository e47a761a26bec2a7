/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (see exec-client.h) */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exec/exec-client.h"
#include "exec/exec-helper.h"
#include "exec/exec-msg.h"
#include "shared/compat.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "shared/time-util.h"

#define HELPER_EXIT_WAIT_USEC (2 * USEC_PER_SEC)  /* for a helper whose socket is gone */
#define HELPER_RESTART_BURST 5                    /* restarts per second from the loop */
#define STREAM_READS_PER_WAKEUP 16

/* One helper process. refs: the client's (while current) + one per sender. */
struct helper_proc {
        unsigned refs;  /* protected by the client's lock */
        int sock;       /* our end of the request socket */
        int pidfd;      /* open until the last reference goes */
        pid_t pid;
};

struct exec_client {
        pthread_mutex_t lock;            /* protects helper, restart_times */
        struct helper_proc *helper;      /* current helper, NULL if none runs */
        uint64_t restart_times[HELPER_RESTART_BURST];
        int watch_fd;                    /* epoll set holding helper->pidfd */
        int devnull;                     /* stdin, and stdout/stderr nobody reads */
        struct exec_client_config cfg;   /* immutable */
        _Atomic uint64_t next_id;
        _Atomic unsigned starts;
};

/* ---- the helper process ---- */

static int pidfd_open(pid_t pid)
{
        return (int)syscall(SYS_pidfd_open, pid, 0);
}

static void helper_unref_locked(struct helper_proc *h)
{
        if (--h->refs > 0)
                return;
        safe_close(h->sock);
        safe_close(h->pidfd);
        free(h);
}

static int spawn_helper(struct exec_client *c, int helper_end, pid_t *ret_pid)
{
        posix_spawn_file_actions_t fa;
        posix_spawnattr_t attr;
        char fd_arg[32], log_arg[48], limit_arg[64];
        sigset_t all;
        int r;

        snprintf(fd_arg, sizeof(fd_arg), EXEC_HELPER_ARG "%d", EXEC_HELPER_FD);
        snprintf(log_arg, sizeof(log_arg), EXEC_HELPER_LOG_ARG "%d", c->cfg.helper_log_level);
        snprintf(limit_arg, sizeof(limit_arg), EXEC_HELPER_LIMIT_ARG "%u",
                 c->cfg.program_limit);
        char *argv[] = { (char *)EXEC_HELPER_COMM, fd_arg, log_arg, limit_arg, NULL };

        sigfillset(&all);
        posix_spawn_file_actions_init(&fa);
        posix_spawnattr_init(&attr);
        r = posix_spawn_file_actions_adddup2(&fa, helper_end, EXEC_HELPER_FD);
        if (r == 0)
                r = spawn_close_from(&fa, EXEC_HELPER_FD + 1);
        if (r == 0)
                r = posix_spawnattr_setsigmask(&attr, &all);
        if (r == 0)
                r = posix_spawnattr_setsigdefault(&attr, &all);
        if (r == 0)
                r = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
        if (r == 0)
                r = posix_spawn(ret_pid, c->cfg.helper_path, &fa, &attr, argv, environ);
        posix_spawnattr_destroy(&attr);
        posix_spawn_file_actions_destroy(&fa);
        return -r;
}

static bool restart_allowed_locked(struct exec_client *c, uint64_t now)
{
        /* The oldest of the last HELPER_RESTART_BURST starts was over 1 s ago. */
        return now - c->restart_times[0] >= USEC_PER_SEC;
}

static void note_start_locked(struct exec_client *c, uint64_t now)
{
        memmove(c->restart_times, c->restart_times + 1,
                sizeof(c->restart_times) - sizeof(c->restart_times[0]));
        c->restart_times[HELPER_RESTART_BURST - 1] = now;
}

static int helper_start_locked(struct exec_client *c)
{
        struct helper_proc *h;
        int sv[2], r, bufsize = 2 * (int)EXEC_MSG_MAX;
        pid_t pid;

        h = calloc(1, sizeof(*h));
        if (!h)
                return -ENOMEM;
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
                r = -errno;
                free(h);
                return r;
        }
        /* Room for a few maximal requests (best effort; the default fits one). */
        (void)setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &bufsize, sizeof(bufsize));
        if (sv[1] == EXEC_HELPER_FD) {
                /* dup2(3, 3) would keep O_CLOEXEC: move it out of the way. */
                int fd = fcntl(sv[1], F_DUPFD_CLOEXEC, EXEC_HELPER_FD + 1);
                safe_close(sv[1]);
                sv[1] = fd;
        }
        r = sv[1] < 0 ? -EMFILE : spawn_helper(c, sv[1], &pid);
        safe_close(sv[1]);
        if (r < 0) {
                safe_close(sv[0]);
                free(h);
                return r;
        }
        h->refs = 1;
        h->sock = sv[0];
        h->pid = pid;
        h->pidfd = pidfd_open(pid);
        struct epoll_event ev = { .events = EPOLLIN };
        if (h->pidfd < 0 || epoll_ctl(c->watch_fd, EPOLL_CTL_ADD, h->pidfd, &ev) < 0) {
                r = -errno;
                (void)kill(pid, SIGKILL);
                while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                        ;
                helper_unref_locked(h);
                return r;
        }
        c->helper = h;
        note_start_locked(c, now_usec(CLOCK_MONOTONIC));
        atomic_fetch_add(&c->starts, 1);
        log_debug("exec helper [%d] started", (int)pid);
        return 0;
}

static bool pidfd_exited(int pidfd, int timeout_ms)
{
        struct pollfd p = { .fd = pidfd, .events = POLLIN };
        return poll(&p, 1, timeout_ms) > 0;
}

static void describe_wait(const siginfo_t *si, char *buf, size_t size)
{
        if (si->si_code == CLD_EXITED)
                snprintf(buf, size, "exited with status %d", si->si_status);
        else
                snprintf(buf, size, "killed by signal SIG%s",
                         signal_abbrev(si->si_status) ?: "?");
}

/* Reap the current helper h (it exited, or its socket is dead: then wait up
 * to wait_usec and kill it), and forget it. */
static void helper_reap_locked(struct exec_client *c, struct helper_proc *h, uint64_t wait_usec,
                               bool closing)
{
        siginfo_t si = { 0 };
        char what[64];

        if (!pidfd_exited(h->pidfd, (int)(wait_usec / USEC_PER_MSEC))) {
                if (!closing)
                        log_error("exec helper [%d] does not answer; killing it", (int)h->pid);
                (void)syscall(SYS_pidfd_send_signal, h->pidfd, SIGKILL, NULL, 0);
        }
        while (waitid((idtype_t)P_PIDFD, (id_t)h->pidfd, &si, WEXITED) < 0 && errno == EINTR)
                ;
        describe_wait(&si, what, sizeof(what));
        if (closing)
                log_debug("exec helper [%d] %s", (int)h->pid, what);
        else
                log_error("exec helper [%d] died (%s); programs it was running are lost, "
                          "their requests fail", (int)h->pid, what);
        (void)epoll_ctl(c->watch_fd, EPOLL_CTL_DEL, h->pidfd, NULL);
        c->helper = NULL;
        helper_unref_locked(h); /* the pidfd stays open while senders hold h */
}

/* Take a reference on the current helper, starting one if none runs. */
static int helper_get(struct exec_client *c, struct helper_proc **ret)
{
        int r = 0;

        pthread_mutex_lock(&c->lock);
        if (!c->helper) {
                r = helper_start_locked(c);
                if (r < 0)
                        log_error_errno(r, "Failed to start the exec helper: %m");
        }
        if (r >= 0) {
                c->helper->refs++;
                *ret = c->helper;
        }
        pthread_mutex_unlock(&c->lock);
        return r;
}

static void helper_put(struct exec_client *c, struct helper_proc *h)
{
        pthread_mutex_lock(&c->lock);
        helper_unref_locked(h);
        pthread_mutex_unlock(&c->lock);
}

/* h looks dead: its request socket or a reply socket hung up. Once it has
 * exited (waiting up to wait_usec for that; a helper whose request socket is
 * gone but which does not exit is killed if `kill_if_alive`), reap it and
 * start a new one, unless another thread did already. */
static void helper_replace(struct exec_client *c, struct helper_proc *h, uint64_t wait_usec,
                           bool kill_if_alive)
{
        /* Outside the lock: h (and its pidfd) stay valid while we hold a reference. */
        bool exited = pidfd_exited(h->pidfd, (int)(wait_usec / USEC_PER_MSEC));

        if (!exited && !kill_if_alive)
                return;
        pthread_mutex_lock(&c->lock);
        if (c->helper == h) {
                helper_reap_locked(c, h, 0, false);
                int r = helper_start_locked(c);
                if (r < 0)
                        log_error_errno(r, "Failed to restart the exec helper: %m");
                else
                        log_info("exec helper restarted as [%d]", (int)c->helper->pid);
        }
        pthread_mutex_unlock(&c->lock);
}

int exec_client_process(struct exec_client *c)
{
        int r = 0;

        pthread_mutex_lock(&c->lock);
        struct helper_proc *h = c->helper;
        bool dead = h && pidfd_exited(h->pidfd, 0);
        if (dead)
                helper_reap_locked(c, h, 0, false);
        /* also: none since a restart was held back (the manager's timer comes
         * by every second, so a helper is back before the next request) */
        if (dead || !c->helper) {
                if (!restart_allowed_locked(c, now_usec(CLOCK_MONOTONIC))) {
                        if (dead)
                                log_error("exec helper keeps dying; restarting it within a "
                                          "second or on the next request");
                } else {
                        r = helper_start_locked(c);
                        if (r < 0)
                                log_error_errno(r, "Failed to restart the exec helper: %m");
                        else {
                                log_info("exec helper restarted as [%d]", (int)c->helper->pid);
                                r = 1;
                        }
                }
        }
        pthread_mutex_unlock(&c->lock);
        return r;
}

int exec_client_get_fd(struct exec_client *c) { return c->watch_fd; }

pid_t exec_client_helper_pid(struct exec_client *c)
{
        pthread_mutex_lock(&c->lock);
        pid_t pid = c->helper ? c->helper->pid : 0;
        pthread_mutex_unlock(&c->lock);
        return pid;
}

unsigned exec_client_helper_starts(struct exec_client *c) { return atomic_load(&c->starts); }

int exec_client_new(const struct exec_client_config *cfg, struct exec_client **ret)
{
        struct exec_client *c;
        int r;

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        pthread_mutex_init(&c->lock, NULL);
        c->cfg = *cfg;
        if (!c->cfg.helper_path)
                c->cfg.helper_path = EXEC_HELPER_PATH_DEFAULT;
        if (c->cfg.timeout_signal <= 0 || c->cfg.timeout_signal >= NSIG)
                c->cfg.timeout_signal = SIGTERM;
        if (c->cfg.timeout_usec == 0)
                c->cfg.timeout_usec = EXEC_TIMEOUT_DEFAULT_USEC;
        if (c->cfg.kill_grace_usec == 0 || c->cfg.kill_grace_usec > EXEC_KILL_GRACE_MAX_USEC)
                c->cfg.kill_grace_usec = EXEC_KILL_GRACE_DEFAULT_USEC;
        if (c->cfg.helper_log_level <= 0)
                c->cfg.helper_log_level = LOG_INFO;
        atomic_init(&c->next_id, 1);
        c->watch_fd = epoll_create1(EPOLL_CLOEXEC);
        c->devnull = open("/dev/null", O_RDWR | O_CLOEXEC | O_NOCTTY);
        if (c->watch_fd < 0 || c->devnull < 0) {
                r = -errno;
                goto fail;
        }
        pthread_mutex_lock(&c->lock);
        r = helper_start_locked(c);
        pthread_mutex_unlock(&c->lock);
        if (r < 0)
                goto fail;
        *ret = c;
        return 0;
fail:
        exec_client_free(c);
        return r;
}

void exec_client_free(struct exec_client *c)
{
        if (!c)
                return;
        pthread_mutex_lock(&c->lock);
        struct helper_proc *h = c->helper;
        if (h) {
                /* End of stream: the helper stops its programs and exits. */
                (void)shutdown(h->sock, SHUT_RDWR);
                helper_reap_locked(c, h, HELPER_EXIT_WAIT_USEC, true);
        }
        pthread_mutex_unlock(&c->lock);
        safe_close(c->watch_fd);
        safe_close(c->devnull);
        pthread_mutex_destroy(&c->lock);
        free(c);
}

/* ---- one request ---- */

struct stream {
        int fd;           /* our read end; -1 once closed */
        char *buf;        /* borrowed; NULL: nothing captured */
        size_t size;
        size_t len;
        size_t total;     /* bytes read, kept or not */
        bool truncated;
};

static void stream_close(struct stream *s) { s->fd = safe_close(s->fd); }

/* Read what is there. Returns >0 if more may be waiting, 0 if the pipe is
 * empty, <0 once it is closed (EOF, error, or EXEC_DRAIN_MAX reached). */
static int stream_read(struct stream *s)
{
        char scratch[4096];

        if (s->fd < 0)
                return -1;
        for (unsigned i = 0; i < STREAM_READS_PER_WAKEUP; i++) {
                bool keep = s->buf && s->len + 1 < s->size;
                char *p = keep ? s->buf + s->len : scratch;
                size_t n = keep ? s->size - 1 - s->len : sizeof(scratch);
                ssize_t k = read(s->fd, p, n);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0 && errno == EAGAIN)
                        return 0;
                if (k <= 0) {
                        stream_close(s);
                        return -1;
                }
                if (keep) {
                        s->len += (size_t)k;
                        s->buf[s->len] = '\0';
                } else {
                        s->truncated = true;
                }
                s->total += (size_t)k;
                if (s->total >= EXEC_DRAIN_MAX) {
                        s->truncated = true;
                        stream_close(s); /* the program gets EPIPE from now on */
                        return -1;
                }
        }
        return 1;
}

struct run {
        const struct exec_request *req;
        uint64_t id;
        uint64_t start, deadline, give_up;
        int timeout_signal;
        uint64_t kill_grace;
        struct helper_proc *helper; /* reference on the helper the request went to */
        int reply;               /* our end of the reply socket */
        struct stream out, err;
        struct exec_msg_reply rep;
};

static void run_close(struct run *run)
{
        run->reply = safe_close(run->reply);
        stream_close(&run->out);
        stream_close(&run->err);
}

/* A pipe for one output stream: our end non-blocking; the write end in *ret_w. */
static int stream_open(struct exec_client *c, struct stream *s, char *buf, size_t size,
                       int *ret_w)
{
        int p[2];

        s->fd = -1;
        s->buf = buf;
        s->size = size;
        if (!buf) {
                *ret_w = -1; /* /dev/null */
                return 0;
        }
        buf[0] = '\0';
        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        if (fcntl(p[0], F_SETFL, O_NONBLOCK) < 0) {
                int r = -errno;
                safe_close(p[0]);
                safe_close(p[1]);
                return r;
        }
        s->fd = p[0];
        *ret_w = p[1];
        return 0;
}

static int wait_writable(int fd, uint64_t until)
{
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        struct pollfd p = { .fd = fd, .events = POLLOUT };

        if (now >= until)
                return -ETIMEDOUT;
        uint64_t ms = (until - now + USEC_PER_MSEC - 1) / USEC_PER_MSEC;
        if (poll(&p, 1, (int)MIN(ms, (uint64_t)INT32_MAX)) < 0 && errno != EINTR)
                return -errno;
        return 0;
}

static bool is_dead_socket_error(int r)
{
        return r == -EPIPE || r == -ECONNREFUSED || r == -ECONNRESET || r == -ENOTCONN;
}

/* Send the request over the current helper's socket; on a dead socket the
 * helper is replaced and the request sent once more (it was not delivered).
 * On success run->helper holds a reference on the helper. */
static int run_send(struct exec_client *c, struct run *run, const void *msg, size_t size,
                    const int fds[EXEC_MSG_FDS])
{
        const char *prog = run->req->argv[0];
        int r;

        for (int attempt = 0;; attempt++) {
                struct helper_proc *h;

                r = helper_get(c, &h);
                if (r < 0)
                        return r;
                do {
                        r = exec_msg_send(h->sock, msg, size, fds, EXEC_MSG_FDS, MSG_DONTWAIT);
                        if (r == -EAGAIN)
                                r = wait_writable(h->sock, run->give_up) ?: -EAGAIN;
                } while (r == -EAGAIN);
                if (r >= 0) {
                        run->helper = h;
                        return 0;
                }
                if (is_dead_socket_error(r))
                        helper_replace(c, h, HELPER_EXIT_WAIT_USEC, true);
                helper_put(c, h);
                if (is_dead_socket_error(r) && attempt == 0)
                        continue;
                if (is_dead_socket_error(r))
                        return log_error_errno(-ECONNRESET, "exec helper died; cannot run '%s'",
                                               prog);
                if (r == -ETIMEDOUT)
                        log_error("exec helper does not take requests; cannot run '%s'", prog);
                return r;
        }
}

/* Returns 1 with run->rep filled, or -errno. */
static int run_receive_reply(struct run *run)
{
        char buf[sizeof(struct exec_msg_reply) + 1];
        ssize_t n;

        do
                n = recv(run->reply, buf, sizeof(buf), MSG_DONTWAIT);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return errno == EAGAIN ? 0 : -errno;
        if (n == 0) /* hung up without an answer: the helper is gone */
                return log_error_errno(-ECONNRESET, "exec helper died while running '%s'; "
                                       "its result is lost", run->req->argv[0]);
        if (exec_msg_reply_check(buf, (size_t)n, run->id) < 0)
                return log_error_errno(-EBADMSG, "invalid answer from the exec helper for '%s'",
                                       run->req->argv[0]);
        memcpy(&run->rep, buf, sizeof(run->rep));
        return 1;
}

static int poll_timeout_ms(uint64_t now, uint64_t until)
{
        if (until <= now)
                return 0;
        uint64_t ms = (until - now + USEC_PER_MSEC - 1) / USEC_PER_MSEC;
        return (int)MIN(ms, (uint64_t)INT32_MAX);
}

/* Wait for the answer while reading the program's output. */
static int run_wait_reply(struct run *run)
{
        const char *prog = run->req->argv[0];
        uint64_t timeout = run->deadline - run->start;
        /* As systemd-udevd: a warning at a third of the timeout (not for short ones). */
        uint64_t warn_at = timeout >= 3 * USEC_PER_SEC ? run->start + timeout / 3 : USEC_INFINITY;
        int r;

        for (;;) {
                uint64_t now = now_usec(CLOCK_MONOTONIC);
                if (now >= run->give_up)
                        return log_error_errno(-ETIMEDOUT, "exec helper did not report the end "
                                               "of '%s' in time; giving up on it", prog);
                if (now >= warn_at) {
                        log_warning("Spawned process '%s' is taking longer than %" PRIu64
                                    "s to complete", prog, (now - run->start) / USEC_PER_SEC);
                        warn_at = USEC_INFINITY;
                }
                struct pollfd p[3] = {
                        { .fd = run->reply, .events = POLLIN },
                        { .fd = run->out.fd, .events = POLLIN },
                        { .fd = run->err.fd, .events = POLLIN },
                };
                int n = poll(p, 3, poll_timeout_ms(now, MIN(run->give_up, warn_at)));
                if (n < 0 && errno != EINTR)
                        return -errno;
                if (n <= 0)
                        continue;
                if (p[1].revents)
                        (void)stream_read(&run->out);
                if (p[2].revents)
                        (void)stream_read(&run->err);
                if (p[0].revents) {
                        r = run_receive_reply(run);
                        if (r != 0)
                                return r;
                }
        }
}

/* After the answer: what the program wrote before it ended is in the pipes. */
static void run_drain(struct run *run)
{
        while (stream_read(&run->out) > 0)
                ;
        while (stream_read(&run->err) > 0)
                ;
}

static void run_result(const struct run *run, struct exec_result *ret)
{
        const struct exec_msg_reply *rep = &run->rep;

        ret->pid = rep->pid;
        ret->usec = rep->usec;
        ret->cpu_usec = rep->cpu_usec;
        if (rep->error != 0) {
                ret->outcome = EXEC_SPAWN_FAILED;
                ret->spawn_errno = rep->error;
                return;
        }
        if (rep->code == CLD_EXITED)
                ret->exit_status = rep->status;
        else
                ret->signal = rep->status;
        if (rep->flags & EXEC_REPLY_TIMED_OUT) {
                ret->outcome = EXEC_TIMED_OUT;
                ret->killed = rep->flags & EXEC_REPLY_KILLED;
        } else {
                ret->outcome = rep->code == CLD_EXITED ? EXEC_EXITED : EXEC_SIGNALED;
        }
}

static void sleep_usec(uint64_t usec)
{
        struct timespec ts = {
                .tv_sec = (time_t)(usec / USEC_PER_SEC),
                .tv_nsec = (long)(usec % USEC_PER_SEC * NSEC_PER_USEC),
        };
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

static int run_setup(struct exec_client *c, struct run *run, int fds[EXEC_MSG_FDS])
{
        const struct exec_request *req = run->req;
        int sv[2], r;

        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                return -errno;
        run->reply = sv[0];
        fds[EXEC_FD_REPLY] = sv[1];
        r = stream_open(c, &run->out, req->out, req->out_size, &fds[EXEC_FD_STDOUT]);
        if (r < 0)
                return r;
        r = stream_open(c, &run->err, req->err, req->err_size, &fds[EXEC_FD_STDERR]);
        if (r < 0)
                return r;
        return 0;
}

int exec_run(struct exec_client *c, const struct exec_request *req, struct exec_result *ret)
{
        int fds[EXEC_MSG_FDS] = { -1, -1, -1, -1 };
        struct run run = {
                .req = req,
                .reply = -1,
                .out = { .fd = -1 },
                .err = { .fd = -1 },
        };
        _cleanup_free_ void *msg = NULL;
        size_t size;
        int r;

        *ret = (struct exec_result){ .outcome = EXEC_SPAWN_FAILED, .exit_status = -1 };
        if (!req->argv || !req->argv[0] || (req->out && req->out_size == 0) ||
            (req->err && req->err_size == 0))
                return -EINVAL;
        if (req->out)
                req->out[0] = '\0';
        if (req->err)
                req->err[0] = '\0';

        if (req->is_run && c->cfg.exec_delay_usec > 0) {
                log_debug("Delaying execution of '%s' for %.3f s.", req->argv[0],
                          (double)c->cfg.exec_delay_usec / 1e6);
                sleep_usec(c->cfg.exec_delay_usec);
        }

        run.id = atomic_fetch_add(&c->next_id, 1);
        run.timeout_signal = req->timeout_signal ?: c->cfg.timeout_signal;
        run.kill_grace = req->kill_grace_usec ?: c->cfg.kill_grace_usec;
        run.start = now_usec(CLOCK_MONOTONIC);
        uint64_t timeout = req->timeout_usec ?: c->cfg.timeout_usec;
        run.deadline = timeout < USEC_INFINITY - run.start ? run.start + timeout : USEC_INFINITY;
        if (req->deadline_usec > 0 && req->deadline_usec < run.deadline)
                run.deadline = req->deadline_usec;
        run.deadline = MIN(run.deadline, USEC_INFINITY / 2); /* sums below cannot wrap */
        run.give_up = run.deadline + EXEC_CLIENT_SLACK_USEC +
                      (run.timeout_signal == SIGKILL ? 0 : run.kill_grace);

        int event_level = log_get_thread_max_level();
        struct exec_msg_request_view view = {
                .id = run.id,
                .deadline_usec = run.deadline,
                .kill_grace_usec = run.timeout_signal == SIGKILL ? 0 : run.kill_grace,
                .timeout_signal = run.timeout_signal,
                /* the daemon's level, or this event's OPTIONS+="log_level=" */
                .set_log_level = true,
                .log_level = event_level >= 0 ? event_level : log_get_max_level(),
        };
        r = exec_msg_request_build(&view, req->argv, req->envp, &msg, &size);
        if (r < 0)
                return r;

        r = run_setup(c, &run, fds);
        if (r >= 0) {
                fds[EXEC_FD_STDIN] = c->devnull;
                if (fds[EXEC_FD_STDOUT] < 0)
                        fds[EXEC_FD_STDOUT] = c->devnull;
                if (fds[EXEC_FD_STDERR] < 0)
                        fds[EXEC_FD_STDERR] = c->devnull;
        }
        if (r >= 0)
                r = run_send(c, &run, msg, size, fds);
        /* Ours are closed now, so the pipes see EOF when the program's copies go. */
        fds[EXEC_FD_STDIN] = -1; /* c->devnull is not ours to close */
        if (fds[EXEC_FD_STDOUT] == c->devnull)
                fds[EXEC_FD_STDOUT] = -1;
        if (fds[EXEC_FD_STDERR] == c->devnull)
                fds[EXEC_FD_STDERR] = -1;
        exec_close_fds(fds, EXEC_MSG_FDS);

        if (r >= 0) {
                r = run_wait_reply(&run);
                if (r == -ECONNRESET) /* hung up: replace the helper now if it died */
                        helper_replace(c, run.helper, HELPER_EXIT_WAIT_USEC, false);
        }
        if (r > 0)
                run_result(&run, ret);
        if (r > 0) {
                run_drain(&run);
                r = 0;
        }
        ret->out_len = run.out.len;
        ret->out_truncated = run.out.truncated;
        ret->err_len = run.err.len;
        ret->err_truncated = run.err.truncated;
        run_close(&run);
        if (run.helper)
                helper_put(c, run.helper);
        return r;
}

bool exec_result_ok(const struct exec_result *r)
{
        return r->outcome == EXEC_EXITED && r->exit_status == 0;
}

const char *exec_result_to_string(const struct exec_result *r, char *buf, size_t size)
{
        switch (r->outcome) {
        case EXEC_EXITED:
                snprintf(buf, size, "exited with status %d", r->exit_status);
                break;
        case EXEC_SIGNALED:
                snprintf(buf, size, "killed by signal SIG%s", signal_abbrev(r->signal) ?: "?");
                break;
        case EXEC_TIMED_OUT:
                if (r->killed)
                        snprintf(buf, size, "timed out (SIGKILL needed)");
                else if (r->signal > 0)
                        snprintf(buf, size, "timed out (SIG%s)", signal_abbrev(r->signal) ?: "?");
                else
                        snprintf(buf, size, "timed out (exited with status %d)", r->exit_status);
                break;
        case EXEC_SPAWN_FAILED:
        default:
                snprintf(buf, size, "failed to start: %s",
                         errno_name(r->spawn_errno) ?: "unknown error");
                break;
        }
        return buf;
}
