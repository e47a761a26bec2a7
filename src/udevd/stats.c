/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (lock-free counters: recorded on the listener and worker
 * threads, read on the manager thread) */
#include <stdatomic.h>
#include <string.h>

#include "shared/fnv.h"
#include "shared/time-util.h"
#include "udevd/stats.h"

#define RLX memory_order_relaxed

struct hist {
        _Atomic uint64_t buckets[STATS_BUCKETS];
        _Atomic uint64_t sum, max;
};

enum { SLOT_EMPTY, SLOT_CLAIMED, SLOT_READY };

struct subsys_slot {
        _Atomic int state;
        char name[STATS_SUBSYSTEM_NAME_MAX]; /* written once, before state = READY */
        _Atomic uint64_t by_action[_UEVENT_ACTION_MAX];
};

static struct {
        struct hist stages[_STATS_STAGE_MAX];
        struct subsys_slot slots[STATS_SUBSYSTEMS_MAX];
        _Atomic uint64_t other[_UEVENT_ACTION_MAX]; /* table full, odd or long names */
        _Atomic uint64_t events, events_failed;
        _Atomic uint64_t programs_run, programs_failed, programs_killed;
        _Atomic uint64_t queue_peak;
        uint64_t started_usec;
} S;

static const char *const stage_names[_STATS_STAGE_MAX] = {
        [STATS_STAGE_QUEUE] = "queue",         [STATS_STAGE_WAIT] = "wait",
        [STATS_STAGE_RULES] = "rules",         [STATS_STAGE_DB] = "db",
        [STATS_STAGE_RUN] = "run",             [STATS_STAGE_BROADCAST] = "broadcast",
        [STATS_STAGE_TOTAL] = "total",
};

const char *stats_stage_name(enum stats_stage s)
{
        return (unsigned)s < _STATS_STAGE_MAX ? stage_names[s] : NULL;
}

void stats_init(void)
{
        memset(&S, 0, sizeof(S));
        S.started_usec = now_usec(CLOCK_MONOTONIC);
}

uint64_t stats_bucket_le_usec(unsigned i)
{
        return i + 1 >= STATS_BUCKETS ? UINT64_MAX : UINT64_C(1) << i;
}

static unsigned bucket_of(uint64_t usec)
{
        unsigned i;

        if (usec <= 1)
                return 0;
        i = 64u - (unsigned)__builtin_clzll(usec - 1); /* 2^(i-1) < usec <= 2^i */
        return i < STATS_BUCKETS - 1 ? i : STATS_BUCKETS - 1;
}

static void atomic_max(_Atomic uint64_t *m, uint64_t v)
{
        uint64_t cur = atomic_load_explicit(m, RLX);

        while (v > cur && !atomic_compare_exchange_weak_explicit(m, &cur, v, RLX, RLX))
                ;
}

static void hist_record(struct hist *h, uint64_t from, uint64_t to)
{
        uint64_t d;

        if (from == 0 || to == 0)
                return;
        d = to > from ? to - from : 0;
        atomic_fetch_add_explicit(&h->buckets[bucket_of(d)], 1, RLX);
        atomic_fetch_add_explicit(&h->sum, d, RLX);
        atomic_max(&h->max, d);
}

/* Kernel subsystem names are short and tame; anything else counts as "other"
 * (and needs no escaping in JSON or Prometheus labels). */
static bool name_ok(const char *s)
{
        size_t n = strlen(s);

        return n > 0 && n < STATS_SUBSYSTEM_NAME_MAX &&
               strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.:") == n;
}

/* The counters of `name`: found, or claimed in the first empty slot of its
 * probe sequence; the "other" counters when the table is full. Lock-free: a
 * slot's name is written once by the thread that claimed it and published by
 * the release store of SLOT_READY; a reader that sees CLAIMED waits for it
 * (a few instructions). */
static _Atomic uint64_t *counters_of(const char *name)
{
        uint32_t h;

        if (!name || !name_ok(name))
                return S.other;
        h = (uint32_t)fnv1a64(FNV1A64_INIT, name, strlen(name));
        for (unsigned k = 0; k < STATS_SUBSYSTEMS_MAX; k++) {
                struct subsys_slot *sl = &S.slots[(h + k) % STATS_SUBSYSTEMS_MAX];
                int st = atomic_load_explicit(&sl->state, memory_order_acquire);

                if (st == SLOT_EMPTY) {
                        int expected = SLOT_EMPTY;

                        if (atomic_compare_exchange_strong_explicit(&sl->state, &expected,
                                                                    SLOT_CLAIMED,
                                                                    memory_order_acquire,
                                                                    memory_order_acquire)) {
                                strcpy(sl->name, name);
                                atomic_store_explicit(&sl->state, SLOT_READY,
                                                      memory_order_release);
                                return sl->by_action;
                        }
                        st = expected;
                }
                while (st == SLOT_CLAIMED)
                        st = atomic_load_explicit(&sl->state, memory_order_acquire);
                if (strcmp(sl->name, name) == 0)
                        return sl->by_action;
        }
        return S.other;
}

void stats_event_done(const char *subsystem, enum uevent_action action,
                      const struct stats_timing *t, bool failed)
{
        static const unsigned order[][3] = {
                { STATS_STAGE_QUEUE, 0, 1 },    { STATS_STAGE_WAIT, 1, 2 },
                { STATS_STAGE_RULES, 2, 3 },    { STATS_STAGE_DB, 3, 4 },
                { STATS_STAGE_RUN, 4, 5 },      { STATS_STAGE_BROADCAST, 5, 6 },
                { STATS_STAGE_TOTAL, 0, 6 },
        };
        const uint64_t ts[7] = { t->received, t->queued, t->started, t->rules_done,
                                 t->db_done, t->run_done, t->broadcast };

        if ((unsigned)action < _UEVENT_ACTION_MAX)
                atomic_fetch_add_explicit(&counters_of(subsystem)[action], 1, RLX);
        atomic_fetch_add_explicit(&S.events, 1, RLX);
        if (failed)
                atomic_fetch_add_explicit(&S.events_failed, 1, RLX);
        for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
                hist_record(&S.stages[order[i][0]], ts[order[i][1]], ts[order[i][2]]);
}

void stats_count_program(enum stats_program_result r)
{
        atomic_fetch_add_explicit(&S.programs_run, 1, RLX);
        if (r == STATS_PROGRAM_FAILED)
                atomic_fetch_add_explicit(&S.programs_failed, 1, RLX);
        else if (r == STATS_PROGRAM_KILLED)
                atomic_fetch_add_explicit(&S.programs_killed, 1, RLX);
}

void stats_note_queue_depth(uint64_t depth)
{
        atomic_max(&S.queue_peak, depth);
}

void stats_read(struct stats_snapshot *ret)
{
        memset(ret, 0, sizeof(*ret));
        for (unsigned s = 0; s < _STATS_STAGE_MAX; s++) {
                struct stats_histogram *h = &ret->stages[s];

                for (unsigned i = 0; i < STATS_BUCKETS; i++) {
                        h->buckets[i] = atomic_load_explicit(&S.stages[s].buckets[i], RLX);
                        h->count += h->buckets[i];
                }
                h->sum_usec = atomic_load_explicit(&S.stages[s].sum, RLX);
                h->max_usec = atomic_load_explicit(&S.stages[s].max, RLX);
        }
        for (unsigned k = 0; k < STATS_SUBSYSTEMS_MAX; k++) {
                struct subsys_slot *sl = &S.slots[k];
                struct stats_subsystem *o = &ret->subsystems[ret->n_subsystems];

                if (atomic_load_explicit(&sl->state, memory_order_acquire) != SLOT_READY)
                        continue;
                strcpy(o->name, sl->name);
                for (unsigned a = 0; a < _UEVENT_ACTION_MAX; a++)
                        o->by_action[a] = atomic_load_explicit(&sl->by_action[a], RLX);
                ret->n_subsystems++;
        }
        {
                struct stats_subsystem *o = &ret->subsystems[ret->n_subsystems];
                uint64_t any = 0;

                strcpy(o->name, "other");
                for (unsigned a = 0; a < _UEVENT_ACTION_MAX; a++)
                        any |= o->by_action[a] = atomic_load_explicit(&S.other[a], RLX);
                if (any)
                        ret->n_subsystems++;
        }
        /* sorted by name, for stable output */
        for (unsigned i = 1; i < ret->n_subsystems; i++)
                for (unsigned j = i; j > 0 && strcmp(ret->subsystems[j - 1].name,
                                                     ret->subsystems[j].name) > 0; j--) {
                        struct stats_subsystem tmp = ret->subsystems[j];
                        ret->subsystems[j] = ret->subsystems[j - 1];
                        ret->subsystems[j - 1] = tmp;
                }
        ret->events = atomic_load_explicit(&S.events, RLX);
        ret->events_failed = atomic_load_explicit(&S.events_failed, RLX);
        ret->programs_run = atomic_load_explicit(&S.programs_run, RLX);
        ret->programs_failed = atomic_load_explicit(&S.programs_failed, RLX);
        ret->programs_killed = atomic_load_explicit(&S.programs_killed, RLX);
        ret->queue_peak = atomic_load_explicit(&S.queue_peak, RLX);
        ret->started_usec = S.started_usec;
}

uint64_t stats_quantile_usec(const struct stats_histogram *h, double p)
{
        uint64_t rank, seen = 0;

        if (h->count == 0)
                return 0;
        rank = (uint64_t)(p * (double)h->count);
        if ((double)rank < p * (double)h->count)
                rank++;
        if (rank == 0)
                rank = 1;
        for (unsigned i = 0; i < STATS_BUCKETS; i++) {
                seen += h->buckets[i];
                if (seen >= rank) {
                        uint64_t le = stats_bucket_le_usec(i);
                        return le < h->max_usec ? le : h->max_usec;
                }
        }
        return h->max_usec;
}
