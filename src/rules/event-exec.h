/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: worker-local */
#pragma once
/* What happens to one event around the rules, shared by the daemon's worker
 * pipeline (udevd/event-process.c) and `udevadm test [--apply]`
 * (the order of systemd-udevd 252's worker; udevd(8) DESCRIPTION):
 *
 *   non-remove: old tags become sticky tags -> (move: drop ID_RENAMING) ->
 *               rules -> (add: NAME renames a network interface) ->
 *               node permissions + links + /dev/{block,char}/M:m ->
 *               USEC_INITIALIZED -> tag index -> DB write
 *   remove:     DB record loaded into the event -> tag index and DB deleted ->
 *               rules -> links released, /dev/{block,char}/M:m removed
 *
 * The RUN list (rules_execute_run()) and the broadcast are the caller's.
 * With ev->dry_run nothing is written (rules only; ATTR/SYSCTL writes are
 * skipped by the evaluator). udevadm replay adds ev->offline: a NAME
 * rename is then taken as done (DEVPATH, INTERFACE, INTERFACE_OLD and
 * ID_RENAMING as after a successful rename) without asking the kernel. All paths come from the event's device_ctx
 * roots: <dev> for nodes and links, <run> for links/, data/ and tags/. */

#include "rules/rules.h"
#include "event/udev-event.h"

/* `ev` must be initialised (udev_event_init) with old_db set by the caller
 * (an empty record when there is none). Returns 0, or -errno if the rules
 * aborted or the DB could not be written (the event failed). */
int udev_event_execute(struct udev_event *ev, const struct rules *rules);

/* The database record the pipeline writes after the rules of a non-remove
 * event (rule-set properties, links relative to /dev, tags, link priority,
 * usec_initialized, persistence), for callers that run with dry_run and keep
 * a database of their own (udevadm replay). *rec must be empty; the caller
 * clears it (db_record_clear()). 0 or -ENOMEM. */
int udev_event_db_record(struct udev_event *ev, struct db_record *rec);

/* The logical devnode ("/dev/sda") of the event device or NULL; buf holds
 * it when it had to be derived from the device view. */
const char *udev_event_devnode(struct udev_event *ev, char *buf, size_t size);

/* Join a list into buf: with `colons` as ":a:b:" (TAGS), else separated
 * by `sep` (DEVLINKS). An empty list gives "". 0 or -ENOBUFS. */
int udev_event_join_list(const struct strlist *l, const char *sep, bool colons, char *buf,
                         size_t size);

/* Property iteration for output (broadcast, udevadm test): every property of
 * the event, then USEC_INITIALIZED, DEVLINKS, TAGS, CURRENT_TAGS as systemd
 * adds them. `emit` is called once per property with a NUL-terminated value
 * (DEVLINKS/TAGS joined into buf). Returns 0 or -ENOBUFS if a joined list did
 * not fit into buf (that property is then skipped). */
int udev_event_foreach_property(const struct udev_event *ev, char *buf, size_t size,
                                void (*emit)(const char *key, const char *value, void *userdata),
                                void *userdata);
