/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (udevadm is single-threaded) */
/* udevadm: global options and verb dispatch.
 *
 *   udevadm [-d|--debug] [-h|--help] [-V|--version] VERB [VERB OPTIONS]
 *
 * Log level: info, or `udev_log=` from /etc/udev/udev.conf, overridden by
 * $SYSTEMD_LOG_LEVEL, overridden by --debug. */

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/log.h"
#include "shared/macro.h"
#include "udevadm/hwdb.h"
#include "udevadm/info.h"
#include "udevadm/test.h"
#include "udevadm/udevadm-test-builtin.h"
#include "udevadm/udevadm.h"

#define UDEV_CONF_PATH "/etc/udev/udev.conf"
#define UDEV_CONF_LINE_MAX 4096

struct verb {
        const char *name;
        const char *summary; /* NULL: not listed in --help */
        int (*run)(int argc, char *argv[]); /* NULL: not implemented yet */
        bool status;    /* run() returns an exit status (>= 0) for udevadm to exit with */
};

static int help_main(int argc, char *argv[]);
static int version_main(int argc, char *argv[]) { return udevadm_print_version(); }

static const struct verb verbs[] = {
        { "info",         "Show devices and their database records", info_main, false },
        { "trigger",      "Make the kernel re-send device events",  trigger_main, false },
        { "settle",       "Wait until queued events are processed", settle_main, true },
        { "control",      "Send requests to the daemon",            control_main, false },
        { "stats",        "Show the daemon's event statistics",     stats_main, false },
        { "monitor",      "Print kernel and daemon events",         monitor_main, false },
        { "record",       "Record kernel events and their sysfs state", record_main, false },
        { "replay",       "Run the rules over a recording, offline", replay_main, false },
        { "test",         "Simulate the processing of an event",    test_main, false },
        { "explain",      "Show how the rules processed an event",  explain_main, false },
        { "test-builtin", "Run one builtin on a device",            test_builtin_main, false },
        { "wait",         "Wait for devices or their links",        wait_main, false },
        { "lock",         "Lock block devices while running a command", lock_main, true },
        { "verify",       "Check rules files for errors",           verify_main, false },
        { "cat",          "Show rules files or udev.conf",          cat_main, false },
        { "hwdb",         "Compile or query the hardware database", hwdb_main, false },
        { "version",      NULL,                                version_main, false },
        { "help",         NULL,                                help_main, false },
};

static int help(void)
{
        printf("%s [--help] [--version] [--debug] COMMAND [COMMAND OPTIONS]\n\n"
               "Query and control the device event daemon.\n\n"
               "Commands:\n",
               program_invocation_short_name);
        for (size_t i = 0; i < ARRAY_SIZE(verbs); i++)
                if (verbs[i].summary)
                        printf("  %-12s  %s%s\n", verbs[i].name, verbs[i].summary,
                               verbs[i].run ? "" : " (not implemented yet)");
        printf("\nMore in udevadm(8).\n");
        return 0;
}

static int help_main(int argc, char *argv[]) { return help(); }

/* Strip blanks and one pair of matching quotes, in place. */
static char *conf_value(char *v)
{
        size_t n;

        v += strspn(v, " \t");
        n = strlen(v);
        while (n > 0 && strchr(" \t\r\n", v[n - 1]))
                v[--n] = '\0';
        if (n >= 2 && (v[0] == '"' || v[0] == '\'') && v[n - 1] == v[0]) {
                v[n - 1] = '\0';
                v++;
        }
        return v;
}

/* udevadm reads only `udev_log=` from udev.conf; a missing file is fine. */
static void parse_udev_conf(void)
{
        _cleanup_(fclosep) FILE *f = fopen(UDEV_CONF_PATH, "re");
        char line[UDEV_CONF_LINE_MAX];

        if (!f)
                return;
        while (fgets(line, sizeof(line), f)) {
                char *p = line + strspn(line, " \t");
                char *eq;

                if (*p == '#' || *p == ';' || *p == '\n' || *p == '\0')
                        continue;
                eq = strchr(p, '=');
                if (!eq)
                        continue;
                *eq = '\0';
                if (!streq(conf_value(p), "udev_log"))
                        continue;
                const char *v = conf_value(eq + 1);
                int level = log_level_from_string(v);
                if (level < 0)
                        log_warning("%s: failed to set udev log level '%s', ignoring.",
                                    UDEV_CONF_PATH, v);
                else
                        log_set_max_level(level);
        }
}

static void parse_environment(void)
{
        const char *v = getenv("SYSTEMD_LOG_LEVEL");

        if (!v)
                return;
        int level = log_level_from_string(v);
        if (level < 0)
                log_warning("Failed to parse log level '%s', ignoring.", v);
        else
                log_set_max_level(level);
}

/* Returns 1 to continue with a verb, 0 to exit successfully, <0 on error. */
static int parse_argv(int argc, char *argv[])
{
        static const struct option options[] = {
                { "debug", no_argument, NULL, 'd' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                {}
        };
        int c;

        optind = 0; /* full getopt re-initialisation, honours the leading '+' */
        while ((c = getopt_long(argc, argv, "+dhV", options, NULL)) >= 0) {
                switch (c) {
                case 'd':
                        log_set_max_level(LOG_DEBUG);
                        break;
                case 'h':
                        return help();
                case 'V':
                        return udevadm_print_version();
                default:
                        return -EINVAL;
                }
        }
        return 1;
}

/* Returns what the verb returned, or -errno; *ret_status: the exit status. */
static int dispatch_verb(int argc, char *argv[], int *ret_status)
{
        const char *name = argv[0];
        int r;

        if (!name)
                return log_error_errno(-EINVAL, "Command verb required.");
        for (size_t i = 0; i < ARRAY_SIZE(verbs); i++) {
                if (!streq(verbs[i].name, name))
                        continue;
                if (!verbs[i].run)
                        return log_error_errno(-EOPNOTSUPP,
                                               "Command verb %s is not implemented yet.", name);
                optind = 0; /* each verb parses its own options from argv[1] */
                r = verbs[i].run(argc, argv);
                *ret_status = r < 0 ? EXIT_FAILURE : verbs[i].status ? MIN(r, 255) : EXIT_SUCCESS;
                return r;
        }
        return log_error_errno(-EINVAL, "Unknown command verb %s.", name);
}

int main(int argc, char *argv[])
{
        int r, status;

        log_set_target(LOG_TARGET_CONSOLE, "udevadm");
        log_set_console_plain(true);
        parse_udev_conf();
        parse_environment();

        r = parse_argv(argc, argv);
        if (r <= 0)
                return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;

        status = EXIT_FAILURE;
        r = dispatch_verb(argc - optind, argv + optind, &status);
        if (fflush(stdout) != 0 && r >= 0) {
                log_error_errno(-EIO, "Failed to write to standard output.");
                status = EXIT_FAILURE;
        }
        return status;
}
