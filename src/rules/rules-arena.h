/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (an arena is used by one thread while it is built; read-only after) */
#pragma once
/* A bump allocator for one compiled rules snapshot: every string and array of
 * a struct rules lives in its arena and is freed at once by arena_free().
 * Nothing is ever freed individually. Allocations are 8-byte aligned. */

#include <stddef.h>

#define ARENA_CHUNK_SIZE (64u * 1024u) /* largest regular chunk */

struct arena;

/* New empty arena, or NULL (out of memory). */
struct arena *arena_new(void);
/* Frees every chunk; accepts NULL. */
void arena_free(struct arena *a);

/* Zeroed memory valid until arena_free(); NULL on out of memory or overflow.
 * size 0 returns a valid unique pointer. */
void *arena_alloc(struct arena *a, size_t size);
/* Arrays: n * size with overflow check. */
void *arena_alloc_array(struct arena *a, size_t n, size_t size);
void *arena_memdup(struct arena *a, const void *p, size_t size);
/* Copies of NUL-terminated / length-bounded strings (always NUL-terminated). */
char *arena_strdup(struct arena *a, const char *s);
char *arena_strndup(struct arena *a, const char *s, size_t n);

/* Bytes obtained from malloc for this arena (for statistics). */
size_t arena_allocated(const struct arena *a);
