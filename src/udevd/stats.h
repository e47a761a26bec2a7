/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (lock-free counters: recorded on the listener and worker
 * threads, read on the manager thread) */
#pragma once
/* The daemon's event statistics behind `udevadm stats` (udevadm(8)).
 *
 * One process-wide set of counters, relaxed atomics only: recording an event
 * costs a few atomic adds (one bucket and the sum per stage, a max that is
 * rarely raised, one subsystem/action counter), no lock, no allocation.
 * Readers (stats_read()) see each counter exactly, but not all counters at
 * one instant: an event recorded while a reader copies may be in some
 * totals and not yet in others.
 *
 * Latency stages of one event, in the order of the pipeline
 * (udevd/event-process.h), each from the previous timestamp:
 *   queue      kernel receive (uevent.recv_usec) -> queued (uevent.queued_usec)
 *   wait       queued -> started by a worker (the last start, after requeues)
 *   rules      started -> rules applied
 *   db         rules applied -> nodes, links, tags and database written
 *   run        database written -> RUN programs done
 *   broadcast  RUN done -> broadcast sent
 *   total      kernel receive -> broadcast sent
 * Histograms have fixed log-scale buckets: bucket i counts latencies of at
 * most 2^i µs (1 µs .. 2^26 µs = 67 s), the last one the rest (+Inf).
 *
 * Who increments what:
 *   listener (netlink-listener.c)   stats_note_queue_depth() after a push
 *   workers (worker-pool.c)         stats_event_done() per finished event
 *   event pipeline (event-process.c) stats_count_program() per program
 * The rest (queue depth now, events coalesced by storm damping, watch events
 * rate-limited, overruns, resyncs, the rules generation) the manager reads
 * from the modules that count them when asked (struct stats_extra). */

#include <stdbool.h>
#include <stdint.h>

#include "proto/uevent.h"

enum stats_stage {
        STATS_STAGE_QUEUE,
        STATS_STAGE_WAIT,
        STATS_STAGE_RULES,
        STATS_STAGE_DB,
        STATS_STAGE_RUN,
        STATS_STAGE_BROADCAST,
        STATS_STAGE_TOTAL,
        _STATS_STAGE_MAX,
};

#define STATS_BUCKETS 28 /* 2^0 .. 2^26 µs, then +Inf */
#define STATS_SUBSYSTEMS_MAX 128
#define STATS_SUBSYSTEM_NAME_MAX 48 /* longer names count as "other" */

/* CLOCK_MONOTONIC µs of one event's stages; 0 = not reached / unknown (the
 * stage is then not recorded). */
struct stats_timing {
        uint64_t received, queued, started, rules_done, db_done, run_done, broadcast;
};

enum stats_program_result {
        STATS_PROGRAM_OK,      /* exited 0 */
        STATS_PROGRAM_FAILED,  /* non-zero exit, killed by a signal, or did not run */
        STATS_PROGRAM_KILLED,  /* timed out (killed by udevd) */
};

/* Recording: any thread. */
void stats_event_done(const char *subsystem, enum uevent_action action,
                      const struct stats_timing *t, bool failed);
void stats_count_program(enum stats_program_result r);
void stats_note_queue_depth(uint64_t depth);

struct stats_histogram {
        uint64_t buckets[STATS_BUCKETS]; /* per bucket, not cumulative */
        uint64_t count, sum_usec, max_usec;
};

struct stats_subsystem {
        char name[STATS_SUBSYSTEM_NAME_MAX];
        uint64_t by_action[_UEVENT_ACTION_MAX];
};

struct stats_snapshot {
        struct stats_histogram stages[_STATS_STAGE_MAX];
        struct stats_subsystem subsystems[STATS_SUBSYSTEMS_MAX + 1]; /* + "other" */
        unsigned n_subsystems;
        uint64_t events, events_failed;
        uint64_t programs_run, programs_failed, programs_killed;
        uint64_t queue_peak;
        uint64_t started_usec; /* CLOCK_MONOTONIC of stats_init() */
};

/* What the manager adds from its other modules. */
struct stats_extra {
        uint64_t queued, running;  /* queue depth now */
        /* The queue's budget (event-queue.h): bytes charged now and at most
         * since start, the limits (0 = none), and how often the listener
         * stopped reading because the queue was at its budget. */
        uint64_t queue_bytes, queue_bytes_peak;
        uint64_t queue_max_events, queue_max_bytes;
        uint64_t budget_pauses;
        uint64_t overruns, lost;   /* kernel buffer overruns, SEQNUMs lost */
        uint64_t resyncs;          /* recoveries run after overruns */
        uint64_t coalesced;        /* events merged into a queued one (event-queue.h) */
        uint64_t watch_limited;    /* watch events rate-limited (watch.h) */
        uint64_t received;         /* uevents the listener accepted */
        unsigned rules_generation; /* udevd/rules-snapshot.h */
        /* udevadm explain's ring (udevd/explain-ring.h): traces kept now and
         * their bytes, the ring's size; all 0 when tracing is off */
        uint64_t explain_events, explain_bytes, explain_max_events, explain_max_bytes;
        uint64_t uptime_usec;
};

/* Reset everything (daemon start, tests). Not while events are recorded. */
void stats_init(void);
void stats_read(struct stats_snapshot *ret);

const char *stats_stage_name(enum stats_stage s);
/* Upper bound of bucket i in µs; UINT64_MAX for the last (+Inf). */
uint64_t stats_bucket_le_usec(unsigned i);
/* Estimated p-th quantile (0 < p <= 1) in µs: the upper bound of the bucket
 * that holds it, at most the maximum seen. 0 for an empty histogram. */
uint64_t stats_quantile_usec(const struct stats_histogram *h, double p);

/* The three formats of `udevadm stats` (text, --json, --prometheus), as
 * answers to the "stats", "stats-json" and "stats-prometheus" queries. */
struct query_out;
void stats_format_text(const struct stats_snapshot *s, const struct stats_extra *x,
                       struct query_out *out);
void stats_format_json(const struct stats_snapshot *s, const struct stats_extra *x,
                       struct query_out *out);
void stats_format_prometheus(const struct stats_snapshot *s, const struct stats_extra *x,
                             struct query_out *out);
