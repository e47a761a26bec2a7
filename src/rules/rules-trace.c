/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (see rules-trace.h: one owner at a time) */
/* The rules trace: a fixed block of packed records, appended while the
 * rules run and turned into text only when someone asks.
 *
 * Records are a byte stream, so that the trace udevd keeps of every event
 * stays small (Debian 12's rules evaluate 150-350 lines per event, most of
 * which fail on a key whose value is the event's own and is not stored):
 *
 *   line:  tag, varint line delta (zigzag, from the previous line record),
 *          [varint key index: failed and aborted lines],
 *          [varint nsec: RULES_TRACE_LINE_TIMES only],
 *          [value NUL] [device NUL]
 *   exec:  tag, varint status (zigzag), varint nsec, command NUL
 *
 * An evaluated line that failed on an event key costs 3 bytes. An exec
 * record without T_RUN belongs to the line record that follows it (its
 * programs run before the line is recorded). */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
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
/* Record space kept back for the driver, written when the rules end. */
#define DRIVER_MAX 64

/* tag byte: bits 0-1 the kind */
enum { T_APPLIED, T_FAILED, T_ABORTED, T_EXEC };
#define T_KIND_MASK 0x03u
/* line records: bits 2-4 enum rules_trace_value (failed lines) */
#define T_VKIND_SHIFT 2
/* exec records: bits 2-4 enum rules_trace_exec_kind */
#define T_XKIND_SHIFT 2
#define T_CUT 0x20u    /* the value or command was longer than kept */
#define T_DEVICE 0x40u /* line: a device name follows the value */
#define T_RUN 0x40u    /* exec: a RUN entry, not a line's */

/* The longest record header: tag and three 64-bit varints. */
#define REC_HEAD_MAX (1 + 3 * 10)

struct rules_trace {
        uint32_t size;      /* record space */
        uint32_t used;
        uint32_t limit;     /* space records may use (the driver's is kept back) */
        uint32_t ev_len;    /* bytes of the event strings at data[0] */
        uint32_t driver_at; /* offset of the driver string; 0 = none */
        uint32_t flags;     /* RULES_TRACE_* */
        uint32_t lines, applied, dropped;
        uint32_t last_line; /* base of the next line record's delta */
        int32_t result;
        uint64_t seqnum;
        uint64_t generation;
        uint64_t total_nsec;
        _Alignas(8) unsigned char data[];
};

int rules_trace_new(size_t size, unsigned flags, struct rules_trace **ret)
{
        struct rules_trace *t;

        if (size < RULES_TRACE_SIZE_MIN)
                size = RULES_TRACE_SIZE_MIN;
        if (size > RULES_TRACE_SIZE_MAX)
                size = RULES_TRACE_SIZE_MAX;
        /* not calloc: the record space is written before it is read, and
         * pages it never reaches stay untouched */
        t = malloc(sizeof(*t) + size);
        if (!t)
                return -ENOMEM;
        memset(t, 0, sizeof(*t));
        t->size = (uint32_t)size;
        t->limit = (uint32_t)(size - DRIVER_MAX);
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

struct rules_trace *rules_trace_copy_to(const struct rules_trace *t, void *buf)
{
        struct rules_trace *c = buf;

        memcpy(c, t, rules_trace_footprint(t));
        c->size = c->limit = t->used;
        return c;
}

int rules_trace_dup(const struct rules_trace *t, struct rules_trace **ret)
{
        void *buf = malloc(rules_trace_footprint(t));

        if (!buf)
                return -ENOMEM;
        *ret = rules_trace_copy_to(t, buf);
        return 0;
}

void rules_trace_reset(struct rules_trace *t)
{
        t->used = t->ev_len = t->driver_at = 0;
        t->limit = t->size - DRIVER_MAX;
        t->seqnum = 0;
        t->total_nsec = 0;
        t->result = 0;
        t->lines = t->applied = t->dropped = 0;
        t->last_line = 0;
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

static const char *driver(const struct rules_trace *t)
{
        return t->driver_at ? (const char *)t->data + t->driver_at : "";
}

/* Copy s (NULL = "") into dst, at most max - 1 bytes and a NUL; returns the
 * bytes written including the NUL; *cut when s was longer. */
static size_t put_string(unsigned char *dst, const char *s, size_t max, bool *cut)
{
        size_t n = s ? strnlen(s, max) : 0;

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
        /* each string gets at most an eighth of the space */
        size_t max = t->size / 8 < EV_STRING_MAX ? t->size / 8 : EV_STRING_MAX;
        size_t o = 0;

        rules_trace_reset(t);
        t->seqnum = seqnum;
        for (unsigned i = 0; i < _EV_MAX; i++)
                o += put_string(t->data + o, ev[i], max, NULL);
        t->ev_len = t->used = (uint32_t)o;
}

/* ---- the record stream ---- */

static size_t varint_len(uint64_t v)
{
        size_t n = 1;

        while (v >= 0x80) {
                v >>= 7;
                n++;
        }
        return n;
}

static unsigned char *put_varint(unsigned char *p, uint64_t v)
{
        while (v >= 0x80) {
                *p++ = (unsigned char)(v | 0x80);
                v >>= 7;
        }
        *p++ = (unsigned char)v;
        return p;
}

static uint64_t zigzag(int64_t v)
{
        return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static int64_t unzigzag(uint64_t v)
{
        return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* Room for a record of `need` bytes, or NULL (counted; once a record was
 * dropped, every later one is too, so the kept records are a prefix). */
static unsigned char *rec_reserve(struct rules_trace *t, size_t need)
{
        unsigned char *p;

        if (t->dropped > 0 || need > t->limit - t->used) {
                t->dropped++;
                return NULL;
        }
        p = t->data + t->used;
        t->used += (uint32_t)need;
        return p;
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
        bool timed = rules_trace_line_times(t);
        uint32_t idx = line >= UINT32_MAX ? UINT32_MAX : (uint32_t)line;
        uint64_t delta = zigzag((int64_t)idx - (int64_t)t->last_line);
        unsigned tag = verdict > 0 ? T_APPLIED : verdict < 0 ? T_ABORTED : T_FAILED;
        size_t need = 1 + varint_len(delta) + (verdict > 0 ? 0 : varint_len(tok)) +
                      (timed ? varint_len(nsec) : 0) + (has_value ? bounded_len(value) : 0) +
                      (has_device ? bounded_len(device) : 0);
        unsigned char *p, *tagp;
        bool cut = false;

        t->lines++;
        if (verdict > 0)
                t->applied++;
        p = rec_reserve(t, need);
        if (!p)
                return;
        t->last_line = idx;
        if (verdict == 0)
                tag |= (unsigned)vkind << T_VKIND_SHIFT;
        if (has_device)
                tag |= T_DEVICE;
        tagp = p++;
        p = put_varint(p, delta);
        if (verdict <= 0)
                p = put_varint(p, tok);
        if (timed)
                p = put_varint(p, nsec);
        if (has_value)
                p += put_string(p, value, RULES_TRACE_VALUE_MAX, &cut);
        if (has_device)
                put_string(p, device, RULES_TRACE_VALUE_MAX, NULL);
        if (cut)
                tag |= T_CUT;
        *tagp = (unsigned char)tag;
}

void rules_trace_exec(struct rules_trace *t, size_t line, enum rules_trace_exec_kind kind,
                      const char *cmd, int status, uint64_t nsec)
{
        uint64_t st = zigzag(status);
        size_t need = 1 + varint_len(st) + varint_len(nsec) + bounded_len(cmd);
        unsigned tag = T_EXEC | (unsigned)kind << T_XKIND_SHIFT | (line == SIZE_MAX ? T_RUN : 0);
        unsigned char *p = rec_reserve(t, need), *tagp;
        bool cut = false;

        if (!p)
                return;
        tagp = p++;
        p = put_varint(p, st);
        p = put_varint(p, nsec);
        put_string(p, cmd, RULES_TRACE_VALUE_MAX, &cut);
        if (cut)
                tag |= T_CUT;
        *tagp = (unsigned char)tag;
}

void rules_trace_end(struct rules_trace *t, const char *drv, int result, uint64_t nsec)
{
        /* the kept-back space: the driver always fits */
        t->limit = t->size;
        t->driver_at = 0;
        if (drv && drv[0] && t->used > 0 && t->size - t->used >= 2) {
                size_t max = t->size - t->used < DRIVER_MAX ? t->size - t->used : DRIVER_MAX;
                t->driver_at = t->used;
                t->used += (uint32_t)put_string(t->data + t->used, drv, max, NULL);
        }
        t->result = result;
        t->total_nsec = nsec;
}

/* One decoded record. */
struct rec {
        unsigned tag;
        uint32_t line;  /* line records */
        unsigned tok;   /* failed and aborted lines; UINT_MAX otherwise */
        uint64_t nsec;  /* 0 for untimed lines */
        int status;     /* exec records */
        const char *value, *device; /* NULL = none; exec: value is the command */
};

static bool get_varint(const unsigned char **p, const unsigned char *end, uint64_t *ret)
{
        uint64_t v = 0;

        for (unsigned shift = 0; *p < end && shift < 64; shift += 7) {
                unsigned char b = *(*p)++;
                v |= (uint64_t)(b & 0x7f) << shift;
                if (!(b & 0x80)) {
                        *ret = v;
                        return true;
                }
        }
        return false;
}

static bool get_string(const unsigned char **p, const unsigned char *end, const char **ret)
{
        const unsigned char *nul = memchr(*p, '\0', (size_t)(end - *p));

        if (!nul)
                return false;
        *ret = (const char *)*p;
        *p = nul + 1;
        return true;
}

/* Decode the record at *p (advanced past it); `last_line` is the delta base,
 * updated by line records. false at a malformed record. */
static bool rec_next(const struct rules_trace *t, const unsigned char **p,
                     const unsigned char *end, uint32_t *last_line, struct rec *r)
{
        uint64_t v;

        *r = (struct rec){ .tok = UINT_MAX };
        if (*p >= end)
                return false;
        r->tag = *(*p)++;
        if ((r->tag & T_KIND_MASK) == T_EXEC) {
                if (!get_varint(p, end, &v))
                        return false;
                r->status = (int)unzigzag(v);
                return get_varint(p, end, &r->nsec) && get_string(p, end, &r->value);
        }
        if (!get_varint(p, end, &v))
                return false;
        r->line = (uint32_t)((int64_t)*last_line + unzigzag(v));
        *last_line = r->line;
        if ((r->tag & T_KIND_MASK) != T_APPLIED) {
                if (!get_varint(p, end, &v))
                        return false;
                r->tok = v > UINT_MAX ? UINT_MAX : (unsigned)v;
        }
        if (rules_trace_line_times(t) && !get_varint(p, end, &r->nsec))
                return false;
        if ((r->tag & T_KIND_MASK) == T_FAILED) {
                unsigned vk = (r->tag >> T_VKIND_SHIFT) & 7u;
                if ((vk == RULES_TRACE_VALUE_STRING || vk == RULES_TRACE_VALUE_OUTCOME) &&
                    !get_string(p, end, &r->value))
                        return false;
                if ((r->tag & T_DEVICE) && !get_string(p, end, &r->device))
                        return false;
        }
        return true;
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
        fprintf(f, "%s%s ", r->tag & T_RUN ? "" : "  ",
                exec_kind_name((r->tag >> T_XKIND_SHIFT) & 7u));
        put_quoted(f, r->value, r->tag & T_CUT);
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
                return driver(t);
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
        unsigned kind = r->tag & T_KIND_MASK;

        if (r->line >= rules->n_lines) {
                fprintf(f, "?:%" PRIu32 " unknown\n", r->line);
                return;
        }
        l = &rules->lines[r->line];
        fprintf(f, "%s:%u %s ", l->file, l->lineno,
                kind == T_APPLIED ? "applied" : kind == T_ABORTED ? "aborted" : "failed");
        put_time(f, r->nsec, rules_trace_line_times(t) ? flags : RULES_TRACE_FORMAT_NO_TIME);
        if (kind == T_APPLIED) {
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
        if (kind == T_ABORTED) {
                fputc('\n', f);
                return;
        }
        switch ((r->tag >> T_VKIND_SHIFT) & 7u) {
        case RULES_TRACE_VALUE_STRING:
                fputs(" got ", f);
                put_quoted(f, r->value, r->tag & T_CUT);
                break;
        case RULES_TRACE_VALUE_OUTCOME:
                fprintf(f, " got %s", r->value);
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
        if (r->device)
                fprintf(f, " at %s", r->device);
        fputc('\n', f);
}

int rules_trace_format(const struct rules_trace *t, const struct rules *rules, unsigned flags,
                       FILE *f)
{
        const unsigned char *p = t->data + t->ev_len, *end = t->data + t->used;
        const unsigned char *pending = NULL;
        uint32_t last_line = 0;
        struct rec r;

        fprintf(f, "event seqnum=%" PRIu64 " action=%s devpath=%s subsystem=%s", t->seqnum,
                ev_string(t, EV_ACTION), ev_string(t, EV_DEVPATH), ev_string(t, EV_SUBSYSTEM));
        if (t->generation)
                fprintf(f, " generation=%" PRIu64, t->generation);
        fputc('\n', f);
        for (;;) {
                const unsigned char *at;

                if (t->driver_at && p == t->data + t->driver_at)
                        p += strlen((const char *)p) + 1;
                at = p;
                if (!rec_next(t, &p, end, &last_line, &r))
                        break;
                if ((r.tag & T_KIND_MASK) == T_EXEC && !(r.tag & T_RUN)) {
                        /* a line's programs are recorded before the line
                         * itself: print them after it */
                        if (!pending)
                                pending = at;
                } else if ((r.tag & T_KIND_MASK) == T_EXEC) {
                        put_exec(f, &r, flags);
                } else {
                        put_line(f, t, rules, &r, flags);
                        for (const unsigned char *q = pending; q && q < at;) {
                                struct rec e;
                                uint32_t unused = 0;
                                if (!rec_next(t, &q, at, &unused, &e))
                                        break;
                                put_exec(f, &e, flags);
                        }
                        pending = NULL;
                }
        }
        fprintf(f, "summary lines=%u applied=%u time=", t->lines, t->applied);
        put_time(f, t->total_nsec, flags);
        fprintf(f, " result=%d\n", t->result);
        if (t->dropped)
                fprintf(f, "truncated dropped=%u\n", t->dropped);
        return ferror(f) ? -EIO : 0;
}
