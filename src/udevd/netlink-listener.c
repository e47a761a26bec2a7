/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: listener thread (loop), manager (start/stop/sync API) */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/netlink.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proto/uevent.h"
#include "shared/fileio.h"
#include "shared/log.h"
#include "shared/thread-util.h"
#include "shared/time-util.h"
#include "udevd/event-queue.h"
#include "udevd/known-devices.h"
#include "udevd/netlink-listener.h"
#include "udevd/stats.h"
#include "udevd/settings.h"

#define LISTENER_BATCH 32 /* datagrams per recvmmsg() */
#define KERNEL_SEQNUM_PATH "/sys/kernel/uevent_seqnum"

struct listener {
        struct event_queue *queue; /* borrowed */
        struct known_devices *known; /* borrowed, may be NULL */
        bool accept_user_uevents;
        int rcvbuf; /* 0: UDEVD_RCVBUF_SIZE, forced */
        int nl_fd;
        int wake_fd;  /* manager -> listener: sync requested or stop */
        int sync_fd;  /* listener -> manager: a sync completed */
        pthread_t thread;
        bool started;
        _Atomic bool stop;
        _Atomic uint64_t sync_requested;
        _Atomic uint64_t sync_done;
        _Atomic uint64_t n_received, n_forged, n_malformed, n_enobufs, n_lost, last_seqnum;
        _Atomic uint64_t n_budget_pauses;
        /* listener thread only: the sync in progress (see handle_sync) */
        uint64_t sync_ticket;  /* the newest request seen, 0 = none */
        uint64_t sync_target;  /* the kernel's SEQNUM when it was seen */
        /* listener thread only: the loss window of an overrun (see count_loss) */
        struct {
                bool open;
                bool drained;     /* the socket ran empty since the overrun */
                uint64_t first;   /* first missing SEQNUM, 0 = none yet */
                uint64_t last;    /* last missing SEQNUM */
                uint64_t count;   /* missing SEQNUMs in the window */
        } loss;

        /* receive buffers, used only by the listener thread */
        struct mmsghdr msgs[LISTENER_BATCH];
        struct iovec iovs[LISTENER_BATCH];
        struct sockaddr_nl addrs[LISTENER_BATCH];
        union {
                char buf[CMSG_SPACE(sizeof(struct ucred))];
                struct cmsghdr align;
        } cmsgs[LISTENER_BATCH];
        char data[LISTENER_BATCH][UEVENT_BUFFER_MAX + 1];
};

/* rcvbuf > 0 (--debug-netlink-rcvbuf=): that size, SO_RCVBUF only (the
 * kernel caps it at net.core.rmem_max and doubles it); else 128 MiB, forced.
 * passed_fd > 0: the socket the service manager passed (bound already, by
 * systemd-udevd-kernel.socket); it gets the same options (set again, as
 * the unit may lack them) and O_NONBLOCK. */
static int open_uevent_socket(int rcvbuf, int passed_fd, int *ret)
{
        struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = 1 };
        int size = rcvbuf > 0 ? rcvbuf : UDEVD_RCVBUF_SIZE, one = 1;
        socklen_t sl = sizeof(size);
        int fd;

        if (passed_fd > 0) {
                int flags = fcntl(passed_fd, F_GETFL);

                fd = passed_fd;
                if (flags < 0 ||
                    (!(flags & O_NONBLOCK) && fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)) {
                        int r = log_error_errno(errno, "Failed to set up the passed uevent "
                                                "socket: %m");
                        safe_close(fd);
                        return r;
                }
        } else {
                fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK,
                            NETLINK_KOBJECT_UEVENT);
                if (fd < 0)
                        return log_error_errno(errno, "Failed to create uevent socket: %m");
        }
        if (rcvbuf > 0) {
                if (setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size)) < 0)
                        log_warning_errno(errno, "Failed to set the uevent receive buffer: %m");
                if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, &sl) >= 0)
                        log_info("Debugging: uevent receive buffer is %d bytes", size);
        } else if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0 &&
                   setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size)) < 0) {
                log_warning_errno(errno, "Failed to enlarge the uevent receive buffer: %m");
        }
        if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0) {
                int r = log_error_errno(errno, "Failed to enable SO_PASSCRED: %m");
                safe_close(fd);
                return r;
        }
        if (passed_fd <= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
                int r = log_error_errno(errno, "Failed to bind the uevent socket: %m");
                safe_close(fd);
                return r;
        }
        *ret = fd;
        return 0;
}

int listener_new(struct event_queue *q, const struct listener_options *opts,
                 struct listener **ret)
{
        struct listener *l;
        int r;

        l = calloc(1, sizeof(*l));
        if (!l)
                return -ENOMEM;
        l->queue = q;
        l->known = opts->known;
        l->accept_user_uevents = opts->accept_user_uevents;
        l->rcvbuf = opts->rcvbuf;
        l->nl_fd = l->wake_fd = l->sync_fd = -1;
        r = open_uevent_socket(l->rcvbuf, opts->fd, &l->nl_fd);
        if (r < 0)
                goto fail;
        l->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        l->sync_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (l->wake_fd < 0 || l->sync_fd < 0) {
                r = negative_errno();
                goto fail;
        }
        for (size_t i = 0; i < LISTENER_BATCH; i++) {
                l->iovs[i] = (struct iovec){ .iov_base = l->data[i], .iov_len = sizeof(l->data[i]) };
        }
        *ret = l;
        return 0;
fail:
        listener_free(l);
        return r;
}

/* Validate sender and credentials of one received datagram. */
static bool message_is_trusted(struct listener *l, const struct msghdr *mh)
{
        const struct sockaddr_nl *sa = mh->msg_name;
        const struct ucred *cred = NULL;

        for (struct cmsghdr *c = CMSG_FIRSTHDR((struct msghdr *)mh); c;
             c = CMSG_NXTHDR((struct msghdr *)mh, c))
                if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
                    c->cmsg_len == CMSG_LEN(sizeof(struct ucred)))
                        cred = (const struct ucred *)CMSG_DATA(c);
        if (!cred || cred->uid != 0)
                return false;
        if (mh->msg_namelen < sizeof(*sa) || sa->nl_family != AF_NETLINK)
                return false;
        if (sa->nl_groups != 1)
                return false;
        if (sa->nl_pid != 0 && !l->accept_user_uevents)
                return false;
        return true;
}

static void handle_enobufs(struct listener *l)
{
        uint64_t n = atomic_fetch_add(&l->n_enobufs, 1) + 1;

        if (!l->loss.open)
                l->loss.first = l->loss.last = l->loss.count = 0;
        l->loss.open = true;
        l->loss.drained = false;

        log_error("Kernel uevent receive buffer overrun (#%llu, last SEQNUM received %llu): "
                  "uevents were lost; the next SEQNUM gap bounds the loss",
                  (unsigned long long)n, (unsigned long long)atomic_load(&l->last_seqnum));
}

/* After an overrun the kernel keeps delivering what still fits, so the
 * datagrams queued in the socket may have holes, and everything after the
 * last of them may be gone: every SEQNUM gap from the overrun until the first
 * datagram received after the socket ran empty counts as lost (an upper
 * bound: net events of other network namespaces take SEQNUMs too). */
static void count_loss(struct listener *l, uint64_t seqnum)
{
        uint64_t last = atomic_load(&l->last_seqnum);

        if (last > 0 && seqnum > last + 1) {
                uint64_t gap = seqnum - last - 1;
                if (l->loss.first == 0)
                        l->loss.first = last + 1;
                l->loss.last = seqnum - 1;
                l->loss.count += gap;
                atomic_fetch_add(&l->n_lost, gap);
        }
        if (!l->loss.drained)
                return;
        l->loss.open = false;
        if (l->loss.count > 0)
                log_error("Uevents lost in the overrun: %llu at most, SEQNUM %llu..%llu (gaps in "
                          "that range may also be events of other network namespaces)",
                          (unsigned long long)l->loss.count, (unsigned long long)l->loss.first,
                          (unsigned long long)l->loss.last);
        else
                log_error("Uevents lost in the overrun: no SEQNUM gap seen%s",
                          last == 0 ? " (nothing was received before it)" : "");
}

/* Receive at most `vlen` (1..LISTENER_BATCH) datagrams in one recvmmsg()
 * and push them. Returns the number of datagrams read (fewer than vlen: the
 * socket ran empty), vlen after an overrun (read on), or -errno. */
static int receive_batch(struct listener *l, unsigned vlen)
{
        struct uevent *evs[LISTENER_BATCH];
        size_t n_evs = 0;
        int n;

        assert(vlen >= 1 && vlen <= LISTENER_BATCH);
        for (size_t i = 0; i < vlen; i++) {
                l->msgs[i].msg_hdr = (struct msghdr){
                        .msg_name = &l->addrs[i],
                        .msg_namelen = sizeof(l->addrs[i]),
                        .msg_iov = &l->iovs[i],
                        .msg_iovlen = 1,
                        .msg_control = l->cmsgs[i].buf,
                        .msg_controllen = sizeof(l->cmsgs[i].buf),
                };
                l->msgs[i].msg_len = 0;
        }
        n = recvmmsg(l->nl_fd, l->msgs, vlen, MSG_DONTWAIT | MSG_CMSG_CLOEXEC, NULL);
        if (n < 0) {
                if (errno == EAGAIN && l->loss.open)
                        l->loss.drained = true;
                if (errno == EAGAIN || errno == EINTR)
                        return 0;
                if (errno == ENOBUFS) {
                        handle_enobufs(l);
                        return (int)vlen; /* keep reading: the socket is usable again */
                }
                return log_error_errno(errno, "Failed to receive uevents: %m");
        }

        uint64_t now = now_usec(CLOCK_MONOTONIC);
        for (int i = 0; i < n; i++) {
                struct msghdr *mh = &l->msgs[i].msg_hdr;
                size_t len = l->msgs[i].msg_len;
                struct uevent *ev;
                int r;

                if (!message_is_trusted(l, mh)) {
                        atomic_fetch_add(&l->n_forged, 1);
                        log_ratelimited(LOG_WARNING,
                                        "Dropped a uevent not sent by the kernel (sender port %u)",
                                        ((struct sockaddr_nl *)mh->msg_name)->nl_pid);
                        continue;
                }
                if ((mh->msg_flags & MSG_TRUNC) || len > UEVENT_BUFFER_MAX) {
                        atomic_fetch_add(&l->n_malformed, 1);
                        log_ratelimited(LOG_WARNING, "Dropped an over-long uevent (%zu bytes)", len);
                        continue;
                }
                r = uevent_parse_kernel(l->data[i], len, now, &ev);
                if (r < 0) {
                        atomic_fetch_add(&l->n_malformed, 1);
                        log_ratelimited(LOG_WARNING, "Dropped a malformed uevent (%zu bytes): %s",
                                        len, r == -E2BIG ? "too large" : "bad format");
                        continue;
                }
                if (l->loss.open)
                        count_loss(l, ev->seqnum);
                atomic_store(&l->last_seqnum, ev->seqnum);
                log_debug("SEQNUM=%llu %s %s (%s) queued", (unsigned long long)ev->seqnum,
                          uevent_action_to_string(ev->action), ev->devpath, ev->subsystem);
                evs[n_evs++] = ev;
        }
        if ((unsigned)n < vlen && l->loss.open)
                l->loss.drained = true; /* a short batch: the socket ran empty */
        if (n_evs > 0) {
                if (l->known)
                        known_devices_note(l->known, evs, n_evs);
                uint64_t queued = now_usec(CLOCK_MONOTONIC);
                for (size_t i = 0; i < n_evs; i++)
                        evs[i]->queued_usec = queued;
                int r = event_queue_push(l->queue, evs, n_evs);
                if (r < 0)
                        return r == -ESHUTDOWN ? 0 : log_error_errno(r, "Failed to queue events: %m");
                atomic_fetch_add(&l->n_received, n_evs);
                struct event_queue_stats qs;
                event_queue_get_stats(l->queue, &qs);
                stats_note_queue_depth(qs.queued + qs.running);
        }
        return n;
}

/* Is the socket empty? Looks without taking anything (MSG_PEEK); an overrun
 * reported meanwhile is handled (peeking clears the socket's error). */
static bool socket_empty(struct listener *l)
{
        char b;

        for (;;) {
                if (recv(l->nl_fd, &b, sizeof(b), MSG_PEEK | MSG_DONTWAIT | MSG_TRUNC) >= 0)
                        return false;
                if (errno == EINTR)
                        continue;
                if (errno == ENOBUFS) {
                        handle_enobufs(l);
                        continue;
                }
                if (errno == EAGAIN && l->loss.open)
                        l->loss.drained = true;
                return true; /* EAGAIN; on other errors a sync must not wait */
        }
}

/* The kernel's last SEQNUM (every uevent up to it was sent, or is being
 * sent), or UINT64_MAX if unreadable. */
static uint64_t kernel_seqnum(void)
{
        uint64_t v;

        return read_uint64_file(KERNEL_SEQNUM_PATH, &v) < 0 ? UINT64_MAX : v;
}

static void publish_sync(struct listener *l)
{
        uint64_t one = 1;

        atomic_store(&l->sync_done, l->sync_ticket);
        ssize_t _unused_ w = write(l->sync_fd, &one, sizeof(one));
}

/* Sync requests: a ticket is done once every uevent that reached the socket
 * before the request was seen is queued, i.e. once the socket ran empty
 * after that, or once a uevent with a SEQNUM >= the kernel's SEQNUM at that
 * moment was queued (the socket is in SEQNUM order, so everything before it
 * was read too; this ends a sync during a storm that never lets the socket
 * run empty). It reads only while the budget has room: at the budget it
 * waits, so a ping moves no more than the budget into memory. */
static void handle_sync(struct listener *l)
{
        uint64_t want = atomic_load(&l->sync_requested);

        if (want == atomic_load(&l->sync_done))
                return;
        if (want != l->sync_ticket) {
                /* New requests: one target for all of them, read after they were made. */
                l->sync_ticket = want;
                l->sync_target = kernel_seqnum();
        }
        while (!atomic_load(&l->stop)) {
                uint64_t last = atomic_load(&l->last_seqnum);

                if (last > 0 && last >= l->sync_target)
                        break;
                size_t room = event_queue_room(l->queue);
                if (room == 0) {
                        if (socket_empty(l))
                                break;
                        return; /* at the budget: on again when there is room */
                }
                unsigned vlen = (unsigned)MIN(room, (size_t)LISTENER_BATCH);
                int n = receive_batch(l, vlen);
                if (n < 0 || (unsigned)n < vlen)
                        break; /* ran empty (or cannot read: do not hang the ping) */
        }
        publish_sync(l);
}

static void *listener_thread(void *userdata)
{
        struct listener *l = userdata;
        bool paused = false;

        thread_set_name("udevd-listen");

        while (!atomic_load(&l->stop)) {
                /* Back-pressure: at the budget (events or bytes), leave the datagrams
                 * in the kernel buffer; wake up regularly for stop/sync requests. */
                size_t room = event_queue_room(l->queue);
                if (room == 0) {
                        if (!paused) {
                                paused = true;
                                atomic_fetch_add(&l->n_budget_pauses, 1);
                                log_debug("Queue at its budget: not reading the uevent socket");
                        }
                        int r = event_queue_wait_capacity(l->queue, now_usec(CLOCK_MONOTONIC) +
                                                                    100 * USEC_PER_MSEC);
                        if (r == -ESHUTDOWN)
                                break;
                        if (r == 0)
                                continue; /* room now: look again */
                } else if (paused) {
                        paused = false;
                        log_debug("Queue below its budget: reading the uevent socket again");
                }

                struct pollfd pfd[2] = {
                        { .fd = l->nl_fd, .events = room > 0 ? POLLIN : 0 },
                        { .fd = l->wake_fd, .events = POLLIN },
                };
                int r = poll(pfd, 2, room > 0 ? 1000 : 0);
                if (r < 0 && errno != EINTR) {
                        log_error_errno(errno, "listener: poll failed: %m");
                        break;
                }
                if (pfd[1].revents & POLLIN) {
                        uint64_t v;
                        ssize_t _unused_ rd = read(l->wake_fd, &v, sizeof(v));
                }
                if (room > 0 && (pfd[0].revents & (POLLIN | POLLERR)))
                        (void)receive_batch(l, (unsigned)MIN(room, (size_t)LISTENER_BATCH));

                handle_sync(l);
        }
        return NULL;
}

int listener_start(struct listener *l)
{
        int r = thread_start(&l->thread, listener_thread, l);
        if (r < 0)
                return r;
        l->started = true;
        return 0;
}

static void wake(struct listener *l)
{
        uint64_t one = 1;
        ssize_t _unused_ w = write(l->wake_fd, &one, sizeof(one));
}

void listener_stop(struct listener *l)
{
        if (!l || !l->started)
                return;
        atomic_store(&l->stop, true);
        wake(l);
        pthread_join(l->thread, NULL);
        l->started = false;
}

void listener_free(struct listener *l)
{
        if (!l)
                return;
        listener_stop(l);
        safe_close(l->nl_fd);
        safe_close(l->wake_fd);
        safe_close(l->sync_fd);
        free(l);
}

uint64_t listener_request_sync(struct listener *l)
{
        uint64_t ticket = atomic_fetch_add(&l->sync_requested, 1) + 1;
        wake(l);
        return ticket;
}

int listener_sync_fd(const struct listener *l) { return l->sync_fd; }

uint64_t listener_synced(const struct listener *l)
{
        return atomic_load(&((struct listener *)l)->sync_done);
}

void listener_get_stats(const struct listener *l, struct listener_stats *ret)
{
        struct listener *m = (struct listener *)l;
        *ret = (struct listener_stats){
                .received = atomic_load(&m->n_received),
                .forged = atomic_load(&m->n_forged),
                .malformed = atomic_load(&m->n_malformed),
                .enobufs = atomic_load(&m->n_enobufs),
                .lost = atomic_load(&m->n_lost),
                .last_seqnum = atomic_load(&m->last_seqnum),
                .budget_pauses = atomic_load(&m->n_budget_pauses),
        };
}
