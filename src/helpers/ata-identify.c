/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (no global state) */
/* ata_id: IDENTIFY through SCSI/ATA Translation and its decoding
 * (ata-identify.h), with systemd 252's checks, fields and output order. */
#include <errno.h>
#include <inttypes.h>
#include <linux/hdreg.h>
#include <stddef.h>
#include <string.h>

#include "helpers/ata-identify.h"
#include "shared/macro.h"

#define ATA_CMD_TIMEOUT_MS (30 * 1000)
#define INQUIRY_LEN 36

/* struct hd_driveid: the word of each field read below */
_Static_assert(offsetof(struct hd_driveid, serial_no) == 10 * 2, "serial_no");
_Static_assert(offsetof(struct hd_driveid, fw_rev) == 23 * 2, "fw_rev");
_Static_assert(offsetof(struct hd_driveid, model) == 27 * 2, "model");
_Static_assert(offsetof(struct hd_driveid, command_set_1) == 82 * 2, "command_set_1");
_Static_assert(offsetof(struct hd_driveid, command_set_2) == 83 * 2, "command_set_2");
_Static_assert(offsetof(struct hd_driveid, cfs_enable_1) == 85 * 2, "cfs_enable_1");
_Static_assert(offsetof(struct hd_driveid, cfs_enable_2) == 86 * 2, "cfs_enable_2");
_Static_assert(offsetof(struct hd_driveid, trseuc) == 89 * 2, "trseuc");
_Static_assert(offsetof(struct hd_driveid, trsEuc) == 90 * 2, "trsEuc");
_Static_assert(offsetof(struct hd_driveid, CurAPMvalues) == 91 * 2, "CurAPMvalues");
_Static_assert(offsetof(struct hd_driveid, acoustic) == 94 * 2, "acoustic");
_Static_assert(offsetof(struct hd_driveid, dlf) == 128 * 2, "dlf");

/* Send `cdb` with v4, or v3 if the node refuses v4 with EINVAL. The header
 * version used (4 or 3) and *st (sense in `sense`), or -errno of the ioctl. */
static int send_v4_then_v3(int fd, const uint8_t *cdb, size_t cdb_len, void *buf, size_t len,
                           uint8_t sense[SG_SENSE_MAX], struct sg_status *st)
{
        struct sg_cmd cmd = {
                .cdb = cdb,
                .cdb_len = cdb_len,
                .data = buf,
                .data_len = len,
                .sense = sense,
                .timeout_ms = ATA_CMD_TIMEOUT_MS,
        };
        int r;

        r = sg_io_v4(fd, &cmd, st);
        if (r != -EINVAL)
                return r < 0 ? r : 4;
        r = sg_io_v3(fd, &cmd, st);
        return r < 0 ? r : 3;
}

static int scsi_inquiry36(int fd, uint8_t buf[INQUIRY_LEN])
{
        const uint8_t cdb[6] = { 0x12, 0, 0, 0, INQUIRY_LEN, 0 };
        uint8_t sense[SG_SENSE_MAX] = { 0 };
        struct sg_status st;
        int r;

        r = send_v4_then_v3(fd, cdb, sizeof(cdb), buf, INQUIRY_LEN, sense, &st);
        if (r < 0)
                return r;
        if (st.device_status != 0 || st.transport_status != 0 || st.driver_status != 0)
                return -EIO;
        return 0;
}

/* With CK_COND set, a SAT layer answers an ATA PASS-THROUGH with the ATA
 * registers: descriptor sense (0x72) holding an ATA Status Return descriptor
 * (0x09, length 0x0c), or fixed sense (0x70) with ASC/ASCQ 00/1D. */
static bool sense_has_ata_return(const uint8_t sense[SG_SENSE_MAX], bool fixed_ok)
{
        if ((sense[0] & 0x7f) == 0x72 && sense[8] == 0x09 && sense[9] == 0x0c)
                return true;
        return fixed_ok && (sense[0] & 0x7f) == 0x70 && sense[12] == 0x00 && sense[13] == 0x1d;
}

/* With the v4 header (a bsg node) the answer must carry the ATA registers
 * in the sense data. Through v3 (an sd or sr node, which refuses v4)
 * systemd 252 asks the same, systemd 257 takes the successful ioctl as the
 * answer (`v3_ioctl_enough`); it differs on kernels whose SAT layer answers
 * a command that succeeded without that sense (Debian 13's 6.12), where 252
 * falls back to HDIO_GET_IDENTITY. */
static int ata_pass_through(int fd, const uint8_t *cdb, size_t cdb_len, uint8_t *buf, bool fixed_ok,
                            bool v3_ioctl_enough)
{
        uint8_t sense[SG_SENSE_MAX] = { 0 };
        struct sg_status st;
        int r;

        r = send_v4_then_v3(fd, cdb, cdb_len, buf, ATA_IDENTIFY_SIZE, sense, &st);
        if (r < 0)
                return r;
        if (r == 3 && v3_ioctl_enough)
                return 0;
        return sense_has_ata_return(sense, fixed_ok) ? 0 : -EIO;
}

int ata_identify_probe(int fd, uint8_t identify[ATA_IDENTIFY_SIZE], bool sd257,
                       int *peripheral_type)
{
        /* ATA PASS-THROUGH (12), PIO data-in, CK_COND, T_DIR, BYT_BLOK,
         * T_LENGTH in the sector count: IDENTIFY DEVICE */
        static const uint8_t identify12[12] = { 0xa1, 4 << 1, 0x2e, 0, 1, 0, 0, 0, 0, 0xec, 0, 0 };
        /* ATA PASS-THROUGH (16), same protocol: IDENTIFY PACKET DEVICE */
        static const uint8_t packet16[16] = { 0x85, 4 << 1, 0x2e, 0, 0, 0, 1, 0,
                                              0, 0, 0, 0, 0, 0, 0xa1, 0 };
        uint8_t inquiry[INQUIRY_LEN] = { 0 };
        unsigned type;
        bool any = false;
        int r;

        memset(identify, 0, ATA_IDENTIFY_SIZE);

        /* Never send PASS-THROUGH (12) to an MMC device: its opcode is MMC's
         * BLANK. The INQUIRY also proves a SCSI-speaking node. */
        r = scsi_inquiry36(fd, inquiry);
        if (r < 0)
                return r;
        type = inquiry[0] & 0x1f;
        if (type == 0x05)
                r = ata_pass_through(fd, packet16, sizeof(packet16), identify, false, sd257);
        else if (type == 0x00 || type == 0x14)
                r = ata_pass_through(fd, identify12, sizeof(identify12), identify, true, sd257);
        else
                return -EIO;
        if (r < 0)
                return r;

        for (size_t i = 0; i < ATA_IDENTIFY_SIZE && !any; i++)
                any = identify[i] != 0;
        if (!any)
                return -EIO;
        *peripheral_type = (int)type;
        return 0;
}

static uint16_t le16_at(const uint8_t *raw, unsigned word)
{
        return (uint16_t)(raw[word * 2] | (raw[word * 2 + 1] << 8));
}

/* ATA strings keep two characters per word, high byte first. */
static void ata_string(const uint8_t *raw, unsigned word, char *dst, size_t len)
{
        for (size_t i = 0; i + 1 < len; i += 2) {
                dst[i] = (char)raw[word * 2 + i + 1];
                dst[i + 1] = (char)raw[word * 2 + i];
        }
}

void ata_info_from_identify(struct ata_info *info, const uint8_t raw[ATA_IDENTIFY_SIZE])
{
        *info = (struct ata_info){
                .config = le16_at(raw, 0),
                .command_set_1 = le16_at(raw, 82),
                .command_set_2 = le16_at(raw, 83),
                .cfs_enable_1 = le16_at(raw, 85),
                .cfs_enable_2 = le16_at(raw, 86),
                .trseuc = le16_at(raw, 89),
                .trsEuc = le16_at(raw, 90),
                .apm = le16_at(raw, 91),
                .acoustic = le16_at(raw, 94),
                .dlf = le16_at(raw, 128),
        };
        ata_string(raw, 10, info->serial_no, sizeof(info->serial_no));
        ata_string(raw, 23, info->fw_rev, sizeof(info->fw_rev));
        ata_string(raw, 27, info->model, sizeof(info->model));
}

void ata_info_from_hdio(struct ata_info *info, const uint8_t hdio[ATA_IDENTIFY_SIZE])
{
        struct hd_driveid id;

        memcpy(&id, hdio, sizeof(id));
        *info = (struct ata_info){
                .config = id.config,
                .command_set_1 = id.command_set_1,
                .command_set_2 = id.command_set_2,
                .cfs_enable_1 = id.cfs_enable_1,
                .cfs_enable_2 = id.cfs_enable_2,
                .trseuc = id.trseuc,
                .trsEuc = id.trsEuc,
                .apm = id.CurAPMvalues,
                .acoustic = id.acoustic,
                .dlf = id.dlf,
        };
        memcpy(info->serial_no, id.serial_no, sizeof(info->serial_no));
        memcpy(info->fw_rev, id.fw_rev, sizeof(info->fw_rev));
        memcpy(info->model, id.model, sizeof(info->model));
}

static const char *atapi_type(uint16_t config)
{
        switch ((config >> 8) & 0x1f) {
        case 0:
        case 5:
                return "cd";
        case 1:
                return "tape";
        case 7:
                return "optical";
        default:
                return "generic";
        }
}

/* "KEY=1" and "KEY_ENABLED=0|1" for a feature the device supports. */
static void feature(struct helper_out *o, const char *key, uint16_t enabled, unsigned bit)
{
        helper_out_printf(o, "%s=1\n", key);
        helper_out_printf(o, "%s_ENABLED=%d\n", key, (enabled >> bit) & 1);
}

static void format_features(const struct ata_info *id, const uint8_t *raw, bool sd257,
                            struct helper_out *o)
{
        uint16_t w;

        if (id->command_set_1 & (1 << 5)) {
                helper_out_printf(o, "ID_ATA_WRITE_CACHE=1\n");
                helper_out_printf(o, "ID_ATA_WRITE_CACHE_ENABLED=%d\n", (id->cfs_enable_1 >> 5) & 1);
        }
        /* word 82 bit 6: look-ahead (systemd 257 reports it, 252 does not) */
        if (sd257 && (id->command_set_1 & (1u << 6))) {
                helper_out_printf(o, "ID_ATA_READ_LOOKAHEAD=1\n");
                helper_out_printf(o, "ID_ATA_READ_LOOKAHEAD_ENABLED=%d\n", (id->cfs_enable_1 >> 6) & 1);
        }
        if (id->command_set_1 & (1 << 10))
                feature(o, "ID_ATA_FEATURE_SET_HPA", id->cfs_enable_1, 10);
        if (id->command_set_1 & (1 << 3))
                feature(o, "ID_ATA_FEATURE_SET_PM", id->cfs_enable_1, 3);
        if (id->command_set_1 & (1 << 1)) {
                feature(o, "ID_ATA_FEATURE_SET_SECURITY", id->cfs_enable_1, 1);
                helper_out_printf(o, "ID_ATA_FEATURE_SET_SECURITY_ERASE_UNIT_MIN=%d\n",
                                  id->trseuc * 2);
                if (id->cfs_enable_1 & (1 << 1))
                        helper_out_printf(o, "ID_ATA_FEATURE_SET_SECURITY_LEVEL=%s\n",
                                          (id->dlf & (1 << 8)) ? "maximum" : "high");
                if (id->dlf & (1 << 5))
                        helper_out_printf(o, "ID_ATA_FEATURE_SET_SECURITY_ENHANCED_ERASE_UNIT_MIN=%d\n",
                                          id->trsEuc * 2);
                if (id->dlf & (1 << 4))
                        helper_out_printf(o, "ID_ATA_FEATURE_SET_SECURITY_EXPIRE=1\n");
                if (id->dlf & (1 << 3))
                        helper_out_printf(o, "ID_ATA_FEATURE_SET_SECURITY_FROZEN=1\n");
                if (id->dlf & (1 << 2))
                        helper_out_printf(o, "ID_ATA_FEATURE_SET_SECURITY_LOCKED=1\n");
        }
        if (id->command_set_1 & (1 << 0))
                feature(o, "ID_ATA_FEATURE_SET_SMART", id->cfs_enable_1, 0);
        if (id->command_set_2 & (1 << 9)) {
                feature(o, "ID_ATA_FEATURE_SET_AAM", id->cfs_enable_2, 9);
                helper_out_printf(o, "ID_ATA_FEATURE_SET_AAM_VENDOR_RECOMMENDED_VALUE=%d\n",
                                  id->acoustic >> 8);
                helper_out_printf(o, "ID_ATA_FEATURE_SET_AAM_CURRENT_VALUE=%d\n", id->acoustic & 0xff);
        }
        if (id->command_set_2 & (1 << 5))
                feature(o, "ID_ATA_FEATURE_SET_PUIS", id->cfs_enable_2, 5);
        if (id->command_set_2 & (1 << 3)) {
                feature(o, "ID_ATA_FEATURE_SET_APM", id->cfs_enable_2, 3);
                if (id->cfs_enable_2 & (1 << 3))
                        helper_out_printf(o, "ID_ATA_FEATURE_SET_APM_CURRENT_VALUE=%d\n", id->apm & 0xff);
        }
        if (id->command_set_2 & (1 << 0))
                helper_out_printf(o, "ID_ATA_DOWNLOAD_MICROCODE=1\n");

        /* Word 76: SATA capabilities; 0000h or FFFFh on parallel ATA. */
        w = le16_at(raw, 76);
        if (w != 0x0000 && w != 0xffff) {
                helper_out_printf(o, "ID_ATA_SATA=1\n");
                if (w & (1 << 2))
                        helper_out_printf(o, "ID_ATA_SATA_SIGNAL_RATE_GEN2=1\n");
                if (w & (1 << 1))
                        helper_out_printf(o, "ID_ATA_SATA_SIGNAL_RATE_GEN1=1\n");
        }

        /* Word 217: nominal media rotation rate; 1 = non-rotating. */
        w = le16_at(raw, 217);
        if (w == 0x0001)
                helper_out_printf(o, "ID_ATA_ROTATION_RATE_RPM=0\n");
        else if (w >= 0x0401 && w <= 0xfffe)
                helper_out_printf(o, "ID_ATA_ROTATION_RATE_RPM=%d\n", w);

        /* Words 108-111: the World Wide Name, NAA 5 (IEEE registered). */
        if ((le16_at(raw, 108) & 0xf000) == 0x5000) {
                uint64_t wwn = 0;

                for (unsigned i = 108; i <= 111; i++)
                        wwn = (wwn << 16) | le16_at(raw, i);
                helper_out_printf(o, "ID_WWN=0x%" PRIx64 "\n", wwn);
                helper_out_printf(o, "ID_WWN_WITH_EXTENSION=0x%" PRIx64 "\n", wwn);
        }

        /* CompactFlash: signatures of word 0, or word 83 bit 2 (include/linux/ata.h) */
        w = le16_at(raw, 0);
        if (w == 0x848a || w == 0x844a || (le16_at(raw, 83) & 0xc004) == 0x4004)
                helper_out_printf(o, "ID_ATA_CFA=1\n");
}

int ata_identify_format(const struct ata_info *id, const uint8_t raw[ATA_IDENTIFY_SIZE],
                        bool sd257, int peripheral_type, bool export, struct helper_out *o)
{
        char model_raw[sizeof(id->model) + 1];
        char model[sizeof(id->model) + 1], serial[sizeof(id->serial_no) + 1],
                revision[sizeof(id->fw_rev) + 1];
        char model_enc[256];

        memcpy(model_raw, id->model, sizeof(id->model));
        model_raw[sizeof(id->model)] = '\0';
        (void)helper_encode_devnode_name(model_raw, model_enc, sizeof(model_enc));
        helper_replace_whitespace(id->model, model, sizeof(id->model));
        helper_replace_chars(model, NULL);
        helper_replace_whitespace(id->serial_no, serial, sizeof(id->serial_no));
        helper_replace_chars(serial, NULL);
        helper_replace_whitespace(id->fw_rev, revision, sizeof(id->fw_rev));
        helper_replace_chars(revision, NULL);

        if (!export) {
                if (serial[0] != '\0')
                        helper_out_printf(o, "%s_%s\n", model, serial);
                else
                        helper_out_printf(o, "%s\n", model);
                return o->truncated ? -ENOBUFS : 0;
        }

        helper_out_printf(o, "ID_ATA=1\n");
        /* word 0 bit 15: ATAPI, bits 12-8 its command set (device type) */
        helper_out_printf(o, "ID_TYPE=%s\n", (id->config & 0x8000) ? atapi_type(id->config) : "disk");
        helper_out_printf(o, "ID_BUS=ata\n");
        helper_out_printf(o, "ID_MODEL=%s\n", model);
        helper_out_printf(o, "ID_MODEL_ENC=%s\n", model_enc);
        helper_out_printf(o, "ID_REVISION=%s\n", revision);
        if (serial[0] != '\0') {
                helper_out_printf(o, "ID_SERIAL=%s_%s\n", model, serial);
                helper_out_printf(o, "ID_SERIAL_SHORT=%s\n", serial);
        } else
                helper_out_printf(o, "ID_SERIAL=%s\n", model);
        format_features(id, raw, sd257, o);
        if (peripheral_type >= 0)
                helper_out_printf(o, "ID_ATA_PERIPHERAL_DEVICE_TYPE=%d\n", peripheral_type);
        return o->truncated ? -ENOBUFS : 0;
}
