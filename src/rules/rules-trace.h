/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (a trace belongs to one thread at a time: the worker that
 * records it, then whoever holds the copy; a copy is never modified) */
#pragma once
/* The rules trace: what the rules engine did with one event, for `udevadm
 * test --explain` and `udevadm explain` (udevadm(8) EXPLAIN OUTPUT).
 *
 * Recording: set udev_event.trace to a trace before rules_apply(); the
 * evaluator then appends one record per rule line it evaluates (the line's
 * index in the snapshot, whether every key matched, the first key that did
 * not and the value it was compared with, the time spent on the line) and
 * one per program or builtin it runs (command, result, time), and
 * rules_execute_run() one per RUN entry. With udev_event.trace == NULL
 * nothing of this runs: no allocation, no clock read, no formatting.
 *
 * A trace is one fixed-size block allocated by rules_trace_new(): records
 * that no longer fit are dropped and counted (rules_trace_truncated()), so
 * recording never allocates and never fails. Records are packed (a line
 * that failed on an event key or was applied costs 2-3 bytes, values and
 * commands are stored only where they cannot be recomputed from the rules
 * and the event): with Debian 12's rules the compact trace of a net "add"
 * is under 1 KiB (rules/test-rules-trace.c, test_debian_net_size). Records
 * refer to the snapshot by line index: the trace must be formatted with the
 * same `struct rules` it was recorded with (the caller keeps that snapshot
 * alive). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct rules;

/* Default and smallest record space of one trace. */
#define RULES_TRACE_SIZE_DEFAULT ((size_t)64 * 1024)
#define RULES_TRACE_SIZE_MIN ((size_t)512)
#define RULES_TRACE_SIZE_MAX ((size_t)16 * 1024 * 1024)
/* A compared value or a command is kept up to this many bytes. */
#define RULES_TRACE_VALUE_MAX 256

struct rules_trace;

enum {
        /* Time every rule line (two clock reads per line; programs and
         * builtins are always timed). Without it a line's time is "-": the
         * compact trace udevd keeps for every event. */
        RULES_TRACE_LINE_TIMES = 1u << 0,
};

/* A trace with `size` bytes of record space (clamped to
 * [RULES_TRACE_SIZE_MIN, RULES_TRACE_SIZE_MAX]) and RULES_TRACE_* `flags`.
 * 0 or -ENOMEM. */
int rules_trace_new(size_t size, unsigned flags, struct rules_trace **ret);
/* Whether rule lines are timed (RULES_TRACE_LINE_TIMES). */
bool rules_trace_line_times(const struct rules_trace *t);
void rules_trace_free(struct rules_trace *t);
static inline void rules_trace_freep(struct rules_trace **t) { rules_trace_free(*t); }

/* An exactly sized copy of what `t` holds, for keeping (udevd's ring of
 * recent traces). 0 or -ENOMEM. */
int rules_trace_dup(const struct rules_trace *t, struct rules_trace **ret);
/* Bytes a copy made by rules_trace_dup() occupies. */
size_t rules_trace_footprint(const struct rules_trace *t);
/* The same copy written into `buf`: rules_trace_footprint(t) bytes, aligned
 * to 8 (the caller's memory, e.g. udevd's ring; never freed with
 * rules_trace_free()). Returns it as a trace. */
struct rules_trace *rules_trace_copy_to(const struct rules_trace *t, void *buf);

/* Forget the recorded event: seqnum 0, no records (keeps flags and
 * generation). */
void rules_trace_reset(struct rules_trace *t);

/* Set by the daemon: the rules generation (shown in the output; 0 = not
 * shown). Recording keeps it. */
void rules_trace_set_generation(struct rules_trace *t, uint64_t generation);
uint64_t rules_trace_generation(const struct rules_trace *t);
/* The event the trace was recorded for (0 = unknown, udevadm test). */
uint64_t rules_trace_seqnum(const struct rules_trace *t);
/* DEVPATH of the event ("" before recording). */
const char *rules_trace_devpath(const struct rules_trace *t);
/* Whether records were dropped; how many. */
bool rules_trace_truncated(const struct rules_trace *t);
unsigned rules_trace_dropped(const struct rules_trace *t);
/* Rule lines evaluated, of them applied (recorded or dropped). */
unsigned rules_trace_lines(const struct rules_trace *t);
unsigned rules_trace_applied(const struct rules_trace *t);

enum {
        RULES_TRACE_FORMAT_NO_TIME = 1u << 0, /* "-" instead of each time (golden tests) */
};

/* Write the trace as text, one line per evaluated rule line (format in
 * udevadm(8) EXPLAIN OUTPUT). `rules` is the snapshot the trace was recorded
 * with. 0, or -EIO when writing to `f` failed. */
int rules_trace_format(const struct rules_trace *t, const struct rules *rules, unsigned flags,
                       FILE *f);

/* ---- recording: for rules-exec.c only ---- */

enum rules_trace_exec_kind {
        RULES_TRACE_PROGRAM,        /* PROGRAM== */
        RULES_TRACE_IMPORT_PROGRAM, /* IMPORT{program} */
        RULES_TRACE_IMPORT_BUILTIN, /* IMPORT{builtin} */
        RULES_TRACE_RUN_PROGRAM,    /* RUN{program}, after the rules */
        RULES_TRACE_RUN_BUILTIN,    /* RUN{builtin} */
};

/* How the value of a failed key is given. */
enum rules_trace_value {
        RULES_TRACE_VALUE_NONE,     /* nothing to show */
        RULES_TRACE_VALUE_STRING,   /* `value` is what the key compared */
        RULES_TRACE_VALUE_ABSENT,   /* the key compared an absent value */
        RULES_TRACE_VALUE_OUTCOME,  /* `value` describes an outcome ("exit status 1") */
        RULES_TRACE_VALUE_EVENT,    /* the event's ACTION/DEVPATH/KERNEL/SUBSYSTEM/DRIVER/CONST:
                                     * taken from the event record at format time */
};

/* Start recording an event (forgets what the trace held, keeps the
 * generation). Strings are copied (bounded). */
void rules_trace_begin(struct rules_trace *t, uint64_t seqnum, const char *action,
                       const char *devpath, const char *sysname, const char *subsystem);
/* One evaluated line: `line` its index in the snapshot, `verdict` 1 applied,
 * 0 a key failed (`tok` its index in the line), <0 the rules were aborted at
 * `tok`. For a failed parent key (KERNELS, ATTRS, ...) `device` names the
 * device it was compared on (NULL otherwise). */
void rules_trace_line(struct rules_trace *t, size_t line, int verdict, unsigned tok,
                      uint64_t nsec, enum rules_trace_value vkind, const char *value,
                      const char *device);
/* One program or builtin: `status` as the spawner or builtin returned it
 * (0 success, >0 exit status, <0 -errno). `line` the index of the line that
 * ran it, SIZE_MAX for RUN entries. */
void rules_trace_exec(struct rules_trace *t, size_t line, enum rules_trace_exec_kind kind,
                      const char *cmd, int status, uint64_t nsec);
/* The rules are done: the driver (for DRIVER values; NULL = none), the
 * rules' result (0 or -errno) and their total time. */
void rules_trace_end(struct rules_trace *t, const char *driver, int result, uint64_t nsec);

/* CLOCK_MONOTONIC in nanoseconds (read only while tracing). */
uint64_t rules_trace_now(void);
