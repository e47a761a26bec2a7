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
 * default dispositions.
 *
 * The program limit (--exec-helper-program-limit=N, 0 or absent: none): a
 * request starts its program at once while fewer than N of the running
 * programs are runnable (state R in /proc/PID/stat); otherwise it is held,
 * and held requests start in arrival order as programs end or go to sleep
 * (looked at on every request, every end, and every millisecond while some
 * are held). A held request whose deadline passes is answered ETIME. So at
 * most about N programs compete for the CPUs, while programs that sleep
 * (on a timer, a pipe, the disk) never hold others back. Only the program's
 * own process is looked at, not the processes it starts. */

#define EXEC_HELPER_ARG "--exec-helper="
#define EXEC_HELPER_LOG_ARG "--exec-helper-log-level="
#define EXEC_HELPER_LIMIT_ARG "--exec-helper-program-limit="
#define EXEC_PROGRAM_LIMIT_MAX 4096
#define EXEC_HELPER_FD 3
#define EXEC_HELPER_COMM "udevd-exec"

/* If argv[1] is --exec-helper=FD, run the helper on FD and exit the process
 * with its status; otherwise return at once. Call before anything else. */
void exec_helper_run_if_requested(int argc, char *argv[]);

/* The helper's main loop on the request socket `fd` (consumed). Returns the
 * process exit status. */
int exec_helper_main(int fd, int log_level, unsigned program_limit);
