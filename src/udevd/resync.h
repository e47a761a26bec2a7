/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: manager */
#pragma once
/* Recovery from a kernel uevent buffer overrun (udevd(8), "KERNEL BUFFER
 * OVERRUNS"). When the kernel could not deliver uevents (ENOBUFS), the events
 * in the gap are gone for good; once the queue is idle the manager compares
 * what exists in sysfs with the database and repairs the difference:
 *
 *   - database records of devices that no longer exist: a device udevd has
 *     heard of (udevd/known-devices.h) gets a synthesized "remove" event,
 *     queued and processed like the kernel's (rules, database, tags, links,
 *     broadcast; SEQNUM = the last kernel SEQNUM received, plus the property
 *     TUDEV_RESYNC=1). A device whose record exists but whose DEVPATH udevd
 *     never saw (e.g. from before a restart) is forgotten without an event
 *     (run-repair.h: device_forget). A known device whose device number now
 *     belongs to a different DEVPATH gets its "remove" and the new device an
 *     "add";
 *   - devices in sysfs with a device number or an interface index but no
 *     record: "add" is written to their uevent file (as `udevadm trigger`
 *     does), so the kernel sends the event again;
 *   - nothing else: devices without a device number or interface index
 *     usually have no record, so a lost "add" of theirs cannot be told from a
 *     processed one; lost "change", "move", "bind" etc. of existing devices
 *     are not replayed (a "change" for every device would be a full coldplug).
 *
 * The caller pauses the queue's dispatching while this runs. */

#include <stdint.h>

#include "device/device.h"

struct event_queue;
struct known_devices;

struct resync_params {
        const struct device_roots *roots;
        struct known_devices *known; /* borrowed */
        struct event_queue *queue;   /* borrowed: synthesized events go here */
        uint64_t seqnum;             /* SEQNUM of synthesized events (>= 1) */
        /* Only devices whose DEVPATH matches this glob (fnmatch, no flags),
         * and only records udevd knows the DEVPATH of; NULL = everything.
         * For tests (--debug-resync-match=). */
        const char *match;
};

struct resync_result {
        unsigned records;    /* database records checked */
        unsigned devices;    /* sysfs devices with a device number/ifindex seen */
        unsigned added;      /* "add" written to a uevent file */
        unsigned removed;    /* "remove" events synthesized */
        unsigned forgotten;  /* records of unknown vanished devices forgotten */
        uint64_t usec;       /* time the comparison took */
};

/* Compare and repair. 0 or -errno (out of memory, unreadable /run/udev/data);
 * per-device failures are logged and counted out. */
int resync_run(const struct resync_params *p, struct resync_result *ret);
