/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (udevadm is single-threaded) */
#pragma once
/* udevadm info: show devices and what the udev database records for them
 * (udevadm(8) UDEVADM INFO). */

/* argv[0] is "info"; 0 or a negative errno after logging. */
int info_main(int argc, char *argv[]);
