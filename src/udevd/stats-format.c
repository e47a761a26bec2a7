/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: manager (formats a snapshot taken with stats_read()) */
/* The three renderings of `udevadm stats` (udevadm(8) UDEVADM STATS). Names
 * and label values need no escaping: stats.c keeps only subsystem names of
 * [A-Za-z0-9_.:-] (others count as "other"). */

#include <inttypes.h>
#include <stdio.h>

#include "udevd/query.h"
#include "udevd/stats.h"

static const char *action_name(unsigned a)
{
        return uevent_action_to_string((enum uevent_action)a);
}

static uint64_t subsystem_total(const struct stats_subsystem *s)
{
        uint64_t n = 0;

        for (unsigned a = 0; a < _UEVENT_ACTION_MAX; a++)
                n += s->by_action[a];
        return n;
}

/* 850us, 12.3ms, 4.56s */
static const char *fmt_usec(char *buf, size_t size, uint64_t usec)
{
        if (usec < 1000)
                snprintf(buf, size, "%" PRIu64 "us", usec);
        else if (usec < 1000000)
                snprintf(buf, size, "%.1fms", (double)usec / 1e3);
        else
                snprintf(buf, size, "%.2fs", (double)usec / 1e6);
        return buf;
}

void stats_format_text(const struct stats_snapshot *s, const struct stats_extra *x,
                       struct query_out *out)
{
        char b[5][32];

        query_printf(out, "Events:            %" PRIu64 " processed, %" PRIu64 " failed "
                     "(%" PRIu64 " received from the kernel)\n",
                     s->events, s->events_failed, x->received);
        query_printf(out, "Rules generation:  %u\n", x->rules_generation);
        query_printf(out, "Queue:             %" PRIu64 " queued, %" PRIu64 " running, "
                     "peak %" PRIu64 " (limit %" PRIu64 ")\n", x->queued, x->running,
                     s->queue_peak, x->queue_max_events);
        query_printf(out, "Queue memory:      %" PRIu64 " bytes, peak %" PRIu64 " (limit %" PRIu64
                     "); reading paused %" PRIu64 " times at the limit\n", x->queue_bytes,
                     x->queue_bytes_peak, x->queue_max_bytes, x->budget_pauses);
        query_printf(out, "Programs:          %" PRIu64 " run, %" PRIu64 " failed, %" PRIu64
                     " killed (timeout)\n", s->programs_run, s->programs_failed,
                     s->programs_killed);
        query_printf(out, "Kernel socket:     %" PRIu64 " overruns (%" PRIu64 " SEQNUMs lost), "
                     "%" PRIu64 " resyncs\n", x->overruns, x->lost, x->resyncs);
        query_printf(out, "Storm damping:     %" PRIu64 " events coalesced, %" PRIu64
                     " watch events rate-limited\n", x->coalesced, x->watch_limited);
        if (x->explain_max_events)
                query_printf(out, "Explain traces:    %" PRIu64 " events, %" PRIu64 " bytes "
                             "(at most %" PRIu64 " events, %" PRIu64 " bytes)\n",
                             x->explain_events, x->explain_bytes, x->explain_max_events,
                             x->explain_max_bytes);
        else
                query_printf(out, "Explain traces:    off\n");
        query_printf(out, "Uptime:            %s\n", fmt_usec(b[0], sizeof(b[0]), x->uptime_usec));

        query_printf(out, "\nEvents by subsystem and action:\n");
        query_printf(out, "  %-20s %8s", "SUBSYSTEM", "TOTAL");
        for (unsigned a = 0; a < _UEVENT_ACTION_MAX; a++)
                query_printf(out, " %8s", action_name(a));
        query_printf(out, "\n");
        for (unsigned i = 0; i < s->n_subsystems; i++) {
                const struct stats_subsystem *ss = &s->subsystems[i];

                query_printf(out, "  %-20s %8" PRIu64, ss->name, subsystem_total(ss));
                for (unsigned a = 0; a < _UEVENT_ACTION_MAX; a++)
                        query_printf(out, " %8" PRIu64, ss->by_action[a]);
                query_printf(out, "\n");
        }

        query_printf(out, "\nLatency per stage:\n");
        query_printf(out, "  %-10s %10s %9s %9s %9s %9s\n", "STAGE", "COUNT", "P50", "P90",
                     "P99", "MAX");
        for (unsigned st = 0; st < _STATS_STAGE_MAX; st++) {
                const struct stats_histogram *h = &s->stages[st];

                query_printf(out, "  %-10s %10" PRIu64 " %9s %9s %9s %9s\n",
                             stats_stage_name(st), h->count,
                             fmt_usec(b[0], sizeof(b[0]), stats_quantile_usec(h, 0.50)),
                             fmt_usec(b[1], sizeof(b[1]), stats_quantile_usec(h, 0.90)),
                             fmt_usec(b[2], sizeof(b[2]), stats_quantile_usec(h, 0.99)),
                             fmt_usec(b[3], sizeof(b[3]), h->max_usec));
        }
        query_printf(out, "(percentiles are the upper bounds of log2 buckets)\n");
}

void stats_format_json(const struct stats_snapshot *s, const struct stats_extra *x,
                       struct query_out *out)
{
        query_printf(out, "{\n  \"events\": {\"processed\": %" PRIu64 ", \"failed\": %" PRIu64
                     ", \"received\": %" PRIu64 ",\n    \"by_subsystem\": {",
                     s->events, s->events_failed, x->received);
        for (unsigned i = 0; i < s->n_subsystems; i++) {
                const struct stats_subsystem *ss = &s->subsystems[i];
                bool first = true;

                query_printf(out, "%s\n      \"%s\": {", i ? "," : "", ss->name);
                for (unsigned a = 0; a < _UEVENT_ACTION_MAX; a++) {
                        if (!ss->by_action[a])
                                continue;
                        query_printf(out, "%s\"%s\": %" PRIu64, first ? "" : ", ",
                                     action_name(a), ss->by_action[a]);
                        first = false;
                }
                query_printf(out, "}");
        }
        query_printf(out, "}},\n");
        query_printf(out, "  \"rules_generation\": %u,\n", x->rules_generation);
        query_printf(out, "  \"queue\": {\"queued\": %" PRIu64 ", \"running\": %" PRIu64
                     ", \"peak\": %" PRIu64 ", \"max_events\": %" PRIu64 ",\n    \"bytes\": %"
                     PRIu64 ", \"bytes_peak\": %" PRIu64 ", \"max_bytes\": %" PRIu64
                     ", \"budget_pauses\": %" PRIu64 "},\n", x->queued, x->running,
                     s->queue_peak, x->queue_max_events, x->queue_bytes, x->queue_bytes_peak,
                     x->queue_max_bytes, x->budget_pauses);
        query_printf(out, "  \"programs\": {\"run\": %" PRIu64 ", \"failed\": %" PRIu64
                     ", \"killed\": %" PRIu64 "},\n", s->programs_run, s->programs_failed,
                     s->programs_killed);
        query_printf(out, "  \"netlink\": {\"overruns\": %" PRIu64 ", \"lost\": %" PRIu64
                     ", \"resyncs\": %" PRIu64 "},\n", x->overruns, x->lost, x->resyncs);
        query_printf(out, "  \"coalesced\": %" PRIu64 ",\n  \"watch_rate_limited\": %" PRIu64
                     ",\n", x->coalesced, x->watch_limited);
        query_printf(out, "  \"explain\": {\"events\": %" PRIu64 ", \"bytes\": %" PRIu64
                     ", \"max_events\": %" PRIu64 ", \"max_bytes\": %" PRIu64 "},\n",
                     x->explain_events, x->explain_bytes, x->explain_max_events,
                     x->explain_max_bytes);
        query_printf(out, "  \"uptime_usec\": %" PRIu64 ",\n", x->uptime_usec);
        query_printf(out, "  \"latency_usec\": {");
        for (unsigned st = 0; st < _STATS_STAGE_MAX; st++) {
                const struct stats_histogram *h = &s->stages[st];

                query_printf(out, "%s\n    \"%s\": {\"count\": %" PRIu64 ", \"sum\": %" PRIu64
                             ", \"max\": %" PRIu64 ", \"p50\": %" PRIu64 ", \"p90\": %" PRIu64
                             ", \"p99\": %" PRIu64 ",\n      \"buckets\": [",
                             st ? "," : "", stats_stage_name(st), h->count, h->sum_usec,
                             h->max_usec, stats_quantile_usec(h, 0.50),
                             stats_quantile_usec(h, 0.90), stats_quantile_usec(h, 0.99));
                for (unsigned i = 0; i < STATS_BUCKETS; i++) {
                        uint64_t le = stats_bucket_le_usec(i);

                        if (le == UINT64_MAX)
                                query_printf(out, "%s{\"le\": null, \"count\": %" PRIu64 "}",
                                             i ? ", " : "", h->buckets[i]);
                        else
                                query_printf(out, "%s{\"le\": %" PRIu64 ", \"count\": %" PRIu64
                                             "}", i ? ", " : "", le, h->buckets[i]);
                }
                query_printf(out, "]}");
        }
        query_printf(out, "\n  }\n}\n");
}

static void prom_head(struct query_out *out, const char *name, const char *type,
                      const char *help)
{
        query_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void prom_one(struct query_out *out, const char *name, const char *type,
                     const char *help, uint64_t v)
{
        prom_head(out, name, type, help);
        query_printf(out, "%s %" PRIu64 "\n", name, v);
}

void stats_format_prometheus(const struct stats_snapshot *s, const struct stats_extra *x,
                             struct query_out *out)
{
        prom_head(out, "tudev_events_total", "counter",
                  "Events processed by udevd, by subsystem and action.");
        for (unsigned i = 0; i < s->n_subsystems; i++)
                for (unsigned a = 0; a < _UEVENT_ACTION_MAX; a++)
                        if (s->subsystems[i].by_action[a])
                                query_printf(out, "tudev_events_total{subsystem=\"%s\","
                                             "action=\"%s\"} %" PRIu64 "\n",
                                             s->subsystems[i].name, action_name(a),
                                             s->subsystems[i].by_action[a]);
        prom_one(out, "tudev_events_failed_total", "counter",
                 "Events whose processing failed.", s->events_failed);
        prom_one(out, "tudev_uevents_received_total", "counter",
                 "Kernel uevents received and queued.", x->received);
        prom_one(out, "tudev_rules_generation", "gauge",
                 "Generation of the rules in use (1 at start, +1 per reload).",
                 x->rules_generation);
        prom_head(out, "tudev_queue_events", "gauge", "Events in the queue now, by state.");
        query_printf(out, "tudev_queue_events{state=\"queued\"} %" PRIu64 "\n"
                     "tudev_queue_events{state=\"running\"} %" PRIu64 "\n", x->queued,
                     x->running);
        prom_one(out, "tudev_queue_peak_events", "gauge",
                 "Most events queued and running at once since start.", s->queue_peak);
        prom_one(out, "tudev_queue_max_events", "gauge",
                 "The queue's event limit (0: none).", x->queue_max_events);
        prom_one(out, "tudev_queue_bytes", "gauge",
                 "Bytes held by queued and running events now.", x->queue_bytes);
        prom_one(out, "tudev_queue_peak_bytes", "gauge",
                 "Most bytes held by queued and running events at once since start.",
                 x->queue_bytes_peak);
        prom_one(out, "tudev_queue_max_bytes", "gauge",
                 "The queue's byte limit (0: none).", x->queue_max_bytes);
        prom_one(out, "tudev_queue_budget_pauses_total", "counter",
                 "Times the listener stopped reading because the queue was at its limit.",
                 x->budget_pauses);
        prom_one(out, "tudev_programs_run_total", "counter", "Programs run by rules.",
                 s->programs_run);
        prom_one(out, "tudev_programs_failed_total", "counter",
                 "Programs that exited non-zero, died of a signal or did not start.",
                 s->programs_failed);
        prom_one(out, "tudev_programs_killed_total", "counter",
                 "Programs killed after their timeout.", s->programs_killed);
        prom_one(out, "tudev_netlink_overruns_total", "counter",
                 "Kernel uevent socket buffer overruns.", x->overruns);
        prom_one(out, "tudev_netlink_lost_seqnums_total", "counter",
                 "SEQNUMs missing after overruns (upper bound).", x->lost);
        prom_one(out, "tudev_resyncs_total", "counter", "Recoveries after overruns.",
                 x->resyncs);
        prom_one(out, "tudev_events_coalesced_total", "counter",
                 "Events merged into an earlier queued event.", x->coalesced);
        prom_one(out, "tudev_watch_events_rate_limited_total", "counter",
                 "Synthetic watch events suppressed by the rate limit.", x->watch_limited);
        prom_one(out, "tudev_explain_events", "gauge",
                 "Events whose rules trace is kept for udevadm explain.", x->explain_events);
        prom_one(out, "tudev_explain_bytes", "gauge",
                 "Bytes of the kept rules traces.", x->explain_bytes);
        prom_one(out, "tudev_explain_max_events", "gauge",
                 "Rules traces kept at most (0: tracing is off).", x->explain_max_events);
        prom_one(out, "tudev_explain_max_bytes", "gauge",
                 "Bytes of the rules traces' arena (0: tracing is off).",
                 x->explain_max_bytes);
        prom_head(out, "tudev_event_stage_seconds", "histogram",
                  "Latency of each stage of event processing.");
        for (unsigned st = 0; st < _STATS_STAGE_MAX; st++) {
                const struct stats_histogram *h = &s->stages[st];
                uint64_t cum = 0;

                for (unsigned i = 0; i < STATS_BUCKETS; i++) {
                        uint64_t le = stats_bucket_le_usec(i);

                        cum += h->buckets[i];
                        if (le == UINT64_MAX)
                                query_printf(out, "tudev_event_stage_seconds_bucket{stage=\"%s\","
                                             "le=\"+Inf\"} %" PRIu64 "\n",
                                             stats_stage_name(st), cum);
                        else
                                query_printf(out, "tudev_event_stage_seconds_bucket{stage=\"%s\","
                                             "le=\"%.9g\"} %" PRIu64 "\n",
                                             stats_stage_name(st), (double)le / 1e6, cum);
                }
                query_printf(out, "tudev_event_stage_seconds_sum{stage=\"%s\"} %.6f\n"
                             "tudev_event_stage_seconds_count{stage=\"%s\"} %" PRIu64 "\n",
                             stats_stage_name(st), (double)h->sum_usec / 1e6,
                             stats_stage_name(st), h->count);
        }
}
