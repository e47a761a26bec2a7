/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (all state is in the caller's reader/cursor objects) */
#pragma once
/* Lexical layer of the rules compiler: physical lines ->
 * logical lines (continuations, comments, length limits) -> expressions
 * KEY[{ATTR}] OP VALUE with unquoted values. Positions are kept so that every
 * message can say file:line:column. Private to src/rules/rules-*.c. */

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "rules/rules-internal.h"
#include "shared/macro.h"

/* UDEV_LINE_SIZE: a logical line must stay below this many bytes. */
#define RULES_LINE_MAX 16384
/* systemd's line reader fails on a physical line of RULES_LINE_MAX or more
 * characters (terminator not counted); v252 then drops the rest of the file. */
#define RULES_PHYS_LINE_MAX (RULES_LINE_MAX - 1)

/* Diagnostics of one load: the current file and counters. Every message is
 * logged as "file:line:column: message" (line/column omitted when 0). */
struct rules_diag {
        const char *file;   /* borrowed */
        unsigned errors;    /* LOG_ERR and worse */
        unsigned warnings;  /* LOG_WARNING and LOG_NOTICE */
        unsigned notices;   /* LOG_NOTICE (style, verify only); also in warnings */
};

/* Log and count one problem. */
void rules_diag_log(struct rules_diag *d, int level, unsigned line, unsigned column,
                    const char *fmt, ...) _printf_(5, 6);

/* Where a byte of the logical line came from. */
struct rules_segment {
        size_t off;     /* first byte in the logical line */
        unsigned line;  /* physical line number (1-based) */
        unsigned col;   /* 1-based column of that byte in the physical line */
};

/* Splits a text into logical lines. Owns a buffer of at most 2 * RULES_LINE_MAX. */
struct rules_reader {
        const char *text;       /* borrowed */
        size_t len, pos;
        unsigned lineno;        /* physical lines consumed so far */
        bool done;
        struct rules_diag *diag; /* borrowed */

        char *buf;              /* the current logical line, NUL-terminated */
        size_t buf_len;
        unsigned line_number;   /* systemd's number of it: its last physical line */
        struct rules_segment *segs;
        size_t n_segs, cap_segs;
};

int rules_reader_init(struct rules_reader *r, struct rules_diag *diag, const char *text,
                      size_t len);
void rules_reader_done(struct rules_reader *r);
/* 1: next logical line in r->buf; 0: end of text (problems were logged);
 * -ENOMEM. */
int rules_reader_next(struct rules_reader *r);
/* Physical line and column of byte `off` of the current logical line. */
void rules_reader_pos(const struct rules_reader *r, size_t off, unsigned *ret_line,
                      unsigned *ret_col);

/* One expression. Strings point into the cursor's scratch buffer and stay
 * valid until the cursor is reset for the next line. */
struct rules_expr {
        const char *key;
        const char *attr;       /* NULL without "{...}"; "" for "{}" */
        enum token_op op;
        const char *value;      /* unquoted (and unescaped for e"...") */
        bool value_escaped;     /* written as e"..." */
        size_t key_off;         /* offsets in the logical line */
        size_t attr_off;        /* first byte after '{' */
        size_t op_off;
        size_t value_off;       /* the opening quote */
        size_t end_off;         /* first byte after the closing quote */
};

struct rules_cursor {
        const char *line;       /* borrowed logical line */
        size_t len, pos;
        char *scratch;          /* owned, cap >= len + 8 */
        size_t scratch_len, scratch_cap;
};

void rules_cursor_init(struct rules_cursor *c);
void rules_cursor_done(struct rules_cursor *c);
/* Start on a new logical line. 0 or -ENOMEM. */
int rules_cursor_reset(struct rules_cursor *c, const char *line, size_t len);
/* 1: *e filled; 0: end of line; -EINVAL: syntax error, *err_off is the byte
 * at fault and *err_msg a static description. */
int rules_cursor_next(struct rules_cursor *c, struct rules_expr *e, size_t *err_off,
                      const char **err_msg);

/* Offset in the logical line of byte `decoded_off` of a parsed value. */
size_t rules_expr_value_src_off(const char *line, const struct rules_expr *e,
                                size_t decoded_off);

static inline bool rules_is_ws(char c)
{
        return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}
