/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (a parsed record is immutable and may be read by any thread) */
#pragma once
/* Kernel uevent records.
 *
 * The netlink listener turns each datagram from NETLINK_KOBJECT_UEVENT group 1
 * into one `struct uevent`: a single heap block sized to the message, holding
 * the header, the property index (one slot per string of the message), a
 * private copy of the payload and the derived id/devnode strings; every pointer
 * in the record points into that block (or to a static ""). A 300-byte uevent
 * takes about 600 bytes. After uevent_parse_kernel() returns the record is
 * never modified; the event queue owns it and a worker borrows it. It is never
 * a libudev object.
 *
 * Kernel datagram: "ACTION@DEVPATH\0" then "KEY=VALUE\0" pairs; ACTION,
 * DEVPATH, SUBSYSTEM and SEQNUM among them are required. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define UEVENT_BUFFER_MAX 8192 /* largest datagram accepted (kernel: 2048 + header) */
#define UEVENT_PROPS_MAX 128   /* kernel's UEVENT_NUM_ENVP is 64 */
#define UEVENT_ID_MAX 512      /* buffer for an id, "+subsystem:sysname" (at most 255 used) */
#define UEVENT_DEVNODE_MAX 512 /* longest devnode accepted, NUL included: "/dev/..." */

enum uevent_action {
        UEVENT_ACTION_ADD,
        UEVENT_ACTION_REMOVE,
        UEVENT_ACTION_CHANGE,
        UEVENT_ACTION_MOVE,
        UEVENT_ACTION_ONLINE,
        UEVENT_ACTION_OFFLINE,
        UEVENT_ACTION_BIND,
        UEVENT_ACTION_UNBIND,
        _UEVENT_ACTION_MAX,
        _UEVENT_ACTION_INVALID = -1,
};

const char *uevent_action_to_string(enum uevent_action a);
enum uevent_action uevent_action_from_string(const char *s); /* -1 if unknown */

struct uevent_prop {
        const char *key;   /* NUL-terminated, points into uevent.buf */
        const char *value; /* NUL-terminated, cut at the first '\n' */
};

struct uevent {
        uint64_t seqnum;            /* > 0 */
        enum uevent_action action;
        int ifindex;                /* 0: none */
        uint64_t recv_usec;         /* CLOCK_MONOTONIC µs at reception */
        uint64_t queued_usec;       /* CLOCK_MONOTONIC µs when udevd queued it (0: unset) */
        const char *devpath;        /* "/devices/..." (never NULL) */
        const char *devpath_old;    /* DEVPATH_OLD or NULL */
        const char *subsystem;      /* never NULL */
        const char *devtype;        /* or NULL */
        const char *driver;         /* or NULL */
        const char *sysname;        /* last component of devpath (points into buf) */
        unsigned major, minor;      /* major 0: no device number */
        const char *id;             /* database id: "b8:0", "c13:64", "n3", "+pci:0000:00:1f.2";
                                     * never NULL nor "" in a parsed record */
        const char *devnode;        /* absolute "/dev/sdb", or "" (never NULL) */
        char *buf;                  /* private copy of the payload (buf_len bytes) */
        size_t buf_len;
        size_t alloc_size;          /* bytes of the record's one heap block, as requested
                                     * from malloc (the event queue's budget counts them) */
        size_t n_props;
        struct uevent_prop props[]; /* n_props used, in kernel order, DEVNAME still relative */
};

/* Parse one kernel-format datagram (`len` bytes at `data`). Validates: NUL
 * terminated, "ACTION@DEVPATH" header matching ACTION= and DEVPATH=, known
 * action, SUBSYSTEM present, SEQNUM > 0, numeric MAJOR/MINOR/IFINDEX, no
 * control characters in keys and in the identity values (DEVPATH, SUBSYSTEM,
 * DEVTYPE, DRIVER, DEVNAME; other values are kept verbatim, as real devices
 * put arbitrary bytes in e.g. input names), DEVNAME without "..", at most
 * UEVENT_PROPS_MAX properties, len <= UEVENT_BUFFER_MAX.
 * On success *ret is a new record (free with uevent_free()); on failure returns
 * -EBADMSG (malformed), -E2BIG (too large/too many properties) or -ENOMEM.
 * Pure function of the buffer (no I/O besides a debug log line): fuzzable.
 *
 * Exact rules:
 *  - every string after the header is "KEY=VALUE", KEY matching [A-Za-z0-9_.]+
 *    (so no control characters, spaces or '-' in keys); empty strings rejected;
 *  - each value is cut at its first '\n' (like sd-device); the rest is kept
 *    verbatim: control characters and any bytes >= 0x80 are allowed in ordinary
 *    values (input NAME=, USB strings), but not in the identity values below;
 *  - a repeated key keeps its first position in props[] and takes the last
 *    value (sd-device's hashmap semantics), except ACTION, DEVPATH,
 *    DEVPATH_OLD, SUBSYSTEM, SEQNUM, MAJOR, MINOR, IFINDEX, DEVNAME, whose
 *    repetition rejects the message; the UEVENT_PROPS_MAX limit counts raw
 *    strings, repeats included;
 *  - ACTION one of the 8 known actions and equal to the header's action;
 *    DEVPATH equal to the header's path, DEVPATH/DEVPATH_OLD "/"-rooted with
 *    non-empty components, none "." or "..", no trailing '/', no control chars;
 *  - SUBSYSTEM non-empty, without '/' or control chars; DEVTYPE and DRIVER, if
 *    present, non-empty without control chars;
 *  - SEQNUM: decimal digits only (no sign/space/hex), 1..UINT64_MAX;
 *    MAJOR/MINOR: digits only, <= UINT32_MAX; MINOR without MAJOR (or with
 *    MAJOR=0) gives minor 0; IFINDEX: digits only, 1..INT_MAX;
 *  - DEVNAME relative ("sdb", "bus/usb/001/002") or absolute starting with
 *    "/dev/"; the part after "/dev/" must have non-empty components, none "."
 *    or "..", no control chars; devnode = "/dev/" + that part; too long for
 *    UEVENT_DEVNODE_MAX: -E2BIG;
 *  - the id must be computable (device_id_format()), else -EBADMSG (e.g.
 *    SUBSYSTEM=drivers without a "/drivers/" component) or -E2BIG (too long). */
int uevent_parse_kernel(const void *data, size_t len, uint64_t recv_usec, struct uevent **ret);

/* The kernel datagram of `ev` as a listener of the kernel's group would get
 * it: "ACTION@DEVPATH", then KEY=VALUE for each property in the kernel's
 * order, each NUL-terminated; as parsed, so a repeated key appears once with
 * its last value and a value ends at its first newline (the original bytes
 * for every datagram without those). At most ev->buf_len bytes. Returns the
 * length written to buf, or -ENOBUFS if `size` is too small. */
int uevent_format_kernel(const struct uevent *ev, char *buf, size_t size);

/* Property lookup by exact key; NULL if absent. */
const char *uevent_get(const struct uevent *ev, const char *key);

void uevent_free(struct uevent *ev);
static inline void uevent_freep(struct uevent **p) { uevent_free(*p); }

/* The whole disk whose node a worker locks for `ev` (systemd's
 * device_get_whole_disk()): for non-remove events of subsystem block whose
 * sysname does not start with "dm-", "md" or "drbd": the devpath of the disk
 * itself (devtype disk) or of its parent (devtype partition), copied to buf.
 * false if the event takes no lock (or buf is too small). Pure function. */
bool uevent_lock_disk(const struct uevent *ev, char *buf, size_t size);
/* Whether udev.blockdev_read_only sets the device of `ev` read-only (systemd:
 * worker_mark_block_device_read_only()): "add" events of subsystem block with
 * a device node (disks and partitions), except sysnames starting with "dm-",
 * "md", "drbd", "loop", "nbd" or "zram" (stacked or memory-backed devices).
 * Only "add": a device set writable later stays so across triggers. Pure. */
bool uevent_marks_read_only(const struct uevent *ev);

/* Compute the database id of a device (its file name in /run/udev/data and
 * the tag index) into buf: sd-device's device_get_device_id(), the one copy
 * that kernel uevents (here), the device model (device/device.c) and udevadm's
 * device view (udevadm/udevice.c) use.
 * major > 0: "b" (subsystem "block") or "c" (any other) + "M:m"; else
 * ifindex > 0: "n" + ifindex; else "+subsystem:sysname" with sysname = last
 * devpath component as is ('!' kept); for subsystem "drivers":
 * "+drivers:<S>:sysname", S = the devpath component right before the first
 * "/drivers/" or a final "/drivers" (sd-device's rule: "/bus/pci/drivers/e1000e"
 * gives "+drivers:pci:e1000e", "/bus/pci/drivers" "+drivers:pci:drivers").
 * A minor without a major (major 0) and ifindex <= 0 count as absent.
 * Returns 0, or -ENOENT if the device has no id (no subsystem), -ENAMETOOLONG
 * (does not fit in size, or longer than a file name, 255), -EINVAL (subsystem
 * with '/', empty/"."/".." sysname, "drivers" without such a component or
 * with an empty, "." or ".." one). */
int device_id_format(char *buf, size_t size, const char *subsystem, const char *devpath,
                     unsigned major, unsigned minor, int ifindex);
