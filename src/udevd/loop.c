/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: manager */
#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>

#include "shared/macro.h"
#include "udevd/loop.h"

#define LOOP_MAX_EVENTS 32

struct loop_source {
        int fd;
        loop_handler_t cb;
        void *userdata;
        bool removed;
        struct loop_source *next_free;
};

struct loop {
        int epfd;
        /* Removed sources are freed only after the dispatch round, so a
         * callback can remove another source whose event is still pending. */
        struct loop_source *graveyard;
        struct loop_source **by_fd; /* index = fd */
        size_t n_by_fd;
};

int loop_new(struct loop **ret)
{
        struct loop *l = calloc(1, sizeof(*l));

        if (!l)
                return -ENOMEM;
        l->epfd = epoll_create1(EPOLL_CLOEXEC);
        if (l->epfd < 0) {
                int r = negative_errno();
                free(l);
                return r;
        }
        *ret = l;
        return 0;
}

static void loop_reap(struct loop *l)
{
        while (l->graveyard) {
                struct loop_source *s = l->graveyard;
                l->graveyard = s->next_free;
                free(s);
        }
}

void loop_free(struct loop *l)
{
        if (!l)
                return;
        for (size_t i = 0; i < l->n_by_fd; i++)
                free(l->by_fd[i]);
        free(l->by_fd);
        loop_reap(l);
        safe_close(l->epfd);
        free(l);
}

int loop_add(struct loop *l, int fd, uint32_t events, loop_handler_t cb, void *userdata)
{
        struct loop_source *s;

        if (fd < 0)
                return -EBADF;
        if ((size_t)fd >= l->n_by_fd) {
                size_t n = MAX((size_t)fd + 1, l->n_by_fd * 2);
                struct loop_source **a = realloc(l->by_fd, n * sizeof(*a));
                if (!a)
                        return -ENOMEM;
                for (size_t i = l->n_by_fd; i < n; i++)
                        a[i] = NULL;
                l->by_fd = a;
                l->n_by_fd = n;
        }
        if (l->by_fd[fd])
                return -EEXIST;
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        *s = (struct loop_source){ .fd = fd, .cb = cb, .userdata = userdata };
        struct epoll_event ev = { .events = events, .data.ptr = s };
        if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
                int r = negative_errno();
                free(s);
                return r;
        }
        l->by_fd[fd] = s;
        return 0;
}

int loop_modify(struct loop *l, int fd, uint32_t events)
{
        if (fd < 0 || (size_t)fd >= l->n_by_fd || !l->by_fd[fd])
                return -ENOENT;
        struct epoll_event ev = { .events = events, .data.ptr = l->by_fd[fd] };
        return epoll_ctl(l->epfd, EPOLL_CTL_MOD, fd, &ev) < 0 ? negative_errno() : 0;
}

void loop_remove(struct loop *l, int fd)
{
        struct loop_source *s;

        if (fd < 0 || (size_t)fd >= l->n_by_fd || !(s = l->by_fd[fd]))
                return;
        (void)epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL);
        l->by_fd[fd] = NULL;
        s->removed = true;
        s->next_free = l->graveyard;
        l->graveyard = s;
}

int loop_run_once(struct loop *l, int timeout_ms)
{
        struct epoll_event evs[LOOP_MAX_EVENTS];
        int n;

        n = epoll_wait(l->epfd, evs, LOOP_MAX_EVENTS, timeout_ms);
        if (n < 0)
                return errno == EINTR ? 0 : negative_errno();
        for (int i = 0; i < n; i++) {
                struct loop_source *s = evs[i].data.ptr;
                if (!s->removed)
                        s->cb(l, s->fd, evs[i].events, s->userdata);
        }
        loop_reap(l);
        return 0;
}
