/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: manager (start-up only) */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared/fileio.h"
#include "shared/log.h"
#include "shared/time-util.h"
#include "udevd/config.h"
#include "udevd/explain-ring.h"

static const struct {
        const char *name;
        int sig;
} signal_names[] = {
        { "SIGKILL", SIGKILL }, { "SIGTERM", SIGTERM }, { "SIGINT", SIGINT },
        { "SIGHUP", SIGHUP },   { "SIGABRT", SIGABRT }, { "SIGQUIT", SIGQUIT },
        { "SIGUSR1", SIGUSR1 }, { "SIGUSR2", SIGUSR2 }, { "SIGALRM", SIGALRM },
};

int signal_from_string(const char *s)
{
        if (!s || !*s)
                return -EINVAL;
        for (size_t i = 0; i < ARRAY_SIZE(signal_names); i++)
                if (strcmp(s, signal_names[i].name) == 0 || strcmp(s, signal_names[i].name + 3) == 0)
                        return signal_names[i].sig;
        char *end;
        long v = strtol(s, &end, 10);
        if (!*end && v > 0 && v < NSIG)
                return (int)v;
        return -EINVAL;
}

static int parse_unsigned(const char *s, unsigned max, unsigned *ret)
{
        char *end;
        unsigned long v;

        if (!s || !isdigit((unsigned char)*s))
                return -EINVAL;
        errno = 0;
        v = strtoul(s, &end, 10);
        if (errno || *end || v > max)
                return -EINVAL;
        *ret = (unsigned)v;
        return 0;
}

int queue_max_events_from_string(const char *s, unsigned *ret)
{
        unsigned v;

        if (parse_unsigned(s, UDEVD_QUEUE_MAX_EVENTS_LIMIT, &v) < 0 || v == 0)
                return -EINVAL;
        *ret = v;
        return 0;
}

int queue_max_bytes_from_string(const char *s, uint64_t *ret)
{
        unsigned long long v;
        unsigned shift = 0;
        char *end;

        if (!s || !isdigit((unsigned char)*s))
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno)
                return -EINVAL;
        if (*end) {
                const char *units = "KMG", *u = strchr(units, *end);

                if (!u || end[1])
                        return -EINVAL;
                shift = 10 * (unsigned)(u - units + 1);
        }
        if (v > (UDEVD_QUEUE_MAX_BYTES_LIMIT >> shift))
                return -EINVAL;
        v <<= shift;
        if (v < UDEVD_QUEUE_MAX_BYTES_MIN)
                return -EINVAL;
        *ret = v;
        return 0;
}

static bool parse_bool(const char *s, bool *ret)
{
        static const char *const yes[] = { "1", "yes", "y", "true", "t", "on" };
        static const char *const no[] = { "0", "no", "n", "false", "f", "off" };

        for (size_t i = 0; i < ARRAY_SIZE(yes); i++)
                if (strcasecmp(s, yes[i]) == 0) {
                        *ret = true;
                        return true;
                }
        for (size_t i = 0; i < ARRAY_SIZE(no); i++)
                if (strcasecmp(s, no[i]) == 0) {
                        *ret = false;
                        return true;
                }
        return false;
}

/* Apply one setting by its udev.conf / kernel-command-line name (without the
 * "udev." prefix; the kernel spells children_max etc. the same way). */
static bool apply_key(struct udevd_config *c, const char *key, const char *value,
                      const char *origin, unsigned line, bool kernel)
{
        uint64_t usec;
        unsigned u;
        int r;

        if (strcmp(key, kernel ? "log_level" : "udev_log") == 0 ||
            (kernel && strcmp(key, "log_priority") == 0)) {
                r = log_level_from_string(value);
                if (r < 0)
                        goto invalid;
                c->log_level = r;
                c->log_level_set = true;
        } else if (strcmp(key, "children_max") == 0) {
                if (parse_unsigned(value, UDEVD_CHILDREN_MAX_LIMIT, &u) < 0)
                        goto invalid;
                c->children_max = u;
                c->children_max_set = true;
        } else if (strcmp(key, "exec_delay") == 0) {
                if (parse_timespan_usec(value, &usec) < 0)
                        goto invalid;
                c->exec_delay_usec = usec;
                c->exec_delay_set = true;
        } else if (strcmp(key, "event_timeout") == 0) {
                if (parse_timespan_usec(value, &usec) < 0 || usec == 0)
                        goto invalid;
                c->event_timeout_usec = usec;
                c->event_timeout_set = true;
        } else if (strcmp(key, "timeout_signal") == 0) {
                r = signal_from_string(value);
                if (r < 0)
                        goto invalid;
                c->timeout_signal = r;
                c->timeout_signal_set = true;
        } else if (!kernel && strcmp(key, "resolve_names") == 0) {
                if (resolve_names_from_string(value, &c->resolve_names) < 0)
                        goto invalid;
                c->resolve_names_set = true;
        } else if (!kernel && strcmp(key, "explain_events") == 0) {
                if (parse_unsigned(value, EXPLAIN_EVENTS_MAX, &u) < 0)
                        goto invalid;
                c->explain_events = u;
                c->explain_events_set = true;
        } else if (!kernel && strcmp(key, "queue_max_events") == 0) {
                if (queue_max_events_from_string(value, &c->queue_max_events) < 0)
                        goto invalid;
                c->queue_max_events_set = true;
        } else if (!kernel && strcmp(key, "queue_max_bytes") == 0) {
                if (queue_max_bytes_from_string(value, &c->queue_max_bytes) < 0)
                        goto invalid;
                c->queue_max_bytes_set = true;
        } else if (kernel && strcmp(key, "blockdev_read_only") == 0) {
                bool b = true;
                if (value && !parse_bool(value, &b))
                        goto invalid;
                c->blockdev_read_only = b;
                c->blockdev_read_only_set = true;
        } else {
                return false;
        }
        return true;
invalid:
        if (kernel)
                log_warning("Invalid value for kernel command line option udev.%s=%s, ignoring",
                            key, value ? value : "");
        else
                log_warning("%s:%u: invalid value for %s=, ignoring: %s", origin, line, key,
                            value ? value : "");
        return true;
}

/* Strip surrounding whitespace in place; returns the start. */
static char *strip(char *s)
{
        char *e;

        while (isspace((unsigned char)*s))
                s++;
        e = s + strlen(s);
        while (e > s && isspace((unsigned char)e[-1]))
                *--e = '\0';
        return s;
}

void udev_conf_parse(const char *text, const char *origin, struct udevd_config *c)
{
        char *copy = strdup(text), *save = NULL;
        unsigned lineno = 0;

        if (!copy)
                return;
        for (char *p = copy; p; p = save) {
                save = strchr(p, '\n');
                if (save)
                        *save++ = '\0';
                lineno++;
                char *line = strip(p);
                if (!*line || *line == '#' || *line == ';')
                        continue;
                char *eq = strchr(line, '=');
                if (!eq) {
                        log_warning("%s:%u: line without '=', ignoring", origin, lineno);
                        continue;
                }
                *eq = '\0';
                char *key = strip(line), *value = strip(eq + 1);
                size_t vl = strlen(value);
                if (vl >= 2 && (value[0] == '"' || value[0] == '\'') && value[vl - 1] == value[0]) {
                        value[vl - 1] = '\0';
                        value++;
                }
                if (!apply_key(c, key, value, origin, lineno, false))
                        log_debug("%s:%u: unknown key %s=, ignoring", origin, lineno, key);
        }
        free(copy);
}

void udev_conf_load(struct udevd_config *c)
{
        const char *path = getenv("TUDEV_UDEV_CONF");
        _cleanup_free_ char *text = NULL;
        size_t len;
        int r;

        if (!path)
                path = UDEV_CONF_PATH;
        r = read_file_bounded(path, UDEV_CONF_MAX, &text, &len);
        if (r == -ENOENT)
                return;
        if (r < 0) {
                log_warning_errno(r, "Failed to read %s, ignoring: %m", path);
                return;
        }
        udev_conf_parse(text, path, c);
}

void proc_cmdline_parse(const char *text, bool in_initrd, struct udevd_config *c)
{
        char *copy = strdup(text), *save = NULL;

        if (!copy)
                return;
        for (char *word = strtok_r(copy, " \t\n", &save); word;
             word = strtok_r(NULL, " \t\n", &save)) {
                const char *key = word;
                if (strncmp(key, "rd.", 3) == 0) {
                        if (!in_initrd)
                                continue;
                        key += 3;
                }
                if (strncmp(key, "udev.", 5) != 0)
                        continue;
                key += 5;
                char *eq = strchr(key, '=');
                const char *value = NULL;
                if (eq) {
                        *eq = '\0';
                        value = eq + 1;
                        /* the kernel passes quotes through */
                        size_t vl = strlen(value);
                        if (vl >= 2 && value[0] == '"' && value[vl - 1] == '"') {
                                eq[vl] = '\0';
                                value++;
                        }
                }
                if (!value && strcmp(key, "blockdev_read_only") != 0) {
                        log_warning("Kernel command line option udev.%s needs a value, ignoring",
                                    key);
                        continue;
                }
                if (!apply_key(c, key, value, "kernel command line", 0, true))
                        log_warning("Unknown udev kernel command line option \"udev.%s\", ignoring",
                                    key);
        }
        free(copy);
}

void proc_cmdline_load(struct udevd_config *c)
{
        const char *override = getenv("SYSTEMD_PROC_CMDLINE");
        _cleanup_free_ char *text = NULL;
        size_t len;
        int r;

        if (override) {
                proc_cmdline_parse(override, access("/etc/initrd-release", F_OK) == 0, c);
                return;
        }
        r = read_file_bounded("/proc/cmdline", PROC_CMDLINE_MAX, &text, &len);
        if (r < 0) {
                log_debug_errno(r, "Failed to read /proc/cmdline, ignoring: %m");
                return;
        }
        proc_cmdline_parse(text, access("/etc/initrd-release", F_OK) == 0, c);
}

void udevd_config_apply(const struct udevd_config *c, struct udevd_settings *s)
{
        if (c->log_level_set)
                log_set_max_level(c->log_level);
        if (c->children_max_set)
                s->children_max = c->children_max;
        if (c->exec_delay_set)
                s->exec_delay_usec = c->exec_delay_usec;
        if (c->event_timeout_set)
                s->event_timeout_usec = c->event_timeout_usec;
        if (c->timeout_signal_set)
                s->timeout_signal = c->timeout_signal;
        if (c->resolve_names_set)
                s->resolve_names = c->resolve_names;
        if (c->blockdev_read_only_set)
                s->blockdev_read_only = c->blockdev_read_only;
        if (c->explain_events_set)
                s->explain_events = c->explain_events;
        if (c->queue_max_events_set)
                s->queue_max_events = c->queue_max_events;
        if (c->queue_max_bytes_set)
                s->queue_max_bytes = c->queue_max_bytes;
}
