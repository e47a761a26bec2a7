/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: worker-local (one event per thread; the queue runs one event per device) */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "device/db.h"
#include "device/node.h"
#include "rules/event-exec.h"
#include "rules/rules-exec.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "shared/time-util.h"

#define PROP_KEY_MAX 512

const char *udev_event_devnode(struct udev_event *ev, char *buf, size_t size)
{
        const struct device_roots *roots = device_ctx_roots(ev->ctx);
        const char *v = proplist_get(&ev->props, "DEVNAME"), *rooted;
        size_t dl;

        if (v && strncmp(v, "/dev/", 5) == 0)
                return v;
        if (device_get_devnode(ev->dev, &rooted) < 0)
                return NULL;
        dl = strlen(roots->dev);
        if (strncmp(rooted, roots->dev, dl) != 0 || rooted[dl] != '/')
                return NULL;
        if (snprintf(buf, size, "/dev%s", rooted + dl) >= (int)size)
                return NULL;
        return buf;
}

/* ---- node information of the event device ---- */

struct node_info {
        struct node_device nd;
        char devnode[NODE_PATH_MAX];
        bool has_devnum;
        bool has_ifindex;
};

static void node_info_init(struct udev_event *ev, struct node_info *ni)
{
        const char *id = NULL, *dn;
        int ifindex = 0;

        memset(ni, 0, sizeof(*ni));
        (void)device_get_id(ev->dev, &id);
        (void)device_get_devnum(ev->dev, &ni->nd.major, &ni->nd.minor);
        (void)device_get_subsystem(ev->dev, &ni->nd.subsystem);
        (void)device_get_devtype(ev->dev, &ni->nd.devtype);
        ni->has_devnum = ni->nd.major > 0;
        ni->has_ifindex = device_get_ifindex(ev->dev, &ifindex) >= 0 && ifindex > 0;
        dn = udev_event_devnode(ev, ni->devnode, sizeof(ni->devnode));
        ni->nd.id = id;
        ni->nd.devnode = dn;
        ni->nd.sysnum = device_sysnum(ev->dev);
        ni->nd.diskseq = proplist_get(&ev->props, "DISKSEQ");
        ni->nd.priority = ev->link_priority;
}

/* Node permissions: the rules' OWNER/GROUP/MODE; each one the rules did not
 * set comes from the uevent's DEVUID/DEVGID/DEVMODE. */
static void perms_from_event(struct udev_event *ev, struct node_perms *p)
{
        const char *v;
        char *end;

        *p = (struct node_perms){ .uid = ev->uid, .uid_set = ev->uid_set, .gid = ev->gid,
                                  .gid_set = ev->gid_set, .mode = ev->mode,
                                  .mode_set = ev->mode_set, .seclabels = &ev->seclabels,
                                  .mac = ev->mac };
        if (!p->uid_set && (v = proplist_get(&ev->props, "DEVUID")) && *v) {
                unsigned long u = strtoul(v, &end, 10);
                if (!*end && u < UINT32_MAX) {
                        p->uid = (uid_t)u;
                        p->uid_set = true;
                }
        }
        if (!p->gid_set && (v = proplist_get(&ev->props, "DEVGID")) && *v) {
                unsigned long g = strtoul(v, &end, 10);
                if (!*end && g < UINT32_MAX) {
                        p->gid = (gid_t)g;
                        p->gid_set = true;
                }
        }
        if (!p->mode_set && (v = proplist_get(&ev->props, "DEVMODE")) && *v) {
                unsigned long m = strtoul(v, &end, 8);
                if (!*end && m <= 07777) {
                        p->mode = (mode_t)m;
                        p->mode_set = true;
                }
        }
}

/* ---- DB record <-> event ---- */

static int copy_list(struct strlist *dst, const struct strlist *src, const char *prefix)
{
        char buf[NODE_PATH_MAX];

        for (size_t i = 0; src && i < src->n; i++) {
                const char *s = src->items[i];
                int r;

                if (prefix) {
                        if (snprintf(buf, sizeof(buf), "%s%s", prefix, s) >= (int)sizeof(buf))
                                continue;
                        s = buf;
                }
                r = strlist_add_unique(dst, s);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* remove: the whole record becomes part of the event. */
static int event_load_db(struct udev_event *ev, const struct db_record *db)
{
        char key[PROP_KEY_MAX];
        int r;

        for (size_t i = 0; i < db->properties.n; i++) {
                const char *e = db->properties.items[i], *eq = strchr(e, '=');

                if (!eq || (size_t)(eq - e) >= sizeof(key))
                        continue;
                memcpy(key, e, (size_t)(eq - e));
                key[eq - e] = '\0';
                r = proplist_set(&ev->props, key, eq + 1, false);
                if (r < 0)
                        return r;
        }
        r = copy_list(&ev->devlinks, &db->devlinks, "/dev/");
        if (r >= 0)
                r = copy_list(&ev->tags, &db->tags, NULL);
        if (r >= 0)
                r = copy_list(&ev->current_tags, &db->current_tags, NULL);
        if (r < 0)
                return r;
        ev->link_priority = db->link_priority;
        if (db->usec_initialized > 0)
                ev->usec_initialized = db->usec_initialized;
        return 0;
}

static void db_record_from_event(struct udev_event *ev, struct db_record *rec)
{
        rec->link_priority = ev->link_priority;
        rec->usec_initialized = ev->usec_initialized;
        rec->persist = ev->db_persist;
}

/* The DB stores rule-set properties and links relative to /dev. */
static int build_db_record(struct udev_event *ev, struct db_record *rec)
{
        int r;

        db_record_from_event(ev, rec);
        for (size_t i = 0; i < ev->props.n; i++) {
                const struct prop *p = &ev->props.items[i];
                char *kv;

                if (p->from_kernel || p->key[0] == '.')
                        continue;
                if (asprintf(&kv, "%s=%s", p->key, p->value) < 0)
                        return -ENOMEM;
                r = strlist_add(&rec->properties, kv);
                free(kv);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < ev->devlinks.n; i++) {
                const char *l = ev->devlinks.items[i];
                r = strlist_add(&rec->devlinks, strncmp(l, "/dev/", 5) == 0 ? l + 5 : l);
                if (r < 0)
                        return r;
        }
        r = copy_list(&rec->tags, &ev->tags, NULL);
        if (r >= 0)
                r = copy_list(&rec->current_tags, &ev->current_tags, NULL);
        return r;
}

int udev_event_db_record(struct udev_event *ev, struct db_record *rec)
{
        return build_db_record(ev, rec);
}

/* ---- the pipelines ---- */

static int execute_remove(struct udev_event *ev, const struct rules *rules, struct node_info *ni)
{
        const struct device_roots *roots = device_ctx_roots(ev->ctx);
        int r;

        if (ev->old_db) {
                r = event_load_db(ev, ev->old_db);
                if (r < 0)
                        return r;
        }
        ni->nd.priority = ev->link_priority;
        if (!ev->dry_run && ni->nd.id) {
                if (ev->old_db) {
                        r = tags_index_remove(roots->run, ni->nd.id, &ev->old_db->tags);
                        if (r < 0)
                                log_debug_errno(r, "%s: Failed to remove tag index entries, "
                                                "ignoring: %m", ni->nd.id);
                }
                /* nothing to unlink when the event found no record */
                r = ev->old_db && ev->old_db->absent ? 0 : db_delete(roots->run, ni->nd.id);
                if (r < 0)
                        log_debug_errno(r, "%s: Failed to delete the database entry, ignoring: %m",
                                        ni->nd.id);
        }
        r = rules ? rules_apply(rules, ev) : 0;
        ev->rules_done_usec = now_usec(CLOCK_MONOTONIC);
        if (!ev->dry_run && ni->has_devnum && ni->nd.id && ni->nd.devnode)
                (void)node_remove(roots, &ni->nd, &ev->devlinks);
        return r;
}

/* Replace the last component of DEVPATH (INTERFACE_OLD/INTERFACE only
 * live for this event, like DEVPATH_OLD: not stored). */
static int event_rename_props(struct udev_event *ev, const char *oldname, const char *newname)
{
        const char *devpath = proplist_get(&ev->props, "DEVPATH");
        char buf[NODE_PATH_MAX];
        const char *slash;
        int r = 0;

        if (devpath && (slash = strrchr(devpath, '/')) &&
            snprintf(buf, sizeof(buf), "%.*s/%s", (int)(slash - devpath), devpath, newname) <
                    (int)sizeof(buf))
                r = proplist_set(&ev->props, "DEVPATH", buf, true);
        if (r >= 0 && proplist_get(&ev->props, "INTERFACE")) {
                r = proplist_set(&ev->props, "INTERFACE_OLD", oldname, true);
                if (r >= 0)
                        r = proplist_set(&ev->props, "INTERFACE", newname, true);
        }
        return r;
}

/* The old record with ID_RENAMING=1, written before the rename so that
 * listeners seeing the kernel's RTM_NEWLINK find it (as systemd does). */
static void write_renaming_db(struct udev_event *ev, struct node_info *ni)
{
        const struct device_roots *roots = device_ctx_roots(ev->ctx);
        struct db_record rec = {};
        int r = 0;

        if (!ni->nd.id)
                return;
        if (ev->old_db) {
                rec.link_priority = ev->old_db->link_priority;
                rec.usec_initialized = ev->old_db->usec_initialized;
                rec.persist = ev->old_db->persist;
                r = copy_list(&rec.properties, &ev->old_db->properties, NULL);
                if (r >= 0)
                        r = copy_list(&rec.tags, &ev->old_db->tags, NULL);
                if (r >= 0)
                        r = copy_list(&rec.current_tags, &ev->old_db->current_tags, NULL);
        }
        if (r >= 0)
                r = strlist_add(&rec.properties, "ID_RENAMING=1");
        if (r >= 0)
                r = db_write(roots->run, ni->nd.id, &rec, false, true);
        if (r < 0)
                log_debug_errno(r, "%s: Failed to update the database before renaming: %m",
                                ni->nd.id);
        db_record_clear(&rec);
}

/* NAME= on add renames the interface (rtnetlink, before node and DB
 * handling; udevd(8) DESCRIPTION). Like systemd 255 the
 * event's DEVPATH/INTERFACE are only switched when the kernel accepted the
 * new name. Returns 0 or -errno (the event fails: name taken, ...). */
static int rename_netif(struct udev_event *ev, struct node_info *ni)
{
        const char *oldname = device_sysname(ev->dev);
        int ifindex = 0, r;

        if (!ev->name || ev->action != UEVENT_ACTION_ADD || streq(ev->name, oldname))
                return 0;
        if (device_get_ifindex(ev->dev, &ifindex) < 0 || ifindex <= 0)
                return 0;
        if (!netif_name_valid(ev->name)) {
                log_warning("%s: Invalid network interface name, ignoring: %s", oldname,
                            ev->name);
                return 0;
        }
        if (ev->dry_run && !ev->offline) {
                log_info("%s: would rename network interface %i to '%s' (not applied)", oldname,
                         ifindex, ev->name);
                return 0;
        }
        r = proplist_set(&ev->props, "ID_RENAMING", "1", false);
        if (r < 0)
                return r;
        /* offline (replay): the recording holds what the kernel did next (a move) */
        if (ev->offline)
                return event_rename_props(ev, oldname, ev->name);
        write_renaming_db(ev, ni);
        r = netif_rename(ifindex, ev->name, oldname);
        if (r < 0) {
                /* not renamed: no ID_RENAMING, the old record as it was (v255) */
                (void)proplist_unset(&ev->props, "ID_RENAMING");
                if (ni->nd.id && ev->old_db)
                        (void)db_write(device_ctx_roots(ev->ctx)->run, ni->nd.id, ev->old_db,
                                       false, true);
        }
        if (r == -EBUSY) {
                log_info("%s: Network interface '%s' is already up, cannot rename to '%s'.",
                         oldname, oldname, ev->name);
                return 0;
        }
        if (r == -ENODEV) {
                log_warning("%s: Network interface %i is gone, not renamed to '%s'.", oldname,
                            ifindex, ev->name);
                return 0;
        }
        if (r < 0)
                return log_error_errno(r, "%s: Failed to rename network interface %i from '%s' "
                                       "to '%s': %m", oldname, ifindex, oldname, ev->name);
        log_debug("%s: Network interface %i is renamed from '%s' to '%s'", oldname, ifindex,
                  oldname, ev->name);
        return event_rename_props(ev, oldname, ev->name);
}

static int execute_other(struct udev_event *ev, const struct rules *rules, struct node_info *ni)
{
        const struct device_roots *roots = device_ctx_roots(ev->ctx);
        const struct db_record *old = ev->old_db;
        struct db_record rec = {};
        int r;

        /* Only the old tags are inherited, as sticky (non-current) tags. */
        if (old) {
                r = copy_list(&ev->tags, &old->tags, NULL);
                if (r < 0)
                        return r;
        }
        if (ev->action == UEVENT_ACTION_MOVE)
                (void)proplist_unset(&ev->props, "ID_RENAMING");

        r = rules ? rules_apply(rules, ev) : 0;
        ev->rules_done_usec = now_usec(CLOCK_MONOTONIC);
        if (r < 0)
                return r;

        r = rename_netif(ev, ni);
        if (r < 0)
                return r;
        ni->nd.priority = ev->link_priority;
        ev->usec_initialized = old && old->usec_initialized > 0 ? old->usec_initialized
                                                                : now_usec(CLOCK_MONOTONIC);
        if (ev->dry_run)
                return 0;

        if (ni->has_devnum && ni->nd.id && ni->nd.devnode) {
                struct node_perms p;

                perms_from_event(ev, &p);
                (void)node_apply_permissions(roots, &ni->nd, &p,
                                             ev->action == UEVENT_ACTION_ADD);
                (void)node_update(roots, &ni->nd, old ? &old->devlinks : NULL, &ev->devlinks);
        }
        if (!ni->nd.id)
                return 0; /* no subsystem: nothing can be stored */

        r = tags_index_update(roots->run, ni->nd.id, old ? &old->tags : NULL, &ev->tags);
        if (r < 0)
                log_warning_errno(r, "%s: Failed to update the tag index: %m", ni->nd.id);
        r = build_db_record(ev, &rec);
        if (r >= 0)
                /* `old` was read under the event's id: compare only with that file */
                r = db_write_changed(roots->run, ni->nd.id, &rec, ni->has_devnum,
                                     ni->has_ifindex,
                                     ev->uevent && streq(ev->uevent->id, ni->nd.id) ? old : NULL);
        db_record_clear(&rec);
        if (r < 0)
                return log_error_errno(r, "%s: Failed to write the database entry: %m",
                                       ni->nd.id);
        return 0;
}

int udev_event_execute(struct udev_event *ev, const struct rules *rules)
{
        struct node_info ni;

        node_info_init(ev, &ni);
        if (ev->action == UEVENT_ACTION_REMOVE)
                return execute_remove(ev, rules, &ni);
        return execute_other(ev, rules, &ni);
}

/* ---- output ---- */

int udev_event_join_list(const struct strlist *l, const char *sep, bool colons, char *buf,
                         size_t size)
{
        size_t o = 0, n = 0;

        if (size < 1)
                return -ENOBUFS;
        buf[0] = '\0';
        /* Empty items (the empty tag of TAG+="") are left out, as sd-device's
         * set_strjoin() does; a list of only empty items gives "" (v252
         * crashes on that one). */
        for (size_t i = 0; i < l->n; i++)
                n += l->items[i][0] != '\0';
        if (n == 0)
                return 0;
        n = 0;
        if (colons) {
                if (size < 2)
                        return -ENOBUFS;
                buf[o++] = ':';
                buf[o] = '\0';
        }
        for (size_t i = 0; i < l->n; i++) {
                int w;

                if (l->items[i][0] == '\0')
                        continue;
                w = snprintf(buf + o, size - o, "%s%s%s", !colons && n++ > 0 ? sep : "",
                             l->items[i], colons ? ":" : "");
                if (w < 0 || (size_t)w >= size - o)
                        return -ENOBUFS;
                o += (size_t)w;
        }
        return 0;
}

static const struct strlist *synthesized_list(const struct udev_event *ev, const char *key,
                                              bool *colons)
{
        *colons = !streq(key, "DEVLINKS");
        if (streq(key, "DEVLINKS"))
                return &ev->devlinks;
        if (streq(key, "TAGS"))
                return &ev->tags;
        if (streq(key, "CURRENT_TAGS"))
                return &ev->current_tags;
        return NULL;
}

/* Emit DEVLINKS/TAGS/CURRENT_TAGS with the current list; false if it did not fit. */
static bool emit_list(const struct udev_event *ev, const char *key, char *buf, size_t size,
                      void (*emit)(const char *key, const char *value, void *userdata),
                      void *userdata)
{
        bool colons;
        const struct strlist *l = synthesized_list(ev, key, &colons);

        if (udev_event_join_list(l, " ", colons, buf, size) < 0)
                return false;
        if (buf[0])
                emit(key, buf, userdata);
        return true;
}

int udev_event_foreach_property(const struct udev_event *ev, char *buf, size_t size,
                                void (*emit)(const char *key, const char *value, void *userdata),
                                void *userdata)
{
        static const char *const synth[] = { "DEVLINKS", "TAGS", "CURRENT_TAGS" };
        bool placed[3] = {};
        int ret = 0;

        /* In sd-device's order: the lists sit where they were first put into
         * the property table (see rules-exec.c), with their current value;
         * USEC_INITIALIZED comes after the rules; lists never read as
         * properties come last. */
        for (size_t i = 0; i < ev->props.n; i++) {
                const char *key = ev->props.items[i].key;
                bool is_synth = false;

                for (size_t k = 0; k < ARRAY_SIZE(synth); k++)
                        if (streq(key, synth[k])) {
                                placed[k] = is_synth = true;
                                if (!emit_list(ev, key, buf, size, emit, userdata))
                                        ret = -ENOBUFS;
                        }
                if (!is_synth && !streq(key, "USEC_INITIALIZED"))
                        emit(key, ev->props.items[i].value, userdata);
        }
        if (ev->usec_initialized > 0) {
                snprintf(buf, size, "%" PRIu64, ev->usec_initialized);
                emit("USEC_INITIALIZED", buf, userdata);
        }
        for (size_t k = 0; k < ARRAY_SIZE(synth); k++)
                if (!placed[k] && !emit_list(ev, synth[k], buf, size, emit, userdata))
                        ret = -ENOBUFS;
        return ret;
}
