/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: program_gate_ctl_* — caller serialises (no lock); program_gate_* — any */
#pragma once
/* The program gate: how many CPU-heavy programs run at once.
 *
 * On most machines programs that run side by side each cost about the CPU
 * time they cost alone, so running several at once finishes a storm sooner.
 * On some (virtual machines whose page-table work is trapped, seen on the
 * project's test VMs: two loops of fork+exec at once cost 2.5x the CPU and
 * take longer than the same two loops one after the other) every program that
 * runs beside another costs so much more that running them one at a time is
 * both cheaper and no slower. The gate measures which kind of machine it is on
 * and decides:
 *
 *   - Every finished program reports the CPU time it used (its rusage, from the
 *     exec helper) and whether another heavy program ran during its life
 *     ("shared") or not ("solo"). Per program path (argv[0]) the gate keeps
 *     moving averages of the solo cost and of the shared cost.
 *   - Paths whose programs cost little CPU (under light_cpu_usec on average) or
 *     mostly sleep (CPU under a quarter of their run time) are "light": they
 *     pass the gate without counting, and so do paths not measured yet (the
 *     event queue's program window still bounds those).
 *   - PARALLEL (the start): heavy programs start at once, as many as there are
 *     CPUs (more CPU-bound programs than CPUs finish no sooner). A path with
 *     shared runs but no solo cost, or none since GATE_SOLO_EVERY shared runs,
 *     asks for a "solo probe": the next heavy program waits until none runs
 *     and then runs alone. Once a path has at least GATE_MIN_SOLO solo and
 *     GATE_MIN_SHARED shared runs, each shared run compares: shared cost /
 *     solo cost above max_cost_pct turns the gate SERIAL (the CPU a storm
 *     of programs costs comes first; on the machines above it is no slower).
 *   - SERIAL: one heavy program at a time. After probe_usec (doubling up to
 *     probe_max_usec while SERIAL keeps being confirmed) the gate tries
 *     PARALLEL again with fresh shared averages.
 *   - A heavy program that has not finished after stall_usec does not hold
 *     the others: while nothing started or finished for stall_usec, one more
 *     waiting program may start (and so on), so sleeping programs are never
 *     run strictly one after the other.
 *
 * The controller (program_gate_ctl_*) is plain state with the clock passed in,
 * for tests; program_gate wraps it with a lock and a condition variable. */

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GATE_PATHS 32      /* program paths remembered (least recently used goes) */
#define GATE_MIN_SOLO 2    /* solo runs before a path's cost is judged */
#define GATE_MIN_SHARED 4  /* shared runs before a path's cost is judged */
#define GATE_SOLO_EVERY 32 /* PARALLEL: a solo probe after this many shared runs */

struct program_gate_config {
        unsigned cpus;           /* PARALLEL: at most this many heavy programs at once */
        uint64_t stall_usec;     /* one more may start after this long without change */
        uint64_t light_cpu_usec; /* programs below this average CPU time are light */
        unsigned max_cost_pct;   /* PARALLEL while shared / solo CPU cost stays under this */
        uint64_t probe_usec;     /* SERIAL: first retry of PARALLEL after this long */
        uint64_t probe_max_usec; /* ... doubling up to this */
        uint64_t solo_max_age_usec; /* a solo cost older than this is re-measured */
};

#define PROGRAM_GATE_CONFIG_DEFAULT                                                \
        ((struct program_gate_config){                                             \
                .cpus = 1,                                                         \
                .stall_usec = 100 * UINT64_C(1000),                                \
                .light_cpu_usec = 2 * UINT64_C(1000),                              \
                .max_cost_pct = 125,                                                \
                .probe_usec = 2 * UINT64_C(1000000),                               \
                .probe_max_usec = 64 * UINT64_C(1000000),                          \
                .solo_max_age_usec = 30 * UINT64_C(1000000),                       \
        })

enum program_gate_mode { PROGRAM_GATE_PARALLEL, PROGRAM_GATE_SERIAL };

/* One program's passage: owned by the caller (on its stack), filled by enter. */
struct program_gate_ticket {
        uint64_t path_hash;
        uint64_t start_serial; /* ctl.heavy_starts once it started */
        bool heavy;      /* counted: waited at the gate */
        bool shared;     /* another heavy program ran during its life (final once
                          * finished: one ran at its start, or one started since) */
        bool probe;      /* the solo probe: nothing else heavy starts meanwhile */
};

struct gate_path {
        uint64_t hash;          /* 0: free slot */
        uint64_t last_used;
        uint64_t cpu_avg, wall_avg; /* all runs */
        unsigned runs;
        uint64_t solo_cpu, solo_wall; /* solo runs */
        unsigned solo_runs;
        unsigned shared_since_solo;
        uint64_t solo_at;       /* when the last solo run finished */
        uint64_t shared_cpu;    /* shared runs (reset when PARALLEL starts) */
        unsigned shared_runs;
};

struct program_gate_ctl {
        struct program_gate_config cfg;
        enum program_gate_mode mode;
        uint64_t mode_since;
        uint64_t probe_delay;   /* SERIAL: how long until PARALLEL is tried again */
        bool from_probe;        /* PARALLEL is a retry from SERIAL, not yet judged */
        unsigned running;       /* heavy programs started and not finished */
        uint64_t heavy_starts;  /* heavy programs started so far */
        bool solo_wanted;       /* PARALLEL: a solo probe is asked for */
        bool solo_running;      /* ... and runs: nothing else heavy may start */
        uint64_t last_change;   /* last heavy start or finish */
        struct gate_path paths[GATE_PATHS];
        /* statistics (for logs and tests) */
        unsigned switches_serial, switches_parallel, stall_starts, solo_probes;
        unsigned last_cost_pct; /* the last judgment's shared / solo CPU cost */
        unsigned judgments;
};

void program_gate_ctl_init(struct program_gate_ctl *c, const struct program_gate_config *cfg,
                           uint64_t now);
uint64_t program_gate_hash(const char *path);
/* May a program of this path start now? Light paths always may. */
bool program_gate_ctl_may_start(struct program_gate_ctl *c, uint64_t path_hash, uint64_t now);
/* When a waiting heavy program could start at the latest (the stall rule). */
uint64_t program_gate_ctl_next_deadline(const struct program_gate_ctl *c);
/* Record the start (after may_start() said yes). */
void program_gate_ctl_start(struct program_gate_ctl *c, struct program_gate_ticket *t,
                            uint64_t path_hash, uint64_t now);
/* Record the end: CPU time the program used and its run time. A program that
 * never ran passes cpu_usec = wall_usec = 0 and measures nothing. */
void program_gate_ctl_finish(struct program_gate_ctl *c, struct program_gate_ticket *t,
                             uint64_t cpu_usec, uint64_t wall_usec, uint64_t now);

/* The locked gate, shared by every worker thread of a client. */
struct program_gate {
        pthread_mutex_t lock;
        pthread_cond_t changed; /* CLOCK_MONOTONIC */
        struct program_gate_ctl ctl;
};

struct program_gate_stats {
        enum program_gate_mode mode;
        unsigned switches_serial;   /* PARALLEL -> SERIAL */
        unsigned switches_parallel; /* retries of PARALLEL */
        unsigned solo_probes;
        unsigned stall_starts;      /* heavy programs let in by the stall rule */
};

int program_gate_new(const struct program_gate_config *cfg, struct program_gate **ret);
struct program_gate *program_gate_free(struct program_gate *g);
/* Wait until the program may start (or until deadline_usec, CLOCK_MONOTONIC,
 * 0: none, has passed: it then starts anyway and its timeout takes over).
 * A wait is announced with blocking_turn(true) before and (false) after. */
void program_gate_enter(struct program_gate *g, const char *path, uint64_t deadline_usec,
                        struct program_gate_ticket *t);
void program_gate_leave(struct program_gate *g, struct program_gate_ticket *t, uint64_t cpu_usec,
                        uint64_t wall_usec);
void program_gate_get_stats(struct program_gate *g, struct program_gate_stats *ret);
