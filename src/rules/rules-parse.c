/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (state lives in the caller's reader and cursor) */
/* Rules text -> logical lines -> expressions, with the
 * line-reader behaviour of systemd 252:
 *
 *  - a physical line ends at \n, \r, \r\n, \n\r or NUL; a NUL also ends a
 *    terminator sequence, and a terminator character seen twice starts a new
 *    (empty) line;
 *  - a physical line of RULES_LINE_MAX characters or more stops the file: the
 *    lines before it are kept, the rest is dropped;
 *  - leading blanks are skipped, '#' lines are comments even inside a
 *    continuation, a trailing '\' joins the next line without a separator;
 *  - a joined line reaching RULES_LINE_MAX bytes is dropped ("too long"). */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules/rules-parse.h"
#include "shared/log.h"

void rules_diag_log(struct rules_diag *d, int level, unsigned line, unsigned column,
                    const char *fmt, ...)
{
        char msg[LOG_LINE_MAX];
        va_list ap;

        if (level <= LOG_ERR)
                d->errors++;
        else if (level <= LOG_NOTICE)
                d->warnings++;
        if (level == LOG_NOTICE)
                d->notices++;

        if (level > log_get_max_level())
                return;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);

        const char *file = d->file ? d->file : "(string)";
        if (line == 0)
                log_full(level, "%s: %s", file, msg);
        else if (column == 0)
                log_full(level, "%s:%u: %s", file, line, msg);
        else
                log_full(level, "%s:%u:%u: %s", file, line, column, msg);
}

/* ---------------------------------------------------------------- reader */

enum { EOL_NONE = 0, EOL_LF = 1, EOL_CR = 2, EOL_NUL = 4 };

static int eol_kind(char c)
{
        return c == '\n' ? EOL_LF : c == '\r' ? EOL_CR : c == '\0' ? EOL_NUL : EOL_NONE;
}

int rules_reader_init(struct rules_reader *r, struct rules_diag *diag, const char *text,
                      size_t len)
{
        *r = (struct rules_reader){ .text = text, .len = len, .diag = diag };
        /* a logical line is never longer than the text */
        r->buf = malloc(MIN(len, (size_t)2 * RULES_LINE_MAX) + 1);
        if (!r->buf)
                return -ENOMEM;
        r->buf[0] = '\0';
        return 0;
}

void rules_reader_done(struct rules_reader *r)
{
        free(r->buf);
        free(r->segs);
        r->buf = NULL;
        r->segs = NULL;
}

/* One physical line: 1 with *ret and *ret_len (not NUL-terminated), 0 at the end
 * of the text, -ENOBUFS if it has RULES_LINE_MAX characters or more. */
static int read_physical(struct rules_reader *r, const char **ret, size_t *ret_len)
{
        size_t start = r->pos, n = 0;
        int prev = EOL_NONE;

        if (r->pos >= r->len)
                return 0;
        for (;;) {
                if (n >= RULES_LINE_MAX)
                        return -ENOBUFS;
                if (r->pos >= r->len)
                        break;
                int eol = eol_kind(r->text[r->pos]);
                if ((prev & EOL_NUL) || (eol == EOL_NONE && prev != EOL_NONE) ||
                    (eol != EOL_NONE && (prev & eol)))
                        break;
                r->pos++;
                if (eol != EOL_NONE) {
                        prev |= eol;
                        continue;
                }
                n++;
        }
        *ret = r->text + start;
        *ret_len = n;
        return 1;
}

static int add_segment(struct rules_reader *r, size_t off, unsigned line, unsigned col)
{
        if (r->n_segs > 0 && r->segs[r->n_segs - 1].off == off)
                r->n_segs--; /* the previous piece contributed no byte */
        if (r->n_segs == r->cap_segs) {
                size_t cap = r->cap_segs ? 2 * r->cap_segs : 16;
                struct rules_segment *s = realloc(r->segs, cap * sizeof(*s));

                if (!s)
                        return -ENOMEM;
                r->segs = s;
                r->cap_segs = cap;
        }
        r->segs[r->n_segs++] = (struct rules_segment){ .off = off, .line = line, .col = col };
        return 0;
}

/* Append bytes of physical line r->lineno that start at column `col`. */
static int buf_append(struct rules_reader *r, const char *p, size_t n, unsigned col)
{
        int k = add_segment(r, r->buf_len, r->lineno, col);

        if (k < 0)
                return k;
        memcpy(r->buf + r->buf_len, p, n);
        r->buf_len += n;
        r->buf[r->buf_len] = '\0';
        return 0;
}

static void buf_clear(struct rules_reader *r)
{
        r->buf_len = 0;
        r->buf[0] = '\0';
        r->n_segs = 0;
}

int rules_reader_next(struct rules_reader *r)
{
        bool continuation = false, ignore = false;
        int k;

        if (r->done)
                return 0;
        buf_clear(r);
        for (;;) {
                const char *p;
                size_t n;

                k = read_physical(r, &p, &n);
                if (k == -ENOBUFS) {
                        rules_diag_log(r->diag, LOG_ERR, r->lineno + 1, 1,
                                       "Line is too long (%u characters or more), ignoring "
                                       "it and the rest of the file.", RULES_LINE_MAX);
                        r->done = true;
                        return 0;
                }
                if (k == 0) {
                        if (continuation && !ignore)
                                rules_diag_log(r->diag, LOG_ERR, r->lineno, 1,
                                               "Unexpected end of file after line "
                                               "continuation, line ignored.");
                        r->done = true;
                        return 0;
                }
                r->lineno++;

                size_t ws = 0;
                while (ws < n && rules_is_ws(p[ws]))
                        ws++;
                p += ws;
                n -= ws;
                if (n > 0 && p[0] == '#')
                        continue;

                bool joined = false;
                if (continuation && !ignore) {
                        if (r->buf_len + n >= RULES_LINE_MAX)
                                ignore = true;
                        k = buf_append(r, p, n, (unsigned)ws + 1);
                        if (k < 0)
                                return k;
                        joined = !ignore;
                }

                size_t len = joined ? r->buf_len : n;
                const char *last = joined ? r->buf : p;
                if (len > 0 && last[len - 1] == '\\') {
                        if (ignore)
                                continue;
                        if (joined) {
                                r->buf[--r->buf_len] = '\0';
                        } else {
                                k = buf_append(r, p, n - 1, (unsigned)ws + 1);
                                if (k < 0)
                                        return k;
                        }
                        continuation = true;
                        continue;
                }

                if (ignore) {
                        rules_diag_log(r->diag, LOG_ERR, r->lineno, 1,
                                       "Line is too long, ignored.");
                        buf_clear(r);
                        continuation = ignore = false;
                        continue;
                }
                if (!joined) {
                        k = buf_append(r, p, n, (unsigned)ws + 1);
                        if (k < 0)
                                return k;
                }
                if (r->buf_len == 0) {
                        buf_clear(r);
                        continuation = false;
                        continue;
                }
                r->line_number = r->lineno;
                return 1;
        }
}

void rules_reader_pos(const struct rules_reader *r, size_t off, unsigned *ret_line,
                      unsigned *ret_col)
{
        size_t lo = 0, hi = r->n_segs;

        if (r->n_segs == 0) {
                *ret_line = r->line_number;
                *ret_col = 1;
                return;
        }
        /* last segment with seg.off <= off */
        while (hi - lo > 1) {
                size_t mid = lo + (hi - lo) / 2;

                if (r->segs[mid].off <= off)
                        lo = mid;
                else
                        hi = mid;
        }
        *ret_line = r->segs[lo].line;
        size_t col = r->segs[lo].col + (off - r->segs[lo].off);
        *ret_col = col > UINT32_MAX ? UINT32_MAX : (unsigned)col;
}

/* ---------------------------------------------------------------- escapes */

static int unhex(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

static bool unichar_valid(uint32_t c)
{
        return c < 0x110000 && (c & 0xFFFFF800u) != 0xD800 && !(c >= 0xFDD0 && c <= 0xFDEF) &&
               (c & 0xFFFE) != 0xFFFE;
}

static size_t utf8_encode(char out[4], uint32_t c)
{
        if (c < 0x80) {
                out[0] = (char)c;
                return 1;
        }
        if (c < 0x800) {
                out[0] = (char)(0xC0 | (c >> 6));
                out[1] = (char)(0x80 | (c & 0x3F));
                return 2;
        }
        if (c < 0x10000) {
                out[0] = (char)(0xE0 | (c >> 12));
                out[1] = (char)(0x80 | ((c >> 6) & 0x3F));
                out[2] = (char)(0x80 | (c & 0x3F));
                return 3;
        }
        out[0] = (char)(0xF0 | (c >> 18));
        out[1] = (char)(0x80 | ((c >> 12) & 0x3F));
        out[2] = (char)(0x80 | ((c >> 6) & 0x3F));
        out[3] = (char)(0x80 | (c & 0x3F));
        return 4;
}

static int hex_digits(const char *p, size_t n, uint32_t *ret)
{
        uint32_t v = 0;

        for (size_t i = 0; i < n; i++) {
                int d = unhex(p[i]);

                if (d < 0)
                        return -EINVAL;
                v = (v << 4) | (uint32_t)d;
        }
        *ret = v;
        return 0;
}

/* C escape after a backslash at p[0] (n bytes available, n >= 1): writes 1-4
 * bytes to out and sets *consumed (the characters after the backslash).
 * Returns the number of bytes or -EINVAL (unknown escape, NUL, bad code point). */
static int unescape_one(const char *p, size_t n, char out[4], size_t *consumed)
{
        static const char simple_in[] = "abfnrtv\\\"'s";
        static const char simple_out[] = "\a\b\f\n\r\t\v\\\"' ";
        const char *s = strchr(simple_in, p[0]);
        uint32_t c;

        if (p[0] != '\0' && s) {
                out[0] = simple_out[s - simple_in];
                *consumed = 1;
                return 1;
        }
        switch (p[0]) {
        case 'x':
                if (n < 3 || hex_digits(p + 1, 2, &c) < 0 || c == 0)
                        return -EINVAL;
                out[0] = (char)c;
                *consumed = 3;
                return 1;
        case 'u':
                if (n < 5 || hex_digits(p + 1, 4, &c) < 0 || c == 0)
                        return -EINVAL;
                *consumed = 5;
                return (int)utf8_encode(out, c);
        case 'U':
                if (n < 9 || hex_digits(p + 1, 8, &c) < 0 || c == 0 || !unichar_valid(c))
                        return -EINVAL;
                *consumed = 9;
                return (int)utf8_encode(out, c);
        case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7':
                if (n < 3)
                        return -EINVAL;
                c = 0;
                for (int i = 0; i < 3; i++) {
                        if (p[i] < '0' || p[i] > '7')
                                return -EINVAL;
                        c = (c << 3) | (uint32_t)(p[i] - '0');
                }
                if (c == 0 || c > 255)
                        return -EINVAL;
                out[0] = (char)c;
                *consumed = 3;
                return 1;
        default:
                return -EINVAL;
        }
}

/* ---------------------------------------------------------------- cursor */

void rules_cursor_init(struct rules_cursor *c)
{
        *c = (struct rules_cursor){ 0 };
}

void rules_cursor_done(struct rules_cursor *c)
{
        free(c->scratch);
        c->scratch = NULL;
}

int rules_cursor_reset(struct rules_cursor *c, const char *line, size_t len)
{
        size_t need = len + 8;

        if (need > c->scratch_cap) {
                char *s = realloc(c->scratch, need);

                if (!s)
                        return -ENOMEM;
                c->scratch = s;
                c->scratch_cap = need;
        }
        c->line = line;
        c->len = len;
        c->pos = 0;
        c->scratch_len = 0;
        return 0;
}

/* Copy n bytes into the scratch buffer as a string. The caller's accounting
 * (rules_cursor_reset) guarantees room: every byte written is paid for by at
 * least one byte of input consumed. */
static char *scratch_put(struct rules_cursor *c, const char *p, size_t n)
{
        char *s = c->scratch + c->scratch_len;

        memcpy(s, p, n);
        s[n] = '\0';
        c->scratch_len += n + 1;
        return s;
}

static size_t skip_ws(const char *l, size_t i)
{
        while (rules_is_ws(l[i]))
                i++;
        return i;
}

static int parse_op(const char *p, enum token_op *ret, size_t *ret_len)
{
        static const struct {
                const char *s;
                enum token_op op;
        } ops[] = {
                { "==", OP_MATCH }, { "!=", OP_NOMATCH }, { "+=", OP_ADD },
                { "-=", OP_REMOVE }, { "=", OP_ASSIGN }, { ":=", OP_ASSIGN_FINAL },
        };

        for (size_t i = 0; i < ARRAY_SIZE(ops); i++)
                if (strncmp(p, ops[i].s, strlen(ops[i].s)) == 0) {
                        *ret = ops[i].op;
                        *ret_len = strlen(ops[i].s);
                        return 0;
                }
        return -EINVAL;
}

/* "..." : only \" is an escape. */
static int parse_plain_value(struct rules_cursor *c, size_t q, struct rules_expr *e,
                             size_t *err_off, const char **err_msg)
{
        const char *l = c->line;
        char *out = c->scratch + c->scratch_len;
        size_t i, n = 0;

        for (i = q + 1; l[i] != '"'; i++) {
                if (l[i] == '\0') {
                        *err_off = q;
                        *err_msg = "missing closing quote";
                        return -EINVAL;
                }
                if (l[i] == '\\' && l[i + 1] == '"')
                        i++;
                out[n++] = l[i];
        }
        out[n] = '\0';
        c->scratch_len += n + 1;
        e->value = out;
        e->end_off = i + 1;
        return 0;
}

/* e"..." : any backslash protects the next character while looking for the
 * end; then C escapes are decoded, and an invalid one fails the value. */
static int parse_escaped_value(struct rules_cursor *c, size_t q, struct rules_expr *e,
                               size_t *err_off, const char **err_msg)
{
        const char *l = c->line;
        char *out = c->scratch + c->scratch_len;
        size_t i, n = 0;

        for (i = q + 1; l[i] != '"'; i++) {
                if (l[i] == '\\')
                        i++;
                if (l[i] == '\0') {
                        *err_off = e->value_off;
                        *err_msg = "missing closing quote";
                        return -EINVAL;
                }
        }
        size_t end = i;
        for (i = q + 1; i < end;) {
                if (l[i] != '\\') {
                        out[n++] = l[i++];
                        continue;
                }
                size_t consumed;
                int k = end - i > 1 ? unescape_one(l + i + 1, end - i - 1, out + n, &consumed)
                                    : -EINVAL;
                if (k < 0) {
                        *err_off = i;
                        *err_msg = "invalid escape sequence";
                        return -EINVAL;
                }
                n += (size_t)k;
                i += 1 + consumed;
        }
        out[n] = '\0';
        c->scratch_len += n + 1;
        e->value = out;
        e->end_off = end + 1;
        return 0;
}

int rules_cursor_next(struct rules_cursor *c, struct rules_expr *e, size_t *err_off,
                      const char **err_msg)
{
        const char *l = c->line;
        size_t i = c->pos, key_end, k;
        int r;

        while (rules_is_ws(l[i]) || l[i] == ',')
                i++;
        if (l[i] == '\0') {
                c->pos = i;
                return 0;
        }

        *e = (struct rules_expr){ .key_off = i };
        for (key_end = i;; key_end++) {
                char ch = l[key_end];

                if (ch == '\0') {
                        *err_off = i;
                        *err_msg = "expected an operator after the key";
                        return -EINVAL;
                }
                if (rules_is_ws(ch) || ch == '=' || ch == '{')
                        break;
                if (strchr("+-!:", ch) && l[key_end + 1] == '=')
                        break;
        }
        k = key_end;
        if (l[key_end] == '{') {
                const char *close = strchr(l + key_end + 1, '}');

                if (!close) {
                        *err_off = key_end;
                        *err_msg = "missing '}' after the attribute";
                        return -EINVAL;
                }
                e->attr_off = key_end + 1;
                k = (size_t)(close - l) + 1;
        }
        k = skip_ws(l, k);
        size_t op_len;
        if (parse_op(l + k, &e->op, &op_len) < 0) {
                *err_off = k;
                *err_msg = "expected an operator (==, !=, =, +=, -=, :=)";
                return -EINVAL;
        }
        e->op_off = k;
        k = skip_ws(l, k + op_len);
        e->value_off = k;
        e->value_escaped = l[k] == 'e';
        size_t q = k + e->value_escaped;
        if (l[q] != '"') {
                *err_off = k;
                *err_msg = "the value must be quoted";
                return -EINVAL;
        }

        /* Strings go into the scratch buffer: key, attribute, then value. */
        e->key = scratch_put(c, l + i, key_end - i);
        if (e->attr_off)
                e->attr = scratch_put(c, l + e->attr_off,
                                      (size_t)(strchr(l + e->attr_off, '}') - (l + e->attr_off)));
        r = e->value_escaped ? parse_escaped_value(c, q, e, err_off, err_msg)
                             : parse_plain_value(c, q, e, err_off, err_msg);
        if (r < 0)
                return r;
        c->pos = e->end_off;
        return 1;
}

size_t rules_expr_value_src_off(const char *line, const struct rules_expr *e,
                                size_t decoded_off)
{
        size_t i = e->value_off + e->value_escaped + 1, n = 0;

        while (n < decoded_off && i < e->end_off - 1) {
                if (line[i] != '\\') {
                        i++;
                        n++;
                        continue;
                }
                if (!e->value_escaped) {
                        i += line[i + 1] == '"' ? 2 : 1;
                        n++;
                        continue;
                }
                char out[4];
                size_t consumed;
                int k = unescape_one(line + i + 1, e->end_off - 1 - i - 1, out, &consumed);
                if (k < 0 || n + (size_t)k > decoded_off)
                        break;
                n += (size_t)k;
                i += 1 + consumed;
        }
        return i;
}
