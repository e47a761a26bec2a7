/* threads: any (a parsed record is immutable and may be read by any thread) */
#pragma once
/* Kernel uevent records.
 *
 * The netlink listener turns each datagram from NETLINK_KOBJECT_UEVENT group 1
 * into one `struct uevent`: a single heap block holding a private copy of the
 * payload plus an index of its properties. After uevent_parse_kernel() returns
 * the record is never modified; the event queue owns it and a worker borrows it.
 * It is never a libudev object.
 *
 * Kernel datagram: "ACTION@DEVPATH\0" then "KEY=VALUE\0" pairs (see
 * ../shared/docs/event-processing.md §2). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define UEVENT_BUFFER_MAX 8192 /* largest datagram accepted (kernel: 2048 + header) */
#define UEVENT_PROPS_MAX 128   /* kernel's UEVENT_NUM_ENVP is 64 */
#define UEVENT_ID_MAX 512      /* "+subsystem:sysname" */
#define UEVENT_DEVNODE_MAX 512 /* "/dev/..." */

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
        uint64_t recv_usec;         /* CLOCK_MONOTONIC µs at reception */
        const char *devpath;        /* "/devices/..." (never NULL) */
        const char *devpath_old;    /* DEVPATH_OLD or NULL */
        const char *subsystem;      /* never NULL */
        const char *devtype;        /* or NULL */
        const char *driver;         /* or NULL */
        const char *sysname;        /* last component of devpath (points into buf) */
        unsigned major, minor;      /* major 0: no device number */
        int ifindex;                /* 0: none */
        char id[UEVENT_ID_MAX];     /* database id: "b8:0", "c13:64", "n3", "+pci:0000:00:1f.2"; "" if none */
        char devnode[UEVENT_DEVNODE_MAX]; /* absolute "/dev/sdb" or "" */
        size_t n_props;
        struct uevent_prop props[UEVENT_PROPS_MAX]; /* in kernel order, DEVNAME still relative */
        size_t buf_len;
        char buf[]; /* private copy of the payload */
};

/* Parse one kernel-format datagram (`len` bytes at `data`). Validates: NUL
 * terminated, "ACTION@DEVPATH" header matching ACTION= and DEVPATH=, known
 * action, SUBSYSTEM present, SEQNUM > 0, numeric MAJOR/MINOR/IFINDEX, no
 * control characters other than the '\n' cut, DEVNAME without "..", at most
 * UEVENT_PROPS_MAX properties, len <= UEVENT_BUFFER_MAX.
 * On success *ret is a new record (free with uevent_free()); on failure returns
 * -EBADMSG (malformed), -E2BIG (too large/too many properties) or -ENOMEM. */
int uevent_parse_kernel(const void *data, size_t len, uint64_t recv_usec, struct uevent **ret);

/* Property lookup by exact key; NULL if absent. */
const char *uevent_get(const struct uevent *ev, const char *key);

void uevent_free(struct uevent *ev);
static inline void uevent_freep(struct uevent **p) { uevent_free(*p); }

/* Compute the database id of a device (wire-formats.md §2.1) into buf.
 * Returns 0, or -ENOENT if the device has no id (no subsystem), -ENAMETOOLONG. */
int device_id_format(char *buf, size_t size, const char *subsystem, const char *devpath,
                     unsigned major, unsigned minor, int ifindex);
