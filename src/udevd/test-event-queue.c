/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: test (several threads in the stress tests) */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proto/uevent.h"
#include "shared/macro.h"
#include "shared/tests.h"
#include "shared/thread-util.h"
#include "shared/time-util.h"
#include "udevd/event-queue.h"

/* ------------------------------------------------------------- helpers */

static void put_str(char *buf, size_t *len, const char *s)
{
        size_t n = strlen(s) + 1;

        ASSERT_TRUE(*len + n <= UEVENT_BUFFER_MAX);
        memcpy(buf + *len, s, n);
        *len += n;
}

static void put_kv(char *buf, size_t *len, const char *key, const char *v)
{
        char s[UEVENT_BUFFER_MAX];
        int n = snprintf(s, sizeof(s), "%s=%s", key, v);

        ASSERT_TRUE(n > 0 && (size_t)n < sizeof(s));
        put_str(buf, len, s);
}

/* A parsed kernel uevent; extra "KEY=VALUE" strings end with NULL. */
static struct uevent *mk(uint64_t seqnum, const char *action, const char *devpath,
                         const char *subsystem, ...)
{
        char buf[UEVENT_BUFFER_MAX], hdr[UEVENT_BUFFER_MAX], seq[32];
        struct uevent *ev = NULL;
        size_t len = 0;
        const char *s;
        va_list ap;

        snprintf(hdr, sizeof(hdr), "%s@%s", action, devpath);
        snprintf(seq, sizeof(seq), "%" PRIu64, seqnum);
        put_str(buf, &len, hdr);
        put_kv(buf, &len, "ACTION", action);
        put_kv(buf, &len, "DEVPATH", devpath);
        put_kv(buf, &len, "SUBSYSTEM", subsystem);
        va_start(ap, subsystem);
        while ((s = va_arg(ap, const char *)))
                put_str(buf, &len, s);
        va_end(ap);
        put_kv(buf, &len, "SEQNUM", seq);

        ASSERT_EQ(uevent_parse_kernel(buf, len, 0, &ev), 0);
        ASSERT_TRUE(ev);
        return ev;
}

struct counters {
        atomic_int busy_true, busy_false, need_worker;
};

static void on_busy(bool busy, void *userdata)
{
        struct counters *c = userdata;

        atomic_fetch_add(busy ? &c->busy_true : &c->busy_false, 1);
}

static void on_need(void *userdata)
{
        struct counters *c = userdata;

        atomic_fetch_add(&c->need_worker, 1);
}

static struct event_queue *new_queue(struct counters *c, size_t capacity)
{
        struct event_queue_hooks hooks = {
                .on_busy_changed = on_busy,
                .on_need_worker = on_need,
                .userdata = c,
        };
        struct event_queue *q = NULL;

        memset(c, 0, sizeof(*c));
        ASSERT_EQ(event_queue_new(&hooks, capacity, &q), 0);
        return q;
}

static void push1(struct event_queue *q, struct uevent *ev)
{
        ASSERT_EQ(event_queue_push(q, &ev, 1), 0);
}

/* The allocated size of a record, which is freed. */
static size_t mk_size_free(struct uevent *ev)
{
        size_t n = ev->alloc_size;

        uevent_free(ev);
        return n;
}

static struct event_queue_stats stats(struct event_queue *q)
{
        struct event_queue_stats s;

        event_queue_get_stats(q, &s);
        return s;
}

/* Take an event that must be runnable right now (take() cannot block). */
static struct queued_event *take_now(struct event_queue *q, uint64_t seqnum)
{
        struct queued_event *qe;

        ASSERT_TRUE(stats(q).runnable > 0);
        qe = event_queue_take(q);
        ASSERT_TRUE(qe);
        ASSERT_EQ(queued_event_uevent(qe)->seqnum, seqnum);
        return qe;
}

/* ------------------------------------------------------------ ordering */

static void test_independent(void)
{
        enum { N = 16 };
        struct queued_event *qe[N];
        struct uevent *evs[N];
        struct event_queue *q;
        struct counters c;
        char path[64];

        q = new_queue(&c, 0);
        for (unsigned i = 0; i < N; i++) {
                snprintf(path, sizeof(path), "/devices/virtual/ind/e%u", i);
                evs[i] = mk(i + 1, "add", path, "test", NULL);
        }
        ASSERT_EQ(event_queue_push(q, evs, N), 0);
        ASSERT_EQ(stats(q).runnable, N);
        ASSERT_EQ(atomic_load(&c.need_worker), 1);
        for (unsigned i = 0; i < N; i++)
                qe[i] = take_now(q, i + 1);
        ASSERT_EQ(stats(q).running, N);
        ASSERT_EQ(stats(q).queued, 0);
        for (unsigned i = N; i > 0; i--)
                event_queue_done(q, qe[i - 1]);
        ASSERT_EQ(stats(q).done_total, N);
        ASSERT_EQ(stats(q).pushed_total, N);
        ASSERT_EQ(atomic_load(&c.busy_true), 1);
        ASSERT_EQ(atomic_load(&c.busy_false), 1);
        event_queue_free(q);
}

/* An event released by its blocker starts before the runnable events that
 * arrived after it, though they became runnable before it (systemd-udevd's
 * order: the earliest arrived event that may run). */
static void test_released_in_arrival_order(void)
{
        struct queued_event *a, *b;
        struct event_queue *q;
        struct counters c;

        q = new_queue(&c, 0);
        push1(q, mk(1, "add", "/devices/virtual/net/v0", "net", NULL));
        push1(q, mk(2, "add", "/devices/virtual/net/v0/queues/rx-0", "queues", NULL));
        push1(q, mk(3, "add", "/devices/virtual/net/v1", "net", NULL));
        push1(q, mk(4, "add", "/devices/virtual/net/v2", "net", NULL));
        ASSERT_EQ(stats(q).runnable, 3); /* 1, 3, 4; 2 waits for 1 */
        a = take_now(q, 1);
        event_queue_done(q, a);
        ASSERT_EQ(stats(q).runnable, 3); /* 3, 4, then 2 */
        b = take_now(q, 2);
        a = take_now(q, 3);
        event_queue_done(q, a);
        event_queue_done(q, b);
        a = take_now(q, 4);
        event_queue_done(q, a);
        ASSERT_EQ(stats(q).queued + stats(q).running, 0);
        event_queue_free(q);
}

/* ------------------------------------------------- blocking take() helpers */

struct taker {
        pthread_t thread;
        struct event_queue *q;
        struct queued_event *_Atomic got;
        atomic_bool returned;
};

static void *taker_main(void *userdata)
{
        struct taker *t = userdata;

        atomic_store(&t->got, event_queue_take(t->q));
        atomic_store(&t->returned, true);
        return NULL;
}

static void taker_start(struct taker *t, struct event_queue *q)
{
        t->q = q;
        atomic_init(&t->got, NULL);
        atomic_init(&t->returned, false);
        ASSERT_EQ(thread_start(&t->thread, taker_main, t), 0);
}

static void sleep_ms(unsigned ms)
{
        struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };

        nanosleep(&ts, NULL);
}

/* Wait up to 10 s for the taker to return. */
static bool taker_wait(struct taker *t)
{
        for (unsigned i = 0; i < 10000 && !atomic_load(&t->returned); i++)
                sleep_ms(1);
        return atomic_load(&t->returned);
}

static struct queued_event *taker_join(struct taker *t)
{
        ASSERT_TRUE(taker_wait(t));
        ASSERT_EQ(pthread_join(t->thread, NULL), 0);
        return atomic_load(&t->got);
}

/* children_max 1: a second event waits while the first runs; done_take()
 * hands the next one to the same worker without waking the waiting one. */
static void test_max_running_done_take(void)
{
        struct event_queue *q;
        struct counters c;
        struct taker t;
        struct queued_event *a, *b, *d;

        q = new_queue(&c, 0);
        event_queue_set_max_running(q, 1);
        push1(q, mk(1, "add", "/devices/a", "test", NULL));
        push1(q, mk(2, "add", "/devices/b", "test", NULL));
        push1(q, mk(3, "add", "/devices/c", "test", NULL));
        ASSERT_EQ(stats(q).startable, 1);
        a = take_now(q, 1);
        ASSERT_EQ(stats(q).startable, 0);
        taker_start(&t, q);
        sleep_ms(50);
        ASSERT_TRUE(!atomic_load(&t.returned));
        b = event_queue_done_take(q, a);
        ASSERT_TRUE(b);
        ASSERT_EQ(queued_event_uevent(b)->seqnum, 2);
        ASSERT_TRUE(!atomic_load(&t.returned)); /* nobody was woken for it */
        event_queue_done(q, b);                 /* now the waiting taker gets 3 */
        d = taker_join(&t);
        ASSERT_TRUE(d);
        ASSERT_EQ(queued_event_uevent(d)->seqnum, 3);
        event_queue_done(q, d);
        /* without a limit both start at once */
        event_queue_set_max_running(q, 0);
        push1(q, mk(4, "add", "/devices/a", "test", NULL));
        push1(q, mk(5, "add", "/devices/b", "test", NULL));
        ASSERT_EQ(stats(q).startable, 2);
        a = take_now(q, 4);
        b = take_now(q, 5);
        event_queue_done(q, a);
        event_queue_done(q, b);
        event_queue_free(q);
}

static void test_paused(void)
{
        struct event_queue *q;
        struct counters c;
        struct taker t;
        struct queued_event *qe;

        q = new_queue(&c, 0);
        event_queue_set_paused(q, true);
        push1(q, mk(1, "add", "/devices/a", "test", NULL));
        ASSERT_EQ(stats(q).runnable, 1);
        ASSERT_EQ(atomic_load(&c.need_worker), 0); /* paused: no worker needed */
        taker_start(&t, q);
        sleep_ms(50);
        ASSERT_TRUE(!atomic_load(&t.returned));
        event_queue_set_paused(q, false);
        qe = taker_join(&t);
        ASSERT_TRUE(qe);
        ASSERT_EQ(queued_event_uevent(qe)->seqnum, 1);
        ASSERT_TRUE(queued_event_start_usec(qe) > 0);
        event_queue_done(q, qe);
        event_queue_free(q);
}

static void test_max_running(void)
{
        struct queued_event *a, *b, *x;
        struct event_queue *q;
        struct counters c;
        struct taker t;

        q = new_queue(&c, 0);
        event_queue_set_max_running(q, 2);
        push1(q, mk(1, "add", "/devices/a", "test", NULL));
        push1(q, mk(2, "add", "/devices/b", "test", NULL));
        push1(q, mk(3, "add", "/devices/c", "test", NULL));
        a = take_now(q, 1);
        b = take_now(q, 2);
        ASSERT_EQ(stats(q).runnable, 1);
        taker_start(&t, q);
        sleep_ms(50);
        ASSERT_TRUE(!atomic_load(&t.returned));
        event_queue_done(q, a);
        x = taker_join(&t);
        ASSERT_TRUE(x);
        ASSERT_EQ(queued_event_uevent(x)->seqnum, 3);
        event_queue_done(q, b);
        event_queue_done(q, x);

        /* raising the limit lets a waiting taker through */
        push1(q, mk(4, "add", "/devices/a", "test", NULL));
        push1(q, mk(5, "add", "/devices/b", "test", NULL));
        event_queue_set_max_running(q, 1);
        a = take_now(q, 4);
        taker_start(&t, q);
        sleep_ms(50);
        ASSERT_TRUE(!atomic_load(&t.returned));
        event_queue_set_max_running(q, 0);
        x = taker_join(&t);
        ASSERT_EQ(queued_event_uevent(x)->seqnum, 5);
        event_queue_done(q, a);
        event_queue_done(q, x);
        event_queue_free(q);
}

/* An idle taker gets a pushed event without a worker request. Whether the
 * taker already sleeps in take() is not observable, so allow a few tries. */
static bool need_worker_idle_once(unsigned wait_ms)
{
        struct event_queue *q;
        struct counters c;
        struct taker t;
        struct queued_event *qe;
        bool ok;

        q = new_queue(&c, 0);
        taker_start(&t, q);
        sleep_ms(wait_ms);
        push1(q, mk(1, "add", "/devices/a", "test", NULL));
        qe = taker_join(&t);
        ASSERT_TRUE(qe);
        ok = atomic_load(&c.need_worker) == 0;
        event_queue_done(q, qe);
        event_queue_free(q);
        return ok;
}

static void test_need_worker(void)
{
        struct queued_event *qe;
        struct event_queue *q;
        struct counters c;
        bool ok = false;

        for (unsigned i = 1; i <= 5 && !ok; i++)
                ok = need_worker_idle_once(50 * i);
        ASSERT_TRUE(ok);

        q = new_queue(&c, 0);
        /* nobody idle: the pool is asked for a worker */
        push1(q, mk(1, "add", "/devices/a", "test", NULL));
        ASSERT_EQ(atomic_load(&c.need_worker), 1);
        qe = take_now(q, 1);
        push1(q, mk(2, "add", "/devices/b", "test", NULL));
        ASSERT_EQ(atomic_load(&c.need_worker), 2);
        /* blocked events need no worker (but 2 is still runnable) */
        push1(q, mk(3, "add", "/devices/a/x", "test", NULL));
        ASSERT_EQ(atomic_load(&c.need_worker), 3);
        event_queue_done(q, take_now(q, 2));
        push1(q, mk(4, "add", "/devices/a/y", "test", NULL));
        ASSERT_EQ(atomic_load(&c.need_worker), 3);
        /* at the running limit no worker is requested */
        event_queue_set_max_running(q, 1);
        push1(q, mk(5, "add", "/devices/c", "test", NULL));
        ASSERT_EQ(atomic_load(&c.need_worker), 3);
        /* raising the limit asks for one */
        event_queue_set_max_running(q, 2);
        ASSERT_EQ(atomic_load(&c.need_worker), 4);
        event_queue_done(q, take_now(q, 5));
        event_queue_done(q, qe);
        event_queue_done(q, take_now(q, 3));
        event_queue_done(q, take_now(q, 4));
        event_queue_free(q);
}

/* ------------------------------------------------------------- shutdown */

static void test_shutdown_drain(void)
{
        struct queued_event *a, *b;
        struct event_queue *q;
        struct counters c;
        struct uevent *ev;
        struct taker t;

        q = new_queue(&c, 0);
        push1(q, mk(1, "add", "/devices/a", "test", NULL));
        push1(q, mk(2, "add", "/devices/a/b", "test", NULL));
        a = take_now(q, 1);
        event_queue_shutdown(q, false);
        ev = mk(3, "add", "/devices/z", "test", NULL);
        ASSERT_EQ(event_queue_push(q, &ev, 1), -ESHUTDOWN);
        ASSERT_EQ(event_queue_wait_capacity(q, USEC_INFINITY), -ESHUTDOWN);
        /* 2 is still queued (blocked): a taker waits for it */
        taker_start(&t, q);
        sleep_ms(50);
        ASSERT_TRUE(!atomic_load(&t.returned));
        event_queue_done(q, a);
        b = taker_join(&t);
        ASSERT_TRUE(b);
        ASSERT_EQ(queued_event_uevent(b)->seqnum, 2);
        /* nothing left: take() returns NULL at once */
        ASSERT_TRUE(event_queue_take(q) == NULL);
        event_queue_done(q, b);
        ASSERT_EQ(event_queue_wait_empty(q, USEC_INFINITY), 0);
        ASSERT_EQ(atomic_load(&c.busy_true), 1);
        ASSERT_EQ(atomic_load(&c.busy_false), 1);
        event_queue_free(q);
}

static void test_shutdown_drop(void)
{
        struct event_queue *q;
        struct counters c;
        struct queued_event *a;
        struct taker t1, t2;

        q = new_queue(&c, 0);
        taker_start(&t1, q);
        taker_start(&t2, q);
        sleep_ms(20);
        event_queue_set_paused(q, true);
        push1(q, mk(1, "add", "/devices/a", "test", NULL));
        push1(q, mk(2, "add", "/devices/a/b", "test", NULL));
        push1(q, mk(3, "add", "/devices/c", "test", NULL));
        push1(q, mk(4, "add", "/devices/a/b/c", "test", NULL));
        event_queue_set_max_running(q, 1);
        event_queue_set_paused(q, false);
        /* exactly one of the takers gets event 1 */
        for (unsigned i = 0; i < 10000 && !atomic_load(&t1.returned) && !atomic_load(&t2.returned);
             i++)
                sleep_ms(1);
        sleep_ms(20);
        ASSERT_TRUE(atomic_load(&t1.returned) != atomic_load(&t2.returned));
        ASSERT_EQ(stats(q).running, 1);
        event_queue_shutdown(q, true);
        ASSERT_EQ(stats(q).queued, 0);
        ASSERT_EQ(stats(q).runnable, 0);
        ASSERT_EQ(atomic_load(&c.busy_false), 0); /* 1 still runs */
        a = taker_join(&t1);
        if (a)
                ASSERT_TRUE(taker_join(&t2) == NULL);
        else
                a = taker_join(&t2);
        ASSERT_TRUE(a);
        ASSERT_EQ(queued_event_uevent(a)->seqnum, 1);
        ASSERT_TRUE(event_queue_take(q) == NULL);
        event_queue_done(q, a); /* its dependants were dropped */
        ASSERT_EQ(stats(q).running, 0);
        ASSERT_EQ(atomic_load(&c.busy_false), 1);
        event_queue_free(q);
}

static void test_shutdown_paused(void)
{
        struct event_queue *q;
        struct counters c;

        q = new_queue(&c, 0);
        event_queue_set_paused(q, true);
        push1(q, mk(1, "add", "/devices/a", "test", NULL));
        event_queue_shutdown(q, false);
        ASSERT_TRUE(event_queue_take(q) == NULL);
        ASSERT_EQ(stats(q).queued, 1);
        event_queue_free(q); /* frees the queued record */
}

/* ------------------------------------------------------------- abandon */

struct abandon_ctx {
        struct event_queue *q;
        uint64_t seqnum;
        unsigned visited;
};

static void abandon_cb(struct queued_event *qe, void *userdata)
{
        struct abandon_ctx *a = userdata;

        a->visited++;
        if (queued_event_uevent(qe)->seqnum == a->seqnum) {
                queued_event_abandon_locked(a->q, qe);
                queued_event_abandon_locked(a->q, qe); /* idempotent */
        }
}

struct claim_race_ctx {
        struct event_queue *q;
        bool abandoned;
};

static void claim_race_cb(struct queued_event *qe, void *userdata)
{
        struct claim_race_ctx *a = userdata;
        a->abandoned = queued_event_abandon_locked(a->q, qe);
}

/* Exactly one of "worker publishes" and "manager abandons" wins. */
static void test_claim_vs_abandon(void)
{
        struct claim_race_ctx ctx;
        struct queued_event *a;
        struct event_queue *q;
        struct counters c;

        q = new_queue(&c, 0);
        push1(q, mk(1, "add", "/devices/p", "test", NULL));
        push1(q, mk(2, "add", "/devices/q", "test", NULL));

        /* worker first: abandon must refuse, the event stays running */
        a = take_now(q, 1);
        ASSERT_TRUE(queued_event_claim_result(a));
        ASSERT_TRUE(queued_event_claim_result(a)); /* the owner may ask again */
        ctx = (struct claim_race_ctx){ .q = q };
        event_queue_foreach_running(q, claim_race_cb, &ctx);
        ASSERT_TRUE(!ctx.abandoned);
        ASSERT_TRUE(!queued_event_abandoned(a));
        ASSERT_EQ(stats(q).running, 1);
        event_queue_done(q, a);

        /* manager first: the worker's claim must fail */
        a = take_now(q, 2);
        ctx = (struct claim_race_ctx){ .q = q };
        event_queue_foreach_running(q, claim_race_cb, &ctx);
        ASSERT_TRUE(ctx.abandoned);
        ASSERT_TRUE(!queued_event_claim_result(a));
        ASSERT_EQ(stats(q).running, 0);
        event_queue_done(q, a);
        event_queue_free(q);
}

static void test_abandon(void)
{
        struct queued_event *a, *b, *x;
        struct event_queue *q;
        struct counters c;
        struct abandon_ctx ctx;
        int need;

        q = new_queue(&c, 0);
        push1(q, mk(1, "add", "/devices/p", "test", NULL));
        push1(q, mk(2, "add", "/devices/p/c", "test", NULL));
        push1(q, mk(3, "add", "/devices/x", "test", NULL));
        a = take_now(q, 1);
        x = take_now(q, 3);
        ASSERT_EQ(stats(q).runnable, 0);
        ASSERT_TRUE(!queued_event_abandoned(a));

        need = atomic_load(&c.need_worker);
        ctx = (struct abandon_ctx){ .q = q, .seqnum = 1 };
        event_queue_foreach_running(q, abandon_cb, &ctx);
        ASSERT_EQ(ctx.visited, 2);
        ASSERT_TRUE(queued_event_abandoned(a));
        ASSERT_EQ(stats(q).running, 1);
        ASSERT_EQ(stats(q).runnable, 1);
        ASSERT_EQ(stats(q).done_total, 1);
        ASSERT_EQ(atomic_load(&c.need_worker), need + 1); /* 2 became runnable, nobody idle */

        /* abandoned events are not visited again */
        ctx = (struct abandon_ctx){ .q = q, .seqnum = 0 };
        event_queue_foreach_running(q, abandon_cb, &ctx);
        ASSERT_EQ(ctx.visited, 1);

        b = take_now(q, 2);
        /* A new event for the abandoned device does not wait for it either. */
        push1(q, mk(4, "change", "/devices/p", "test", NULL));
        ASSERT_EQ(stats(q).runnable, 0); /* but it waits for 2 */
        event_queue_done(q, b);
        b = take_now(q, 4);
        event_queue_done(q, b);
        event_queue_done(q, x);
        ASSERT_EQ(stats(q).running + stats(q).queued, 0);
        ASSERT_EQ(atomic_load(&c.busy_false), 1); /* empty although a is still lent */
        ASSERT_EQ(event_queue_wait_empty(q, 0), 0);
        /* the worker finally returns the abandoned event: only freed */
        ASSERT_STREQ(queued_event_uevent(a)->devpath, "/devices/p");
        event_queue_done(q, a);
        ASSERT_EQ(stats(q).done_total, 4);
        ASSERT_EQ(atomic_load(&c.busy_true), 1);
        ASSERT_EQ(atomic_load(&c.busy_false), 1);
        event_queue_free(q);
}

static void test_abandon_last(void)
{
        struct event_queue *q;
        struct counters c;
        struct abandon_ctx ctx;
        struct queued_event *a;

        q = new_queue(&c, 0);
        push1(q, mk(1, "add", "/devices/p", "test", NULL));
        a = take_now(q, 1);
        ctx = (struct abandon_ctx){ .q = q, .seqnum = 1 };
        event_queue_foreach_running(q, abandon_cb, &ctx);
        ASSERT_EQ(atomic_load(&c.busy_false), 1);
        push1(q, mk(2, "add", "/devices/p", "test", NULL));
        ASSERT_EQ(atomic_load(&c.busy_true), 2);
        event_queue_done(q, take_now(q, 2));
        ASSERT_EQ(atomic_load(&c.busy_false), 2);
        event_queue_done(q, a);
        ASSERT_EQ(atomic_load(&c.busy_false), 2);
        /* freeing the queue with a lent abandoned event also frees it */
        push1(q, mk(3, "add", "/devices/p", "test", NULL));
        a = take_now(q, 3);
        ctx = (struct abandon_ctx){ .q = q, .seqnum = 3 };
        event_queue_foreach_running(q, abandon_cb, &ctx);
        event_queue_free(q);
}

/* An event given up (abandoned) or requeued leaves the running count: its
 * place under children_max opens at once; its worker's later done() changes
 * nothing. */
static void test_max_running_released(void)
{
        struct abandon_ctx ctx;
        struct queued_event *a, *b;
        struct event_queue *q;
        struct counters c;

        q = new_queue(&c, 0);
        event_queue_set_max_running(q, 2);
        push1(q, mk(1, "add", "/devices/a", "test", NULL));
        push1(q, mk(2, "add", "/devices/b", "test", NULL));
        push1(q, mk(3, "add", "/devices/c", "test", NULL));
        a = take_now(q, 1);
        b = take_now(q, 2);
        ASSERT_EQ(stats(q).startable, 0);
        ctx = (struct abandon_ctx){ .q = q, .seqnum = 1 };
        event_queue_foreach_running(q, abandon_cb, &ctx);
        ASSERT_EQ(stats(q).running, 1);
        ASSERT_EQ(stats(q).startable, 1); /* 3 may start in 1's place */
        event_queue_done(q, a);
        ASSERT_EQ(stats(q).running, 1);
        ASSERT_EQ(stats(q).startable, 1);
        /* b is requeued (a locked disk): 2 and 3 may start again */
        ASSERT_EQ(event_queue_requeue(q, b, 0, 60 * USEC_PER_SEC), 0);
        ASSERT_EQ(stats(q).running, 0);
        ASSERT_EQ(stats(q).runnable, 2);
        ASSERT_EQ(stats(q).startable, 2);
        b = take_now(q, 2); /* arrival order: 2 came before 3 */
        event_queue_done(q, b);
        b = take_now(q, 3);
        event_queue_done(q, b);
        event_queue_free(q);
}

/* ------------------------------------------------------------ capacity */

static void test_capacity(void)
{
        struct event_queue *q;
        struct counters c;
        struct queued_event *a;
        uint64_t t0;

        q = new_queue(&c, 2);
        ASSERT_EQ(event_queue_wait_capacity(q, 0), 0);
        push1(q, mk(1, "add", "/devices/a", "test", NULL));
        ASSERT_EQ(event_queue_wait_capacity(q, 0), 0);
        push1(q, mk(2, "add", "/devices/b", "test", NULL));
        t0 = now_usec(CLOCK_MONOTONIC);
        ASSERT_EQ(event_queue_wait_capacity(q, t0 + 20 * USEC_PER_MSEC), -ETIMEDOUT);
        ASSERT_TRUE(now_usec(CLOCK_MONOTONIC) >= t0 + 20 * USEC_PER_MSEC);
        ASSERT_EQ(event_queue_wait_capacity(q, 0), -ETIMEDOUT); /* deadline in the past */
        ASSERT_EQ(event_queue_wait_empty(q, t0 + 5 * USEC_PER_MSEC), -ETIMEDOUT);
        a = take_now(q, 1);
        ASSERT_EQ(event_queue_wait_capacity(q, 0), -ETIMEDOUT); /* running counts */
        event_queue_done(q, a);
        ASSERT_EQ(event_queue_wait_capacity(q, 0), 0);
        event_queue_done(q, take_now(q, 2));
        ASSERT_EQ(event_queue_wait_empty(q, 0), 0);
        event_queue_free(q);
}

struct cap_waiter {
        struct event_queue *q;
        atomic_int result;
        int (*fn)(struct event_queue *q, uint64_t deadline_usec);
};

static void *cap_waiter_main(void *userdata)
{
        struct cap_waiter *w = userdata;

        atomic_store(&w->result, w->fn(w->q, now_usec(CLOCK_MONOTONIC) + 10 * USEC_PER_SEC));
        return NULL;
}

static void test_capacity_wakeup(void)
{
        struct cap_waiter wc, we;
        pthread_t tc, te;
        struct event_queue *q;
        struct counters c;
        struct queued_event *a;

        q = new_queue(&c, 1);
        push1(q, mk(1, "add", "/devices/a", "test", NULL));
        wc = (struct cap_waiter){ .q = q, .fn = event_queue_wait_capacity };
        we = (struct cap_waiter){ .q = q, .fn = event_queue_wait_empty };
        atomic_init(&wc.result, 1);
        atomic_init(&we.result, 1);
        ASSERT_EQ(thread_start(&tc, cap_waiter_main, &wc), 0);
        ASSERT_EQ(thread_start(&te, cap_waiter_main, &we), 0);
        sleep_ms(30);
        ASSERT_EQ(atomic_load(&wc.result), 1);
        ASSERT_EQ(atomic_load(&we.result), 1);
        a = take_now(q, 1);
        event_queue_done(q, a);
        ASSERT_EQ(pthread_join(tc, NULL), 0);
        ASSERT_EQ(pthread_join(te, NULL), 0);
        ASSERT_EQ(atomic_load(&wc.result), 0);
        ASSERT_EQ(atomic_load(&we.result), 0);

        /* shutdown releases capacity waiters */
        push1(q, mk(2, "add", "/devices/a", "test", NULL));
        atomic_store(&wc.result, 1);
        ASSERT_EQ(thread_start(&tc, cap_waiter_main, &wc), 0);
        sleep_ms(30);
        event_queue_shutdown(q, true);
        ASSERT_EQ(pthread_join(tc, NULL), 0);
        ASSERT_EQ(atomic_load(&wc.result), -ESHUTDOWN);
        event_queue_free(q);
}

static void test_push_edge_cases(void)
{
        struct uevent *evs[3];
        struct event_queue *q;
        struct counters c;

        q = new_queue(&c, 0);
        ASSERT_EQ(event_queue_push(q, NULL, 0), 0);
        ASSERT_EQ(atomic_load(&c.busy_true), 0);
        evs[0] = mk(1, "add", "/devices/a", "test", NULL);
        evs[1] = NULL;
        evs[2] = mk(2, "add", "/devices/a", "test", NULL);
        ASSERT_EQ(event_queue_push(q, evs, 3), 0);
        ASSERT_EQ(stats(q).queued, 2);
        ASSERT_EQ(stats(q).runnable, 1);
        event_queue_shutdown(q, false);
        evs[0] = mk(3, "add", "/devices/b", "test", NULL);
        evs[1] = mk(4, "add", "/devices/c", "test", NULL);
        ASSERT_EQ(event_queue_push(q, evs, 2), -ESHUTDOWN); /* freed (ASan checks) */
        event_queue_free(q); /* frees the queued ones */
        event_queue_free(NULL);
}

/* --------------------------------------------------------------- scale */


/* ------------------------------------------- requeue (locked block devices) */

#define DISK "/devices/virtual/block/loop7"

static struct uevent *mk_disk(uint64_t seqnum, const char *action)
{
        return mk(seqnum, action, DISK, "block", "DEVTYPE=disk", "MAJOR=7", "MINOR=7",
                  "DEVNAME=loop7", NULL);
}

static struct uevent *mk_part(uint64_t seqnum, const char *action)
{
        return mk(seqnum, action, DISK "/loop7p1", "block", "DEVTYPE=partition", "MAJOR=259",
                  "MINOR=1", "DEVNAME=loop7p1", NULL);
}

static uint64_t elapsed_ms(uint64_t since_usec)
{
        return (now_usec(CLOCK_MONOTONIC) - since_usec) / 1000;
}

/* A requeued event waits for its retry time and keeps blocking dependants. */
static void test_requeue_delay(void)
{
        struct queued_event *a, *b;
        struct event_queue *q;
        struct counters c;
        uint64_t t0;

        q = new_queue(&c, 0);
        push1(q, mk_disk(1, "change"));
        push1(q, mk_part(2, "change")); /* child of 1: blocked by it */
        push1(q, mk(3, "add", "/devices/x", "test", NULL));
        a = take_now(q, 1);
        t0 = now_usec(CLOCK_MONOTONIC);
        ASSERT_EQ(event_queue_requeue(q, a, 150 * USEC_PER_MSEC, 60 * USEC_PER_SEC), 0);
        ASSERT_EQ(stats(q).queued, 3);
        ASSERT_EQ(stats(q).running, 0);
        ASSERT_EQ(stats(q).delayed, 1);
        ASSERT_EQ(stats(q).runnable, 1); /* only 3 */
        ASSERT_EQ(atomic_load(&c.busy_false), 0);
        b = take_now(q, 3);
        event_queue_done(q, b);
        /* nothing runnable now: take() sleeps until 1 is due */
        a = event_queue_take(q);
        ASSERT_TRUE(a);
        ASSERT_EQ(queued_event_uevent(a)->seqnum, 1);
        ASSERT_TRUE(elapsed_ms(t0) >= 140);
        ASSERT_EQ(stats(q).delayed, 0);
        ASSERT_EQ(stats(q).runnable, 0); /* 2 still waits for 1 */
        event_queue_done(q, a);
        b = take_now(q, 2);
        event_queue_done(q, b);
        ASSERT_EQ(stats(q).queued + stats(q).running, 0);
        ASSERT_EQ(atomic_load(&c.busy_true), 1);
        ASSERT_EQ(atomic_load(&c.busy_false), 1);
        ASSERT_EQ(stats(q).done_total, 3);
        event_queue_free(q);
}

/* A taker already asleep (no timeout) is woken to re-arm for the new time. */
static void test_requeue_wakes_sleeper(void)
{
        struct queued_event *a;
        struct event_queue *q;
        struct counters c;
        struct taker t;
        uint64_t t0;

        q = new_queue(&c, 0);
        push1(q, mk_disk(1, "add"));
        a = take_now(q, 1);
        taker_start(&t, q);
        sleep_ms(30);
        ASSERT_TRUE(!atomic_load(&t.returned));
        t0 = now_usec(CLOCK_MONOTONIC);
        ASSERT_EQ(event_queue_requeue(q, a, 100 * USEC_PER_MSEC, 60 * USEC_PER_SEC), 0);
        a = taker_join(&t);
        ASSERT_TRUE(a);
        ASSERT_EQ(queued_event_uevent(a)->seqnum, 1);
        ASSERT_TRUE(elapsed_ms(t0) >= 90);
        event_queue_done(q, a);
        ASSERT_EQ(stats(q).queued + stats(q).running, 0);
        event_queue_free(q);
}

/* A close-after-write on the disk, or a new uevent of the same disk, ends the
 * back-off at once; other disks do not. */
static void test_requeue_retry_disk(void)
{
        struct queued_event *a, *b;
        struct event_queue *q;
        struct counters c;
        int need;

        q = new_queue(&c, 0);
        push1(q, mk_part(1, "change"));
        a = take_now(q, 1);
        ASSERT_EQ(event_queue_requeue(q, a, 60 * USEC_PER_SEC, 120 * USEC_PER_SEC), 0);
        ASSERT_EQ(stats(q).runnable, 0);
        event_queue_retry_disk(q, "/devices/virtual/block/loop8");
        event_queue_retry_disk(q, DISK "/loop7p1");
        ASSERT_EQ(stats(q).runnable, 0);
        need = atomic_load(&c.need_worker);
        event_queue_retry_disk(q, DISK);
        ASSERT_EQ(stats(q).runnable, 1);
        ASSERT_EQ(stats(q).delayed, 0);
        ASSERT_EQ(atomic_load(&c.need_worker), need + 1); /* nobody waits in take() */
        a = take_now(q, 1);

        /* again, ended by a new event of the disk (blocked by 1 itself) */
        ASSERT_EQ(event_queue_requeue(q, a, 60 * USEC_PER_SEC, 120 * USEC_PER_SEC), 0);
        push1(q, mk(2, "change", "/devices/virtual/block/loop9", "block", "DEVTYPE=disk",
                    NULL));
        push1(q, mk_part(3, "remove")); /* remove: takes no lock, ends nothing */
        ASSERT_EQ(stats(q).delayed, 1);
        ASSERT_EQ(stats(q).runnable, 1); /* 2 */
        push1(q, mk_disk(4, "change"));
        ASSERT_EQ(stats(q).delayed, 0);
        ASSERT_EQ(stats(q).runnable, 2); /* 1 and 2; 3 and 4 wait for 1 */
        a = take_now(q, 1); /* arrived first, though runnable again last */
        event_queue_done(q, a);
        b = take_now(q, 2);
        event_queue_done(q, b);
        a = take_now(q, 3);
        event_queue_done(q, a);
        a = take_now(q, 4);
        event_queue_done(q, a);
        ASSERT_EQ(stats(q).queued + stats(q).running, 0);
        event_queue_free(q);
}

/* The retry clock starts at the first requeue and is not reset by later ones. */
static void test_requeue_timeout(void)
{
        struct queued_event *a;
        struct event_queue *q;
        struct counters c;

        q = new_queue(&c, 0);
        push1(q, mk_disk(1, "change"));
        push1(q, mk_part(2, "change"));
        a = take_now(q, 1);
        ASSERT_EQ(event_queue_requeue(q, a, 0, 80 * USEC_PER_MSEC), 0);
        a = take_now(q, 1);
        ASSERT_EQ(event_queue_requeue(q, a, 0, 60 * USEC_PER_SEC), 0); /* clock kept */
        a = take_now(q, 1);
        sleep_ms(100);
        ASSERT_EQ(event_queue_requeue(q, a, 0, 60 * USEC_PER_SEC), -ETIMEDOUT);
        ASSERT_EQ(stats(q).running, 1); /* still the caller's */
        ASSERT_TRUE(queued_event_claim_result(a));
        event_queue_done(q, a);
        a = take_now(q, 2);
        event_queue_done(q, a);
        ASSERT_EQ(stats(q).queued + stats(q).running, 0);
        event_queue_free(q);
}

static void test_requeue_abandoned(void)
{
        struct abandon_ctx ctx;
        struct queued_event *a;
        struct event_queue *q;
        struct counters c;

        q = new_queue(&c, 0);
        push1(q, mk_disk(1, "change"));
        a = take_now(q, 1);
        ctx = (struct abandon_ctx){ .q = q, .seqnum = 1 };
        event_queue_foreach_running(q, abandon_cb, &ctx);
        ASSERT_EQ(event_queue_requeue(q, a, 0, USEC_PER_SEC), -ECANCELED);
        event_queue_done(q, a);
        ASSERT_EQ(stats(q).queued + stats(q).running, 0);

        /* a result already claimed cannot be requeued either */
        push1(q, mk_disk(2, "change"));
        a = take_now(q, 2);
        ASSERT_TRUE(queued_event_claim_result(a));
        ASSERT_EQ(event_queue_requeue(q, a, 0, USEC_PER_SEC), -ECANCELED);
        event_queue_done(q, a);
        event_queue_free(q);
}

static void test_requeue_shutdown(void)
{
        struct queued_event *a, *b;
        struct event_queue *q;
        struct counters c;

        /* drain: a delayed event is retried, then refused, and the queue empties */
        q = new_queue(&c, 0);
        push1(q, mk_disk(1, "change"));
        push1(q, mk_part(2, "change"));
        a = take_now(q, 1);
        ASSERT_EQ(event_queue_requeue(q, a, 20 * USEC_PER_MSEC, USEC_PER_SEC), 0);
        event_queue_shutdown(q, false);
        a = event_queue_take(q); /* not NULL: still queued */
        ASSERT_TRUE(a);
        ASSERT_EQ(queued_event_uevent(a)->seqnum, 1);
        ASSERT_EQ(event_queue_requeue(q, a, 0, USEC_PER_SEC), -ESHUTDOWN);
        event_queue_done(q, a);
        b = take_now(q, 2);
        event_queue_done(q, b);
        ASSERT_TRUE(event_queue_take(q) == NULL);
        ASSERT_EQ(atomic_load(&c.busy_false), 1);
        event_queue_free(q);

        /* drop: delayed events go with the other queued ones */
        q = new_queue(&c, 0);
        push1(q, mk_disk(1, "change"));
        push1(q, mk_part(2, "change"));
        a = take_now(q, 1);
        ASSERT_EQ(event_queue_requeue(q, a, 60 * USEC_PER_SEC, 120 * USEC_PER_SEC), 0);
        event_queue_shutdown(q, true);
        ASSERT_EQ(stats(q).queued + stats(q).running + stats(q).delayed, 0);
        ASSERT_TRUE(event_queue_take(q) == NULL);
        event_queue_retry_disk(q, DISK); /* harmless */
        ASSERT_EQ(atomic_load(&c.busy_false), 1);
        event_queue_free(q);

        /* free with a delayed event still queued */
        q = new_queue(&c, 0);
        push1(q, mk_disk(1, "change"));
        a = take_now(q, 1);
        ASSERT_EQ(event_queue_requeue(q, a, 60 * USEC_PER_SEC, 120 * USEC_PER_SEC), 0);
        event_queue_free(q);
}

/* Several workers and a writer pounding on requeue/retry_disk: every event
 * ends up done exactly once (TSan/ASan food). */
struct requeue_stress {
        struct event_queue *q;
        atomic_int done;
        atomic_int requeued;
};

static void *requeue_worker(void *userdata)
{
        struct requeue_stress *rs = userdata;
        struct queued_event *qe;

        while ((qe = event_queue_take(rs->q))) {
                /* every event is "locked" twice, then processed */
                if (atomic_fetch_add(&rs->requeued, 1) % 3 != 2 &&
                    event_queue_requeue(rs->q, qe, 2 * USEC_PER_MSEC, 10 * USEC_PER_SEC) == 0)
                        continue;
                atomic_fetch_add(&rs->done, 1);
                event_queue_done(rs->q, qe);
        }
        return NULL;
}

static void test_requeue_stress(void)
{
        enum { N_WORKERS = 4, N_EVENTS = 300 };
        struct requeue_stress rs = {};
        pthread_t th[N_WORKERS];
        struct counters c;
        char path[64];

        rs.q = new_queue(&c, 0);
        for (int i = 0; i < N_WORKERS; i++)
                ASSERT_EQ(thread_start(&th[i], requeue_worker, &rs), 0);
        for (int i = 0; i < N_EVENTS; i++) {
                snprintf(path, sizeof(path), "/devices/virtual/block/loop%d", i % 7);
                push1(rs.q, mk((uint64_t)i + 1, "change", path, "block", "DEVTYPE=disk", NULL));
                if (i % 5 == 0)
                        event_queue_retry_disk(rs.q, "/devices/virtual/block/loop3");
        }
        ASSERT_EQ(event_queue_wait_empty(rs.q, now_usec(CLOCK_MONOTONIC) + 60 * USEC_PER_SEC),
                  0);
        event_queue_shutdown(rs.q, false);
        for (int i = 0; i < N_WORKERS; i++)
                ASSERT_EQ(pthread_join(th[i], NULL), 0);
        ASSERT_EQ(atomic_load(&rs.done), N_EVENTS);
        ASSERT_EQ(stats(rs.q).done_total, N_EVENTS);
        event_queue_free(rs.q);
}

/* ------------------------------------------------------- storm damping */

#define CDEV "/devices/virtual/coal/c0"

static struct uevent *mk_change(uint64_t seqnum, const char *extra)
{
        return mk(seqnum, "change", CDEV, "test", "MAJOR=10", "MINOR=200", "DEVNAME=coal0",
                  extra, NULL);
}

static const char *prop(const struct queued_event *qe, const char *key)
{
        const char *v = uevent_get(queued_event_uevent(qe), key);

        return v ? v : "";
}

/* "change" events behind an unstarted "change" of the same device are
 * merged into it: one queue entry, the last record, the first position. */
static void test_coalesce_basic(void)
{
        struct queued_event *a, *b, *x;
        struct event_queue *q;
        struct counters c;

        q = new_queue(&c, 0);
        event_queue_set_coalesce(q, true);
        push1(q, mk(1, "add", CDEV, "test", "MAJOR=10", "MINOR=200", "DEVNAME=coal0", NULL));
        a = take_now(q, 1);
        push1(q, mk_change(2, "P=a"));
        push1(q, mk(3, "add", "/devices/virtual/coal/other", "test", NULL)); /* independent */
        push1(q, mk_change(4, "P=b"));
        push1(q, mk_change(5, "P=c"));
        ASSERT_EQ(stats(q).queued, 2);
        ASSERT_EQ(stats(q).coalesced_total, 2);
        ASSERT_EQ(stats(q).pushed_total, 3);
        x = take_now(q, 3);
        event_queue_done(q, x);
        event_queue_done(q, a);
        b = take_now(q, 5); /* the last record ... */
        ASSERT_EQ(queued_event_first_seqnum(b), 2); /* ... at the first one's place */
        ASSERT_EQ(queued_event_merged(b), 2);
        ASSERT_STREQ(prop(b, "P"), "c");
        ASSERT_EQ(stats(q).queued, 0);
        event_queue_done(q, b);
        ASSERT_EQ(stats(q).done_total, 3);
        ASSERT_EQ(atomic_load(&c.busy_false), 1);
        event_queue_free(q);
}

/* Never merged: into a running event, across another event of the device
 * (remove, a child's event), into another device's or action's event,
 * into a requeued event, or with coalescing off. */
static void test_coalesce_not(void)
{
        struct queued_event *a, *b;
        struct event_queue *q;
        struct counters c;

        /* running: the next change queues; the one after merges into it */
        q = new_queue(&c, 0);
        event_queue_set_coalesce(q, true);
        push1(q, mk_change(1, "P=a"));
        a = take_now(q, 1);
        push1(q, mk_change(2, "P=b"));
        push1(q, mk_change(3, "P=c"));
        ASSERT_EQ(stats(q).queued, 1);
        ASSERT_EQ(stats(q).coalesced_total, 1);
        event_queue_done(q, a);
        b = take_now(q, 3);
        ASSERT_EQ(queued_event_first_seqnum(b), 2);
        event_queue_done(q, b);
        event_queue_free(q);

        /* another event of the device, or of a child, in between */
        q = new_queue(&c, 0);
        event_queue_set_coalesce(q, true);
        event_queue_set_paused(q, true);
        push1(q, mk_change(1, NULL));
        push1(q, mk(2, "bind", CDEV, "test", "MAJOR=10", "MINOR=200", "DEVNAME=coal0", NULL));
        push1(q, mk_change(3, NULL));
        push1(q, mk(4, "add", CDEV "/child", "test", NULL));
        push1(q, mk_change(5, NULL));
        /* other devices, other actions */
        push1(q, mk(6, "change", "/devices/virtual/coal/c1", "test", NULL));
        push1(q, mk(7, "add", "/devices/virtual/coal/c2", "test", NULL));
        push1(q, mk(8, "add", "/devices/virtual/coal/c2", "test", NULL));
        ASSERT_EQ(stats(q).queued, 8);
        ASSERT_EQ(stats(q).coalesced_total, 0);
        event_queue_shutdown(q, true);
        event_queue_free(q);

        /* a requeued event (it was taken once) */
        q = new_queue(&c, 0);
        event_queue_set_coalesce(q, true);
        push1(q, mk_disk(1, "change"));
        a = take_now(q, 1);
        ASSERT_EQ(event_queue_requeue(q, a, 60 * USEC_PER_SEC, 120 * USEC_PER_SEC), 0);
        push1(q, mk_disk(2, "change"));
        ASSERT_EQ(stats(q).queued, 2);
        ASSERT_EQ(stats(q).coalesced_total, 0);
        event_queue_shutdown(q, true);
        event_queue_free(q);

        /* off (the default) */
        q = new_queue(&c, 0);
        event_queue_set_paused(q, true);
        push1(q, mk_change(1, NULL));
        push1(q, mk_change(2, NULL));
        ASSERT_EQ(stats(q).queued, 2);
        ASSERT_EQ(stats(q).coalesced_total, 0);
        event_queue_shutdown(q, true);
        event_queue_free(q);
}

/* An event a client waits for by its SYNTH_UUID is never absorbed; a later
 * one with a UUID absorbs earlier ones without, and keeps its UUID. */
static void test_coalesce_synth_uuid(void)
{
        const char *u1 = "SYNTH_UUID=11111111-1111-4111-8111-111111111111";
        const char *u3 = "SYNTH_UUID=33333333-3333-4333-8333-333333333333";
        struct queued_event *qe;
        struct event_queue *q;
        struct counters c;

        q = new_queue(&c, 0);
        event_queue_set_coalesce(q, true);
        event_queue_set_paused(q, true);
        push1(q, mk_change(1, u1));
        push1(q, mk_change(2, "SYNTH_UUID=0"));  /* behind 1, not merged */
        push1(q, mk_change(3, u3));              /* merged into 2 */
        push1(q, mk_change(4, NULL));            /* 2 now waits for u3: not merged */
        push1(q, mk_change(5, u3 /* the same */)); /* merged into 4 */
        ASSERT_EQ(stats(q).queued, 3);
        ASSERT_EQ(stats(q).coalesced_total, 2);
        event_queue_set_paused(q, false);
        qe = take_now(q, 1);
        ASSERT_STREQ(prop(qe, "SYNTH_UUID"), u1 + strlen("SYNTH_UUID="));
        event_queue_done(q, qe);
        qe = take_now(q, 3);
        ASSERT_EQ(queued_event_first_seqnum(qe), 2);
        ASSERT_STREQ(prop(qe, "SYNTH_UUID"), u3 + strlen("SYNTH_UUID="));
        event_queue_done(q, qe);
        qe = take_now(q, 5);
        ASSERT_EQ(queued_event_first_seqnum(qe), 4);
        event_queue_done(q, qe);
        ASSERT_EQ(stats(q).done_total, 3);
        event_queue_free(q);
}

/* Only the queue operations are timed, not building the records; in CPU time
 * of this thread, so that a loaded machine does not fail the test. */
struct stopwatch {
        uint64_t total, t0;
};

static void sw_start(struct stopwatch *sw)
{
        sw->t0 = now_usec(CLOCK_THREAD_CPUTIME_ID);
}

static void sw_stop(struct stopwatch *sw)
{
        sw->total += now_usec(CLOCK_THREAD_CPUTIME_ID) - sw->t0;
}

static double sw_seconds(const struct stopwatch *sw)
{
        return (double)sw->total / (double)USEC_PER_SEC;
}

static void scale_push(struct event_queue *q, struct stopwatch *sw, struct uevent *ev)
{
        sw_start(sw);
        ASSERT_EQ(event_queue_push(q, &ev, 1), 0);
        sw_stop(sw);
}

static void scale_drain(struct event_queue *q, struct stopwatch *sw, size_t n)
{
        sw_start(sw);
        for (size_t i = 0; i < n; i++)
                event_queue_done(q, event_queue_take(q));
        sw_stop(sw);
}

/* ------------------------------------------------------------- budget */

/* Push one record, return what it was charged (stats before and after). */
static size_t push_charged(struct event_queue *q, struct uevent *ev)
{
        size_t before = stats(q).bytes, alloc = ev->alloc_size;

        push1(q, ev);
        ASSERT_TRUE(stats(q).bytes > before + alloc); /* the record and the overhead */
        return stats(q).bytes - before;
}

/* Bytes: charged at push, kept while running, released at done, abandon
 * and drop; merges charge the first and the newest record; the peak stays. */
static void test_bytes_accounting(void)
{
        char big[2048];
        struct queued_event *a, *b, *x;
        struct abandon_ctx ab;
        struct event_queue *q;
        struct counters c;
        struct uevent *ev;
        size_t ca, cb, cc, peak, alloc2, alloc3;

        q = new_queue(&c, 0);
        ASSERT_EQ(stats(q).bytes, 0);
        ca = push_charged(q, mk(1, "add", "/devices/a", "test", NULL));
        memset(big, 'x', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        memcpy(big, "BIG=", 4);
        ev = mk(2, "add", "/devices/b", "test", big, NULL);
        alloc2 = ev->alloc_size;
        cb = push_charged(q, ev);
        ASSERT_TRUE(cb >= ca + sizeof(big));
        ASSERT_EQ(cb - alloc2, ca - mk_size_free(mk(9, "add", "/devices/a", "test", NULL)));
        ASSERT_EQ(stats(q).bytes, ca + cb);
        a = take_now(q, 1);
        ASSERT_EQ(stats(q).bytes, ca + cb); /* running events count */
        event_queue_done(q, a);
        ASSERT_EQ(stats(q).bytes, cb);
        ASSERT_EQ(stats(q).bytes_peak, ca + cb);
        b = take_now(q, 2);
        event_queue_done(q, b);
        ASSERT_EQ(stats(q).bytes, 0);
        ASSERT_EQ(stats(q).bytes_peak, ca + cb);

        /* merges: the first record stays, the newest replaces the one between */
        event_queue_set_coalesce(q, true);
        cc = push_charged(q, mk_change(10, "P=a"));
        ev = mk_change(11, "P=bb");
        alloc2 = ev->alloc_size;
        push1(q, ev);
        ASSERT_EQ(stats(q).coalesced_total, 1);
        ASSERT_EQ(stats(q).bytes, cc + alloc2);
        ev = mk_change(12, "P=cccccccccccccccccccccccccccccccccccccccc");
        alloc3 = ev->alloc_size;
        push1(q, ev);
        ASSERT_EQ(stats(q).coalesced_total, 2);
        ASSERT_EQ(stats(q).bytes, cc + alloc3);
        x = take_now(q, 12);
        event_queue_done(q, x);
        ASSERT_EQ(stats(q).bytes, 0);

        /* abandoned: out of the budget at once, done later changes nothing */
        peak = stats(q).bytes_peak;
        ca = push_charged(q, mk(20, "add", "/devices/a", "test", NULL));
        cb = push_charged(q, mk(21, "add", "/devices/b", "test", NULL));
        a = take_now(q, 20);
        ab = (struct abandon_ctx){ .q = q, .seqnum = 20 };
        event_queue_foreach_running(q, abandon_cb, &ab);
        ASSERT_EQ(stats(q).bytes, cb);
        event_queue_done(q, a);
        ASSERT_EQ(stats(q).bytes, cb);

        /* dropped at shutdown: released; the running one stays until done */
        b = take_now(q, 21);
        push_charged(q, mk(22, "add", "/devices/c", "test", NULL));
        event_queue_shutdown(q, true);
        ASSERT_EQ(stats(q).bytes, cb);
        event_queue_done(q, b);
        ASSERT_EQ(stats(q).bytes, 0);
        ASSERT_TRUE(stats(q).bytes_peak >= peak);
        event_queue_free(q);
}

/* room() and wait_capacity() stop at either limit; clock-free (a deadline
 * in the past only looks). */
static void test_budget_either_limit(void)
{
        struct queued_event *a, *b;
        struct event_queue *q;
        struct counters c;
        size_t one;

        /* the byte limit binds first: room for 2.5 events, 5 by count */
        q = new_queue(&c, 5);
        ASSERT_EQ(event_queue_room(q), 5);
        one = push_charged(q, mk(1, "add", "/devices/a", "test", NULL));
        event_queue_set_max_bytes(q, one * 5 / 2);
        ASSERT_EQ(stats(q).max_bytes, one * 5 / 2);
        ASSERT_EQ(stats(q).max_events, 5);
        ASSERT_EQ(event_queue_room(q), 1); /* 1.5 events' bytes left: one */
        ASSERT_EQ(event_queue_wait_capacity(q, 0), 0);
        push1(q, mk(2, "add", "/devices/b", "test", NULL));
        ASSERT_EQ(event_queue_room(q), 1); /* under the limit: at least one */
        push1(q, mk(3, "add", "/devices/c", "test", NULL));
        ASSERT_TRUE(stats(q).bytes >= one * 5 / 2);
        ASSERT_EQ(event_queue_room(q), 0);
        ASSERT_EQ(event_queue_wait_capacity(q, 0), -ETIMEDOUT);
        a = take_now(q, 1);
        ASSERT_EQ(event_queue_room(q), 0); /* running events count */
        event_queue_done(q, a);
        ASSERT_EQ(event_queue_room(q), 1);
        /* room, but above the resume mark: 2 of 2.5 events' bytes */
        ASSERT_EQ(event_queue_wait_capacity(q, 0), -ETIMEDOUT);
        event_queue_done(q, take_now(q, 2));
        ASSERT_EQ(event_queue_wait_capacity(q, 0), 0); /* 1 of 2.5 */
        /* raising the limit makes room */
        push1(q, mk(4, "add", "/devices/d", "test", NULL));
        ASSERT_EQ(event_queue_room(q), 1);
        push1(q, mk(5, "add", "/devices/e", "test", NULL));
        ASSERT_EQ(event_queue_room(q), 0);
        event_queue_set_max_bytes(q, 0);
        ASSERT_EQ(event_queue_room(q), 2); /* 3 of 5 events */
        event_queue_free(q);

        /* the event limit binds first */
        q = new_queue(&c, 2);
        event_queue_set_max_bytes(q, 1024 * 1024);
        push1(q, mk(1, "add", "/devices/a", "test", NULL));
        ASSERT_EQ(event_queue_room(q), 1);
        push1(q, mk(2, "add", "/devices/b", "test", NULL));
        ASSERT_TRUE(stats(q).bytes < 1024 * 1024);
        ASSERT_EQ(event_queue_room(q), 0);
        ASSERT_EQ(event_queue_wait_capacity(q, 0), -ETIMEDOUT);
        a = take_now(q, 1);
        b = take_now(q, 2);
        event_queue_done(q, b);
        ASSERT_EQ(event_queue_room(q), 1);
        event_queue_done(q, a);
        ASSERT_EQ(event_queue_room(q), 2);

        /* no limits: unlimited room; after shutdown none */
        event_queue_free(q);
        q = new_queue(&c, 0);
        ASSERT_EQ(event_queue_room(q), SIZE_MAX);
        event_queue_shutdown(q, true);
        ASSERT_EQ(event_queue_room(q), 0);
        ASSERT_EQ(event_queue_wait_capacity(q, 0), -ESHUTDOWN);
        event_queue_free(q);
}

/* A big event shrinks the room the byte limit leaves: the producer may push
 * no more than would fit if each cost as much as the largest so far. */
static void test_budget_room_largest(void)
{
        char big[4096];
        struct event_queue *q;
        struct counters c;
        size_t small, large;

        q = new_queue(&c, 0);
        small = push_charged(q, mk(1, "add", "/devices/a", "test", NULL));
        event_queue_set_max_bytes(q, small * 41); /* 40 small ones left */
        ASSERT_EQ(event_queue_room(q), 40);
        memset(big, 'x', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        memcpy(big, "BIG=", 4);
        large = push_charged(q, mk(2, "add", "/devices/b", "test", big, NULL));
        ASSERT_TRUE(large > 4 * small);
        ASSERT_EQ(event_queue_room(q), (small * 41 - small - large) / large);
        event_queue_free(q);
}

struct room_waiter {
        struct event_queue *q;
        atomic_int result;
};

static void *room_waiter_main(void *userdata)
{
        struct room_waiter *w = userdata;

        atomic_store(&w->result, event_queue_wait_capacity(w->q, USEC_INFINITY));
        return NULL;
}

/* A producer stopped at the event limit goes on only once the queue has
 * fallen by a quarter of it, so that it reads a batch per wake-up. */
static void test_budget_resume_mark(void)
{
        struct queued_event *a[8];
        struct room_waiter w;
        struct event_queue *q;
        struct counters c;
        pthread_t t;
        char path[32];

        q = new_queue(&c, 8);
        for (uint64_t i = 1; i <= 8; i++) {
                snprintf(path, sizeof(path), "/devices/d%" PRIu64, i);
                push1(q, mk(i, "add", path, "test", NULL));
        }
        ASSERT_EQ(event_queue_room(q), 0);
        for (uint64_t i = 1; i <= 8; i++)
                a[i - 1] = take_now(q, i);
        w = (struct room_waiter){ .q = q };
        atomic_init(&w.result, 1);
        ASSERT_EQ(thread_start(&t, room_waiter_main, &w), 0);
        while (stats(q).space_waiters == 0)
                sched_yield();
        event_queue_done(q, a[0]);
        ASSERT_EQ(event_queue_room(q), 1);
        ASSERT_EQ(event_queue_wait_capacity(q, 0), -ETIMEDOUT); /* 7 of 8 */
        ASSERT_EQ(atomic_load(&w.result), 1);
        event_queue_done(q, a[1]); /* 6 of 8: the mark */
        ASSERT_EQ(pthread_join(t, NULL), 0);
        ASSERT_EQ(atomic_load(&w.result), 0);
        ASSERT_EQ(event_queue_wait_capacity(q, 0), 0);
        for (size_t i = 2; i < 8; i++)
                event_queue_done(q, a[i]);
        event_queue_free(q);
}

/* A producer waiting at the byte limit is woken when an event is done (or
 * abandoned): no timeout involved, it waits for ever otherwise. */
static void test_budget_wakeup(void)
{
        struct room_waiter w;
        struct queued_event *a;
        struct abandon_ctx ab;
        struct event_queue *q;
        struct counters c;
        pthread_t t;
        size_t one;

        q = new_queue(&c, 100);
        one = push_charged(q, mk(1, "add", "/devices/a", "test", NULL));
        event_queue_set_max_bytes(q, one);
        ASSERT_EQ(event_queue_room(q), 0);
        for (int round = 0; round < 2; round++) {
                w = (struct room_waiter){ .q = q };
                atomic_init(&w.result, 1);
                ASSERT_EQ(thread_start(&t, room_waiter_main, &w), 0);
                while (stats(q).space_waiters == 0)
                        sched_yield(); /* it is inside, and the queue is at its limit */
                ASSERT_EQ(atomic_load(&w.result), 1);
                a = take_now(q, 1 + (uint64_t)round);
                ASSERT_EQ(atomic_load(&w.result), 1); /* running still counts */
                if (round == 0) {
                        event_queue_done(q, a);
                } else {
                        ab = (struct abandon_ctx){ .q = q, .seqnum = 2 };
                        event_queue_foreach_running(q, abandon_cb, &ab);
                }
                ASSERT_EQ(pthread_join(t, NULL), 0);
                ASSERT_EQ(atomic_load(&w.result), 0);
                if (round == 0)
                        push1(q, mk(2, "add", "/devices/a", "test", NULL));
        }
        event_queue_done(q, a);
        event_queue_free(q);
}

static void test_scale_independent(void)
{
        enum { N = 10000, BATCH = 100 };
        struct stopwatch sw1 = {}, sw2 = {};
        struct uevent *evs[BATCH];
        struct event_queue *q;
        struct counters c;
        char path[128];

        q = new_queue(&c, 0);
        for (unsigned i = 0; i < N; i += BATCH) {
                for (unsigned j = 0; j < BATCH; j++) {
                        snprintf(path, sizeof(path), "/devices/virtual/scale/g%u/e%u",
                                 (i + j) % 7, i + j);
                        evs[j] = mk(i + j + 1, "add", path, "test", NULL);
                }
                sw_start(&sw1);
                ASSERT_EQ(event_queue_push(q, evs, BATCH), 0);
                sw_stop(&sw1);
        }
        ASSERT_EQ(stats(q).runnable, N);
        scale_drain(q, &sw1, N);
        ASSERT_EQ(stats(q).done_total, N);
        fprintf(stderr, "(%.3f s ", sw_seconds(&sw1));
        ASSERT_TRUE(sw_seconds(&sw1) < 2.0);

        /* A parent that has to wait for 10000 earlier children, and 10000
         * children that have to wait for it. */
        for (unsigned i = 0; i < N; i++) {
                snprintf(path, sizeof(path), "/devices/virtual/scale/g%u/e%u", i % 7, i);
                scale_push(q, &sw2, mk(N + 1 + i, "change", path, "test", NULL));
        }
        scale_push(q, &sw2, mk(2 * N + 1, "change", "/devices/virtual/scale", "test", NULL));
        for (unsigned i = 0; i < N; i++) {
                snprintf(path, sizeof(path), "/devices/virtual/scale/g%u/e%u", i % 7, i);
                scale_push(q, &sw2, mk(2 * N + 2 + i, "remove", path, "test", NULL));
        }
        ASSERT_EQ(stats(q).runnable, N);
        scale_drain(q, &sw2, 2 * N + 1);
        ASSERT_EQ(stats(q).runnable, 0);
        ASSERT_EQ(stats(q).queued, 0);
        ASSERT_EQ(stats(q).done_total, 3 * N + 1);
        fprintf(stderr, "+ %.3f s) ", sw_seconds(&sw2));
        ASSERT_TRUE(sw_seconds(&sw2) < 4.0);
        event_queue_free(q);
}

static void test_scale_chain(void)
{
        enum { N = 10000 };
        struct stopwatch sw = {};
        struct event_queue *q;
        struct counters c;

        q = new_queue(&c, 0);
        for (unsigned i = 0; i < N; i++)
                scale_push(q, &sw, mk(i + 1, i % 2 ? "remove" : "add", "/devices/virtual/one/dev",
                                      "test", "MAJOR=10", "MINOR=1", "DEVNAME=one", NULL));
        ASSERT_EQ(stats(q).runnable, 1);
        for (unsigned i = 0; i < N; i++) {
                struct queued_event *qe;

                sw_start(&sw);
                qe = event_queue_take(q);
                sw_stop(&sw);
                ASSERT_EQ(queued_event_uevent(qe)->seqnum, i + 1);
                ASSERT_EQ(stats(q).runnable, 0);
                sw_start(&sw);
                event_queue_done(q, qe);
                sw_stop(&sw);
        }
        fprintf(stderr, "(%.3f s) ", sw_seconds(&sw));
        ASSERT_TRUE(sw_seconds(&sw) < 2.0);
        event_queue_free(q);
}

/* -------------------------------------------------------------- stress */

#define S_EVENTS 20000
#define S_WORKERS 6

/* Paths of the stress tree; the conflict relation over them is precomputed. */
static const char *const s_paths[] = {
        "/devices/r0",           "/devices/r0/a",         "/devices/r0/a/x",
        "/devices/r0/a/x/n",     "/devices/r0/a/y",       "/devices/r0/ab",
        "/devices/r0/ab/x",      "/devices/r0/b",         "/devices/r0/b/x",
        "/devices/r1",           "/devices/r1/a",         "/devices/r1/a/x",
        "/devices/r1/c",         "/devices/r1/c/d",       "/devices/r1/c/d/e",
        "/devices/r10",          "/devices/r10/a",        "/devices/virtual/net/v0",
        "/devices/virtual/net/v1", "/devices/virtual/net/v2",
};
#define S_NPATHS ARRAY_SIZE(s_paths)

struct s_event {
        int path, old;         /* index into s_paths, old = -1 if none */
        char id[UEVENT_ID_MAX];
        char devnode[UEVENT_DEVNODE_MAX];
        atomic_uint_fast64_t start, end, abandon; /* ticks; 0 = never */
};

struct stress {
        struct event_queue *q;
        struct counters c;
        struct s_event *ev; /* index = seqnum - 1 */
        atomic_uint_fast64_t tick;
        atomic_bool pusher_done;
        atomic_uint_fast64_t abandoned;
        bool conflict[S_NPATHS][S_NPATHS];
        bool limited; /* children_max 2, done_take() */
};

static bool path_conflict(const char *a, const char *b)
{
        size_t la = strlen(a), lb = strlen(b);

        if (la > lb)
                return path_conflict(b, a);
        return strncmp(a, b, la) == 0 && (b[la] == '\0' || b[la] == '/');
}

static void *s_worker(void *userdata)
{
        struct stress *s = userdata;
        unsigned seed = (unsigned)(uintptr_t)pthread_self();
        struct queued_event *qe;

        qe = event_queue_take(s->q);
        while (qe) {
                struct s_event *e = &s->ev[queued_event_uevent(qe)->seqnum - 1];
                unsigned r = (unsigned)rand_r(&seed);

                atomic_store(&e->start, atomic_fetch_add(&s->tick, 1) + 1);
                if (r % 500 == 0)
                        sleep_ms(3); /* a slow event: may be abandoned */
                else if (r % 4 == 0)
                        sched_yield();
                (void)queued_event_abandoned(qe);
                atomic_store(&e->end, atomic_fetch_add(&s->tick, 1) + 1);
                if (s->limited && r % 3 != 0) {
                        qe = event_queue_done_take(s->q, qe);
                } else {
                        event_queue_done(s->q, qe);
                        qe = event_queue_take(s->q);
                }
        }
        return NULL;
}

static void *s_pusher(void *userdata)
{
        struct stress *s = userdata;
        unsigned seed = 12345;
        unsigned n = 0;
        char old[128], devname[64], majmin[2][32], ifindex[32];

        while (n < S_EVENTS) {
                struct uevent *batch[16];
                unsigned k = 1 + (unsigned)rand_r(&seed) % ARRAY_SIZE(batch), m;

                ASSERT_EQ(event_queue_wait_capacity(s->q, USEC_INFINITY), 0);
                for (m = 0; m < k && n < S_EVENTS; m++, n++) {
                        struct s_event *e = &s->ev[n];
                        const char *extra[6] = { NULL };
                        unsigned r = (unsigned)rand_r(&seed), ne = 0;
                        const char *subsystem = "test";

                        e->path = (int)(r % S_NPATHS);
                        e->old = -1;
                        r /= S_NPATHS;
                        if (strstr(s_paths[e->path], "/net/")) {
                                subsystem = "net";
                                snprintf(ifindex, sizeof(ifindex), "IFINDEX=%u", 2 + r % 3);
                                extra[ne++] = ifindex;
                        } else if (r % 3 == 0) {
                                subsystem = "block";
                                snprintf(majmin[0], sizeof(majmin[0]), "MAJOR=%u", 8);
                                snprintf(majmin[1], sizeof(majmin[1]), "MINOR=%u",
                                         (r / 3) % 5);
                                snprintf(devname, sizeof(devname), "DEVNAME=disk%u",
                                         (r / 15) % 4);
                                extra[ne++] = majmin[0];
                                extra[ne++] = majmin[1];
                                extra[ne++] = devname;
                        }
                        r /= 60;
                        if (r % 10 == 0) {
                                e->old = (int)((r / 10) % S_NPATHS);
                                snprintf(old, sizeof(old), "DEVPATH_OLD=%s", s_paths[e->old]);
                                extra[ne++] = old;
                        }
                        batch[m] = mk(n + 1, e->old >= 0 ? "move" : "change",
                                      s_paths[e->path], subsystem, extra[0], extra[1],
                                      extra[2], extra[3], extra[4], NULL);
                        snprintf(e->id, sizeof(e->id), "%s", batch[m]->id);
                        snprintf(e->devnode, sizeof(e->devnode), "%s", batch[m]->devnode);
                }
                ASSERT_EQ(event_queue_push(s->q, batch, m), 0);
        }
        atomic_store(&s->pusher_done, true);
        return NULL;
}

struct s_abandon_ctx {
        struct stress *s;
        uint64_t now;
};

static void s_abandon_cb(struct queued_event *qe, void *userdata)
{
        struct s_abandon_ctx *a = userdata;
        struct s_event *e = &a->s->ev[queued_event_uevent(qe)->seqnum - 1];

        if (a->now - queued_event_start_usec(qe) < 1000)
                return;
        atomic_store(&e->abandon, atomic_fetch_add(&a->s->tick, 1) + 1);
        atomic_fetch_add(&a->s->abandoned, 1);
        queued_event_abandon_locked(a->s->q, qe);
}

/* Plays the manager: timeouts, and some pause/limit changes. */
static void *s_manager(void *userdata)
{
        struct stress *s = userdata;
        unsigned i = 0;

        while (!atomic_load(&s->pusher_done)) {
                struct s_abandon_ctx a = { .s = s, .now = now_usec(CLOCK_MONOTONIC) };

                event_queue_foreach_running(s->q, s_abandon_cb, &a);
                i++;
                if (i % 50 == 0) {
                        event_queue_set_paused(s->q, true);
                        sleep_ms(1);
                        event_queue_set_paused(s->q, false);
                }
                if (i % 70 == 0)
                        event_queue_set_max_running(s->q, 1 + i % S_WORKERS);
                sleep_ms(1);
        }
        event_queue_set_max_running(s->q, 0);
        return NULL;
}

static void s_check(struct stress *s)
{
        /* Latest end tick per conflict key among the events seen so far. */
        uint64_t by_path[S_NPATHS] = {}, by_old[S_NPATHS] = {};
        uint64_t by_id[64] = {}, by_node[16] = {};
        char ids[64][UEVENT_ID_MAX], nodes[16][UEVENT_DEVNODE_MAX];
        unsigned n_ids = 0, n_nodes = 0;

        for (unsigned n = 0; n < S_EVENTS; n++) {
                struct s_event *e = &s->ev[n];
                uint64_t start = atomic_load(&e->start), end = atomic_load(&e->end);
                uint64_t ab = atomic_load(&e->abandon);
                uint64_t need = 0, fin = ab ? ab : end;
                unsigned id, node = UINT32_MAX;

                ASSERT_TRUE(start > 0 && end > start);
                for (id = 0; id < n_ids && strcmp(ids[id], e->id) != 0; id++)
                        ;
                if (id == n_ids) {
                        ASSERT_TRUE(n_ids < ARRAY_SIZE(ids));
                        memcpy(ids[n_ids++], e->id, sizeof(e->id));
                }
                need = MAX(need, by_id[id]);
                if (e->devnode[0]) {
                        for (node = 0; node < n_nodes && strcmp(nodes[node], e->devnode); node++)
                                ;
                        if (node == n_nodes) {
                                ASSERT_TRUE(n_nodes < ARRAY_SIZE(nodes));
                                memcpy(nodes[n_nodes++], e->devnode, sizeof(e->devnode));
                        }
                        need = MAX(need, by_node[node]);
                }
                for (unsigned p = 0; p < S_NPATHS; p++) {
                        if (s->conflict[e->path][p])
                                need = MAX(need, MAX(by_path[p], by_old[p]));
                        if (e->old >= 0 && s->conflict[e->old][p])
                                need = MAX(need, by_path[p]);
                }
                if (start <= need)
                        fprintf(stderr, "event %u started at %" PRIu64
                                " before a conflicting earlier one finished at %" PRIu64 "\n",
                                n + 1, start, need);
                ASSERT_TRUE(start > need);

                by_id[id] = MAX(by_id[id], fin);
                if (node != UINT32_MAX)
                        by_node[node] = MAX(by_node[node], fin);
                by_path[e->path] = MAX(by_path[e->path], fin);
                if (e->old >= 0)
                        by_old[e->old] = MAX(by_old[e->old], fin);
        }
}

static void run_stress(bool limited)
{
        pthread_t workers[S_WORKERS], pusher, manager;
        struct stress *s;
        struct event_queue_hooks hooks;

        s = calloc(1, sizeof(*s));
        ASSERT_TRUE(s);
        s->ev = calloc(S_EVENTS, sizeof(*s->ev));
        ASSERT_TRUE(s->ev);
        for (unsigned a = 0; a < S_NPATHS; a++)
                for (unsigned b = 0; b < S_NPATHS; b++)
                        s->conflict[a][b] = path_conflict(s_paths[a], s_paths[b]);
        ASSERT_TRUE(s->conflict[0][1] && !s->conflict[1][5] && !s->conflict[9][15]);

        hooks = (struct event_queue_hooks){
                .on_busy_changed = on_busy, .on_need_worker = on_need, .userdata = &s->c,
        };
        ASSERT_EQ(event_queue_new(&hooks, 256, &s->q), 0);
        s->limited = limited;
        if (limited)
                event_queue_set_max_running(s->q, 2);
        for (unsigned i = 0; i < S_WORKERS; i++)
                ASSERT_EQ(thread_start(&workers[i], s_worker, s), 0);
        ASSERT_EQ(thread_start(&manager, s_manager, s), 0);
        ASSERT_EQ(thread_start(&pusher, s_pusher, s), 0);

        ASSERT_EQ(pthread_join(pusher, NULL), 0);
        ASSERT_EQ(pthread_join(manager, NULL), 0);
        ASSERT_EQ(event_queue_wait_empty(s->q, now_usec(CLOCK_MONOTONIC) + 120 * USEC_PER_SEC),
                  0);
        event_queue_shutdown(s->q, false);
        for (unsigned i = 0; i < S_WORKERS; i++)
                ASSERT_EQ(pthread_join(workers[i], NULL), 0);

        ASSERT_EQ(stats(s->q).pushed_total, S_EVENTS);
        ASSERT_EQ(stats(s->q).done_total, S_EVENTS);
        ASSERT_EQ(atomic_load(&s->c.busy_true), atomic_load(&s->c.busy_false));
        ASSERT_TRUE(atomic_load(&s->c.busy_true) >= 1);
        s_check(s);
        ASSERT_EQ(stats(s->q).running, 0);
        fprintf(stderr, "(%" PRIu64 " abandoned, %d busy cycles, %d worker requests) ",
                (uint64_t)atomic_load(&s->abandoned), atomic_load(&s->c.busy_true),
                atomic_load(&s->c.need_worker));
        event_queue_free(s->q);
        free(s->ev);
        free(s);
}

static void test_stress(void)
{
        run_stress(false);
}

/* The same with children_max 2 and done_take(). */
static void test_stress_limited(void)
{
        run_stress(true);
}

int main(void)
{
        TEST_RUN(test_independent);
        TEST_RUN(test_paused);
        TEST_RUN(test_max_running);
        TEST_RUN(test_need_worker);
        TEST_RUN(test_shutdown_drain);
        TEST_RUN(test_shutdown_drop);
        TEST_RUN(test_shutdown_paused);
        TEST_RUN(test_abandon);
        TEST_RUN(test_abandon_last);
        TEST_RUN(test_claim_vs_abandon);
        TEST_RUN(test_capacity);
        TEST_RUN(test_capacity_wakeup);
        TEST_RUN(test_push_edge_cases);
        TEST_RUN(test_requeue_delay);
        TEST_RUN(test_requeue_wakes_sleeper);
        TEST_RUN(test_requeue_retry_disk);
        TEST_RUN(test_released_in_arrival_order);
        TEST_RUN(test_requeue_timeout);
        TEST_RUN(test_requeue_abandoned);
        TEST_RUN(test_requeue_shutdown);
        TEST_RUN(test_requeue_stress);
        TEST_RUN(test_coalesce_basic);
        TEST_RUN(test_coalesce_not);
        TEST_RUN(test_coalesce_synth_uuid);
        TEST_RUN(test_bytes_accounting);
        TEST_RUN(test_budget_either_limit);
        TEST_RUN(test_budget_room_largest);
        TEST_RUN(test_budget_wakeup);
        TEST_RUN(test_budget_resume_mark);
        TEST_RUN(test_scale_independent);
        TEST_RUN(test_scale_chain);
        TEST_RUN(test_stress);
        TEST_RUN(test_stress_limited);
        TEST_RUN(test_max_running_done_take);
        TEST_RUN(test_max_running_released);
        return 0;
}
