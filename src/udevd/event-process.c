/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: worker-local (event_broadcast_failure() also on the manager thread) */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "device/db.h"
#include "device/device.h"
#include "exec/exec-udev.h"
#include "proto/monitor-msg.h"
#include "rules/event-exec.h"
#include "rules/rules-exec.h"
#include "rules/rules-trace.h"
#include "event/udev-event.h"
#include "shared/compat.h"
#include "shared/log.h"
#include "shared/time-util.h"
#include "udevd/event-process.h"
#include "udevd/event-queue.h"
#include "udevd/explain-ring.h"
#include "udevd/rules-snapshot.h"
#include "udevd/watch.h"

/* Bounded "KEY=VALUE\0" buffer for the broadcast. */
struct nulstr {
        char buf[MONITOR_MSG_MAX - MONITOR_MSG_HEADER_SIZE - 64];
        size_t len;
        bool overflow;
};

static void nulstr_add(struct nulstr *n, const char *key, const char *value)
{
        size_t kl = strlen(key), vl = strlen(value);

        if (n->len + kl + vl + 2 > sizeof(n->buf)) {
                n->overflow = true;
                return;
        }
        memcpy(n->buf + n->len, key, kl);
        n->buf[n->len + kl] = '=';
        memcpy(n->buf + n->len + kl + 1, value, vl);
        n->buf[n->len + kl + 1 + vl] = '\0';
        n->len += kl + vl + 2;
}

static void add_failure_props(struct nulstr *n, int error)
{
        char num[16];
        const char *name = errno_name(error);

        nulstr_add(n, "UDEV_WORKER_FAILED", "1");
        snprintf(num, sizeof(num), "%d", error);
        nulstr_add(n, "UDEV_WORKER_ERRNO", num);
        if (name)
                nulstr_add(n, "UDEV_WORKER_ERRNO_NAME", name);
}

static void nulstr_emit(const char *key, const char *value, void *userdata)
{
        nulstr_add(userdata, key, value);
}

static int send_nulstr(struct broadcaster *bc, const struct uevent *ev, struct nulstr *n,
                       const struct strlist *tags, int error)
{
        /* The tags feed the message's 64-bit bloom filter. A device has a
         * few; a large list (10,000 TAG+= rules) goes into a heap array
         * rather than a stack frame sized for the worst case. If that
         * allocation fails, the first 63 feed the filter; with 4 bits per
         * tag they leave one of the 64 unset only by a rare chance. */
        const char *small[64], **tagv = small, **big = NULL;
        size_t nt = tags ? tags->n : 0;
        int r;

        if (nt >= ARRAY_SIZE(small)) {
                big = malloc((nt + 1) * sizeof(*big));
                if (big)
                        tagv = big;
                else
                        nt = ARRAY_SIZE(small) - 1;
        }
        if (error)
                add_failure_props(n, -error);
        if (n->overflow)
                log_warning("SEQNUM=%" PRIu64 " %s: properties too large, broadcast truncated",
                            ev->seqnum, ev->devpath);
        for (size_t i = 0; i < nt; i++)
                tagv[i] = tags->items[i];
        tagv[nt] = NULL;
        r = broadcaster_send(bc, ev->subsystem, ev->devtype, nt > 0 ? tagv : NULL, n->buf,
                             n->len);
        free(big);
        return r;
}

/* The processed device: every property of the event, then USEC_INITIALIZED,
 * DEVLINKS, TAGS, CURRENT_TAGS; failure properties if error < 0. */
static int broadcast_event(struct broadcaster *bc, const struct uevent *ev,
                           const struct udev_event *e, int error)
{
        /* Automatic, not _Thread_local: static TLS is zero-filled for every
         * thread at creation, making all of it resident in every worker;
         * on the stack only the pages actually written are. */
        struct nulstr n;
        char list[8192];

        n.len = 0;
        n.overflow = false;
        if (udev_event_foreach_property(e, list, sizeof(list), nulstr_emit, &n) < 0)
                n.overflow = true;
        return send_nulstr(bc, ev, &n, &e->tags, error);
}

int event_broadcast_failure(struct broadcaster *bc, const struct uevent *ev, int error)
{
        struct nulstr n; /* not _Thread_local: see broadcast_event() */
        char num[32];

        n.len = 0;
        n.overflow = false;
        for (size_t i = 0; i < ev->n_props; i++) {
                const struct uevent_prop *p = &ev->props[i];
                if (streq(p->key, "DEVNAME") && ev->devnode[0])
                        nulstr_add(&n, "DEVNAME", ev->devnode);
                else
                        nulstr_add(&n, p->key, p->value);
        }
        snprintf(num, sizeof(num), "%" PRIu64, ev->recv_usec);
        nulstr_add(&n, "USEC_INITIALIZED", num);
        return send_nulstr(bc, ev, &n, NULL, error);
}

static void debug_delay(struct worker_ctx *w, const struct uevent *ev)
{
        const struct udevd_settings *s = w->settings;

        if (s->debug_event_delay_usec == 0)
                return;
        if (s->debug_event_delay_match && fnmatch(s->debug_event_delay_match, ev->devpath, 0) != 0)
                return;
        struct timespec ts = {
                .tv_sec = (time_t)(s->debug_event_delay_usec / USEC_PER_SEC),
                .tv_nsec = (long)(s->debug_event_delay_usec % USEC_PER_SEC * NSEC_PER_USEC),
        };
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

/* The spawner the rules see: the real one, with the program counted and
 * shown in the worker's program slot while it runs. */
struct tracked_spawner {
        struct udev_spawner inner;
        struct worker_program *slot; /* may be NULL */
        uint64_t seqnum;
};

static int tracked_spawn(void *userdata, const char *cmd, char *const envp[], bool is_run,
                         uint64_t deadline_usec, char *out, size_t out_size, bool *truncated)
{
        struct tracked_spawner *t = userdata;
        int r;

        if (t->slot) {
                size_t n = strcspn(cmd, " \t");

                pthread_mutex_lock(&t->slot->lock);
                if (n >= sizeof(t->slot->name))
                        n = sizeof(t->slot->name) - 1;
                memcpy(t->slot->name, cmd, n);
                t->slot->name[n] = '\0';
                t->slot->seqnum = t->seqnum;
                t->slot->start_usec = now_usec(CLOCK_MONOTONIC);
                t->slot->running = true;
                pthread_mutex_unlock(&t->slot->lock);
        }
        r = t->inner.spawn(t->inner.userdata, cmd, envp, is_run, deadline_usec, out, out_size,
                           truncated);
        if (t->slot) {
                pthread_mutex_lock(&t->slot->lock);
                t->slot->running = false;
                pthread_mutex_unlock(&t->slot->lock);
        }
        stats_count_program(r == 0 ? STATS_PROGRAM_OK
                            : r == -ETIME ? STATS_PROGRAM_KILLED : STATS_PROGRAM_FAILED);
        return r;
}

/* Everything one event needs, owned by the worker for its duration. */
struct event_run {
        struct udevd_snapshot *snap;
        struct device_ctx *ctx;
        struct db_record no_old; /* the empty record of a device without one */
        struct udev_event e;
        bool e_ready;
        struct spawn_direct spawn;
        struct tracked_spawner tracked;
        struct explain_ring *explain; /* where the trace goes; NULL = not traced */
};

static int event_run_init(struct worker_ctx *w, const struct uevent *ev, struct event_run *er)
{
        const struct device_roots roots = {
                .sys = "/sys", .dev = "/dev", .run = w->settings->run_dir,
        };
        struct device *dev;
        int r;

        er->snap = w->snapshots ? snapshot_get(w->snapshots) : NULL;
        r = device_ctx_new(&roots, &er->ctx);
        if (r < 0)
                return r;
        r = device_from_uevent(er->ctx, ev, &dev);
        if (r < 0)
                return r;
        r = udev_event_init(&er->e, er->ctx, dev, ev, ev->action);
        if (r < 0)
                return r;
        er->e_ready = true;
        /* The old record is read through the device, which keeps it: a
         * builtin asking whether the device is initialized (blkid) reuses it. */
        er->e.old_db = &er->no_old;
        if (ev->id[0]) {
                const struct db_record *old;

                r = device_get_db(dev, &old);
                if (r >= 0)
                        er->e.old_db = old;
                else if (r != -ENOENT)
                        log_warning_errno(r, "%s: ignoring unreadable database entry: %m", ev->id);
        }
        er->e.global_props = er->snap ? &er->snap->global_props : NULL;
        er->spawn = (struct spawn_direct){
                .timeout_signal = w->settings->timeout_signal,
                .exec_delay_usec = w->settings->exec_delay_usec,
        };
        /* programs run through the exec helper; directly only without one */
        er->tracked = (struct tracked_spawner){
                .inner = w->settings->exec ? exec_udev_spawner(w->settings->exec)
                                           : spawn_direct_spawner(&er->spawn),
                .slot = w->program,
                .seqnum = ev->seqnum,
        };
        er->e.spawner = (struct udev_spawner){ .spawn = tracked_spawn, .userdata = &er->tracked };
        er->e.start_usec = now_usec(CLOCK_MONOTONIC);
        er->e.timeout_usec = w->settings->event_timeout_usec;
        er->e.mac = &w->settings->mac;
        /* a compact trace of every event, for udevadm explain */
        er->explain = er->snap && er->snap->rules ? explain_ring_global() : NULL;
        if (er->explain) {
                er->e.trace = explain_thread_trace();
                if (er->e.trace)
                        rules_trace_set_generation(er->e.trace, er->snap->generation);
        }
        return 0;
}

static void event_run_done(struct event_run *er)
{
        if (er->e_ready)
                udev_event_done(&er->e);
        device_ctx_free(er->ctx);
        snapshot_unref(er->snap);
}

static bool errno_is_device_absent(int r)
{
        return r == -ENODEV || r == -ENXIO || r == -ENOENT;
}

/* Block device locking, as systemd's worker_lock_whole_disk() (and
 * systemd.io/BLOCK_DEVICE_LOCKING): take flock(LOCK_SH|LOCK_NB) on the node
 * of the event's whole disk, held until the event is done. Returns 0
 * with *ret_fd = the locked fd, or -1 when no lock applies (not a block
 * device, dm-/md/drbd, remove, device or node gone, node cannot be opened);
 * -EAGAIN when another process holds LOCK_EX; any other flock() error fails
 * the event. */
static int lock_whole_disk(struct event_run *er, const struct uevent *ev, int *ret_fd)
{
        char devpath[PATH_MAX];
        struct device *disk = er->e.dev;
        _cleanup_close_ int fd = -1;
        unsigned ma, mi;
        const char *node;
        struct stat st;
        int r;

        *ret_fd = -1;
        if (!uevent_lock_disk(ev, devpath, sizeof(devpath)))
                return 0;
        if (!streq(devpath, ev->devpath) &&
            (device_get_parent(er->e.dev, &disk) < 0 || !streq(device_devpath(disk), devpath)))
                return 0; /* the disk is gone */
        if (device_get_devnode(disk, &node) < 0 || device_get_devnum(disk, &ma, &mi) < 0)
                return 0;
        fd = open(node, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        if (fd < 0) {
                /* systemd fails the event unless the device is gone; a disk
                 * we may not open (EPERM from a security module, ...) is not
                 * worth losing its events: go on without the lock. */
                r = negative_errno();
                if (!errno_is_device_absent(r))
                        log_debug_errno(r, "SEQNUM=%" PRIu64 " %s: cannot open %s to lock it, "
                                        "going on without the lock: %m", ev->seqnum, ev->devpath,
                                        node);
                return 0;
        }
        if (fstat(fd, &st) < 0 || !S_ISBLK(st.st_mode) || st.st_rdev != makedev(ma, mi))
                return 0; /* not the disk's node (any more) */
        if (flock(fd, LOCK_SH | LOCK_NB) < 0) {
                r = negative_errno();
                if (r == -EWOULDBLOCK)
                        return -EAGAIN;
                return log_debug_errno(r, "SEQNUM=%" PRIu64 " %s: failed to lock %s: %m",
                                       ev->seqnum, ev->devpath, node);
        }
        *ret_fd = TAKE_FD(fd);
        return 0;
}

/* udev.blockdev_read_only: BLKROSET on the node of a new disk or partition
 * (which ones: uevent_marks_read_only()). Failures are logged; the event
 * goes on, as in systemd. */
static void mark_read_only(const struct worker_ctx *w, struct event_run *er,
                           const struct uevent *ev)
{
        _cleanup_close_ int fd = -1;
        const char *node;
        int on = 1;

        if (!w->settings->blockdev_read_only || ev->action != UEVENT_ACTION_ADD ||
            !streq(ev->subsystem, "block"))
                return;
        if (!uevent_marks_read_only(ev) || device_get_devnode(er->e.dev, &node) < 0) {
                log_debug("SEQNUM=%" PRIu64 " %s: not a device udev.blockdev_read_only "
                          "marks read-only", ev->seqnum, ev->devpath);
                return;
        }
        fd = open(node, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
        if (fd < 0) {
                log_debug_errno(errno, "SEQNUM=%" PRIu64 " %s: cannot open %s to mark it "
                                "read-only, ignoring: %m", ev->seqnum, ev->devpath, node);
                return;
        }
        if (ioctl(fd, BLKROSET, &on) < 0) {
                log_warning_errno(errno, "SEQNUM=%" PRIu64 " %s: failed to mark block device "
                                  "%s read-only: %m", ev->seqnum, ev->devpath, node);
                return;
        }
        log_info("SEQNUM=%" PRIu64 " %s: marked block device %s read-only "
                 "(udev.blockdev_read_only)", ev->seqnum, ev->devpath, node);
}

/* No watch while the event runs: ended before the rules, for every action
 * (remove too). */
static void watch_stop(struct worker_ctx *w, const struct uevent *ev)
{
        int r;

        if (!w->watch || !ev->id[0] || !ev->devnode[0])
                return;
        r = watch_end(w->watch, ev->id);
        if (r < 0)
                log_warning_errno(r, "SEQNUM=%" PRIu64 " %s: failed to remove the inotify "
                                  "watch, ignoring: %m", ev->seqnum, ev->devpath);
}

/* Watch again after RUN, before the broadcast, if the rules said so (never
 * after remove). */
static void watch_restart(struct worker_ctx *w, const struct uevent *ev,
                          const struct udev_event *e)
{
        if (!w->watch || !e->inotify_watch || ev->action == UEVENT_ACTION_REMOVE ||
            !ev->id[0] || !ev->devnode[0])
                return;
        (void)watch_begin(w->watch, ev->id, ev->devnode); /* failures logged (debug) */
}

int event_process(struct worker_ctx *w, const struct uevent *ev,
                  bool (*abandoned)(const void *token), const void *token)
{
        _cleanup_close_ int lock_fd = -1;
        struct event_run er = {};
        int r, b;

        log_debug("SEQNUM=%" PRIu64 " %s %s (%s): processing (worker %u)", ev->seqnum,
                  uevent_action_to_string(ev->action), ev->devpath, ev->subsystem, w->id);

        w->timing.rules_done = w->timing.db_done = w->timing.run_done = 0;
        w->timing.broadcast = 0;
        r = event_run_init(w, ev, &er);
        if (r >= 0)
                r = lock_whole_disk(&er, ev, &lock_fd);
        if (r == -EAGAIN) {
                log_debug("SEQNUM=%" PRIu64 " %s: block device is locked by another process, "
                          "requeueing the event", ev->seqnum, ev->devpath);
                event_run_done(&er);
                return EVENT_PROCESS_LOCKED;
        }
        if (r >= 0) {
                mark_read_only(w, &er, ev);
                watch_stop(w, ev);
                r = udev_event_execute(&er.e, er.snap ? er.snap->rules : NULL);
                w->timing.rules_done = er.e.rules_done_usec;
                w->timing.db_done = now_usec(CLOCK_MONOTONIC);
                if (r >= 0) {
                        debug_delay(w, ev);
                        rules_execute_run(&er.e);
                        w->timing.run_done = now_usec(CLOCK_MONOTONIC);
                        watch_restart(w, ev, &er.e);
                }
        }
        if (r < 0)
                log_warning_errno(r, "SEQNUM=%" PRIu64 " %s: processing failed: %m", ev->seqnum,
                                  ev->devpath);
        /* only when the rules ran for this event */
        if (er.e.trace && rules_trace_seqnum(er.e.trace) == ev->seqnum)
                explain_ring_push(er.explain, er.e.trace, er.snap->rules);

        if (abandoned && abandoned(token)) {
                log_warning("SEQNUM=%" PRIu64 " %s: finished after the event timeout; "
                            "result discarded", ev->seqnum, ev->devpath);
        } else {
                if (er.e_ready)
                        b = broadcast_event(&w->bc, ev, &er.e, r < 0 ? r : 0);
                else
                        b = event_broadcast_failure(&w->bc, ev, r < 0 ? r : -EIO);
                if (b >= 0 && w->settings->kernel_broadcast)
                        b = broadcaster_send_kernel(&w->bc, BROADCAST_KERNEL_GROUPS, ev);
                if (b < 0)
                        log_error_errno(b, "SEQNUM=%" PRIu64 " %s: failed to broadcast: %m",
                                        ev->seqnum, ev->devpath);
                else
                        w->timing.broadcast = now_usec(CLOCK_MONOTONIC);
                if (b >= 0)
                        log_debug("SEQNUM=%" PRIu64 " %s: processed", ev->seqnum, ev->devpath);
        }
        event_run_done(&er);
        log_set_thread_max_level(-1); /* OPTIONS+="log_level=" lasts one event */
        return r;
}
