/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (one mutex; the listener thread writes, the manager reads) */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "shared/hashmap.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "udevd/known-devices.h"

struct known_devices {
        pthread_mutex_t lock;
        struct hashmap map; /* id -> struct known_device * (key: the entry's id) */
};

int known_devices_new(struct known_devices **ret)
{
        struct known_devices *k = calloc(1, sizeof(*k));

        if (!k)
                return -ENOMEM;
        pthread_mutex_init(&k->lock, NULL);
        hashmap_init(&k->map);
        *ret = k;
        return 0;
}

void known_devices_free(struct known_devices *k)
{
        if (!k)
                return;
        hashmap_deinit_free_values(&k->map);
        pthread_mutex_destroy(&k->lock);
        free(k);
}

static size_t opt_len(const char *s) { return s ? strlen(s) + 1 : 0; }

/* Append `s` (may be NULL) at *p; returns where it was put or NULL. */
static const char *put_str(char **p, const char *s)
{
        char *at = *p;
        size_t n;

        if (!s)
                return NULL;
        n = strlen(s) + 1;
        memcpy(at, s, n);
        *p += n;
        return at;
}

/* One heap block holding the entry and all its strings. Caller frees. */
static struct known_device *kd_build(const char *id, const char *devpath, const char *subsystem,
                                     const char *devtype, const char *devnode, unsigned major,
                                     unsigned minor, int ifindex)
{
        size_t idlen = strlen(id) + 1;
        size_t size = sizeof(struct known_device) + idlen + opt_len(devpath) +
                      opt_len(subsystem) + opt_len(devtype) + opt_len(devnode);
        struct known_device *d = malloc(size);
        char *p;

        if (!d)
                return NULL;
        memcpy(d->id, id, idlen);
        p = d->id + idlen;
        d->devpath = put_str(&p, devpath);
        d->subsystem = put_str(&p, subsystem);
        d->devtype = put_str(&p, devtype);
        d->devnode = put_str(&p, devnode);
        d->major = major;
        d->minor = minor;
        d->ifindex = ifindex;
        return d;
}

static bool str_eq(const char *a, const char *b)
{
        return a == b || (a && b && streq(a, b));
}

static bool kd_matches(const struct known_device *d, const struct uevent *ev, const char *devnode)
{
        return streq(d->devpath, ev->devpath) && streq(d->subsystem, ev->subsystem) &&
               str_eq(d->devtype, ev->devtype) && str_eq(d->devnode, devnode) &&
               d->major == ev->major && d->minor == ev->minor && d->ifindex == ev->ifindex;
}

/* Called with the lock held. */
static void forget_locked(struct known_devices *k, const char *id)
{
        free(hashmap_remove(&k->map, id, strlen(id)));
}

static void note_one_locked(struct known_devices *k, const struct uevent *ev)
{
        const char *devnode = ev->devnode[0] ? ev->devnode : NULL;
        struct known_device *old, *d;

        if (!ev->id[0])
                return;
        if (ev->action == UEVENT_ACTION_REMOVE) {
                forget_locked(k, ev->id);
                return;
        }
        if (ev->action == UEVENT_ACTION_MOVE && ev->devpath_old) {
                char old_id[UEVENT_ID_MAX];
                if (device_id_format(old_id, sizeof(old_id), ev->subsystem, ev->devpath_old,
                                     ev->major, ev->minor, ev->ifindex) >= 0 &&
                    !streq(old_id, ev->id))
                        forget_locked(k, old_id);
        }
        old = hashmap_get(&k->map, ev->id, strlen(ev->id));
        if (old && kd_matches(old, ev, devnode))
                return; /* the usual "change": nothing new */
        d = kd_build(ev->id, ev->devpath, ev->subsystem, ev->devtype, devnode, ev->major,
                     ev->minor, ev->ifindex);
        if (!d || hashmap_put(&k->map, d->id, strlen(d->id), d) < 0) {
                free(d);
                forget_locked(k, ev->id); /* a stale record is worse than none */
                log_debug("Out of memory recording device %s", ev->id);
                return;
        }
        free(old); /* hashmap_put re-anchored the key to d->id */
}

void known_devices_note(struct known_devices *k, struct uevent *const *evs, size_t n)
{
        pthread_mutex_lock(&k->lock);
        for (size_t i = 0; i < n; i++)
                if (evs[i])
                        note_one_locked(k, evs[i]);
        pthread_mutex_unlock(&k->lock);
}

int known_devices_get(struct known_devices *k, const char *id, struct known_device **ret)
{
        const struct known_device *d;
        int r = 0;

        pthread_mutex_lock(&k->lock);
        d = hashmap_get(&k->map, id, strlen(id));
        if (!d)
                r = -ENOENT;
        else if (!(*ret = kd_build(d->id, d->devpath, d->subsystem, d->devtype, d->devnode,
                                   d->major, d->minor, d->ifindex)))
                r = -ENOMEM;
        pthread_mutex_unlock(&k->lock);
        return r;
}

void known_devices_forget(struct known_devices *k, const char *id)
{
        pthread_mutex_lock(&k->lock);
        forget_locked(k, id);
        pthread_mutex_unlock(&k->lock);
}

size_t known_devices_count(struct known_devices *k)
{
        size_t n;

        pthread_mutex_lock(&k->lock);
        n = hashmap_size(&k->map);
        pthread_mutex_unlock(&k->lock);
        return n;
}
