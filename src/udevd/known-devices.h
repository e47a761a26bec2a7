/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (internally locked) */
#pragma once
/* The devices udevd has heard of since it started: for every database id, the
 * identity of the device as its latest kernel event described it (DEVPATH,
 * SUBSYSTEM, DEVTYPE, devnode, device number, interface index).
 *
 * Why: the database (/run/udev/data/<id>) does not record a device's DEVPATH,
 * so after a kernel buffer overrun a device that vanished while its "remove"
 * was lost could not be announced as removed. The listener thread records
 * every event it queues (a "remove" forgets the device); the resync
 * (udevd/resync.h) looks devices up here to synthesize their "remove".
 *
 * Memory: one heap block per device (about 100 bytes plus the strings); the
 * index grows to the largest number of devices seen at once and stays there. */

#include <stddef.h>

#include "proto/uevent.h"

struct known_devices;

/* A copy of one entry; every string is owned by the block (one free()). */
struct known_device {
        const char *devpath;   /* "/devices/..." */
        const char *subsystem;
        const char *devtype;   /* or NULL */
        const char *devnode;   /* absolute "/dev/..." or NULL */
        unsigned major, minor; /* major 0: no device number */
        int ifindex;           /* 0: none */
        char id[];             /* database id */
};

int known_devices_new(struct known_devices **ret);
void known_devices_free(struct known_devices *k);

/* Record events in arrival order (borrowed): "remove" forgets the device, a
 * "move" also forgets the id of DEVPATH_OLD when it differs, anything else
 * records (or refreshes) the device. Allocation failures only lose the
 * record (logged at debug level). */
void known_devices_note(struct known_devices *k, struct uevent *const *evs, size_t n);

/* A copy of the entry of `id` in *ret (free() it): 0, -ENOENT or -ENOMEM. */
int known_devices_get(struct known_devices *k, const char *id, struct known_device **ret);
void known_devices_forget(struct known_devices *k, const char *id);
size_t known_devices_count(struct known_devices *k);
