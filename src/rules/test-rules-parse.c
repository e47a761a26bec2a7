/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: test (single-threaded) */
/* The lexical layer (rules-parse.c): physical and logical lines,
 * continuation, comments, line terminators, length limits, expression
 * splitting, quoting and e"..." escapes, positions of every message. The
 * expected behaviour was checked against systemd 252's udevadm. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules/rules-parse.h"
#include "rules/test-rules-util.h"
#include "shared/log.h"
#include "shared/tests.h"

/* ---------------------------------------------------------------- reader */

/* All logical lines of text as "N:content|..." and the messages. */
static char *read_lines(const char *text, size_t len, char **ret_msgs)
{
        struct rules_diag diag = { .file = "t.rules" };
        struct rules_reader r;
        struct capture cap;
        size_t cap_out = 4 * len + 64, o = 0;
        char *out = malloc(cap_out);
        int k;

        ASSERT_TRUE(out);
        out[0] = '\0';
        ASSERT_EQ(rules_reader_init(&r, &diag, text, len), 0);
        capture_begin(&cap);
        while ((k = rules_reader_next(&r)) > 0) {
                size_t need = r.buf_len + 32;

                if (o + need >= cap_out) {
                        cap_out = 2 * (o + need);
                        out = realloc(out, cap_out);
                        ASSERT_TRUE(out);
                }
                o += (size_t)snprintf(out + o, cap_out - o, "%u:%s|", r.line_number, r.buf);
        }
        *ret_msgs = capture_end(&cap);
        ASSERT_EQ(k, 0);
        rules_reader_done(&r);
        return out;
}

static void check_lines(const char *text, size_t len, const char *expect, const char *msgs)
{
        char *m, *got = read_lines(text, len, &m);

        if (strcmp(got, expect) != 0 || strcmp(m, msgs ? msgs : "") != 0) {
                fprintf(stderr, "\ninput: ");
                fwrite(text, 1, len, stderr);
                fprintf(stderr, "\ngot: %s\nexpected: %s\nmessages: %sexpected: %s\n", got,
                        expect, m, msgs ? msgs : "");
                abort();
        }
        free(got);
        free(m);
}

#define LINES(text, expect, msgs) check_lines(text, sizeof(text) - 1, expect, msgs)

static void test_reader_basic(void)
{
        LINES("", "", NULL);
        LINES("a", "1:a|", NULL);
        LINES("a\nb\n", "1:a|2:b|", NULL);
        LINES("  \t a  \n\n\n   \nb", "1:a  |5:b|", NULL);
        LINES("# comment\n  # indented comment\na # not a comment\n",
              "3:a # not a comment|", NULL);
}

static void test_reader_terminators(void)
{
        /* \r\n and \n\r are one terminator; a repeated kind starts a new line */
        LINES("a\r\nb\rc\n\rd\n\ne", "1:a|2:b|3:c|4:d|6:e|", NULL);
        LINES("a\r\r\nb", "1:a|3:b|", NULL);
        LINES("a\n\r\nb", "1:a|3:b|", NULL);
        /* NUL ends a line and a terminator sequence */
        LINES("a\0b\0\0c\n\0d", "1:a|2:b|4:c|5:d|", NULL);
        LINES("a\r\n\0b", "1:a|2:b|", NULL);
}

static void test_reader_continuation(void)
{
        LINES("a\\\nb", "2:ab|", NULL);
        LINES("a \\\n   b\\\n\tc\n", "3:a bc|", NULL);
        /* comments inside a continuation are dropped, it goes on */
        LINES("a,\\\n# x\n  # y\\\nb\n", "4:a,b|", NULL);
        /* an empty line ends it */
        LINES("a\\\n\nb\n", "2:a|3:b|", NULL);
        /* a line of just "\" */
        LINES("\\\na\n", "2:a|", NULL);
        LINES("\\\n\\\n\n", "", NULL);
        /* "x\\" + empty line: one backslash removed, then the joined text
         * still ends in '\', so it continues (systemd does the same) */
        LINES("x\\\\\n\nb\n", "3:xb|", NULL);
        /* CRLF continuation */
        LINES("a\\\r\nb\r\n", "2:ab|", NULL);
        /* end of text inside a continuation */
        LINES("a\nb\\\n", "1:a|",
              "E 2:1 Unexpected end of file after line continuation, line ignored.\n");
        LINES("b\\\n# c\n", "",
              "E 2:1 Unexpected end of file after line continuation, line ignored.\n");
}

static char *repeat(char c, size_t n, const char *prefix, const char *suffix)
{
        size_t pl = strlen(prefix), sl = strlen(suffix);
        char *s = malloc(pl + n + sl + 1);

        ASSERT_TRUE(s);
        memcpy(s, prefix, pl);
        memset(s + pl, c, n);
        memcpy(s + pl + n, suffix, sl + 1);
        return s;
}

static void test_reader_limits(void)
{
        char *m, *got, *t;

        /* a physical line of 16383 characters is fine, 16384 stops the file */
        t = repeat('x', RULES_PHYS_LINE_MAX, "a\n", "\nb\n");
        got = read_lines(t, strlen(t), &m);
        ASSERT_EQ(strlen(got), strlen("1:a|") + strlen("2:|") + RULES_PHYS_LINE_MAX +
                                       strlen("3:b|"));
        ASSERT_STREQ(m, "");
        free(got);
        free(m);
        free(t);

        t = repeat('x', RULES_LINE_MAX, "a\n", "\nb\n");
        got = read_lines(t, strlen(t), &m);
        ASSERT_STREQ(got, "1:a|");
        ASSERT_STREQ(m, "E 2:1 Line is too long (16384 characters or more), ignoring it and the "
                        "rest of the file.\n");
        free(got);
        free(m);
        free(t);

        /* also without a terminator at the end of the text */
        t = repeat('x', RULES_LINE_MAX, "a\n", "");
        got = read_lines(t, strlen(t), &m);
        ASSERT_STREQ(got, "1:a|");
        free(got);
        free(m);
        free(t);
        t = repeat('x', RULES_PHYS_LINE_MAX, "a\n", "");
        got = read_lines(t, strlen(t), &m);
        ASSERT_EQ(strlen(got), 4 + 3 + RULES_PHYS_LINE_MAX);
        free(got);
        free(m);
        free(t);

        /* joined lines: 16383 bytes are fine, 16384 drop the logical line */
        t = repeat('y', RULES_LINE_MAX - 1 - 2, "a\\\n", "\\\nz\nq\n");
        got = read_lines(t, strlen(t), &m);
        ASSERT_EQ(strlen(got), strlen("3:") + (RULES_LINE_MAX - 1) + strlen("|4:q|"));
        ASSERT_STREQ(m, "");
        free(got);
        free(m);
        free(t);
        t = repeat('y', RULES_LINE_MAX - 1 - 1, "a\\\n", "\\\nz\\\nw\nq\n");
        got = read_lines(t, strlen(t), &m);
        ASSERT_STREQ(got, "5:q|");
        ASSERT_STREQ(m, "E 4:1 Line is too long, ignored.\n");
        free(got);
        free(m);
        free(t);
}

static void test_reader_positions(void)
{
        static const char text[] = "  A=\"1\", \\\n\t\tB=\"2\",\\\n# c\n C=\"3\"\n";
        struct rules_diag diag = { .file = "t.rules" };
        struct rules_reader r;
        unsigned line, col;

        ASSERT_EQ(rules_reader_init(&r, &diag, text, sizeof(text) - 1), 0);
        ASSERT_EQ(rules_reader_next(&r), 1);
        ASSERT_STREQ(r.buf, "A=\"1\", B=\"2\",C=\"3\"");
        ASSERT_EQ(r.line_number, 4);
        rules_reader_pos(&r, 0, &line, &col);
        ASSERT_EQ(line, 1);
        ASSERT_EQ(col, 3);
        rules_reader_pos(&r, 7, &line, &col); /* B */
        ASSERT_EQ(line, 2);
        ASSERT_EQ(col, 3);
        rules_reader_pos(&r, 13, &line, &col); /* C */
        ASSERT_EQ(line, 4);
        ASSERT_EQ(col, 2);
        rules_reader_pos(&r, 18, &line, &col); /* closing quote */
        ASSERT_EQ(line, 4);
        ASSERT_EQ(col, 7);
        ASSERT_EQ(rules_reader_next(&r), 0);
        rules_reader_done(&r);
}

/* ---------------------------------------------------------------- cursor */

/* Expressions of one line as "KEY{ATTR}OP<e>VALUE<end>|", or "ERR@off:msg". */
static char *exprs(const char *line)
{
        struct rules_cursor c;
        struct rules_expr e;
        size_t o = 0, err_off = 0, cap = 4 * strlen(line) + 256;
        const char *msg = NULL;
        char *out = malloc(cap);
        int k;

        ASSERT_TRUE(out);
        out[0] = '\0';
        rules_cursor_init(&c);
        ASSERT_EQ(rules_cursor_reset(&c, line, strlen(line)), 0);
        while ((k = rules_cursor_next(&c, &e, &err_off, &msg)) > 0) {
                static const char *const ops[] = { "==", "!=", "+=", "-=", "=", ":=" };

                o += (size_t)snprintf(out + o, cap - o, "%s", e.key);
                if (e.attr)
                        o += (size_t)snprintf(out + o, cap - o, "{%s}", e.attr);
                o += (size_t)snprintf(out + o, cap - o, "%s%s<%s>|", ops[e.op],
                                      e.value_escaped ? "e" : "", e.value);
                ASSERT_TRUE(strncmp(line + e.key_off, e.key, strlen(e.key)) == 0);
                ASSERT_TRUE(e.op_off >= e.key_off && e.value_off >= e.op_off + 1);
                ASSERT_EQ(line[e.end_off - 1], '"');
        }
        if (k < 0)
                o += (size_t)snprintf(out + o, cap - o, "ERR@%zu:%s", err_off, msg);
        rules_cursor_done(&c);
        return out;
}

static const struct {
        const char *line;
        const char *expect;
} expr_cases[] = {
        { "", "" },
        { " , ,, ", "" },
        { "A==\"1\"", "A==<1>|" },
        { "A==\"1\",B!=\"2\", C=\"3\" ,D+=\"4\",, E-=\"5\" F:=\"6\"",
          "A==<1>|B!=<2>|C=<3>|D+=<4>|E-=<5>|F:=<6>|" },
        /* no separator needed after a value */
        { "A=\"1\"B=\"2\"", "A=<1>|B=<2>|" },
        /* blanks around the operator */
        { "A \t== \t\"1\"", "A==<1>|" },
        { "ENV{FOO}=\"1\"", "ENV{FOO}=<1>|" },
        { "ENV{}=\"1\"", "ENV{}=<1>|" },
        { "ATTR{[net/eth0]address} == \"x\"", "ATTR{[net/eth0]address}==<x>|" },
        { "A{x} =\"1\"", "A{x}=<1>|" },
        /* the key ends at + - ! : only when '=' follows */
        { "A+B=\"1\"", "A+B=<1>|" },
        { "A-=\"1\"", "A-=<1>|" },
        { "A:B:=\"1\"", "A:B:=<1>|" },
        /* '=' then '=' makes "==", "===" leaves '=' for the value */
        { "A===\"1\"", "ERR@3:the value must be quoted" },
        { "A=>\"1\"", "ERR@2:the value must be quoted" },
        { "A", "ERR@0:expected an operator after the key" },
        { "A B=\"1\"", "ERR@2:expected an operator (==, !=, =, +=, -=, :=)" },
        { "ENV {X}=\"1\"", "ERR@4:expected an operator (==, !=, =, +=, -=, :=)" },
        { "ENV{X=\"1\"", "ERR@3:missing '}' after the attribute" },
        { "A=1", "ERR@2:the value must be quoted" },
        { "A='1'", "ERR@2:the value must be quoted" },
        { "A=\"1", "ERR@2:missing closing quote" },
        { "A=\"1\", B=\"2", "A=<1>|ERR@9:missing closing quote" },
        { "=\"1\"", "=<1>|" },
        { "{x}==\"1\"", "{x}==<1>|" },
        /* plain quoting: only \" is an escape */
        { "A=\"a\\\"b\"", "A=<a\"b>|" },
        { "A=\"a\\tb\\\\c\"", "A=<a\\tb\\\\c>|" },
        { "A=\"a\\\\\"b\"", "A=<a\\\"b>|" },
        { "A=\"\\\"", "ERR@2:missing closing quote" },
        { "A=\"\"", "A=<>|" },
        /* e"..." */
        { "A=e\"\"", "A=e<>|" },
        { "A=e\"\\a\\b\\f\\n\\r\\t\\v\\\\\\\"\\'\\s\"", "A=e<\a\b\f\n\r\t\v\\\"' >|" },
        { "A=e\"\\x41\\x7a\\101\\u00e9\\U0001F600\"", "A=e<Az" "A" "\xc3\xa9" "\xf0\x9f\x98\x80>|" },
        { "A=e\"\\q\"", "ERR@4:invalid escape sequence" },
        { "A=e\"ab\\x0\"", "ERR@6:invalid escape sequence" },
        { "A=e\"\\x00\"", "ERR@4:invalid escape sequence" },
        { "A=e\"\\000\"", "ERR@4:invalid escape sequence" },
        { "A=e\"\\400\"", "ERR@4:invalid escape sequence" },
        { "A=e\"\\u0000\"", "ERR@4:invalid escape sequence" },
        { "A=e\"\\UFFFFFFFF\"", "ERR@4:invalid escape sequence" },
        { "A=e\"\\U0000D800\"", "ERR@4:invalid escape sequence" },
        { "A=e\"\\\"", "ERR@2:missing closing quote" },
        { "A=e\"abc\\\"", "ERR@2:missing closing quote" },
        { "A=e'x'", "ERR@2:the value must be quoted" },
        { "A=E\"x\"", "ERR@2:the value must be quoted" },
        { "A=e \"x\"", "ERR@2:the value must be quoted" },
};

static void test_cursor(void)
{
        for (size_t i = 0; i < ARRAY_SIZE(expr_cases); i++) {
                char *got = exprs(expr_cases[i].line);

                if (strcmp(got, expr_cases[i].expect) != 0) {
                        fprintf(stderr, "\ncase %zu: %s\ngot:      %s\nexpected: %s\n", i,
                                expr_cases[i].line, got, expr_cases[i].expect);
                        abort();
                }
                free(got);
        }
}

static void test_value_positions(void)
{
        struct rules_cursor c;
        struct rules_expr e;
        const char *msg;
        size_t off;
        const char *l1 = "A=\"a\\\"b$x\"";
        const char *l2 = "A=e\"\\x41\\u00e9$x\"";

        rules_cursor_init(&c);
        ASSERT_EQ(rules_cursor_reset(&c, l1, strlen(l1)), 0);
        ASSERT_EQ(rules_cursor_next(&c, &e, &off, &msg), 1);
        ASSERT_STREQ(e.value, "a\"b$x");
        ASSERT_EQ(rules_expr_value_src_off(l1, &e, 3), 7); /* '$' */
        ASSERT_EQ(rules_cursor_reset(&c, l2, strlen(l2)), 0);
        ASSERT_EQ(rules_cursor_next(&c, &e, &off, &msg), 1);
        ASSERT_EQ(rules_expr_value_src_off(l2, &e, 3), 14); /* '$' after A and e-acute */
        rules_cursor_done(&c);
}

int main(void)
{
        log_set_target(LOG_TARGET_CONSOLE, "test");
        log_set_max_level(LOG_INFO);

        TEST_RUN(test_reader_basic);
        TEST_RUN(test_reader_terminators);
        TEST_RUN(test_reader_continuation);
        TEST_RUN(test_reader_limits);
        TEST_RUN(test_reader_positions);
        TEST_RUN(test_cursor);
        TEST_RUN(test_value_positions);
        return 0;
}
