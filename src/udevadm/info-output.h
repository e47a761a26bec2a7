/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (udevadm is single-threaded) */
#pragma once
/* Output pieces of `udevadm info` shared by its modes (info.c, info-tree.c):
 * the device record, terminal colours and glyphs, database problem reports. */

#include <stdbool.h>

#include "udevadm/udevice.h"

/* Colours as systemd chooses them: $SYSTEMD_COLORS (boolean, "16", "256"),
 * else none with $NO_COLOR, else only when stdout and stderr are terminals
 * and $TERM is set and not "dumb". */
enum info_color {
        INFO_COLOR_NAME,        /* P: M: R: */
        INFO_COLOR_CLASS,       /* U: T: */
        INFO_COLOR_NODE,        /* D: I: N: L: S: */
        INFO_COLOR_DISKSEQ,     /* Q: */
        INFO_COLOR_DRIVER,      /* V: */
        INFO_COLOR_NORMAL,
};
const char *info_color(enum info_color c);

/* The record of one device: "<prefix>X: value" lines (P M R U T D I N L S Q
 * V E), then an empty line if prefix is NULL or empty. */
void info_print_record(struct udevice *d, const char *prefix);

/* Log a database file of d that could not be read or had malformed lines
 * (sd-device skips those lines silently). Returns -EBADMSG/-errno if there
 * was such a problem, else 0. */
int info_check_db(const struct udevice *d);

/* Whether the tree glyphs may be UTF-8 (systemd's is_locale_utf8()). */
bool info_locale_is_utf8(void);
