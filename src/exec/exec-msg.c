/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <syslog.h>

#include "exec/exec-msg.h"
#include "shared/macro.h"

_Static_assert(sizeof(struct exec_msg_request) == 48, "request header layout");
_Static_assert(sizeof(struct exec_msg_reply) == 48, "reply layout");

void exec_close_fds(int *fds, size_t n)
{
        for (size_t i = 0; i < n; i++)
                fds[i] = safe_close(fds[i]);
}

static bool env_entry_valid(const char *e)
{
        const char *eq = strchr(e, '=');
        return eq && eq != e;
}

/* Sum of strlen+1 over a NULL-terminated list; -E2BIG past the limits. */
static int strv_size(char *const *v, size_t max_n, size_t *n, size_t *bytes)
{
        *n = 0;
        for (; v && v[*n]; (*n)++) {
                if (*n >= max_n)
                        return -E2BIG;
                size_t l = strlen(v[*n]) + 1;
                if (l > EXEC_STRINGS_MAX || *bytes > EXEC_STRINGS_MAX - l)
                        return -E2BIG;
                *bytes += l;
        }
        return 0;
}

int exec_msg_request_build(const struct exec_msg_request_view *view, char *const *argv,
                           char *const *envp, void **ret, size_t *ret_size)
{
        size_t argc, envc, bytes = 0;
        int r;

        if (!argv || !argv[0] || argv[0][0] != '/')
                return -EINVAL;
        if (view->timeout_signal <= 0 || view->timeout_signal >= NSIG)
                return -EINVAL;
        if (view->kill_grace_usec > EXEC_KILL_GRACE_MAX_USEC)
                return -EINVAL;
        if (view->set_log_level && (view->log_level < 0 || view->log_level > LOG_DEBUG))
                return -EINVAL;
        for (size_t i = 0; envp && envp[i]; i++)
                if (!env_entry_valid(envp[i]))
                        return -EINVAL;
        r = strv_size(argv, EXEC_ARGC_MAX, &argc, &bytes);
        if (r < 0)
                return r;
        r = strv_size(envp, EXEC_ENVC_MAX, &envc, &bytes);
        if (r < 0)
                return r;

        size_t size = sizeof(struct exec_msg_request) + bytes;
        char *buf = malloc(size);
        if (!buf)
                return -ENOMEM;
        struct exec_msg_request h = {
                .magic = EXEC_MSG_REQUEST_MAGIC,
                .size = (uint32_t)size,
                .id = view->id,
                .deadline_usec = view->deadline_usec,
                .kill_grace_usec = view->kill_grace_usec,
                .timeout_signal = view->timeout_signal,
                .argc = (uint32_t)argc,
                .envc = (uint32_t)envc,
                .flags = view->set_log_level ? (uint32_t)view->log_level + 1 : 0,
        };
        memcpy(buf, &h, sizeof(h));
        char *p = buf + sizeof(h);
        for (size_t i = 0; i < argc; i++) {
                size_t l = strlen(argv[i]) + 1;
                memcpy(p, argv[i], l);
                p += l;
        }
        for (size_t i = 0; i < envc; i++) {
                size_t l = strlen(envp[i]) + 1;
                memcpy(p, envp[i], l);
                p += l;
        }
        *ret = buf;
        *ret_size = size;
        return 0;
}

/* Split `n` NUL-terminated strings off the front of [*p, end) into v[]. */
static int take_strings(char **p, const char *end, size_t n, char **v)
{
        for (size_t i = 0; i < n; i++) {
                char *nul = memchr(*p, '\0', (size_t)(end - *p));
                if (!nul)
                        return -EBADMSG;
                v[i] = *p;
                *p = nul + 1;
        }
        v[n] = NULL;
        return 0;
}

int exec_msg_request_parse(char *buf, size_t size, char **argv_storage, char **env_storage,
                           struct exec_msg_request_view *ret)
{
        struct exec_msg_request h;

        if (size < sizeof(h) || size > EXEC_MSG_MAX)
                return -EBADMSG;
        memcpy(&h, buf, sizeof(h));
        if (h.magic != EXEC_MSG_REQUEST_MAGIC || h.size != size ||
            (h.flags & ~EXEC_REQ_LOG_LEVEL_MASK) != 0 ||
            (h.flags & EXEC_REQ_LOG_LEVEL_MASK) > LOG_DEBUG + 1)
                return -EBADMSG;
        if (h.argc < 1 || h.argc > EXEC_ARGC_MAX || h.envc > EXEC_ENVC_MAX)
                return -EBADMSG;
        if (h.timeout_signal <= 0 || h.timeout_signal >= NSIG)
                return -EBADMSG;
        if (h.kill_grace_usec > EXEC_KILL_GRACE_MAX_USEC)
                return -EBADMSG;

        char *p = buf + sizeof(h);
        const char *end = buf + size;
        if (take_strings(&p, end, h.argc, argv_storage) < 0 ||
            take_strings(&p, end, h.envc, env_storage) < 0)
                return -EBADMSG;
        if (p != end)
                return -EBADMSG; /* bytes after the last string */
        if (argv_storage[0][0] != '/')
                return -EBADMSG;
        for (size_t i = 0; i < h.envc; i++)
                if (!env_entry_valid(env_storage[i]))
                        return -EBADMSG;

        *ret = (struct exec_msg_request_view){
                .id = h.id,
                .deadline_usec = h.deadline_usec,
                .kill_grace_usec = h.kill_grace_usec,
                .timeout_signal = h.timeout_signal,
                .set_log_level = (h.flags & EXEC_REQ_LOG_LEVEL_MASK) != 0,
                .log_level = (int)(h.flags & EXEC_REQ_LOG_LEVEL_MASK) - 1,
                .argc = h.argc,
                .envc = h.envc,
                .argv = argv_storage,
                .envp = env_storage,
        };
        return 0;
}

int exec_msg_reply_check(const void *buf, size_t size, uint64_t id)
{
        struct exec_msg_reply r;

        if (size != sizeof(r))
                return -EBADMSG;
        memcpy(&r, buf, sizeof(r));
        if (r.magic != EXEC_MSG_REPLY_MAGIC || r.id != id)
                return -EBADMSG;
        if (r.error < 0 || r.pid < 0)
                return -EBADMSG;
        return 0;
}

int exec_msg_send(int sock, const void *buf, size_t size, const int *fds, size_t n_fds,
                  int flags)
{
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int) * EXEC_MSG_FDS)];
        } control;
        struct iovec iov = { .iov_base = (void *)buf, .iov_len = size };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
        ssize_t n;

        if (n_fds > EXEC_MSG_FDS)
                return -EINVAL;
        if (n_fds > 0) {
                memset(&control, 0, sizeof(control));
                mh.msg_control = control.buf;
                mh.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
                struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
                memcpy(CMSG_DATA(c), fds, sizeof(int) * n_fds);
        }
        do
                n = sendmsg(sock, &mh, MSG_NOSIGNAL | flags);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        if ((size_t)n != size)
                return -EMSGSIZE;
        return 0;
}

ssize_t exec_msg_recv(int sock, void *buf, size_t size, int fds[EXEC_MSG_FDS], size_t *ret_n_fds)
{
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int) * EXEC_MSG_FDS)];
        } control;
        struct iovec iov = { .iov_base = buf, .iov_len = size };
        struct msghdr mh = {
                .msg_iov = &iov,
                .msg_iovlen = 1,
                .msg_control = control.buf,
                .msg_controllen = sizeof(control.buf),
        };
        size_t n_fds = 0, total = 0;
        ssize_t n;

        do
                n = recvmsg(sock, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;

        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
                if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
                    c->cmsg_len < CMSG_LEN(0))
                        continue;
                size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                for (size_t i = 0; i < k; i++) {
                        int fd;
                        memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
                        if (n_fds < EXEC_MSG_FDS)
                                fds[n_fds++] = fd;
                        else
                                safe_close(fd);
                        total++;
                }
        }
        if (total > EXEC_MSG_FDS)
                mh.msg_flags |= MSG_CTRUNC; /* more than the buffer can hold: same verdict */
        if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
                exec_close_fds(fds, n_fds);
                *ret_n_fds = 0;
                return -EBADMSG;
        }
        *ret_n_fds = n_fds;
        return n;
}
