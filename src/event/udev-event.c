/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: worker-local (one udev_event belongs to the worker processing it) */
/* Per-event state (event/udev-event.h): property list, init/done, property
 * lookup and the environment of spawned programs. */

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event/udev-event.h"
#include "shared/fnv.h"
#include "shared/macro.h"

#define PROPLIST_MAX 4096 /* properties per event (DB_ENTRIES_MAX) */

/* ------------------------------------------------------------ proplist */

/* Key and value share one allocation: "KEY\0VALUE\0", owned through `key`. */
static int prop_block(const char *key, const char *value, char **ret_key, char **ret_value)
{
        size_t kl = strlen(key), vl = strlen(value);
        char *b;

        if (kl > SIZE_MAX / 2 || vl > SIZE_MAX / 2)
                return -ENOMEM;
        b = malloc(kl + vl + 2);
        if (!b)
                return -ENOMEM;
        memcpy(b, key, kl + 1);
        memcpy(b + kl + 1, value, vl + 1);
        *ret_key = b;
        *ret_value = b + kl + 1;
        return 0;
}

/* FNV-1a over the key's bytes, folded to 32 bits. Rules look properties up
 * by name dozens of times per event, in lists of tens of entries that share
 * prefixes ("ID_FS_", "ID_PART_"): comparing hashes first leaves one string
 * comparison per lookup instead of one per entry. */
uint32_t proplist_key_hash(const char *key)
{
        uint64_t h = fnv1a64(FNV1A64_INIT, key, strlen(key));

        return (uint32_t)(h ^ (h >> 32));
}

static ssize_t proplist_find(const struct proplist *l, const char *key, uint32_t h)
{
        for (size_t i = 0; i < l->n; i++)
                if (l->items[i].key_hash == h && streq(l->items[i].key, key))
                        return (ssize_t)i;
        return -1;
}

static ssize_t proplist_index(const struct proplist *l, const char *key)
{
        return proplist_find(l, key, proplist_key_hash(key));
}

int proplist_set(struct proplist *l, const char *key, const char *value, bool from_kernel)
{
        char *k, *v;
        uint32_t h;
        ssize_t i;
        int r;

        if (!l || !key || !*key || !value)
                return -EINVAL;
        h = proplist_key_hash(key);
        i = proplist_find(l, key, h);
        if (i < 0 && l->n >= PROPLIST_MAX)
                return -E2BIG;
        if (i < 0 && l->n == l->cap) {
                size_t cap = l->cap ? l->cap * 2 : 32;
                struct prop *items = realloc(l->items, cap * sizeof(*items));

                if (!items)
                        return -ENOMEM;
                l->items = items;
                l->cap = cap;
        }
        /* Copy first: value may point into the entry being replaced. */
        r = prop_block(key, value, &k, &v);
        if (r < 0)
                return r;
        if (i >= 0)
                free(l->items[i].key);
        else
                i = (ssize_t)l->n++;
        l->items[i] = (struct prop){ .key = k, .value = v, .from_kernel = from_kernel,
                                     .key_hash = h };
        return 0;
}

int proplist_unset(struct proplist *l, const char *key)
{
        ssize_t i;

        if (!l || !key)
                return -EINVAL;
        i = proplist_index(l, key);
        if (i < 0)
                return -ENOENT;
        free(l->items[i].key);
        memmove(&l->items[i], &l->items[i + 1], (l->n - (size_t)i - 1) * sizeof(l->items[0]));
        l->n--;
        return 0;
}

const char *proplist_get(const struct proplist *l, const char *key)
{
        ssize_t i;

        if (!l || !key)
                return NULL;
        i = proplist_index(l, key);
        return i < 0 ? NULL : l->items[i].value;
}

void proplist_clear(struct proplist *l)
{
        if (!l)
                return;
        for (size_t i = 0; i < l->n; i++)
                free(l->items[i].key);
        free(l->items);
        *l = (struct proplist){};
}

/* ------------------------------------------------------------ event */

static void move_to_end(struct proplist *l, const char *key)
{
        struct prop p;
        ssize_t i = proplist_index(l, key);

        if (i < 0)
                return;
        p = l->items[i];
        memmove(&l->items[i], &l->items[i + 1], (l->n - (size_t)i - 1) * sizeof(l->items[0]));
        l->items[l->n - 1] = p;
}

int udev_event_init(struct udev_event *ev, struct device_ctx *ctx, struct device *dev,
                    const struct uevent *uevent, enum uevent_action action)
{
        const char *k, *v, *a;
        int r;

        if (!ev)
                return -EINVAL;
        *ev = (struct udev_event){
                .uevent = uevent,
                .action = action,
                .ctx = ctx,
                .dev = dev,
                .log_level = -1,
                .usec_initialized = uevent ? uevent->recv_usec : 0,
        };
        if (!ctx || !dev)
                return -EINVAL;
        for (size_t i = 0; device_property_at(dev, i, &k, &v); i++) {
                r = proplist_set(&ev->props, k, v, true);
                if (r < 0)
                        goto fail;
        }
        /* A device made from sysfs (udevadm test) has no ACTION of its own;
         * sd-device lists it before SUBSYSTEM there. */
        a = uevent_action_to_string(action);
        if (a && !proplist_get(&ev->props, "ACTION")) {
                r = proplist_set(&ev->props, "ACTION", a, true);
                if (r < 0)
                        goto fail;
                move_to_end(&ev->props, "SUBSYSTEM");
        }
        return 0;
fail:
        udev_event_done(ev);
        return r;
}

void udev_event_done(struct udev_event *ev)
{
        if (!ev)
                return;
        proplist_clear(&ev->props);
        strlist_clear(&ev->devlinks);
        strlist_clear(&ev->tags);
        strlist_clear(&ev->current_tags);
        strlist_clear(&ev->seclabels);
        free(ev->name);
        for (size_t i = 0; i < ev->n_run; i++)
                free(ev->run[i].cmd);
        free(ev->run);
        free(ev->program_result);
        *ev = (struct udev_event){ .log_level = -1 };
}

const char *udev_event_get_property(const struct udev_event *ev, const char *key)
{
        const char *v;

        if (!ev || !key)
                return NULL;
        v = proplist_get(&ev->props, key);
        if (!v && ev->global_props)
                v = proplist_get(ev->global_props, key);
        return v;
}

/* ------------------------------------------------------------ environment */

/* Items of a list that go into its property: all but empty ones (the empty
 * tag), which sd-device leaves out when it joins a list. */
static size_t joined_count(const struct strlist *l)
{
        size_t n = 0;

        for (size_t i = 0; i < l->n; i++)
                n += l->items[i][0] != '\0';
        return n;
}

/* Length of "KEY=" + non-empty items joined (sep between, wrap: sep around)
 * + NUL; 0 if there is none. */
static size_t joined_len(const char *key, const struct strlist *l, bool wrap)
{
        size_t n, k = 0;

        if (joined_count(l) == 0)
                return 0;
        n = strlen(key) + 1 + (wrap ? 2 : 0) + 1;
        for (size_t i = 0; i < l->n; i++) {
                if (l->items[i][0] == '\0')
                        continue;
                n += strlen(l->items[i]) + (k++ > 0);
        }
        return n;
}

static char *put_joined(char *p, const char *key, const struct strlist *l, char sep, bool wrap)
{
        size_t k = 0;

        p = stpcpy(stpcpy(p, key), "=");
        if (wrap)
                *p++ = sep;
        for (size_t i = 0; i < l->n; i++) {
                if (l->items[i][0] == '\0')
                        continue;
                if (k++ > 0)
                        *p++ = sep;
                p = stpcpy(p, l->items[i]);
        }
        if (wrap)
                *p++ = sep;
        *p++ = '\0';
        return p;
}

/* Properties systemd's device holds besides the plain ones: DEVLINKS, TAGS,
 * CURRENT_TAGS (when not empty) and USEC_INITIALIZED (when set). */
struct env_extra {
        const char *key;
        const struct strlist *list;
        char sep;
        bool wrap;
};

char **udev_event_build_env(const struct udev_event *ev)
{
        struct env_extra extra[3];
        char usec[64] = "";
        size_t n_extra = 0, n = 2, size = 0;
        char **envp, *p;

        if (!ev)
                return NULL;
        extra[n_extra++] = (struct env_extra){ "DEVLINKS", &ev->devlinks, ' ', false };
        extra[n_extra++] = (struct env_extra){ "TAGS", &ev->tags, ':', true };
        extra[n_extra++] = (struct env_extra){ "CURRENT_TAGS", &ev->current_tags, ':', true };
        if (ev->usec_initialized > 0 && !proplist_get(&ev->props, "USEC_INITIALIZED"))
                snprintf(usec, sizeof(usec), "USEC_INITIALIZED=%" PRIu64, ev->usec_initialized);

        size += sizeof("UDEV_DATABASE_VERSION=1");
        for (size_t i = 0; i < ev->props.n; i++) {
                size += strlen(ev->props.items[i].key) + strlen(ev->props.items[i].value) + 2;
                n++;
        }
        for (size_t i = 0; i < n_extra; i++) {
                if (proplist_get(&ev->props, extra[i].key) || joined_count(extra[i].list) == 0)
                        continue;
                size += joined_len(extra[i].key, extra[i].list, extra[i].wrap);
                n++;
        }
        if (usec[0]) {
                size += strlen(usec) + 1;
                n++;
        }

        /* One block: the pointer array, then the strings. */
        envp = malloc(n * sizeof(char *) + size);
        if (!envp)
                return NULL;
        p = (char *)(envp + n);
        n = 0;
        envp[n++] = p;
        p = stpcpy(p, "UDEV_DATABASE_VERSION=1") + 1;
        for (size_t i = 0; i < ev->props.n; i++) {
                envp[n++] = p;
                p = stpcpy(stpcpy(stpcpy(p, ev->props.items[i].key), "="),
                           ev->props.items[i].value) + 1;
        }
        for (size_t i = 0; i < n_extra; i++) {
                if (proplist_get(&ev->props, extra[i].key) || joined_count(extra[i].list) == 0)
                        continue;
                envp[n++] = p;
                p = put_joined(p, extra[i].key, extra[i].list, extra[i].sep, extra[i].wrap);
        }
        if (usec[0]) {
                envp[n++] = p;
                p = stpcpy(p, usec) + 1;
        }
        envp[n] = NULL;
        return envp;
}

void udev_event_free_env(char **envp)
{
        free(envp);
}
