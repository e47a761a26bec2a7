/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: helper process (single-threaded) */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec/exec-helper.h"
#include "exec/exec-msg.h"
#include "exec/exec-spawn.h"
#include "shared/compat.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "shared/time-util.h"

#define HELPER_CHILDREN_MAX 8192 /* programs running at once */
#define HELPER_BATCH 32          /* requests read per wake-up, so reaping is not starved */
#define HELPER_EPOLL_EVENTS 64

struct child {
        struct child *prev, *next;
        uint64_t id;
        pid_t pid;
        int pidfd;
        int stat_fd;              /* /proc/PID/stat, for the program limit; -1: none */
        int reply_fd;
        int timeout_signal;
        uint64_t start_usec;
        uint64_t deadline_usec;   /* next action; USEC_INFINITY: none */
        uint64_t kill_grace_usec;
        uint32_t flags;           /* EXEC_REPLY_* */
        bool terminating;         /* timeout signal sent, SIGKILL pending */
        bool dead;                /* removed; freed after the current epoll batch */
};

/* A request held back by the program limit: its datagram and descriptors,
 * parsed again when it starts. */
struct pending {
        struct pending *next;
        uint64_t id;
        uint64_t deadline_usec;
        int fds[EXEC_MSG_FDS];
        size_t size;
        char msg[];
};

struct helper {
        int sock, epfd, timer_fd;
        struct child *children;
        struct child *graveyard;
        size_t n_children;
        unsigned program_limit;   /* runnable programs at once; 0: no limit */
        struct pending *pending;  /* held back, oldest first */
        struct pending **pending_tail;
        uint64_t timer_armed;     /* USEC_INFINITY: disarmed */
        rlim_t child_nofile;
        struct exec_spawner spawner;
        pid_t self;
        bool done;
        char buf[EXEC_MSG_MAX];
        char *argv[EXEC_ARGC_MAX + 1];
        char *envp[EXEC_ENVC_MAX + 1];
};

static void send_reply(int fd, const struct exec_msg_reply *rep)
{
        if (fd < 0)
                return;
        if (send(fd, rep, sizeof(*rep), MSG_NOSIGNAL | MSG_DONTWAIT) < 0 && errno != EPIPE &&
            errno != ECONNRESET)
                log_debug_errno(errno, "failed to answer request %" PRIu64 ": %m", rep->id);
}

/* Signal the program's process group and, if it left the group, the program. */
static void signal_child(struct child *c, int sig)
{
        if (getpgid(c->pid) != c->pid)
                (void)syscall(SYS_pidfd_send_signal, c->pidfd, sig, NULL, 0);
        (void)kill(-c->pid, sig);
}

static void remove_child(struct helper *h, struct child *c)
{
        (void)epoll_ctl(h->epfd, EPOLL_CTL_DEL, c->pidfd, NULL);
        c->pidfd = safe_close(c->pidfd);
        c->stat_fd = safe_close(c->stat_fd);
        c->reply_fd = safe_close(c->reply_fd);
        if (c->prev)
                c->prev->next = c->next;
        else
                h->children = c->next;
        if (c->next)
                c->next->prev = c->prev;
        h->n_children--;
        c->dead = true;
        c->next = h->graveyard;
        h->graveyard = c;
}

static uint64_t timeval_usec(const struct timeval *tv)
{
        if (tv->tv_sec < 0 || tv->tv_usec < 0)
                return 0;
        return (uint64_t)tv->tv_sec * USEC_PER_SEC + (uint64_t)tv->tv_usec;
}

/* Reap c if it has exited: answer its request and remove it. True if reaped. */
static bool reap_child(struct helper *h, struct child *c)
{
        siginfo_t si = { 0 };
        struct rusage ru = { 0 };

        /* the raw call: its fifth argument, which glibc's waitid() lacks, is the
         * program's rusage (for the CPU time in the reply) */
        if (syscall(SYS_waitid, P_PIDFD, c->pidfd, &si, WEXITED | WNOHANG, &ru) < 0) {
                if (errno == EINTR || errno == EAGAIN)
                        return false;
                log_error_errno(errno, "waitid() on [%d] failed: %m", (int)c->pid);
                si.si_pid = c->pid; /* cannot wait for it: report it gone */
                si.si_code = CLD_KILLED;
                si.si_status = SIGKILL;
        }
        if (si.si_pid == 0)
                return false;

        uint64_t now = now_usec(CLOCK_MONOTONIC);
        struct exec_msg_reply rep = {
                .magic = EXEC_MSG_REPLY_MAGIC,
                .flags = c->flags,
                .id = c->id,
                .pid = c->pid,
                .code = si.si_code,
                .status = si.si_status,
                .usec = now - c->start_usec,
                .cpu_usec = timeval_usec(&ru.ru_utime) + timeval_usec(&ru.ru_stime),
        };
        log_debug("[%d] ended: code %d status %d%s%s after %" PRIu64 " ms", (int)c->pid,
                  si.si_code, si.si_status, c->flags & EXEC_REPLY_TIMED_OUT ? ", timed out" : "",
                  c->flags & EXEC_REPLY_KILLED ? ", SIGKILL sent" : "", rep.usec / USEC_PER_MSEC);
        send_reply(c->reply_fd, &rep);
        remove_child(h, c);
        return true;
}

static int start_child(struct helper *h, const struct exec_msg_request_view *v, int *fds)
{
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        struct child *c;
        int r;

        if (h->n_children >= HELPER_CHILDREN_MAX)
                return -EAGAIN;
        if (v->deadline_usec <= now)
                return -ETIME;
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;

        struct exec_spawn_params sp = {
                .argv = v->argv,
                .envp = v->envp,
                .fd_in = fds[EXEC_FD_STDIN],
                .fd_out = fds[EXEC_FD_STDOUT],
                .fd_err = fds[EXEC_FD_STDERR],
                .nofile_soft = h->child_nofile,
                .death_signal = SIGTERM,
        };
        pid_t pid = exec_spawn(&h->spawner, &sp, &c->pidfd);
        if (pid < 0) {
                free(c);
                return pid;
        }
        c->pid = pid;
        c->stat_fd = -1;
        if (h->program_limit > 0) {
                /* Opened once and read again at offset 0 each time: the
                 * process cannot be reaped (nor its PID reused) before
                 * reap_child(), which closes it. */
                char path[64];

                snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
                c->stat_fd = open(path, O_RDONLY | O_CLOEXEC);
        }
        struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };
        if (epoll_ctl(h->epfd, EPOLL_CTL_ADD, c->pidfd, &ev) < 0) {
                r = -errno;
                signal_child(c, SIGKILL);
                siginfo_t si;
                while (waitid((idtype_t)P_PIDFD, (id_t)c->pidfd, &si, WEXITED) < 0 &&
                       errno == EINTR)
                        ;
                safe_close(c->pidfd);
                safe_close(c->stat_fd);
                free(c);
                return r;
        }
        c->id = v->id;
        c->reply_fd = TAKE_FD(fds[EXEC_FD_REPLY]);
        c->timeout_signal = v->timeout_signal;
        c->start_usec = now;
        c->deadline_usec = v->deadline_usec;
        c->kill_grace_usec = v->kill_grace_usec;
        c->next = h->children;
        if (h->children)
                h->children->prev = c;
        h->children = c;
        h->n_children++;
        log_debug("[%d] %s started (request %" PRIu64 ", %zu running)", (int)pid, v->argv[0],
                  v->id, h->n_children);
        return 0;
}

/* Whether the program `c` is runnable (state R in /proc/PID/stat: running
 * or waiting for a CPU). A program that cannot be looked at counts. */
static bool child_runnable(const struct child *c)
{
        char buf[512];
        ssize_t n;

        if (c->stat_fd < 0)
                return true;
        n = pread(c->stat_fd, buf, sizeof(buf) - 1, 0);
        if (n <= 0)
                return true;
        buf[n] = '\0';
        /* "PID (COMM) STATE ...": COMM may hold any byte, so the last ')' */
        const char *e = strrchr(buf, ')');
        if (!e || e[1] != ' ')
                return true;
        return e[2] == 'R';
}

/* The program limit: another program may start while fewer than
 * program_limit of the running ones are runnable. A program sleeping on a
 * timer, a pipe or the disk does not count, so programs that wait never
 * hold others back; the check is made when a request comes, when a program
 * ends, and every millisecond while requests are held. */
static bool program_room(struct helper *h)
{
        unsigned runnable = 0;

        if (h->program_limit == 0 || h->n_children < h->program_limit)
                return true;
        for (struct child *c = h->children; c; c = c->next)
                if (!c->dead && child_runnable(c) && ++runnable >= h->program_limit)
                        return false;
        return true;
}

/* Keep a copy of the request (v parsed from h->buf) and take its
 * descriptors; started by start_held() in arrival order. */
static int hold_request(struct helper *h, const struct exec_msg_request_view *v, size_t size,
                        int *fds)
{
        struct pending *p = malloc(sizeof(*p) + size);

        if (!p)
                return -ENOMEM;
        p->next = NULL;
        p->id = v->id;
        p->deadline_usec = v->deadline_usec;
        p->size = size;
        memcpy(p->msg, h->buf, size);
        for (size_t i = 0; i < EXEC_MSG_FDS; i++)
                p->fds[i] = TAKE_FD(fds[i]);
        if (!h->pending)
                h->pending_tail = &h->pending;
        *h->pending_tail = p;
        h->pending_tail = &p->next;
        log_debug("request %" PRIu64 " held: %u programs runnable", v->id, h->program_limit);
        return 0;
}

static void answer_error(int reply_fd, uint64_t id, int error)
{
        struct exec_msg_reply rep = { .magic = EXEC_MSG_REPLY_MAGIC, .id = id, .error = error };
        send_reply(reply_fd, &rep);
}

static struct pending *pop_held(struct helper *h)
{
        struct pending *p = h->pending;

        h->pending = p->next;
        if (!h->pending)
                h->pending_tail = &h->pending;
        return p;
}

static void free_held(struct pending *p)
{
        exec_close_fds(p->fds, EXEC_MSG_FDS);
        free(p);
}

/* Start held requests, oldest first, while the limit lets them. */
static void start_held(struct helper *h)
{
        while (h->pending && program_room(h)) {
                struct pending *p = pop_held(h);
                struct exec_msg_request_view v;
                int r = exec_msg_request_parse(p->msg, p->size, h->argv, h->envp, &v);

                if (r >= 0)
                        r = start_child(h, &v, p->fds);
                if (r < 0) {
                        log_debug_errno(r, "request %" PRIu64 ": cannot start it: %m", p->id);
                        answer_error(p->fds[EXEC_FD_REPLY], p->id, -r);
                }
                free_held(p);
        }
}

/* Held requests whose deadline passed are answered ETIME, as start_child()
 * would answer them. */
static void expire_held(struct helper *h, uint64_t now)
{
        struct pending **pp = &h->pending, *last = NULL;

        while (*pp) {
                struct pending *p = *pp;
                if (p->deadline_usec > now) {
                        last = p;
                        pp = &p->next;
                        continue;
                }
                *pp = p->next;
                log_debug("request %" PRIu64 ": deadline passed while held", p->id);
                answer_error(p->fds[EXEC_FD_REPLY], p->id, ETIME);
                free_held(p);
        }
        h->pending_tail = last ? &last->next : &h->pending;
}

static void handle_request(struct helper *h, size_t size, int *fds)
{
        struct exec_msg_request_view v;
        struct exec_msg_reply rep = { .magic = EXEC_MSG_REPLY_MAGIC };
        int r;

        r = exec_msg_request_parse(h->buf, size, h->argv, h->envp, &v);
        if (r < 0) {
                if (size >= offsetof(struct exec_msg_request, id) + sizeof(rep.id))
                        memcpy(&rep.id, h->buf + offsetof(struct exec_msg_request, id),
                               sizeof(rep.id));
                log_ratelimited(LOG_WARNING, "invalid request of %zu bytes rejected", size);
                rep.error = EBADMSG;
                send_reply(fds[EXEC_FD_REPLY], &rep);
        } else {
                rep.id = v.id;
                if (v.set_log_level)
                        log_set_max_level(v.log_level); /* follows the daemon's */
                if (h->pending || !program_room(h)) {
                        r = hold_request(h, &v, size, fds);
                        if (r == 0)
                                return; /* the descriptors are the pending entry's now */
                } else
                        r = start_child(h, &v, fds);
                if (r < 0) {
                        log_debug_errno(r, "request %" PRIu64 ": cannot start %s: %m", v.id,
                                        v.argv[0]);
                        rep.error = -r;
                        send_reply(fds[EXEC_FD_REPLY], &rep);
                }
        }
        exec_close_fds(fds, EXEC_MSG_FDS);
}

static bool socket_hung_up(int fd)
{
        struct pollfd p = { .fd = fd, .events = POLLIN };
        return poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR));
}

static void handle_socket(struct helper *h)
{
        for (unsigned i = 0; i < HELPER_BATCH && !h->done; i++) {
                int fds[EXEC_MSG_FDS] = { -1, -1, -1, -1 };
                size_t n_fds = 0;
                ssize_t n = exec_msg_recv(h->sock, h->buf, sizeof(h->buf), fds, &n_fds);

                if (n == -EAGAIN)
                        return;
                if (n == -EBADMSG) {
                        log_ratelimited(LOG_WARNING, "oversized request or too many "
                                                     "descriptors: dropped");
                        continue;
                }
                if (n < 0) {
                        log_error_errno((int)n, "failed to receive requests: %m");
                        h->done = true;
                        return;
                }
                if (n == 0 && n_fds == 0 && socket_hung_up(h->sock)) {
                        h->done = true; /* udevd closed its end or died */
                        return;
                }
                if (n_fds != EXEC_MSG_FDS) {
                        log_ratelimited(LOG_WARNING, "request with %zu descriptors instead of "
                                                     "%d dropped", n_fds, EXEC_MSG_FDS);
                        exec_close_fds(fds, n_fds);
                        continue;
                }
                handle_request(h, (size_t)n, fds);
        }
}

static void handle_deadlines(struct helper *h)
{
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        struct child *next;

        expire_held(h, now);

        for (struct child *c = h->children; c; c = next) {
                next = c->next;
                if (c->deadline_usec > now)
                        continue;
                if (reap_child(h, c)) /* it ended just in time: no timeout */
                        continue;
                if (c->terminating || c->timeout_signal == SIGKILL || c->kill_grace_usec == 0) {
                        if (!c->terminating)
                                log_debug("[%d] timed out, sending SIGKILL", (int)c->pid);
                        else
                                log_debug("[%d] still running after the grace period, sending "
                                          "SIGKILL", (int)c->pid);
                        if (!c->terminating && c->timeout_signal != SIGKILL)
                                signal_child(c, c->timeout_signal);
                        signal_child(c, SIGKILL);
                        c->flags |= EXEC_REPLY_TIMED_OUT | EXEC_REPLY_KILLED;
                        c->deadline_usec = USEC_INFINITY;
                        continue;
                }
                log_debug("[%d] timed out, sending %s", (int)c->pid,
                          signal_abbrev(c->timeout_signal) ?: "signal");
                signal_child(c, c->timeout_signal);
                signal_child(c, SIGCONT);
                c->flags |= EXEC_REPLY_TIMED_OUT;
                c->terminating = true;
                c->deadline_usec = now + c->kill_grace_usec;
        }
}

static void arm_timer(struct helper *h)
{
        uint64_t next = USEC_INFINITY;
        struct itimerspec its = { 0 };

        for (struct child *c = h->children; c; c = c->next)
                next = MIN(next, c->deadline_usec);
        for (struct pending *p = h->pending; p; p = p->next)
                next = MIN(next, p->deadline_usec);
        if (h->pending) /* held requests: look at the programs again in 1 ms */
                next = MIN(next, now_usec(CLOCK_MONOTONIC) + USEC_PER_MSEC);
        if (next == h->timer_armed)
                return;
        if (next != USEC_INFINITY) {
                its.it_value.tv_sec = (time_t)(next / USEC_PER_SEC);
                its.it_value.tv_nsec = (long)(next % USEC_PER_SEC * NSEC_PER_USEC);
                if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
                        its.it_value.tv_nsec = 1; /* zero would disarm */
        }
        if (timerfd_settime(h->timer_fd, TFD_TIMER_ABSTIME, &its, NULL) < 0) {
                log_error_errno(errno, "timerfd_settime() failed: %m");
                return;
        }
        h->timer_armed = next;
}

static void free_graveyard(struct helper *h)
{
        while (h->graveyard) {
                struct child *c = h->graveyard;
                h->graveyard = c->next;
                free(c);
        }
}

static int run_loop(struct helper *h)
{
        struct epoll_event evs[HELPER_EPOLL_EVENTS];

        while (!h->done) {
                int n = epoll_wait(h->epfd, evs, HELPER_EPOLL_EVENTS, -1);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return log_error_errno(errno, "epoll_wait() failed: %m");
                }
                for (int i = 0; i < n; i++) {
                        void *p = evs[i].data.ptr;
                        if (p == &h->sock) {
                                handle_socket(h);
                        } else if (p == &h->timer_fd) {
                                uint64_t v;
                                ssize_t _unused_ rd = read(h->timer_fd, &v, sizeof(v));
                                handle_deadlines(h);
                        } else {
                                struct child *c = p;
                                if (!c->dead)
                                        reap_child(h, c);
                        }
                }
                start_held(h);
                free_graveyard(h);
                arm_timer(h);
        }
        return 0;
}

/* Shut down: the programs still running are told to stop; nobody waits for
 * their results any more. Their PR_SET_PDEATHSIG would tell the leaders too. */
static void helper_free(struct helper *h)
{
        if (h->n_children > 0)
                log_debug("exiting with %zu programs still running; sending SIGTERM",
                          h->n_children);
        while (h->children) {
                struct child *c = h->children;
                signal_child(c, SIGTERM);
                signal_child(c, SIGCONT);
                remove_child(h, c);
        }
        while (h->pending)
                free_held(pop_held(h)); /* their reply sockets hang up */
        free_graveyard(h);
        exec_spawner_deinit(&h->spawner);
        safe_close(h->sock);
        safe_close(h->timer_fd);
        safe_close(h->epfd);
        free(h);
}

/* The kernel's struct sigaction (rt_sigaction), not glibc's. */
struct kernel_sigaction {
        void (*handler)(int);
        unsigned long flags;
        void (*restorer)(void);
        uint64_t mask;
};

static void setup_process(struct helper *h)
{
        struct rlimit rl;
        sigset_t all;

        (void)prctl(PR_SET_NAME, EXEC_HELPER_COMM);
        /* Programs must see 0, 1 and 2 open, and received descriptors must
         * never land on them. */
        for (int fd = 0; fd < 3; fd++)
                if (fcntl(fd, F_GETFD) < 0 && errno == EBADF)
                        (void)open("/dev/null", O_RDWR); /* lowest free: fd itself */
        /* Blocked, never handled: the helper stops when udevd closes the
         * socket, or by SIGKILL. Ignored signals would be inherited by the
         * programs, so none stays ignored. */
        sigfillset(&all);
        sigprocmask(SIG_SETMASK, &all, NULL);
        for (int sig = 1; sig < NSIG; sig++) {
                /* The raw call: glibc's sigaction() refuses its internal
                 * signals 32 and 33, which its posix_spawn() leaves ignored. */
                struct kernel_sigaction ksa, dfl = { .handler = SIG_DFL };
                if (sig == SIGKILL || sig == SIGSTOP ||
                    syscall(SYS_rt_sigaction, sig, NULL, &ksa, sizeof(ksa.mask)) < 0)
                        continue;
                if (ksa.handler == SIG_IGN)
                        (void)syscall(SYS_rt_sigaction, sig, &dfl, NULL, sizeof(dfl.mask));
        }
        /* Every running program costs a pidfd and a reply socket here; the
         * programs themselves get the usual select()-safe soft limit. */
        h->child_nofile = FD_SETSIZE;
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
                h->child_nofile = MIN(rl.rlim_cur, (rlim_t)FD_SETSIZE);
                rl.rlim_cur = rl.rlim_max;
                (void)setrlimit(RLIMIT_NOFILE, &rl);
        }
        /* udevd may be protected from the OOM killer; programs are not (as
         * systemd-udevd's workers reset theirs). Raising it needs no privilege. */
        int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
        if (fd >= 0) {
                ssize_t _unused_ w = write(fd, "0", 1);
                safe_close(fd);
        }
}

int exec_helper_main(int fd, int log_level, unsigned program_limit)
{
        struct helper *h;
        int r;

        log_set_target(LOG_TARGET_CONSOLE, EXEC_HELPER_COMM);
        log_set_max_level(log_level);
        if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
                log_error_errno(errno, "invalid request socket %d: %m", fd);
                return EXIT_FAILURE;
        }
        h = calloc(1, sizeof(*h));
        if (!h) {
                safe_close(fd);
                return EXIT_FAILURE;
        }
        h->sock = fd;
        h->epfd = h->timer_fd = -1;
        h->timer_armed = USEC_INFINITY;
        h->self = getpid();
        h->program_limit = program_limit;
        h->pending_tail = &h->pending;
        setup_process(h);
        if (exec_spawner_init(&h->spawner) < 0) {
                log_error("out of memory");
                helper_free(h);
                return EXIT_FAILURE;
        }

        h->epfd = epoll_create1(EPOLL_CLOEXEC);
        h->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
        struct epoll_event ev_sock = { .events = EPOLLIN, .data.ptr = &h->sock };
        struct epoll_event ev_timer = { .events = EPOLLIN, .data.ptr = &h->timer_fd };
        if (h->epfd < 0 || h->timer_fd < 0 ||
            epoll_ctl(h->epfd, EPOLL_CTL_ADD, h->sock, &ev_sock) < 0 ||
            epoll_ctl(h->epfd, EPOLL_CTL_ADD, h->timer_fd, &ev_timer) < 0) {
                log_error_errno(errno, "failed to set up the event loop: %m");
                helper_free(h);
                return EXIT_FAILURE;
        }
        log_debug("exec helper [%d] running", (int)h->self);
        r = run_loop(h);
        helper_free(h);
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}

void exec_helper_run_if_requested(int argc, char *argv[])
{
        int log_level = LOG_INFO;
        unsigned long program_limit = 0;
        char *end;

        if (argc < 2 || strncmp(argv[1], EXEC_HELPER_ARG, STRLEN(EXEC_HELPER_ARG)) != 0)
                return;
        long fd = strtol(argv[1] + STRLEN(EXEC_HELPER_ARG), &end, 10);
        if (*end || fd < 3 || fd > 1024) {
                fprintf(stderr, "invalid %s\n", argv[1]);
                exit(EXIT_FAILURE);
        }
        for (int i = 2; i < argc; i++) {
                const char *a = argv[i];
                if (strncmp(a, EXEC_HELPER_LOG_ARG, STRLEN(EXEC_HELPER_LOG_ARG)) == 0) {
                        int l = log_level_from_string(a + STRLEN(EXEC_HELPER_LOG_ARG));
                        if (l >= 0)
                                log_level = l;
                } else if (strncmp(a, EXEC_HELPER_LIMIT_ARG, STRLEN(EXEC_HELPER_LIMIT_ARG)) == 0) {
                        const char *v = a + STRLEN(EXEC_HELPER_LIMIT_ARG);
                        errno = 0;
                        program_limit = strtoul(v, &end, 10);
                        if (errno || end == v || *end || program_limit > EXEC_PROGRAM_LIMIT_MAX) {
                                fprintf(stderr, "invalid %s\n", a);
                                exit(EXIT_FAILURE);
                        }
                }
        }
        exit(exec_helper_main((int)fd, log_level, (unsigned)program_limit));
}
