/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (a list belongs to one thread at a time) */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "device/db.h"
#include "shared/macro.h"

static int strlist_grow(struct strlist *l)
{
        size_t cap;
        char **items;

        if (l->n < l->cap)
                return 0;
        if (l->cap > SIZE_MAX / 2 / sizeof(char *))
                return -ENOMEM;
        cap = l->cap ? l->cap * 2 : 8;
        items = realloc(l->items, cap * sizeof(char *));
        if (!items)
                return -ENOMEM;
        l->items = items;
        l->cap = cap;
        return 0;
}

int strlist_add(struct strlist *l, const char *s)
{
        char *copy;
        int r;

        if (!l || !s)
                return -EINVAL;
        r = strlist_grow(l);
        if (r < 0)
                return r;
        copy = strdup(s);
        if (!copy)
                return -ENOMEM;
        l->items[l->n++] = copy;
        return 0;
}

int strlist_add_unique(struct strlist *l, const char *s)
{
        if (!l || !s)
                return -EINVAL;
        if (strlist_contains(l, s))
                return 0;
        return strlist_add(l, s);
}

bool strlist_contains(const struct strlist *l, const char *s)
{
        if (!l || !s)
                return false;
        for (size_t i = 0; i < l->n; i++)
                if (streq(l->items[i], s))
                        return true;
        return false;
}

void strlist_remove(struct strlist *l, const char *s)
{
        char *self = NULL; /* `s` may be one of our own items: free it last */
        size_t j = 0;

        if (!l || !s)
                return;
        for (size_t i = 0; i < l->n; i++) {
                if (l->items[i] == s)
                        self = l->items[i];
                else if (streq(l->items[i], s))
                        free(l->items[i]);
                else
                        l->items[j++] = l->items[i];
        }
        l->n = j;
        free(self);
}

void strlist_clear(struct strlist *l)
{
        if (!l)
                return;
        for (size_t i = 0; i < l->n; i++)
                free(l->items[i]);
        free(l->items);
        *l = (struct strlist){};
}
