/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (no global state) */
#pragma once
/* scsi_id's work (../man/tudev-helpers.8): the standard INQUIRY and the
 * serial number / device identification VPD pages (0x00, 0x80, 0x83) of a
 * SCSI device, turned into the identifiers systemd 252's scsi_id prints, with
 * its search order and quirks. The INQUIRY goes through a callback so the
 * decoding can be unit-tested over recorded replies (test-scsi-inquiry.c);
 * scsi_sg_inquiry() is the real one (SG_IO v4, falling back to v3). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "helpers/helper-util.h"
#include "helpers/sg-io.h"

#define SCSI_INQ_BUFF_LEN 254   /* every INQUIRY asks for this much */
#define SCSI_SERIAL_MAX 256

enum scsi_page {
        SCSI_PAGE_83_PRE_SPC3 = -0x83, /* "pre-spc3-83": SCSI-2 style page 0x83 */
        SCSI_PAGE_UNSPECIFIED = 0x00,  /* 0x83 if listed in page 0, else 0x80 */
        SCSI_PAGE_80 = 0x80,
        SCSI_PAGE_83 = 0x83,
};

/* One INQUIRY of `len` (<= SCSI_INQ_BUFF_LEN) bytes into `buf`: >= 0 when the
 * command completed (an ILLEGAL REQUEST counts as completed, with buf[1]
 * cleared, as in systemd), < 0 when it failed. */
typedef int (*scsi_inquiry_fn)(void *userdata, bool evpd, uint8_t page, uint8_t *buf, size_t len);

struct scsi_io {
        scsi_inquiry_fn inquiry;
        void *userdata;
        const char *name; /* for messages ("MAJ:MIN") */
};

/* What scsi_id learns of a device (systemd's struct scsi_id_device). */
struct scsi_ident {
        char vendor[9];   /* INQUIRY bytes 8-15, raw */
        char model[17];   /* bytes 16-31 */
        char revision[5]; /* bytes 32-35 */
        unsigned type;    /* peripheral device type */
        /* type char + (vendor + model for vendor-specific ids) + id */
        char serial[SCSI_SERIAL_MAX];
        char serial_short[SCSI_SERIAL_MAX];
        char unit_serial_number[SCSI_SERIAL_MAX]; /* page 0x80 as sent (may hold NULs) */
        char wwn[17];                             /* lower-case hex, NAA ids only */
        char wwn_vendor_extension[17];
        char tgpt_group[8]; /* target port group, hex */
};

/* The standard INQUIRY: fills vendor, model, revision and type. 0 or < 0. */
int scsi_std_inquiry(const struct scsi_io *io, struct scsi_ident *id);

/* Serial number and identifiers for `page` (enum scsi_page): fills serial,
 * serial_short and, from page 0x83, unit_serial_number (page 0x80 read on
 * the way), wwn, wwn_vendor_extension and tgpt_group. 0 when a serial was
 * found, 1 when not (systemd prints what it has either way). */
int scsi_get_serial(const struct scsi_io *io, struct scsi_ident *id, int page);

/* systemd's sg_err_category_new(): what the statuses and sense data of a
 * completed SG_IO mean. */
enum scsi_sg_category {
        SCSI_SG_CLEAN = 0,
        SCSI_SG_MEDIA_CHANGED = 1,
        SCSI_SG_RESET = 2,
        SCSI_SG_TIMEOUT = 3,
        SCSI_SG_RECOVERED = 4,
        SCSI_SG_NOTSUPPORTED = 5,
        SCSI_SG_RETRY = 6,
        SCSI_SG_SENSE = 98,
        SCSI_SG_OTHER = 99,
};
enum scsi_sg_category scsi_sg_category(const struct sg_status *st, const uint8_t sense[SG_SENSE_MAX]);

/* The SG_IO transport for struct scsi_io (userdata: struct scsi_sg). */
struct scsi_sg {
        int fd;          /* borrowed */
        int sg_version;  /* 4 or 3; a v4 refused with EINVAL/ENOSYS switches to 3 for good */
        const char *name;
};
int scsi_sg_inquiry(void *userdata, bool evpd, uint8_t page, uint8_t *buf, size_t len);

/* The printable values scsi_id derives from the standard INQUIRY. All empty
 * when the device could not be opened (systemd still prints them). */
struct scsi_values {
        char vendor[64], model[64];
        char vendor_enc[256], model_enc[256];
        char revision[16];
        char type[16];
};
void scsi_values_from_ident(struct scsi_values *v, const struct scsi_ident *id);

/* "disk", "tape", "optical", "cd" or "generic" for a peripheral type. */
const char *scsi_type_name(unsigned type);

/* scsi_id --export's lines (ID_SCSI ... ID_SCSI_SERIAL). 0 or -ENOBUFS. */
int scsi_id_format_export(const struct scsi_values *v, const struct scsi_ident *id,
                          struct helper_out *out);
