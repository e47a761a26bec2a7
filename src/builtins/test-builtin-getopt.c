/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: main only (uses glibc's non-reentrant getopt_long as the reference) */
/* builtin_getopt_long() against glibc's getopt_long over random command lines:
 * same options in the same order, same arguments, same permuted argv, same
 * optind. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtins/builtins-internal.h"
#include "shared/macro.h"
#include "shared/tests.h"

#define MAX_WORDS 8

static const char *const words[] = {
        "-f", "-fGLOB", "-d", "-s", "-p", "-x", "-fd", "-df", "--filter", "--filter=a*",
        "--sub=input", "--subsystem", "--lookup-prefix=evdev:", "--device=c13:64",
        "--dev", "--d", "--bogus", "--", "-", "usb:v1234", "pos2", "--hint=x",
        "--noraid", "--no", "-R", "-o", "512", "-Hsession_offset=1",
};

static const char *const shortopts = "f:d:s:p:o:H:R";
static const struct option glibc_longopts[] = {
        { "filter", required_argument, NULL, 'f' },
        { "device", required_argument, NULL, 'd' },
        { "subsystem", required_argument, NULL, 's' },
        { "lookup-prefix", required_argument, NULL, 'p' },
        { "offset", required_argument, NULL, 'o' },
        { "hint", required_argument, NULL, 'H' },
        { "noraid", no_argument, NULL, 'R' },
        { "no-such", no_argument, NULL, 'R' },
        {}
};
static const struct builtin_option longopts[] = {
        { "filter", true, 'f' },   { "device", true, 'd' }, { "subsystem", true, 's' },
        { "lookup-prefix", true, 'p' }, { "offset", true, 'o' }, { "hint", true, 'H' },
        { "noraid", false, 'R' },  { "no-such", false, 'R' }, {}
};

struct trace {
        char buf[4096];
        size_t len;
};

static void trace_add(struct trace *t, int c, const char *arg)
{
        int n = snprintf(t->buf + t->len, sizeof(t->buf) - t->len, "%d:%s ", c,
                         arg ? arg : "-");

        ASSERT_TRUE(n > 0 && (size_t)n < sizeof(t->buf) - t->len);
        t->len += (size_t)n;
}

static void trace_argv(struct trace *t, int argc, char *argv[], int ind)
{
        trace_add(t, ind, "optind");
        for (int i = 0; i < argc; i++)
                trace_add(t, 0, argv[i]);
}

static void run_one(int argc, const char *const in[])
{
        char *a1[MAX_WORDS + 2], *a2[MAX_WORDS + 2];
        struct trace t1 = {}, t2 = {};
        struct builtin_getopt st = {};
        int c;

        for (int i = 0; i < argc; i++)
                a1[i] = a2[i] = (char *)in[i];
        a1[argc] = a2[argc] = NULL;

        optind = 0;
        opterr = 0;
        while ((c = getopt_long(argc, a1, shortopts, glibc_longopts, NULL)) >= 0)
                trace_add(&t1, c, optarg);
        trace_argv(&t1, argc, a1, optind);

        while ((c = builtin_getopt_long(&st, argc, a2, shortopts, longopts)) >= 0)
                trace_add(&t2, c, st.optarg);
        trace_argv(&t2, argc, a2, st.optind);

        if (strcmp(t1.buf, t2.buf) != 0) {
                fprintf(stderr, "\nargv:");
                for (int i = 0; i < argc; i++)
                        fprintf(stderr, " '%s'", in[i]);
                fprintf(stderr, "\nglibc: %s\nours:  %s\n", t1.buf, t2.buf);
        }
        ASSERT_STREQ(t1.buf, t2.buf);
}

static void test_fixed(void)
{
        const char *const v1[] = { "hwdb", "--subsystem=input", "--lookup-prefix=x:" };
        const char *const v2[] = { "hwdb", "usb:v1", "--filter", "ID_*", "more" };
        const char *const v3[] = { "hwdb", "a", "--", "-f", "b" };
        const char *const v4[] = { "blkid" };

        run_one(3, v1);
        run_one(5, v2);
        run_one(5, v3);
        run_one(1, v4);
}

static void test_random(void)
{
        unsigned seed = 12345;

        for (int iter = 0; iter < 50000; iter++) {
                const char *in[MAX_WORDS + 1] = { "builtin" };
                int argc = 1 + (int)(rand_r(&seed) % MAX_WORDS);

                for (int i = 1; i < argc; i++)
                        in[i] = words[rand_r(&seed) % ARRAY_SIZE(words)];
                run_one(argc, in);
        }
}

int main(void)
{
        TEST_RUN(test_fixed);
        TEST_RUN(test_random);
        return 0;
}
