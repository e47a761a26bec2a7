/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (one record_sysfs per thread; udevadm is single-threaded) */
#pragma once
/* The sysfs state `udevadm record` writes before each event
 * (docs/design.md "Record and replay"): a snapshot of the event device's
 * directory and of each ancestor directory below /devices that is a device
 * (has a "uevent" file), parents first. A snapshot holds "uevent",
 * "subsystem", "driver" and "dev" first (a cap never drops them), then the
 * rest in name order:
 *
 *   - every regular file of the directory and of its subdirectories that
 *     are no devices ("power/control", "queue/rotational"; one level deep):
 *     its first RECORD_FILE_DATA_MAX bytes (what the rules' attribute reader
 *     sees), or "unreadable" when it has no read permission or reading it
 *     failed;
 *   - every symlink of the directory itself whose target lies below the sys
 *     root ("subsystem", "driver", "device", ...), as that canonical path.
 *
 * Past RECORD_ENTRIES_MAX entries the rest of a directory is left out
 * (counted in entries_skipped); names the format cannot hold likewise
 * (names_skipped). A device whose snapshot equals the last one written for
 * its devpath is not written again. A "remove" event's own device is
 * written as gone (G) whatever is left of its directory, so is the old
 * path of a "move" when it no longer exists; a gone device's remembered
 * snapshots (its own and its children's) are forgotten. */

#include <stdint.h>

#include "proto/uevent.h"
#include "shared/hashmap.h"
#include "udevadm/record-file.h"

#define RECORD_SYSFS_DEVICES_MAX 65536 /* devpaths remembered for the comparison */

struct record_sysfs {
        const char *sys;              /* "/sys" (borrowed; tests: a fake tree) */
        struct hashmap last;          /* devpath -> private entry: last snapshot's hash */
        uint64_t entries_skipped;
        uint64_t names_skipped;
        uint64_t snapshots;           /* device snapshots written */
};

void record_sysfs_init(struct record_sysfs *s, const char *sys_root);
void record_sysfs_done(struct record_sysfs *s);

/* Write the state event `ev` is to see (S/F/U/L/G records) through `w`.
 * 0, or -errno of the writer (-E2BIG: the size cap) or -ENOMEM. Unreadable
 * directories are skipped (debug log). */
int record_sysfs_event(struct record_sysfs *s, struct record_writer *w, const struct uevent *ev);
