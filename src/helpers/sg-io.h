/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (no global state) */
#pragma once
/* The SG_IO transport of the helper programs: one SCSI command with a
 * data-in phase, sent with the sg v4 (bsg, struct sg_io_v4) or v3 (struct
 * sg_io_hdr) header, and HDIO_GET_IDENTITY. These only move bytes and report
 * the statuses; what a status means is decided by the caller (ata_id and
 * scsi_id judge them differently, see ata-identify.c and scsi-inquiry.c). */

#include <stddef.h>
#include <stdint.h>

#define SG_SENSE_MAX 32
#define ATA_IDENTIFY_SIZE 512

/* One data-in command. `data` receives up to data_len bytes (what the device
 * sent; the rest is left as it was); `sense` (SG_SENSE_MAX bytes) receives
 * the sense data. timeout_ms 0 leaves the kernel's default. */
struct sg_cmd {
        const uint8_t *cdb;
        size_t cdb_len;        /* 6..16 */
        void *data;
        size_t data_len;
        uint8_t *sense;
        unsigned timeout_ms;
};

/* What the kernel reported for a command whose ioctl succeeded (v4 names;
 * v3's status/host_status/driver_status/msg_status map onto them). */
struct sg_status {
        unsigned device_status;    /* SCSI status byte */
        unsigned transport_status; /* host status (DID_*) */
        unsigned driver_status;    /* DRIVER_* */
        unsigned msg_status;       /* v3 only, else 0 */
        size_t sense_len;          /* sense bytes written (may exceed SG_SENSE_MAX if the
                                    * kernel says so; never read past SG_SENSE_MAX) */
};

/* Send with the v4 header. 0 and *st if the ioctl succeeded (whatever the
 * statuses), -errno if it failed (-EINVAL when the node does not speak v4,
 * e.g. an sd block device). */
int sg_io_v4(int fd, const struct sg_cmd *cmd, struct sg_status *st);
/* Same with the v3 header. */
int sg_io_v3(int fd, const struct sg_cmd *cmd, struct sg_status *st);

/* HDIO_GET_IDENTITY: the kernel's copy of the IDENTIFY data, as its struct
 * hd_driveid (host byte order for the words, strings as the kernel keeps
 * them). 0 or -errno. */
int hdio_get_identity(int fd, uint8_t out[ATA_IDENTIFY_SIZE]);
