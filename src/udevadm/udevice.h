/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (one object per thread; udevadm is single-threaded) */
#pragma once
/* A device as systemd 252's sd-device library sees it, for `udevadm info`
 * and the filters of `udevadm trigger` (udevadm(8) UDEVADM INFO and UDEVADM
 * TRIGGER; the database format is in device/db.h).
 *
 * Scripts parse `udevadm info` output, so the details follow sd-device:
 *
 *  - Lookup: a syspath is resolved (symlinks chased) and must lie on sysfs
 *    below /sys; below /sys/devices/ it needs a "uevent" file, elsewhere it
 *    must be a directory. A /dev path goes through stat()'s st_rdev and
 *    /sys/dev/{block,char}/M:m. Ids ("b8:0", "c1:3", "n3", "+pci:0000:00:01.0")
 *    as in the tag index.
 *  - Everything is read lazily, and a property is appended to the ordered
 *    property list when the value it comes from is first read (DEVPATH at
 *    creation, SUBSYSTEM when the subsystem is read, the uevent file's keys
 *    when it is read, the database's USEC_INITIALIZED and E: entries, DRIVER
 *    when the driver is read, DEVLINKS/TAGS/CURRENT_TAGS when the properties
 *    are listed). Replacing a value keeps the key's position. This is why the
 *    order of `udevadm info` properties depends on how the device was found.
 *  - The database record is read with db_parse() (src/device/db.h); lines
 *    that sd-device would skip are counted as malformed (db_bad_line).
 *
 * Devlinks and tags keep the order of the database file (sd-device keeps
 * them in hash sets: its order changes from run to run).
 *
 * Paths: the sysfs mount point is "/sys" and the udev run directory
 * "/run/udev" unless changed with udevice_set_roots() (tests).
 *
 * Why this is not src/device/device.c (the daemon's model). Both follow
 * sd-device's lookup rules, but they answer different callers:
 *
 *  - Property list. device.c keeps the kernel's properties only (the event's
 *    uevent record, or the uevent file) and hands the database over as a
 *    separate parsed record (device_get_db()); the rules engine merges them.
 *    `udevadm info` must print one list in sd-device's order, which depends
 *    on which value was read first (see above), with USEC_INITIALIZED,
 *    database E: entries, DRIVER, DEVLINKS, TAGS and CURRENT_TAGS woven in,
 *    and a replaced value keeping its position. That order is the public
 *    interface here and has no place in the daemon's model.
 *  - Database as a reader from outside. udevadm reads the records another
 *    process (tudev or systemd-udevd) wrote, keeps devlinks and tags in file
 *    order, reports the first line sd-device would skip (db_bad_line) and a
 *    record that exists but cannot be read (db_error); device.c reads only the
 *    record of the event it is handling, once.
 *  - Lookup. udevadm takes what a user types: /dev paths and symlinks
 *    (stat()'s st_rdev, then /sys/dev/{block,char}), ".device" unit names,
 *    ids, paths with or without the /sys prefix, and checks that /sys is
 *    sysfs (statfs magic). The daemon starts from a kernel record and a
 *    devnum, ifindex or syspath that rules name, under roots set per context
 *    (tests), with no sysfs check.
 *  - Lifetime and limits. device.c objects live in a per-event device_ctx
 *    (at most 4096 devices; the same syspath gives the same object; attribute
 *    reads, failures included, cached for the event so a rule sees one
 *    value; uevent file at most 8 KiB, attributes cut at 4 KiB). udevice
 *    objects are owned one by one by udevadm's verbs, monitor events come in
 *    as "sealed" devices (udevice_new_from_event(): the libudev message,
 *    not the kernel's), attributes are read fresh each time and sysfs files
 *    up to 4 MiB, as sd-device's read_virtual_file() allows. The devnode is
 *    "/dev/..." as the kernel names it, not made absolute under a dev root.
 *
 * What could be shared (pure functions over strings, below both layers in
 * src/device/, with a unit test each, then called from both files): the
 * sysname and sysnum of a devpath (load_sysname() and device_set_names() are
 * the same code), the subsystem when there is no "subsystem" link ("module",
 * "drivers", "subsystem"; here component-wise with path_startswith() and
 * the driver's subsystem kept, there a plain prefix test), the uevent file's
 * line splitting (both: lines end at '\n' or '\r', an unterminated last
 * line and lines without '=' are skipped, MAJOR/MINOR taken apart; this file
 * also validates DEVMODE and DISKSEQ) and the database id, which both get
 * from proto/uevent.h. The parent walk differs (device.c skips
 * /devices/virtual/<x> without a look; this file asks sysfs for each
 * ancestor) and would need a test against sd-device on real trees before
 * either moved to the other's rule. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "device/db.h"

#define UDEVICE_SYSFS_ROOT "/sys"
#define UDEVICE_RUN_DIR "/run/udev"
#define UDEVICE_VIRTUAL_FILE_MAX (4U * 1024U * 1024U - 2U) /* sysfs/uevent reads */

/* Both strings borrowed for the rest of the process; NULL keeps the default.
 * With a sysfs root other than "/sys" the sysfs-magic check is skipped. */
void udevice_set_roots(const char *sysfs_root, const char *run_dir);
const char *udevice_sysfs_root(void);
const char *udevice_run_dir(void);

struct udevice_prop {
        char *key;
        char *value;
};

struct udevice {
        char *syspath;                  /* sysfs root + devpath, owned */
        const char *devpath;            /* "/devices/...", points into syspath */

        struct udevice_prop *props;     /* ordered, owned */
        size_t n_props, cap_props;

        /* private: lazily loaded state */
        bool uevent_loaded, subsystem_set, driver_set, db_loaded, sealed;
        bool parent_set, devlinks_outdated, tags_outdated;
        char *subsystem, *driver_subsystem, *driver, *devtype, *devname, *sysname;
        const char *sysnum;             /* points into sysname, or NULL */
        unsigned major, minor;          /* major 0: no device number */
        int ifindex;                    /* 0: none */
        uint64_t diskseq;
        char *id;

        bool initialized;               /* a database file exists */
        int devlink_priority;
        struct strlist devlinks;        /* "/dev/..." */
        struct strlist tags, current_tags;
        unsigned db_bad_line;           /* first malformed line of the db file, 0: none */
        int db_error;                   /* the db file exists but could not be read */

        struct udevice *parent;         /* owned */
};

struct udevice *udevice_free(struct udevice *d);
static inline void udevice_freep(struct udevice **d) { udevice_free(*d); }

/* Constructors: *ret owned by the caller. 0 or -errno; -ENODEV when the
 * device does not exist. */
/* A sysfs path (absolute or relative; strict: must start with "/sys/"). */
int udevice_new_from_syspath(const char *path, bool strict, struct udevice **ret);
/* An already verified devpath ("/devices/..."), as the enumerator lists
 * them (no checks). */
int udevice_new_from_devpath(const char *devpath, struct udevice **ret);
/* A /dev node or symlink ("/dev/block/M:m" and "/dev/char/M:m" need not exist). */
int udevice_new_from_devname(const char *devname, struct udevice **ret);
/* /dev/... -> devname, else syspath (not strict). */
int udevice_new_from_path(const char *path, struct udevice **ret);
int udevice_new_from_devnum(char type, unsigned major, unsigned minor, struct udevice **ret);
int udevice_new_from_ifindex(int ifindex, struct udevice **ret);
int udevice_new_from_subsystem_sysname(const char *subsystem, const char *sysname,
                                       struct udevice **ret);
/* "b8:0", "c1:3", "n3", "+subsystem:sysname". -EINVAL if not an id. */
int udevice_new_from_device_id(const char *id, struct udevice **ret);
/* A received udev event ("sealed": neither the uevent file nor the
 * database is read). props: key/value pairs in the order sd-device's
 * monitor reports them (netlink-monitor.h), borrowed. */
struct udevice_kv {
        const char *key;
        const char *value;
};
int udevice_new_from_event(const char *devpath, const struct udevice_kv *props, size_t n,
                           struct udevice **ret);

/* udevadm's device argument: a path, then (if `prefix` is given and the
 * argument does not start with it) prefix + argument, then for arguments
 * without '/' a device id or a ".device" unit name (turned into its path;
 * the service manager is not asked). -EINVAL: not a usable argument,
 * -ENODEV: no such device. */
int udevice_find(const char *arg, const char *prefix, struct udevice **ret);

/* Getters: 0 (value borrowed from d) or -ENOENT if the device has none, or
 * another -errno on read errors. */
int udevice_get_sysname(struct udevice *d, const char **ret);
int udevice_get_sysnum(struct udevice *d, const char **ret);
int udevice_get_subsystem(struct udevice *d, const char **ret);
int udevice_get_devtype(struct udevice *d, const char **ret);
int udevice_get_devnum(struct udevice *d, unsigned *ret_major, unsigned *ret_minor);
int udevice_get_ifindex(struct udevice *d, int *ret);
int udevice_get_devname(struct udevice *d, const char **ret);
int udevice_get_diskseq(struct udevice *d, uint64_t *ret);
int udevice_get_driver(struct udevice *d, const char **ret);
/* The database id ("b8:0", "n3", "+pci:0000:00:01.0", ...). */
int udevice_get_id(struct udevice *d, const char **ret);
/* The first ancestor that is a device; borrowed (owned by d). -ENOENT at the top. */
int udevice_get_parent(struct udevice *d, struct udevice **ret);

/* Read /run/udev/data/<id> once (a missing file is not an error and is
 * retried by the next call). 0 or -errno. */
int udevice_read_db(struct udevice *d);
/* 1 if a database file exists, 0 if not, -errno. */
int udevice_is_initialized(struct udevice *d);
int udevice_get_devlink_priority(struct udevice *d, int *ret);
bool udevice_has_tag(struct udevice *d, const char *tag);

/* Complete the property list (uevent file, database, DEVLINKS, TAGS,
 * CURRENT_TAGS); then d->props / d->n_props are the device's properties.
 * 0 or -errno (then sd-device shows no properties at all). */
int udevice_properties_prepare(struct udevice *d);
/* Value of a property (after preparing), or NULL. */
const char *udevice_get_property(struct udevice *d, const char *key);

/* Attribute names (relative paths such as "power/control") of the device:
 * files and symlinks readable or writable by their owner, in the device's
 * directory and its subdirectories that are not devices themselves; sorted
 * with strcmp. *ret: owned array of owned strings (free with
 * udevice_strv_free). 0 or -errno. */
int udevice_list_sysattrs(struct udevice *d, char ***ret, size_t *ret_n);
void udevice_strv_free(char **l, size_t n);
/* Read an attribute as sd-device does: trailing newlines dropped; symlinks
 * only for driver/subsystem/module (their target's name; others -EINVAL);
 * directories -EISDIR; files not readable by their owner -EPERM.
 * *ret owned. 0 or -errno. */
int udevice_read_sysattr(struct udevice *d, const char *name, char **ret);

/* Read a virtual (sysfs) file the way sd-device does: one read() sized by
 * st_size (up to UDEVICE_VIRTUAL_FILE_MAX), NUL added. *ret owned. 0 or -errno. */
int read_virtual_file(const char *path, char **ret, size_t *ret_len);

/* systemd's path_startswith(): component-wise prefix test; returns the rest
 * of `path` after the prefix ("" if equal) or NULL. */
const char *path_startswith(const char *path, const char *prefix);
