/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: manager (API), except worker_pool_grow(): any thread (the queue's
 * on_need_worker hook runs it on the listener and on worker threads); worker
 * threads (internals) */
#pragma once
/* The pool of worker threads. Each worker owns its own libudev context and its
 * own broadcast socket, created and freed in that thread; it takes runnable
 * events from the queue, runs the per-event pipeline (event-process.h) and
 * reports nothing back except through the queue (event_queue_done).
 *
 * Workers are started on demand (the queue's on_need_worker hook) up to the
 * current limit and stay until shutdown. */

#include <stdint.h>

#include "udevd/settings.h"

struct event_queue;
struct worker_pool;

struct worker_pool_stats {
        uint64_t processed; /* events finished successfully */
        uint64_t failed;    /* events that failed (broadcast with UDEV_WORKER_FAILED) */
        unsigned workers;   /* threads started */
        uint64_t watch_limited; /* inotify close events not turned into a change
                                 * (udevd/watch.h rate limit) */
};

/* Borrows q and settings for its lifetime. */
int worker_pool_new(struct event_queue *q, const struct udevd_settings *settings,
                    unsigned max_workers, struct worker_pool **ret);
/* Where workers take the rules and global properties from (borrowed); set
 * before the first worker starts. */
struct snapshot_holder;
void worker_pool_set_snapshots(struct worker_pool *p, struct snapshot_holder *h);
/* Start the workers the queue asks for (events it lets start that no idle
 * worker will take), up to the limit. Any thread. */
void worker_pool_grow(struct worker_pool *p);
void worker_pool_set_max(struct worker_pool *p, unsigned max_workers);
/* Join all workers: call after event_queue_shutdown(). */
void worker_pool_join(struct worker_pool *p);
void worker_pool_free(struct worker_pool *p);
/* Give up on the workers (exit while some are stuck in abandoned events):
 * detach every thread; the process is about to _exit(). */
void worker_pool_abandon(struct worker_pool *p);
/* Workers currently processing an event (including abandoned ones). */
unsigned worker_pool_busy(struct worker_pool *p);
void worker_pool_get_stats(struct worker_pool *p, struct worker_pool_stats *ret);

/* A program a worker waits for (udevd/event-process.h, struct
 * worker_program), copied. */
struct worker_program_info {
        unsigned worker;
        uint64_t seqnum;     /* the event it runs for */
        char name[64];       /* argv[0] as written in the rule */
        uint64_t start_usec; /* CLOCK_MONOTONIC */
};
/* Call cb for every program a worker runs right now (under the pool's
 * lock: cb must be quick and must not call into the pool). Manager thread. */
void worker_pool_foreach_program(struct worker_pool *p,
                                 void (*cb)(const struct worker_program_info *info,
                                            void *userdata),
                                 void *userdata);
