/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (one enumerator per thread; udevadm is single-threaded) */
#pragma once
/* sysfs device enumeration for `udevadm trigger`, yielding the same set and
 * order as systemd 252's sd-device enumerator (device-enumerator.c):
 *
 *   devices:    every entry of /sys/bus/<S>/devices/ and /sys/class/<S>/
 *               (symlinks resolved; under /sys/devices a device needs a
 *               "uevent" file, elsewhere it must be a directory), plus all
 *               its ancestors that are devices. A device is listed only if
 *               it has a subsystem and passes the filters; ancestors without
 *               a subsystem (e.g. /sys/devices/pci0000:00) are not listed.
 *               With parent filters: the parents and every device found by
 *               crawling their directories (symlinks not followed). With tag
 *               filters: the devices of the tag index.
 *   subsystems: /sys/module/<M> ("module"), /sys/bus/<S> ("subsystem"),
 *               /sys/bus/<S>/drivers/<D> ("drivers"), plus their device
 *               ancestors (/sys/bus/<S>/drivers).
 *   all:        both.
 *
 * Subsystem of a device: basename of its "subsystem" link, else (like
 * sd-device) "module" below /module/, "drivers" for .../drivers/... and
 * .../drivers, "subsystem" below /class/ and /bus/; otherwise none.
 *
 * Linear: every path (entry or ancestor) is probed once; an ancestor walk
 * stops at the first path whose ancestors have been walked already.
 *
 * Order (device_enum_sort): one batch per prioritized subsystem (its devices
 * plus their listed ancestors), then the rest; each batch sorted by devpath
 * component by component (parents before children), devices below
 * ".../block/md*" and ".../block/dm-*" after the others of their batch, and
 * a sound card's controlC* device after the card's other devices (the order
 * systemd intends; v252's comparator misses this case, see v252_sound_order). */

#include <stdbool.h>
#include <stddef.h>

#include "shared/hashmap.h"

#define SYSFS_DEFAULT_ROOT "/sys"
#define DEVICE_ENUM_UUID_MAX 37 /* 8-4-4-4-12 + NUL */

enum device_enum_type {
        DEVICE_ENUM_DEVICES,
        DEVICE_ENUM_SUBSYSTEMS,
        DEVICE_ENUM_ALL,
};

/* Which filters a candidate must pass (the sysname of an entry of a
 * bus/class directory is tested on the directory entry's name instead;
 * devices under a --parent-match parent are found by crawling it; devices
 * taken from a tag directory carry that tag). */
enum {
        DEVICE_ENUM_CHECK_SYSNAME = 1 << 0,
        DEVICE_ENUM_CHECK_PARENT = 1 << 1,
        DEVICE_ENUM_CHECK_TAGS = 1 << 2,
        DEVICE_ENUM_CHECK_ALL = (1 << 3) - 1,
};

/* Filters: glob lists (fnmatch, flags 0). All arrays and strings borrowed. */
struct device_enum_filter {
        const char *const *subsystem_match;   size_t n_subsystem_match;   /* any */
        const char *const *subsystem_nomatch; size_t n_subsystem_nomatch; /* none */
        const char *const *sysname_match;     size_t n_sysname_match;     /* any */
        /* Devpaths ("/devices/..."): only these devices and those below them.
         * With DEVICES/ALL their directories are crawled instead of the
         * bus/class/module directories, and no ancestors are added. */
        const char *const *parents;           size_t n_parents;
        /* With DEVICES/ALL: the devices listed in <tags_dir>/<tag>/ of any of
         * these tags (resolved with resolve_id) instead of a sysfs scan; with
         * SUBSYSTEMS the tags are left to `match` (DEVICE_ENUM_CHECK_TAGS). */
        const char *const *tags;              size_t n_tags;
        const char *tags_dir;                 /* e.g. "/run/udev/tags" */
        /* Device id of the tag index -> devpath into buf; 1 found, 0 the
         * device is gone, <0 error. Required with tags. */
        int (*resolve_id)(void *userdata, const char *id, char *buf, size_t size);
        /* Further tests (attributes, properties, tags if `flags` has
         * DEVICE_ENUM_CHECK_TAGS, initialized state) of a device that passed
         * the others: 1 listed, 0 not, <0 error (not listed; the scan
         * reports the first such error). NULL: none. */
        int (*match)(void *userdata, const char *devpath, const char *subsystem, unsigned flags);
        void *userdata;
};

struct sysdev {
        const char *subsystem;      /* NULL: none */
        bool included;              /* listed (has a subsystem, passes the filters) */
        bool ancestors_done;        /* private: ancestors walked */
        bool batched;               /* private: placed by device_enum_sort() */
        char uuid[DEVICE_ENUM_UUID_MAX]; /* free for the user (trigger: SYNTH_UUID) */
        size_t devpath_len;
        char devpath[];             /* "/devices/...", relative to the sysfs root; the
                                     * subsystem string is stored after its NUL */
};

struct device_enum {
        int root_fd;                /* O_DIRECTORY of the sysfs root */
        const struct device_enum_filter *filter;
        struct hashmap seen;        /* devpath -> struct sysdev (every probed path), owns them */
        struct sysdev **devs;       /* listed devices, owned array of borrowed pointers */
        size_t n_devs, cap_devs;
        int error;                  /* first non-fatal error of the scan, or 0 */
        bool v252_sound_order;      /* sort sound devices as v252 really does (no
                                     * controlC* rule): for byte-identical
                                     * `udevadm info -e/-t` output */
};

/* root: sysfs mount point ("/sys"). filter: borrowed until device_enum_done().
 * 0 or -errno. */
int device_enum_init(struct device_enum *e, const char *root,
                     const struct device_enum_filter *filter);
void device_enum_done(struct device_enum *e);

/* Fill e->devs. Problems with single paths are logged at debug level; the
 * first error other than a vanished path is returned after the whole scan
 * (systemd then refuses to trigger anything). 0 or -errno. */
int device_enum_scan(struct device_enum *e, enum device_enum_type type);

/* List the ancestors of devpath that pass the filters (except the parent
 * filter), from the nearest up to one that is listed already. For
 * `udevadm info --tree DEVICE`. 0 or -errno. */
int device_enum_add_ancestors(struct device_enum *e, const char *devpath);

/* Order e->devs as described above; `prioritized` (borrowed) lists subsystem
 * names in priority order. 0 or -ENOMEM. */
int device_enum_sort(struct device_enum *e, const char *const *prioritized, size_t n_prioritized);

/* Component-wise path order ("/a/b" < "/a/b/c" < "/a/b-c"), as systemd's
 * path_compare(). Exposed for tests. */
int device_enum_path_compare(const char *a, const char *b);
/* The full devpath order of one batch. Exposed for tests. */
int device_enum_devpath_compare(const char *a, const char *b);
