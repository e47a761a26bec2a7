/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: manager (registration and dispatch); query_out: the caller's thread */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/ctrl-msg.h"
#include "udevd/query.h"

static int vappend(struct query_out *o, const char *fmt, va_list ap)
{
        va_list aq;
        size_t need;
        int n;

        if (o->overflow)
                return -E2BIG;
        va_copy(aq, ap);
        n = vsnprintf(o->buf ? o->buf + o->len : NULL, o->buf ? o->cap - o->len : 0, fmt, aq);
        va_end(aq);
        if (n < 0) {
                o->overflow = true;
                return -EINVAL;
        }
        need = o->len + (size_t)n + 1;
        if (need > CTRL_REPLY_MAX) {
                o->overflow = true;
                return -E2BIG;
        }
        if (need > o->cap) {
                size_t cap = o->cap ? o->cap : 4096;
                char *b;

                while (cap < need)
                        cap *= 2;
                if (cap > CTRL_REPLY_MAX)
                        cap = CTRL_REPLY_MAX;
                b = realloc(o->buf, cap);
                if (!b) {
                        o->overflow = true;
                        return -ENOMEM;
                }
                o->buf = b;
                o->cap = cap;
                (void)vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
        }
        o->len += (size_t)n;
        return 0;
}

int query_printf(struct query_out *o, const char *fmt, ...)
{
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vappend(o, fmt, ap);
        va_end(ap);
        return r;
}

int query_fail(struct query_out *o, int error, const char *fmt, ...)
{
        va_list ap;

        o->len = 0;
        o->overflow = false;
        if (o->buf)
                o->buf[0] = '\0';
        va_start(ap, fmt);
        (void)vappend(o, fmt, ap);
        va_end(ap);
        return error;
}

void query_out_done(struct query_out *o)
{
        free(o->buf);
        *o = (struct query_out){};
}

static bool name_is_valid(const char *name)
{
        size_t n = strlen(name);

        if (n == 0 || n >= QUERY_NAME_MAX)
                return false;
        return strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789-") == n;
}

int query_register(struct query_table *t, const char *name, query_handler_fn fn, void *userdata)
{
        if (!t || !name || !fn || !name_is_valid(name))
                return -EINVAL;
        for (size_t i = 0; i < t->n; i++)
                if (strcmp(t->h[i].name, name) == 0)
                        return -EEXIST;
        if (t->n >= QUERY_HANDLERS_MAX)
                return -ENOSPC;
        strcpy(t->h[t->n].name, name);
        t->h[t->n].fn = fn;
        t->h[t->n].userdata = userdata;
        t->n++;
        return 0;
}

int query_dispatch(const struct query_table *t, const char *query, struct query_out *out)
{
        const char *sp = strchr(query, ' ');
        size_t n = sp ? (size_t)(sp - query) : strlen(query);
        int r;

        out->len = 0;
        out->overflow = false;
        if (out->buf)
                out->buf[0] = '\0';
        for (size_t i = 0; t && i < t->n; i++) {
                if (strlen(t->h[i].name) != n || strncmp(t->h[i].name, query, n) != 0)
                        continue;
                r = t->h[i].fn(sp ? sp + 1 : "", out, t->h[i].userdata);
                if (r >= 0 && out->overflow)
                        return query_fail(out, -E2BIG, "reply too large (more than %u bytes)\n",
                                          (unsigned)CTRL_REPLY_MAX);
                return r < 0 ? r : 0;
        }
        return query_fail(out, -ENOENT, "unknown query \"%.*s\"\n", (int)(n > 64 ? 64 : n), query);
}
