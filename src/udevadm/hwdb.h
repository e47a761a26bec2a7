/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (udevadm is single-threaded) */
#pragma once
/* udevadm hwdb [--update [--usr] [--strict]] [--test=MODALIAS] [--root=PATH]
 *
 * --update compiles the hwdb.d sources (builtins/hwdb-compile.h) under
 * --root into ROOT/etc/udev/hwdb.bin, or with --usr into ROOT/lib/udev/hwdb.bin
 * (where Debian 12's `systemd-hwdb --usr update` writes it). Malformed
 * source lines are logged; with --strict they make the exit status 1 (the
 * database is written all the same). --test prints the properties of
 * MODALIAS as KEY=VALUE lines in lookup order, from the first hwdb.bin of
 * the search path under --root (after the update, if both are given).
 * Returns 0 or a negative errno (logged). */

int hwdb_main(int argc, char *argv[]);
