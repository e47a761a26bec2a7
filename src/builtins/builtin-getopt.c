/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (all state is in the caller's struct builtin_getopt) */
/* Reentrant getopt_long with glibc's permuting semantics (builtins-internal.h).
 *
 * Invariant between calls (outside a short-option cluster): the non-option
 * words skipped so far form the block [nonopt_first, nonopt_end) and
 * nonopt_end == optind. Each time an option's words are consumed they are
 * rotated in front of that block, so when scanning ends the block holds all
 * non-option words in their original order, up to argc. */
#include <string.h>

#include "builtins/builtins-internal.h"
#include "shared/log.h"

static void reverse(char *argv[], int a, int b)
{
        for (b--; a < b; a++, b--) {
                char *t = argv[a];

                argv[a] = argv[b];
                argv[b] = t;
        }
}

/* The n words at optind were an option: move them in front of the skipped
 * non-option block. */
static void consume(struct builtin_getopt *st, char *argv[], int n)
{
        int end = st->optind + n;

        if (st->nonopt_first < st->optind) {
                reverse(argv, st->nonopt_first, st->optind);
                reverse(argv, st->optind, end);
                reverse(argv, st->nonopt_first, end);
        }
        st->nonopt_first += n;
        st->optind = end;
        st->nonopt_end = end;
        st->cluster = 0;
}

static bool is_nonopt(const char *w)
{
        return w[0] != '-' || w[1] == '\0';
}

static int finish(struct builtin_getopt *st)
{
        st->optind = st->nonopt_first;
        return -1;
}

static const struct builtin_option *find_long(const struct builtin_option *longopts,
                                              const char *name, size_t len, bool *ambiguous)
{
        const struct builtin_option *found = NULL;

        *ambiguous = false;
        if (!longopts)
                return NULL;
        for (const struct builtin_option *o = longopts; o->name; o++)
                if (strlen(o->name) == len && strncmp(o->name, name, len) == 0)
                        return o;
        for (const struct builtin_option *o = longopts; o->name; o++) {
                if (strncmp(o->name, name, len) != 0)
                        continue;
                /* glibc: several prefix matches that do the same thing are not ambiguous */
                if (found && (found->has_arg != o->has_arg || found->val != o->val))
                        *ambiguous = true;
                else if (!found)
                        found = o;
        }
        return *ambiguous ? NULL : found;
}

static int parse_long(struct builtin_getopt *st, int argc, char *argv[],
                      const struct builtin_option *longopts)
{
        const char *name = argv[st->optind] + 2;
        const char *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        const struct builtin_option *o;
        bool ambiguous;

        o = find_long(longopts, name, len, &ambiguous);
        if (!o) {
                log_debug("%s: %s option '--%.*s'", argv[0],
                          ambiguous ? "ambiguous" : "unrecognized", (int)len, name);
                consume(st, argv, 1);
                return '?';
        }
        if (!o->has_arg) {
                if (eq) {
                        log_debug("%s: option '--%s' doesn't allow an argument", argv[0],
                                  o->name);
                        consume(st, argv, 1);
                        return '?';
                }
                consume(st, argv, 1);
                return o->val;
        }
        if (eq) {
                st->optarg = (char *)eq + 1;
                consume(st, argv, 1);
        } else if (st->optind + 1 < argc) {
                st->optarg = argv[st->optind + 1];
                consume(st, argv, 2);
        } else {
                log_debug("%s: option '--%s' requires an argument", argv[0], o->name);
                consume(st, argv, 1);
                return '?';
        }
        return o->val;
}

static int parse_short(struct builtin_getopt *st, int argc, char *argv[], const char *shortopts)
{
        char *word = argv[st->optind];
        char c = word[st->cluster++];
        const char *spec = c != ':' && shortopts ? strchr(shortopts, c) : NULL;

        if (!spec) {
                log_debug("%s: invalid option -- '%c'", argv[0], c);
                if (word[st->cluster] == '\0')
                        consume(st, argv, 1);
                return '?';
        }
        if (spec[1] != ':') {
                if (word[st->cluster] == '\0')
                        consume(st, argv, 1);
                return c;
        }
        if (word[st->cluster] != '\0') {
                st->optarg = word + st->cluster;
                consume(st, argv, 1);
        } else if (st->optind + 1 < argc) {
                st->optarg = argv[st->optind + 1];
                consume(st, argv, 2);
        } else {
                log_debug("%s: option requires an argument -- '%c'", argv[0], c);
                consume(st, argv, 1);
                return '?';
        }
        return c;
}

int builtin_getopt_long(struct builtin_getopt *st, int argc, char *argv[], const char *shortopts,
                        const struct builtin_option *longopts)
{
        if (st->optind == 0) {
                *st = (struct builtin_getopt){ .optind = 1, .nonopt_first = 1, .nonopt_end = 1 };
                if (argc < 1)
                        return -1;
        }
        st->optarg = NULL;

        if (st->cluster > 0)
                return parse_short(st, argc, argv, shortopts);

        if (st->optind > argc) /* called again after the end */
                return -1;
        while (st->optind < argc && is_nonopt(argv[st->optind]))
                st->optind++;
        st->nonopt_end = st->optind;
        if (st->optind >= argc)
                return finish(st);

        if (strcmp(argv[st->optind], "--") == 0) {
                consume(st, argv, 1);
                st->nonopt_end = argc;
                return finish(st);
        }
        if (argv[st->optind][1] == '-')
                return parse_long(st, argc, argv, longopts);
        st->cluster = 1;
        return parse_short(st, argc, argv, shortopts);
}
