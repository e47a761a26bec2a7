/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (no internal locking: the owner serialises access) */
#pragma once
/* A small string-keyed hash table: open addressing with linear probing and
 * backward-shift deletion (no tombstones), power-of-two bucket count, grown on
 * insertion only. Deletion and lookup never allocate.
 *
 * Keys are (pointer, length) pairs and are NOT copied: the caller guarantees
 * that the bytes stay valid and unchanged while the entry exists. A key may be
 * any byte string, not necessarily NUL-terminated (e.g. a '/'-prefix of a
 * longer path). hashmap_put() on an existing key replaces the stored key
 * pointer as well as the value, so an entry may be re-anchored to a different
 * owner's copy of the same bytes.
 *
 * The bucket hash is seeded per table from getrandom(), so the probe layout is
 * not predictable from the keys. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HASHMAP_KEY_MAX ((size_t)UINT32_MAX) /* longest key accepted */

struct hashmap_entry; /* private */

struct hashmap {
        /* private */
        struct hashmap_entry *buckets;
        size_t n_buckets; /* 0 or a power of two */
        size_t n_entries;
        uint64_t seed;
};

/* Initialise an embedded table (allocates nothing). */
void hashmap_init(struct hashmap *h);
/* Free the bucket array; the keys and values are not touched. Safe on a
 * zeroed or already deinitialised table. */
void hashmap_deinit(struct hashmap *h);
/* hashmap_deinit() after free() of every value: for tables that own their
 * values (keys pointing into them are fine, they are not read). */
void hashmap_deinit_free_values(struct hashmap *h);

/* Make room for `extra` more keys: after success the next `extra` insertions
 * of new keys cannot fail. Returns 0 or -ENOMEM. */
int hashmap_reserve(struct hashmap *h, size_t extra);

/* Insert or replace. key: borrowed, must outlive the entry; len <=
 * HASHMAP_KEY_MAX; value must not be NULL. Returns 0 or -ENOMEM (only when a
 * new key needs growth beyond what hashmap_reserve() provided). */
int hashmap_put(struct hashmap *h, const char *key, size_t len, void *value);

/* Value stored for the key, or NULL. */
void *hashmap_get(const struct hashmap *h, const char *key, size_t len);

/* Remove the key; returns its value or NULL if absent. */
void *hashmap_remove(struct hashmap *h, const char *key, size_t len);
/* Remove the key only if it currently maps to `value`; returns true if removed. */
bool hashmap_remove_value(struct hashmap *h, const char *key, size_t len, const void *value);

static inline size_t hashmap_size(const struct hashmap *h) { return h->n_entries; }

/* Iteration: start with *state = 0; returns false at the end. The table must
 * not be modified while iterating. Any out-pointer may be NULL. */
bool hashmap_iterate(const struct hashmap *h, size_t *state, const char **ret_key,
                     size_t *ret_len, void **ret_value);
