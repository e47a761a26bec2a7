/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (the holder's mutex guards only the pointer swap and the ref taking) */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shared/macro.h"
#include "udevd/rules-snapshot.h"

void snapshot_holder_init(struct snapshot_holder *h)
{
        pthread_mutex_init(&h->lock, NULL);
        h->cur = NULL;
        h->generation = 0;
}

void snapshot_unref(struct udevd_snapshot *s)
{
        if (!s)
                return;
        if (atomic_fetch_sub(&s->n_ref, 1) != 1)
                return;
        rules_unref(s->rules);
        proplist_clear(&s->global_props);
        free(s);
}

void snapshot_holder_done(struct snapshot_holder *h)
{
        snapshot_unref(h->cur);
        h->cur = NULL;
        pthread_mutex_destroy(&h->lock);
}

int snapshot_publish(struct snapshot_holder *h, struct rules *rules,
                     const struct strlist *global_env)
{
        struct udevd_snapshot *s, *old;

        s = calloc(1, sizeof(*s));
        if (!s) {
                rules_unref(rules);
                return -ENOMEM;
        }
        atomic_init(&s->n_ref, 1);
        s->rules = rules;
        for (size_t i = 0; global_env && i < global_env->n; i++) {
                const char *e = global_env->items[i], *eq = strchr(e, '=');
                char *key;
                int r;

                if (!eq)
                        continue;
                key = strndup(e, (size_t)(eq - e));
                r = key ? proplist_set(&s->global_props, key, eq + 1, false) : -ENOMEM;
                free(key);
                if (r < 0) {
                        snapshot_unref(s);
                        return r;
                }
        }
        pthread_mutex_lock(&h->lock);
        old = h->cur;
        h->cur = s;
        s->generation = ++h->generation;
        pthread_mutex_unlock(&h->lock);
        snapshot_unref(old);
        return 0;
}

unsigned snapshot_generation(struct snapshot_holder *h)
{
        unsigned g;

        pthread_mutex_lock(&h->lock);
        g = h->generation;
        pthread_mutex_unlock(&h->lock);
        return g;
}

struct udevd_snapshot *snapshot_get(struct snapshot_holder *h)
{
        struct udevd_snapshot *s;

        pthread_mutex_lock(&h->lock);
        s = h->cur;
        if (s)
                atomic_fetch_add(&s->n_ref, 1);
        pthread_mutex_unlock(&h->lock);
        return s;
}
