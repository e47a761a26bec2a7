/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: none of its own (minheap.h) */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>

#include "shared/minheap.h"

int minheap_reserve(struct minheap *h, size_t n)
{
        struct minheap_entry *v;
        size_t alloc;

        if (n <= h->alloc)
                return 0;
        alloc = h->alloc ? h->alloc : 16;
        while (alloc < n) {
                if (alloc > SIZE_MAX / 2 / sizeof(*v))
                        return -ENOMEM;
                alloc *= 2;
        }
        v = realloc(h->v, alloc * sizeof(*v));
        if (!v)
                return -ENOMEM;
        h->v = v;
        h->alloc = alloc;
        return 0;
}

void minheap_push(struct minheap *h, uint64_t key, void *item)
{
        size_t i;

        assert(h->n < h->alloc);
        i = h->n++;
        while (i > 0) {
                size_t parent = (i - 1) / 2;

                if (h->v[parent].key <= key)
                        break;
                h->v[i] = h->v[parent];
                i = parent;
        }
        h->v[i] = (struct minheap_entry){ key, item };
}

void *minheap_peek(const struct minheap *h)
{
        return h->n > 0 ? h->v[0].item : NULL;
}

void *minheap_pop(struct minheap *h)
{
        struct minheap_entry last;
        void *top;
        size_t i = 0;

        if (h->n == 0)
                return NULL;
        top = h->v[0].item;
        last = h->v[--h->n];
        for (;;) {
                size_t c = 2 * i + 1;

                if (c >= h->n)
                        break;
                if (c + 1 < h->n && h->v[c + 1].key < h->v[c].key)
                        c++;
                if (last.key <= h->v[c].key)
                        break;
                h->v[i] = h->v[c];
                i = c;
        }
        if (h->n > 0)
                h->v[i] = last;
        return top;
}

void minheap_done(struct minheap *h)
{
        free(h->v);
        *h = (struct minheap)MINHEAP_INIT;
}
