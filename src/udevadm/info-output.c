/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (udevadm is single-threaded) */
/* The device record of `udevadm info` (-q all, -e, -t) and its colours. */

#include <errno.h>
#include <inttypes.h>
#include <langinfo.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared/log.h"
#include "shared/macro.h"
#include "udevadm/info-output.h"

enum color_mode {
        COLOR_UNKNOWN,
        COLOR_OFF,
        COLOR_16,
        COLOR_256,
};

static int parse_bool(const char *v)
{
        static const char *const yes[] = { "1", "yes", "y", "true", "t", "on" };
        static const char *const no[] = { "0", "no", "n", "false", "f", "off" };

        for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
                if (strcasecmp(v, yes[i]) == 0)
                        return 1;
                if (strcasecmp(v, no[i]) == 0)
                        return 0;
        }
        return -EINVAL;
}

static enum color_mode detect_color_mode(void)
{
        const char *v = getenv("SYSTEMD_COLORS"), *term = getenv("TERM");

        if (v) {
                if (streq(v, "16"))
                        return COLOR_16;
                if (streq(v, "256"))
                        return COLOR_256;
                if (parse_bool(v) >= 0)
                        return parse_bool(v) > 0 ? COLOR_256 : COLOR_OFF;
        }
        if (getenv("NO_COLOR"))
                return COLOR_OFF;
        if (!isatty(STDOUT_FILENO) || !isatty(STDERR_FILENO) || !term || streq(term, "dumb"))
                return COLOR_OFF;
        return COLOR_256;
}

const char *info_color(enum info_color c)
{
        static enum color_mode mode = COLOR_UNKNOWN;

        if (mode == COLOR_UNKNOWN)
                mode = detect_color_mode();
        if (mode == COLOR_OFF)
                return "";
        switch (c) {
        case INFO_COLOR_NAME:
                return "\x1B[0;1;37m";
        case INFO_COLOR_CLASS:
                return "\x1B[0;1;32m";
        case INFO_COLOR_NODE:
                return "\x1B[0;1;36m";
        case INFO_COLOR_DISKSEQ:
                return "\x1B[0;1;35m";
        case INFO_COLOR_DRIVER:
                return mode == COLOR_16 ? "\x1B[0;1;33m" : "\x1B[0;1;38;5;100m";
        default:
                return "\x1B[0m";
        }
}

bool info_locale_is_utf8(void)
{
        static int cached = -1;
        const char *set;

        if (cached >= 0)
                return cached;
        if (!setlocale(LC_ALL, "")) {
                cached = true;
                return cached;
        }
        set = nl_langinfo(CODESET);
        if (!set || streq(set, "UTF-8")) {
                cached = true;
                return cached;
        }
        /* "C" set by nobody explicitly counts as UTF-8 nowadays. */
        set = setlocale(LC_CTYPE, NULL);
        cached = !set || ((streq(set, "C") || streq(set, "POSIX")) && !getenv("LC_ALL") &&
                          !getenv("LC_CTYPE") && !getenv("LANG"));
        return cached;
}

/* "/dev/sda" -> "sda" */
static const char *strip_dev(const char *path)
{
        return strncmp(path, "/dev/", 5) == 0 ? path + 5 : path;
}

static void line(const char *prefix, char letter, enum info_color c, const char *value)
{
        printf("%s%c: %s%s%s\n", prefix, letter, info_color(c), value,
               info_color(INFO_COLOR_NORMAL));
}

/* N:, L: and the S: lines of a device with a node. */
static void print_node(struct udevice *d, const char *prefix, const char *devname)
{
        char buf[16];
        int prio;

        line(prefix, 'N', INFO_COLOR_NODE, strip_dev(devname));
        if (udevice_get_devlink_priority(d, &prio) >= 0) {
                snprintf(buf, sizeof(buf), "%i", prio);
                line(prefix, 'L', INFO_COLOR_NODE, buf);
        }
        (void)udevice_read_db(d);
        for (size_t i = 0; i < d->devlinks.n; i++)
                line(prefix, 'S', INFO_COLOR_NODE, strip_dev(d->devlinks.items[i]));
}

/* D: and I: */
static void print_numbers(struct udevice *d, const char *prefix, const char *subsystem)
{
        unsigned major, minor;
        char buf[64];
        int ifindex;

        if (udevice_get_devnum(d, &major, &minor) >= 0) {
                snprintf(buf, sizeof(buf), "%c %u:%u",
                         subsystem && streq(subsystem, "block") ? 'b' : 'c', major, minor);
                line(prefix, 'D', INFO_COLOR_NODE, buf);
        }
        if (udevice_get_ifindex(d, &ifindex) >= 0) {
                snprintf(buf, sizeof(buf), "%i", ifindex);
                line(prefix, 'I', INFO_COLOR_NODE, buf);
        }
}

void info_print_record(struct udevice *d, const char *prefix)
{
        const char *s, *subsystem = NULL;
        char buf[32];
        uint64_t q;

        prefix = prefix ?: "";
        line(prefix, 'P', INFO_COLOR_NAME, d->devpath);
        if (udevice_get_sysname(d, &s) >= 0)
                line(prefix, 'M', INFO_COLOR_NAME, s);
        if (udevice_get_sysnum(d, &s) >= 0)
                line(prefix, 'R', INFO_COLOR_NAME, s);
        if (udevice_get_subsystem(d, &subsystem) >= 0)
                line(prefix, 'U', INFO_COLOR_CLASS, subsystem);
        else
                subsystem = NULL;
        if (udevice_get_devtype(d, &s) >= 0)
                line(prefix, 'T', INFO_COLOR_CLASS, s);
        print_numbers(d, prefix, subsystem);
        if (udevice_get_devname(d, &s) >= 0)
                print_node(d, prefix, s);
        if (udevice_get_diskseq(d, &q) >= 0) {
                snprintf(buf, sizeof(buf), "%" PRIu64, q);
                line(prefix, 'Q', INFO_COLOR_DISKSEQ, buf);
        }
        if (udevice_get_driver(d, &s) >= 0)
                line(prefix, 'V', INFO_COLOR_DRIVER, s);
        if (udevice_properties_prepare(d) >= 0)
                for (size_t i = 0; i < d->n_props; i++)
                        printf("%sE: %s=%s\n", prefix, d->props[i].key, d->props[i].value);
        if (!*prefix)
                putchar('\n');
}

int info_check_db(const struct udevice *d)
{
        const char *run = udevice_run_dir();

        if (d->db_error < 0)
                return log_error_errno(d->db_error,
                                       "%s: Failed to read the database file %s/data/%s: %m",
                                       d->devpath, run, d->id ?: "?");
        if (d->db_bad_line > 0)
                return log_error_errno(-EBADMSG,
                                       "%s: Malformed line %u in the database file %s/data/%s "
                                       "(skipped).",
                                       d->devpath, d->db_bad_line, run, d->id ?: "?");
        return 0;
}
