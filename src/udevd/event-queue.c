/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (one internal mutex, taken only in this file) */
/*
 * The queue's own concerns: its lock and lifecycle, the runnable heap, the
 * delayed list, admission, take/done/requeue, statistics.
 *
 * Dependencies (which earlier events an event waits for) are decided by the
 * pure module event-deps.h, called under the lock: each event owns a
 * dep_node, added at push and removed when the event completes (done or
 * abandoned); dependants whose last blocker goes become runnable. Runnable events wait in a min-heap keyed by arrival, so the
 * taker always starts the earliest arrived event that may run, as
 * systemd-udevd does: an event released late by its blocker (a network
 * interface's "queues" children, once the interface's own event has run its
 * program) starts before events that arrived after it, instead of behind
 * every event that became runnable in the meantime.
 *
 * Admission is one limit: at most max_running events run at once
 * (children_max), whatever they do meanwhile; the earliest arrived runnable
 * event takes the next free place. Takers that find nothing they may start
 * sleep until woken.
 *
 * Requeued events (another process holds LOCK_EX on their whole disk, see
 * udevd/event-process.h) go back from
 * running to queued without leaving the dependency indexes, so their
 * dependants stay blocked; they wait on the `delayed` list until their
 * not-before time (or a retry_disk() for their disk) makes them runnable
 * again, in their arrival order. Takers waiting while the list is not empty sleep at most
 * until its earliest time.
 */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shared/cond.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "shared/minheap.h"
#include "shared/time-util.h"
#include "udevd/event-deps.h"
#include "udevd/event-queue.h"

enum qe_state {
        QE_QUEUED,    /* blocked or runnable */
        QE_RUNNING,   /* lent to a worker */
        QE_ABANDONED, /* still lent, but out of the counts and the indexes */
};

enum {
        QE_RESULT_OPEN,      /* running, nobody has published a result */
        QE_RESULT_WORKER,    /* the worker publishes (broadcasts) its result */
        QE_RESULT_ABANDONED, /* the manager gave up on it (event timeout) */
};

struct queued_event {
        struct uevent *ev;    /* the record workers process: the newest merged in */
        /* After a merge (storm damping): the first record, whose keys the
         * dep_node borrows; NULL otherwise. */
        struct uevent *first_ev;
        unsigned n_merged;    /* later "change" events merged into this one */
        struct queued_event *prev, *next; /* in q->queued or q->lent */
        uint64_t serial;      /* arrival order: the runnable heap's key */
        enum qe_state state;
        /* QE_RESULT_*: decided once, by whoever wins the compare-and-swap -- the
         * worker publishing its result or the manager abandoning the event. */
        atomic_int result_owner;
        uint64_t start_usec;
        struct queued_event *delayed_next; /* in q->delayed */
        uint64_t not_before;  /* while delayed: CLOCK_MONOTONIC µs */
        uint64_t retry_until; /* set at the first requeue: no requeue after it */
        struct dep_node *deps; /* its dependency tracking (event-deps.h) */
        size_t bytes;         /* charged to q->bytes while it counts (see qe_bytes()) */
};

struct qe_list {
        struct queued_event *head, *tail;
};

struct event_queue {
        pthread_mutex_t lock;
        pthread_cond_t takers; /* workers blocked in take() */
        pthread_cond_t space;  /* wait_capacity() and wait_empty() */
        struct event_queue_hooks hooks;
        size_t capacity;      /* max events, 0: unlimited */
        size_t max_bytes;     /* 0: unlimited */
        size_t bytes, bytes_peak; /* charged by the events that count (the budget) */
        size_t event_bytes_max;   /* the largest charge of one event so far */
        unsigned max_running; /* events running at once, 0: unlimited */
        size_t n_running;     /* QE_RUNNING events */
        bool paused;
        bool coalesce;        /* storm damping on */
        bool shutdown;
        bool busy;

        struct qe_list queued; /* QE_QUEUED, insertion order */
        struct qe_list lent;   /* QE_RUNNING and QE_ABANDONED */
        /* runnable events by arrival (serial); room for every live event is
         * reserved at insertion, so adding to it never fails */
        struct minheap runnable;
        struct queued_event *delayed; /* requeued, waiting for not_before */
        size_t n_queued, n_runnable, n_delayed;
        uint64_t pushed_total, done_total;
        uint64_t coalesced_total; /* events merged into a queued one */

        size_t n_waiting;   /* takers blocked on `takers` */
        size_t n_signalled; /* wake-ups sent and not yet consumed */
        size_t n_space_waiters;

        struct event_deps deps;
};

/* ------------------------------------------------------------------ lists */

static void list_append(struct qe_list *l, struct queued_event *qe)
{
        qe->next = NULL;
        qe->prev = l->tail;
        if (l->tail)
                l->tail->next = qe;
        else
                l->head = qe;
        l->tail = qe;
}

static void list_remove(struct qe_list *l, struct queued_event *qe)
{
        if (qe->prev)
                qe->prev->next = qe->next;
        else
                l->head = qe->next;
        if (qe->next)
                qe->next->prev = qe->prev;
        else
                l->tail = qe->prev;
        qe->prev = qe->next = NULL;
}

/* ------------------------------------------------------------ event alloc */

/* What one event is charged against the byte budget (event-queue.h):
 * its records as allocated, its queue entry and its dependency node. */
static size_t qe_bytes(const struct queued_event *qe)
{
        return sizeof(*qe) + dep_node_size(qe->deps) + qe->ev->alloc_size +
               (qe->first_ev ? qe->first_ev->alloc_size : 0);
}

static void qe_free(struct queued_event *qe)
{
        if (!qe)
                return;
        dep_node_free(qe->deps);
        uevent_free(qe->ev);
        uevent_free(qe->first_ev);
        free(qe);
}

/* Takes ev only on success. */
static struct queued_event *qe_new(struct uevent *ev)
{
        struct queued_event *qe;

        qe = calloc(1, sizeof(*qe));
        if (!qe)
                return NULL;
        qe->deps = dep_node_new(ev, qe);
        if (!qe->deps) {
                free(qe);
                return NULL;
        }
        qe->ev = ev;
        qe->state = QE_QUEUED;
        atomic_init(&qe->result_owner, QE_RESULT_OPEN);
        return qe;
}

/* Free a chain linked through ->next, records included. */
static void qe_free_chain(struct queued_event *qe)
{
        while (qe) {
                struct queued_event *next = qe->next;

                qe_free(qe);
                qe = next;
        }
}

/* -------------------------------------------------------------- accounting */

static size_t total_locked(const struct event_queue *q)
{
        return q->n_queued + q->n_running;
}

static void charge_locked(struct event_queue *q, struct queued_event *qe)
{
        size_t b = qe_bytes(qe);

        assert(q->bytes >= qe->bytes);
        q->bytes = q->bytes - qe->bytes + b;
        qe->bytes = b;
        q->bytes_peak = MAX(q->bytes_peak, q->bytes);
        q->event_bytes_max = MAX(q->event_bytes_max, b);
}

/* qe stops counting (done, abandoned, dropped). */
static void uncharge_locked(struct event_queue *q, struct queued_event *qe)
{
        assert(q->bytes >= qe->bytes);
        q->bytes -= qe->bytes;
        qe->bytes = 0;
}

/* Events that may be pushed now under both limits (event-queue.h). */
static size_t room_locked(const struct event_queue *q)
{
        size_t total = total_locked(q), room = SIZE_MAX;

        if (q->capacity > 0) {
                if (total >= q->capacity)
                        return 0;
                room = q->capacity - total;
        }
        if (q->max_bytes > 0) {
                if (q->bytes >= q->max_bytes)
                        return 0;
                if (q->event_bytes_max > 0)
                        room = MIN(room, MAX((q->max_bytes - q->bytes) / q->event_bytes_max,
                                             (size_t)1));
        }
        return room;
}

/* Whether a producer stopped at the budget may go on: the queue has fallen
 * to three quarters of each limit (at least one event below the event limit),
 * or is empty. The gap makes the listener read a batch per wake-up in a long
 * storm instead of one event per event done. */
static bool below_resume_mark_locked(const struct event_queue *q)
{
        size_t total = total_locked(q);

        if (total == 0)
                return true;
        if (q->capacity > 0 && total + MAX(q->capacity / 4, (size_t)1) > q->capacity)
                return false;
        if (q->max_bytes > 0 && q->bytes > q->max_bytes - q->max_bytes / 4)
                return false;
        return true;
}

/* How many runnable events takers could start right now. */
static size_t takeable_locked(const struct event_queue *q)
{
        if (q->paused || q->n_runnable == 0)
                return 0;
        if (q->max_running == 0)
                return q->n_runnable;
        if (q->n_running >= q->max_running)
                return 0;
        return MIN(q->n_runnable, q->max_running - q->n_running);
}

/* Wake as many blocked takers as there is work for, counting wake-ups that
 * are already on their way. */
static void wake_takers_locked(struct event_queue *q)
{
        size_t want = takeable_locked(q);

        while (q->n_signalled < want && q->n_signalled < q->n_waiting) {
                q->n_signalled++;
                pthread_cond_signal(&q->takers);
        }
}

/* Runnable work that no idle or already woken taker will pick up. */
static bool need_worker_locked(const struct event_queue *q)
{
        return q->hooks.on_need_worker && takeable_locked(q) > q->n_signalled;
}

/* After a change that may let more events start (a limit, delayed events
 * due): wake takers for them; true if the pool should be
 * asked for a worker (call on_need_worker after unlocking). */
static bool rewake_locked(struct event_queue *q)
{
        wake_takers_locked(q);
        return !q->shutdown && need_worker_locked(q);
}

static void update_busy_locked(struct event_queue *q)
{
        bool busy = total_locked(q) > 0;

        if (busy == q->busy)
                return;
        q->busy = busy;
        if (q->hooks.on_busy_changed)
                q->hooks.on_busy_changed(busy, q->hooks.userdata);
}

/* After queued+running (and the bytes) went down. */
static void count_decreased_locked(struct event_queue *q)
{
        update_busy_locked(q);
        if (q->n_space_waiters > 0 && below_resume_mark_locked(q))
                pthread_cond_broadcast(&q->space);
}

/* -------------------------------------------------------------- runnable */

static void runnable_append_locked(struct event_queue *q, struct queued_event *qe)
{
        minheap_push(&q->runnable, qe->serial, qe);
        q->n_runnable++;
}

/* The runnable event that arrived first. */
static struct queued_event *runnable_pop_locked(struct event_queue *q)
{
        struct queued_event *qe = minheap_pop(&q->runnable);

        assert(qe);
        q->n_runnable--;
        return qe;
}

/* A running event leaves the running count (done, abandoned or requeued). */
static void running_release_locked(struct event_queue *q)
{
        assert(q->n_running > 0);
        q->n_running--;
}

/* ------------------------------------------------------- delayed (requeued) */

static void delayed_append_locked(struct event_queue *q, struct queued_event *qe)
{
        struct queued_event **pp = &q->delayed;

        while (*pp)
                pp = &(*pp)->delayed_next;
        qe->delayed_next = NULL;
        *pp = qe;
        q->n_delayed++;
}

/* Make the delayed events that `due` selects runnable. Returns the earliest not-before time of those left, or
 * USEC_INFINITY. */
static uint64_t promote_delayed_locked(struct event_queue *q,
                                       bool (*due)(const struct queued_event *qe,
                                                   const void *arg),
                                       const void *arg)
{
        struct queued_event **pp = &q->delayed;
        uint64_t next = USEC_INFINITY;

        while (*pp) {
                struct queued_event *qe = *pp;

                if (due(qe, arg)) {
                        *pp = qe->delayed_next;
                        qe->delayed_next = NULL;
                        q->n_delayed--;
                        runnable_append_locked(q, qe);
                        continue;
                }
                next = MIN(next, qe->not_before);
                pp = &qe->delayed_next;
        }
        return next;
}

static bool due_by_time(const struct queued_event *qe, const void *arg)
{
        return qe->not_before <= *(const uint64_t *)arg;
}

static bool due_by_disk(const struct queued_event *qe, const void *arg)
{
        char disk[UEVENT_BUFFER_MAX];

        return uevent_lock_disk(qe->ev, disk, sizeof(disk)) && streq(disk, (const char *)arg);
}

/* ------------------------------------------------------------ dependencies */

static void on_deps_runnable(struct dep_node *n, void *userdata)
{
        struct queued_event *d = dep_node_owner(n);

        assert(d->state == QE_QUEUED);
        runnable_append_locked(userdata, d);
}

/* A live event completes: leave the indexes, release the dependants. */
static void release_locked(struct event_queue *q, struct queued_event *qe)
{
        event_deps_remove(&q->deps, qe->deps, on_deps_runnable, q);
}

/* Append one event. On failure nothing observable has changed (some arrays
 * may have grown) and the caller still owns qe. */
static int insert_locked(struct event_queue *q, struct queued_event *qe)
{
        int r;

        /* every live event, this one included, may be runnable at once */
        r = minheap_reserve(&q->runnable, q->n_queued + q->n_running + 1);
        if (r < 0)
                return r;
        r = event_deps_add(&q->deps, qe->deps);
        if (r < 0)
                return r;
        qe->serial = q->pushed_total;
        charge_locked(q, qe);
        list_append(&q->queued, qe);
        q->n_queued++;
        q->pushed_total++;
        if (r == 0)
                runnable_append_locked(q, qe);
        return 0;
}

/* Storm damping: merge the "change" event of qe (not inserted) into the
 * queued, never taken "change" of the same device that it would run right
 * after (event_deps_coalescible()). The queued event keeps its position and
 * dependency keys and takes qe's record (the later kernel state). true: qe's
 * record moved, the caller frees the empty qe. */
static bool merge_locked(struct event_queue *q, struct queued_event *qe)
{
        struct queued_event *o;
        struct dep_node *last;

        if (!q->coalesce || qe->ev->action != UEVENT_ACTION_CHANGE)
                return false;
        last = event_deps_latest_conflict(&q->deps, qe->ev);
        if (!last)
                return false;
        o = dep_node_owner(last);
        if (o->state != QE_QUEUED || o->retry_until != 0 ||
            !event_deps_coalescible(o->ev, qe->ev))
                return false;
        log_debug("SEQNUM=%llu merged into queued SEQNUM=%llu (%s)",
                  (unsigned long long)qe->ev->seqnum, (unsigned long long)o->ev->seqnum,
                  qe->ev->devpath);
        if (o->first_ev)
                uevent_free(o->ev);
        else
                o->first_ev = o->ev;
        o->ev = qe->ev;
        qe->ev = NULL;
        charge_locked(q, o); /* the newest record replaces the one in between */
        o->n_merged++;
        q->coalesced_total++;
        return true;
}

/* ------------------------------------------------------------------ public */

int event_queue_new(const struct event_queue_hooks *hooks, size_t capacity,
                    struct event_queue **ret)
{
        struct event_queue *q;
        int r;

        q = calloc(1, sizeof(*q));
        if (!q)
                return -ENOMEM;
        if (hooks)
                q->hooks = *hooks;
        q->capacity = capacity;
        event_deps_init(&q->deps);

        r = -pthread_mutex_init(&q->lock, NULL);
        if (r < 0)
                goto fail_mutex;
        r = cond_init_monotonic(&q->takers);
        if (r < 0)
                goto fail_takers;
        r = cond_init_monotonic(&q->space);
        if (r < 0)
                goto fail_space;
        *ret = q;
        return 0;

fail_space:
        pthread_cond_destroy(&q->takers);
fail_takers:
        pthread_mutex_destroy(&q->lock);
fail_mutex:
        free(q);
        return r;
}

void event_queue_free(struct event_queue *q)
{
        if (!q)
                return;
        qe_free_chain(q->queued.head);
        qe_free_chain(q->lent.head);
        event_deps_done(&q->deps);
        minheap_done(&q->runnable);
        pthread_cond_destroy(&q->space);
        pthread_cond_destroy(&q->takers);
        pthread_mutex_destroy(&q->lock);
        free(q);
}

static void free_records(struct uevent **evs, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (evs[i])
                        uevent_free(evs[i]);
}

/* A new uevent for a disk: it may have been unlocked (systemd:
 * event_queue_assume_block_device_unlocked()). */
static void retry_disk_of_locked(struct event_queue *q, const struct uevent *ev)
{
        char disk[UEVENT_BUFFER_MAX];

        if (q->n_delayed > 0 && uevent_lock_disk(ev, disk, sizeof(disk)))
                (void)promote_delayed_locked(q, due_by_disk, disk);
}

int event_queue_push(struct event_queue *q, struct uevent **evs, size_t n)
{
        struct qe_list batch = { NULL, NULL }, merged = { NULL, NULL };
        struct queued_event *qe;
        bool need;
        int r = 0;

        /* Allocate outside the lock. */
        for (size_t i = 0; i < n; i++) {
                if (!evs[i])
                        continue;
                qe = qe_new(evs[i]);
                if (!qe) {
                        /* Records already attached are freed with the chain. */
                        qe_free_chain(batch.head);
                        free_records(evs + i, n - i);
                        return -ENOMEM;
                }
                list_append(&batch, qe);
        }

        pthread_mutex_lock(&q->lock);
        if (q->shutdown) {
                pthread_mutex_unlock(&q->lock);
                qe_free_chain(batch.head);
                return -ESHUTDOWN;
        }
        while ((qe = batch.head)) {
                list_remove(&batch, qe);
                if (merge_locked(q, qe)) {
                        list_append(&merged, qe);
                        continue;
                }
                r = insert_locked(q, qe);
                if (r < 0) {
                        list_append(&batch, qe); /* free with the rest below */
                        break;
                }
                retry_disk_of_locked(q, qe->ev);
        }
        update_busy_locked(q);
        wake_takers_locked(q);
        need = need_worker_locked(q);
        pthread_mutex_unlock(&q->lock);

        /* After a failure `batch` holds the event that failed and all later ones. */
        qe_free_chain(batch.head);
        qe_free_chain(merged.head); /* empty shells: their records moved */
        if (need)
                q->hooks.on_need_worker(q->hooks.userdata);
        return r;
}

/* Wait on `space` until done(q) is true or the deadline passes. */
static int wait_space(struct event_queue *q, uint64_t deadline_usec,
                      int (*done)(const struct event_queue *q))
{
        bool timed_out = false;
        int r;

        pthread_mutex_lock(&q->lock);
        q->n_space_waiters++;
        for (;;) {
                r = done(q);
                if (r <= 0)
                        break;
                if (timed_out) {
                        r = -ETIMEDOUT;
                        break;
                }
                timed_out = cond_wait_until(&q->space, &q->lock, deadline_usec) == -ETIMEDOUT;
        }
        q->n_space_waiters--;
        pthread_mutex_unlock(&q->lock);
        return r;
}

/* 0: below the resume mark, -ESHUTDOWN, 1: keep waiting. */
static int capacity_done(const struct event_queue *q)
{
        if (q->shutdown)
                return -ESHUTDOWN;
        return below_resume_mark_locked(q) ? 0 : 1;
}

int event_queue_wait_capacity(struct event_queue *q, uint64_t deadline_usec)
{
        return wait_space(q, deadline_usec, capacity_done);
}

size_t event_queue_room(struct event_queue *q)
{
        size_t room;

        pthread_mutex_lock(&q->lock);
        room = q->shutdown ? 0 : room_locked(q);
        pthread_mutex_unlock(&q->lock);
        return room;
}

void event_queue_set_max_bytes(struct event_queue *q, size_t max_bytes)
{
        pthread_mutex_lock(&q->lock);
        q->max_bytes = max_bytes;
        if (q->n_space_waiters > 0 && below_resume_mark_locked(q))
                pthread_cond_broadcast(&q->space);
        pthread_mutex_unlock(&q->lock);
}

static int empty_done(const struct event_queue *q)
{
        return total_locked(q) == 0 ? 0 : 1;
}

int event_queue_wait_empty(struct event_queue *q, uint64_t deadline_usec)
{
        return wait_space(q, deadline_usec, empty_done);
}

/* Wait for an event the caller may start and lend it; NULL at shutdown.
 * Never asks for a worker: whoever made the work available did. */
static struct queued_event *take_locked(struct event_queue *q)
{
        struct queued_event *qe;

        for (;;) {
                uint64_t next = USEC_INFINITY;

                if (q->n_delayed > 0) {
                        uint64_t now = now_usec(CLOCK_MONOTONIC);
                        next = promote_delayed_locked(q, due_by_time, &now);
                }
                if (takeable_locked(q) > 0)
                        break;
                if (q->shutdown && (q->paused || q->n_queued == 0))
                        return NULL;
                q->n_waiting++;
                /* With delayed events, sleep at most until the earliest is due. */
                (void)cond_wait_until(&q->takers, &q->lock, next);
                q->n_waiting--;
                /* Also after a timeout: an undercount only costs extra wake-ups. */
                if (q->n_signalled > 0)
                        q->n_signalled--;
        }

        qe = runnable_pop_locked(q);
        list_remove(&q->queued, qe);
        q->n_queued--;
        qe->state = QE_RUNNING;
        qe->start_usec = now_usec(CLOCK_MONOTONIC);
        list_append(&q->lent, qe);
        q->n_running++;

        if (q->shutdown && q->n_queued == 0)
                pthread_cond_broadcast(&q->takers); /* the others may leave now */
        else
                wake_takers_locked(q); /* make up for a wake-up lost to a spurious one */
        return qe;
}

struct queued_event *event_queue_take(struct event_queue *q)
{
        struct queued_event *qe;

        pthread_mutex_lock(&q->lock);
        qe = take_locked(q);
        pthread_mutex_unlock(&q->lock);
        return qe;
}

/* Complete qe; with `will_take` the caller takes the next event right after
 * (and wakes takers for whatever it leaves), so nobody is woken here. */
static void done_locked(struct event_queue *q, struct queued_event *qe, bool will_take)
{
        assert(qe->state != QE_QUEUED);
        list_remove(&q->lent, qe);
        if (qe->state == QE_RUNNING) {
                release_locked(q, qe);
                running_release_locked(q);
                uncharge_locked(q, qe);
                q->done_total++;
                count_decreased_locked(q);
                if (!will_take)
                        wake_takers_locked(q);
        }
}

void event_queue_done(struct event_queue *q, struct queued_event *qe)
{
        if (!qe)
                return;

        pthread_mutex_lock(&q->lock);
        done_locked(q, qe, false);
        pthread_mutex_unlock(&q->lock);
        qe_free(qe);
}

struct queued_event *event_queue_done_take(struct event_queue *q, struct queued_event *qe)
{
        struct queued_event *next;

        pthread_mutex_lock(&q->lock);
        if (qe)
                done_locked(q, qe, true);
        next = take_locked(q);
        pthread_mutex_unlock(&q->lock);
        qe_free(qe);
        return next;
}

void event_queue_set_max_running(struct event_queue *q, unsigned max_running)
{
        bool need;

        pthread_mutex_lock(&q->lock);
        q->max_running = max_running;
        need = rewake_locked(q);
        pthread_mutex_unlock(&q->lock);
        if (need)
                q->hooks.on_need_worker(q->hooks.userdata);
}

int event_queue_requeue(struct event_queue *q, struct queued_event *qe, uint64_t delay_usec,
                        uint64_t timeout_usec)
{
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        bool need;

        pthread_mutex_lock(&q->lock);
        if (qe->state != QE_RUNNING ||
            atomic_load(&qe->result_owner) != QE_RESULT_OPEN) {
                pthread_mutex_unlock(&q->lock);
                return -ECANCELED;
        }
        if (q->shutdown) {
                pthread_mutex_unlock(&q->lock);
                return -ESHUTDOWN;
        }
        if (qe->retry_until > 0 && now >= qe->retry_until) {
                pthread_mutex_unlock(&q->lock);
                return -ETIMEDOUT;
        }
        if (qe->retry_until == 0)
                qe->retry_until = timeout_usec > UINT64_MAX - now ? UINT64_MAX : now + timeout_usec;
        qe->not_before = delay_usec > UINT64_MAX - now ? UINT64_MAX : now + delay_usec;

        /* Back to queued; it stays in the indexes and keeps its dependants. */
        list_remove(&q->lent, qe);
        qe->state = QE_QUEUED;
        list_append(&q->queued, qe);
        running_release_locked(q);
        q->n_queued++;
        if (delay_usec == 0) {
                runnable_append_locked(q, qe);
                wake_takers_locked(q);
        } else {
                delayed_append_locked(q, qe);
                /* Waiting takers re-arm their sleep with the new earliest time. */
                pthread_cond_broadcast(&q->takers);
        }
        need = need_worker_locked(q);
        pthread_mutex_unlock(&q->lock);
        if (need)
                q->hooks.on_need_worker(q->hooks.userdata);
        return 0;
}

void event_queue_retry_disk(struct event_queue *q, const char *disk_devpath)
{
        bool need = false;

        pthread_mutex_lock(&q->lock);
        if (q->n_delayed > 0) {
                size_t before = q->n_delayed;

                (void)promote_delayed_locked(q, due_by_disk, disk_devpath);
                if (q->n_delayed != before)
                        need = rewake_locked(q);
        }
        pthread_mutex_unlock(&q->lock);
        if (need)
                q->hooks.on_need_worker(q->hooks.userdata);
}

const struct uevent *queued_event_uevent(const struct queued_event *qe)
{
        return qe->ev;
}

uint64_t queued_event_start_usec(const struct queued_event *qe)
{
        return qe->start_usec;
}

uint64_t queued_event_first_seqnum(const struct queued_event *qe)
{
        return qe->first_ev ? qe->first_ev->seqnum : qe->ev->seqnum;
}

unsigned queued_event_merged(const struct queued_event *qe)
{
        return qe->n_merged;
}

void event_queue_set_coalesce(struct event_queue *q, bool coalesce)
{
        pthread_mutex_lock(&q->lock);
        q->coalesce = coalesce;
        pthread_mutex_unlock(&q->lock);
}

void event_queue_set_paused(struct event_queue *q, bool paused)
{
        bool need = false;

        pthread_mutex_lock(&q->lock);
        q->paused = paused;
        if (q->shutdown)
                pthread_cond_broadcast(&q->takers);
        else if (!paused) {
                wake_takers_locked(q);
                need = need_worker_locked(q);
        }
        pthread_mutex_unlock(&q->lock);
        if (need)
                q->hooks.on_need_worker(q->hooks.userdata);
}

/* Free every queued event. All dependants of a running event are queued
 * (blocked), so the running events simply forget theirs. */
static struct queued_event *drop_queued_locked(struct event_queue *q)
{
        struct queued_event *dropped = q->queued.head;

        for (struct queued_event *qe = q->lent.head; qe; qe = qe->next)
                if (qe->state == QE_RUNNING)
                        dep_node_forget_dependants(qe->deps);
        for (struct queued_event *qe = q->queued.head; qe; qe = qe->next) {
                event_deps_remove(&q->deps, qe->deps, NULL, NULL);
                uncharge_locked(q, qe);
        }
        q->queued = (struct qe_list){ NULL, NULL };
        minheap_clear(&q->runnable);
        q->n_runnable = 0;
        q->delayed = NULL;
        q->n_delayed = 0;
        q->n_queued = 0;
        count_decreased_locked(q);
        return dropped;
}

void event_queue_shutdown(struct event_queue *q, bool drop_queued)
{
        struct queued_event *dropped = NULL;

        pthread_mutex_lock(&q->lock);
        q->shutdown = true;
        if (drop_queued)
                dropped = drop_queued_locked(q);
        pthread_cond_broadcast(&q->takers);
        pthread_cond_broadcast(&q->space);
        pthread_mutex_unlock(&q->lock);
        qe_free_chain(dropped);
}

void event_queue_get_stats(struct event_queue *q, struct event_queue_stats *ret)
{
        pthread_mutex_lock(&q->lock);
        *ret = (struct event_queue_stats){
                .queued = q->n_queued,
                .running = q->n_running,
                .runnable = q->n_runnable,
                .delayed = q->n_delayed,
                .startable = takeable_locked(q),
                .pushed_total = q->pushed_total,
                .done_total = q->done_total,
                .coalesced_total = q->coalesced_total,
                .bytes = q->bytes,
                .bytes_peak = q->bytes_peak,
                .max_events = q->capacity,
                .max_bytes = q->max_bytes,
                .space_waiters = q->n_space_waiters,
        };
        pthread_mutex_unlock(&q->lock);
}

void event_queue_foreach_running(struct event_queue *q,
                                 void (*cb)(struct queued_event *qe, void *userdata),
                                 void *userdata)
{
        uint64_t done_before;
        bool need;

        pthread_mutex_lock(&q->lock);
        done_before = q->done_total;
        /* Abandoned events stay on the list, so the callback may abandon any. */
        for (struct queued_event *qe = q->lent.head; qe; qe = qe->next)
                if (qe->state == QE_RUNNING)
                        cb(qe, userdata);
        need = q->done_total != done_before && !q->shutdown && need_worker_locked(q);
        pthread_mutex_unlock(&q->lock);
        if (need)
                q->hooks.on_need_worker(q->hooks.userdata);
}

void event_queue_foreach_pending(struct event_queue *q,
                                 bool (*cb)(const struct queue_pending_info *info,
                                            void *userdata),
                                 void *userdata)
{
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        bool go = true;

        pthread_mutex_lock(&q->lock);
        for (struct queued_event *qe = q->lent.head; qe && go; qe = qe->next) {
                if (qe->state != QE_RUNNING)
                        continue;
                const struct queue_pending_info info = {
                        .ev = qe->ev, .first_seqnum = queued_event_first_seqnum(qe),
                        .running = true,
                        .start_usec = qe->start_usec,
                };
                go = cb(&info, userdata);
        }
        for (struct queued_event *qe = q->queued.head; qe && go; qe = qe->next) {
                const struct queue_pending_info info = {
                        .ev = qe->ev, .first_seqnum = queued_event_first_seqnum(qe),
                        .delayed = qe->not_before > now,
                        .blockers = qe->deps ? dep_node_blockers(qe->deps) : 0,
                };
                go = cb(&info, userdata);
        }
        pthread_mutex_unlock(&q->lock);
}

bool queued_event_abandon_locked(struct event_queue *q, struct queued_event *qe)
{
        int open = QE_RESULT_OPEN;

        if (qe->state != QE_RUNNING)
                return false;
        if (!atomic_compare_exchange_strong(&qe->result_owner, &open, QE_RESULT_ABANDONED))
                return false; /* the worker is already publishing its result */
        qe->state = QE_ABANDONED;
        release_locked(q, qe);
        running_release_locked(q);
        uncharge_locked(q, qe);
        q->done_total++;
        count_decreased_locked(q);
        wake_takers_locked(q);
        return true;
}

bool queued_event_abandoned(const struct queued_event *qe)
{
        return atomic_load(&((struct queued_event *)qe)->result_owner) == QE_RESULT_ABANDONED;
}

bool queued_event_claim_result(struct queued_event *qe)
{
        int open = QE_RESULT_OPEN;

        if (atomic_compare_exchange_strong(&qe->result_owner, &open, QE_RESULT_WORKER))
                return true;
        return open == QE_RESULT_WORKER;
}
