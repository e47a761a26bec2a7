/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: none of its own (pure data; the watch module calls it under its lock) */
#pragma once
/* Rate limit of the "change" events the inotify watch synthesizes
 * (udevd/watch.h, udevd(8) STORM DAMPING): at most one synthesized change per
 * device is pending, i.e. written and not yet started by a worker. A device's
 * entry is made when its change is written and cleared when an event of the
 * device starts (the worker ends the watch then, watch_end()); further close
 * events of the device within `window_usec` of the write are dropped and
 * counted. After the window a change is written again, in case the first
 * was lost (a kernel buffer overrun) or waits in a stopped queue (the queue
 * merges it into the pending one then, udevd/event-queue.h).
 *
 * No clock, no lock, no I/O: the caller passes `now` and serialises calls.
 * At most `max_entries` devices are tracked; when full and no entry has
 * expired, changes are allowed untracked (never dropped wrongly). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shared/hashmap.h"

struct watch_limit {
        /* private */
        struct hashmap map; /* device id -> struct watch_limit_entry */
        uint64_t window_usec;
        size_t max_entries;
        uint64_t dropped;
};

void watch_limit_init(struct watch_limit *wl, uint64_t window_usec, size_t max_entries);
void watch_limit_done(struct watch_limit *wl);

/* A close event of device `id` at `now`: true if a change is to be written
 * (now pending), false if it is dropped (counted). */
bool watch_limit_admit(struct watch_limit *wl, const char *id, uint64_t now);
/* An event of device `id` started: nothing is pending for it any more. */
void watch_limit_clear(struct watch_limit *wl, const char *id);
/* Close events dropped so far. */
uint64_t watch_limit_dropped(const struct watch_limit *wl);
