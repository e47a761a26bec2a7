/* threads: worker-local */
#pragma once
/* The per-event pipeline run by a worker thread, in systemd's order
 * (../shared/docs/event-processing.md §4):
 *
 *   non-remove: read the old DB record (only its tags are inherited, as sticky
 *               tags) -> rules (seam: issue 4) -> USEC_INITIALIZED (old value or
 *               now) -> tag index -> DB write -> RUN (seam: issue 3/4) -> broadcast
 *   remove:     read the old DB record into the event -> delete tag index and
 *               DB -> rules -> RUN -> broadcast
 *
 * On failure the event is broadcast with UDEV_WORKER_FAILED=1 and
 * UDEV_WORKER_ERRNO/UDEV_WORKER_ERRNO_NAME (§9.3). */

#include <stdbool.h>

#include "proto/uevent.h"
#include "udevd/broadcast.h"
#include "udevd/settings.h"

struct udev;

struct worker_ctx {
        unsigned id;
        struct udev *udev;                       /* owned by this thread */
        struct broadcaster bc;                   /* owned by this thread */
        const struct udevd_settings *settings;   /* borrowed, immutable */
};

/* Returns 0 when the event was processed and broadcast, or -errno when it
 * failed (it has then been broadcast with failure properties, unless
 * `abandoned` says the manager gave up on it). `abandoned` may be NULL. */
/* Broadcast the kernel version of `ev` with failure properties for `error`
 * (negative errno), e.g. for an event abandoned after its timeout. */
int event_broadcast_failure(struct broadcaster *bc, const struct uevent *ev, int error);

int event_process(struct worker_ctx *w, const struct uevent *ev,
                  bool (*abandoned)(const void *token), const void *token);
