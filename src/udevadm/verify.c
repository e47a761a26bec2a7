/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (udevadm is single-threaded) */
/* udevadm verify: check rules files (udevadm(8) UDEVADM VERIFY).
 *
 *   udevadm verify [-N early|late|never] [--root=PATH] [--rules-dir=DIR]...
 *                  [--no-summary] [--no-style] [FILE|DIR...]
 *
 * Each file is compiled on its own with the verify checks on (GOTO cannot
 * cross files, so this is what loading them all would report). Every problem
 * is printed as "file:line:column: message". A file fails on any error or
 * warning, and on style notices unless --no-style; the exit status is 1 if
 * any file failed. Without FILE arguments the files of the search path are
 * checked (the default path, under --root if given, or the --rules-dir
 * directories, which replace it); a DIR argument means its .rules files. */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rules/rules.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "udevadm/udevadm.h"

struct verify_args {
        enum resolve_names resolve;
        const char *root;              /* borrowed from argv */
        struct arg_list dirs;          /* --rules-dir */
        bool summary, style;
        unsigned success, fail;
};

static int help(void)
{
        printf("%s verify [OPTIONS] [FILE|DIR...]\n\n"
               "Check udev rules files for errors.\n\n"
               "  -h --help                        This text\n"
               "  -V --version                     Print the version\n"
               "  -N --resolve-names=early|never   When to resolve user and group names\n"
               "     --root=PATH                   Check the rules under another root\n"
               "     --rules-dir=DIR               Check the rules of DIR instead of the\n"
               "                                   search path (repeatable)\n"
               "     --no-summary                  Do not print the summary\n"
               "     --no-style                    Do not fail on style issues\n",
               program_invocation_short_name);
        return 0;
}

/* 1: go on, 0: done (help/version), <0: error. */
static int parse_argv(int argc, char *argv[], struct verify_args *a)
{
        enum { ARG_ROOT = 0x100, ARG_RULES_DIR, ARG_NO_SUMMARY, ARG_NO_STYLE };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                { "resolve-names", required_argument, NULL, 'N' },
                { "root", required_argument, NULL, ARG_ROOT },
                { "rules-dir", required_argument, NULL, ARG_RULES_DIR },
                { "no-summary", no_argument, NULL, ARG_NO_SUMMARY },
                { "no-style", no_argument, NULL, ARG_NO_STYLE },
                {}
        };
        int c, r;

        while ((c = getopt_long(argc, argv, "hVN:", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        return help();
                case 'V':
                        return udevadm_print_version();
                case 'N':
                        if (streq(optarg, "early"))
                                a->resolve = RESOLVE_NAMES_EARLY;
                        else if (streq(optarg, "late") || streq(optarg, "never"))
                                /* "never" would only add noise: checked like "late" */
                                a->resolve = RESOLVE_NAMES_LATE;
                        else
                                return log_error_errno(-EINVAL, "--resolve-names= takes "
                                                       "\"early\" or \"never\"");
                        break;
                case ARG_ROOT:
                        if (optarg[0] != '/' || strlen(optarg) >= PATH_MAX)
                                return log_error_errno(-EINVAL, "--root= needs an absolute "
                                                       "path: %s", optarg);
                        a->root = optarg;
                        break;
                case ARG_RULES_DIR:
                        if (optarg[0] == '\0' || strlen(optarg) >= PATH_MAX)
                                return log_error_errno(-EINVAL, "Invalid --rules-dir=%s",
                                                       optarg);
                        if (a->dirs.n >= RULES_DIRS_MAX)
                                return log_error_errno(-E2BIG, "At most %d --rules-dir= "
                                                       "options are supported.",
                                                       RULES_DIRS_MAX);
                        r = arg_list_add(&a->dirs, optarg);
                        if (r < 0)
                                return r;
                        break;
                case ARG_NO_SUMMARY:
                        a->summary = false;
                        break;
                case ARG_NO_STYLE:
                        a->style = false;
                        break;
                default:
                        return -EINVAL;
                }
        }
        if (a->root && (optind < argc || a->dirs.n > 0))
                return log_error_errno(-EINVAL, "Combination of --root= and FILEs or "
                                       "--rules-dir= is not supported.");
        return 1;
}

/* 0 passed, -EINVAL failed (reported). */
static int verify_file(struct verify_args *a, const char *path)
{
        const char *files[] = { path, NULL };
        struct rules_load_options opts = {
                .files = files,
                .resolve_names = a->resolve,
                .verify = true,
        };
        _cleanup_(rules_unrefp) struct rules *rules = NULL;
        struct rules_stats st;
        int fd, r;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return log_error_errno(errno, "Failed to open rules file %s: %m", path);
        safe_close(fd);

        r = rules_load(&opts, &rules);
        if (r < 0)
                return r;
        rules_get_stats(rules, &st);
        if (st.errors > 0 || st.warnings > st.notices)
                return log_error_errno(-EINVAL, "%s: udev rules check failed.", path);
        if (a->style && st.notices > 0)
                return log_warning_errno(-EINVAL, "%s: udev rules have style issues.", path);
        return 0;
}

static int verify_list(struct verify_args *a, char **files)
{
        int ret = 0;

        for (size_t i = 0; files[i]; i++) {
                int r = verify_file(a, files[i]);

                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        a->fail++;
                        ret = r;
                } else
                        a->success++;
        }
        return ret;
}

/* The files of dirs (NULL: default path), overrides applied. */
static int verify_dirs(struct verify_args *a, const char *const *dirs)
{
        char **files = NULL;
        int r;

        r = rules_list_files(dirs, &files);
        if (r < 0)
                return log_error_errno(r, "Failed to enumerate rules files: %m");
        r = verify_list(a, files);
        rules_file_list_free(files);
        return r;
}

static int verify_search_path(struct verify_args *a)
{
        const char *defaults[RULES_DIRS_MAX + 1], *dirs[RULES_DIRS_MAX + 1];
        char rooted[RULES_DIRS_MAX][PATH_MAX];
        size_t n;

        if (a->dirs.n > 0) {
                for (n = 0; n < a->dirs.n; n++)
                        dirs[n] = a->dirs.items[n];
                dirs[n] = NULL;
                return verify_dirs(a, dirs);
        }
        if (!a->root)
                return verify_dirs(a, NULL);
        n = rules_default_dirs(defaults);
        /* the host's /lib says nothing about the root's: always look there
         * (a /lib -> usr/lib link only repeats the same basenames) */
        bool has_lib = false;
        for (size_t i = 0; i < n; i++)
                has_lib = has_lib || streq(defaults[i], "/lib/udev/rules.d");
        if (!has_lib && n < RULES_DIRS_MAX)
                defaults[n++] = "/lib/udev/rules.d";
        for (size_t i = 0; i < n; i++) {
                int w = snprintf(rooted[i], sizeof(rooted[i]), "%s%s",
                                 streq(a->root, "/") ? "" : a->root, defaults[i]);

                if (w < 0 || (size_t)w >= sizeof(rooted[i]))
                        return log_error_errno(-ENAMETOOLONG, "Path too long: %s%s", a->root,
                                               defaults[i]);
                dirs[i] = rooted[i];
        }
        dirs[n] = NULL;
        return verify_dirs(a, dirs);
}

static int verify_args_list(struct verify_args *a, int argc, char *argv[])
{
        int ret = 0;

        for (int i = 0; i < argc; i++) {
                struct stat st;
                int r;

                if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
                        const char *dirs[] = { argv[i], NULL };

                        r = verify_dirs(a, dirs);
                } else {
                        char *files[] = { argv[i], NULL };

                        r = verify_list(a, files);
                }
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        ret = r;
        }
        return ret;
}

int verify_main(int argc, char *argv[])
{
        struct verify_args a = { .resolve = RESOLVE_NAMES_EARLY, .summary = true, .style = true };
        int r;

        r = parse_argv(argc, argv, &a);
        if (r <= 0) {
                arg_list_done(&a.dirs);
                return r;
        }
        if (optind < argc)
                r = verify_args_list(&a, argc - optind, argv + optind);
        else
                r = verify_search_path(&a);
        arg_list_done(&a.dirs);

        if (a.summary)
                printf("\n%u udev rules files have been checked.\n"
                       "  Success: %u\n"
                       "  Fail:    %u\n",
                       a.success + a.fail, a.success, a.fail);
        return r < 0 ? r : 0;
}
