/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: none of its own (pure data; the event queue calls it under its lock) */
#pragma once
/* Dependency tracking between events: which earlier live events a new event
 * must wait for (the relation systemd-udevd uses, plus one pair below).
 *
 * An event E conflicts with an earlier live event L when:
 *   - they have the same device id (major:minor, ifindex, subsystem:sysname),
 *   - one devpath equals the other or is a path-prefix of it at a '/'
 *     boundary, also against the other's DEVPATH_OLD in both directions,
 *   - they have the same devnode.
 * (Also, beyond systemd: DEVPATH_OLD against an earlier DEVPATH_OLD, which
 * only serialises concurrent moves and keeps the indexes transitive.)
 *
 * Each event has a node (struct dep_node) that borrows the keys of its uevent
 * record; the record must outlive the node. event_deps_add() registers a node
 * and counts its blockers: the live nodes it conflicts with, each counted
 * once. A node with no blockers may run. event_deps_remove() takes a node out
 * (its event finished or was given up) and decrements its dependants' counts;
 * each dependant reaching zero is reported, in the order the dependants were
 * added. A node stays live from add to remove, whatever its event does in
 * between (running, requeued).
 *
 * Cost: add and remove look up O(depth of the devpath) hash keys plus the
 * events below the devpath; no scan of all live events. No locks, no clock,
 * no I/O: the caller serialises every call on one struct event_deps. */

#include <stdbool.h>
#include <stddef.h>

#include "proto/uevent.h"
#include "shared/hashmap.h"

struct dep_node;

struct event_deps {
        /* private */
        struct hashmap by_id, by_devnode, by_devpath, under;
        unsigned long long serial;
        struct dep_node **scratch;
        size_t n_scratch_alloc;
};

void event_deps_init(struct event_deps *d);
/* Frees the indexes; the nodes are the caller's (dep_node_free()). */
void event_deps_done(struct event_deps *d);

/* A node for `ev` (borrowed) carrying `owner` (returned by dep_node_owner()),
 * not yet added. NULL on allocation failure. */
struct dep_node *dep_node_new(const struct uevent *ev, void *owner);
/* Free a node that is not live (never added, removed, or its event_deps
 * already done with). NULL is a no-op. */
void dep_node_free(struct dep_node *n);
void *dep_node_owner(const struct dep_node *n);
/* Bytes of n's own allocation (the node and its path links), without its
 * dependants array and the shared indexes. */
size_t dep_node_size(const struct dep_node *n);
/* Live nodes added earlier that n still waits for. */
size_t dep_node_blockers(const struct dep_node *n);

/* Register n (not live) after every live node: returns its number of
 * blockers (0: it may run), or -ENOMEM with nothing changed (n not live). */
int event_deps_add(struct event_deps *d, struct dep_node *n);
/* n (live) leaves: out of the indexes, its dependants' counts decremented;
 * `runnable` (may be NULL) is called for each one reaching zero. */
void event_deps_remove(struct event_deps *d, struct dep_node *n,
                       void (*runnable)(struct dep_node *dep, void *userdata), void *userdata);
/* The latest-added live node among those a new node for `ev` would wait
 * for: the event of the same device (or a related one) that ev would run
 * right after. NULL if none, or on allocation failure. Changes nothing
 * observable. */
struct dep_node *event_deps_latest_conflict(struct event_deps *d, const struct uevent *ev);

/* Storm damping (udevd(8) STORM DAMPING): may `newer` be merged into
 * `queued`, an earlier event that no worker has taken yet and that is the
 * latest live event `newer` conflicts with (event_deps_latest_conflict())?
 * True when both are "change" events of the same device (devpath,
 * subsystem, id and devnode equal, no DEVPATH_OLD) and `queued` carries no
 * SYNTH_UUID other than "0" or `newer`'s: an event that a client waits for
 * by its UUID (udevadm trigger --settle) is never absorbed by another. Pure. */
bool event_deps_coalescible(const struct uevent *queued, const struct uevent *newer);

/* Every live node that waits for n is about to be removed too (dropped at
 * shutdown): n forgets them, so that removing n later reports nothing. */
void dep_node_forget_dependants(struct dep_node *n);
