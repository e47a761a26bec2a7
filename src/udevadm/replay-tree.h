/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (one replay_tree per thread; udevadm is single-threaded) */
#pragma once
/* The private directory tree `udevadm replay` runs the rules over: a sysfs
 * tree rebuilt from a recording's device snapshots (record-file.h,
 * record-sysfs.h) and an empty udev run directory for the database the
 * replayed events write. Nothing outside the tree is written.
 *
 *   <root>/sys   the recorded devices, as the snapshots say, applied in
 *                order: a snapshot (S) replaces the files and links of that
 *                device directory and of its subdirectories that are no
 *                devices, then each F/U/L record adds one (F: the recorded
 *                content, mode 0644; U: an empty file of mode 0200, which
 *                the attribute reader refuses as it refuses an unreadable
 *                attribute; L: a relative symlink to the recorded target
 *                inside <root>/sys); G removes the directory with
 *                everything below it. When a snapshot is complete (at the
 *                next record that is no F/U/L), its device is registered
 *                where lookups find it: class/<subsystem>/<sysname> or
 *                bus/<subsystem>/devices/<sysname> after its "subsystem"
 *                link, dev/{block,char}/<major>:<minor> after its "dev" file
 *                (or the MAJOR=/MINOR= lines of its "uevent" file).
 *   <root>/run   the database (data/) of the replayed events.
 *
 * A second component of a file name that would pass through a recorded
 * symlink is refused (-ELOOP), so a recording cannot make the replay write
 * anywhere but below <root>/sys. */

#include <limits.h>
#include <stdbool.h>

#include "device/device.h"
#include "udevadm/record-file.h"

struct replay_tree {
        char root[PATH_MAX - 16];
        char sys[PATH_MAX], run[PATH_MAX];
        struct device_roots roots;      /* sys, run; dev = "/dev" (never written: the
                                         * replay runs the rules with dry_run) */
        /* the snapshot being applied */
        char cur[RECORD_PATH_MAX];      /* its devpath, "" = none */
        char cur_subsystem[RECORD_PATH_MAX]; /* target of its "subsystem" link or "" */
        char cur_dev[32];               /* its "dev" file ("8:0") or "" */
};

/* Create the tree in a new directory "tudev-replay-XXXXXX" under $TMPDIR
 * (or /tmp). 0 or -errno. */
int replay_tree_new(struct replay_tree *t);
/* Apply one record of type DEVICE, GONE, FILE, UNREADABLE or LINK; any
 * other type completes the current snapshot and changes nothing else. 0 or
 * -errno (-ELOOP: a name through a symlink). */
int replay_tree_apply(struct replay_tree *t, const struct record_item *it);
/* Remove the whole tree. */
void replay_tree_remove(struct replay_tree *t);
