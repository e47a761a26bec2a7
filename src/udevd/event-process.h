/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: worker-local, except event_broadcast_failure(): any thread, with a
 * broadcaster of its own (the manager thread calls it for timed-out events) */
#pragma once
/* The per-event pipeline run by a worker thread, in the order of
 * systemd-udevd's worker (udevd(8) DESCRIPTION):
 *
 *   build the device view and the udev_event (event/udev-event.h) from the
 *   kernel record, read the old DB record, then rules/event-exec.h:
 *   non-remove: old tags become sticky -> rules -> node permissions, links,
 *               /dev/{block,char} -> USEC_INITIALIZED -> tag index -> DB write
 *   remove:     old DB record loaded into the event -> tag index and DB
 *               deleted -> rules -> links released
 *   then the RUN list (programs through the spawner) and the broadcast of the
 *   event's properties (+ USEC_INITIALIZED, DEVLINKS, TAGS, CURRENT_TAGS).
 *
 * The rules and global properties come from the manager's snapshot
 * (udevd/rules-snapshot.h): one reference per event.
 *
 * Around that (block device locking and OPTIONS+="watch", see tudev-rules(7)
 * OPTIONS IN RULES): for block devices the whole disk's node is locked
 * with flock(LOCK_SH|LOCK_NB) for the whole event; if another process holds
 * LOCK_EX the event is not processed (EVENT_PROCESS_LOCKED: the caller
 * requeues it). The inotify watch of the device is ended before the rules and
 * begun again after RUN if the rules set OPTIONS+="watch" (not on remove).
 * A log level set by OPTIONS+="log_level=" is reset when the event ends.
 *
 * Every program it spawns is counted (stats_count_program()) and shown in
 * w->program while it runs.
 *
 * On failure the event is broadcast with UDEV_WORKER_FAILED=1 and
 * UDEV_WORKER_ERRNO/UDEV_WORKER_ERRNO_NAME (positive errno and its name),
 * the failure properties systemd PID 1 and other listeners look at. */

#include <pthread.h>
#include <stdbool.h>

#include "proto/uevent.h"
#include "udevd/broadcast.h"
#include "udevd/settings.h"
#include "udevd/stats.h"

struct snapshot_holder;
struct watch;

/* The program a worker waits for right now, for the "pending" query
 * (settle's report): written by the worker around each spawn, read by the
 * manager, both under `lock`. */
#define WORKER_PROGRAM_NAME_MAX 64
struct worker_program {
        pthread_mutex_t lock;
        bool running;
        uint64_t seqnum;                      /* the event it runs for */
        char name[WORKER_PROGRAM_NAME_MAX];   /* argv[0] as the rule wrote it, cut */
        uint64_t start_usec;                  /* CLOCK_MONOTONIC */
};

struct worker_ctx {
        unsigned id;
        struct broadcaster bc;                   /* owned by this thread */
        const struct udevd_settings *settings;   /* borrowed, immutable */
        struct snapshot_holder *snapshots;       /* borrowed; NULL = no rules */
        struct watch *watch;                     /* borrowed; NULL = no inotify watches */
        struct worker_program *program;          /* borrowed; NULL = not tracked */
        /* Set by event_process(): the stage timestamps of the event it ran
         * (received, queued and started are the caller's to fill). */
        struct stats_timing timing;
};

/* event_process(): the whole disk is locked by another process; nothing was
 * done (no broadcast): requeue the event. */
#define EVENT_PROCESS_LOCKED 1

/* Broadcast the kernel version of `ev` with failure properties for `error`
 * (negative errno), e.g. for an event abandoned after its timeout. Called
 * from worker threads and from the manager thread (manager.c, the event
 * timeout), each with its own broadcaster. */
int event_broadcast_failure(struct broadcaster *bc, const struct uevent *ev, int error);

/* Returns 0 when the event was processed and broadcast, EVENT_PROCESS_LOCKED
 * (see above), or -errno when it failed (it has then been broadcast with
 * failure properties, unless `abandoned` says the manager gave up on it).
 * `abandoned` may be NULL. */
int event_process(struct worker_ctx *w, const struct uevent *ev,
                  bool (*abandoned)(const void *token), const void *token);
