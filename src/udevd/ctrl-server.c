/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: manager */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "shared/log.h"
#include "shared/time-util.h"
#include "udevd/ctrl-server.h"
#include "udevd/loop.h"

#define CTRL_MSGS_PER_WAKEUP 16

struct ctrl_conn {
        int fd;
        uint64_t accepted_usec;
        uint64_t active_usec; /* accepted or last message received */
        uint64_t sync_ticket; /* 0: no PING seen */
        bool end_received;
        bool held; /* sent EXIT: open until the process exits */
        uint32_t events; /* what the loop waits for on fd */
        /* A query's reply being sent (CTRL_MSG_TUDEV_QUERY): nothing more is
         * read from the connection until it is out. */
        bool replying;
        int reply_status;
        struct query_out reply;
        size_t reply_off;
};

struct ctrl_server {
        struct loop *loop;
        struct ctrl_server_ops ops;
        char *path;
        int listen_fd;
        bool accepting;
        bool passed; /* the service manager's socket: its path is never unlinked */
        dev_t dev; /* the socket inode bound at `path` */
        ino_t ino;
        struct ctrl_conn conns[CTRL_CONN_MAX];
};

static void conn_close(struct ctrl_server *s, struct ctrl_conn *c)
{
        if (c->fd < 0)
                return;
        loop_remove(s->loop, c->fd);
        c->fd = safe_close(c->fd);
        c->sync_ticket = 0;
        c->end_received = false;
        c->held = false;
        c->replying = false;
        query_out_done(&c->reply);
        c->reply_off = 0;
}

/* Send what the socket takes of the pending reply. 0 (all sent, or the
 * rest waits for EPOLLOUT) or -errno (the connection must be closed). */
static int conn_flush(struct ctrl_conn *c)
{
        while (c->replying) {
                uint8_t pkt[CTRL_REPLY_PACKET_MAX];
                size_t left = c->reply.len - c->reply_off;
                size_t n = left > CTRL_REPLY_TEXT_MAX ? CTRL_REPLY_TEXT_MAX : left;
                bool last = n == left;
                ssize_t k;
                int size;

                size = ctrl_reply_encode(c->reply_status, last, c->reply.buf + c->reply_off, n,
                                         pkt);
                if (size < 0)
                        return size;
                k = send(c->fd, pkt, (size_t)size, MSG_DONTWAIT | MSG_NOSIGNAL);
                if (k < 0) {
                        if (errno == EAGAIN || errno == EINTR)
                                return 0;
                        return -errno;
                }
                c->reply_off += n;
                if (last) {
                        c->replying = false;
                        query_out_done(&c->reply);
                        c->reply_off = 0;
                }
        }
        return 0;
}

/* Answer a query: run it (ops.query), then send the reply. */
static int conn_query(struct ctrl_server *s, struct ctrl_conn *c, const char *query)
{
        if (s->ops.query)
                c->reply_status = s->ops.query(query, &c->reply, s->ops.userdata);
        else
                c->reply_status = query_fail(&c->reply, -EOPNOTSUPP, "queries not supported\n");
        if (c->reply_status > 0)
                c->reply_status = 0;
        if (c->reply_status < -4095)
                c->reply_status = -EIO;
        if (c->reply.overflow && c->reply_status == 0)
                c->reply_status = query_fail(&c->reply, -E2BIG, "reply too large\n");
        c->reply_off = 0;
        c->replying = true;
        log_debug("control: query \"%s\": %zu bytes, status %d", query, c->reply.len,
                  c->reply_status);
        return conn_flush(c);
}

static struct ctrl_conn *conn_by_fd(struct ctrl_server *s, int fd)
{
        for (size_t i = 0; i < CTRL_CONN_MAX; i++)
                if (s->conns[i].fd == fd)
                        return &s->conns[i];
        return NULL;
}

static const struct ucred *find_creds(struct msghdr *mh)
{
        for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c))
                if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
                    c->cmsg_len == CMSG_LEN(sizeof(struct ucred)))
                        return (const struct ucred *)CMSG_DATA(c);
        return NULL;
}

/* Close fds that arrived as SCM_RIGHTS (nobody should send any). */
static void close_passed_fds(struct msghdr *mh)
{
        for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c))
                if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
                        size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                        int *fds = (int *)CMSG_DATA(c);
                        for (size_t i = 0; i < n; i++)
                                safe_close(fds[i]);
                }
}

/* Returns false if the connection must be closed now. */
static bool conn_handle_one(struct ctrl_server *s, struct ctrl_conn *c, bool *again)
{
        uint8_t buf[CTRL_MSG_SIZE + 1];
        union {
                char b[CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(sizeof(int) * 8)];
                struct cmsghdr align;
        } control;
        struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
        struct msghdr mh = {
                .msg_iov = &iov,
                .msg_iovlen = 1,
                .msg_control = &control,
                .msg_controllen = sizeof(control),
        };
        struct ctrl_msg m;
        ssize_t n;

        *again = false;
        n = recvmsg(c->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        if (n < 0) {
                if (errno == EAGAIN || errno == EINTR)
                        return true;
                log_debug_errno(errno, "control: receive failed: %m");
                return false;
        }
        close_passed_fds(&mh);
        if (n == 0)
                return false; /* peer closed */
        const struct ucred *cred = find_creds(&mh);
        if (!cred || cred->uid != 0) {
                log_ratelimited(LOG_WARNING, "control: message without root credentials, closing");
                return false;
        }
        if ((mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || ctrl_msg_decode(buf, (size_t)n, &m) < 0) {
                log_ratelimited(LOG_WARNING, "control: invalid message (%zd bytes), closing", n);
                return false;
        }
        *again = true;
        c->active_usec = now_usec(CLOCK_MONOTONIC);
        switch (m.type) {
        case CTRL_MSG_END:
                c->end_received = true;
                *again = false;
                return true;
        case CTRL_MSG_PING:
                log_debug("control: ping");
                c->sync_ticket = s->ops.request_sync(s->ops.userdata);
                return true;
        case CTRL_MSG_EXIT:
                c->held = true;
                s->ops.handle(&m, s->ops.userdata);
                return true;
        case CTRL_MSG_TUDEV_QUERY:
                *again = false;
                return conn_query(s, c, m.strval) >= 0;
        default:
                s->ops.handle(&m, s->ops.userdata);
                return true;
        }
}

static void conn_maybe_finish(struct ctrl_server *s, struct ctrl_conn *c, uint64_t synced)
{
        if (c->fd >= 0 && c->end_received && !c->held && !c->replying &&
            c->sync_ticket <= synced)
                conn_close(s, c);
}

static void conn_wait_for(struct ctrl_server *s, struct ctrl_conn *c, uint32_t events)
{
        if (c->events != events && loop_modify(s->loop, c->fd, events) >= 0)
                c->events = events;
}

static void on_conn(struct loop *l, int fd, uint32_t revents, void *userdata)
{
        struct ctrl_server *s = userdata;
        struct ctrl_conn *c = conn_by_fd(s, fd);
        bool again = true;

        if (!c)
                return;
        if (c->replying && conn_flush(c) < 0) {
                conn_close(s, c);
                return;
        }
        for (int i = 0; i < CTRL_MSGS_PER_WAKEUP && again && !c->end_received && !c->replying;
             i++) {
                if (!conn_handle_one(s, c, &again)) {
                        conn_close(s, c);
                        return;
                }
        }
        if (revents & (EPOLLHUP | EPOLLERR)) {
                conn_close(s, c); /* nobody waits for the answer any more */
        } else if (c->replying) {
                conn_wait_for(s, c, EPOLLOUT); /* the rest of the reply */
        } else if (c->end_received) {
                /* Stop reading; the close answers the client once synced. */
                conn_wait_for(s, c, 0);
                conn_maybe_finish(s, c, s->ops.synced(s->ops.userdata));
        } else {
                conn_wait_for(s, c, EPOLLIN);
        }
}

/* A connection that may be closed to make room: it has not sent END and
 * has nothing waiting to be read (a client that sent its request is never
 * dropped before it is read). */
static bool conn_is_idle(const struct ctrl_conn *c)
{
        int pending = 0;

        if (c->fd < 0 || c->end_received || c->held || c->replying)
                return false;
        if (ioctl(c->fd, FIONREAD, &pending) < 0)
                return false;
        return pending == 0;
}

/* A free slot, or the slot of the least recently active idle connection
 * (closed here), or NULL when every connection is busy. */
static struct ctrl_conn *conn_slot(struct ctrl_server *s)
{
        struct ctrl_conn *victim = NULL;

        for (size_t i = 0; i < CTRL_CONN_MAX; i++) {
                struct ctrl_conn *c = &s->conns[i];

                if (c->fd < 0)
                        return c;
                if (conn_is_idle(c) && (!victim || c->active_usec < victim->active_usec))
                        victim = c;
        }
        if (victim) {
                log_ratelimited(LOG_WARNING, "control: too many connections, closing the least "
                                "recently active idle one");
                conn_close(s, victim);
        }
        return victim;
}

static void on_listen(struct loop *l, int fd, uint32_t revents, void *userdata)
{
        struct ctrl_server *s = userdata;
        struct ucred cred;
        socklen_t len = sizeof(cred);
        struct ctrl_conn *slot;
        int one = 1, cfd;

        cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (cfd < 0) {
                if (errno != EAGAIN && errno != EINTR)
                        log_ratelimited(LOG_WARNING, "control: accept failed: %m");
                return;
        }
        if (!s->accepting) {
                safe_close(cfd);
                return;
        }
        if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.uid != 0) {
                log_ratelimited(LOG_WARNING, "control: refused connection from uid %d (pid %d)",
                                len == sizeof(cred) ? (int)cred.uid : -1,
                                len == sizeof(cred) ? (int)cred.pid : -1);
                safe_close(cfd);
                return;
        }
        slot = conn_slot(s);
        if (!slot) {
                log_ratelimited(LOG_WARNING, "control: too many busy connections, refusing one");
                safe_close(cfd);
                return;
        }
        if (setsockopt(cfd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0 ||
            loop_add(l, cfd, EPOLLIN, on_conn, s) < 0) {
                safe_close(cfd);
                return;
        }
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        *slot = (struct ctrl_conn){
                .fd = cfd, .accepted_usec = now, .active_usec = now, .events = EPOLLIN,
        };
}

static struct ctrl_server *server_alloc(struct loop *loop, const char *path,
                                        const struct ctrl_server_ops *ops)
{
        struct ctrl_server *s = calloc(1, sizeof(*s));

        if (!s)
                return NULL;
        s->loop = loop;
        s->ops = *ops;
        s->accepting = true;
        s->listen_fd = -1;
        for (size_t i = 0; i < CTRL_CONN_MAX; i++)
                s->conns[i].fd = -1;
        s->path = strdup(path);
        if (!s->path) {
                free(s);
                return NULL;
        }
        return s;
}

int ctrl_server_adopt(struct loop *loop, const char *path, int fd,
                      const struct ctrl_server_ops *ops, struct ctrl_server **ret)
{
        struct ctrl_server *s;
        struct stat st;
        int flags, r;

        if (fd < 0)
                return -EBADF;
        s = server_alloc(loop, path, ops);
        if (!s) {
                safe_close(fd);
                return -ENOMEM;
        }
        s->listen_fd = fd;
        s->passed = true;
        flags = fcntl(fd, F_GETFL);
        if (flags < 0 || (!(flags & O_NONBLOCK) && fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) ||
            setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &(int){ 1 }, sizeof(int)) < 0) {
                r = log_error_errno(errno, "Failed to set up the passed control socket: %m");
                goto fail;
        }
        /* The inode the service manager bound at the path, to tell at exit
         * whether the path still names it. */
        if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode)) {
                s->dev = st.st_dev;
                s->ino = st.st_ino;
        } else {
                log_warning("%s does not exist any more; serving the passed control socket "
                            "all the same", path);
        }
        r = loop_add(loop, fd, EPOLLIN, on_listen, s);
        if (r < 0)
                goto fail;
        *ret = s;
        return 0;
fail:
        safe_close(s->listen_fd);
        free(s->path);
        free(s);
        return r;
}

int ctrl_server_new(struct loop *loop, const char *path, const struct ctrl_server_ops *ops,
                    struct ctrl_server **ret)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        struct ctrl_server *s;
        struct stat st;
        int r;

        if (strlen(path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, path);
        s = server_alloc(loop, path, ops);
        if (!s)
                return -ENOMEM;
        s->listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (s->listen_fd < 0) {
                r = negative_errno();
                goto fail;
        }
        /* On the listening socket too, so an accepted connection has it from
         * the start: a client that sends right after connect() would otherwise
         * race with the setsockopt() on the accepted socket, and a message sent
         * in between carries no credentials (and would be refused). */
        if (setsockopt(s->listen_fd, SOL_SOCKET, SO_PASSCRED, &(int){ 1 }, sizeof(int)) < 0) {
                r = negative_errno();
                goto fail;
        }
        (void)unlink(path);
        /* Created under the daemon's umask (022: 0755, only root may connect),
         * then narrowed to 0600; the umask is process-wide, so it is left alone. */
        r = bind(s->listen_fd, (struct sockaddr *)&sa, sizeof(sa));
        if (r < 0 || chmod(path, 0600) < 0 || lstat(path, &st) < 0 ||
            listen(s->listen_fd, CTRL_LISTEN_BACKLOG) < 0) {
                r = log_error_errno(errno, "Failed to bind/listen on %s: %m", path);
                goto fail;
        }
        s->dev = st.st_dev;
        s->ino = st.st_ino;
        r = loop_add(loop, s->listen_fd, EPOLLIN, on_listen, s);
        if (r < 0)
                goto fail;
        *ret = s;
        return 0;
fail:
        safe_close(s->listen_fd);
        free(s->path);
        free(s);
        return r;
}

void ctrl_server_stop_accepting(struct ctrl_server *s)
{
        if (!s || !s->accepting)
                return;
        s->accepting = false;
        loop_remove(s->loop, s->listen_fd);
}

bool ctrl_server_owns_path(const struct ctrl_server *s)
{
        struct stat st;

        return s && (s->dev != 0 || s->ino != 0) && lstat(s->path, &st) == 0 &&
               S_ISSOCK(st.st_mode) && st.st_dev == s->dev && st.st_ino == s->ino;
}

/* Unlink the path if it is still our socket. False if something else is
 * there now (another daemon's socket), true if it was ours or is gone. */
static bool unlink_if_ours(const struct ctrl_server *s)
{
        struct stat st;

        if (lstat(s->path, &st) < 0)
                return true;
        if (!ctrl_server_owns_path(s)) {
                log_warning("%s is no longer the socket this daemon bound; leaving it alone",
                            s->path);
                return false;
        }
        if (s->passed)
                return true; /* the service manager's: it stays for the next start */
        if (unlink(s->path) < 0 && errno != ENOENT)
                log_warning_errno(errno, "Failed to remove %s: %m", s->path);
        return true;
}

void ctrl_server_free(struct ctrl_server *s)
{
        if (!s)
                return;
        for (size_t i = 0; i < CTRL_CONN_MAX; i++)
                conn_close(s, &s->conns[i]);
        if (s->accepting)
                loop_remove(s->loop, s->listen_fd);
        safe_close(s->listen_fd);
        (void)unlink_if_ours(s);
        free(s->path);
        free(s);
}

bool ctrl_server_free_at_exit(struct ctrl_server *s)
{
        bool ours;

        if (!s)
                return false;
        ours = unlink_if_ours(s);
        /* Out of the loop, not closed: the kernel closes them when the
         * process is gone. */
        for (size_t i = 0; i < CTRL_CONN_MAX; i++) {
                if (s->conns[i].fd >= 0)
                        loop_remove(s->loop, s->conns[i].fd);
                query_out_done(&s->conns[i].reply);
        }
        if (s->accepting)
                loop_remove(s->loop, s->listen_fd);
        free(s->path);
        free(s);
        return ours;
}

void ctrl_server_sync_done(struct ctrl_server *s, uint64_t ticket)
{
        if (!s)
                return;
        for (size_t i = 0; i < CTRL_CONN_MAX; i++)
                conn_maybe_finish(s, &s->conns[i], ticket);
}

void ctrl_server_expire(struct ctrl_server *s, uint64_t now)
{
        if (!s)
                return;
        for (size_t i = 0; i < CTRL_CONN_MAX; i++) {
                struct ctrl_conn *c = &s->conns[i];
                if (c->fd >= 0 && !c->held && now - c->accepted_usec > CTRL_CONN_TIMEOUT_USEC) {
                        log_ratelimited(LOG_NOTICE, "control: closing a connection that timed out");
                        conn_close(s, c);
                }
        }
}
