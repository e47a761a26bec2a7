/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (workers push, the manager formats; one mutex) */
/* The ring of recent events' rules traces: see explain-ring.h. */

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "rules/rules-trace.h"
#include "rules/rules.h"
#include "shared/log.h"
#include "udevd/explain-ring.h"

struct entry {
        const struct rules_trace *trace; /* in the arena */
        struct rules *rules;             /* owned reference */
        uint32_t off, len;               /* the trace's bytes in the arena */
};

struct explain_ring {
        pthread_mutex_t lock;
        struct entry *e;           /* circular, max_events slots */
        unsigned char *arena;      /* max_bytes, mapped; pages touched as written */
        size_t max_events, max_bytes;
        size_t first, n, bytes;    /* oldest slot, count, bytes kept */
};

int explain_ring_new(size_t max_events, size_t max_bytes, struct explain_ring **ret)
{
        struct explain_ring *r;
        void *arena;

        if (max_events == 0 || max_events > EXPLAIN_EVENTS_MAX || max_bytes == 0 ||
            max_bytes > (size_t)EXPLAIN_EVENTS_MAX * EXPLAIN_BYTES_PER_EVENT)
                return -EINVAL;
        r = calloc(1, sizeof(*r));
        if (!r)
                return -ENOMEM;
        r->e = calloc(max_events, sizeof(*r->e));
        arena = mmap(NULL, max_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (!r->e || arena == MAP_FAILED) {
                if (arena != MAP_FAILED)
                        munmap(arena, max_bytes);
                free(r->e);
                free(r);
                return -ENOMEM;
        }
        pthread_mutex_init(&r->lock, NULL);
        r->arena = arena;
        r->max_events = max_events;
        r->max_bytes = max_bytes;
        *ret = r;
        return 0;
}

static struct entry *slot(struct explain_ring *r, size_t i)
{
        return &r->e[(r->first + i) % r->max_events];
}

static void drop_oldest(struct explain_ring *r)
{
        struct entry *e = slot(r, 0);

        rules_unref(e->rules);
        r->bytes -= e->len;
        *e = (struct entry){};
        r->first = (r->first + 1) % r->max_events;
        r->n--;
}

void explain_ring_free(struct explain_ring *r)
{
        if (!r)
                return;
        while (r->n > 0)
                drop_oldest(r);
        pthread_mutex_destroy(&r->lock);
        munmap(r->arena, r->max_bytes);
        free(r->e);
        free(r);
}

static _Atomic(struct explain_ring *) global_ring;

void explain_ring_set_global(struct explain_ring *r)
{
        atomic_store(&global_ring, r);
}

struct explain_ring *explain_ring_global(void)
{
        return atomic_load(&global_ring);
}

/* ---- the per-thread trace buffer ---- */

static pthread_key_t trace_key;
static pthread_once_t trace_once = PTHREAD_ONCE_INIT;
static bool trace_key_ok;

static void trace_destroy(void *p)
{
        rules_trace_free(p);
}

static void trace_key_init(void)
{
        trace_key_ok = pthread_key_create(&trace_key, trace_destroy) == 0;
}

struct rules_trace *explain_thread_trace(void)
{
        struct rules_trace *t;

        (void)pthread_once(&trace_once, trace_key_init);
        if (!trace_key_ok)
                return NULL;
        t = pthread_getspecific(trace_key);
        if (!t) {
                if (rules_trace_new(EXPLAIN_TRACE_SIZE, 0, &t) < 0)
                        return NULL;
                if (pthread_setspecific(trace_key, t) != 0) {
                        rules_trace_free(t);
                        return NULL;
                }
        }
        rules_trace_reset(t);
        return t;
}

/* ---- push ---- */

/* Distinct rule sets among the kept events, and whether `rules` is one. */
static size_t count_rulesets(struct explain_ring *r, const struct rules *rules, bool *present)
{
        const struct rules *seen[EXPLAIN_RING_RULESETS + 1];
        size_t n = 0;

        *present = false;
        for (size_t i = r->n; i-- > 0;) {
                const struct rules *x = slot(r, i)->rules;
                size_t k;

                if (x == rules)
                        *present = true;
                for (k = 0; k < n && seen[k] != x; k++)
                        ;
                if (k == n) {
                        if (n == EXPLAIN_RING_RULESETS + 1)
                                break;
                        seen[n++] = x;
                }
        }
        return n;
}

/* Where `need` bytes go in the arena, dropping the oldest traces until they
 * fit. The kept traces are one run of bytes, or two when they wrap: the
 * newest are written after the last one, or at the start of the arena. */
static size_t make_room(struct explain_ring *r, size_t need)
{
        for (;;) {
                const struct entry *oldest, *newest;
                size_t start, end;

                if (r->n == 0)
                        return 0;
                oldest = slot(r, 0);
                newest = slot(r, r->n - 1);
                start = oldest->off;
                end = (size_t)newest->off + newest->len;
                if (start < end) {
                        /* one run [start, end) */
                        if (r->max_bytes - end >= need)
                                return end;
                        if (start >= need)
                                return 0;
                } else if (start - end >= need) {
                        /* wrapped: [start, max) and [0, end) */
                        return end;
                }
                drop_oldest(r);
        }
}

void explain_ring_push(struct explain_ring *r, const struct rules_trace *t, struct rules *rules)
{
        size_t need = (rules_trace_footprint(t) + 7u) & ~(size_t)7u, off;
        struct entry *e;

        if (need > r->max_bytes)
                return;
        pthread_mutex_lock(&r->lock);
        if (r->n > 0 && slot(r, r->n - 1)->rules != rules) {
                bool present;
                /* a new rule set: keep at most EXPLAIN_RING_RULESETS in all */
                while (r->n > 0 && count_rulesets(r, rules, &present) >= EXPLAIN_RING_RULESETS &&
                       !present)
                        drop_oldest(r);
        }
        if (r->n == r->max_events)
                drop_oldest(r);
        off = make_room(r, need);
        e = slot(r, r->n);
        *e = (struct entry){ .trace = rules_trace_copy_to(t, r->arena + off),
                             .rules = rules_ref(rules),
                             .off = (uint32_t)off,
                             .len = (uint32_t)need };
        r->n++;
        r->bytes += need;
        pthread_mutex_unlock(&r->lock);
}

size_t explain_ring_count(struct explain_ring *r, size_t *ret_bytes)
{
        size_t n;

        pthread_mutex_lock(&r->lock);
        n = r->n;
        if (ret_bytes)
                *ret_bytes = r->bytes;
        pthread_mutex_unlock(&r->lock);
        return n;
}

void explain_ring_get_stats(struct explain_ring *r, struct explain_ring_stats *ret)
{
        pthread_mutex_lock(&r->lock);
        *ret = (struct explain_ring_stats){ .events = r->n, .bytes = r->bytes,
                                            .max_events = r->max_events,
                                            .max_bytes = r->max_bytes };
        pthread_mutex_unlock(&r->lock);
}

/* ---- lookup and text ---- */

int explain_ring_format(struct explain_ring *r, const char *devpath, uint64_t seqnum, FILE *f)
{
        struct rules_trace *copy = NULL;
        struct rules *rules = NULL;
        int k = -ENOENT;

        pthread_mutex_lock(&r->lock);
        for (size_t i = r->n; i-- > 0;) {
                const struct entry *e = slot(r, i);

                if (seqnum > 0 && rules_trace_seqnum(e->trace) != seqnum)
                        continue;
                if (devpath && devpath[0] && strcmp(rules_trace_devpath(e->trace), devpath) != 0)
                        continue;
                k = rules_trace_dup(e->trace, &copy);
                if (k >= 0)
                        rules = rules_ref(e->rules);
                break;
        }
        pthread_mutex_unlock(&r->lock);
        if (k < 0)
                return k;
        k = rules_trace_format(copy, rules, 0, f);
        rules_trace_free(copy);
        rules_unref(rules);
        return k;
}

int explain_query(const char *args, struct query_out *out, void *userdata)
{
        struct explain_ring *r = userdata;
        char buf[256], *save = NULL, *devpath = NULL, *text = NULL;
        uint64_t seqnum = 0;
        size_t len = 0;
        FILE *f;
        int k;

        if (!r)
                return query_fail(out, -EOPNOTSUPP,
                                  "explain: events are not traced (explain_events=0)\n");
        if (strlen(args) >= sizeof(buf))
                return query_fail(out, -EINVAL, "explain: arguments too long\n");
        strcpy(buf, args);
        for (char *w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
                if (strncmp(w, "seqnum=", 7) == 0) {
                        char *end;
                        errno = 0;
                        unsigned long long v = strtoull(w + 7, &end, 10);
                        if (errno || end == w + 7 || *end || v == 0)
                                return query_fail(out, -EINVAL, "explain: bad seqnum '%s'\n",
                                                  w + 7);
                        seqnum = v;
                } else if (w[0] == '/' && !devpath) {
                        devpath = w;
                        if (strncmp(devpath, "/sys/", 5) == 0)
                                devpath += 4;
                } else
                        return query_fail(out, -EINVAL, "explain: unexpected argument '%s'\n", w);
        }
        if (!devpath && seqnum == 0)
                return query_fail(out, -EINVAL, "explain: a DEVPATH or seqnum= is needed\n");
        f = open_memstream(&text, &len);
        if (!f)
                return query_fail(out, -ENOMEM, "explain: out of memory\n");
        k = explain_ring_format(r, devpath, seqnum, f);
        if (fclose(f) != 0 && k >= 0)
                k = -EIO;
        if (k == -ENOENT) {
                free(text);
                if (seqnum > 0)
                        return query_fail(out, -ENOENT, "explain: no trace kept for event %" PRIu64
                                          "%s%s\n", seqnum, devpath ? " of " : "",
                                          devpath ? devpath : "");
                return query_fail(out, -ENOENT, "explain: no trace kept for %s\n", devpath);
        }
        if (k < 0) {
                free(text);
                return query_fail(out, k, "explain: formatting failed\n");
        }
        k = query_printf(out, "%s", text);
        free(text);
        return k < 0 ? k : 0;
}
