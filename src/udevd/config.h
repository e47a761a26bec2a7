/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: manager (start-up only, before any thread exists) */
#pragma once
/* Configuration sources other than the command line, with udevd's precedence
 * (udevd(8) CONFIGURATION): built-in defaults < /etc/udev/udev.conf <
 * command line < kernel command line. Each function only overrides what its
 * source sets; invalid values are logged and ignored.
 *
 * For tests, $TUDEV_UDEV_CONF replaces /etc/udev/udev.conf and
 * $SYSTEMD_PROC_CMDLINE replaces the contents of /proc/cmdline (as in systemd). */

#include "udevd/settings.h"

#define UDEV_CONF_PATH "/etc/udev/udev.conf"
#define UDEV_CONF_MAX (64 * 1024)
#define PROC_CMDLINE_MAX (64 * 1024)

/* Settings a configuration source can carry; *_set says it was given. */
struct udevd_config {
        int log_level; bool log_level_set;
        unsigned children_max; bool children_max_set;
        uint64_t exec_delay_usec; bool exec_delay_set;
        uint64_t event_timeout_usec; bool event_timeout_set;
        int timeout_signal; bool timeout_signal_set;
        enum resolve_names resolve_names; bool resolve_names_set;
        bool blockdev_read_only; bool blockdev_read_only_set;
        unsigned explain_events; bool explain_events_set; /* udev.conf only */
        unsigned queue_max_events; bool queue_max_events_set;
        uint64_t queue_max_bytes; bool queue_max_bytes_set;
};

/* Parse udev.conf text (KEY=VALUE lines, '#'/';' comments, optional quotes).
 * `origin` names the file in messages. */
void udev_conf_parse(const char *text, const char *origin, struct udevd_config *c);
/* Read UDEV_CONF_PATH (or $TUDEV_UDEV_CONF); a missing file is fine. */
void udev_conf_load(struct udevd_config *c);

/* Parse a kernel command line: udev.X= and, when in_initrd, rd.udev.X=. */
void proc_cmdline_parse(const char *text, bool in_initrd, struct udevd_config *c);
/* Read /proc/cmdline (or $SYSTEMD_PROC_CMDLINE). */
void proc_cmdline_load(struct udevd_config *c);

/* Copy what `c` sets into the settings. */
void udevd_config_apply(const struct udevd_config *c, struct udevd_settings *s);

/* Signal name ("SIGKILL", "KILL") or number -> signal; -EINVAL. */
int signal_from_string(const char *s);

/* The queue's limits (udevd(8) ERRORS AND OVERLOAD), as --queue-max-events= and
 * queue_max_events= take them: decimal, 1..UDEVD_QUEUE_MAX_EVENTS_LIMIT; and
 * as --queue-max-bytes= and queue_max_bytes= do: decimal bytes, optionally
 * followed by K, M or G (powers of 1024), UDEVD_QUEUE_MAX_BYTES_MIN ..
 * UDEVD_QUEUE_MAX_BYTES_LIMIT. 0 or -EINVAL (*ret unchanged). */
int queue_max_events_from_string(const char *s, unsigned *ret);
int queue_max_bytes_from_string(const char *s, uint64_t *ret);
