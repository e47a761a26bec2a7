/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: none of its own (the caller serialises every call, event-deps.h) */
/*
 * Data layout
 *
 * Every live node is registered in four string indexes:
 *   by_id      device id       -> latest live node with that id
 *   by_devnode devnode         -> latest live node with that devnode
 *   by_devpath path            -> latest live node whose devpath or
 *                                 devpath_old equals path
 *   under      path prefix     -> list (struct under_link) of every live node
 *                                 whose devpath or devpath_old lies strictly
 *                                 below that prefix at a '/' boundary
 * Keys are borrowed from the uevent record of the entry's current owner.
 *
 * A new node E depends on: by_id[E.id], by_devnode[E.devnode], by_devpath[P]
 * for every '/'-prefix P of E.devpath and of E.devpath_old (the paths
 * themselves included), and every member of under[E.devpath] and
 * under[E.devpath_old]. Each later registrant of a by_* key depended on the
 * previous owner of that key, so "latest" stands for the whole chain.
 *
 * This is systemd-udevd's conflict relation (an earlier event L blocks E if
 * they share the device id or the devnode, or if E.devpath is related to
 * L.devpath or L.devpath_old, or E.devpath_old to L.devpath: equal, or one
 * below the other at a '/'; udevd(8) DESCRIPTION), plus one extra pair that
 * systemd does not check: E.devpath_old against L.devpath_old. It
 * only serialises two moves away from related paths, which the kernel never
 * emits concurrently anyway, and it keeps the by_devpath chains transitive.
 *
 * E keeps a blocker count; each blocker keeps E in its dependants array. When
 * a live node is removed it leaves the indexes (a by_* entry only if it still
 * owns it) and decrements its dependants; those reaching zero are reported.
 */
#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shared/macro.h"
#include "udevd/event-deps.h"

/* Membership of one node in the `under` list of one ancestor prefix. */
struct under_link {
        struct under_link *prev, *next;
        struct dep_node *node;
        const char *key; /* prefix of the node's devpath or devpath_old */
        size_t len;
};

struct dep_node {
        const struct uevent *ev;
        void *owner;
        unsigned long long mark; /* insertion serial that last collected us as blocker */
        unsigned long long seq;  /* when it was added: later nodes have larger ones */
        size_t n_blockers;
        struct dep_node **dependants;
        size_t n_dependants, n_dependants_alloc;
        size_t n_links;
        struct under_link links[];
};

/* ------------------------------------------------------------------ paths */

/* Next '/' after position i (i < len) that ends a non-empty proper prefix,
 * or len if none. Start with i = 0. */
static size_t next_boundary(const char *path, size_t len, size_t i)
{
        for (i++; i < len; i++)
                if (path[i] == '/')
                        return i;
        return len;
}

/* Is path[0..plen) a proper ancestor of `other` at a '/' boundary? */
static bool is_proper_ancestor(const char *path, size_t plen, const char *other)
{
        return strncmp(other, path, plen) == 0 && other[plen] == '/';
}

static size_t count_links(const struct uevent *ev)
{
        size_t n = 0, len;

        len = strlen(ev->devpath);
        for (size_t i = next_boundary(ev->devpath, len, 0); i < len;
             i = next_boundary(ev->devpath, len, i))
                n++;
        if (!ev->devpath_old)
                return n;
        len = strlen(ev->devpath_old);
        for (size_t i = next_boundary(ev->devpath_old, len, 0); i < len;
             i = next_boundary(ev->devpath_old, len, i))
                if (!is_proper_ancestor(ev->devpath_old, i, ev->devpath))
                        n++;
        return n;
}

static size_t fill_links(struct dep_node *node, const char *path, bool skip_shared, size_t n)
{
        size_t len = strlen(path);

        for (size_t i = next_boundary(path, len, 0); i < len; i = next_boundary(path, len, i)) {
                if (skip_shared && is_proper_ancestor(path, i, node->ev->devpath))
                        continue;
                node->links[n++] = (struct under_link){ .node = node, .key = path, .len = i };
        }
        return n;
}

/* ------------------------------------------------------------------ nodes */

struct dep_node *dep_node_new(const struct uevent *ev, void *owner)
{
        size_t n_links = count_links(ev), n;
        struct dep_node *node;

        node = calloc(1, sizeof(*node) + n_links * sizeof(node->links[0]));
        if (!node)
                return NULL;
        node->ev = ev;
        node->owner = owner;
        n = fill_links(node, ev->devpath, false, 0);
        if (ev->devpath_old)
                n = fill_links(node, ev->devpath_old, true, n);
        assert(n == n_links);
        node->n_links = n_links;
        return node;
}

void dep_node_free(struct dep_node *n)
{
        if (!n)
                return;
        free(n->dependants);
        free(n);
}

size_t dep_node_size(const struct dep_node *n)
{
        return sizeof(*n) + n->n_links * sizeof(n->links[0]);
}

void *dep_node_owner(const struct dep_node *n)
{
        return n->owner;
}

size_t dep_node_blockers(const struct dep_node *n)
{
        return n->n_blockers;
}

void dep_node_forget_dependants(struct dep_node *n)
{
        n->n_dependants = 0;
}

/* ---------------------------------------------------------------- indexes */

void event_deps_init(struct event_deps *d)
{
        *d = (struct event_deps){ 0 };
        hashmap_init(&d->by_id);
        hashmap_init(&d->by_devnode);
        hashmap_init(&d->by_devpath);
        hashmap_init(&d->under);
}

void event_deps_done(struct event_deps *d)
{
        hashmap_deinit(&d->by_id);
        hashmap_deinit(&d->by_devnode);
        hashmap_deinit(&d->by_devpath);
        hashmap_deinit(&d->under);
        free(d->scratch);
        d->scratch = NULL;
        d->n_scratch_alloc = 0;
}

static void under_link_insert(struct event_deps *d, struct under_link *l)
{
        struct under_link *head = hashmap_get(&d->under, l->key, l->len);
        int r;

        l->prev = NULL;
        l->next = head;
        if (head)
                head->prev = l;
        r = hashmap_put(&d->under, l->key, l->len, l); /* reserved: cannot fail */
        assert(r == 0);
        (void)r;
}

static void under_link_remove(struct event_deps *d, struct under_link *l)
{
        if (l->prev)
                l->prev->next = l->next;
        else if (l->next) {
                /* New head; re-anchor the key in its record. */
                int r = hashmap_put(&d->under, l->next->key, l->next->len, l->next);

                assert(r == 0); /* existing key: never allocates */
                (void)r;
        } else
                hashmap_remove(&d->under, l->key, l->len);
        if (l->next)
                l->next->prev = l->prev;
        l->prev = l->next = NULL;
}

static void index_put(struct hashmap *h, const char *key, struct dep_node *n)
{
        int r;

        if (!key || !key[0])
                return;
        r = hashmap_put(h, key, strlen(key), n); /* reserved: cannot fail */
        assert(r == 0);
        (void)r;
}

static void index_drop(struct hashmap *h, const char *key, struct dep_node *n)
{
        if (key && key[0])
                hashmap_remove_value(h, key, strlen(key), n);
}

static int reserve_indexes(struct event_deps *d, const struct dep_node *n)
{
        if (hashmap_reserve(&d->by_id, 1) < 0 || hashmap_reserve(&d->by_devnode, 1) < 0 ||
            hashmap_reserve(&d->by_devpath, 2) < 0 || hashmap_reserve(&d->under, n->n_links) < 0)
                return -ENOMEM;
        return 0;
}

static void register_node(struct event_deps *d, struct dep_node *n)
{
        const struct uevent *ev = n->ev;

        index_put(&d->by_id, ev->id, n);
        index_put(&d->by_devnode, ev->devnode, n);
        index_put(&d->by_devpath, ev->devpath, n);
        index_put(&d->by_devpath, ev->devpath_old, n);
        for (size_t i = 0; i < n->n_links; i++)
                under_link_insert(d, &n->links[i]);
}

static void unregister_node(struct event_deps *d, struct dep_node *n)
{
        const struct uevent *ev = n->ev;

        index_drop(&d->by_id, ev->id, n);
        index_drop(&d->by_devnode, ev->devnode, n);
        index_drop(&d->by_devpath, ev->devpath, n);
        index_drop(&d->by_devpath, ev->devpath_old, n);
        for (size_t i = 0; i < n->n_links; i++)
                under_link_remove(d, &n->links[i]);
}

void event_deps_remove(struct event_deps *d, struct dep_node *n,
                       void (*runnable)(struct dep_node *dep, void *userdata), void *userdata)
{
        unregister_node(d, n);
        for (size_t i = 0; i < n->n_dependants; i++) {
                struct dep_node *dep = n->dependants[i];

                assert(dep->n_blockers > 0);
                if (--dep->n_blockers == 0 && runnable)
                        runnable(dep, userdata);
        }
        n->n_dependants = 0;
}

/* ---------------------------------------------------------------- insertion */

static int add_blocker(struct event_deps *d, struct dep_node *l, size_t *n)
{
        if (!l || l->mark == d->serial)
                return 0;
        if (*n >= d->n_scratch_alloc) {
                size_t m = MAX(d->n_scratch_alloc * 2, (size_t)16);
                struct dep_node **s;

                if (m > SIZE_MAX / sizeof(*s))
                        return -ENOMEM;
                s = realloc(d->scratch, m * sizeof(*s));
                if (!s)
                        return -ENOMEM;
                d->scratch = s;
                d->n_scratch_alloc = m;
        }
        l->mark = d->serial;
        d->scratch[(*n)++] = l;
        return 0;
}

static int collect_key(struct event_deps *d, struct hashmap *h, const char *key, size_t *n)
{
        if (!key || !key[0])
                return 0;
        return add_blocker(d, hashmap_get(h, key, strlen(key)), n);
}

/* Earlier live nodes whose devpath/devpath_old is `path`, an ancestor of it,
 * or below it. */
static int collect_path(struct event_deps *d, const char *path, size_t *n)
{
        size_t len;
        int r;

        if (!path || !path[0])
                return 0;
        len = strlen(path);
        for (size_t i = next_boundary(path, len, 0); i <= len; i = next_boundary(path, len, i)) {
                r = add_blocker(d, hashmap_get(&d->by_devpath, path, i), n);
                if (r < 0)
                        return r;
                if (i == len)
                        break;
        }
        for (struct under_link *l = hashmap_get(&d->under, path, len); l; l = l->next) {
                r = add_blocker(d, l->node, n);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int dependants_reserve(struct dep_node *l)
{
        struct dep_node **dep;
        size_t m;

        if (l->n_dependants < l->n_dependants_alloc)
                return 0;
        m = MAX(l->n_dependants_alloc * 2, (size_t)4);
        if (m > SIZE_MAX / sizeof(*dep))
                return -ENOMEM;
        dep = realloc(l->dependants, m * sizeof(*dep));
        if (!dep)
                return -ENOMEM;
        l->dependants = dep;
        l->n_dependants_alloc = m;
        return 0;
}

/* Collect into d->scratch every live node a node for ev would wait for (the
 * latest of each by_* chain and the members of the under lists). Returns
 * their number or -ENOMEM. */
static int collect_all(struct event_deps *d, const struct uevent *ev, size_t *n)
{
        int r;

        *n = 0;
        d->serial++;
        r = collect_key(d, &d->by_id, ev->id, n);
        if (r >= 0)
                r = collect_key(d, &d->by_devnode, ev->devnode, n);
        if (r >= 0)
                r = collect_path(d, ev->devpath, n);
        if (r >= 0)
                r = collect_path(d, ev->devpath_old, n);
        return r;
}

int event_deps_add(struct event_deps *d, struct dep_node *node)
{
        size_t n = 0;
        int r;

        r = reserve_indexes(d, node);
        if (r < 0)
                return r;

        r = collect_all(d, node->ev, &n);
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = dependants_reserve(d->scratch[i]);
        if (r < 0)
                return r;

        /* Commit: nothing below can fail. */
        for (size_t i = 0; i < n; i++) {
                struct dep_node *l = d->scratch[i];

                l->dependants[l->n_dependants++] = node;
        }
        node->n_blockers = n;
        node->seq = d->serial;
        register_node(d, node);
        return (int)MIN(n, (size_t)INT32_MAX);
}

/* Every conflicting live node that was not collected precedes a collected one
 * in its by_* chain, so the latest collected node is the latest of all. */
struct dep_node *event_deps_latest_conflict(struct event_deps *d, const struct uevent *ev)
{
        struct dep_node *latest = NULL;
        size_t n = 0;

        if (collect_all(d, ev, &n) < 0)
                return NULL;
        for (size_t i = 0; i < n; i++)
                if (!latest || d->scratch[i]->seq > latest->seq)
                        latest = d->scratch[i];
        return latest;
}

static bool streq_null(const char *a, const char *b)
{
        return a == b || (a && b && strcmp(a, b) == 0);
}

bool event_deps_coalescible(const struct uevent *queued, const struct uevent *newer)
{
        const char *uuid;

        if (queued->action != UEVENT_ACTION_CHANGE || newer->action != UEVENT_ACTION_CHANGE)
                return false;
        if (queued->devpath_old || newer->devpath_old)
                return false;
        if (strcmp(queued->devpath, newer->devpath) != 0 ||
            strcmp(queued->subsystem, newer->subsystem) != 0 ||
            strcmp(queued->id, newer->id) != 0 || strcmp(queued->devnode, newer->devnode) != 0)
                return false;
        uuid = uevent_get(queued, "SYNTH_UUID");
        return !uuid || strcmp(uuid, "0") == 0 ||
               streq_null(uuid, uevent_get(newer, "SYNTH_UUID"));
}
