/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (no state outside the call) */
/* mtd_probe's SmartMedia check (mtd-smartmedia.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers/mtd-smartmedia.h"
#include "shared/log.h"
#include "shared/macro.h"

#define SM_SECTOR_SIZE 512
#define SM_SMALL_PAGE 256

/* the first bytes of a SmartMedia CIS */
static const uint8_t cis_signature[] = { 0x01, 0x03, 0xd9, 0x01, 0xff, 0x18, 0x02, 0xdf, 0x01, 0x20 };

int mtd_probe_smartmedia(int fd, const struct mtd_info_user *info)
{
        _cleanup_free_ uint8_t *buf = malloc(SM_SECTOR_SIZE);
        int32_t sector = (int32_t)info->writesize, limit, spare;
        unsigned megs = info->size / (1024 * 1024);
        bool found = false;

        if (!buf)
                return -ENOMEM;
        if (info->type != MTD_NANDFLASH) {
                log_debug("Not marked MTD_NANDFLASH.");
                return 0;
        }
        if (sector != SM_SECTOR_SIZE && sector != SM_SMALL_PAGE) {
                log_debug("Unexpected sector size: %i", sector);
                return 0;
        }
        /* the CIS is in the first good block among the spare ones */
        spare = megs == 1 || megs == 2 ? 6 : megs == 4 ? 12 : 24;
        limit = (int32_t)((uint32_t)info->erasesize * (uint32_t)spare);
        for (int32_t off = 0; off < limit; off += sector) {
                /* (sic) offset and whence swapped, as in systemd: a seek to
                 * 0 first, then a failing call that leaves the position */
                (void)lseek(fd, SEEK_SET, (int)off);
                if (read(fd, buf, SM_SECTOR_SIZE) == SM_SECTOR_SIZE) {
                        found = true;
                        break;
                }
        }
        if (!found) {
                log_debug("CIS not found");
                return 0;
        }
        if (memcmp(buf, cis_signature, sizeof(cis_signature)) != 0 &&
            memcmp(buf + SM_SMALL_PAGE, cis_signature, sizeof(cis_signature)) != 0) {
                log_debug("CIS signature didn't match");
                return 0;
        }
        return 1;
}
