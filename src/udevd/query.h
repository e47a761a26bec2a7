/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: manager (registration and dispatch); query_out: the caller's thread */
#pragma once
/* Named queries answered over the control socket (CTRL_MSG_TUDEV_QUERY,
 * proto/ctrl-msg.h): `udevadm stats`, `udevadm settle --seqnum=...`, and
 * whatever another module registers.
 *
 * A query string is "NAME" or "NAME ARGS" (split at the first space); the
 * handler registered for NAME gets ARGS ("" when none) and writes its answer
 * text into a query_out. Handlers run on the manager thread, between two
 * epoll wakeups: they must be quick and must not block (read counters, walk
 * the queue under its lock, ...).
 *
 * Adding a query (e.g. "explain"):
 *     static int explain_query(const char *args, struct query_out *out, void *ud)
 *     { ...; query_printf(out, "...\n", ...); return 0; }
 *     query_register(table, "explain", explain_query, ud);   (in manager_new())
 * A handler returns 0, or a negative errno with a one-line error message
 * written into `out` (query_fail() does both): the client sees that status
 * and that line. */

#include <stdbool.h>
#include <stddef.h>

#define QUERY_NAME_MAX 32
#define QUERY_HANDLERS_MAX 16

/* Bounded growing text buffer (at most CTRL_REPLY_MAX bytes). Once a write
 * did not fit, `overflow` is set and further writes are ignored; the server
 * then answers -E2BIG. */
struct query_out {
        char *buf; /* owned, NUL-terminated when len > 0 */
        size_t len, cap;
        bool overflow;
};

/* Append formatted text. 0, or -E2BIG / -ENOMEM (overflow set). */
int query_printf(struct query_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Drop the text written so far, write one error line, return `error`. */
int query_fail(struct query_out *o, int error, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
void query_out_done(struct query_out *o);

typedef int (*query_handler_fn)(const char *args, struct query_out *out, void *userdata);

struct query_handler {
        char name[QUERY_NAME_MAX];
        query_handler_fn fn;
        void *userdata;
};

struct query_table {
        struct query_handler h[QUERY_HANDLERS_MAX];
        size_t n;
};

/* name: [a-z0-9-]+, shorter than QUERY_NAME_MAX. 0, -EINVAL, -EEXIST (already
 * registered) or -ENOSPC (table full). */
int query_register(struct query_table *t, const char *name, query_handler_fn fn, void *userdata);
/* Run the handler for `query` into `out` (cleared first). Returns the
 * handler's result; -ENOENT (with an error line) for an unknown name;
 * -E2BIG (with an error line) if the answer did not fit. */
int query_dispatch(const struct query_table *t, const char *query, struct query_out *out);
