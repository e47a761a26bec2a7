/* threads: worker-local */
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "device/db.h"
#include "proto/monitor-msg.h"
#include "shared/log.h"
#include "shared/time-util.h"
#include "udevd/event-process.h"

/* The device as seen by this event: what rules will later modify. */
struct event_device {
        const struct uevent *ev;     /* borrowed kernel record */
        struct strlist props;        /* "KEY=VALUE" set by rules/builtins/IMPORT/DB (not kernel) */
        struct strlist devlinks;     /* relative to /dev */
        struct strlist tags;         /* all (sticky) tags */
        struct strlist current_tags; /* tags set during this event */
        int link_priority;
        uint64_t usec_initialized;
        bool db_persist;
};

static void event_device_clear(struct event_device *d)
{
        strlist_clear(&d->props);
        strlist_clear(&d->devlinks);
        strlist_clear(&d->tags);
        strlist_clear(&d->current_tags);
}

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

static void nulstr_add_entry(struct nulstr *n, const char *entry)
{
        size_t l = strlen(entry);

        if (n->len + l + 1 > sizeof(n->buf)) {
                n->overflow = true;
                return;
        }
        memcpy(n->buf + n->len, entry, l + 1);
        n->len += l + 1;
}

/* "a b c" style joins into a bounded buffer; returns false if it did not fit. */
static bool join_list(char *out, size_t size, const struct strlist *l, const char *prefix,
                      const char *sep, const char *outer)
{
        size_t o = 0;
        int w;

        out[0] = '\0';
        if (outer) {
                w = snprintf(out, size, "%s", outer);
                o = (size_t)w;
        }
        for (size_t i = 0; i < l->n; i++) {
                w = snprintf(out + o, size - o, "%s%s%s", (i > 0 && !outer) ? sep : "", prefix,
                             l->items[i]);
                if (w < 0 || (size_t)w >= size - o)
                        return false;
                o += (size_t)w;
                if (outer) {
                        w = snprintf(out + o, size - o, "%s", outer);
                        if (w < 0 || (size_t)w >= size - o)
                                return false;
                        o += (size_t)w;
                }
        }
        return true;
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

static int broadcast_device(struct broadcaster *bc, const struct event_device *d, int error)
{
        static _Thread_local struct nulstr n;
        static _Thread_local char list[8192];
        const struct uevent *ev = d->ev;
        const char *tagv[DB_ENTRIES_MAX + 1];
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
        if (d->usec_initialized > 0) {
                snprintf(num, sizeof(num), "%" PRIu64, d->usec_initialized);
                nulstr_add(&n, "USEC_INITIALIZED", num);
        }
        for (size_t i = 0; i < d->props.n; i++)
                nulstr_add_entry(&n, d->props.items[i]);
        if (d->devlinks.n > 0) {
                if (join_list(list, sizeof(list), &d->devlinks, "/dev/", " ", NULL))
                        nulstr_add(&n, "DEVLINKS", list);
                else
                        n.overflow = true;
        }
        if (d->tags.n > 0) {
                if (join_list(list, sizeof(list), &d->tags, "", "", ":"))
                        nulstr_add(&n, "TAGS", list);
                else
                        n.overflow = true;
        }
        if (d->current_tags.n > 0) {
                if (join_list(list, sizeof(list), &d->current_tags, "", "", ":"))
                        nulstr_add(&n, "CURRENT_TAGS", list);
                else
                        n.overflow = true;
        }
        if (error)
                add_failure_props(&n, -error);
        if (n.overflow)
                log_warning("SEQNUM=%" PRIu64 " %s: properties too large, broadcast truncated",
                            ev->seqnum, ev->devpath);

        size_t nt = MIN(d->tags.n, (size_t)DB_ENTRIES_MAX);
        for (size_t i = 0; i < nt; i++)
                tagv[i] = d->tags.items[i];
        tagv[nt] = NULL;

        return broadcaster_send(bc, ev->subsystem, ev->devtype, nt > 0 ? tagv : NULL, n.buf,
                                n.len);
}

int event_broadcast_failure(struct broadcaster *bc, const struct uevent *ev, int error)
{
        struct event_device d = { .ev = ev, .usec_initialized = ev->recv_usec };

        return broadcast_device(bc, &d, error);
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

static int copy_list(struct strlist *dst, const struct strlist *src)
{
        for (size_t i = 0; i < src->n; i++) {
                int r = strlist_add(dst, src->items[i]);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Rules seam: the rules engine (issue 4) runs here and fills d->props,
 * devlinks, tags, current_tags, link_priority. Without rules nothing changes. */
static int run_rules(struct worker_ctx *w, struct event_device *d)
{
        (void)w;
        (void)d;
        return 0;
}

/* RUN seam: programs and RUN{builtin} (issues 3/4) run here, after the DB write. */
static int run_programs(struct worker_ctx *w, struct event_device *d)
{
        (void)w;
        (void)d;
        return 0;
}

static int process_remove(struct worker_ctx *w, struct event_device *d, struct db_record *old)
{
        const struct uevent *ev = d->ev;
        const char *run_dir = w->settings->run_dir;
        int r;

        /* The whole DB record becomes part of the event. */
        r = copy_list(&d->props, &old->properties);
        if (r >= 0)
                r = copy_list(&d->devlinks, &old->devlinks);
        if (r >= 0)
                r = copy_list(&d->tags, &old->tags);
        if (r >= 0)
                r = copy_list(&d->current_tags, &old->current_tags);
        if (r < 0)
                return r;
        d->link_priority = old->link_priority;
        d->usec_initialized = old->usec_initialized > 0 ? old->usec_initialized : ev->recv_usec;

        if (ev->id[0]) {
                r = tags_index_remove(run_dir, ev->id, &old->tags);
                if (r < 0)
                        log_warning_errno(r, "%s: failed to remove tag index entries: %m", ev->id);
                r = db_delete(run_dir, ev->id);
                if (r < 0)
                        log_warning_errno(r, "%s: failed to delete the database entry: %m", ev->id);
        }
        r = run_rules(w, d);
        if (r < 0)
                return r;
        debug_delay(w, ev);
        return run_programs(w, d);
}

static int process_other(struct worker_ctx *w, struct event_device *d, struct db_record *old)
{
        const struct uevent *ev = d->ev;
        const char *run_dir = w->settings->run_dir;
        struct db_record rec = { 0 };
        int r;

        /* Only the old tags are inherited, as sticky (non-current) tags. */
        r = copy_list(&d->tags, &old->tags);
        if (r < 0)
                return r;

        r = run_rules(w, d);
        if (r < 0)
                return r;

        d->usec_initialized = old->usec_initialized > 0 ? old->usec_initialized
                                                        : now_usec(CLOCK_MONOTONIC);
        if (!ev->id[0])
                goto run; /* no subsystem: nothing can be stored */

        r = tags_index_update(run_dir, ev->id, &old->tags, &d->tags);
        if (r < 0)
                log_warning_errno(r, "%s: failed to update the tag index: %m", ev->id);

        /* The record is built from borrowed lists; only the struct is local. */
        rec.devlinks = d->devlinks;
        rec.link_priority = d->link_priority;
        rec.usec_initialized = d->usec_initialized;
        rec.properties = d->props;
        rec.tags = d->tags;
        rec.current_tags = d->current_tags;
        rec.persist = d->db_persist;
        r = db_write(run_dir, ev->id, &rec, ev->major > 0, ev->ifindex > 0);
        if (r < 0)
                return log_error_errno(r, "%s: failed to write the database entry: %m", ev->id);
run:
        debug_delay(w, ev);
        return run_programs(w, d);
}

int event_process(struct worker_ctx *w, const struct uevent *ev,
                  bool (*abandoned)(const void *token), const void *token)
{
        struct event_device d = { .ev = ev };
        struct db_record old = { 0 };
        int r;

        log_debug("SEQNUM=%" PRIu64 " %s %s (%s): processing (worker %u)", ev->seqnum,
                  uevent_action_to_string(ev->action), ev->devpath, ev->subsystem, w->id);

        if (ev->id[0]) {
                r = db_read(w->settings->run_dir, ev->id, &old);
                if (r < 0 && r != -ENOENT)
                        log_warning_errno(r, "%s: ignoring unreadable database entry: %m", ev->id);
        }
        if (ev->action == UEVENT_ACTION_REMOVE)
                r = process_remove(w, &d, &old);
        else
                r = process_other(w, &d, &old);
        if (r < 0)
                log_warning_errno(r, "SEQNUM=%" PRIu64 " %s: processing failed: %m", ev->seqnum,
                                  ev->devpath);

        if (abandoned && abandoned(token)) {
                log_warning("SEQNUM=%" PRIu64 " %s: finished after the event timeout; "
                            "result discarded", ev->seqnum, ev->devpath);
        } else {
                int b = broadcast_device(&w->bc, &d, r < 0 ? r : 0);
                if (b < 0)
                        log_error_errno(b, "SEQNUM=%" PRIu64 " %s: failed to broadcast: %m",
                                        ev->seqnum, ev->devpath);
                else
                        log_debug("SEQNUM=%" PRIu64 " %s: processed", ev->seqnum, ev->devpath);
        }
        db_record_clear(&old);
        event_device_clear(&d);
        return r;
}
