/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: test (main thread, plus pushing threads in test_threads) */
/* The ring of recent traces (explain-ring.c): lookup by DEVPATH and SEQNUM,
 * eviction by count, by bytes and by rule sets, and concurrent pushes. */

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules/rules-trace.h"
#include "rules/rules.h"
#include "shared/log.h"
#include "shared/tests.h"
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
        TEST_RUN(test_threads);
        return 0;
}
