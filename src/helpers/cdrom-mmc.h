/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (one struct cdrom_info and struct cdrom_io per thread) */
#pragma once
/* The prober of the cdrom_id program: what an optical drive can do and what
 * medium it holds, asked with the CDROM_* ioctls of the kernel's cdrom layer
 * and MMC commands over SG_IO (INQUIRY, GET CONFIGURATION, READ TOC, READ
 * DISC INFORMATION, READ DVD STRUCTURE, READ FORMAT CAPACITIES, READ(10)),
 * with the same questions in the same order, the same interpretation of the
 * answers (quirks included) and the same ID_CDROM_* lines as systemd 252's
 * cdrom_id.
 *
 * Every ioctl goes through a struct cdrom_io, so the unit tests answer from
 * recorded exchanges instead of a drive. All device data is length-checked
 * against the buffer it was read into; buffers the drive did not fill are
 * zero. Debug messages go to log_debug(). */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Transport: ioctl(request, arg) on the drive; returns the ioctl's value
 * (>= 0) or -errno. */
struct cdrom_io {
        int (*ioctl)(void *userdata, unsigned long request, void *arg);
        void *userdata;
};

/* A struct cdrom_io over an open drive fd (borrowed; not closed). */
void cdrom_io_init_fd(struct cdrom_io *io, int *fd);

/* MMC profile numbers (GET CONFIGURATION) and, past the last one systemd
 * names, the two Mount Rainier capabilities of CDROM_GET_CAPABILITY. */
enum {
        CDROM_FEATURE_CD_ROM = 0x08,
        CDROM_FEATURE_CD_R = 0x09,
        CDROM_FEATURE_CD_RW = 0x0a,
        CDROM_FEATURE_DVD_ROM = 0x10,
        CDROM_FEATURE_DVD_R = 0x11,
        CDROM_FEATURE_DVD_RAM = 0x12,
        CDROM_FEATURE_DVD_RW_RO = 0x13,
        CDROM_FEATURE_DVD_RW_SEQ = 0x14,
        CDROM_FEATURE_DVD_R_DL_SEQ = 0x15,
        CDROM_FEATURE_DVD_R_DL_JR = 0x16,
        CDROM_FEATURE_DVD_R_DDR = 0x18,
        CDROM_FEATURE_DVD_PLUS_RW = 0x1a,
        CDROM_FEATURE_DVD_PLUS_RW_DL = 0x2a,
        CDROM_FEATURE_BD_R_SRM = 0x41,
        CDROM_FEATURE_BD_R_RRM = 0x42,
        CDROM_FEATURE_MRW = 0x5b,
        CDROM_FEATURE_MRW_W = 0x5c,
};

enum cdrom_media_state {
        CDROM_MEDIA_STATE_UNKNOWN = -1,
        CDROM_MEDIA_STATE_BLANK = 0,
        CDROM_MEDIA_STATE_APPENDABLE = 1,
        CDROM_MEDIA_STATE_COMPLETE = 2,
        CDROM_MEDIA_STATE_OTHER = 3,
};

/* One GET CONFIGURATION answer holds at most (65530 - 8) / 4 profiles, and
 * CDROM_GET_CAPABILITY adds 7: the list can never overflow. */
#define CDROM_FEATURES_MAX 16400

struct cdrom_info {
        /* drive features, deduplicated, in the order first seen */
        uint16_t features[CDROM_FEATURES_MAX];
        size_t n_features;
        uint8_t feature_set[65536 / 8];

        int media_feature; /* profile of the medium, -1 unknown */
        bool has_media;
        enum cdrom_media_state media_state;
        unsigned media_session_next;
        unsigned media_session_count;
        unsigned media_track_count;
        unsigned media_track_count_data;
        unsigned media_track_count_audio;
        uint64_t media_session_last_offset;
};

/* Fill *info from the drive: CDROM_GET_CAPABILITY, CDROM_DRIVE_STATUS, and
 * when the drive answers INQUIRY as an MMC unit its profiles and, with a
 * medium, table of contents and disc information. 0, or -errno when
 * CDROM_GET_CAPABILITY fails (systemd then prints nothing and fails); every
 * later failure only leaves fields unknown. */
int cdrom_probe(const struct cdrom_io *io, struct cdrom_info *info);

/* CDROM_CLEAR_OPTIONS(CDO_LOCK) (failure ignored), then CDROM_LOCKDOOR.
 * 0 or -errno. */
int cdrom_media_lock(const struct cdrom_io *io, bool lock);
/* START STOP UNIT with LoEj: 0, -errno, or -EIO on a SCSI error. */
int cdrom_media_eject(const struct cdrom_io *io);

/* Is this feature in the drive's list? */
bool cdrom_info_has_feature(const struct cdrom_info *info, unsigned feature);
/* "CD", "DVD_PLUS_RW", ... for the features systemd names, else NULL. */
const char *cdrom_feature_name(unsigned feature);
/* "blank", "appendable", "complete", "other"; NULL for unknown. */
const char *cdrom_media_state_name(enum cdrom_media_state state);
/* The KEY=value lines, in systemd's order, to f. */
void cdrom_info_print(const struct cdrom_info *info, FILE *f);
