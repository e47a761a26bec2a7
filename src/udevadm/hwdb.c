/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (udevadm is single-threaded) */
/* udevadm hwdb: compile or query the hardware database (see hwdb.h). */

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtins/hwdb-compile.h"
#include "builtins/hwdb-reader.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "udevadm/hwdb.h"
#include "udevadm/udevadm.h"

#define HWDB_BIN_ETC "/etc/udev/hwdb.bin"
#define HWDB_BIN_USR "/lib/udev/hwdb.bin"

struct hwdb_args {
        bool update, usr, strict;
        const char *test; /* borrowed from argv */
        const char *root; /* borrowed from argv; NULL: "/" */
};

static int help(void)
{
        printf("%s hwdb [OPTIONS]\n\n"
               "Compile or query the hardware database.\n\n"
               "  -h --help            Print this message\n"
               "  -V --version         Print the version\n"
               "  -u --update          Compile the hwdb.d files into hwdb.bin\n"
               "  -s --strict          With --update, fail on any parse error\n"
               "     --usr             With --update, write %s instead of %s\n"
               "  -t --test=MODALIAS   Print the properties of MODALIAS\n"
               "  -r --root=PATH       Use the files under PATH\n",
               program_invocation_short_name, HWDB_BIN_USR, HWDB_BIN_ETC);
        return 0;
}

/* 1: go on, 0: done (help/version), <0: error. */
static int parse_argv(int argc, char *argv[], struct hwdb_args *a)
{
        enum { ARG_USR = 0x100 };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                { "update", no_argument, NULL, 'u' },
                { "strict", no_argument, NULL, 's' },
                { "usr", no_argument, NULL, ARG_USR },
                { "test", required_argument, NULL, 't' },
                { "root", required_argument, NULL, 'r' },
                {}
        };
        int c;

        while ((c = getopt_long(argc, argv, "hVust:r:", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        return help();
                case 'V':
                        return udevadm_print_version();
                case 'u':
                        a->update = true;
                        break;
                case 's':
                        a->strict = true;
                        break;
                case ARG_USR:
                        a->usr = true;
                        break;
                case 't':
                        if (strlen(optarg) >= HWDB_LINE_MAX)
                                return log_error_errno(-EINVAL, "--test= argument too long "
                                                       "(at most %d bytes).",
                                                       HWDB_LINE_MAX - 1);
                        a->test = optarg;
                        break;
                case 'r':
                        if (optarg[0] != '/' || strlen(optarg) >= PATH_MAX)
                                return log_error_errno(-EINVAL, "--root= needs an absolute "
                                                       "path: %s", optarg);
                        a->root = streq(optarg, "/") ? NULL : optarg;
                        break;
                default:
                        return -EINVAL;
                }
        }
        if (optind < argc)
                return log_error_errno(-EINVAL, "Unexpected argument: %s", argv[optind]);
        if (!a->update && !a->test)
                return log_error_errno(-EINVAL, "Either --update or --test must be used.");
        return 1;
}

static int update(const struct hwdb_args *a)
{
        char output[PATH_MAX];
        struct hwdb_compile_options o = { .root = a->root, .output = output };
        struct hwdb_compile_stats st;
        int n, r;

        n = snprintf(output, sizeof(output), "%s%s", a->root ? a->root : "",
                     a->usr ? HWDB_BIN_USR : HWDB_BIN_ETC);
        if (n < 0 || (size_t)n >= sizeof(output))
                return log_error_errno(-ENAMETOOLONG, "Path too long: %s", a->root);
        r = hwdb_compile(&o, &st);
        if (r < 0)
                return r; /* logged */
        if (st.errors > 0 && a->strict)
                return log_error_errno(-EINVAL, "%u error(s) in the hwdb files (--strict).",
                                       st.errors);
        return 0;
}

/* The first hwdb.bin of the search path under root. */
static int open_rooted(const char *root, struct hwdb **ret)
{
        char path[PATH_MAX];

        if (!root)
                return hwdb_open_default(ret); /* logs a missing file */
        for (size_t i = 0; hwdb_bin_paths[i]; i++) {
                int n = snprintf(path, sizeof(path), "%s%s", root, hwdb_bin_paths[i]);
                int r;

                if (n < 0 || (size_t)n >= sizeof(path))
                        return -ENAMETOOLONG;
                r = hwdb_open(path, ret);
                if (r != -ENOENT)
                        return r;
        }
        log_info("No hwdb.bin under %s, please run 'udevadm hwdb --update --root=%s'", root,
                 root);
        return -ENOENT;
}

static int test(const struct hwdb_args *a)
{
        struct hwdb *h = NULL;
        struct hwdb_result res = {};
        int r;

        r = open_rooted(a->root, &h);
        if (r < 0)
                return r == -ENOENT ? r : log_error_errno(r, "Failed to open hwdb.bin: %m");
        r = hwdb_lookup(h, a->test, &res);
        if (r < 0)
                log_error_errno(r, "Failed to look up %s: %m", a->test);
        else
                for (size_t i = 0; i < res.n; i++)
                        printf("%s=%s\n", res.items[i].key, res.items[i].value);
        hwdb_result_done(&res);
        hwdb_close(h);
        return r < 0 ? r : 0;
}

int hwdb_main(int argc, char *argv[])
{
        struct hwdb_args a = {};
        int r;

        r = parse_argv(argc, argv, &a);
        if (r <= 0)
                return r;
        if (a.update) {
                r = update(&a);
                if (r < 0)
                        return r;
        }
        if (a.test)
                return test(&a);
        return 0;
}
