/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: none of its own (pure data; the event queue calls it under its lock) */
#pragma once
/* The admission policy: whether one more runnable event may start now.
 *
 * A running event is *waiting* while its worker waits for another process
 * (a program, the exec helper's reply, a blkid prober: whatever calls
 * blocking_enter()),
 * else *computing*.
 *   - At most max_running events run at once (children_max; 0: no limit).
 *   - At most `cpus` of them compute at once (0: no such limit); waiting
 *     events do not count against it.
 *   - Stall rule: when none of the running events has made progress (an
 *     event started or finished, a wait began or ended) for stall_usec, one
 *     more event may start beyond the per-CPU limit (never beyond
 *     max_running); its start is progress, so the next one needs another
 *     stall period.
 * This keeps CPU-bound events back to back on as many threads as there are
 * CPUs, while events stuck on the kernel or a lock cannot stall the queue.
 * Which event starts (arrival order, dependencies) is the queue's business.
 *
 * The clock is passed in (`now`, CLOCK_MONOTONIC µs, never going back): the
 * module reads no clock and takes no lock; the caller serialises every call
 * on one struct admission. Each transition must match the event's state:
 * admission_wait_begins() only for a running computing event, and so on. */

#include <stdbool.h>
#include <stdint.h>

struct admission {
        /* configuration (admission_init(), admission_set_limits()) */
        unsigned cpus;          /* computing events at once; 0: no limit */
        unsigned max_running;   /* running events at once; 0: no limit */
        uint64_t stall_usec;    /* the stall period */
        /* counts */
        unsigned running;       /* started and not finished */
        unsigned waiting;       /* ... of which waiting for another process */
        uint64_t last_progress; /* `now` of the last transition (0: none yet) */
};

void admission_init(struct admission *a, unsigned cpus, unsigned max_running,
                    uint64_t stall_usec);
/* Change the limits; the counts stay (running events above a lowered limit
 * run on, no new one starts until they are below it). */
void admission_set_limits(struct admission *a, unsigned cpus, unsigned max_running,
                          uint64_t stall_usec);

/* Transitions of one event. */
void admission_started(struct admission *a, uint64_t now);
/* A running event finished (or went back to the queue, or was given up);
 * `waiting`: whether it was waiting then. */
void admission_finished(struct admission *a, bool waiting, uint64_t now);
void admission_wait_begins(struct admission *a, uint64_t now);
void admission_wait_ends(struct admission *a, uint64_t now);

/* How many more events may start at `now` if there are enough of them:
 * room below max_running, cut to the room below the per-CPU limit, or to
 * one when only the stall rule allows a start. UINT32_MAX: no limit. */
unsigned admission_room(const struct admission *a, uint64_t now);
/* Room below max_running alone. */
unsigned admission_hard_room(const struct admission *a);
/* The earliest time at which one more event may start if no transition
 * happens before: 0 when one may start whatever the time (room below both
 * limits), last_progress + stall_usec when only the stall rule can let one
 * start, UINT64_MAX when only a transition can (max_running reached). */
uint64_t admission_deadline(const struct admission *a);
