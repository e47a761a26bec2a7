/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: none of its own (the caller serialises every call, watch-limit.h) */
#include <stdlib.h>
#include <string.h>

#include "udevd/watch-limit.h"

struct watch_limit_entry {
        uint64_t since; /* when the pending change was written */
        size_t len;
        char id[];      /* the key's bytes */
};

void watch_limit_init(struct watch_limit *wl, uint64_t window_usec, size_t max_entries)
{
        *wl = (struct watch_limit){ .window_usec = window_usec, .max_entries = max_entries };
        hashmap_init(&wl->map);
}

void watch_limit_done(struct watch_limit *wl)
{
        hashmap_deinit_free_values(&wl->map);
}

static bool expired(const struct watch_limit *wl, const struct watch_limit_entry *e, uint64_t now)
{
        return now < e->since || now - e->since >= wl->window_usec;
}

/* Drop every expired entry (the table must not change while iterating:
 * remove one per pass). */
static void sweep(struct watch_limit *wl, uint64_t now)
{
        for (;;) {
                struct watch_limit_entry *victim = NULL;
                size_t state = 0;
                void *v;

                while (hashmap_iterate(&wl->map, &state, NULL, NULL, &v))
                        if (expired(wl, v, now)) {
                                victim = v;
                                break;
                        }
                if (!victim)
                        return;
                hashmap_remove(&wl->map, victim->id, victim->len);
                free(victim);
        }
}

bool watch_limit_admit(struct watch_limit *wl, const char *id, uint64_t now)
{
        size_t len = strlen(id);
        struct watch_limit_entry *e = hashmap_get(&wl->map, id, len);

        if (e) {
                if (!expired(wl, e, now)) {
                        wl->dropped++;
                        return false;
                }
                e->since = now;
                return true;
        }
        if (hashmap_size(&wl->map) >= wl->max_entries)
                sweep(wl, now);
        if (hashmap_size(&wl->map) >= wl->max_entries)
                return true; /* untracked */
        e = malloc(sizeof(*e) + len + 1);
        if (!e)
                return true;
        e->since = now;
        e->len = len;
        memcpy(e->id, id, len + 1);
        if (hashmap_put(&wl->map, e->id, len, e) < 0)
                free(e);
        return true;
}

void watch_limit_clear(struct watch_limit *wl, const char *id)
{
        free(hashmap_remove(&wl->map, id, strlen(id)));
}

uint64_t watch_limit_dropped(const struct watch_limit *wl)
{
        return wl->dropped;
}
