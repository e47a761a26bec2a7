/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: program_gate_ctl_* — caller serialises; program_gate_* — any (own lock) */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec/program-gate.h"
#include "shared/blocking.h"
#include "shared/cond.h"
#include "shared/fnv.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "shared/time-util.h"

/* ---- the controller ---- */

void program_gate_ctl_init(struct program_gate_ctl *c, const struct program_gate_config *cfg,
                           uint64_t now)
{
        *c = (struct program_gate_ctl){
                .cfg = *cfg,
                .mode = PROGRAM_GATE_PARALLEL,
                .mode_since = now,
                .probe_delay = cfg->probe_usec,
        };
        if (c->cfg.cpus == 0)
                c->cfg.cpus = 1;
}

uint64_t program_gate_hash(const char *path)
{
        uint64_t h = fnv1a64(FNV1A64_INIT, path, strlen(path));

        return h ? h : 1;
}

/* Moving average with weight 1/4; the first sample sets it. */
static uint64_t ewma(uint64_t avg, unsigned n, uint64_t sample)
{
        if (n == 0)
                return sample;
        return (uint64_t)((int64_t)avg + ((int64_t)sample - (int64_t)avg) / 4);
}

static struct gate_path *path_find(struct program_gate_ctl *c, uint64_t hash)
{
        for (size_t i = 0; i < GATE_PATHS; i++)
                if (c->paths[i].hash == hash)
                        return &c->paths[i];
        return NULL;
}

static struct gate_path *path_get(struct program_gate_ctl *c, uint64_t hash, uint64_t now)
{
        struct gate_path *p = path_find(c, hash), *oldest = &c->paths[0];

        if (!p) {
                for (size_t i = 1; i < GATE_PATHS; i++)
                        if (c->paths[i].last_used < oldest->last_used)
                                oldest = &c->paths[i];
                p = oldest;
                *p = (struct gate_path){ .hash = hash };
        }
        p->last_used = now;
        return p;
}

/* Not measured yet (its first programs pass: the event queue's window still
 * bounds them), little CPU, or mostly asleep (judged on solo runs when there
 * are some: beside others a CPU-bound program's run time stretches). */
static bool path_light(const struct program_gate_ctl *c, const struct gate_path *p)
{
        if (!p || p->runs == 0)
                return true;
        if (p->cpu_avg < c->cfg.light_cpu_usec)
                return true;
        if (p->solo_runs > 0)
                return p->solo_cpu * 4 < p->solo_wall;
        return p->cpu_avg * 4 < p->wall_avg;
}

static void set_parallel(struct program_gate_ctl *c, uint64_t now)
{
        c->mode = PROGRAM_GATE_PARALLEL;
        c->mode_since = now;
        c->from_probe = true;
        c->switches_parallel++;
        for (size_t i = 0; i < GATE_PATHS; i++) {
                c->paths[i].shared_runs = 0;
                c->paths[i].shared_cpu = 0;
        }
}

static void set_serial(struct program_gate_ctl *c, uint64_t now)
{
        /* a retry of PARALLEL that failed again waits twice as long next time */
        c->probe_delay = c->from_probe ? MIN(c->probe_delay * 2, c->cfg.probe_max_usec)
                                       : c->cfg.probe_usec;
        c->mode = PROGRAM_GATE_SERIAL;
        c->mode_since = now;
        c->from_probe = false;
        c->solo_wanted = false;
        c->switches_serial++;
}

static void update_mode(struct program_gate_ctl *c, uint64_t now)
{
        if (c->mode == PROGRAM_GATE_SERIAL && now >= c->mode_since + c->probe_delay)
                set_parallel(c, now);
}

/* Is the gate closed to a heavy program while others run? */
static bool closed(const struct program_gate_ctl *c)
{
        return c->running > 0 &&
               (c->mode == PROGRAM_GATE_SERIAL || c->solo_wanted || c->solo_running ||
                c->running >= c->cfg.cpus);
}

bool program_gate_ctl_may_start(struct program_gate_ctl *c, uint64_t path_hash, uint64_t now)
{
        if (path_light(c, path_find(c, path_hash)))
                return true;
        update_mode(c, now);
        return !closed(c) || now >= c->last_change + c->cfg.stall_usec;
}

uint64_t program_gate_ctl_next_deadline(const struct program_gate_ctl *c)
{
        uint64_t d = c->last_change + c->cfg.stall_usec;

        if (c->mode == PROGRAM_GATE_SERIAL)
                d = MIN(d, c->mode_since + c->probe_delay);
        return d;
}

void program_gate_ctl_start(struct program_gate_ctl *c, struct program_gate_ticket *t,
                            uint64_t path_hash, uint64_t now)
{
        struct gate_path *p = path_get(c, path_hash, now);

        *t = (struct program_gate_ticket){ .path_hash = path_hash };
        if (path_light(c, p))
                return;
        t->heavy = true;
        update_mode(c, now);
        if (c->running == 0 && c->solo_wanted && c->mode == PROGRAM_GATE_PARALLEL) {
                c->solo_wanted = false;
                c->solo_running = true;
                t->probe = true;
                c->solo_probes++;
        } else if (closed(c)) {
                c->stall_starts++;
        }
        t->shared = c->running > 0;
        t->start_serial = ++c->heavy_starts;
        c->running++;
        c->last_change = now;
}

/* PARALLEL: did running this path's programs side by side pay? */
static void judge(struct program_gate_ctl *c, const struct gate_path *p, uint64_t now)
{
        /* the solo cost is refreshed now and then: it drifts with what else runs */
        if ((p->solo_runs < GATE_MIN_SOLO || p->shared_since_solo >= GATE_SOLO_EVERY ||
             now > p->solo_at + c->cfg.solo_max_age_usec) && !c->solo_running)
                c->solo_wanted = true;
        if (p->solo_runs < GATE_MIN_SOLO || p->shared_runs < GATE_MIN_SHARED || p->solo_cpu == 0)
                return;
        /* what sharing costs: CPU per program beside others / alone, in percent */
        uint64_t cost = p->shared_cpu * 100 / p->solo_cpu;
        c->last_cost_pct = (unsigned)MIN(cost, (uint64_t)UINT32_MAX);
        c->judgments++;
        if (cost > c->cfg.max_cost_pct)
                set_serial(c, now);
        else if (c->from_probe) {
                c->from_probe = false;
                c->probe_delay = c->cfg.probe_usec;
        }
}

void program_gate_ctl_finish(struct program_gate_ctl *c, struct program_gate_ticket *t,
                             uint64_t cpu_usec, uint64_t wall_usec, uint64_t now)
{
        if (t->heavy) {
                if (c->heavy_starts != t->start_serial)
                        t->shared = true; /* another started during its life */
                c->running--;
                c->last_change = now;
                if (t->probe)
                        c->solo_running = false;
        }

        struct gate_path *p = path_find(c, t->path_hash);
        if (!p || (cpu_usec == 0 && wall_usec == 0))
                return; /* forgotten, or it never ran */
        p->cpu_avg = ewma(p->cpu_avg, p->runs, cpu_usec);
        p->wall_avg = ewma(p->wall_avg, p->runs, wall_usec);
        p->runs = MIN(p->runs + 1, 1000u);
        if (!t->heavy)
                return;
        if (!t->shared) {
                p->solo_cpu = ewma(p->solo_cpu, p->solo_runs, cpu_usec);
                p->solo_wall = ewma(p->solo_wall, p->solo_runs, wall_usec);
                p->solo_runs = MIN(p->solo_runs + 1, 1000u);
                p->solo_at = now;
                p->shared_since_solo = 0;
                return;
        }
        if (c->mode != PROGRAM_GATE_PARALLEL)
                return; /* started by the stall rule: says nothing about sharing */
        p->shared_cpu = ewma(p->shared_cpu, p->shared_runs, cpu_usec);
        p->shared_runs = MIN(p->shared_runs + 1, 1000u);
        p->shared_since_solo = MIN(p->shared_since_solo + 1, 1000u);
        judge(c, p, now);
}

/* ---- the locked gate ---- */

int program_gate_new(const struct program_gate_config *cfg, struct program_gate **ret)
{
        struct program_gate *g = calloc(1, sizeof(*g));
        int r;

        if (!g)
                return -ENOMEM;
        r = cond_init_monotonic(&g->changed);
        if (r < 0) {
                free(g);
                return r;
        }
        r = pthread_mutex_init(&g->lock, NULL);
        if (r != 0) {
                pthread_cond_destroy(&g->changed);
                free(g);
                return -r;
        }
        program_gate_ctl_init(&g->ctl, cfg, now_usec(CLOCK_MONOTONIC));
        *ret = g;
        return 0;
}

struct program_gate *program_gate_free(struct program_gate *g)
{
        if (g) {
                pthread_cond_destroy(&g->changed);
                pthread_mutex_destroy(&g->lock);
                free(g);
        }
        return NULL;
}

void program_gate_enter(struct program_gate *g, const char *path, uint64_t deadline_usec,
                        struct program_gate_ticket *t)
{
        uint64_t hash = program_gate_hash(path), now;
        bool waited = false;

        pthread_mutex_lock(&g->lock);
        for (;;) {
                now = now_usec(CLOCK_MONOTONIC);
                if (program_gate_ctl_may_start(&g->ctl, hash, now) ||
                    (deadline_usec != 0 && now >= deadline_usec))
                        break;
                if (!waited) { /* tell the thread's scheduler, without our lock held */
                        waited = true;
                        pthread_mutex_unlock(&g->lock);
                        blocking_turn(true);
                        pthread_mutex_lock(&g->lock);
                        continue;
                }
                uint64_t until = program_gate_ctl_next_deadline(&g->ctl);
                if (deadline_usec != 0)
                        until = MIN(until, deadline_usec);
                (void)cond_wait_until(&g->changed, &g->lock, until);
        }
        program_gate_ctl_start(&g->ctl, t, hash, now);
        pthread_mutex_unlock(&g->lock);
        if (waited)
                blocking_turn(false);
}

void program_gate_leave(struct program_gate *g, struct program_gate_ticket *t, uint64_t cpu_usec,
                        uint64_t wall_usec)
{
        pthread_mutex_lock(&g->lock);
        enum program_gate_mode was = g->ctl.mode;
        unsigned judged = g->ctl.judgments;
        program_gate_ctl_finish(&g->ctl, t, cpu_usec, wall_usec, now_usec(CLOCK_MONOTONIC));
        bool to_serial = was != g->ctl.mode; /* only a finish turns it SERIAL */
        if (g->ctl.judgments != judged)
                log_debug("Program gate: beside others a program cost %u%% of its CPU time "
                          "alone (%s).", g->ctl.last_cost_pct,
                          g->ctl.mode == PROGRAM_GATE_SERIAL ? "serial" : "parallel");
        uint64_t retry = g->ctl.probe_delay;
        unsigned cost = g->ctl.last_cost_pct;
        pthread_cond_broadcast(&g->changed);
        pthread_mutex_unlock(&g->lock);
        if (to_serial)
                log_info("CPU-heavy programs cost %u%% of their CPU time alone when they run "
                         "beside each other: running them one at a time, next try in %" PRIu64
                         " s.", cost, retry / USEC_PER_SEC);
}

void program_gate_get_stats(struct program_gate *g, struct program_gate_stats *ret)
{
        pthread_mutex_lock(&g->lock);
        *ret = (struct program_gate_stats){
                .mode = g->ctl.mode,
                .switches_serial = g->ctl.switches_serial,
                .switches_parallel = g->ctl.switches_parallel,
                .solo_probes = g->ctl.solo_probes,
                .stall_starts = g->ctl.stall_starts,
        };
        pthread_mutex_unlock(&g->lock);
}
