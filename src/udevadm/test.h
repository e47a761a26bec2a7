/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (udevadm is single-threaded) */
#pragma once
/* udevadm test [--action=ACTION] [--rules-dir=DIR]... [--apply] DEVPATH|SYSPATH
 *
 * Without --apply: run the rules for the device as the daemon would and
 * print the result (systemd 252's format: banner, KEY=value lines, one
 * "run: '...'" line per RUN entry; rule actions with file:line and the node
 * owner/group/mode/links on stderr), changing nothing (no ATTR/SYSCTL writes,
 * no node, links, DB; RUN not executed; PROGRAM and IMPORT{program} do run).
 *
 * With --apply: perform the event for real, as the daemon does: on add the
 * device node is first created if missing (mknod, as devtmpfs would), then
 * rules, OWNER/GROUP/MODE, links, tag index, DB, RUN; on remove the DB
 * record and tag index entries are deleted, rules run, links are released,
 * RUN runs and the node is removed (as devtmpfs would). */

int test_main(int argc, char *argv[]);
