/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (pure functions over caller-owned structs) */
#pragma once
/* The scope of a scoped settle (udevadm settle --seqnum/--subsystem/--devpath)
 * and its wire form: the arguments of the "pending" and "pending-count"
 * queries (proto/ctrl-msg.h QUERIES, udevd/manager.c). The daemon filters
 * its queue with event_scope_match(); udevadm builds the arguments with
 * event_scope_format().
 *
 * Arguments: space-separated KEY=VALUE, in this order, each at most once,
 * all optional (none: every event):
 *     seqnum=N       events covering a SEQNUM <= N (N > 0, decimal)
 *     subsystem=S    events of subsystem S (no space or control character)
 *     devpath=P      the device P and the devices below it (P starts with
 *                    '/', no trailing '/'); last, it takes the rest of the
 *                    string, so P may contain spaces
 * An event matches if it matches every given key. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EVENT_SCOPE_SUBSYSTEM_MAX 64 /* NUL included */
#define EVENT_SCOPE_DEVPATH_MAX 256  /* NUL included; a query holds at most 255 bytes */

struct event_scope {
        uint64_t seqnum;                          /* 0: any */
        char subsystem[EVENT_SCOPE_SUBSYSTEM_MAX]; /* "": any */
        char devpath[EVENT_SCOPE_DEVPATH_MAX];     /* "": any */
};

static inline bool event_scope_is_empty(const struct event_scope *s)
{
        return s->seqnum == 0 && !s->subsystem[0] && !s->devpath[0];
}

/* `devpath` is `prefix` or a device below it: "/devices/a" matches
 * "/devices/a" and "/devices/a/b", not "/devices/ab". An empty prefix
 * matches everything. */
bool event_scope_devpath_below(const char *prefix, const char *devpath);

/* Whether a live event is in the scope. first_seqnum: the lowest SEQNUM the
 * event covers (a queued change that absorbed later changes covers
 * first_seqnum..its own SEQNUM, udevd/event-queue.h); the event counts for
 * seqnum=N when first_seqnum <= N. */
bool event_scope_match(const struct event_scope *s, uint64_t first_seqnum,
                       const char *subsystem, const char *devpath);

/* Parse query arguments ("" for none) into *ret. 0, or -EINVAL (unknown or
 * repeated key, keys out of order, bad value) or -ENAMETOOLONG (a value
 * does not fit). */
int event_scope_parse(const char *args, struct event_scope *ret);

/* Write "NAME" or "NAME ARGS" for the scope into buf[size]. Returns the
 * length, or -ENAMETOOLONG if it does not fit, -EINVAL if a value could
 * not be parsed back (space or control character in subsystem, devpath
 * not starting with '/', control character in devpath). */
int event_scope_format(const struct event_scope *s, const char *name, char *buf, size_t size);
