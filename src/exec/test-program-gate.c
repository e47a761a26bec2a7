/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: test (the simulations single-threaded; test_threads uses several) */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "exec/program-gate.h"
#include "shared/macro.h"
#include "shared/tests.h"
#include "shared/time-util.h"

#define MS UINT64_C(1000)
#define SEC UINT64_C(1000000)

/* ---- a simulated machine ----
 *
 * Time advances in steps of 100 us. Each running program needs `work` us of
 * CPU at solo speed and sleeps `sleep` us besides (after its work). While n
 * programs compute on `cpus` CPUs each gets min(1, cpus/n) of a CPU, and the
 * work that CPU time buys is divided by the machine's slowdown when two or
 * more programs run at once (1.0: a machine that scales; 2.3: the test VM's
 * fork+exec). The CPU time it used and its run time go to the gate. */

#define STEP 100
#define MAXP 64

struct prog {
        const char *path;
        uint64_t work, sleep;  /* us */
        bool waiting, running, done;
        uint64_t done_work, cpu, slept, started;
        struct program_gate_ticket t;
};

struct sim {
        struct program_gate_ctl c;
        struct prog p[MAXP];
        size_t n;
        unsigned cpus;
        double slowdown;  /* work per CPU us while shared: 1/slowdown */
        uint64_t now;
        unsigned max_running, running, max_heavy_running;
        uint64_t cpu_total;
        unsigned shared_runs;
};

static void sim_init(struct sim *s, unsigned cpus, double slowdown)
{
        struct program_gate_config cfg = PROGRAM_GATE_CONFIG_DEFAULT;

        memset(s, 0, sizeof(*s));
        cfg.cpus = cpus;
        s->cpus = cpus;
        s->slowdown = slowdown;
        s->now = 1000 * SEC;
        program_gate_ctl_init(&s->c, &cfg, s->now);
}

static void sim_add(struct sim *s, const char *path, uint64_t work, uint64_t sleep)
{
        ASSERT_TRUE(s->n < MAXP);
        s->p[s->n++] = (struct prog){ .path = path, .work = work, .sleep = sleep, .waiting = true };
}

/* Start what may start (in arrival order), then run one step. */
static void sim_step(struct sim *s)
{
        for (size_t i = 0; i < s->n; i++) {
                struct prog *p = &s->p[i];
                uint64_t h = program_gate_hash(p->path);

                if (!p->waiting || !program_gate_ctl_may_start(&s->c, h, s->now))
                        continue;
                program_gate_ctl_start(&s->c, &p->t, h, s->now);
                p->waiting = false;
                p->running = true;
                p->started = s->now;
                s->running++;
        }
        s->max_running = MAX(s->max_running, s->running);
        s->max_heavy_running = MAX(s->max_heavy_running, s->c.running);

        unsigned computing = 0;
        for (size_t i = 0; i < s->n; i++)
                if (s->p[i].running && s->p[i].done_work < s->p[i].work)
                        computing++;
        double share = computing > s->cpus ? (double)s->cpus / computing : 1.0;
        double speed = computing >= 2 ? 1.0 / s->slowdown : 1.0;

        s->now += STEP;
        for (size_t i = 0; i < s->n; i++) {
                struct prog *p = &s->p[i];

                if (!p->running)
                        continue;
                if (p->done_work < p->work) {
                        p->cpu += (uint64_t)(STEP * share);
                        p->done_work += (uint64_t)(STEP * share * speed);
                } else {
                        p->slept += STEP;
                }
                if (p->done_work >= p->work && p->slept >= p->sleep) {
                        program_gate_ctl_finish(&s->c, &p->t, p->cpu, s->now - p->started,
                                                s->now);
                        if (p->t.shared)
                                s->shared_runs++;
                        p->running = false;
                        p->done = true;
                        s->running--;
                        s->cpu_total += p->cpu;
                }
        }
}

static uint64_t sim_run(struct sim *s, uint64_t limit)
{
        uint64_t start = s->now;

        for (;;) {
                bool all = true;
                for (size_t i = 0; i < s->n; i++)
                        all = all && s->p[i].done;
                if (all)
                        return s->now - start;
                ASSERT_TRUE(s->now - start < limit);
                sim_step(s);
        }
}

/* Reuse the slots: n more programs of the path after the ones that finished. */
static void sim_refill(struct sim *s, const char *path, uint64_t work, uint64_t sleep, size_t n)
{
        s->n = 0;
        for (size_t i = 0; i < n; i++)
                sim_add(s, path, work, sleep);
}

/* A path's first program runs before the gate knows it (it passes); then
 * the storm. */
static void sim_learn(struct sim *s, const char *path, uint64_t work, uint64_t sleep)
{
        sim_refill(s, path, work, sleep, 1);
        (void)sim_run(s, 10 * SEC);
        ASSERT_EQ(s->c.running, 0); /* it did not count */
}

#define SYSCTL "/lib/systemd/systemd-sysctl"

/* What the net storm asks of the gate: one program to learn from, then 60
 * of 9 ms each at once. Returns the time they took. */
static uint64_t sim_sysctl_storm(struct sim *s)
{
        sim_learn(s, SYSCTL, 9 * MS, 0);
        sim_refill(s, SYSCTL, 9 * MS, 0, 60);
        return sim_run(s, 10 * SEC);
}

/* A machine where programs cost the same beside each other: it stays
 * PARALLEL and uses both CPUs, and the heavy programs never exceed them. */
static void test_scaling_machine_stays_parallel(void)
{
        static struct sim s;

        sim_init(&s, 2, 1.0);
        uint64_t t = sim_sysctl_storm(&s);
        ASSERT_EQ(s.c.switches_serial, 0);
        ASSERT_EQ(s.c.mode, PROGRAM_GATE_PARALLEL);
        ASSERT_EQ(s.max_heavy_running, 2);
        /* 60 x 9 ms on 2 CPUs: 270 ms, plus the two solo probes */
        ASSERT_TRUE(t < 330 * MS);
        ASSERT_TRUE(s.c.solo_probes >= GATE_MIN_SOLO + 1); /* + one per GATE_SOLO_EVERY */
        ASSERT_TRUE(s.c.judgments > 0 && s.c.last_cost_pct <= 110);
}

/* A machine where a program beside another costs 2.3 times the CPU: after a
 * few programs it runs them one at a time, and spends less CPU for the same
 * work than it would in parallel. */
static void test_slow_sharing_machine_goes_serial(void)
{
        static struct sim s, par;

        sim_init(&s, 2, 2.3);
        uint64_t t = sim_sysctl_storm(&s);
        ASSERT_EQ(s.c.switches_serial, 1);
        ASSERT_EQ(s.c.mode, PROGRAM_GATE_SERIAL);
        ASSERT_TRUE(s.c.last_cost_pct >= 200);
        ASSERT_TRUE(s.shared_runs <= 10); /* learning: 2 solo and 4 shared runs */

        /* the same on a gate that cannot go serial (cost limit out of reach) */
        sim_init(&par, 2, 2.3);
        par.c.cfg.max_cost_pct = 100000;
        uint64_t tp = sim_sysctl_storm(&par);
        ASSERT_EQ(par.c.mode, PROGRAM_GATE_PARALLEL);
        ASSERT_TRUE(s.cpu_total * 10 < par.cpu_total * 6); /* well under 0.6x the CPU */
        ASSERT_TRUE(t <= tp);                               /* and no slower */
}

/* SERIAL retries PARALLEL after probe_usec, doubling while SERIAL is
 * confirmed; when the machine changes, PARALLEL stays and the delay resets. */
static void test_probe_backoff_and_recovery(void)
{
        static struct sim s;
        uint64_t delays[4];

        sim_init(&s, 2, 2.3);
        sim_learn(&s, "/x/heavy", 9 * MS, 0);
        for (size_t round = 0; round < 4; round++) {
                sim_refill(&s, "/x/heavy", 9 * MS, 0, 40);
                (void)sim_run(&s, 10 * SEC);
                ASSERT_EQ(s.c.mode, PROGRAM_GATE_SERIAL);
                delays[round] = s.c.probe_delay;
                /* idle until the retry is due, then the next storm probes */
                s.now = s.c.mode_since + s.c.probe_delay;
        }
        ASSERT_EQ(delays[0], 2 * SEC);
        ASSERT_EQ(delays[1], 4 * SEC);
        ASSERT_EQ(delays[2], 8 * SEC);
        ASSERT_EQ(delays[3], 16 * SEC);
        ASSERT_EQ(s.c.switches_serial, 4);

        s.slowdown = 1.0; /* the machine now scales */
        sim_refill(&s, "/x/heavy", 9 * MS, 0, 40);
        (void)sim_run(&s, 10 * SEC);
        ASSERT_EQ(s.c.mode, PROGRAM_GATE_PARALLEL);
        ASSERT_EQ(s.c.probe_delay, 2 * SEC);
        ASSERT_EQ(s.c.switches_serial, 4);
}

/* Light programs (little CPU, or mostly asleep, or not measured yet) never
 * wait, and do not count. */
static void test_light_programs_pass(void)
{
        static struct sim s;

        sim_init(&s, 2, 2.3);
        sim_add(&s, "/x/light", 500, 0);   /* learn: 0.5 ms of CPU */
        sim_add(&s, "/x/sleeper", 5 * MS, 500 * MS); /* learn: 5 ms of CPU in 505 ms */
        (void)sim_run(&s, 2 * SEC);
        sim_learn(&s, "/x/heavy", 50 * MS, 0);
        s.c.mode = PROGRAM_GATE_SERIAL; /* the strictest state */
        s.c.mode_since = s.now;

        sim_refill(&s, "/x/heavy", 50 * MS, 0, 1);
        for (int i = 0; i < 10; i++)
                sim_add(&s, "/x/light", 500, 0);
        for (int i = 0; i < 10; i++)
                sim_add(&s, "/x/sleeper", 5 * MS, 500 * MS);
        for (int i = 0; i < 3; i++)
                sim_add(&s, "/x/new", 50 * MS, 0);
        sim_step(&s);
        ASSERT_EQ(s.running, 24); /* everything at once */
        ASSERT_EQ(s.c.running, 1); /* only the heavy one counts */
        (void)sim_run(&s, 2 * SEC);
        ASSERT_EQ(s.c.running, 0);
}

/* A heavy program that runs long does not hold the others: in SERIAL one
 * more starts each stall_usec without a start or a finish. */
static void test_stall_rule(void)
{
        struct program_gate_config cfg = PROGRAM_GATE_CONFIG_DEFAULT;
        struct program_gate_ctl c;
        struct program_gate_ticket t[4];
        uint64_t h = program_gate_hash("/x/slow"), now = 5 * SEC;

        cfg.cpus = 4;
        program_gate_ctl_init(&c, &cfg, now);
        /* measured once: heavy */
        program_gate_ctl_start(&c, &t[0], h, now);
        program_gate_ctl_finish(&c, &t[0], 50 * MS, 50 * MS, now);
        c.mode = PROGRAM_GATE_SERIAL;
        c.mode_since = now;
        ASSERT_TRUE(program_gate_ctl_may_start(&c, h, now));
        program_gate_ctl_start(&c, &t[0], h, now);
        ASSERT_TRUE(!program_gate_ctl_may_start(&c, h, now + 99 * MS));
        ASSERT_EQ(program_gate_ctl_next_deadline(&c), now + 100 * MS);
        ASSERT_TRUE(program_gate_ctl_may_start(&c, h, now + 100 * MS));
        program_gate_ctl_start(&c, &t[1], h, now + 100 * MS);
        ASSERT_EQ(c.stall_starts, 1);
        ASSERT_TRUE(!program_gate_ctl_may_start(&c, h, now + 150 * MS));
        ASSERT_TRUE(program_gate_ctl_may_start(&c, h, now + 200 * MS));
        /* both were shared: in SERIAL that says nothing, the mode stays */
        program_gate_ctl_finish(&c, &t[0], 300 * MS, 300 * MS, now + 300 * MS);
        program_gate_ctl_finish(&c, &t[1], 200 * MS, 200 * MS, now + 300 * MS);
        ASSERT_EQ(c.running, 0);
        ASSERT_EQ(c.mode, PROGRAM_GATE_SERIAL);
        ASSERT_TRUE(program_gate_ctl_may_start(&c, h, now + 300 * MS));

        /* a program that never ran measures nothing */
        program_gate_ctl_start(&c, &t[2], h, now + 400 * MS);
        program_gate_ctl_finish(&c, &t[2], 0, 0, now + 400 * MS);
        ASSERT_EQ(c.running, 0);
}

/* More paths than the table holds: the oldest are forgotten, a program of a
 * forgotten path still leaves the gate cleanly. */
static void test_many_paths(void)
{
        struct program_gate_config cfg = PROGRAM_GATE_CONFIG_DEFAULT;
        struct program_gate_ctl c;
        struct program_gate_ticket first, t;
        char path[32];
        uint64_t now = SEC;

        cfg.cpus = 2;
        program_gate_ctl_init(&c, &cfg, now);
        program_gate_ctl_start(&c, &first, program_gate_hash("/p/first"), now);
        for (int i = 0; i < 3 * GATE_PATHS; i++) {
                snprintf(path, sizeof(path), "/p/%d", i);
                uint64_t h = program_gate_hash(path);
                now += MS;
                program_gate_ctl_start(&c, &t, h, now);
                program_gate_ctl_finish(&c, &t, 5 * MS, 5 * MS, now);
        }
        program_gate_ctl_finish(&c, &first, 5 * MS, 5 * MS, now);
        ASSERT_EQ(c.running, 0);
        ASSERT_EQ(c.heavy_starts, 0); /* nothing measured heavy: all passed uncounted */
}

/* The locked gate under threads (TSan runs this): every program leaves, the
 * count returns to zero, and a deadline in the past never waits. */
struct thread_arg {
        struct program_gate *g;
        int id;
};

static void *thread_main(void *userdata)
{
        struct thread_arg *a = userdata;
        struct program_gate_ticket t;

        for (int i = 0; i < 300; i++) {
                const char *path = i % 3 == 0 ? "/t/light" : "/t/heavy";
                program_gate_enter(a->g, path, 0, &t);
                program_gate_leave(a->g, &t, i % 3 == 0 ? 100 : 3000 + (uint64_t)a->id * 200, 3000);
        }
        return NULL;
}

static void test_threads(void)
{
        struct program_gate_config cfg = PROGRAM_GATE_CONFIG_DEFAULT;
        struct program_gate *g;
        pthread_t th[6];
        struct thread_arg args[6];
        struct program_gate_ticket t1, t2;

        cfg.cpus = 2;
        cfg.stall_usec = 2 * MS;
        ASSERT_EQ(program_gate_new(&cfg, &g), 0);
        for (int i = 0; i < 6; i++) {
                args[i] = (struct thread_arg){ .g = g, .id = i };
                ASSERT_EQ(pthread_create(&th[i], NULL, thread_main, &args[i]), 0);
        }
        for (int i = 0; i < 6; i++)
                ASSERT_EQ(pthread_join(th[i], NULL), 0);
        ASSERT_EQ(g->ctl.running, 0);

        /* SERIAL with one running: a deadline already passed lets the next in */
        pthread_mutex_lock(&g->lock);
        g->ctl.mode = PROGRAM_GATE_SERIAL;
        g->ctl.mode_since = now_usec(CLOCK_MONOTONIC);
        g->ctl.cfg.stall_usec = 60 * SEC;
        pthread_mutex_unlock(&g->lock);
        program_gate_enter(g, "/t/heavy", 0, &t1);
        program_gate_enter(g, "/t/heavy", 1, &t2);
        ASSERT_EQ(g->ctl.running, 2);
        program_gate_leave(g, &t2, 0, 0);
        program_gate_leave(g, &t1, 0, 0);
        ASSERT_EQ(g->ctl.running, 0);
        program_gate_free(g);
}

int main(void)
{
        TEST_RUN(test_scaling_machine_stays_parallel);
        TEST_RUN(test_slow_sharing_machine_goes_serial);
        TEST_RUN(test_probe_backoff_and_recovery);
        TEST_RUN(test_light_programs_pass);
        TEST_RUN(test_stall_rule);
        TEST_RUN(test_many_paths);
        TEST_RUN(test_threads);
        return 0;
}
