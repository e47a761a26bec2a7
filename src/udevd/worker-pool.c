/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: manager (set_max, join), any thread (grow: from the queue's on_need_worker
 * hook, so also worker threads), worker threads (worker_main) */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "builtins/builtin.h"
#include "shared/log.h"
#include "shared/thread-util.h"
#include "shared/time-util.h"
#include "udevd/event-process.h"
#include "udevd/event-queue.h"
#include "udevd/stats.h"
#include "udevd/watch.h"
#include "udevd/worker-pool.h"

/* Block device locking: a locked block device's event is retried every
 * 200 ms, for at most 3 minutes after the first attempt (systemd's
 * EVENT_RETRY_INTERVAL_USEC and EVENT_RETRY_TIMEOUT_USEC). */
#define EVENT_RETRY_INTERVAL_USEC (200 * USEC_PER_MSEC)
#define EVENT_RETRY_TIMEOUT_USEC (180 * USEC_PER_SEC)

struct worker {
        struct worker_pool *pool;
        pthread_t thread;
        unsigned id;
        struct worker_program program; /* the program it waits for (event-process.h) */
};

struct worker_pool {
        struct event_queue *queue;               /* borrowed */
        const struct udevd_settings *settings;   /* borrowed */
        struct snapshot_holder *snapshots;       /* borrowed: rules + global properties */
        struct watch *watch;                     /* owned; NULL: no inotify watches */
        pthread_mutex_t lock;                    /* protects workers[], n_workers, max */
        struct worker *workers[UDEVD_CHILDREN_MAX_LIMIT];
        unsigned n_workers;
        unsigned max;
        bool joining;
        _Atomic unsigned busy; /* workers between take() and done() */
        _Atomic uint64_t processed, failed;
};

/* Called by the pipeline right before the broadcast: true = give up. */
static bool event_abandoned(const void *token)
{
        return !queued_event_claim_result((struct queued_event *)token);
}

/* The event's block device is locked: put it back into the queue, or give up
 * on it once the retry time is over. Returns true if the event was requeued
 * (no longer ours). */
static bool requeue_locked_event(struct worker_ctx *w, struct worker_pool *p,
                                 struct queued_event *qe)
{
        const struct uevent *ev = queued_event_uevent(qe);
        int r;

        r = event_queue_requeue(p->queue, qe, EVENT_RETRY_INTERVAL_USEC,
                                EVENT_RETRY_TIMEOUT_USEC);
        if (r == 0)
                return true;
        if (r == -ETIMEDOUT) {
                log_warning("SEQNUM=%" PRIu64 " %s: the block device has been locked by another "
                            "process for more than %u s, skipping the event", ev->seqnum,
                            ev->devpath, (unsigned)(EVENT_RETRY_TIMEOUT_USEC / USEC_PER_SEC));
                if (queued_event_claim_result(qe)) {
                        r = event_broadcast_failure(&w->bc, ev, -ETIMEDOUT);
                        if (r < 0)
                                log_error_errno(r, "SEQNUM=%" PRIu64 " %s: failed to broadcast: %m",
                                                ev->seqnum, ev->devpath);
                }
        } else if (r == -ESHUTDOWN) {
                log_info("SEQNUM=%" PRIu64 " %s: the block device is locked by another process; "
                         "dropping the event at exit", ev->seqnum, ev->devpath);
        }
        /* -ECANCELED: abandoned, the manager has broadcast it */
        return false;
}

static void *worker_main(void *userdata)
{
        struct worker *self = userdata;
        struct worker_pool *p = self->pool;
        struct worker_ctx w = {
                .id = self->id,
                .bc = BROADCASTER_NULL,
                .settings = p->settings,
                .snapshots = p->snapshots,
                .watch = p->watch,
                .program = &self->program,
        };
        int r;

        thread_set_name("udevd-worker");
        r = broadcaster_open(&w.bc);
        if (r < 0)
                log_error_errno(r, "worker %u: failed to open the broadcast socket: %m", self->id);

        struct queued_event *qe = event_queue_take(p->queue);
        while (qe) {
                atomic_fetch_add(&p->busy, 1);
                const struct uevent *ev = queued_event_uevent(qe);
                r = event_process(&w, ev, event_abandoned, qe);
                if (r == EVENT_PROCESS_LOCKED && requeue_locked_event(&w, p, qe)) {
                        atomic_fetch_sub(&p->busy, 1);
                        qe = event_queue_take(p->queue);
                        continue;
                }
                atomic_fetch_add(r != 0 ? &p->failed : &p->processed, 1);
                w.timing.received = ev->recv_usec;
                w.timing.queued = ev->queued_usec;
                w.timing.started = queued_event_start_usec(qe);
                stats_event_done(ev->subsystem, ev->action, &w.timing, r != 0);
                atomic_fetch_sub(&p->busy, 1);
                qe = event_queue_done_take(p->queue, qe);
        }

        broadcaster_close(&w.bc);
        builtins_thread_exit(); /* this thread's libkmod context, hwdb mapping, ... */
        log_debug("worker %u: exiting", self->id);
        return NULL;
}

int worker_pool_new(struct event_queue *q, const struct udevd_settings *settings,
                    unsigned max_workers, struct worker_pool **ret)
{
        struct worker_pool *p = calloc(1, sizeof(*p));
        int r;

        if (!p)
                return -ENOMEM;
        p->queue = q;
        p->settings = settings;
        p->max = MIN(MAX(max_workers, 1u), (unsigned)UDEVD_CHILDREN_MAX_LIMIT);
        pthread_mutex_init(&p->lock, NULL);
        /* The inotify watches belong to the workers' pipeline; started here (at
         * daemon start-up, before any event) so that watches recorded by a
         * previous instance are restored. Without it events still run. */
        r = watch_new(settings->run_dir, "/sys", q, &p->watch);
        if (r < 0)
                log_warning_errno(r, "Failed to set up inotify watches, OPTIONS+=\"watch\" "
                                  "will have no effect: %m");
        *ret = p;
        return 0;
}

/* Start one worker; called with p->lock held. */
static int start_worker_locked(struct worker_pool *p)
{
        struct worker *w;
        int r;

        w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        w->pool = p;
        w->id = p->n_workers;
        pthread_mutex_init(&w->program.lock, NULL);
        r = thread_start(&w->thread, worker_main, w);
        if (r < 0) {
                pthread_mutex_destroy(&w->program.lock);
                free(w);
                return r;
        }
        p->workers[p->n_workers++] = w;
        return 0;
}

void worker_pool_set_snapshots(struct worker_pool *p, struct snapshot_holder *h)
{
        p->snapshots = h;
}

void worker_pool_grow(struct worker_pool *p)
{
        struct event_queue_stats qs;
        unsigned started = 0;

        /* Start as many workers as there are events the queue lets start
         * that no free (idle or just started) worker will take, up to the
         * limit: a burst gets its parallelism at once, not one thread per
         * wake-up. */
        event_queue_get_stats(p->queue, &qs);
        pthread_mutex_lock(&p->lock);
        unsigned busy = atomic_load(&p->busy);
        unsigned free_workers = p->n_workers > busy ? p->n_workers - busy : 0;
        size_t want = qs.startable > free_workers ? qs.startable - free_workers : 0;
        if (want == 0 && p->n_workers == 0 && qs.queued > 0)
                want = 1;
        while (!p->joining && want > 0 && p->n_workers < p->max) {
                int r = start_worker_locked(p);
                if (r < 0) {
                        log_error_errno(r, "Failed to start a worker thread: %m");
                        break;
                }
                want--;
                started++;
        }
        unsigned n = p->n_workers;
        pthread_mutex_unlock(&p->lock);
        if (started > 0)
                log_debug("started %u worker(s), %u in total", started, n);
}

void worker_pool_set_max(struct worker_pool *p, unsigned max_workers)
{
        pthread_mutex_lock(&p->lock);
        p->max = MIN(MAX(max_workers, 1u), (unsigned)UDEVD_CHILDREN_MAX_LIMIT);
        pthread_mutex_unlock(&p->lock);
        /* Threads above a lowered limit stay, but the queue lets at most
         * max_running events run at once. */
        event_queue_set_max_running(p->queue, max_workers);
}

void worker_pool_join(struct worker_pool *p)
{
        pthread_mutex_lock(&p->lock);
        p->joining = true;
        pthread_mutex_unlock(&p->lock);
        /* No thread is created after `joining` is set, so n_workers is stable. */
        for (unsigned i = 0; i < p->n_workers; i++) {
                pthread_join(p->workers[i]->thread, NULL);
                pthread_mutex_destroy(&p->workers[i]->program.lock);
                free(p->workers[i]);
                p->workers[i] = NULL;
        }
        pthread_mutex_lock(&p->lock);
        p->n_workers = 0;
        pthread_mutex_unlock(&p->lock);
        /* After the workers (they add watches); the records stay for the next
         * instance. */
        watch_free(p->watch);
        p->watch = NULL;
}

void worker_pool_free(struct worker_pool *p)
{
        if (!p)
                return;
        worker_pool_join(p);
        pthread_mutex_destroy(&p->lock);
        free(p);
}

void worker_pool_get_stats(struct worker_pool *p, struct worker_pool_stats *ret)
{
        pthread_mutex_lock(&p->lock);
        ret->workers = p->n_workers;
        pthread_mutex_unlock(&p->lock);
        ret->processed = atomic_load(&p->processed);
        ret->failed = atomic_load(&p->failed);
        ret->watch_limited = watch_limited(p->watch);
}

void worker_pool_foreach_program(struct worker_pool *p,
                                 void (*cb)(const struct worker_program_info *info,
                                            void *userdata),
                                 void *userdata)
{
        pthread_mutex_lock(&p->lock);
        for (unsigned i = 0; i < p->n_workers; i++) {
                struct worker_program *wp = &p->workers[i]->program;
                struct worker_program_info info = { .worker = i };
                bool running;

                pthread_mutex_lock(&wp->lock);
                running = wp->running;
                info.seqnum = wp->seqnum;
                info.start_usec = wp->start_usec;
                memcpy(info.name, wp->name, sizeof(info.name));
                pthread_mutex_unlock(&wp->lock);
                if (running)
                        cb(&info, userdata);
        }
        pthread_mutex_unlock(&p->lock);
}

unsigned worker_pool_busy(struct worker_pool *p)
{
        return atomic_load(&p->busy);
}

void worker_pool_abandon(struct worker_pool *p)
{
        pthread_mutex_lock(&p->lock);
        p->joining = true;
        for (unsigned i = 0; i < p->n_workers; i++)
                pthread_detach(p->workers[i]->thread);
        pthread_mutex_unlock(&p->lock);
}
