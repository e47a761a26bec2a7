/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (publish: manager; get/unref: any thread) */
#pragma once
/* What the workers read from the manager for each event: the compiled rules and
 * the global properties (udevadm control --property), as one immutable,
 * refcounted snapshot (the pointer swap happens under a tiny mutex, so a get()
 * never races the last unref of the snapshot being replaced). A worker takes
 * one reference per event, so an event runs entirely with the rules it started
 * with; a reload never blocks workers. */

#include <pthread.h>
#include <stdatomic.h>

#include "device/db.h"
#include "rules/rules.h"
#include "event/udev-event.h"

struct udevd_snapshot {
        atomic_uint n_ref;
        struct rules *rules;          /* owned reference; NULL = no rules */
        struct proplist global_props; /* owned */
        unsigned generation;          /* 1, 2, ... per publish: a rules load or a
                                       * change of the global properties */
};

struct snapshot_holder {
        pthread_mutex_t lock;
        struct udevd_snapshot *cur; /* owned reference */
        unsigned generation;
};

void snapshot_holder_init(struct snapshot_holder *h);
/* Drops the current snapshot (workers may still hold references). */
void snapshot_holder_done(struct snapshot_holder *h);

/* Publish a new snapshot: takes `rules` (a reference; NULL = no rules),
 * copies the "KEY=VALUE" entries of `global_env` (borrowed, may be NULL).
 * 0 or -ENOMEM (then nothing changes and `rules` is released). */
int snapshot_publish(struct snapshot_holder *h, struct rules *rules,
                     const struct strlist *global_env);

/* Generation of the current snapshot (0 before the first publish). Any
 * thread. */
unsigned snapshot_generation(struct snapshot_holder *h);

/* New reference to the current snapshot, or NULL if none was published. */
struct udevd_snapshot *snapshot_get(struct snapshot_holder *h);
void snapshot_unref(struct udevd_snapshot *s);
