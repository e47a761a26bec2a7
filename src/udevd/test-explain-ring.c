/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: test (main thread, plus pushing threads in test_threads) */
/* The ring of recent traces (explain-ring.c): lookup by DEVPATH and SEQNUM,
 * eviction by count, by bytes and by rule sets, traces of varying sizes
 * wrapping around the arena, limits, and concurrent pushes. */

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "device/db.h"
#include "device/device.h"
#include "device/test-sysfs-fixture.h"
#include "event/udev-event.h"
#include "rules/rules-exec.h"
#include "rules/rules-trace.h"
#include "rules/rules.h"
#include "shared/log.h"
#include "shared/tests.h"
#include "shared/time-util.h"
#include "udevd/explain-ring.h"

static struct rules *load(const char *text)
{
        struct rules *r = NULL;

        ASSERT_EQ(rules_load_string("/t/1.rules", text, strlen(text), NULL, &r), 0);
        return r;
}

/* A trace of event `seqnum` of `devpath` with one failed line. */
static void push(struct explain_ring *ring, struct rules *rules, uint64_t seqnum,
                 const char *devpath)
{
        struct rules_trace *t;

        ASSERT_EQ(rules_trace_new(1024, 0, &t), 0);
        rules_trace_begin(t, seqnum, "add", devpath, "x", "net");
        rules_trace_line(t, 0, 0, 0, 0, RULES_TRACE_VALUE_EVENT, NULL, NULL);
        rules_trace_end(t, NULL, 0, 0);
        explain_ring_push(ring, t, rules);
        rules_trace_free(t);
}

/* The first line of the newest trace matching, or "" if none. */
static char *first_line(struct explain_ring *ring, const char *devpath, uint64_t seqnum)
{
        static char line[512];
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        int r = explain_ring_format(ring, devpath, seqnum, f);

        fclose(f);
        line[0] = '\0';
        if (r == 0)
                sscanf(text, "%511[^\n]", line);
        free(text);
        return line;
}

static void test_lookup_and_count(void)
{
        struct explain_ring *ring;
        struct rules *rules = load("KERNEL==\"a\", ENV{X}=\"1\"\n");
        size_t bytes;

        ASSERT_EQ(explain_ring_new(3, 1 << 20, &ring), 0);
        ASSERT_STREQ(first_line(ring, "/devices/a", 0), "");
        push(ring, rules, 1, "/devices/a");
        push(ring, rules, 2, "/devices/b");
        push(ring, rules, 3, "/devices/a");
        ASSERT_STREQ(first_line(ring, "/devices/a", 0),
                     "event seqnum=3 action=add devpath=/devices/a subsystem=net");
        ASSERT_STREQ(first_line(ring, "/devices/a", 1),
                     "event seqnum=1 action=add devpath=/devices/a subsystem=net");
        ASSERT_STREQ(first_line(ring, NULL, 2),
                     "event seqnum=2 action=add devpath=/devices/b subsystem=net");
        ASSERT_STREQ(first_line(ring, "/devices/b", 1), "");
        /* the fourth event pushes out the first */
        push(ring, rules, 4, "/devices/c");
        ASSERT_EQ(explain_ring_count(ring, &bytes), 3u);
        ASSERT_TRUE(bytes > 0 && bytes < 3 * 1024);
        ASSERT_STREQ(first_line(ring, NULL, 1), "");
        ASSERT_STREQ(first_line(ring, NULL, 2),
                     "event seqnum=2 action=add devpath=/devices/b subsystem=net");
        explain_ring_free(ring);
        rules_unref(rules);
}

static void test_byte_budget(void)
{
        struct explain_ring *ring;
        struct rules *rules = load("KERNEL==\"a\", ENV{X}=\"1\"\n");
        size_t one, bytes;

        ASSERT_EQ(explain_ring_new(100, 1 << 20, &ring), 0);
        push(ring, rules, 1, "/devices/a");
        explain_ring_count(ring, &one);
        explain_ring_free(ring);
        /* room for two and a half traces: two are kept */
        ASSERT_EQ(explain_ring_new(100, one * 5 / 2, &ring), 0);
        for (uint64_t s = 1; s <= 10; s++)
                push(ring, rules, s, "/devices/a");
        ASSERT_EQ(explain_ring_count(ring, &bytes), 2u);
        ASSERT_TRUE(bytes <= one * 5 / 2);
        ASSERT_STREQ(first_line(ring, NULL, 9),
                     "event seqnum=9 action=add devpath=/devices/a subsystem=net");
        ASSERT_STREQ(first_line(ring, NULL, 8), "");
        explain_ring_free(ring);
        rules_unref(rules);
}

/* After reloads, the events of at most EXPLAIN_RING_RULESETS rule sets stay. */
static void test_rulesets(void)
{
        struct rules *sets[EXPLAIN_RING_RULESETS + 2];
        struct explain_ring *ring;
        size_t n = sizeof(sets) / sizeof(sets[0]);

        ASSERT_EQ(explain_ring_new(100, 1 << 20, &ring), 0);
        for (size_t i = 0; i < n; i++) {
                sets[i] = load("KERNEL==\"a\", ENV{X}=\"1\"\n");
                push(ring, sets[i], 2 * i + 1, "/devices/a");
                push(ring, sets[i], 2 * i + 2, "/devices/a");
        }
        ASSERT_EQ(explain_ring_count(ring, NULL), 2u * EXPLAIN_RING_RULESETS);
        ASSERT_STREQ(first_line(ring, NULL, 4), "");
        ASSERT_TRUE(first_line(ring, NULL, 5)[0] != '\0');
        for (size_t i = 0; i < n; i++)
                rules_unref(sets[i]);
        /* kept traces still format with their (own) rules */
        ASSERT_TRUE(first_line(ring, "/devices/a", 0)[0] != '\0');
        explain_ring_free(ring);
}

/* A trace of event `seqnum` whose one failed line carries a value of `len`
 * bytes made of the seqnum's last digit, so that traces differ in size and a
 * trace overwritten by another shows. */
static void push_sized(struct explain_ring *ring, struct rules *rules, uint64_t seqnum,
                       size_t len)
{
        char value[RULES_TRACE_VALUE_MAX];
        struct rules_trace *t;

        ASSERT_TRUE(len < sizeof(value));
        memset(value, '0' + (int)(seqnum % 10), len);
        value[len] = '\0';
        ASSERT_EQ(rules_trace_new(1024, 0, &t), 0);
        rules_trace_begin(t, seqnum, "add", "/devices/s", "s", "net");
        rules_trace_line(t, 0, 0, 0, 0, RULES_TRACE_VALUE_STRING, value, NULL);
        rules_trace_end(t, NULL, 0, 0);
        explain_ring_push(ring, t, rules);
        rules_trace_free(t);
}

/* The kept trace of `seqnum` formats completely, with its own value. */
static bool kept_intact(struct explain_ring *ring, uint64_t seqnum, size_t len)
{
        char *text = NULL, want[512], value[RULES_TRACE_VALUE_MAX];
        size_t tl = 0;
        FILE *f = open_memstream(&text, &tl);
        int r = explain_ring_format(ring, NULL, seqnum, f);
        bool ok;

        fclose(f);
        memset(value, '0' + (int)(seqnum % 10), len);
        value[len] = '\0';
        snprintf(want, sizeof(want),
                 "event seqnum=%llu action=add devpath=/devices/s subsystem=net\n"
                 "/t/1.rules:1 failed - KERNEL==\"a\" got \"%s\"\n"
                 "summary lines=1 applied=0 time=0.000us result=0\n",
                 (unsigned long long)seqnum, value);
        ok = r == 0 && strcmp(text, want) == 0;
        if (r == 0 && !ok)
                fprintf(stderr, "\ngot:\n%s\nwant:\n%s\n", text, want);
        free(text);
        return ok;
}

/* Traces of varying sizes wrap around the arena: the kept ones are always
 * the newest, intact, within the byte budget. */
static void test_arena_wrap(void)
{
        enum { MAX_BYTES = 4096, MAX_EVENTS = 32, PUSHES = 3000 };
        struct rules *rules = load("KERNEL==\"a\", ENV{X}=\"1\"\n");
        struct explain_ring *ring;
        size_t lens[PUSHES + 1];
        unsigned seed = 1;

        ASSERT_EQ(explain_ring_new(MAX_EVENTS, MAX_BYTES, &ring), 0);
        for (uint64_t s = 1; s <= PUSHES; s++) {
                size_t n, bytes;

                seed = seed * 1103515245u + 12345u;
                lens[s] = (seed >> 16) % 250;
                push_sized(ring, rules, s, lens[s]);
                n = explain_ring_count(ring, &bytes);
                ASSERT_TRUE(n >= 1 && n <= MAX_EVENTS);
                ASSERT_TRUE(bytes <= MAX_BYTES);
                /* the newest n are kept, in full; the one before is gone */
                for (uint64_t k = s + 1 - n; k <= s; k++)
                        ASSERT_TRUE(kept_intact(ring, k, lens[k]));
                if (s > n)
                        ASSERT_TRUE(!kept_intact(ring, s - n, lens[s - n]));
                /* traces of 60-300 bytes: the arena holds at least 12 */
                if (s >= MAX_EVENTS)
                        ASSERT_TRUE(n >= 12);
        }
        explain_ring_free(ring);
        rules_unref(rules);
}

/* Limits: no ring of 0 events; a trace larger than the arena is not kept
 * and leaves the kept ones alone. */
static void test_limits(void)
{
        struct rules *rules = load("KERNEL==\"a\", ENV{X}=\"1\"\n");
        struct explain_ring *ring;
        size_t bytes;

        ASSERT_EQ(explain_ring_new(0, 4096, &ring), -EINVAL);
        ASSERT_EQ(explain_ring_new(EXPLAIN_EVENTS_MAX + 1, 4096, &ring), -EINVAL);
        ASSERT_EQ(explain_ring_new(4, 0, &ring), -EINVAL);
        ASSERT_EQ(explain_ring_new(4, 256, &ring), 0);
        push_sized(ring, rules, 1, 10);
        push_sized(ring, rules, 2, 200);
        ASSERT_EQ(explain_ring_count(ring, &bytes), 1u);
        ASSERT_TRUE(kept_intact(ring, 1, 10));
        ASSERT_TRUE(bytes > 0 && bytes <= 256);
        explain_ring_free(ring);
        rules_unref(rules);
}

static const char *debian_rules_dir(char *buf)
{
        const char *root = getenv("SD_UDEV_ROOT");

        snprintf(buf, PATH_MAX, "%s/lib/udev/rules.d", root ? root : "build-ref/sd-udev");
        return access(buf, R_OK) == 0 ? buf : NULL;
}

static int fake_spawn(void *userdata, const char *cmd, char *const envp[], bool is_run,
                      uint64_t deadline_usec, char *out, size_t out_size, bool *truncated)
{
        if (out && out_size)
                out[0] = '\0';
        return 0;
}

/* A net storm under Debian 12's rules, as a worker traces it: the "add" of
 * 256 veth interfaces, each traced into the thread's buffer and pushed into
 * a ring of the default size. All 256 are kept, within the default budget;
 * the bytes are printed (udevd(8) and explain-ring.h give them). */
static void test_debian_net_storm(void)
{
        char dir[PATH_MAX];
        const char *dirs[] = { debian_rules_dir(dir), NULL };
        struct rules_load_options o = { .dirs = dirs, .resolve_names = RESOLVE_NAMES_LATE };
        struct sysfs_fixture fx;
        struct explain_ring *ring;
        struct rules *rules;
        size_t n, bytes;

        if (!dirs[0]) {
                fprintf(stderr, "(Debian rules not found, skipped) ");
                return;
        }
        fixture_setup(&fx);
        ASSERT_EQ(rules_load(&o, &rules), 0);
        ASSERT_EQ(explain_ring_new(EXPLAIN_EVENTS_DEFAULT,
                                   EXPLAIN_EVENTS_DEFAULT * EXPLAIN_BYTES_PER_EVENT, &ring),
                  0);
        for (unsigned i = 0; i < EXPLAIN_EVENTS_DEFAULT; i++) {
                char devpath[64], uevent[64], dgram[256], ifindex[16];
                struct device_ctx *ctx = NULL;
                struct device *dev = NULL;
                struct db_record old = {};
                struct uevent *u;
                struct udev_event ev;
                int len;

                snprintf(devpath, sizeof(devpath), "/devices/virtual/net/veth%u", i);
                snprintf(uevent, sizeof(uevent), "INTERFACE=veth%u\nIFINDEX=%u\n", i, i + 10);
                snprintf(ifindex, sizeof(ifindex), "%u\n", i + 10);
                fx_device(&fx, devpath, "class/net", NULL, uevent, NULL);
                fx_attr(&fx, devpath, "ifindex", ifindex);
                fx_attr(&fx, devpath, "type", "1\n");
                fx_attr(&fx, devpath, "addr_assign_type", "3\n");
                len = snprintf(dgram, sizeof(dgram),
                               "add@%s%cACTION=add%cDEVPATH=%s%cSUBSYSTEM=net%c"
                               "INTERFACE=veth%u%cIFINDEX=%u%cSEQNUM=%u",
                               devpath, 0, 0, devpath, 0, 0, i, 0, i + 10, 0, 1000 + i);
                u = fx_uevent(dgram, (size_t)len + 1);
                ASSERT_EQ(device_ctx_new(&fx.roots, &ctx), 0);
                ASSERT_EQ(device_from_uevent(ctx, u, &dev), 0);
                ASSERT_EQ(udev_event_init(&ev, ctx, dev, u, u->action), 0);
                ev.old_db = &old;
                ev.spawner = (struct udev_spawner){ .spawn = fake_spawn };
                ev.start_usec = now_usec(CLOCK_MONOTONIC);
                ev.timeout_usec = 10 * USEC_PER_SEC;
                ev.dry_run = true;
                ev.trace = explain_thread_trace();
                ASSERT_TRUE(ev.trace != NULL);
                ASSERT_EQ(rules_apply(rules, &ev), 0);
                rules_execute_run(&ev);
                ASSERT_TRUE(rules_trace_lines(ev.trace) > 100);
                ASSERT_TRUE(!rules_trace_truncated(ev.trace));
                explain_ring_push(ring, ev.trace, rules);
                udev_event_done(&ev);
                device_ctx_free(ctx);
                uevent_free(u);
        }
        n = explain_ring_count(ring, &bytes);
        fprintf(stderr, "(%zu events, %zu bytes) ", n, bytes);
        ASSERT_EQ(n, (size_t)EXPLAIN_EVENTS_DEFAULT);
        ASSERT_TRUE(bytes <= EXPLAIN_EVENTS_DEFAULT * EXPLAIN_BYTES_PER_EVENT);
        ASSERT_TRUE(strstr(first_line(ring, "/devices/virtual/net/veth0", 0), "seqnum=1000 "));
        explain_ring_free(ring);
        rules_unref(rules);
        fixture_teardown(&fx);
}

static struct explain_ring *tring;
static struct rules *trules;

static void *pusher(void *arg)
{
        uintptr_t base = (uintptr_t)arg;

        for (uint64_t s = 0; s < 2000; s++) {
                struct rules_trace *t = explain_thread_trace();
                ASSERT_TRUE(t != NULL);
                rules_trace_begin(t, base + s + 1, "add", "/devices/t", "t", "net");
                rules_trace_line(t, 0, 1, 0, 0, RULES_TRACE_VALUE_NONE, NULL, NULL);
                explain_ring_push(tring, t, trules);
        }
        return NULL;
}

static void test_threads(void)
{
        pthread_t th[4];

        trules = load("KERNEL==\"a\", ENV{X}=\"1\"\n");
        ASSERT_EQ(explain_ring_new(64, 1 << 20, &tring), 0);
        for (uintptr_t i = 0; i < 4; i++)
                ASSERT_EQ(pthread_create(&th[i], NULL, pusher, (void *)(i * 100000)), 0);
        for (int k = 0; k < 200; k++)
                (void)first_line(tring, "/devices/t", 0);
        for (int i = 0; i < 4; i++)
                ASSERT_EQ(pthread_join(th[i], NULL), 0);
        ASSERT_EQ(explain_ring_count(tring, NULL), 64u);
        explain_ring_free(tring);
        rules_unref(trules);
}

int main(void)
{
        log_set_max_level(LOG_WARNING);
        TEST_RUN(test_lookup_and_count);
        TEST_RUN(test_byte_budget);
        TEST_RUN(test_rulesets);
        TEST_RUN(test_arena_wrap);
        TEST_RUN(test_limits);
        TEST_RUN(test_debian_net_storm);
        TEST_RUN(test_threads);
        return 0;
}
