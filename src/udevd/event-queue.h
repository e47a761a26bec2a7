/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (internally locked) */
#pragma once
/* The event queue: pure data, no sockets, no workers, no rules.
 *
 * Events are appended in arrival (= kernel seqnum) order. An event becomes
 * runnable once no earlier event that is still queued or running conflicts
 * with it (the relation and its cost: event-deps.h); on completion the
 * dependants that no longer wait for anything become runnable. Takers start
 * the runnable event that arrived first.
 *
 * One mutex protects everything; it is taken only inside event-queue.c.
 * Workers block in event_queue_take() on a condition variable; pushes wake at
 * most as many waiters as events became runnable (no thundering herd; no wake
 * at all when every worker is busy).
 *
 * Storm damping (off until event_queue_set_coalesce()): push merges a "change" event into the queued "change" of
 * the same device that it would otherwise run right after, if no worker has
 * taken that one yet (event_deps_coalescible() says which pairs): the queued
 * event keeps its position and takes the newer record, the newer event
 * never becomes a queue entry of its own and is counted in coalesced_total.
 * The SEQNUMs merged into an event are done when it is done: a live event
 * covers queued_event_first_seqnum() .. its record's SEQNUM.
 *
 * Ownership: push takes the uevent records; take lends a `struct queued_event`
 * to one worker until event_queue_done(), which frees it (and the record).
 *
 * The budget (udevd(8) ERRORS AND OVERLOAD): at most `capacity` events and
 * `max_bytes` bytes. An event counts from push until done or abandoned,
 * queued or running alike. Its bytes are what it holds as allocated: its
 * uevent record(s) (uevent.alloc_size; after merges the first and the newest
 * record), its `struct queued_event` and its dependency node with its path
 * links (dep_node_size()). Not counted: malloc's own headers, the shared
 * indexes (event-deps hash tables, the runnable heap), which grow with the
 * number of live events and so are bounded by the event limit, and the
 * dependants arrays. The queue never refuses a push: its producer asks for
 * room first (event_queue_room(), event_queue_wait_capacity()); the netlink
 * listener does, synthesized resync events (udevd/resync.h) do not. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/uevent.h"

struct event_queue;
struct queued_event;

struct event_queue_hooks {
        /* Called with the queue lock held, on the transitions
         * empty -> non-empty (busy=true) and non-empty -> empty (busy=false),
         * counting queued + running events. Used to create/remove
         * /run/udev/queue; must be quick and must not call back into the queue. */
        void (*on_busy_changed)(bool busy, void *userdata);
        /* Called without the lock, from the caller's thread, after a call
         * that left events takers may start with no idle worker waiting in
         * take() to start them: the pool may start another worker. Callers
         * are push, the limit setter, requeue, retry_disk, set_paused(false)
         * and foreach_running (after an abandon); so also worker threads. */
        void (*on_need_worker)(void *userdata);
        void *userdata;
};

/* capacity: maximum queued+running events (the event budget); producers
 * wait via event_queue_wait_capacity(). 0 = unlimited. No byte limit until
 * event_queue_set_max_bytes(). */
int event_queue_new(const struct event_queue_hooks *hooks, size_t capacity,
                    struct event_queue **ret);
/* Frees all remaining events. No thread may be inside the queue. */
void event_queue_free(struct event_queue *q);

/* Append events in order (merging "change" storms, see above); takes ownership of evs[0..n-1] (on success and
 * on failure; NULL entries are skipped). Returns 0 or -ENOMEM / -ESHUTDOWN
 * (queue shut down: records freed). On -ENOMEM a prefix of evs may have been
 * queued; the rest was freed. Does not wait for capacity itself. */
int event_queue_push(struct event_queue *q, struct uevent **evs, size_t n);

/* The byte budget: 0 = unlimited (the default). Any thread. */
void event_queue_set_max_bytes(struct event_queue *q, size_t max_bytes);
/* How many events a producer may push now: 0 while either limit is reached
 * (queued+running >= capacity, or bytes >= max_bytes) or after shutdown;
 * else the events left under `capacity`, and no more than would fit under
 * max_bytes if each cost as much as the largest event pushed so far (at
 * least 1). SIZE_MAX: no limit. A producer that pushes at most this many
 * keeps the events within `capacity` and the bytes within max_bytes plus
 * about one event (more only when a batch brings events larger than any
 * before). */
size_t event_queue_room(struct event_queue *q);
/* For a producer that found no room: block until the queue has fallen to
 * three quarters of its limits (queued+running events at most capacity minus
 * a quarter of it, at least one; bytes at most three quarters of max_bytes)
 * or is empty, or until the absolute CLOCK_MONOTONIC deadline passes.
 * Returns 0, -ETIMEDOUT or -ESHUTDOWN. */
int event_queue_wait_capacity(struct event_queue *q, uint64_t deadline_usec);

/* Worker side: block until a runnable event exists and the queue is not
 * paused, then mark it running (start time = now) and lend it to the caller.
 * Returns NULL once the queue is shut down (see event_queue_shutdown). */
struct queued_event *event_queue_take(struct event_queue *q);
/* Finish an event taken with event_queue_take(): unblocks its dependants and
 * frees it (including the uevent record). Also used for abandoned events. */
void event_queue_done(struct event_queue *q, struct queued_event *qe);
/* event_queue_done(qe) (when qe is not NULL), then event_queue_take(), in
 * one go: the worker that frees a slot takes the next event itself, with
 * nobody woken for it. */
struct queued_event *event_queue_done_take(struct event_queue *q, struct queued_event *qe);

/* Worker side, instead of event_queue_done(): put a running event back into
 * the queue because its block device is locked by another process
 * (LOCK_EX on its disk). It is not handed out again before `delay_usec`
 * from now, unless event_queue_retry_disk() or a new uevent of the same disk
 * (see uevent_lock_disk) comes first. It keeps blocking its dependants.
 * The first requeue of an event starts its retry clock: once `timeout_usec`
 * have passed since then it is not requeued any more.
 * Returns 0: requeued, the caller no longer owns qe (take() hands it out
 * again); or, with qe still the caller's (finish it with event_queue_done()):
 * -ETIMEDOUT (retry time over), -ESHUTDOWN (queue shut down), -ECANCELED
 * (abandoned by the manager meanwhile, or its result already claimed). */
int event_queue_requeue(struct event_queue *q, struct queued_event *qe, uint64_t delay_usec,
                        uint64_t timeout_usec);
/* Requeued events of the whole disk `disk_devpath` ("/devices/.../block/sda")
 * become runnable now: it may have been unlocked (close after write seen by
 * the inotify watch). Any thread. */
void event_queue_retry_disk(struct event_queue *q, const char *disk_devpath);
/* Accessors for a lent event. */
const struct uevent *queued_event_uevent(const struct queued_event *qe);
uint64_t queued_event_start_usec(const struct queued_event *qe); /* CLOCK_MONOTONIC */
/* SEQNUM of the first event merged into qe (its own SEQNUM without merges);
 * queued_event_uevent(qe)->seqnum is the last one's. */
uint64_t queued_event_first_seqnum(const struct queued_event *qe);
/* How many later events were merged into qe. */
unsigned queued_event_merged(const struct queued_event *qe);

/* Storm damping on or off (off after event_queue_new()); affects later pushes. */
void event_queue_set_coalesce(struct event_queue *q, bool coalesce);
/* Stop/resume handing out events (udevadm control --stop/--start-exec-queue).
 * Queued events stay queued. */
void event_queue_set_paused(struct event_queue *q, bool paused);
/* Limit of events running at once (children max); takers beyond it wait.
 * 0 = unlimited (the default). */
void event_queue_set_max_running(struct event_queue *q, unsigned max_running);

/* Shut down: with drop_queued, not-yet-running events are freed at once;
 * otherwise take() keeps handing out events until none are left. In both cases
 * take() returns NULL to every worker once nothing runnable is left, and
 * push() refuses new events. */
void event_queue_shutdown(struct event_queue *q, bool drop_queued);
/* (A paused queue counts as having nothing runnable: after a shutdown without
 * drop, take() returns NULL while paused and the queued events stay until
 * event_queue_free() or a later event_queue_shutdown(q, true).) */

struct event_queue_stats {
        size_t queued;   /* waiting (blocked or runnable) */
        size_t running;  /* lent to workers */
        size_t runnable; /* queued and not blocked */
        size_t delayed;  /* queued, requeued and waiting for their retry time */
        size_t startable; /* runnable events takers may start now */
        uint64_t pushed_total;
        uint64_t done_total; /* finished or abandoned (dropped ones not counted) */
        uint64_t coalesced_total; /* merged into a queued event (never in pushed_total) */
        size_t bytes;      /* charged to the budget now (see the top of this file) */
        size_t bytes_peak; /* the most bytes charged at once since event_queue_new() */
        size_t max_events, max_bytes; /* the limits, 0 = unlimited */
        size_t space_waiters; /* threads in wait_capacity() or wait_empty() */
};
void event_queue_get_stats(struct event_queue *q, struct event_queue_stats *ret);

/* Wait until queued+running == 0 or the deadline passes: 0 or -ETIMEDOUT. */
int event_queue_wait_empty(struct event_queue *q, uint64_t deadline_usec);

/* Visit every running event (under the lock; the callback must be quick and
 * must not call back into the queue except queued_event_abandon_locked()).
 * Abandoned events are not visited. Used by the manager's timeout timer. */
void event_queue_foreach_running(struct event_queue *q,
                                 void (*cb)(struct queued_event *qe, void *userdata),
                                 void *userdata);
/* One queued or running event, for the "pending" query (settle's report). */
struct queue_pending_info {
        const struct uevent *ev;   /* valid during the callback only */
        uint64_t first_seqnum;     /* queued_event_first_seqnum(): the lowest SEQNUM
                                    * it covers (<= ev->seqnum) */
        bool running;              /* lent to a worker */
        bool delayed;              /* queued: requeued, its disk is locked */
        size_t blockers;           /* queued: earlier live events it waits for */
        uint64_t start_usec;       /* running: CLOCK_MONOTONIC when started */
};
/* Visit every running (not abandoned) and then every queued event, each list
 * in arrival order, under the lock: the callback must be quick, must not call
 * into the queue, and returns false to stop. Manager thread (any thread). */
void event_queue_foreach_pending(struct event_queue *q,
                                 bool (*cb)(const struct queue_pending_info *info,
                                            void *userdata),
                                 void *userdata);

/* Manager side, from within foreach_running: mark a running event abandoned
 * (timed out). Its dependants are released at once; the worker still owns the
 * lent record until it calls event_queue_done(). Idempotent. */
bool queued_event_abandon_locked(struct event_queue *q, struct queued_event *qe);
/* Exactly one of abandon and claim wins for an event: abandon returns false
 * (and does nothing) once the worker claimed the result; the worker calls
 * queued_event_claim_result() right before broadcasting and must discard its
 * result if it returns false (the event was abandoned). Returns true again if
 * called twice by the worker. */
bool queued_event_claim_result(struct queued_event *qe);
bool queued_event_abandoned(const struct queued_event *qe);
