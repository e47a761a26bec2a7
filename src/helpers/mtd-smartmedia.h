/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (no state outside the call) */
#pragma once
/* The work of the mtd_probe program (75-probe_mtd.rules, on mtd*ro nodes):
 * is this NAND flash a SmartMedia card, i.e. does it hold the SmartMedia CIS
 * (card information structure)? As systemd 252's mtd_probe: NAND only, 256
 * or 512-byte pages, the first 512-byte read that succeeds holds the CIS at
 * offset 0 or 256. */

#include <mtd/mtd-user.h>

/* 1 SmartMedia, 0 not (not NAND, another page size, no full read within
 * the blocks the CIS may be in, or no CIS), -ENOMEM. `fd` (borrowed) is
 * read from; systemd's lseek(fd, SEEK_SET, offset) with swapped arguments is
 * kept, so the reads after the first go on where the last one ended, as
 * there. */
int mtd_probe_smartmedia(int fd, const struct mtd_info_user *info);
