/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (one builder thread; the arena is never shared while growing) */
/* Bump allocator: a singly-linked list of chunks, allocation from the newest
 * one. Chunks start small (a one-line snapshot stays small) and double up to
 * ARENA_CHUNK_SIZE; a request larger than a quarter of that gets a chunk of
 * its own so that the current chunk's free tail is not wasted. Memory is
 * zeroed per allocation, not per chunk. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rules/rules-arena.h"
#include "shared/macro.h"

#define ARENA_ALIGN 8u
#define ARENA_FIRST_CHUNK 4096u

struct arena_chunk {
        struct arena_chunk *next;
        size_t size; /* usable bytes in data[] */
        size_t used;
        _Alignas(8) unsigned char data[];
};

struct arena {
        struct arena_chunk *head; /* current chunk (bump target) */
        struct arena_chunk *big;  /* dedicated chunks of large allocations */
        size_t next_size;         /* size of the next regular chunk */
        size_t allocated;
};

struct arena *arena_new(void)
{
        return calloc(1, sizeof(struct arena));
}

static void chunks_free(struct arena_chunk *c)
{
        while (c) {
                struct arena_chunk *next = c->next;

                free(c);
                c = next;
        }
}

void arena_free(struct arena *a)
{
        if (!a)
                return;
        chunks_free(a->head);
        chunks_free(a->big);
        free(a);
}

static struct arena_chunk *chunk_new(struct arena *a, size_t size)
{
        struct arena_chunk *c;

        if (size > SIZE_MAX - sizeof(*c))
                return NULL;
        c = malloc(sizeof(*c) + size);
        if (!c)
                return NULL;
        c->next = NULL;
        c->used = 0;
        c->size = size;
        a->allocated += sizeof(*c) + size;
        return c;
}

void *arena_alloc(struct arena *a, size_t size)
{
        struct arena_chunk *c = a->head;
        size_t rounded;

        if (size > SIZE_MAX - ARENA_ALIGN)
                return NULL;
        rounded = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
        if (rounded == 0)
                rounded = ARENA_ALIGN;

        if (rounded > ARENA_CHUNK_SIZE / 4) {
                c = chunk_new(a, rounded);
                if (!c)
                        return NULL;
                c->used = rounded;
                c->next = a->big;
                a->big = c;
                memset(c->data, 0, size);
                return c->data;
        }
        if (!c || c->size - c->used < rounded) {
                size_t want = a->next_size ? a->next_size : ARENA_FIRST_CHUNK;

                /* a request may exceed a young chunk's size (up to CHUNK/4) */
                want = MAX(want, rounded);
                c = chunk_new(a, want);
                if (!c)
                        return NULL;
                a->next_size = MIN(2 * want, (size_t)ARENA_CHUNK_SIZE);
                c->next = a->head;
                a->head = c;
        }
        void *p = c->data + c->used;
        c->used += rounded;
        memset(p, 0, size);
        return p;
}

void *arena_alloc_array(struct arena *a, size_t n, size_t size)
{
        if (size != 0 && n > SIZE_MAX / size)
                return NULL;
        return arena_alloc(a, n * size);
}

void *arena_memdup(struct arena *a, const void *p, size_t size)
{
        void *q = arena_alloc(a, size);

        if (q && size > 0)
                memcpy(q, p, size);
        return q;
}

static char *dup_len(struct arena *a, const char *s, size_t len)
{
        char *q;

        if (len == SIZE_MAX)
                return NULL;
        q = arena_alloc(a, len + 1);
        if (!q)
                return NULL;
        memcpy(q, s, len);
        q[len] = '\0';
        return q;
}

char *arena_strndup(struct arena *a, const char *s, size_t n)
{
        return dup_len(a, s, strnlen(s, n));
}

char *arena_strdup(struct arena *a, const char *s)
{
        return dup_len(a, s, strlen(s));
}

size_t arena_allocated(const struct arena *a)
{
        return a->allocated;
}
