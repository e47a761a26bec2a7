/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (udevadm is single-threaded) */
#pragma once
/* The report of pending events that `udevadm settle` and `udevadm trigger
 * --settle` print on timeout (udevadm(8), "UDEVADM SETTLE"): the daemon's
 * answer to the "pending" query (udevd/manager.c, one tab-separated line per
 * queued or running event) turned into one readable line per event:
 *
 *   "  SEQNUM ACTION DEVPATH (SUBSYSTEM) for AGE: WAITS-ON"
 *
 * SEQNUM is FIRST..SEQNUM when storm damping merged later changes into the
 * event; AGE and times are seconds with three decimals; WAITS-ON is one of
 *   program NAME (pid PID, running TIME)    pid 0: not found
 *   running rules
 *   a locked disk
 *   event SEQNUM          an earlier event of the same or a related device
 *   an earlier event      (one the daemon could not name)
 *   a free worker         (queued)
 * At most PENDING_REPORT_LINES lines, then "  ... and N more". */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "proto/event-scope.h"

#define PENDING_REPORT_LINES 50

/* One parsed line of the "pending" answer; pointers into the (modified)
 * line. */
struct pending_line {
        uint64_t seqnum, first_seqnum, age_usec;
        const char *action, *devpath, *subsystem, *state, *detail;
};

/* Split one line (without its newline) in place. 0 or -EBADMSG. A line of
 * seven fields (a daemon without FIRST_SEQNUM) gets first_seqnum = seqnum. */
int pending_line_parse(char *line, struct pending_line *ret);

/* Only events for which keep(line, userdata) is true are reported (NULL:
 * all). */
struct pending_line;
typedef bool (*pending_keep_fn)(const struct pending_line *l, void *userdata);

/* Print the report of the "pending" answer `text` (modified) to `out`:
 * a header line and the events kept. Returns the number of events kept
 * (printed or counted in "more"), or -EBADMSG for a malformed line (what
 * came before is printed). */
int pending_report_print(char *text, pending_keep_fn keep, void *userdata, FILE *out);

/* Ask the running daemon for its pending events in `scope` (NULL: all)
 * within timeout_usec and print the report to stderr. Returns what
 * pending_report_print() returns, or the query's error (-EOPNOTSUPP: the
 * daemon does not answer queries; nothing printed then). Logs its errors at
 * debug level only: the caller has already said that it timed out. */
int pending_report(const struct event_scope *scope, pending_keep_fn keep, void *userdata,
                   uint64_t timeout_usec);
