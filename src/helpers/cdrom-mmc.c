/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (no state outside the caller's structs) */
/* cdrom_id's prober (cdrom-mmc.h). The SG_IO transport here is private to
 * cdrom_id for now; the command layout (CDB length = last byte set + 1, a
 * 64-byte sense buffer, LUN inhibit and direct I/O, the kernel's default
 * timeout) is the one systemd 252 sends, so that drives see the same
 * commands. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/cdrom.h>
#include <scsi/sg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "helpers/cdrom-mmc.h"
#include "shared/log.h"
#include "shared/macro.h"

#define FEATURES_BUF_MAX 65530 /* GET CONFIGURATION answer, as systemd reads it */
#define TOC_BUF_MAX 65536
#define SENSE_MAX 64 /* systemd's sense buffer: sizeof(struct request_sense) */
#define BLOCK_SIZE 2048

static int fd_ioctl(void *userdata, unsigned long request, void *arg)
{
        int r = ioctl(*(int *)userdata, request, arg);

        return r < 0 ? negative_errno() : r;
}

void cdrom_io_init_fd(struct cdrom_io *io, int *fd)
{
        io->ioctl = fd_ioctl;
        io->userdata = fd;
}

static uint16_t be16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t be32(const uint8_t *p)
{
        return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* ---- SCSI commands ---- */

struct mmc_cmd {
        uint8_t cdb[16];
        uint8_t cdb_len;
        uint8_t sense[SENSE_MAX];
};

static void cmd_init(struct mmc_cmd *c) { memset(c, 0, sizeof(*c)); }

/* Set CDB byte i; the CDB is as long as the last byte set. */
static void cmd_set(struct mmc_cmd *c, size_t i, uint8_t v)
{
        c->cdb[i] = v;
        c->cdb_len = (uint8_t)(i + 1);
}

#define SENSE_KEY(e) (((e) >> 16) & 0xfu)
#define SENSE_ASC(e) (((e) >> 8) & 0xffu)
#define SENSE_ASCQ(e) ((e) & 0xffu)

/* 0, -errno (the ioctl failed, or -EIO for a failure without sense data),
 * or > 0: sense key << 16 | ASC << 8 | ASCQ from fixed-format sense data. */
static int cmd_run(const struct cdrom_io *io, struct mmc_cmd *c, uint8_t *buf, size_t len)
{
        struct sg_io_hdr h = {
                .interface_id = 'S',
                .cmd_len = c->cdb_len,
                .cmdp = c->cdb,
                .mx_sb_len = sizeof(c->sense),
                .sbp = c->sense,
                .flags = SG_FLAG_LUN_INHIBIT | SG_FLAG_DIRECT_IO,
                .dxfer_direction = len > 0 ? SG_DXFER_FROM_DEV : SG_DXFER_NONE,
                .dxferp = len > 0 ? buf : NULL,
                .dxfer_len = (unsigned)len,
        };
        int r;

        r = io->ioctl(io->userdata, SG_IO, &h);
        if (r < 0)
                return r;
        if ((h.info & SG_INFO_OK_MASK) != SG_INFO_OK) {
                /* CHECK CONDITION in the masked status byte */
                if (h.masked_status & 0x01) {
                        int e = (c->sense[2] & 0x0f) << 16 | c->sense[12] << 8 | c->sense[13];

                        if (e != 0)
                                return e;
                }
                return -EIO;
        }
        return 0;
}

/* cmd_run() with a debug message on failure; 0 or -errno (-EIO for SCSI errors). */
static int cmd_run_log(const struct cdrom_io *io, struct mmc_cmd *c, uint8_t *buf, size_t len,
                       const char *what)
{
        int r = cmd_run(io, c, buf, len);

        if (r == 0)
                return 0;
        if (r < 0)
                return log_debug_errno(r, "Failed to %s: %m", what);
        log_debug("Failed to %s with SK=%X/ASC=%02X/ACQ=%02X", what, SENSE_KEY(r), SENSE_ASC(r),
                  SENSE_ASCQ(r));
        return -EIO;
}

/* ---- features ---- */

bool cdrom_info_has_feature(const struct cdrom_info *info, unsigned feature)
{
        return feature <= 0xffff && (info->feature_set[feature / 8] >> (feature % 8)) & 1;
}

static void add_feature(struct cdrom_info *info, unsigned feature)
{
        if (feature > 0xffff || cdrom_info_has_feature(info, feature) ||
            info->n_features >= CDROM_FEATURES_MAX)
                return;
        info->feature_set[feature / 8] |= (uint8_t)(1u << (feature % 8));
        info->features[info->n_features++] = (uint16_t)feature;
}

static const struct {
        uint16_t feature;
        const char *name;
} feature_names[] = {
        { 0x01, "RW_NONREMOVABLE" }, { 0x02, "RW_REMOVABLE" },
        { 0x03, "MO_SE" },           { 0x04, "MO_WO" },
        { 0x05, "MO_AS" },           { 0x08, "CD" },
        { 0x09, "CD_R" },            { 0x0a, "CD_RW" },
        { 0x10, "DVD" },             { 0x11, "DVD_R" },
        { 0x12, "DVD_RAM" },         { 0x13, "DVD_RW_RO" },
        { 0x14, "DVD_RW_SEQ" },      { 0x15, "DVD_R_DL_SEQ" },
        { 0x16, "DVD_R_DL_JR" },     { 0x17, "DVD_RW_DL" },
        { 0x18, "DVD_R_DDR" },       { 0x1a, "DVD_PLUS_RW" },
        { 0x1b, "DVD_PLUS_R" },      { 0x20, "DDCD" },
        { 0x21, "DDCD_R" },          { 0x22, "DDCD_RW" },
        { 0x2a, "DVD_PLUS_RW_DL" },  { 0x2b, "DVD_PLUS_R_DL" },
        { 0x40, "BD" },              { 0x41, "BD_R_SRM" },
        { 0x42, "BD_R_RRM" },        { 0x43, "BD_RE" },
        { 0x50, "HDDVD" },           { 0x51, "HDDVD_R" },
        { 0x52, "HDDVD_RAM" },       { 0x53, "HDDVD_RW" },
        { 0x58, "HDDVD_R_DL" },      { 0x5a, "HDDVD_RW_DL" },
        { 0x5b, "MRW" },             { 0x5c, "MRW_W" },
};

const char *cdrom_feature_name(unsigned feature)
{
        for (size_t i = 0; i < ARRAY_SIZE(feature_names); i++)
                if (feature_names[i].feature == feature)
                        return feature_names[i].name;
        return NULL;
}

const char *cdrom_media_state_name(enum cdrom_media_state state)
{
        static const char *const names[] = { "blank", "appendable", "complete", "other" };

        return state >= 0 && (size_t)state < ARRAY_SIZE(names) ? names[state] : NULL;
}

/* ---- probing steps, in systemd's order ---- */

static int capability_compat(const struct cdrom_io *io, struct cdrom_info *info)
{
        static const struct {
                int cap;
                unsigned feature;
        } map[] = {
                { CDC_CD_R, CDROM_FEATURE_CD_R },       { CDC_CD_RW, CDROM_FEATURE_CD_RW },
                { CDC_DVD, CDROM_FEATURE_DVD_ROM },     { CDC_DVD_R, CDROM_FEATURE_DVD_R },
                { CDC_DVD_RAM, CDROM_FEATURE_DVD_RAM }, { CDC_MRW, CDROM_FEATURE_MRW },
                { CDC_MRW_W, CDROM_FEATURE_MRW_W },
        };
        int cap = io->ioctl(io->userdata, CDROM_GET_CAPABILITY, NULL);

        if (cap < 0)
                return log_debug_errno(cap, "CDROM_GET_CAPABILITY failed");
        for (size_t i = 0; i < ARRAY_SIZE(map); i++)
                if (cap & map[i].cap)
                        add_feature(info, map[i].feature);
        return 0;
}

static void media_compat(const struct cdrom_io *io, struct cdrom_info *info)
{
        int r = io->ioctl(io->userdata, CDROM_DRIVE_STATUS, (void *)(uintptr_t)CDSL_CURRENT);

        if (r < 0) {
                log_debug_errno(r, "ioctl(CDROM_DRIVE_STATUS) failed: %m");
                return;
        }
        if (r != CDS_DISC_OK) {
                log_debug("ioctl(CDROM_DRIVE_STATUS) → %d (%s), ignoring.", r,
                          r == CDS_NO_INFO           ? "no info"
                          : r == CDS_NO_DISC         ? "no disc"
                          : r == CDS_TRAY_OPEN       ? "tray open"
                          : r == CDS_DRIVE_NOT_READY ? "drive not ready"
                                                     : "unknown status");
                return;
        }
        info->has_media = true;
}

/* 0 if the drive is an MMC unit (peripheral device type 5), else < 0. */
static int inquiry(const struct cdrom_io *io)
{
        struct mmc_cmd c;
        uint8_t inq[36] = { 0 };
        int r;

        cmd_init(&c);
        cmd_set(&c, 0, GPCMD_INQUIRY);
        cmd_set(&c, 4, sizeof(inq));
        cmd_set(&c, 5, 0);
        r = cmd_run_log(io, &c, inq, sizeof(inq), "inquire");
        if (r < 0)
                return r;
        if ((inq[0] & 0x1f) != 5) {
                log_debug("Not an MMC unit.");
                return -EINVAL;
        }
        log_debug("INQUIRY: [%.8s][%.16s][%.4s]", inq + 8, inq + 16, inq + 32);
        return 0;
}

/* Pre-MMC2 drives: the medium from READ DISC INFORMATION. 1: assume a data
 * CD (the drive said a disc is in), 0: medium type set, < 0: no medium. */
static int profiles_old_mmc(const struct cdrom_io *io, struct cdrom_info *info)
{
        uint8_t di[34] = { 0 }; /* sizeof(disc_information) */
        struct mmc_cmd c;
        size_t len;
        int r;

        cmd_init(&c);
        cmd_set(&c, 0, GPCMD_READ_DISC_INFO);
        cmd_set(&c, 8, 2);
        cmd_set(&c, 9, 0);
        r = cmd_run_log(io, &c, di, 2, "read disc information");
        if (r >= 0) {
                /* ask again for as much as the drive says it has */
                len = MIN((size_t)be16(di) + 2, sizeof(di));
                cmd_init(&c);
                cmd_set(&c, 0, GPCMD_READ_DISC_INFO);
                cmd_set(&c, 8, (uint8_t)len);
                cmd_set(&c, 9, 0);
                r = cmd_run_log(io, &c, di, len, "read disc information");
        }
        if (r < 0) {
                if (info->has_media) {
                        log_debug("No current profile, but disc is present; assuming CD-ROM.");
                        info->media_feature = CDROM_FEATURE_CD_ROM;
                        info->media_track_count = 1;
                        info->media_track_count_data = 1;
                        return 1;
                }
                log_debug("no current profile, assuming no media.");
                return -ENOMEDIUM;
        }
        info->has_media = true;
        /* byte 2: erasable bit 4, disc status bits 0-1 */
        if (di[2] & 0x10)
                info->media_feature = CDROM_FEATURE_CD_RW;
        else if ((di[2] & 0x03) < 2 && cdrom_info_has_feature(info, CDROM_FEATURE_CD_R))
                info->media_feature = CDROM_FEATURE_CD_R;
        else
                info->media_feature = CDROM_FEATURE_CD_ROM;
        return 0;
}

/* The drive's profiles and the current one. 1 with a medium (go on with the
 * TOC and disc information), 0 without, < 0 on failure. */
static int profiles(const struct cdrom_io *io, struct cdrom_info *info)
{
        _cleanup_free_ uint8_t *buf = calloc(1, FEATURES_BUF_MAX);
        struct mmc_cmd c;
        unsigned current;
        size_t len;
        int r;

        if (!buf)
                return -ENOMEM;

        /* the header first: data length and current profile */
        cmd_init(&c);
        cmd_set(&c, 0, GPCMD_GET_CONFIGURATION);
        cmd_set(&c, 8, 8);
        cmd_set(&c, 9, 0);
        r = cmd_run(io, &c, buf, 8);
        if (r > 0 && SENSE_KEY(r) == 0x5 && (SENSE_ASC(r) == 0x20 || SENSE_ASC(r) == 0x24)) {
                log_debug("Drive is pre-MMC2 and does not support 46h get configuration "
                          "command; trying to work around the problem.");
                return profiles_old_mmc(io, info);
        }
        if (r > 0) {
                log_debug("Failed to get configuration with SK=%X/ASC=%02X/ACQ=%02X",
                          SENSE_KEY(r), SENSE_ASC(r), SENSE_ASCQ(r));
                return -EIO;
        }
        if (r < 0)
                return log_debug_errno(r, "Failed to get configuration: %m");

        current = be16(buf + 6);
        if (current > 0) {
                log_debug("current profile 0x%02x", current);
                info->media_feature = (int)current;
                info->has_media = true;
        } else {
                log_debug("no current profile, assuming no media");
                info->has_media = false;
        }

        /* systemd takes the data length field as the length of the whole
         * answer (it is 4 less); so do we, the answers must match */
        len = be32(buf);
        log_debug("GET CONFIGURATION: size of features buffer %zu", len);
        if (len > FEATURES_BUF_MAX) {
                log_debug("Cannot get features in a single query, truncating.");
                len = FEATURES_BUF_MAX;
        } else if (len <= 8)
                len = FEATURES_BUF_MAX;

        cmd_init(&c);
        cmd_set(&c, 0, GPCMD_GET_CONFIGURATION);
        cmd_set(&c, 7, (uint8_t)(len >> 8));
        cmd_set(&c, 8, (uint8_t)len);
        cmd_set(&c, 9, 0);
        r = cmd_run_log(io, &c, buf, len, "get configuration");
        if (r < 0)
                return r;

        /* the length again: the drive may have changed its mind */
        len = be32(buf);
        log_debug("GET CONFIGURATION: size of features buffer %zu", len);
        if (len > FEATURES_BUF_MAX) {
                log_debug("Cannot get features in a single query, truncating.");
                len = FEATURES_BUF_MAX;
        }

        /* feature descriptors: code (2), flags (1), additional length (1) */
        for (size_t i = 8; i + 4 < len; i += 4 + (size_t)buf[i + 3]) {
                unsigned code = be16(buf + i);
                size_t n = buf[i + 3];

                if (code != 0) {
                        log_debug("GET CONFIGURATION: feature 0x%04x <ignored>, with 0x%02zx bytes",
                                  code, n);
                        continue;
                }
                /* the Profile List: 4-byte profile descriptors */
                log_debug("GET CONFIGURATION: feature 'profiles', with %zu entries", n / 4);
                n = MIN(n, len - i - 4);
                for (size_t j = 0; j + 4 <= n; j += 4)
                        add_feature(info, be16(buf + i + 4 + j));
        }
        return info->has_media;
}

/* Track counts from READ TOC, the last session's start from its session
 * format. 0 or < 0 (the counts found so far are kept). */
static int media_toc(const struct cdrom_io *io, struct cdrom_info *info)
{
        _cleanup_free_ uint8_t *toc = NULL;
        uint8_t header[12] = { 0 };
        struct mmc_cmd c;
        unsigned tracks;
        size_t len;
        uint32_t block;
        int r;

        cmd_init(&c);
        cmd_set(&c, 0, GPCMD_READ_TOC_PMA_ATIP);
        cmd_set(&c, 6, 1);
        cmd_set(&c, 8, sizeof(header));
        cmd_set(&c, 9, 0);
        r = cmd_run_log(io, &c, header, sizeof(header), "read TOC");
        if (r < 0)
                return r;

        len = (size_t)be16(header) + 2;
        log_debug("READ TOC: len: %zu, start track: %u, end track: %u", len, header[2], header[3]);
        if (len > TOC_BUF_MAX)
                return -EINVAL;
        if (len < 8) /* no tracks: empty medium */
                return 0;

        /* unsigned on purpose: a last track below the first wraps, and the
         * TOC length bounds the loop (as systemd) */
        tracks = (unsigned)header[3] - header[2] + 1;

        toc = calloc(1, TOC_BUF_MAX);
        if (!toc)
                return -ENOMEM;
        cmd_init(&c);
        cmd_set(&c, 0, GPCMD_READ_TOC_PMA_ATIP);
        cmd_set(&c, 6, header[2]);
        cmd_set(&c, 7, (uint8_t)(len >> 8));
        cmd_set(&c, 8, (uint8_t)len);
        cmd_set(&c, 9, 0);
        r = cmd_run_log(io, &c, toc, len, "read TOC (tracks)");
        if (r < 0)
                return r;

        /* track descriptors of 8 bytes after the 4-byte header */
        for (size_t i = 4; i + 8 <= len && tracks > 0; i += 8, tracks--) {
                bool data = toc[i + 1] & 0x04;

                block = be32(toc + i + 4);
                log_debug("track=%u info=0x%x(%s) start_block=%u", toc[i + 2], toc[i + 1] & 0x0fu,
                          data ? "data" : "audio", block);
                if (data)
                        info->media_track_count_data++;
                else
                        info->media_track_count_audio++;
        }

        cmd_init(&c);
        cmd_set(&c, 0, GPCMD_READ_TOC_PMA_ATIP);
        cmd_set(&c, 2, 1); /* format 1: session information */
        cmd_set(&c, 8, sizeof(header));
        cmd_set(&c, 9, 0);
        r = cmd_run_log(io, &c, header, sizeof(header), "read TOC (multi session)");
        if (r < 0)
                return r;

        block = be32(header + 8);
        log_debug("last track %u starts at block %u", header[6], block);
        info->media_session_last_offset = (uint64_t)block * BLOCK_SIZE;
        return 0;
}

/* DVD-RAM: write protection, formatting. 1: state settled, 0: go on and look
 * at the data, < 0: failure. */
static int dvd_ram_media_update_state(const struct cdrom_io *io, struct cdrom_info *info)
{
        uint8_t dvdstruct[8] = { 0 };
        uint8_t format[12] = { 0 };
        struct mmc_cmd c;
        int r;

        if (info->media_feature != CDROM_FEATURE_DVD_RAM)
                return 0;

        /* a write-protected DVD-RAM may say "complete" */
        cmd_init(&c);
        cmd_set(&c, 0, GPCMD_READ_DVD_STRUCTURE);
        cmd_set(&c, 7, 0xc0);
        cmd_set(&c, 9, sizeof(dvdstruct));
        cmd_set(&c, 11, 0);
        r = cmd_run_log(io, &c, dvdstruct, sizeof(dvdstruct), "read DVD structure");
        if (r < 0)
                return r;
        if (dvdstruct[4] & 0x02) {
                info->media_state = CDROM_MEDIA_STATE_COMPLETE;
                log_debug("Write-protected DVD-RAM media inserted");
                return 1;
        }

        /* do not read unformatted media */
        cmd_init(&c);
        cmd_set(&c, 0, GPCMD_READ_FORMAT_CAPACITIES);
        cmd_set(&c, 8, sizeof(format));
        cmd_set(&c, 9, 0);
        r = cmd_run_log(io, &c, format, sizeof(format), "read DVD format capacities");
        if (r < 0)
                return r;
        if ((format[3] & 7) || format[3] < 16) {
                log_debug("Invalid format capacities length.");
                return -EINVAL;
        }
        switch (format[8] & 3) {
        case 1:
                /* the last format was interrupted or failed: leave it be */
                log_debug("Unformatted DVD-RAM media inserted.");
                return 1;
        case 2:
                log_debug("Formatted DVD-RAM media inserted.");
                return 0;
        case 3:
                info->has_media = false;
                log_debug("Format capacities returned no media.");
                return -ENOMEDIUM;
        }
        return 0;
}

/* Rewritable DVDs say "complete" once formatted: blank unless block 16
 * (ISO 9660, UDF) or block 0 (other file systems) holds data. */
static int dvd_media_update_state(const struct cdrom_io *io, struct cdrom_info *info)
{
        _cleanup_free_ uint8_t *buf = NULL;
        struct mmc_cmd c;
        int r;

        r = dvd_ram_media_update_state(io, info);
        if (r != 0)
                return r;

        buf = calloc(1, 32 * BLOCK_SIZE);
        if (!buf)
                return -ENOMEM;
        cmd_init(&c);
        cmd_set(&c, 0, GPCMD_READ_10);
        cmd_set(&c, 5, 0);
        cmd_set(&c, 8, 32);
        cmd_set(&c, 9, 0);
        r = cmd_run_log(io, &c, buf, 32 * BLOCK_SIZE, "read first 32 blocks");
        if (r < 0) {
                info->has_media = false;
                return r;
        }
        for (size_t i = 16 * BLOCK_SIZE; i < 17 * BLOCK_SIZE; i++)
                if (buf[i] != 0) {
                        log_debug("Data in block 16, assuming complete.");
                        return 0;
                }
        for (size_t i = 0; i < BLOCK_SIZE; i++)
                if (buf[i] != 0) {
                        log_debug("Data in block 0, assuming complete.");
                        return 0;
                }
        log_debug("No data in blocks 0 or 16, assuming blank.");
        info->media_state = CDROM_MEDIA_STATE_BLANK;
        return 0;
}

static int media_info(const struct cdrom_io *io, struct cdrom_info *info)
{
        uint8_t header[32] = { 0 };
        enum cdrom_media_state state;
        struct mmc_cmd c;
        int f, r;

        cmd_init(&c);
        cmd_set(&c, 0, GPCMD_READ_DISC_INFO);
        cmd_set(&c, 8, sizeof(header));
        cmd_set(&c, 9, 0);
        r = cmd_run_log(io, &c, header, sizeof(header), "read disc information");
        if (r < 0)
                return r;

        info->has_media = true;
        log_debug("disk type %02x", header[8]);
        state = (enum cdrom_media_state)(header[2] & 0x03);
        log_debug("hardware reported media status: %s", cdrom_media_state_name(state));

        f = info->media_feature;
        /* not for plain CD-ROMs: some fake ones say "blank" */
        if (f != CDROM_FEATURE_CD_ROM)
                info->media_state = state;
        /* a fresh DVD-RW in restricted overwrite mode says "appendable";
         * after blanking it says "blank", which is what users expect */
        if (f == CDROM_FEATURE_DVD_RW_RO && state == CDROM_MEDIA_STATE_APPENDABLE)
                info->media_state = CDROM_MEDIA_STATE_BLANK;
        /* formatted DVD+RW, DVD-RW (restricted overwrite) and DVD-RAM are
         * always "complete" or "other": look at the contents */
        if ((f == CDROM_FEATURE_DVD_RW_RO || f == CDROM_FEATURE_DVD_PLUS_RW ||
             f == CDROM_FEATURE_DVD_PLUS_RW_DL || f == CDROM_FEATURE_DVD_RAM) &&
            (state == CDROM_MEDIA_STATE_COMPLETE || state == CDROM_MEDIA_STATE_OTHER)) {
                r = dvd_media_update_state(io, info);
                if (r < 0)
                        return r;
        }
        /* sessions can be appended to blank and appendable media, except
         * DVD-RW in restricted overwrite mode */
        if (f != CDROM_FEATURE_DVD_RW_RO &&
            (state == CDROM_MEDIA_STATE_BLANK || state == CDROM_MEDIA_STATE_APPENDABLE))
                info->media_session_next = (unsigned)header[10] << 8 | header[5];
        info->media_session_count = (unsigned)header[9] << 8 | header[4];
        info->media_track_count = (unsigned)header[11] << 8 | header[6];
        return 0;
}

int cdrom_probe(const struct cdrom_io *io, struct cdrom_info *info)
{
        int r;

        memset(info, 0, sizeof(*info));
        info->media_feature = -1;
        info->media_state = CDROM_MEDIA_STATE_UNKNOWN;

        r = capability_compat(io, info);
        if (r < 0)
                return r;
        /* a medium or not, the profiles are read */
        media_compat(io, info);
        if (inquiry(io) < 0)
                return 0;
        r = profiles(io, info);
        if (r == -ENOMEM)
                return r;
        if (r > 0) {
                (void)media_toc(io, info);
                (void)media_info(io, info);
        }
        return 0;
}

int cdrom_media_lock(const struct cdrom_io *io, bool lock)
{
        int r;

        /* the kernel's own locking off */
        r = io->ioctl(io->userdata, CDROM_CLEAR_OPTIONS, (void *)(uintptr_t)CDO_LOCK);
        if (r < 0)
                log_debug_errno(r, "Failed to issue ioctl(CDROM_CLEAR_OPTIONS, CDO_LOCK), ignoring: %m");
        r = io->ioctl(io->userdata, CDROM_LOCKDOOR, (void *)(uintptr_t)(lock ? 1 : 0));
        if (r < 0)
                return log_debug_errno(r, "Failed to issue ioctl(CDROM_LOCKDOOR): %m");
        return 0;
}

int cdrom_media_eject(const struct cdrom_io *io)
{
        struct mmc_cmd c;

        cmd_init(&c);
        cmd_set(&c, 0, GPCMD_START_STOP_UNIT);
        cmd_set(&c, 4, 0x02);
        cmd_set(&c, 5, 0);
        return cmd_run_log(io, &c, NULL, 0, "start/stop unit");
}

static void print_feature(FILE *f, const char *prefix, int feature)
{
        const char *name = feature >= 0 ? cdrom_feature_name((unsigned)feature) : NULL;

        if (!name) {
                log_debug("Unknown feature 0x%02x, ignoring.", (unsigned)feature);
                return;
        }
        fprintf(f, "%s_%s=1\n", prefix, name);
}

void cdrom_info_print(const struct cdrom_info *info, FILE *f)
{
        const char *state;
        int m = info->media_feature;

#define HAS(x) cdrom_info_has_feature(info, CDROM_FEATURE_##x)
        fputs("ID_CDROM=1\n", f);
        for (size_t i = 0; i < info->n_features; i++)
                print_feature(f, "ID_CDROM", info->features[i]);
        if (cdrom_info_has_feature(info, 0x03) || cdrom_info_has_feature(info, 0x04) ||
            cdrom_info_has_feature(info, 0x05))
                fputs("ID_CDROM_MO=1\n", f);
        if (HAS(DVD_RW_RO) || HAS(DVD_RW_SEQ))
                fputs("ID_CDROM_DVD_RW=1\n", f);
        if (HAS(DVD_R_DL_SEQ) || HAS(DVD_R_DL_JR))
                fputs("ID_CDROM_DVD_R_DL=1\n", f);
        if (HAS(DVD_R_DDR))
                fputs("ID_CDROM_DVD_R=1\n", f);
        if (HAS(BD_R_SRM) || HAS(BD_R_RRM))
                fputs("ID_CDROM_BD_R=1\n", f);
#undef HAS

        if (info->has_media) {
                fputs("ID_CDROM_MEDIA=1\n", f);
                print_feature(f, "ID_CDROM_MEDIA", m);
                if (m >= 0x03 && m <= 0x05)
                        fputs("ID_CDROM_MEDIA_MO=1\n", f);
                if (m == CDROM_FEATURE_DVD_RW_RO || m == CDROM_FEATURE_DVD_RW_SEQ)
                        fputs("ID_CDROM_MEDIA_DVD_RW=1\n", f);
                if (m == CDROM_FEATURE_DVD_R_DL_SEQ || m == CDROM_FEATURE_DVD_R_DL_JR)
                        fputs("ID_CDROM_MEDIA_DVD_R_DL=1\n", f);
                if (m == CDROM_FEATURE_DVD_R_DDR)
                        fputs("ID_CDROM_MEDIA_DVD_R=1\n", f);
                if (m == CDROM_FEATURE_BD_R_SRM || m == CDROM_FEATURE_BD_R_RRM)
                        fputs("ID_CDROM_MEDIA_BD_R=1\n", f);
        }

        state = cdrom_media_state_name(info->media_state);
        if (state)
                fprintf(f, "ID_CDROM_MEDIA_STATE=%s\n", state);
        if (info->media_session_next > 0)
                fprintf(f, "ID_CDROM_MEDIA_SESSION_NEXT=%u\n", info->media_session_next);
        if (info->media_session_count > 0)
                fprintf(f, "ID_CDROM_MEDIA_SESSION_COUNT=%u\n", info->media_session_count);
        if (info->media_session_count > 1 && info->media_session_last_offset > 0)
                fprintf(f, "ID_CDROM_MEDIA_SESSION_LAST_OFFSET=%" PRIu64 "\n",
                        info->media_session_last_offset);
        if (info->media_track_count > 0)
                fprintf(f, "ID_CDROM_MEDIA_TRACK_COUNT=%u\n", info->media_track_count);
        if (info->media_track_count_audio > 0)
                fprintf(f, "ID_CDROM_MEDIA_TRACK_COUNT_AUDIO=%u\n", info->media_track_count_audio);
        if (info->media_track_count_data > 0)
                fprintf(f, "ID_CDROM_MEDIA_TRACK_COUNT_DATA=%u\n", info->media_track_count_data);
}
