/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (the ring's own mutex; see each function) */
#pragma once
/* The traces of recent events, for `udevadm explain` (udevadm(8) UDEVADM
 * EXPLAIN). Every worker records a compact rules trace of each event
 * (rules/rules-trace.h: lines, failing keys and values, programs and
 * builtins with their times; rule lines are not timed) into a trace buffer
 * of its own thread, then pushes a copy here. The ring keeps the newest
 * `max_events` events (udevd --explain-events=N, udev.conf explain_events=N;
 * default EXPLAIN_EVENTS_DEFAULT) within `max_bytes` (N *
 * EXPLAIN_BYTES_PER_EVENT), dropping the oldest first. The copies live in
 * one arena of `max_bytes` mapped at creation: nothing is allocated per
 * event, and the memory the ring touches never exceeds `max_bytes` plus its
 * slot table (32 bytes a slot), however the traces' sizes vary. With Debian
 * 12's rules a net "add" takes 880 bytes, a disk's "add" 1,352, so the
 * default keeps 256 net events, or about 190 disk events.
 *
 * Each kept trace holds a reference to the rules it ran with (it is
 * formatted with them); to bound what old rules cost after reloads, at most
 * EXPLAIN_RING_RULESETS distinct rule sets are kept, the oldest events going
 * first.
 *
 * The manager answers the "explain" control query (udevd/query.h) from it.
 * There is at most one ring per process (explain_ring_global()); with
 * explain_events=0 there is none and no event is traced. */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "udevd/query.h"

#define EXPLAIN_EVENTS_DEFAULT 256
#define EXPLAIN_EVENTS_MAX 65536
#define EXPLAIN_BYTES_PER_EVENT ((size_t)1024)
#define EXPLAIN_RING_RULESETS 4
/* Record space of one worker's trace buffer (malloc'd once per thread;
 * only the pages its longest trace reached are touched). */
#define EXPLAIN_TRACE_SIZE ((size_t)16 * 1024)

struct explain_ring;
struct rules;
struct rules_trace;

/* A ring of at most `max_events` traces (1..EXPLAIN_EVENTS_MAX) in an arena
 * of `max_bytes` (1..EXPLAIN_EVENTS_MAX * EXPLAIN_BYTES_PER_EVENT). 0,
 * -EINVAL or -ENOMEM. */
int explain_ring_new(size_t max_events, size_t max_bytes, struct explain_ring **ret);
/* Drops every kept trace and its rules reference. No thread may use the ring
 * any more. */
void explain_ring_free(struct explain_ring *r);

/* The process's ring (set by the manager; NULL = traces are not kept). */
void explain_ring_set_global(struct explain_ring *r);
struct explain_ring *explain_ring_global(void);

/* Worker: the calling thread's trace buffer (EXPLAIN_TRACE_SIZE, compact),
 * created on first use and freed when the thread exits; reset, ready for one
 * event. NULL when out of memory (the event is then not traced). */
struct rules_trace *explain_thread_trace(void);

/* Worker: keep a copy of `t`, recorded with `rules` (a reference is taken),
 * dropping the oldest traces to make room. A trace larger than the whole
 * arena is not kept. Never allocates; the copy is made under the lock. */
void explain_ring_push(struct explain_ring *r, const struct rules_trace *t, struct rules *rules);

/* Format the newest kept trace of the event with DEVPATH `devpath` (NULL or
 * "": any device) and, if seqnum > 0, that SEQNUM. 0, -ENOENT when none is
 * kept, or -EIO. Any thread; the formatting happens outside the lock. */
int explain_ring_format(struct explain_ring *r, const char *devpath, uint64_t seqnum, FILE *f);

/* Events kept and their bytes in the arena (tests). Any thread. */
size_t explain_ring_count(struct explain_ring *r, size_t *ret_bytes);

/* The same and the limits, for udevadm stats. Any thread. */
struct explain_ring_stats {
        size_t events, bytes;          /* kept now */
        size_t max_events, max_bytes;  /* the ring's size */
};
void explain_ring_get_stats(struct explain_ring *r, struct explain_ring_stats *ret);

/* The "explain" query: ARGS = "[seqnum=N] [DEVPATH]" (at least one). Writes
 * the trace (udevadm(8) EXPLAIN OUTPUT); -ENOENT when no such event is kept,
 * -EINVAL for bad arguments, -EOPNOTSUPP when tracing is off. userdata: the
 * ring, NULL when tracing is off (explain_events=0). */
int explain_query(const char *args, struct query_out *out, void *userdata);
