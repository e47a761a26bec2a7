/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any, but one caller at a time (the event queue calls it under its lock) */
#pragma once
/* Whether the CPUs are saturated right now: the number of runnable tasks
 * the kernel reports in <proc>/loadavg (fourth field, "runnable/total",
 * counted at the moment of the read, the reader included) against the
 * number of CPUs udevd may use. The event queue asks it before it lets one
 * more event run while others wait for programs (udevd/event-queue.h): with
 * every CPU taken, another program at once only shares the same CPUs, and
 * costs one more process's memory.
 *
 * (The kernel's pressure stall information, cpu.pressure, was the first
 * choice; on the development VM its "total" does not move at millisecond
 * scale while tasks wait, so it cannot steer decisions taken per
 * millisecond.) */

#include <stdbool.h>
#include <stdint.h>

struct cpu_load;

/* 0, -ENOENT when <proc_root>/loadavg cannot be read or parsed, -ENOMEM.
 * `cpus`: the CPUs this process may run on (at least 1). */
int cpu_load_new(const char *proc_root, unsigned cpus, struct cpu_load **ret);
void cpu_load_free(struct cpu_load *l);

/* True when, besides the caller, at least `cpus` tasks are runnable. The
 * file is read at most once per `period_usec` (now_usec: CLOCK_MONOTONIC);
 * in between the last answer is repeated. A failed read answers false. */
bool cpu_load_busy(struct cpu_load *l, uint64_t now_usec, uint64_t period_usec);

/* The runnable count of a loadavg text ("0.50 0.40 0.30 3/250 1234").
 * 0 or -EINVAL. Exposed for tests. */
int cpu_load_parse_runnable(const char *text, unsigned *ret);
