/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: manager (API), listener thread (internals) */
#pragma once
/* The netlink listener thread: receives kernel uevents (NETLINK_KOBJECT_UEVENT,
 * group 1), validates the sender (nl_pid 0, uid 0 credentials), parses them
 * and pushes them to the event queue in batches. It does nothing else, so the
 * kernel's socket buffer is drained as fast as possible.
 *
 * Back-pressure: while the queue is at its budget (event_queue_room() == 0:
 * the event or the byte limit reached) the listener stops reading and the
 * kernel buffer (128 MiB, SO_RCVBUFFORCE) absorbs the storm; each such pause
 * is counted. It never reads more datagrams at once than event_queue_room()
 * allows, so the queue stays within its event limit and, but for about one
 * event, its byte limit.
 * ENOBUFS (the kernel buffer overflowed) is counted and logged at error level
 * with the last SEQNUM received before the loss and the first one after; the
 * size of that gap is added to the "lost" counter (an upper bound: net events
 * of other network namespaces take SEQNUMs too). The manager then resyncs
 * (udevd/resync.h).
 *
 * Every event queued is also recorded in the known-devices index
 * (udevd/known-devices.h), which the resync needs.
 *
 * Sync: the manager answers a control PING only after every uevent that
 * reached the socket before the PING has been queued: listener_request_sync()
 * returns a ticket; the listener reads and pushes until the socket ran empty
 * or it queued a uevent with a SEQNUM at least the kernel's SEQNUM when it
 * saw the request (/sys/kernel/uevent_seqnum), then publishes the ticket as
 * done and makes `listener_sync_fd()` readable. It reads within the budget
 * only: at the budget a sync waits for room (the socket is found empty
 * without reading it: MSG_PEEK), so a ping during a storm is answered once
 * the workers made room for what came before it. */

#include <stdbool.h>
#include <stdint.h>

struct event_queue;
struct known_devices;
struct listener;

struct listener_options {
        bool accept_user_uevents;     /* --test-accept-user-uevents */
        int rcvbuf;                   /* > 0: --debug-netlink-rcvbuf=; 0: 128 MiB */
        struct known_devices *known;  /* borrowed, may be NULL */
        /* > 0: the uevent socket the service manager passed (socket
         * activation, udevd/listen-fds.h), taken over instead of opening
         * one; 0: none (passed fds are >= 3). */
        int fd;
};

struct listener_stats {
        uint64_t received;  /* datagrams accepted and queued */
        uint64_t forged;    /* dropped: not from the kernel */
        uint64_t malformed; /* dropped: parse errors */
        uint64_t enobufs;   /* receive buffer overruns */
        uint64_t lost;      /* SEQNUMs missing after overruns (upper bound) */
        uint64_t last_seqnum;
        uint64_t budget_pauses; /* times it stopped reading: the queue was at its budget */
};

/* Opens and binds the socket (or takes opts->fd, closed on failure). Borrows `q` (and opts->known) for its lifetime. */
int listener_new(struct event_queue *q, const struct listener_options *opts,
                 struct listener **ret);
int listener_start(struct listener *l);
/* Ask the thread to stop and join it. Safe if never started. */
void listener_stop(struct listener *l);
void listener_free(struct listener *l);

uint64_t listener_request_sync(struct listener *l);
/* eventfd (CLOEXEC|NONBLOCK) readable when a sync completed; the manager reads
 * it and then compares listener_synced() with its tickets. */
int listener_sync_fd(const struct listener *l);
uint64_t listener_synced(const struct listener *l);
void listener_get_stats(const struct listener *l, struct listener_stats *ret);
