/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: test (main + recorder threads in test_concurrent) */
/* The event statistics: bucket bounds, quantiles, the subsystem table and
 * its "other" overflow, concurrent recording (exact totals), and the three
 * formats. */

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/macro.h"
#include "shared/tests.h"
#include "shared/thread-util.h"
#include "udevd/query.h"
#include "udevd/stats.h"

static void test_buckets_and_quantiles(void)
{
        struct stats_snapshot *s = calloc(1, sizeof(*s));
        struct stats_timing t = { .received = 1000 };

        ASSERT_TRUE(s != NULL);
        stats_init();
        ASSERT_EQ(stats_bucket_le_usec(0), 1u);
        ASSERT_EQ(stats_bucket_le_usec(10), 1024u);
        ASSERT_EQ(stats_bucket_le_usec(STATS_BUCKETS - 1), UINT64_MAX);
        /* total latencies 0, 1, 2, 3, 1024, 1025 and 100 s */
        static const uint64_t lat[] = { 0, 1, 2, 3, 1024, 1025, 100000000 };
        for (size_t i = 0; i < ARRAY_SIZE(lat); i++) {
                t.broadcast = t.received + lat[i];
                stats_event_done("net", UEVENT_ACTION_ADD, &t, i == 0);
        }
        stats_read(s);
        const struct stats_histogram *h = &s->stages[STATS_STAGE_TOTAL];
        ASSERT_EQ(h->count, ARRAY_SIZE(lat));
        ASSERT_EQ(h->buckets[0], 2u); /* 0, 1 */
        ASSERT_EQ(h->buckets[1], 1u); /* 2 */
        ASSERT_EQ(h->buckets[2], 1u); /* 3 */
        ASSERT_EQ(h->buckets[10], 1u); /* 1024 */
        ASSERT_EQ(h->buckets[11], 1u); /* 1025 */
        ASSERT_EQ(h->buckets[STATS_BUCKETS - 1], 1u); /* 100 s: +Inf */
        ASSERT_EQ(h->max_usec, 100000000u);
        ASSERT_EQ(h->sum_usec, 0u + 1 + 2 + 3 + 1024 + 1025 + 100000000);
        ASSERT_EQ(stats_quantile_usec(h, 0.5), 4u);    /* 4th of 7: bucket le 4 */
        ASSERT_EQ(stats_quantile_usec(h, 0.8), 2048u); /* 6th of 7 */
        ASSERT_EQ(stats_quantile_usec(h, 0.99), 100000000u);
        /* stages without both timestamps are not recorded */
        ASSERT_EQ(s->stages[STATS_STAGE_RULES].count, 0u);
        ASSERT_EQ(s->events, ARRAY_SIZE(lat));
        ASSERT_EQ(s->events_failed, 1u);
        ASSERT_EQ(s->n_subsystems, 1u);
        ASSERT_STREQ(s->subsystems[0].name, "net");
        ASSERT_EQ(s->subsystems[0].by_action[UEVENT_ACTION_ADD], ARRAY_SIZE(lat));
        {
                struct stats_histogram empty = {};
                ASSERT_EQ(stats_quantile_usec(&empty, 0.5), 0u);
        }
        free(s);
}

static void test_subsystem_table(void)
{
        struct stats_snapshot *s = calloc(1, sizeof(*s));
        const struct stats_timing t = {};
        char name[32];

        ASSERT_TRUE(s != NULL);
        stats_init();
        for (int i = 0; i < STATS_SUBSYSTEMS_MAX + 10; i++) {
                snprintf(name, sizeof(name), "sub%03d", i);
                stats_event_done(name, UEVENT_ACTION_CHANGE, &t, false);
                stats_event_done(name, UEVENT_ACTION_CHANGE, &t, false);
        }
        stats_event_done("bad name", UEVENT_ACTION_ADD, &t, false);
        stats_event_done("", UEVENT_ACTION_ADD, &t, false);
        stats_event_done(NULL, UEVENT_ACTION_ADD, &t, false);
        stats_read(s);
        ASSERT_EQ(s->n_subsystems, (unsigned)STATS_SUBSYSTEMS_MAX + 1);
        ASSERT_STREQ(s->subsystems[0].name, "other"); /* sorted; the first 128 got slots */
        ASSERT_STREQ(s->subsystems[STATS_SUBSYSTEMS_MAX].name, "sub127");
        uint64_t total = 0;
        for (unsigned i = 0; i < s->n_subsystems; i++) {
                if (strcmp(s->subsystems[i].name, "other") == 0) {
                        ASSERT_EQ(s->subsystems[i].by_action[UEVENT_ACTION_ADD], 3u);
                        ASSERT_EQ(s->subsystems[i].by_action[UEVENT_ACTION_CHANGE], 20u);
                } else {
                        ASSERT_EQ(s->subsystems[i].by_action[UEVENT_ACTION_CHANGE], 2u);
                }
                for (unsigned a = 0; a < _UEVENT_ACTION_MAX; a++)
                        total += s->subsystems[i].by_action[a];
        }
        ASSERT_EQ(total, 2u * (STATS_SUBSYSTEMS_MAX + 10) + 3);
        free(s);
}

#define THREADS 4
#define PER_THREAD 20000

static void *recorder(void *arg)
{
        static const char *const subs[] = { "net", "block", "usb", "input", "sound" };
        unsigned id = (unsigned)(uintptr_t)arg;

        for (unsigned i = 0; i < PER_THREAD; i++) {
                struct stats_timing t = { .received = 10, .queued = 11, .started = 20,
                                          .rules_done = 30, .db_done = 31, .run_done = 40,
                                          .broadcast = 41 + i % 1000 };
                stats_event_done(subs[(i + id) % ARRAY_SIZE(subs)], (enum uevent_action)(i % 3),
                                 &t, false);
                stats_count_program(i % 10 == 0 ? STATS_PROGRAM_FAILED : STATS_PROGRAM_OK);
                stats_note_queue_depth(i);
        }
        return NULL;
}

static void test_concurrent(void)
{
        struct stats_snapshot *s = calloc(1, sizeof(*s));
        pthread_t t[THREADS];

        ASSERT_TRUE(s != NULL);
        stats_init();
        for (uintptr_t i = 0; i < THREADS; i++)
                ASSERT_EQ(thread_start(&t[i], recorder, (void *)i), 0);
        for (int i = 0; i < 50; i++)
                stats_read(s); /* concurrently with the recorders */
        for (int i = 0; i < THREADS; i++)
                ASSERT_EQ(pthread_join(t[i], NULL), 0);
        stats_read(s);
        ASSERT_EQ(s->events, (uint64_t)THREADS * PER_THREAD);
        for (unsigned st = 0; st < _STATS_STAGE_MAX; st++)
                ASSERT_EQ(s->stages[st].count, (uint64_t)THREADS * PER_THREAD);
        ASSERT_EQ(s->stages[STATS_STAGE_TOTAL].max_usec, 31u + 999);
        ASSERT_EQ(s->n_subsystems, 5u);
        ASSERT_EQ(s->programs_run, (uint64_t)THREADS * PER_THREAD);
        ASSERT_EQ(s->programs_failed, (uint64_t)THREADS * PER_THREAD / 10);
        ASSERT_EQ(s->queue_peak, PER_THREAD - 1u);
        free(s);
}

static void test_formats(void)
{
        struct stats_snapshot *s = calloc(1, sizeof(*s));
        const struct stats_extra x = { .queued = 3, .running = 1, .rules_generation = 7,
                                       .explain_events = 5, .explain_bytes = 4400,
                                       .explain_max_events = 256,
                                       .explain_max_bytes = 262144,
                                       .queue_bytes = 4096, .queue_bytes_peak = 65536,
                                       .queue_max_events = 200, .queue_max_bytes = 262144,
                                       .budget_pauses = 5 };
        const struct stats_extra off = { .rules_generation = 7 };
        const struct stats_timing t = { .received = 1, .broadcast = 2000 };
        struct query_out o = {};

        ASSERT_TRUE(s != NULL);
        stats_init();
        stats_event_done("net", UEVENT_ACTION_REMOVE, &t, false);
        stats_read(s);
        stats_format_text(s, &x, &o);
        ASSERT_TRUE(strstr(o.buf, "Events:            1 processed, 0 failed") != NULL);
        ASSERT_TRUE(strstr(o.buf, "Rules generation:  7\n") != NULL);
        ASSERT_TRUE(strstr(o.buf, "3 queued, 1 running") != NULL);
        ASSERT_TRUE(strstr(o.buf, "Explain traces:    5 events, 4400 bytes (at most 256 events, "
                                  "262144 bytes)\n") != NULL);
        ASSERT_TRUE(strstr(o.buf, "(limit 200)\n") != NULL);
        ASSERT_TRUE(strstr(o.buf, "Queue memory:      4096 bytes, peak 65536 (limit 262144); "
                                  "reading paused 5 times at the limit\n") != NULL);
        query_out_done(&o);
        stats_format_text(s, &off, &o);
        ASSERT_TRUE(strstr(o.buf, "Explain traces:    off\n") != NULL);
        query_out_done(&o);
        stats_format_json(s, &x, &o);
        ASSERT_TRUE(strstr(o.buf, "\"by_subsystem\": {\n      \"net\": {\"remove\": 1}}") != NULL);
        ASSERT_TRUE(strstr(o.buf, "\"rules_generation\": 7,") != NULL);
        ASSERT_TRUE(strstr(o.buf, "\"explain\": {\"events\": 5, \"bytes\": 4400, "
                                  "\"max_events\": 256, \"max_bytes\": 262144},\n") != NULL);
        ASSERT_TRUE(strstr(o.buf, "\"max_events\": 200,\n    \"bytes\": 4096, \"bytes_peak\": "
                                  "65536, \"max_bytes\": 262144, \"budget_pauses\": 5},") != NULL);
        ASSERT_TRUE(strstr(o.buf, "{\"le\": 2048, \"count\": 1}") != NULL);
        query_out_done(&o);
        stats_format_prometheus(s, &x, &o);
        ASSERT_TRUE(strstr(o.buf, "tudev_events_total{subsystem=\"net\",action=\"remove\"} 1\n"));
        ASSERT_TRUE(strstr(o.buf, "tudev_event_stage_seconds_bucket{stage=\"total\","
                                  "le=\"0.001024\"} 0\n"));
        ASSERT_TRUE(strstr(o.buf, "tudev_event_stage_seconds_bucket{stage=\"total\","
                                  "le=\"0.002048\"} 1\n"));
        ASSERT_TRUE(strstr(o.buf, "tudev_event_stage_seconds_bucket{stage=\"total\","
                                  "le=\"+Inf\"} 1\n"));
        ASSERT_TRUE(strstr(o.buf, "tudev_event_stage_seconds_count{stage=\"total\"} 1\n"));
        ASSERT_TRUE(strstr(o.buf, "tudev_rules_generation 7\n"));
        ASSERT_TRUE(strstr(o.buf, "# TYPE tudev_explain_events gauge\ntudev_explain_events 5\n"));
        ASSERT_TRUE(strstr(o.buf, "# TYPE tudev_explain_bytes gauge\ntudev_explain_bytes 4400\n"));
        ASSERT_TRUE(strstr(o.buf, "tudev_explain_max_events 256\n"));
        ASSERT_TRUE(strstr(o.buf, "tudev_explain_max_bytes 262144\n"));
        ASSERT_TRUE(strstr(o.buf, "tudev_queue_bytes 4096\n"));
        ASSERT_TRUE(strstr(o.buf, "tudev_queue_peak_bytes 65536\n"));
        ASSERT_TRUE(strstr(o.buf, "tudev_queue_max_bytes 262144\n"));
        ASSERT_TRUE(strstr(o.buf, "tudev_queue_max_events 200\n"));
        ASSERT_TRUE(strstr(o.buf, "# TYPE tudev_queue_budget_pauses_total counter\n"
                                  "tudev_queue_budget_pauses_total 5\n"));
        query_out_done(&o);
        free(s);
}

int main(void)
{
        TEST_RUN(test_buckets_and_quantiles);
        TEST_RUN(test_subsystem_table);
        TEST_RUN(test_concurrent);
        TEST_RUN(test_formats);
        return 0;
}
