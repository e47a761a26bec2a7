/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (one nlmon_event per thread; udevadm is single-threaded) */
#pragma once
/* Device-event monitor sockets for udevadm (monitor, trigger --settle).
 *
 * Opens NETLINK_KOBJECT_UEVENT sockets on the kernel (1) or udev (2)
 * multicast group and turns each accepted datagram into an nlmon_event, with
 * the acceptance checks of systemd's sd-device monitor
 * (what libudev clients accept): no truncation, length >= 32, kernel
 * group messages only from port 0, no unicasts, SCM_CREDENTIALS from uid 0
 * (or our own uid), a NUL byte, "libudev" header with valid magic/offset or
 * a kernel "ACTION@DEVPATH" message, and ACTION/DEVPATH/SUBSYSTEM/SEQNUM>0.
 * Anything else is dropped silently (debug log).
 *
 * The property list is in the order in which systemd's sd-device reports
 * them (and `udevadm monitor --property` prints them): message order, MAJOR
 * and MINOR moved behind the others, then DEVLINKS, TAGS and CURRENT_TAGS
 * rebuilt from their words; DEVNAME made absolute ("/dev/" + relative name);
 * UDEV_DATABASE_VERSION left out; a key that repeats keeps its first
 * position with the last value. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/monitor-msg.h"
#include "proto/uevent.h"

enum nlmon_group {
        NLMON_GROUP_NONE = 0,
        NLMON_GROUP_KERNEL = 1,
        NLMON_GROUP_UDEV = 2,
};

#define NLMON_RCVBUF_SIZE (128 * 1024 * 1024)
#define NLMON_PROPS_MAX 1024  /* more properties than this: message dropped */
#define NLMON_DEVNAME_MAX (UEVENT_DEVNODE_MAX + 8)

struct nlmon_prop {
        const char *key;
        const char *value;
};

struct nlmon_event {
        enum nlmon_group source;    /* the group of the socket it came from */
        uint64_t recv_usec;         /* CLOCK_MONOTONIC at reception */
        const char *action;         /* never NULL after a successful receive */
        const char *devpath;        /* never NULL */
        const char *subsystem;      /* never NULL */
        const char *devtype;        /* or NULL */
        const char *synth_uuid;     /* SYNTH_UUID or NULL */
        const char *interface_old;  /* INTERFACE_OLD or NULL */
        const char *tags;           /* ":a:b:" (all tags, incl. current ones) or NULL */
        size_t n_props;
        struct nlmon_prop props[NLMON_PROPS_MAX];

        /* private: storage the pointers above refer to */
        struct uevent *kernel;
        char devname[NLMON_DEVNAME_MAX];
        char devlinks[MONITOR_MSG_MAX];
        char all_tags[MONITOR_MSG_MAX];
        char current_tags[MONITOR_MSG_MAX];
        char buf[MONITOR_MSG_MAX];
};

/* Open a non-blocking monitor socket bound to `group` (KERNEL or UDEV), with
 * SO_PASSCRED and a 128 MiB receive buffer. Like libudev, a UDEV socket is
 * bound to no group at all (receives nothing) when /run/udev/control does not
 * exist and /dev is not a devtmpfs (udev not running, e.g. in a container).
 * *ret_fd is owned by the caller. 0 or -errno. */
int nlmon_open(enum nlmon_group group, int *ret_fd);

/* Receive one datagram from `fd` (opened for `group`).
 * Returns 1 with *ev filled in (valid until the next call), 0 if a datagram
 * was dropped (call again), -EAGAIN when nothing is pending, or -errno.
 * A receive-buffer overflow (ENOBUFS) is logged and reported as 0. */
int nlmon_receive(int fd, enum nlmon_group group, struct nlmon_event *ev);

/* Allocate / free an event buffer (large: keep one per socket user). */
struct nlmon_event *nlmon_event_new(void);
void nlmon_event_free(struct nlmon_event *ev);
static inline void nlmon_event_freep(struct nlmon_event **ev) { nlmon_event_free(*ev); }

/* Property value by exact key, or NULL. */
const char *nlmon_event_get(const struct nlmon_event *ev, const char *key);
/* Whether the device carries `tag` in its (sticky) tag set. */
bool nlmon_event_has_tag(const struct nlmon_event *ev, const char *tag);
