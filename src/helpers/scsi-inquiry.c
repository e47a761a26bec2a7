/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (no global state) */
/* scsi_id: INQUIRY, VPD pages 0x00/0x80/0x83 and the identifiers systemd 252
 * derives from them (scsi-inquiry.h). Device replies are never trusted:
 * every page is read into a zero-padded scratch buffer larger than what the
 * device may fill, and walks over it are bounded by that buffer. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "helpers/scsi-inquiry.h"
#include "shared/log.h"
#include "shared/macro.h"

#define VENDOR_LENGTH 8
#define MODEL_LENGTH 16
#define SG_V3_TIMEOUT_MS 5000
/* A page as the device left it, then zeros far enough that the decoders'
 * reads (a descriptor header at up to SCSI_INQ_BUFF_LEN - 1 plus 255 bytes of
 * identifier) stay inside. */
#define PAGE_SCRATCH (SCSI_INQ_BUFF_LEN + 4 + 255 + 1)

/* Designator types (SPC-3 7.6.3) and NAA values used by the search. */
enum {
        ID_VENDOR_SPECIFIC = 0,
        ID_T10_VENDOR = 1,
        ID_EUI_64 = 2,
        ID_NAA = 3,
        ID_TGTGROUP = 5,
};
#define NAA_ANY 0xff
#define NAA_IEEE_REG 0x05
#define NAA_IEEE_REG_EXTENDED 0x06
#define CODE_BINARY 1
#define CODE_ASCII 2

struct id_search {
        uint8_t id_type, naa, code_set;
};

/* Best first: WWN-like ids before vendor ones; the target port group entry
 * only records the group and never ends the search. */
static const struct id_search id_search_list[] = {
        { ID_TGTGROUP, NAA_ANY, CODE_BINARY },
        { ID_NAA, NAA_IEEE_REG_EXTENDED, CODE_BINARY },
        { ID_NAA, NAA_IEEE_REG_EXTENDED, CODE_ASCII },
        { ID_NAA, NAA_IEEE_REG, CODE_BINARY },
        { ID_NAA, NAA_IEEE_REG, CODE_ASCII },
        { ID_NAA, NAA_ANY, CODE_BINARY },
        { ID_NAA, NAA_ANY, CODE_ASCII },
        { ID_EUI_64, NAA_ANY, CODE_BINARY },
        { ID_EUI_64, NAA_ANY, CODE_ASCII },
        { ID_T10_VENDOR, NAA_ANY, CODE_BINARY },
        { ID_T10_VENDOR, NAA_ANY, CODE_ASCII },
        { ID_VENDOR_SPECIFIC, NAA_ANY, CODE_BINARY },
        { ID_VENDOR_SPECIFIC, NAA_ANY, CODE_ASCII },
};

static const char hexdigit[] = "0123456789abcdef";

const char *scsi_type_name(unsigned type)
{
        switch (type) {
        case 0x00:
        case 0x0e:
                return "disk";
        case 0x01:
                return "tape";
        case 0x04:
        case 0x07:
        case 0x0f:
                return "optical";
        case 0x05:
                return "cd";
        default:
                return "generic";
        }
}

/* ---- SG_IO transport ---- */

enum scsi_sg_category scsi_sg_category(const struct sg_status *st, const uint8_t sense[SG_SENSE_MAX])
{
        unsigned status = st->device_status & 0x7e;
        size_t sb_len = st->sense_len;

        if (!status && !st->transport_status && !st->driver_status)
                return SCSI_SG_CLEAN;

        /* CHECK CONDITION, COMMAND TERMINATED, or DRIVER_SENSE */
        if (status == 0x02 || status == 0x22 || (st->driver_status & 0xf) == 0x08) {
                if (sb_len > 2) {
                        unsigned key, asc;

                        if (sense[0] & 0x2) { /* descriptor format */
                                key = sense[1] & 0xf;
                                asc = sense[2];
                        } else {
                                key = sense[2] & 0xf;
                                asc = sb_len > 12 ? sense[12] : 0;
                        }
                        if (key == 0x01) /* RECOVERED ERROR */
                                return SCSI_SG_RECOVERED;
                        if (key == 0x06) { /* UNIT ATTENTION */
                                if (asc == 0x28)
                                        return SCSI_SG_MEDIA_CHANGED;
                                if (asc == 0x29)
                                        return SCSI_SG_RESET;
                        } else if (key == 0x05) /* ILLEGAL REQUEST */
                                return SCSI_SG_NOTSUPPORTED;
                }
                return SCSI_SG_SENSE;
        }
        if (st->transport_status) {
                /* DID_NO_CONNECT, DID_BUS_BUSY, DID_TIME_OUT */
                if (st->transport_status >= 0x01 && st->transport_status <= 0x03)
                        return SCSI_SG_TIMEOUT;
                if (st->transport_status == 0x0e) /* DID_TRANSPORT_DISRUPTED */
                        return SCSI_SG_RETRY;
        }
        if (st->driver_status == 0x06) /* DRIVER_TIMEOUT */
                return SCSI_SG_TIMEOUT;
        return SCSI_SG_OTHER;
}

static void log_sense(const char *name, const struct sg_status *st, const uint8_t sense[SG_SENSE_MAX])
{
        size_t n = MIN(st->sense_len, (size_t)SG_SENSE_MAX);

        log_debug("%s: sg_io failed status 0x%x 0x%x 0x%x 0x%x", name, st->driver_status,
                  st->transport_status, st->msg_status, st->device_status);
        if ((st->device_status & 0xff) != 0x02 || n < 1)
                return;
        if (((sense[0] >> 4) & 0x07) == 7 && n >= 14)
                log_debug("%s: sense key 0x%x ASC 0x%x ASCQ 0x%x", name,
                          (sense[0] & 0xe) == 0x2 ? sense[1] & 0xf : sense[2] & 0xf,
                          (sense[0] & 0xe) == 0x2 ? sense[2] : sense[12],
                          (sense[0] & 0xe) == 0x2 ? sense[3] : sense[13]);
        else
                log_debug("%s: sense data 0x%02x, %zu bytes", name, sense[0], n);
}

int scsi_sg_inquiry(void *userdata, bool evpd, uint8_t page, uint8_t *buf, size_t len)
{
        struct scsi_sg *sg = userdata;
        const uint8_t cdb[6] = { 0x12, evpd ? 1 : 0, page, 0, (uint8_t)len, 0 };
        int tries = 3;

        if (len > SCSI_INQ_BUFF_LEN)
                return log_debug_errno(-EINVAL, "buflen %zu too long", len);
        for (;;) {
                uint8_t sense[SG_SENSE_MAX] = { 0 };
                struct sg_cmd cmd = {
                        .cdb = cdb,
                        .cdb_len = sizeof(cdb),
                        .data = buf,
                        .data_len = len,
                        .sense = sense,
                        .timeout_ms = sg->sg_version == 4 ? 0 : SG_V3_TIMEOUT_MS,
                };
                struct sg_status st;
                int r;

                r = sg->sg_version == 4 ? sg_io_v4(sg->fd, &cmd, &st) : sg_io_v3(sg->fd, &cmd, &st);
                if (r < 0) {
                        if ((r == -EINVAL || r == -ENOSYS) && sg->sg_version == 4) {
                                sg->sg_version = 3;
                                continue;
                        }
                        log_debug_errno(r, "%s: ioctl failed: %m", sg->name);
                        break;
                }
                switch (scsi_sg_category(&st, sense)) {
                case SCSI_SG_NOTSUPPORTED:
                        buf[1] = 0;
                        return (int)len;
                case SCSI_SG_CLEAN:
                case SCSI_SG_RECOVERED:
                        return (int)len;
                case SCSI_SG_RETRY:
                        if (--tries > 0)
                                continue;
                        break;
                default:
                        log_sense(sg->name, &st, sense);
                        break;
                }
                break;
        }
        log_debug("%s: Unable to get INQUIRY vpd %d page 0x%x.", sg->name, evpd ? 1 : 0, page);
        return -EIO;
}

/* ---- decoding ---- */

int scsi_std_inquiry(const struct scsi_io *io, struct scsi_ident *id)
{
        uint8_t buf[PAGE_SCRATCH] = { 0 };
        int r;

        r = io->inquiry(io->userdata, false, 0, buf, SCSI_INQ_BUFF_LEN);
        if (r < 0)
                return r;
        memcpy(id->vendor, buf + 8, VENDOR_LENGTH);
        id->vendor[VENDOR_LENGTH] = '\0';
        memcpy(id->model, buf + 16, MODEL_LENGTH);
        id->model[MODEL_LENGTH] = '\0';
        memcpy(id->revision, buf + 32, 4);
        id->revision[4] = '\0';
        id->type = buf[0] & 0x1f;
        return 0;
}

/* vendor + model, both required at full length (no NUL inside). */
static int append_vendor_model(const struct scsi_io *io, const struct scsi_ident *id, char *dst)
{
        if (strnlen(id->vendor, VENDOR_LENGTH) != VENDOR_LENGTH)
                return log_debug_errno(-EINVAL, "%s: bad vendor string \"%s\"", io->name, id->vendor);
        if (strnlen(id->model, MODEL_LENGTH) != MODEL_LENGTH)
                return log_debug_errno(-EINVAL, "%s: bad model string \"%s\"", io->name, id->model);
        memcpy(dst, id->vendor, VENDOR_LENGTH);
        memcpy(dst + VENDOR_LENGTH, id->model, MODEL_LENGTH);
        return VENDOR_LENGTH + MODEL_LENGTH;
}

/* Page 0x80. `serial` NULL: only the raw unit serial number into
 * serial_short. 0, 1 (not usable), < 0 (INQUIRY failed). */
static int page80(const struct scsi_io *io, struct scsi_ident *id, char *serial, char *serial_short)
{
        uint8_t buf[PAGE_SCRATCH] = { 0 };
        size_t len;
        int r;

        r = io->inquiry(io->userdata, true, 0x80, buf, SCSI_INQ_BUFF_LEN);
        if (r < 0)
                return r;
        if (buf[1] != 0x80) {
                log_debug("%s: Invalid page 0x80", io->name);
                return 1;
        }
        len = buf[3];
        if (1 + VENDOR_LENGTH + MODEL_LENGTH + len > SCSI_SERIAL_MAX) {
                log_debug("%s: page 0x80 serial of %zu bytes too long", io->name, len);
                return 1;
        }
        if (serial) {
                int n;

                /* 'S' keeps it apart from page 0x83's vendor-specific ids ('0') */
                serial[0] = 'S';
                n = append_vendor_model(io, id, serial + 1);
                if (n < 0)
                        return 1;
                /* at most 255 characters, then the NUL */
                len = MIN(len, (size_t)SCSI_SERIAL_MAX - 1 - 1 - (size_t)n);
                memcpy(serial + 1 + n, buf + 4, len);
                serial[1 + n + len] = '\0';
                len = buf[3];
        }
        if (serial_short) {
                memcpy(serial_short, buf + 4, len);
                serial_short[len] = '\0';
        }
        return 0;
}

/* One designation descriptor against one search entry: 0 when it gave the
 * serial, 1 when not (a target port group only records tgpt_group). */
static int fill_from_descriptor(const struct scsi_io *io, struct scsi_ident *id, const uint8_t *d,
                                const struct id_search *s)
{
        unsigned code_set = d[0] & 0x0f, assoc = d[1] & 0x30, type = d[1] & 0x0f;
        size_t need, j, start;

        /* associated with the logical unit, or the target port for groups */
        if (assoc == 0x10) {
                if (s->id_type != ID_TGTGROUP)
                        return 1;
        } else if (assoc != 0)
                return 1;
        if (type != s->id_type)
                return 1;
        if (s->naa != NAA_ANY && s->naa != (d[4] & 0xf0) >> 4)
                return 1;
        if (code_set != s->code_set)
                return 1;

        need = d[3] * (code_set == CODE_ASCII ? 1 : 2) + 2;
        if (s->id_type == ID_VENDOR_SPECIFIC)
                need += VENDOR_LENGTH + MODEL_LENGTH;
        if (need > SCSI_SERIAL_MAX) {
                log_debug("%s: id of %zu bytes too long", io->name, need);
                return 1;
        }
        if (s->id_type == ID_TGTGROUP) {
                snprintf(id->tgpt_group, sizeof(id->tgpt_group), "%x", ((unsigned)d[6] << 8) | d[7]);
                return 1;
        }

        /* the type digit stays even if the vendor/model check below fails */
        id->serial[0] = hexdigit[s->id_type];
        if (s->id_type == ID_VENDOR_SPECIFIC && append_vendor_model(io, id, id->serial + 1) < 0)
                return 1;
        start = j = strlen(id->serial);
        for (size_t i = 4; i < 4 + (size_t)d[3]; i++) {
                if (code_set == CODE_ASCII)
                        id->serial[j++] = (char)d[i];
                else {
                        id->serial[j++] = hexdigit[d[i] >> 4];
                        id->serial[j++] = hexdigit[d[i] & 0xf];
                }
        }
        id->serial[j] = '\0';
        snprintf(id->serial_short, sizeof(id->serial_short), "%s", id->serial + start);
        if (s->id_type == ID_NAA) {
                size_t n = strlen(id->serial_short);

                snprintf(id->wwn, sizeof(id->wwn), "%.16s", id->serial_short);
                snprintf(id->wwn_vendor_extension, sizeof(id->wwn_vendor_extension), "%.16s",
                         n > 16 ? id->serial_short + 16 : "");
        }
        return 0;
}

/* SCSI-2 style page 0x83 (EMC Symmetrix): the 16 bytes after the header are
 * the binary WWN; '3' + hex, at most 252 characters. */
static void fill_prespc3(struct scsi_ident *id, const uint8_t *page)
{
        size_t j;

        id->serial[0] = hexdigit[ID_NAA];
        j = strlen(id->serial);
        for (size_t i = 0; i < page[3] && j < SCSI_SERIAL_MAX - 3; i++) {
                id->serial[j++] = hexdigit[page[4 + i] >> 4];
                id->serial[j++] = hexdigit[page[4 + i] & 0xf];
        }
        id->serial[SCSI_SERIAL_MAX - 1] = '\0';
        snprintf(id->serial_short, sizeof(id->serial_short), "%s", id->serial);
}

/* Page 0x83 (page 0x80's raw serial picked up on the way): 0 or 1. */
static int page83(const struct scsi_io *io, struct scsi_ident *id)
{
        uint8_t page[PAGE_SCRATCH] = { 0 };
        size_t end;

        (void)page80(io, id, NULL, id->unit_serial_number);

        if (io->inquiry(io->userdata, true, 0x83, page, SCSI_INQ_BUFF_LEN) < 0)
                return 1;
        if (page[1] != 0x83) {
                log_debug("%s: Invalid page 0x83", io->name);
                return 1;
        }
        /* A SCSI-2 reply has the OUI where SPC-2/3 have the first
         * descriptor's reserved byte. */
        if (page[6] != 0) {
                fill_prespc3(id, page);
                return 0;
        }

        end = ((size_t)page[2] << 8) + page[3] + 3;
        for (size_t k = 0; k < ARRAY_SIZE(id_search_list); k++)
                for (size_t j = 4; j <= end && j + 4 <= SCSI_INQ_BUFF_LEN; j += page[j + 3] + 4)
                        if (fill_from_descriptor(io, id, page + j, &id_search_list[k]) == 0)
                                return 0;
        return 1;
}

/* --page=pre-spc3-83: 0, 1, or 2 when the reply is SPC-2/3 after all. */
static int page83_prespc3(const struct scsi_io *io, struct scsi_ident *id)
{
        uint8_t page[PAGE_SCRATCH] = { 0 };
        size_t j;

        if (io->inquiry(io->userdata, true, 0x83, page, SCSI_INQ_BUFF_LEN) < 0)
                return 1;
        if (page[1] != 0x83) {
                log_debug("%s: Invalid page 0x83", io->name);
                return 1;
        }
        if (page[6] == 0)
                return 2;
        id->serial[0] = hexdigit[ID_NAA];
        j = strlen(id->serial);
        for (size_t i = 4; i < (size_t)page[3] + 4 && j + 2 < SCSI_SERIAL_MAX; i++) {
                id->serial[j++] = hexdigit[page[i] >> 4];
                id->serial[j++] = hexdigit[page[i] & 0xf];
        }
        id->serial[j] = '\0';
        return 0;
}

/* Page 0: the supported pages. 0 when usable, else 1. */
static int page0(const struct scsi_io *io, const struct scsi_ident *id, uint8_t *buf)
{
        if (io->inquiry(io->userdata, true, 0x00, buf, SCSI_INQ_BUFF_LEN) < 0)
                return 1;
        if (buf[1] != 0) {
                log_debug("%s: page 0 not available.", io->name);
                return 1;
        }
        if (buf[3] > SCSI_INQ_BUFF_LEN) {
                log_debug("%s: page 0 buffer too long %d", io->name, buf[3]);
                return 1;
        }
        /* Some devices answer with the standard INQUIRY data instead. */
        if (buf[3] > MODEL_LENGTH && strncmp((const char *)buf + VENDOR_LENGTH, id->vendor,
                                             VENDOR_LENGTH) == 0) {
                log_debug("%s: invalid page0 data", io->name);
                return 1;
        }
        return 0;
}

int scsi_get_serial(const struct scsi_io *io, struct scsi_ident *id, int page)
{
        uint8_t pages[PAGE_SCRATCH] = { 0 };
        int r;

        memset(id->serial, 0, sizeof(id->serial));
        switch (page) {
        case SCSI_PAGE_80:
                return page80(io, id, id->serial, id->serial_short) == 0 ? 0 : 1;
        case SCSI_PAGE_83:
                return page83(io, id);
        case SCSI_PAGE_83_PRE_SPC3:
                r = page83_prespc3(io, id);
                if (r == 2)
                        return page83(io, id);
                return r == 0 ? 0 : 1;
        case SCSI_PAGE_UNSPECIFIED:
                break;
        default:
                log_debug("%s: unsupported page code 0x%d", io->name, page);
                return 1;
        }

        if (page0(io, id, pages) != 0)
                return 1;
        for (size_t i = 4; i <= (size_t)pages[3] + 3; i++)
                if (pages[i] == 0x83 && page83(io, id) == 0)
                        return 0;
        for (size_t i = 4; i <= (size_t)pages[3] + 3; i++)
                if (pages[i] == 0x80 && page80(io, id, id->serial, id->serial_short) == 0)
                        return 0;
        return 1;
}

/* ---- output ---- */

void scsi_values_from_ident(struct scsi_values *v, const struct scsi_ident *id)
{
        (void)helper_encode_devnode_name(id->vendor, v->vendor_enc, sizeof(v->vendor_enc));
        (void)helper_encode_devnode_name(id->model, v->model_enc, sizeof(v->model_enc));
        helper_replace_whitespace(id->vendor, v->vendor, sizeof(v->vendor) - 1);
        helper_replace_chars(v->vendor, NULL);
        helper_replace_whitespace(id->model, v->model, sizeof(v->model) - 1);
        helper_replace_chars(v->model, NULL);
        snprintf(v->type, sizeof(v->type), "%s", scsi_type_name(id->type));
        helper_replace_whitespace(id->revision, v->revision, sizeof(v->revision) - 1);
        helper_replace_chars(v->revision, NULL);
}

int scsi_id_format_export(const struct scsi_values *v, const struct scsi_ident *id, struct helper_out *o)
{
        char clean[SCSI_SERIAL_MAX];

        helper_out_printf(o, "ID_SCSI=1\n");
        helper_out_printf(o, "ID_VENDOR=%s\n", v->vendor);
        helper_out_printf(o, "ID_VENDOR_ENC=%s\n", v->vendor_enc);
        helper_out_printf(o, "ID_MODEL=%s\n", v->model);
        helper_out_printf(o, "ID_MODEL_ENC=%s\n", v->model_enc);
        helper_out_printf(o, "ID_REVISION=%s\n", v->revision);
        helper_out_printf(o, "ID_TYPE=%s\n", v->type);
        if (id->serial[0] != '\0') {
                helper_replace_whitespace(id->serial, clean, sizeof(clean) - 1);
                helper_replace_chars(clean, NULL);
                helper_out_printf(o, "ID_SERIAL=%s\n", clean);
                helper_replace_whitespace(id->serial_short, clean, sizeof(clean) - 1);
                helper_replace_chars(clean, NULL);
                helper_out_printf(o, "ID_SERIAL_SHORT=%s\n", clean);
        }
        /* Device strings printed as they are must be clean: Debian's 252
         * checks the unit serial number so; tudev the WWN too (later systemd
         * does), as an ASCII NAA id could otherwise carry a newline. */
        if (helper_string_is_printable(id->wwn)) {
                helper_out_printf(o, "ID_WWN=0x%s\n", id->wwn);
                if (helper_string_is_printable(id->wwn_vendor_extension)) {
                        helper_out_printf(o, "ID_WWN_VENDOR_EXTENSION=0x%s\n", id->wwn_vendor_extension);
                        helper_out_printf(o, "ID_WWN_WITH_EXTENSION=0x%s%s\n", id->wwn,
                                          id->wwn_vendor_extension);
                } else
                        helper_out_printf(o, "ID_WWN_WITH_EXTENSION=0x%s\n", id->wwn);
        }
        if (helper_string_is_printable(id->tgpt_group))
                helper_out_printf(o, "ID_TARGET_PORT=%s\n", id->tgpt_group);
        if (helper_string_is_printable(id->unit_serial_number))
                helper_out_printf(o, "ID_SCSI_SERIAL=%s\n", id->unit_serial_number);
        return o->truncated ? -ENOBUFS : 0;
}
