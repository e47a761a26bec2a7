/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (udevadm is single-threaded) */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "shared/log.h"
#include "shared/macro.h"
#include "udevadm/device-enum.h"
#include "udevadm/trigger-match.h"
#include "udevadm/udevice.h"

static void key_globs_list_done(struct key_globs_list *l)
{
        for (size_t i = 0; i < l->n; i++) {
                free(l->items[i].key);
                arg_list_done(&l->items[i].globs);
        }
        free(l->items);
        *l = (struct key_globs_list){};
}

void trigger_match_done(struct trigger_match *m)
{
        key_globs_list_done(&m->attr_match);
        key_globs_list_done(&m->attr_nomatch);
        key_globs_list_done(&m->property_match);
        arg_list_done(&m->tags);
}

static struct key_globs *find_key(struct key_globs_list *l, const char *key)
{
        for (size_t i = 0; i < l->n; i++)
                if (streq(l->items[i].key, key))
                        return &l->items[i];
        return NULL;
}

static bool globs_contain(const struct arg_list *g, const char *s)
{
        for (size_t i = 0; i < g->n; i++)
                if (streq(g->items[i], s))
                        return true;
        return false;
}

/* systemd's update_match_strv(): a key without value means "any value" for
 * attributes (clear_on_null), and is ignored for a key seen before otherwise. */
static int add_key_glob(struct key_globs_list *l, const char *key, const char *glob,
                        bool clear_on_null)
{
        struct key_globs *k = find_key(l, key), *n;

        if (k) {
                if (!glob) {
                        if (clear_on_null)
                                arg_list_done(&k->globs);
                        return 0;
                }
                return globs_contain(&k->globs, glob) ? 0 : arg_list_add(&k->globs, glob);
        }
        n = realloc(l->items, (l->n + 1) * sizeof(*n));
        if (!n)
                return log_error_errno(-ENOMEM, "Out of memory.");
        l->items = n;
        k = &l->items[l->n];
        *k = (struct key_globs){ .key = strdup(key) };
        if (!k->key)
                return log_error_errno(-ENOMEM, "Out of memory.");
        l->n++;
        return glob ? arg_list_add(&k->globs, glob) : 0;
}

/* "KEY=VALUE" -> KEY, VALUE (NULL without '='), split in place. */
static const char *split_keyval(char *arg)
{
        char *eq = strchr(arg, '=');

        if (!eq)
                return NULL;
        *eq = '\0';
        return eq + 1;
}

int trigger_match_add_attr(struct trigger_match *m, char *arg, bool match)
{
        const char *value = split_keyval(arg);

        return add_key_glob(match ? &m->attr_match : &m->attr_nomatch, arg, value, true);
}

int trigger_match_add_property(struct trigger_match *m, char *arg)
{
        const char *value = split_keyval(arg);

        return add_key_glob(&m->property_match, arg, value, false);
}

bool trigger_match_needed(const struct trigger_match *m)
{
        return m->attr_match.n > 0 || m->attr_nomatch.n > 0 || m->property_match.n > 0 ||
               m->tags.n > 0 || m->initialized != MATCH_INITIALIZED_ALL;
}

/* ---------------------------------------------------------------- tests */

static bool any_glob(const struct arg_list *g, const char *s)
{
        for (size_t i = 0; i < g->n; i++)
                if (fnmatch(g->items[i], s, 0) == 0)
                        return true;
        return false;
}

/* The attribute is readable and (no globs, or one of them matches). */
static bool attr_matches(struct udevice *d, const struct key_globs *k)
{
        _cleanup_free_ char *value = NULL;

        if (udevice_read_sysattr(d, k->key, &value) < 0)
                return false;
        return k->globs.n == 0 || any_glob(&k->globs, value);
}

static bool match_attrs(struct udevice *d, const struct trigger_match *m)
{
        for (size_t i = 0; i < m->attr_match.n; i++)
                if (!attr_matches(d, &m->attr_match.items[i]))
                        return false;
        for (size_t i = 0; i < m->attr_nomatch.n; i++)
                if (attr_matches(d, &m->attr_nomatch.items[i]))
                        return false;
        return true;
}

/* Any property (name glob, value globs) pair matches. */
static bool match_properties(struct udevice *d, const struct trigger_match *m)
{
        if (m->property_match.n == 0)
                return true;
        if (udevice_properties_prepare(d) < 0)
                return false;
        for (size_t i = 0; i < m->property_match.n; i++) {
                const struct key_globs *k = &m->property_match.items[i];

                for (size_t j = 0; j < d->n_props; j++)
                        if (fnmatch(k->key, d->props[j].key, 0) == 0 &&
                            any_glob(&k->globs, d->props[j].value))
                                return true;
        }
        return false;
}

static bool match_tags(struct udevice *d, const struct trigger_match *m)
{
        for (size_t i = 0; i < m->tags.n; i++)
                if (!udevice_has_tag(d, m->tags.items[i]))
                        return false;
        return true;
}

/* 1, 0, or -errno if the database could not be read. */
static int match_initialized(struct udevice *d, const struct trigger_match *m)
{
        int r;

        if (m->initialized == MATCH_INITIALIZED_ALL)
                return 1;
        r = udevice_is_initialized(d);
        if (r < 0)
                return r;
        return (m->initialized == MATCH_INITIALIZED_NO) == (r == 0);
}

int trigger_match_device(void *userdata, const char *devpath, const char *subsystem,
                         unsigned flags)
{
        const struct trigger_match *m = userdata;
        _cleanup_(udevice_freep) struct udevice *d = NULL;
        bool tags = (flags & DEVICE_ENUM_CHECK_TAGS) && m->tags.n > 0;
        int r;

        if (!tags && m->initialized == MATCH_INITIALIZED_ALL && m->property_match.n == 0 &&
            m->attr_match.n == 0 && m->attr_nomatch.n == 0)
                return 1;
        r = udevice_new_from_devpath(devpath, &d);
        if (r < 0)
                return r;
        (void)udevice_get_subsystem(d, NULL);
        if (tags && !match_tags(d, m))
                return 0;
        r = match_initialized(d, m);
        if (r <= 0)
                return r;
        return match_properties(d, m) && match_attrs(d, m);
}

int trigger_match_resolve_id(void *userdata, const char *id, char *buf, size_t size)
{
        _cleanup_(udevice_freep) struct udevice *d = NULL;
        int r = udevice_new_from_device_id(id, &d);

        if (r == -ENODEV)
                return 0; /* a stale entry of a removed device */
        if (r < 0)
                return log_debug_errno(r, "Failed to find the device of tag entry '%s': %m", id);
        if (strlen(d->devpath) >= size)
                return -ENAMETOOLONG;
        strcpy(buf, d->devpath);
        return 1;
}
