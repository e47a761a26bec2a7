/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (see rules-trace.h: one owner at a time) */
/* The rules trace: a fixed block of packed records, appended while the
 * rules run and turned into text only when someone asks. */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rules/rules-exec.h"
#include "rules/rules-internal.h"
#include "rules/rules-trace.h"

/* Fields of the event itself, kept as NUL-terminated strings at the start
 * of the record space. */
enum { EV_ACTION, EV_DEVPATH, EV_SYSNAME, EV_SUBSYSTEM, _EV_MAX };
#define EV_STRING_MAX 1024
#define DRIVER_MAX 64

enum rec_kind {
        REC_LINE,
        REC_EXEC, /* kind in `flags` */
};

/* flags of REC_LINE */
#define F_APPLIED 0x01
#define F_ABORTED 0x02
#define F_VKIND_SHIFT 2   /* 3 bits: enum rules_trace_value */
#define F_VALUE_CUT 0x20  /* the value was longer than kept */
#define F_DEVICE 0x40     /* a second string follows: the device */

#define TOK_NONE UINT16_MAX
#define LINE_NONE UINT32_MAX

/* 16 bytes, then `len` bytes of strings, padded to 4. */
struct rec {
        uint32_t line;
        uint16_t tok;
        uint8_t kind;
        uint8_t flags;
        uint32_t nsec;   /* saturated at UINT32_MAX (about 4.3 s) */
        uint16_t len;
        int16_t status;  /* REC_EXEC: the result, clamped to int16 */
};
_Static_assert(sizeof(struct rec) == 16, "trace record layout");

struct rules_trace {
        size_t size;       /* record space */
        size_t used;
        size_t ev_len;     /* bytes of the event strings at data[0] */
        uint64_t seqnum;
        uint64_t generation;
        uint64_t total_nsec;
        int result;
        unsigned flags;    /* RULES_TRACE_* */
        unsigned lines, applied, dropped;
        char driver[DRIVER_MAX];
        _Alignas(8) unsigned char data[];
};

static size_t align4(size_t n)
{
        return (n + 3u) & ~(size_t)3u;
}

int rules_trace_new(size_t size, unsigned flags, struct rules_trace **ret)
{
        struct rules_trace *t;

        if (size < RULES_TRACE_SIZE_MIN)
                size = RULES_TRACE_SIZE_MIN;
        if (size > RULES_TRACE_SIZE_MAX)
                size = RULES_TRACE_SIZE_MAX;
        size = align4(size);
        t = calloc(1, sizeof(*t) + size);
        if (!t)
                return -ENOMEM;
        t->size = size;
        t->flags = flags;
        *ret = t;
        return 0;
}

bool rules_trace_line_times(const struct rules_trace *t)
{
        return t->flags & RULES_TRACE_LINE_TIMES;
}

void rules_trace_free(struct rules_trace *t)
{
        free(t);
}

size_t rules_trace_footprint(const struct rules_trace *t)
{
        return sizeof(*t) + t->used;
}

int rules_trace_dup(const struct rules_trace *t, struct rules_trace **ret)
{
        struct rules_trace *c = malloc(rules_trace_footprint(t));

        if (!c)
                return -ENOMEM;
        memcpy(c, t, rules_trace_footprint(t));
        c->size = t->used;
        *ret = c;
        return 0;
}

void rules_trace_reset(struct rules_trace *t)
{
        t->used = t->ev_len = 0;
        t->seqnum = 0;
        t->total_nsec = 0;
        t->result = 0;
        t->lines = t->applied = t->dropped = 0;
        t->driver[0] = '\0';
}

void rules_trace_set_generation(struct rules_trace *t, uint64_t generation)
{
        t->generation = generation;
}

uint64_t rules_trace_generation(const struct rules_trace *t)
{
        return t->generation;
}

uint64_t rules_trace_seqnum(const struct rules_trace *t)
{
        return t->seqnum;
}

bool rules_trace_truncated(const struct rules_trace *t)
{
        return t->dropped > 0;
}

unsigned rules_trace_dropped(const struct rules_trace *t)
{
        return t->dropped;
}

unsigned rules_trace_lines(const struct rules_trace *t)
{
        return t->lines;
}

unsigned rules_trace_applied(const struct rules_trace *t)
{
        return t->applied;
}

uint64_t rules_trace_now(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

/* The i-th event string ("" if absent). */
static const char *ev_string(const struct rules_trace *t, unsigned i)
{
        const char *p = (const char *)t->data, *end = p + t->ev_len;

        for (unsigned k = 0; p < end; k++) {
                if (k == i)
                        return p;
                p += strlen(p) + 1;
        }
        return "";
}

const char *rules_trace_devpath(const struct rules_trace *t)
{
        return ev_string(t, EV_DEVPATH);
}

/* Copy s (NULL = "") into dst, at most max - 1 bytes and a NUL; returns the
 * bytes written including the NUL; *cut when s was longer. */
static size_t put_string(unsigned char *dst, const char *s, size_t max, bool *cut)
{
        size_t n = s ? strlen(s) : 0;

        if (n >= max) {
                n = max - 1;
                if (cut)
                        *cut = true;
        }
        if (n)
                memcpy(dst, s, n);
        dst[n] = '\0';
        return n + 1;
}

void rules_trace_begin(struct rules_trace *t, uint64_t seqnum, const char *action,
                       const char *devpath, const char *sysname, const char *subsystem)
{
        const char *ev[_EV_MAX] = { action, devpath, sysname, subsystem };
        size_t o = 0;

        t->used = t->ev_len = 0;
        t->seqnum = seqnum;
        t->total_nsec = 0;
        t->result = 0;
        t->lines = t->applied = t->dropped = 0;
        t->driver[0] = '\0';
        for (unsigned i = 0; i < _EV_MAX; i++) {
                /* each string gets at most a quarter of the space */
                size_t max = t->size / 4 < EV_STRING_MAX ? t->size / 4 : EV_STRING_MAX;
                o += put_string(t->data + o, ev[i], max, NULL);
        }
        t->ev_len = o;
        t->used = align4(o);
}

/* Room for a record with `len` bytes of strings, or NULL (counted). */
static struct rec *rec_reserve(struct rules_trace *t, size_t len)
{
        size_t need = sizeof(struct rec) + align4(len);
        struct rec *r;

        if (t->dropped > 0 || need > t->size - t->used) {
                t->dropped++;
                return NULL;
        }
        r = (struct rec *)(void *)(t->data + t->used);
        memset(r, 0, sizeof(*r));
        r->len = (uint16_t)len;
        t->used += need;
        return r;
}

static uint32_t sat32(uint64_t v)
{
        return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

static size_t bounded_len(const char *s)
{
        size_t n = s ? strnlen(s, RULES_TRACE_VALUE_MAX) : 0;
        return n < RULES_TRACE_VALUE_MAX ? n + 1 : RULES_TRACE_VALUE_MAX;
}

void rules_trace_line(struct rules_trace *t, size_t line, int verdict, unsigned tok,
                      uint64_t nsec, enum rules_trace_value vkind, const char *value,
                      const char *device)
{
        bool has_value = verdict == 0 && (vkind == RULES_TRACE_VALUE_STRING ||
                                          vkind == RULES_TRACE_VALUE_OUTCOME);
        bool has_device = verdict == 0 && device;
        size_t len = (has_value ? bounded_len(value) : 0) + (has_device ? bounded_len(device) : 0);
        struct rec *r;
        bool cut = false;
        size_t o = 0;

        t->lines++;
        if (verdict > 0)
                t->applied++;
        r = rec_reserve(t, len);
        if (!r)
                return;
        r->kind = REC_LINE;
        r->line = line >= LINE_NONE ? LINE_NONE : (uint32_t)line;
        r->tok = verdict > 0 || tok >= TOK_NONE ? TOK_NONE : (uint16_t)tok;
        r->nsec = sat32(nsec);
        r->flags = verdict > 0 ? F_APPLIED : verdict < 0 ? F_ABORTED : 0;
        if (verdict == 0)
                r->flags |= (uint8_t)((unsigned)vkind << F_VKIND_SHIFT);
        if (has_value)
                o += put_string((unsigned char *)(r + 1), value, RULES_TRACE_VALUE_MAX, &cut);
        if (has_device) {
                put_string((unsigned char *)(r + 1) + o, device, RULES_TRACE_VALUE_MAX, NULL);
                r->flags |= F_DEVICE;
        }
        if (cut)
                r->flags |= F_VALUE_CUT;
}

void rules_trace_exec(struct rules_trace *t, size_t line, enum rules_trace_exec_kind kind,
                      const char *cmd, int status, uint64_t nsec)
{
        struct rec *r = rec_reserve(t, bounded_len(cmd));
        bool cut = false;

        if (!r)
                return;
        r->kind = REC_EXEC;
        r->line = line >= LINE_NONE ? LINE_NONE : (uint32_t)line;
        r->tok = TOK_NONE;
        r->flags = (uint8_t)kind;
        r->nsec = sat32(nsec);
        r->status = (int16_t)(status > INT16_MAX ? INT16_MAX : status < INT16_MIN ? INT16_MIN
                                                                                  : status);
        put_string((unsigned char *)(r + 1), cmd, RULES_TRACE_VALUE_MAX, &cut);
        if (cut)
                r->flags |= F_VALUE_CUT;
}

void rules_trace_end(struct rules_trace *t, const char *driver, int result, uint64_t nsec)
{
        put_string((unsigned char *)t->driver, driver, sizeof(t->driver), NULL);
        t->result = result;
        t->total_nsec = nsec;
}

/* ------------------------------------------------------------ text */

static void put_time(FILE *f, uint64_t nsec, unsigned flags)
{
        if (flags & RULES_TRACE_FORMAT_NO_TIME)
                fputs("-", f);
        else
                fprintf(f, "%" PRIu64 ".%03uus", nsec / 1000, (unsigned)(nsec % 1000));
}

/* "...": '"' and '\' escaped, control bytes as \xHH; `cut` adds "..." */
static void put_quoted(FILE *f, const char *s, bool cut)
{
        fputc('"', f);
        for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
                if (*p == '"' || *p == '\\')
                        fprintf(f, "\\%c", *p);
                else if (*p < 0x20 || *p == 0x7f)
                        fprintf(f, "\\x%02x", *p);
                else
                        fputc(*p, f);
        }
        fputc('"', f);
        if (cut)
                fputs("...", f);
}

static const char *const op_names[] = { "==", "!=", "+=", "-=", "=", ":=" };

/* KEY{attr}OP"value" as written in the rules file. */
static void put_token(FILE *f, const struct token *tk)
{
        const char *name = token_type_to_string(tk->type);

        if (strncmp(name, "OPTIONS", 7) == 0) {
                fprintf(f, "OPTIONS%s", op_names[tk->op]);
                if (tk->type == TK_A_OPTIONS_STATIC_NODE) {
                        fputs("\"static_node=", f);
                        put_quoted(f, tk->value ? tk->value : "", false);
                        return;
                }
                put_quoted(f, tk->value ? tk->value : name + 8, false);
                return;
        }
        fputs(name, f);
        if (tk->attr.raw && !strchr(name, '{'))
                fprintf(f, "{%s}", tk->attr.raw);
        fputs(op_names[tk->op], f);
        put_quoted(f, tk->value ? tk->value : "", false);
}

static const char *exec_kind_name(unsigned kind)
{
        static const char *const names[] = {
                [RULES_TRACE_PROGRAM] = "program",
                [RULES_TRACE_IMPORT_PROGRAM] = "import{program}",
                [RULES_TRACE_IMPORT_BUILTIN] = "import{builtin}",
                [RULES_TRACE_RUN_PROGRAM] = "run{program}",
                [RULES_TRACE_RUN_BUILTIN] = "run{builtin}",
        };
        return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "exec";
}

static void put_exec(FILE *f, const struct rec *r, unsigned flags)
{
        unsigned kind = r->flags & ~(unsigned)F_VALUE_CUT;
        const char *cmd = (const char *)(r + 1);

        fprintf(f, "%s%s ", r->line == LINE_NONE ? "" : "  ", exec_kind_name(kind));
        put_quoted(f, cmd, r->flags & F_VALUE_CUT);
        if (r->status == 0)
                fputs(" ok ", f);
        else if (r->status > 0)
                fprintf(f, " exit %d ", r->status);
        else
                fprintf(f, " errno %d ", -r->status);
        put_time(f, r->nsec, flags);
        fputc('\n', f);
}

/* The value of an event key (RULES_TRACE_VALUE_EVENT). */
static const char *event_value(const struct rules_trace *t, const struct token *tk)
{
        switch (tk->type) {
        case TK_M_ACTION:
                return ev_string(t, EV_ACTION);
        case TK_M_DEVPATH:
                return ev_string(t, EV_DEVPATH);
        case TK_M_KERNEL:
                return ev_string(t, EV_SYSNAME);
        case TK_M_SUBSYSTEM:
                return ev_string(t, EV_SUBSYSTEM);
        case TK_M_DRIVER:
                return t->driver;
        case TK_M_CONST:
                return tk->data.constant == CONST_ARCH ? rules_const_arch() : rules_const_virt();
        default:
                return NULL;
        }
}

static void put_line(FILE *f, const struct rules_trace *t, const struct rules *rules,
                     const struct rec *r, unsigned flags)
{
        const struct rule_line *l;
        const char *s = (const char *)(r + 1);

        if (r->line >= rules->n_lines) {
                fprintf(f, "?:%" PRIu32 " unknown\n", r->line);
                return;
        }
        l = &rules->lines[r->line];
        fprintf(f, "%s:%u %s ", l->file, l->lineno,
                r->flags & F_APPLIED ? "applied" : r->flags & F_ABORTED ? "aborted" : "failed");
        put_time(f, r->nsec, rules_trace_line_times(t) ? flags : RULES_TRACE_FORMAT_NO_TIME);
        if (r->flags & F_APPLIED) {
                for (unsigned i = 0; i < l->n_tokens; i++)
                        if (!TK_IS_MATCH(l->tokens[i].type)) {
                                fputc(' ', f);
                                put_token(f, &l->tokens[i]);
                        }
                if (l->goto_label) {
                        fputs(" GOTO=", f);
                        put_quoted(f, l->goto_label, false);
                }
                fputc('\n', f);
                return;
        }
        if (r->tok >= l->n_tokens) {
                fputc('\n', f);
                return;
        }
        fputc(' ', f);
        put_token(f, &l->tokens[r->tok]);
        if (r->flags & F_ABORTED) {
                fputc('\n', f);
                return;
        }
        switch ((r->flags >> F_VKIND_SHIFT) & 7u) {
        case RULES_TRACE_VALUE_STRING:
                fputs(" got ", f);
                put_quoted(f, s, r->flags & F_VALUE_CUT);
                s += strlen(s) + 1;
                break;
        case RULES_TRACE_VALUE_OUTCOME:
                fprintf(f, " got %s", s);
                s += strlen(s) + 1;
                break;
        case RULES_TRACE_VALUE_ABSENT:
                fputs(" got nothing", f);
                break;
        case RULES_TRACE_VALUE_EVENT: {
                const char *v = event_value(t, &l->tokens[r->tok]);
                if (v && v[0]) {
                        fputs(" got ", f);
                        put_quoted(f, v, false);
                } else
                        fputs(" got nothing", f);
                break;
        }
        default:
                break;
        }
        if (r->flags & F_DEVICE)
                fprintf(f, " at %s", s);
        fputc('\n', f);
}

int rules_trace_format(const struct rules_trace *t, const struct rules *rules, unsigned flags,
                       FILE *f)
{
        size_t o = align4(t->ev_len), pending = SIZE_MAX;

        fprintf(f, "event seqnum=%" PRIu64 " action=%s devpath=%s subsystem=%s", t->seqnum,
                ev_string(t, EV_ACTION), ev_string(t, EV_DEVPATH), ev_string(t, EV_SUBSYSTEM));
        if (t->generation)
                fprintf(f, " generation=%" PRIu64, t->generation);
        fputc('\n', f);
        /* A line's programs are recorded before the line itself: print them
         * after it. */
        while (o + sizeof(struct rec) <= t->used) {
                const struct rec *r = (const void *)(t->data + o);
                size_t next = o + sizeof(*r) + align4(r->len);

                if (next > t->used)
                        break;
                if (r->kind == REC_EXEC && r->line != LINE_NONE) {
                        if (pending == SIZE_MAX)
                                pending = o;
                } else if (r->kind == REC_EXEC) {
                        put_exec(f, r, flags);
                } else {
                        put_line(f, t, rules, r, flags);
                        for (size_t p = pending; p < o;) {
                                const struct rec *e = (const void *)(t->data + p);
                                put_exec(f, e, flags);
                                p += sizeof(*e) + align4(e->len);
                        }
                        pending = SIZE_MAX;
                }
                o = next;
        }
        fprintf(f, "summary lines=%u applied=%u time=", t->lines, t->applied);
        put_time(f, t->total_nsec, flags);
        fprintf(f, " result=%d\n", t->result);
        if (t->dropped)
                fprintf(f, "truncated dropped=%u\n", t->dropped);
        return ferror(f) ? -EIO : 0;
}
