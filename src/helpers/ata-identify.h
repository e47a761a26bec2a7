/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (no global state) */
#pragma once
/* ata_id's work (../man/tudev-helpers.8): fetch the 512-byte ATA IDENTIFY
 * (or IDENTIFY PACKET) DEVICE block through SCSI/ATA Translation, decode it
 * and print the properties systemd 252's ata_id prints, in its order and
 * format. The decoding half needs no device, so it is unit-tested over
 * recorded blocks (test-ata-identify.c). */

#include <stdbool.h>
#include <stdint.h>

#include "helpers/helper-util.h"
#include "helpers/sg-io.h"

/* Ask the device behind `fd` (an sd/sr node: SG_IO v4, falling back to v3
 * when the node refuses v4 with EINVAL) for its IDENTIFY data: a standard
 * INQUIRY first, then IDENTIFY PACKET DEVICE through ATA PASS-THROUGH (16)
 * for a CD/DVD (peripheral type 5), IDENTIFY DEVICE through ATA
 * PASS-THROUGH (12) for a disk (type 0 or 0x14), nothing for other types.
 * `identify` is zeroed first and then holds whatever the device transferred,
 * even on failure (ata_id reads some words of it either way).
 * On success `*peripheral_type` is the INQUIRY's peripheral device type.
 * `sd257`: judge the answer as systemd 257 does (through the v3 header a
 * successful ioctl is enough; 252 also wants the ATA registers in the sense).
 * 0 on success; -EIO if the device answered but not as a SAT device does
 * (statuses, sense, type, all-zero data), -errno of a failed ioctl. */
int ata_identify_probe(int fd, uint8_t identify[ATA_IDENTIFY_SIZE], bool sd257,
                       int *peripheral_type);

/* The IDENTIFY fields ata_id reports (struct hd_driveid's names). */
struct ata_info {
        uint16_t config;        /* word 0 */
        uint16_t command_set_1; /* word 82 */
        uint16_t command_set_2; /* word 83 */
        uint16_t cfs_enable_1;  /* word 85 */
        uint16_t cfs_enable_2;  /* word 86 */
        uint16_t trseuc;        /* word 89: SECURITY ERASE UNIT time / 2 min */
        uint16_t trsEuc;        /* word 90: enhanced erase time / 2 min */
        uint16_t apm;           /* word 91: current APM value */
        uint16_t acoustic;      /* word 94: AAM recommended << 8 | current */
        uint16_t dlf;           /* word 128: security status */
        char serial_no[20];     /* words 10-19, byte order fixed (not NUL-terminated) */
        char fw_rev[8];         /* words 23-26 */
        char model[40];         /* words 27-46 */
};

/* From a block as the device sent it: little-endian words, strings with the
 * two bytes of each word swapped back. */
void ata_info_from_identify(struct ata_info *info, const uint8_t raw[ATA_IDENTIFY_SIZE]);
/* From HDIO_GET_IDENTITY's struct hd_driveid (host-order words, strings as
 * the kernel keeps them). */
void ata_info_from_hdio(struct ata_info *info, const uint8_t hdio[ATA_IDENTIFY_SIZE]);

/* Append ata_id's output: with `export` the KEY=value lines (ID_ATA ...
 * ID_ATA_CFA, then ID_ATA_PERIPHERAL_DEVICE_TYPE when `peripheral_type` is
 * not negative), else the single "MODEL_SERIAL" line. With `sd257` as
 * systemd 257's: ID_ATA_READ_LOOKAHEAD[_ENABLED] after the write cache;
 * the caller passes the INQUIRY's type as `peripheral_type` only then. `info` gives the
 * strings and feature words; words 0, 76, 83, 108-111 and 217 are read
 * (little-endian) from `raw`, the SG_IO buffer, as systemd does even when
 * `info` came from HDIO_GET_IDENTITY. 0 or -ENOBUFS. */
int ata_identify_format(const struct ata_info *info, const uint8_t raw[ATA_IDENTIFY_SIZE],
                        bool sd257, int peripheral_type, bool export, struct helper_out *out);
