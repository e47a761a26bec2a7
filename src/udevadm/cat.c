/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (udevadm is single-threaded) */
/* udevadm cat: print the rules files or udev.conf (udevadm(8) UDEVADM CAT; the
 * verb of systemd versions after 252).
 *
 *   udevadm cat [--tldr] [--config] [FILE|DIR...]
 *
 * Without arguments: every rules file the daemon reads, in the order it reads
 * them (the search path of rules_list_files(): union by file name, the first
 * directory wins, sorted by name; masked and empty files are listed too, with
 * nothing under their header). A FILE argument without a '/' is first looked
 * up by name in the search path (".rules" appended when missing), otherwise
 * it is a path; a DIR argument stands for its .rules files, sorted by name.
 * Files found by name or path are printed under their canonical path.
 *
 * Each file is printed as "# PATH", then its lines, each ended by a newline;
 * a blank line goes before every header but the first. Lines end at "\n",
 * "\r", "\r\n" or NUL, and may be at most CAT_LINE_MAX bytes long (the file
 * fails with "No buffer space available" beyond). --tldr leaves out comments
 * (first non-blank character '#' or ';') and blank lines. --config prints the
 * udev.conf the daemon reads ($TUDEV_UDEV_CONF, for tests, or
 * /etc/udev/udev.conf) or "# Main configuration file udev/udev.conf not
 * found"; it takes no FILE. The first file that cannot be read ends the
 * listing with status 1, as systemd's does. */

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

#define CAT_LINE_MAX (1024 * 1024) /* systemd's LONG_LINE_MAX */
#define CAT_UDEV_CONF "/etc/udev/udev.conf"

struct cat_args {
        bool tldr, config;
        bool printed; /* a file was printed: the next header gets a blank line */
};

static int help(void)
{
        printf("%s cat [OPTIONS] [FILE|DIR...]\n\n"
               "Show udev rules files, in the order the daemon reads them.\n\n"
               "  -h --help            This text\n"
               "  -V --version         Print the version\n"
               "     --tldr            Skip comments and empty lines\n"
               "     --config          Show udev.conf rather than udev rules files\n",
               program_invocation_short_name);
        return 0;
}

/* 1: go on, 0: done (help/version), <0: error. */
static int parse_argv(int argc, char *argv[], struct cat_args *a)
{
        enum { ARG_TLDR = 0x100, ARG_CONFIG };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                { "tldr", no_argument, NULL, ARG_TLDR },
                { "config", no_argument, NULL, ARG_CONFIG },
                {}
        };
        int c;

        while ((c = getopt_long(argc, argv, "hV", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        return help();
                case 'V':
                        return udevadm_print_version();
                case ARG_TLDR:
                        a->tldr = true;
                        break;
                case ARG_CONFIG:
                        a->config = true;
                        break;
                default:
                        return -EINVAL;
                }
        }
        if (a->config && optind < argc)
                return log_error_errno(-EINVAL,
                                       "Combination of --config and FILEs is not supported.");
        return 1;
}

/* A comment or blank line: nothing but spaces/tabs/newlines before '#', ';'
 * or the end. */
static bool is_comment(const char *line)
{
        line += strspn(line, " \t\n\r");
        return *line == '#' || *line == ';' || *line == '\0';
}

static void emit_line(const struct cat_args *a, char *line, size_t len)
{
        line[len] = '\0';
        if (a->tldr && is_comment(line))
                return;
        fwrite(line, 1, len, stdout);
        putchar('\n');
}

/* The header and the lines of one file. 0 or -errno (logged). */
static int cat_file(struct cat_args *a, const char *path)
{
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *line = NULL;
        char chunk[16384];
        size_t len = 0;
        bool cr = false; /* the last byte ended a line with '\r' */
        struct stat st;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return log_warning_errno(errno, "Failed to cat %s: %m", path);
        if (fstat(fd, &st) < 0)
                return log_warning_errno(errno, "Failed to cat %s: %m", path);
        if (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode))
                return log_warning_errno(S_ISDIR(st.st_mode) ? EISDIR : EINVAL,
                                         "Failed to cat %s: %m", path);
        line = malloc(CAT_LINE_MAX + 1);
        if (!line)
                return log_error_errno(ENOMEM, "Out of memory.");

        printf("%s# %s\n", a->printed ? "\n" : "", path);
        a->printed = true;
        for (;;) {
                ssize_t n = read(fd, chunk, sizeof(chunk));

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EAGAIN)
                        break;
                if (n < 0)
                        return log_error_errno(errno, "Failed to read \"%s\": %m", path);
                if (n == 0)
                        break;
                for (ssize_t i = 0; i < n; i++) {
                        char ch = chunk[i];

                        if (ch == '\n' && cr) { /* "\r\n" is one end of line */
                                cr = false;
                                continue;
                        }
                        cr = ch == '\r';
                        if (ch == '\n' || ch == '\r' || ch == '\0') {
                                emit_line(a, line, len);
                                len = 0;
                                continue;
                        }
                        if (len >= CAT_LINE_MAX)
                                return log_error_errno(ENOBUFS, "Failed to read \"%s\": %m",
                                                       path);
                        line[len++] = ch;
                }
        }
        if (len > 0)
                emit_line(a, line, len);
        if (fflush(stdout) != 0)
                return log_error_errno(errno, "Failed to write: %m");
        return 0;
}

static int cat_list(struct cat_args *a, char **files)
{
        for (size_t i = 0; files[i]; i++) {
                int r = cat_file(a, files[i]);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The .rules files of one directory (canonical path), sorted by name. */
static int cat_dir(struct cat_args *a, const char *dir)
{
        const char *dirs[] = { dir, NULL };
        char **files = NULL;
        int r;

        r = rules_list_files(dirs, &files);
        if (r < 0)
                return log_error_errno(r, "Failed to enumerate rules files in '%s': %m", dir);
        r = cat_list(a, files);
        rules_file_list_free(files);
        return r;
}

/* A FILE argument that is a plain name: the first NAME (or NAME.rules) in
 * the search path, canonicalized. 1 printed, 0 not found, <0 error. */
static int cat_by_name(struct cat_args *a, const char *arg)
{
        const char *dirs[RULES_DIRS_MAX + 1];
        size_t n = strlen(arg);
        bool suffix = n >= 6 && streq(arg + n - 6, ".rules");

        if (n == 0 || strchr(arg, '/') || streq(arg, ".") || streq(arg, "..") ||
            n + (suffix ? 0 : 6) > NAME_MAX)
                return 0;
        rules_default_dirs(dirs);
        for (size_t i = 0; dirs[i]; i++) {
                char path[PATH_MAX], real[PATH_MAX];
                struct stat st;
                int w = snprintf(path, sizeof(path), "%s/%s%s", dirs[i], arg,
                                 suffix ? "" : ".rules");

                if (w < 0 || (size_t)w >= sizeof(path))
                        continue;
                if (stat(path, &st) < 0) {
                        if (errno == ENOENT || errno == ENOTDIR)
                                continue;
                        return log_error_errno(errno, "Failed to chase \"%s\": %m", path);
                }
                if (!S_ISREG(st.st_mode))
                        continue;
                if (!realpath(path, real))
                        return log_error_errno(errno, "Failed to chase \"%s\": %m", path);
                int r = cat_file(a, real);
                return r < 0 ? r : 1;
        }
        return 0;
}

static int cat_arg(struct cat_args *a, const char *arg)
{
        char real[PATH_MAX];
        struct stat st;
        int r;

        r = cat_by_name(a, arg);
        if (r != 0)
                return r < 0 ? r : 0;
        if (!realpath(arg, real))
                return log_error_errno(errno, "Failed to chase \"%s\": %m", arg);
        if (stat(real, &st) < 0)
                return log_error_errno(errno, "Failed to chase \"%s\": %m", arg);
        if (S_ISDIR(st.st_mode))
                return cat_dir(a, real);
        if (!S_ISREG(st.st_mode))
                return log_error_errno(EBADFD, "'%s' is neither a regular file nor a "
                                       "directory: %m", real);
        return cat_file(a, real);
}

static int cat_config(struct cat_args *a)
{
        const char *path = getenv("TUDEV_UDEV_CONF");

        if (!path || !*path)
                path = CAT_UDEV_CONF;
        if (access(path, F_OK) < 0) {
                printf("# Main configuration file udev/udev.conf not found\n");
                return 0;
        }
        return cat_file(a, path);
}

int cat_main(int argc, char *argv[])
{
        struct cat_args a = {};
        char **files = NULL;
        int r;

        r = parse_argv(argc, argv, &a);
        if (r <= 0)
                return r;
        if (a.config)
                return cat_config(&a);
        if (optind < argc) {
                for (int i = optind; i < argc; i++) {
                        r = cat_arg(&a, argv[i]);
                        if (r < 0)
                                return r;
                }
                return 0;
        }
        r = rules_list_files(NULL, &files);
        if (r < 0)
                return log_error_errno(r, "Failed to enumerate rules files: %m");
        r = cat_list(&a, files);
        rules_file_list_free(files);
        return r;
}
