/* threads: worker-local */
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "device/db.h"
#include "device/device.h"
#include "exec/exec-udev.h"
#include "proto/monitor-msg.h"
#include "rules/event-exec.h"
#include "rules/rules-exec.h"
#include "rules/udev-event.h"
#include "shared/log.h"
#include "shared/time-util.h"
#include "udevd/event-process.h"
#include "udevd/rules-snapshot.h"

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
        const char *name = strerrorname_np(error);

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
        const char *tagv[DB_ENTRIES_MAX + 1];
        size_t nt = tags ? MIN(tags->n, (size_t)DB_ENTRIES_MAX) : 0;

        if (error)
                add_failure_props(n, -error);
        if (n->overflow)
                log_warning("SEQNUM=%" PRIu64 " %s: properties too large, broadcast truncated",
                            ev->seqnum, ev->devpath);
        for (size_t i = 0; i < nt; i++)
                tagv[i] = tags->items[i];
        tagv[nt] = NULL;
        return broadcaster_send(bc, ev->subsystem, ev->devtype, nt > 0 ? tagv : NULL, n->buf,
                                n->len);
}

/* The processed device: every property of the event, then USEC_INITIALIZED,
 * DEVLINKS, TAGS, CURRENT_TAGS; failure properties if error < 0. */
static int broadcast_event(struct broadcaster *bc, const struct uevent *ev,
                           const struct udev_event *e, int error)
{
        static _Thread_local struct nulstr n;
        static _Thread_local char list[8192];

        n.len = 0;
        n.overflow = false;
        if (udev_event_foreach_property(e, list, sizeof(list), nulstr_emit, &n) < 0)
                n.overflow = true;
        return send_nulstr(bc, ev, &n, &e->tags, error);
}

int event_broadcast_failure(struct broadcaster *bc, const struct uevent *ev, int error)
{
        static _Thread_local struct nulstr n;
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

/* Everything one event needs, owned by the worker for its duration. */
struct event_run {
        struct udevd_snapshot *snap;
        struct device_ctx *ctx;
        struct db_record old;
        struct udev_event e;
        bool e_ready;
        struct spawn_direct spawn;
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
        if (ev->id[0]) {
                r = db_read(w->settings->run_dir, ev->id, &er->old);
                if (r < 0 && r != -ENOENT)
                        log_warning_errno(r, "%s: ignoring unreadable database entry: %m", ev->id);
        }
        er->e.old_db = &er->old;
        er->e.global_props = er->snap ? &er->snap->global_props : NULL;
        er->spawn = (struct spawn_direct){
                .timeout_signal = w->settings->timeout_signal,
                .exec_delay_usec = w->settings->exec_delay_usec,
        };
        /* programs run through the exec helper; directly only without one */
        er->e.spawner = w->settings->exec ? exec_udev_spawner(w->settings->exec)
                                          : spawn_direct_spawner(&er->spawn);
        er->e.start_usec = now_usec(CLOCK_MONOTONIC);
        er->e.timeout_usec = w->settings->event_timeout_usec;
        return 0;
}

static void event_run_done(struct event_run *er)
{
        if (er->e_ready)
                udev_event_done(&er->e);
        db_record_clear(&er->old);
        device_ctx_free(er->ctx);
        snapshot_unref(er->snap);
}

int event_process(struct worker_ctx *w, const struct uevent *ev,
                  bool (*abandoned)(const void *token), const void *token)
{
        struct event_run er = {};
        int r, b;

        log_debug("SEQNUM=%" PRIu64 " %s %s (%s): processing (worker %u)", ev->seqnum,
                  uevent_action_to_string(ev->action), ev->devpath, ev->subsystem, w->id);

        r = event_run_init(w, ev, &er);
        if (r >= 0) {
                r = udev_event_execute(&er.e, er.snap ? er.snap->rules : NULL);
                if (r >= 0) {
                        debug_delay(w, ev);
                        rules_execute_run(&er.e);
                }
        }
        if (r < 0)
                log_warning_errno(r, "SEQNUM=%" PRIu64 " %s: processing failed: %m", ev->seqnum,
                                  ev->devpath);

        if (abandoned && abandoned(token)) {
                log_warning("SEQNUM=%" PRIu64 " %s: finished after the event timeout; "
                            "result discarded", ev->seqnum, ev->devpath);
        } else {
                if (er.e_ready)
                        b = broadcast_event(&w->bc, ev, &er.e, r < 0 ? r : 0);
                else
                        b = event_broadcast_failure(&w->bc, ev, r < 0 ? r : -EIO);
                if (b < 0)
                        log_error_errno(b, "SEQNUM=%" PRIu64 " %s: failed to broadcast: %m",
                                        ev->seqnum, ev->devpath);
                else
                        log_debug("SEQNUM=%" PRIu64 " %s: processed", ev->seqnum, ev->devpath);
        }
        event_run_done(&er);
        return r;
}
