/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: none of its own (the caller serialises all calls on one heap) */
#pragma once
/* A binary min-heap of (key, item) pairs: push and pop-minimum in
 * O(log n), peek in O(1). Items with equal keys come out in no particular
 * order. Memory is reserved separately (minheap_reserve()), so that push
 * never fails: a caller that knows an upper bound of the heap's size reserves
 * it where it can still report -ENOMEM. */

#include <stddef.h>
#include <stdint.h>

struct minheap_entry {
        uint64_t key;
        void *item;
};

struct minheap {
        struct minheap_entry *v;
        size_t n, alloc;
};

#define MINHEAP_INIT { NULL, 0, 0 }

/* Room for at least `n` entries in all. 0 or -ENOMEM (the heap unchanged). */
int minheap_reserve(struct minheap *h, size_t n);
/* Add an entry; the caller has reserved room for it (asserted). */
void minheap_push(struct minheap *h, uint64_t key, void *item);
/* The item with the smallest key, or NULL when empty. */
void *minheap_peek(const struct minheap *h);
/* Remove and return the item with the smallest key, or NULL when empty. */
void *minheap_pop(struct minheap *h);
static inline size_t minheap_size(const struct minheap *h)
{
        return h->n;
}
/* Drop every entry (the items are the caller's); memory stays reserved. */
static inline void minheap_clear(struct minheap *h)
{
        h->n = 0;
}
/* Free the memory; the heap is empty and usable again afterwards. */
void minheap_done(struct minheap *h);
