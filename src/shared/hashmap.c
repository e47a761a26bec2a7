/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (no internal locking: the owner serialises access) */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "shared/hashmap.h"

#define HASHMAP_MIN_BUCKETS 8
/* Linear probing stays fast for misses up to about half full. */
#define HASHMAP_LOAD_NUM 1
#define HASHMAP_LOAD_DEN 2

struct hashmap_entry {
        const char *key; /* NULL: empty bucket */
        void *value;
        uint32_t len;
        uint32_t hash; /* low 32 bits of the full hash: home bucket + quick compare */
};

#define K1 UINT64_C(0x9e3779b97f4a7c15)
#define K2 UINT64_C(0xc2b2ae3d27d4eb4f)

static uint64_t rotl64(uint64_t x, unsigned r)
{
        return (x << r) | (x >> (64 - r));
}

static uint64_t fmix64(uint64_t x)
{
        x ^= x >> 33;
        x *= UINT64_C(0xff51afd7ed558ccd);
        x ^= x >> 33;
        x *= UINT64_C(0xc4ceb9fe1a85ec53);
        x ^= x >> 33;
        return x;
}

static uint64_t hash_step(uint64_t h, uint64_t w)
{
        return rotl64(h ^ (w * K1), 31) * K2;
}

static uint32_t hash_bytes(uint64_t seed, const char *key, size_t len)
{
        const unsigned char *p = (const unsigned char *)key;
        uint64_t h = seed ^ ((uint64_t)len * K2);
        uint64_t w;

        for (; len >= 8; p += 8, len -= 8) {
                memcpy(&w, p, sizeof(w));
                h = hash_step(h, w);
        }
        if (len > 0) {
                w = 0;
                for (size_t i = 0; i < len; i++)
                        w |= (uint64_t)p[i] << (8 * i);
                h = hash_step(h, w);
        }
        return (uint32_t)fmix64(h);
}

/* Seeds come from a per-thread secret drawn from getrandom() once, stepped
 * and mixed per map: a map built from untrusted keys (a db record, rules)
 * gets an unpredictable seed without a system call per map, which had been
 * several per event. */
static __thread uint64_t seed_state;

void hashmap_init(struct hashmap *h)
{
        uint64_t s = seed_state;

        memset(h, 0, sizeof(*h));
        if (s == 0 && getrandom(&s, sizeof(s), GRND_NONBLOCK) != (ssize_t)sizeof(s)) {
                struct timespec ts;

                clock_gettime(CLOCK_MONOTONIC, &ts);
                s = fmix64((uint64_t)(uintptr_t)h ^ (uint64_t)ts.tv_nsec ^
                           ((uint64_t)ts.tv_sec << 32));
        }
        s += 0x9e3779b97f4a7c15ULL; /* never 0 again for long; 0 only re-seeds */
        seed_state = s;
        h->seed = fmix64(s);
}

void hashmap_deinit(struct hashmap *h)
{
        free(h->buckets);
        h->buckets = NULL;
        h->n_buckets = 0;
        h->n_entries = 0;
}

void hashmap_deinit_free_values(struct hashmap *h)
{
        for (size_t i = 0; i < h->n_buckets; i++)
                if (h->buckets[i].key)
                        free(h->buckets[i].value);
        hashmap_deinit(h);
}

static size_t mask_of(const struct hashmap *h)
{
        return h->n_buckets - 1;
}

/* Index of the bucket holding the key, or of the empty bucket ending its probe
 * sequence. The table must have at least one empty bucket. */
static size_t find_slot(const struct hashmap *h, const char *key, size_t len, uint32_t hash)
{
        size_t mask = mask_of(h);

        for (size_t i = hash & mask;; i = (i + 1) & mask) {
                const struct hashmap_entry *e = &h->buckets[i];

                if (!e->key)
                        return i;
                if (e->hash == hash && e->len == len && memcmp(e->key, key, len) == 0)
                        return i;
        }
}

static bool fits(size_t n_entries, size_t n_buckets)
{
        return n_entries * HASHMAP_LOAD_DEN <= n_buckets * HASHMAP_LOAD_NUM &&
               n_entries < n_buckets;
}

static int resize(struct hashmap *h, size_t need)
{
        struct hashmap_entry *nb;
        size_t n = HASHMAP_MIN_BUCKETS;

        if (need > (SIZE_MAX / sizeof(*nb)) / (2 * HASHMAP_LOAD_DEN))
                return -ENOMEM;
        while (!fits(need, n))
                n <<= 1;
        if ((uint64_t)n > (uint64_t)UINT32_MAX + 1)
                return -ENOMEM; /* home bucket derives from a 32-bit hash */

        nb = calloc(n, sizeof(*nb));
        if (!nb)
                return -ENOMEM;

        for (size_t i = 0; i < h->n_buckets; i++) {
                const struct hashmap_entry *e = &h->buckets[i];
                size_t j;

                if (!e->key)
                        continue;
                for (j = e->hash & (n - 1); nb[j].key; j = (j + 1) & (n - 1))
                        ;
                nb[j] = *e;
        }
        free(h->buckets);
        h->buckets = nb;
        h->n_buckets = n;
        return 0;
}

int hashmap_reserve(struct hashmap *h, size_t extra)
{
        if (extra > SIZE_MAX - h->n_entries)
                return -ENOMEM;
        if (h->n_buckets > 0 && fits(h->n_entries + extra, h->n_buckets))
                return 0;
        return resize(h, h->n_entries + extra);
}

int hashmap_put(struct hashmap *h, const char *key, size_t len, void *value)
{
        struct hashmap_entry *e;
        uint32_t hash;
        size_t i;
        int r;

        if (!key || !value || len > HASHMAP_KEY_MAX)
                return -EINVAL;

        hash = hash_bytes(h->seed, key, len);
        if (h->n_buckets > 0) {
                i = find_slot(h, key, len, hash);
                e = &h->buckets[i];
                if (e->key) {
                        e->key = key;
                        e->value = value;
                        return 0;
                }
        }

        r = hashmap_reserve(h, 1);
        if (r < 0)
                return r;
        i = find_slot(h, key, len, hash);
        h->buckets[i] = (struct hashmap_entry){
                .key = key, .value = value, .len = (uint32_t)len, .hash = hash,
        };
        h->n_entries++;
        return 0;
}

void *hashmap_get(const struct hashmap *h, const char *key, size_t len)
{
        size_t i;

        if (h->n_entries == 0 || !key || len > HASHMAP_KEY_MAX)
                return NULL;
        i = find_slot(h, key, len, hash_bytes(h->seed, key, len));
        return h->buckets[i].value; /* NULL for an empty bucket */
}

/* Empty bucket i and move later members of its cluster back so that every
 * probe sequence stays unbroken. */
static void delete_at(struct hashmap *h, size_t i)
{
        size_t mask = mask_of(h);

        for (size_t j = (i + 1) & mask; h->buckets[j].key; j = (j + 1) & mask) {
                size_t home = h->buckets[j].hash & mask;
                bool movable;

                /* The entry at j may fill the hole at i iff its home bucket is
                 * not cyclically inside (i, j]. */
                if (i <= j)
                        movable = home <= i || home > j;
                else
                        movable = home <= i && home > j;
                if (movable) {
                        h->buckets[i] = h->buckets[j];
                        i = j;
                }
        }
        h->buckets[i] = (struct hashmap_entry){ .key = NULL };
        h->n_entries--;
}

static void *remove_impl(struct hashmap *h, const char *key, size_t len, const void *match,
                         bool check)
{
        void *value;
        size_t i;

        if (h->n_entries == 0 || !key || len > HASHMAP_KEY_MAX)
                return NULL;
        i = find_slot(h, key, len, hash_bytes(h->seed, key, len));
        value = h->buckets[i].value;
        if (!value || (check && value != match))
                return NULL;
        delete_at(h, i);
        return value;
}

void *hashmap_remove(struct hashmap *h, const char *key, size_t len)
{
        return remove_impl(h, key, len, NULL, false);
}

bool hashmap_remove_value(struct hashmap *h, const char *key, size_t len, const void *value)
{
        return value && remove_impl(h, key, len, value, true) != NULL;
}

bool hashmap_iterate(const struct hashmap *h, size_t *state, const char **ret_key,
                     size_t *ret_len, void **ret_value)
{
        for (size_t i = *state; i < h->n_buckets; i++) {
                const struct hashmap_entry *e = &h->buckets[i];

                if (!e->key)
                        continue;
                if (ret_key)
                        *ret_key = e->key;
                if (ret_len)
                        *ret_len = e->len;
                if (ret_value)
                        *ret_value = e->value;
                *state = i + 1;
                return true;
        }
        *state = h->n_buckets;
        return false;
}
