/* threads: worker-local */
#pragma once
/* The per-event pipeline run by a worker thread, in systemd's order
 * (../shared/docs/event-processing.md §4):
 *
 *   build the device view and the udev_event (rules/udev-event.h) from the
 *   kernel record, read the old DB record, then rules/event-exec.h:
 *   non-remove: old tags become sticky -> rules -> node permissions, links,
 *               /dev/{block,char} -> USEC_INITIALIZED -> tag index -> DB write
 *   remove:     old DB record loaded into the event -> tag index and DB
 *               deleted -> rules -> links released
 *   then the RUN list (programs through the spawner) and the broadcast of the
 *   event's properties (+ USEC_INITIALIZED, DEVLINKS, TAGS, CURRENT_TAGS).
 *
 * The rules and global properties come from the manager's snapshot
 * (udevd/rules-snapshot.h): one reference per event.
 *
 * On failure the event is broadcast with UDEV_WORKER_FAILED=1 and
 * UDEV_WORKER_ERRNO/UDEV_WORKER_ERRNO_NAME (§9.3). */

#include <stdbool.h>

#include "proto/uevent.h"
#include "udevd/broadcast.h"
#include "udevd/settings.h"

struct udev;
struct snapshot_holder;

struct worker_ctx {
        unsigned id;
        struct udev *udev;                       /* owned by this thread */
        struct broadcaster bc;                   /* owned by this thread */
        const struct udevd_settings *settings;   /* borrowed, immutable */
        struct snapshot_holder *snapshots;       /* borrowed; NULL = no rules */
};

/* Returns 0 when the event was processed and broadcast, or -errno when it
 * failed (it has then been broadcast with failure properties, unless
 * `abandoned` says the manager gave up on it). `abandoned` may be NULL. */
/* Broadcast the kernel version of `ev` with failure properties for `error`
 * (negative errno), e.g. for an event abandoned after its timeout. */
int event_broadcast_failure(struct broadcaster *bc, const struct uevent *ev, int error);

int event_process(struct worker_ctx *w, const struct uevent *ev,
                  bool (*abandoned)(const void *token), const void *token);
