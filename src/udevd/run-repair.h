/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: manager */
#pragma once
/* Repair of the state a previous udevd left in /run/udev and /dev when it was
 * killed (SIGKILL, crash, power loss of a tmpfs-less /run), run once at
 * start-up before the listener and the workers exist (udevd(8), "UNCLEAN
 * SHUTDOWN"):
 *
 *   1. /run/udev/queue is removed (else `udevadm settle` would wait forever);
 *   2. leftover temporary files of atomic writes are removed: ".#<name><16
 *      hex digits>" regular files in /run/udev/data and symlinks anywhere in
 *      /dev (same file system only);
 *   3. database records of devices that no longer exist are forgotten: tag
 *      index entries, link claims (the link is handed to the next claimant or
 *      removed), /dev/{block,char}/M:m and the record itself. Existence is
 *      decided from the id alone (/sys/dev/{block,char}/M:m, the interface
 *      indexes in /sys/class/net, /sys/bus/S/devices/N or /sys/class/S/N);
 *      a record whose existence cannot be decided is kept;
 *   4. tag index entries without a database record are removed;
 *   5. link stack entries (/run/udev/links/<link>/<id>) whose device has no
 *      record, or whose record does not list that link, are released (the
 *      link is re-resolved among the remaining claimants or removed); a link
 *      left missing or dangling while valid claimants remain is pointed at the
 *      best of them; a stack directory without claimants loses its symlink.
 *
 * What is not repaired here (a coldplug, `udevadm trigger`, does it): records
 * of devices whose events were never processed, claims listed in a record but
 * missing from the stack, and properties of events lost while udevd was down.
 *
 * The helpers below are shared with the overrun resync (udevd/resync.h). */

#include <stdbool.h>
#include <stddef.h>

#include "device/device.h"

struct run_repair_stats {
        unsigned queue_flag;     /* 1 if a stale /run/udev/queue was removed */
        unsigned temp_files;     /* leftover ".#" files removed */
        unsigned stale_records;  /* records of vanished devices forgotten */
        unsigned stale_tags;     /* tag index entries without a record */
        unsigned stale_claims;   /* link stack entries released */
        unsigned links_resolved; /* missing/dangling links pointed at a claimant */
        unsigned links_removed;  /* symlinks of stack directories without claimants */
};

/* Run every step; each failure is logged and the next step runs. Returns 0. */
int run_repair(const struct device_roots *roots, struct run_repair_stats *ret);

/* ---- shared with the resync ---- */

enum presence {
        PRESENCE_UNKNOWN, /* cannot tell from sysfs */
        PRESENCE_GONE,
        PRESENCE_PRESENT,
};

/* A snapshot of the interface indexes in <sys>/class/net, for id lookups. */
struct sysfs_presence;
int sysfs_presence_new(const char *sys_root, struct sysfs_presence **ret);
void sysfs_presence_free(struct sysfs_presence *p);
/* Existence of the device with database id `id` (see step 3 above). */
enum presence sysfs_presence_of_id(const struct sysfs_presence *p, const char *id);

/* Forget a vanished device without any event: tag index entries, link claims,
 * /dev/{block,char}/M:m, then the record. 0 or -errno (of the record's
 * deletion; the other failures are logged). A missing record is fine. */
int device_forget(const struct device_roots *roots, const char *id);

/* ".#<name><16 hex digits>": the temporary names of write_file_atomic() and
 * of the link code. */
bool is_atomic_temp_name(const char *name);
