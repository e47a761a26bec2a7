/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: helper process (single-threaded) */
#pragma once
/* The exec helper: a small single-threaded process that spawns every external
 * program for udevd's worker threads (which never fork), watches each child
 * with a pidfd, enforces per-program deadlines with one timerfd, and answers
 * each request with how its program ended. Protocol: exec-msg.h.
 *
 * It is udevd's own binary re-executed (/proc/self/exe) with the hidden
 * first argument --exec-helper=FD, so its address space is fresh and small.
 * Any program that starts helpers (udevd, the exec unit tests, the spawn
 * benchmark) calls exec_helper_run_if_requested() first thing in main().
 *
 * Life cycle: it runs until its request socket reaches end of stream (udevd
 * closed it or died); it then sends SIGTERM (+SIGCONT) to the process groups
 * of the programs still running and exits. All signals stay blocked in the
 * helper (it is killed only by SIGKILL); its programs get an empty mask and
 * default dispositions. */

#define EXEC_HELPER_ARG "--exec-helper="
#define EXEC_HELPER_LOG_ARG "--exec-helper-log-level="
#define EXEC_HELPER_FD 3
#define EXEC_HELPER_COMM "udevd-exec"

/* If argv[1] is --exec-helper=FD, run the helper on FD and exit the process
 * with its status; otherwise return at once. Call before anything else. */
void exec_helper_run_if_requested(int argc, char *argv[]);

/* The helper's main loop on the request socket `fd` (consumed). Returns the
 * process exit status. */
int exec_helper_main(int fd, int log_level);
