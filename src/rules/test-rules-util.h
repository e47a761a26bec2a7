/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: test (single-threaded) */
#pragma once
/* Helpers shared by test-rules-parse.c and test-rules-compile.c (header-only:
 * each test binary has its own main()).
 *
 *  - capture_begin/capture_end: collect what the compiler logs (stderr) as
 *    "LEVEL L:C message" lines, with the file name and timestamps removed;
 *  - dump_rules(): the compiled snapshot as compact text, one line per rule:
 *        <lineno> <mask letters>: TOKEN TOKEN ...
 *    mask letters N name, D devlink, S static_node, G goto, L label,
 *    U update, O owner/group/mode; a token is TYPE{attr}OP[kind]"value"
 *    with kind e(mpty) p(lain) g(lob) s(ubsystem) for matches, [a|b]
 *    alternatives, #data, $ after a value needing substitution. */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "builtins/builtin.h"
#include "rules/rules-internal.h"
#include "shared/log.h"
#include "shared/tests.h"

#define DUMP_MAX (256 * 1024)

struct capture {
        int saved_fd;
        int fd;
};

static inline void capture_begin(struct capture *c)
{
        fflush(stderr);
        c->fd = memfd_create("test-log", MFD_CLOEXEC);
        ASSERT_TRUE(c->fd >= 0);
        c->saved_fd = dup(STDERR_FILENO);
        ASSERT_TRUE(c->saved_fd >= 0);
        ASSERT_TRUE(dup2(c->fd, STDERR_FILENO) == STDERR_FILENO);
}

/* Returns the normalised messages (malloc'ed): "E 3:7 text\n" per message,
 * E/W/N/I/D for err/warning/notice/info/debug. */
static inline char *capture_end(struct capture *c)
{
        size_t cap = 1 << 16, n = 0;
        char *raw = malloc(cap), *out;
        ssize_t k;

        ASSERT_TRUE(dup2(c->saved_fd, STDERR_FILENO) == STDERR_FILENO);
        close(c->saved_fd);
        ASSERT_TRUE(raw);
        ASSERT_TRUE(lseek(c->fd, 0, SEEK_SET) == 0);
        while ((k = read(c->fd, raw + n, cap - 1 - n)) > 0) {
                n += (size_t)k;
                if (n == cap - 1) {
                        cap *= 2;
                        raw = realloc(raw, cap);
                        ASSERT_TRUE(raw);
                }
        }
        raw[n] = '\0';
        close(c->fd);

        out = malloc(n + 1);
        ASSERT_TRUE(out);
        out[0] = '\0';
        size_t o = 0;
        for (char *line = raw, *nl; *line; line = nl + 1) {
                nl = strchr(line, '\n');
                if (!nl)
                        nl = line + strlen(line) - 1;
                else
                        *nl = '\0';
                /* "[    1.000000] warning: file:3:7: text" */
                char *p = strstr(line, "] ");
                p = p ? p + 2 : line;
                char lvl = 'I';
                static const struct {
                        const char *name;
                        char c;
                } levels[] = { { "err: ", 'E' }, { "warning: ", 'W' }, { "notice: ", 'N' },
                               { "info: ", 'I' }, { "debug: ", 'D' } };
                for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++)
                        if (strncmp(p, levels[i].name, strlen(levels[i].name)) == 0) {
                                lvl = levels[i].c;
                                p += strlen(levels[i].name);
                                break;
                        }
                /* drop "file:" */
                char *colon = strchr(p, ':');
                if (colon && colon[1] >= '0' && colon[1] <= '9')
                        p = colon + 1;
                /* "3:7: text" -> "3:7 text" */
                char *sep = strstr(p, ": ");
                if (sep) {
                        o += (size_t)sprintf(out + o, "%c %.*s %s\n", lvl, (int)(sep - p), p,
                                             sep + 2);
                } else
                        o += (size_t)sprintf(out + o, "%c %s\n", lvl, p);
                if (*nl == '\0' && nl[1] == '\0')
                        break;
        }
        free(raw);
        return out;
}

/* Load `text` as file "t.rules" with its log captured; *ret_msgs gets the messages. */
static inline struct rules *load_text(const char *text, size_t len,
                                      const struct rules_load_options *opts, char **ret_msgs)
{
        struct capture cap;
        struct rules *r = NULL;

        capture_begin(&cap);
        int k = rules_load_string("t.rules", text, len, opts, &r);
        char *msgs = capture_end(&cap);
        ASSERT_EQ(k, 0);
        ASSERT_TRUE(r != NULL);
        if (ret_msgs)
                *ret_msgs = msgs;
        else
                free(msgs);
        return r;
}

static inline const char *test_op_str(enum token_op op)
{
        static const char *const s[] = { "==", "!=", "+=", "-=", "=", ":=" };
        return s[op];
}

static inline void dump_printf(char *buf, size_t *o, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
static inline void dump_printf(char *buf, size_t *o, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        int k = vsnprintf(buf + *o, DUMP_MAX - *o, fmt, ap);
        va_end(ap);
        ASSERT_TRUE(k >= 0 && (size_t)k < DUMP_MAX - *o);
        *o += (size_t)k;
}

static inline void dump_token(char *buf, size_t *o, const struct token *t)
{
        const char *name = token_type_to_string(t->type);
        const char *brace = strchr(name, '{');

        /* IMPORT{file} etc.: the kind is part of the name; OPTIONS: "OPTIONS" */
        if (strncmp(name, "OPTIONS", 7) == 0)
                dump_printf(buf, o, "OPTIONS");
        else if (brace)
                dump_printf(buf, o, "%s", name);
        else
                dump_printf(buf, o, "%s", name);
        if (t->attr.raw && !brace)
                dump_printf(buf, o, "{%s}%s", t->attr.raw, t->attr.needs_subst ? "$" : "");
        if (t->attr.subsystem)
                dump_printf(buf, o, "@%s/%s/%s", t->attr.subsystem, t->attr.sysname,
                            t->attr.name);
        dump_printf(buf, o, "%s", test_op_str(t->op));
        if (TK_IS_MATCH(t->type))
                dump_printf(buf, o, "%c", "epgs"[t->pattern.kind]);
        dump_printf(buf, o, "\"%s\"%s", t->value ? t->value : "(null)",
                    t->value_needs_subst ? "$" : "");
        if (t->pattern.n_alts > 0) {
                dump_printf(buf, o, "[");
                for (unsigned i = 0; i < t->pattern.n_alts; i++)
                        dump_printf(buf, o, "%s%s", i ? "|" : "", t->pattern.alts[i]);
                dump_printf(buf, o, "]");
        }
        switch (t->type) {
        case TK_A_OWNER_ID: case TK_A_GROUP_ID:
                dump_printf(buf, o, "#%d", t->data.id);
                break;
        case TK_A_MODE_ID:
                dump_printf(buf, o, "#%04o", (unsigned)t->data.mode);
                break;
        case TK_M_TEST:
                if (t->data.test_mode)
                        dump_printf(buf, o, "#%04o", (unsigned)t->data.test_mode);
                break;
        case TK_M_IMPORT_BUILTIN: case TK_A_RUN_BUILTIN:
                dump_printf(buf, o, "#%s", builtin_name((enum builtin_id)t->data.builtin));
                break;
        case TK_A_OPTIONS_DEVLINK_PRIORITY: case TK_A_OPTIONS_LOG_LEVEL:
                dump_printf(buf, o, "#%ld", t->data.number);
                break;
        case TK_A_OPTIONS_INOTIFY_WATCH:
                dump_printf(buf, o, "#%d", t->data.boolean);
                break;
        case TK_M_CONST:
                dump_printf(buf, o, "#%s", t->data.constant == CONST_ARCH ? "arch" : "virt");
                break;
        default:
                break;
        }
}

/* The compiled lines as text (malloc'ed). */
static inline char *dump_rules(const struct rules *r)
{
        char *buf = malloc(DUMP_MAX);
        size_t o = 0;

        ASSERT_TRUE(buf);
        buf[0] = '\0';
        for (size_t i = 0; i < r->n_lines; i++) {
                const struct rule_line *l = &r->lines[i];
                static const char letters[] = "NDSGLUO";

                dump_printf(buf, &o, "%s%u ", i ? "\n" : "", l->lineno);
                for (unsigned b = 0; b < 7; b++)
                        if (l->mask & (1u << b))
                                dump_printf(buf, &o, "%c", letters[b]);
                dump_printf(buf, &o, ":");
                if (l->label)
                        dump_printf(buf, &o, " LABEL=%s", l->label);
                if (l->goto_label)
                        dump_printf(buf, &o, " GOTO=%s>%d", l->goto_label, l->goto_line);
                for (unsigned k = 0; k < l->n_tokens; k++) {
                        dump_printf(buf, &o, " ");
                        dump_token(buf, &o, &l->tokens[k]);
                }
        }
        return buf;
}

/* RULES_TEST_KEEP_GOING=1: report every mismatch, fail at the end. */
static unsigned check_failures;

static inline void check_failed(void)
{
        check_failures++;
        if (!getenv("RULES_TEST_KEEP_GOING"))
                abort();
}

/* Compile text, compare dump and messages (NULL msgs = expect none). */
static inline void check_compile(const char *text, const struct rules_load_options *opts,
                                 const char *dump, const char *msgs, const char *where)
{
        char *got_msgs;
        struct rules *r = load_text(text, strlen(text), opts, &got_msgs);
        char *got = dump_rules(r);

        if (dump && strcmp(got, dump) != 0) {
                fprintf(stderr, "\n%s: input:\n%s\ndump:\n%s\nexpected:\n%s\n", where, text, got,
                        dump);
                check_failed();
        }
        if (strcmp(got_msgs, msgs ? msgs : "") != 0) {
                fprintf(stderr, "\n%s: input:\n%s\nmessages:\n%sexpected:\n%s\n", where, text,
                        got_msgs, msgs ? msgs : "");
                check_failed();
        }
        free(got);
        free(got_msgs);
        rules_unref(r);
}
