/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (udevadm is single-threaded) */
#pragma once
/* udevadm test-builtin [--action=ACTION] COMMAND DEVPATH|SYSPATH (udevadm(8)
 * UDEVADM TEST-BUILTIN): run one builtin on a device and print each property it
 * sets as KEY=VALUE, like systemd 252's. */

int test_builtin_main(int argc, char *argv[]);
