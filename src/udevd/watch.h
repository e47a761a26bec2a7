/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (begin/end from worker threads; one inotify thread of its own) */
#pragma once
/* inotify watches on device nodes: OPTIONS+="watch" (tudev-rules(7) OPTIONS
 * IN RULES), as systemd-udevd 252 does them.
 *
 * A worker ends the watch of a device before its rules run (every event) and
 * begins it again after RUN when the rules asked for it (never on remove):
 * inotify_add_watch(devnode, IN_CLOSE_WRITE) -> wd. Each watch is recorded in
 * <run>/watch/ as two symlinks, "<device id>" -> "<wd>" and "<wd>" ->
 * "<device id>", so that a restarted daemon can find its devices again.
 * The records are this instance's own (made and removed only here), so the
 * module also keeps the set of watched ids in memory: ending the watch of a
 * device that has none costs no system call.
 *
 * The module's thread reads the inotify fd. On IN_CLOSE_WRITE it resolves wd
 * -> device id -> device (skipped if gone or without a node), lets requeued
 * events of the same whole disk run at once (event_queue_retry_disk) and
 * synthesizes a "change" uevent:
 *   - whole disk (subsystem block, devtype disk) not named dm-*: flock
 *     LOCK_EX|LOCK_NB + BLKRRPART on the node; if that worked and the disk has
 *     partitions the kernel sends the events itself; otherwise "change" is
 *     written to the uevent file of the disk and of each partition;
 *   - any other device: "change" to its uevent file.
 * At most one synthesized change per device is pending (written, its event
 * not yet started): further close events within 3 s are dropped and
 * counted (udevd/watch-limit.h).
 * IN_IGNORED is not handled (the records go with the device's remove event).
 *
 * At start the records of a previous instance are moved to <run>/watch.old,
 * every "<wd>" entry is resolved to its device and watched again, and
 * watch.old is deleted. At stop the records stay for the next instance. */

#include <stdint.h>

struct event_queue;
struct watch;

/* Create the inotify instance, restore the recorded watches and start the
 * thread. run_dir ("/run/udev") and sys_dir ("/sys") are copied; queue is
 * borrowed (may be NULL) and must outlive the watch. 0 or -errno. */
int watch_new(const char *run_dir, const char *sys_dir, struct event_queue *queue,
              struct watch **ret);
/* Stop the thread and close the inotify instance. NULL is fine. */
void watch_free(struct watch *w);

/* Watch `devnode` for device `id` ("b7:0"): drops any old record of the
 * device first. 0 or -errno (nothing recorded then). */
int watch_begin(struct watch *w, const char *id, const char *devnode);
/* Drop the watch of device `id`, if any. 0 or -errno. */
int watch_end(struct watch *w, const char *id);
/* Close events dropped by the rate limit so far. Any thread; NULL gives 0. */
uint64_t watch_limited(struct watch *w);
