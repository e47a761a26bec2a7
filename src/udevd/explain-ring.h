/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (the ring's own mutex; see each function) */
#pragma once
/* The traces of recent events, for `udevadm explain` (udevadm(8) UDEVADM
 * EXPLAIN). Every worker records a compact rules trace of each event
 * (rules/rules-trace.h: lines, failing keys and values, programs and
 * builtins with their times; rule lines are not timed) into a trace buffer
 * of its own thread, then pushes an exactly sized copy here. The ring keeps
 * the newest EXPLAIN_RING_EVENTS events within EXPLAIN_RING_BYTES, dropping
 * the oldest first. Each kept trace holds a reference to the rules it ran
 * with (it is formatted with them); to bound what old rules cost after
 * reloads, at most EXPLAIN_RING_RULESETS distinct rule sets are kept, the
 * oldest events going first.
 *
 * The manager answers the "explain" control query (udevd/query.h) from it.
 * There is one ring per process (explain_ring_global()). */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "udevd/query.h"

#define EXPLAIN_RING_EVENTS 256
#define EXPLAIN_RING_BYTES ((size_t)2 * 1024 * 1024)
#define EXPLAIN_RING_RULESETS 4
/* Record space of one worker's trace buffer. */
#define EXPLAIN_TRACE_SIZE ((size_t)64 * 1024)

struct explain_ring;
struct rules;
struct rules_trace;

/* 0 or -ENOMEM. */
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

/* Worker: keep a copy of `t`, recorded with `rules` (a reference is taken).
 * Failures (out of memory) only lose this trace. */
void explain_ring_push(struct explain_ring *r, const struct rules_trace *t, struct rules *rules);

/* Format the newest kept trace of the event with DEVPATH `devpath` (NULL or
 * "": any device) and, if seqnum > 0, that SEQNUM. 0, -ENOENT when none is
 * kept, or -EIO. Any thread; the formatting happens outside the lock. */
int explain_ring_format(struct explain_ring *r, const char *devpath, uint64_t seqnum, FILE *f);

/* Events kept and their bytes (tests). */
size_t explain_ring_count(struct explain_ring *r, size_t *ret_bytes);

/* The "explain" query: ARGS = "[seqnum=N] [DEVPATH]" (at least one). Writes
 * the trace (udevadm(8) EXPLAIN OUTPUT); -ENOENT when no such event is kept,
 * -EINVAL for bad arguments. userdata: the ring. */
int explain_query(const char *args, struct query_out *out, void *userdata);
