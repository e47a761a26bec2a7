/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: main only */
/* cdrom-mmc.c over recorded drive answers (tests/helpers/fixtures/cdrom/
 * NAME.rec, format: tests/helpers/cdrom-replay.h): QEMU 7.2's ATAPI DVD-ROM
 * on AHCI and its virtio-scsi CD-ROM, each with an ISO 9660 medium and
 * without, recorded under systemd 252's cdrom_id in a VM, and synthetic
 * answers from tests/helpers/make-cdrom-synthetic.py. NAME.out is what
 * systemd's cdrom_id printed on the same answers; the integration test
 * (tests/integration/test_helpers_cdrom_dmi.py) runs both programs side by
 * side. Run from the source tree's top (or set TUDEV_SRCDIR). */
#include <dirent.h>
#include <linux/cdrom.h>

#include "../../tests/helpers/cdrom-replay.h"
#include "helpers/cdrom-mmc.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "shared/tests.h"

#define FIXTURES "tests/helpers/fixtures/cdrom"

static int replay_io(void *userdata, unsigned long request, void *arg)
{
        int r = replay_ioctl(userdata, request, arg);

        return r < 0 ? -errno : r;
}

static char *fixture_path(const char *name)
{
        const char *top = getenv("TUDEV_SRCDIR");
        char *p;

        ASSERT_TRUE(asprintf(&p, "%s/" FIXTURES "/%s", top ? top : ".", name) > 0);
        return p;
}

static char *read_text(const char *path)
{
        FILE *f = fopen(path, "re");
        char *buf = calloc(1, 65536);
        size_t n;

        ASSERT_TRUE(f && buf);
        n = fread(buf, 1, 65535, f);
        buf[n] = '\0';
        fclose(f);
        return buf;
}

/* Drop the leading '#' lines (SPDX line, description) of an expected
 * output file, in place; returns text. */
static char *skip_comments(char *text)
{
        char *p = text;

        while (*p == '#') {
                char *nl = strchr(p, '\n');

                p = nl ? nl + 1 : p + strlen(p);
        }
        memmove(text, p, strlen(p) + 1);
        return text;
}

/* "# options: --lock-media" from the recording's comments. */
static void read_options(const char *path, bool *lock, bool *unlock, bool *eject)
{
        char *text = read_text(path);
        const char *o = strstr(text, "# options:");
        const char *end = o ? strchr(o, '\n') : NULL;
        size_t n = o && end ? (size_t)(end - o) : 0;

        *lock = n && memmem(o, n, "--lock-media", 12);
        *unlock = n && memmem(o, n, "--unlock-media", 14);
        *eject = n && memmem(o, n, "--eject-media", 13);
        free(text);
}

/* What main-cdrom_id.c does after opening, into a string; NULL when the
 * probe fails (the program prints nothing then). */
static char *run_recording(const char *rec)
{
        _cleanup_free_ struct cdrom_info *info = malloc(sizeof(*info));
        struct replay rp;
        struct cdrom_io io = { .ioctl = replay_io, .userdata = &rp };
        bool lock, unlock, eject;
        char *out = NULL;
        size_t len = 0;
        FILE *f;
        int r;

        ASSERT_TRUE(info);
        ASSERT_EQ(replay_load(rec, &rp), 0);
        read_options(rec, &lock, &unlock, &eject);
        r = cdrom_probe(&io, info);
        if (r < 0) {
                replay_free(&rp);
                return NULL;
        }
        if (lock && info->has_media)
                (void)cdrom_media_lock(&io, true);
        if (unlock && info->has_media)
                (void)cdrom_media_lock(&io, false);
        if (eject) {
                (void)cdrom_media_lock(&io, false);
                (void)cdrom_media_eject(&io);
        }
        f = open_memstream(&out, &len);
        ASSERT_TRUE(f);
        cdrom_info_print(info, f);
        ASSERT_EQ(fclose(f), 0);
        replay_free(&rp);
        return out;
}

static void test_recordings(void)
{
        _cleanup_free_ char *dir = fixture_path("");
        struct dirent **names;
        unsigned checked = 0;
        int n = scandir(dir, &names, NULL, alphasort);

        ASSERT_TRUE(n > 0);
        for (int i = 0; i < n; i++) {
                const char *name = names[i]->d_name;
                size_t l = strlen(name);

                if (l > 4 && streq(name + l - 4, ".rec")) {
                        _cleanup_free_ char *rec = fixture_path(name);
                        _cleanup_free_ char *outname = strdup(name);
                        _cleanup_free_ char *outpath = NULL, *expected = NULL, *got = NULL;

                        ASSERT_TRUE(outname);
                        strcpy(outname + l - 4, ".out");
                        outpath = fixture_path(outname);
                        expected = skip_comments(read_text(outpath));
                        got = run_recording(rec);
                        if (!streq(got ? got : "", expected))
                                fprintf(stderr, "\n%s: expected:\n%s--- got:\n%s", name, expected,
                                        got ? got : "(probe failed)\n");
                        ASSERT_STREQ(got ? got : "", expected);
                        checked++;
                }
                free(names[i]);
        }
        free(names);
        /* 20 QEMU recordings and the synthetic ones */
        ASSERT_TRUE(checked >= 40);
}

/* The QEMU ATAPI drive's configuration answer is cut after one profile
 * (its data length says 16): only DVD, as systemd reads it. */
static void test_qemu_ide_profiles(void)
{
        _cleanup_free_ struct cdrom_info *info = malloc(sizeof(*info));
        _cleanup_free_ char *rec = fixture_path("ahci-ide-cd-iso-plain.rec");
        struct replay rp;
        struct cdrom_io io = { .ioctl = replay_io, .userdata = &rp };

        ASSERT_TRUE(info);
        ASSERT_EQ(replay_load(rec, &rp), 0);
        ASSERT_EQ(cdrom_probe(&io, info), 0);
        ASSERT_EQ(info->n_features, 1);
        ASSERT_EQ(info->features[0], CDROM_FEATURE_DVD_ROM);
        ASSERT_TRUE(info->has_media);
        ASSERT_EQ(info->media_feature, CDROM_FEATURE_CD_ROM);
        ASSERT_EQ(info->media_state, CDROM_MEDIA_STATE_UNKNOWN); /* plain CD-ROM: not set */
        ASSERT_EQ(info->media_session_count, 1);
        ASSERT_EQ(info->media_track_count, 1);
        ASSERT_EQ(info->media_track_count_data, 1);
        ASSERT_EQ(info->media_track_count_audio, 0);
        replay_free(&rp);
}

static int failing_io(void *userdata, unsigned long request, void *arg)
{
        unsigned *calls = userdata;

        (*calls)++;
        return request == CDROM_GET_CAPABILITY ? 0 : -ENXIO;
}

/* Every command failing: the capability answer alone, no medium. */
static void test_all_failing(void)
{
        _cleanup_free_ struct cdrom_info *info = malloc(sizeof(*info));
        unsigned calls = 0;
        struct cdrom_io io = { .ioctl = failing_io, .userdata = &calls };
        char *out = NULL;
        size_t len = 0;
        FILE *f;

        ASSERT_TRUE(info);
        ASSERT_EQ(cdrom_probe(&io, info), 0);
        ASSERT_EQ(calls, 3); /* capability, drive status, INQUIRY */
        ASSERT_TRUE(!info->has_media);
        ASSERT_EQ(cdrom_media_lock(&io, true), -ENXIO);
        ASSERT_EQ(cdrom_media_eject(&io), -ENXIO);
        f = open_memstream(&out, &len);
        ASSERT_TRUE(f);
        cdrom_info_print(info, f);
        ASSERT_EQ(fclose(f), 0);
        ASSERT_STREQ(out, "ID_CDROM=1\n");
        free(out);
}

static void test_names(void)
{
        ASSERT_STREQ(cdrom_feature_name(0x08), "CD");
        ASSERT_STREQ(cdrom_feature_name(0x10), "DVD");
        ASSERT_STREQ(cdrom_feature_name(0x2b), "DVD_PLUS_R_DL");
        ASSERT_STREQ(cdrom_feature_name(0x5c), "MRW_W");
        ASSERT_TRUE(cdrom_feature_name(0x00) == NULL);
        ASSERT_TRUE(cdrom_feature_name(0x19) == NULL);
        ASSERT_TRUE(cdrom_feature_name(0xffff) == NULL);
        ASSERT_STREQ(cdrom_media_state_name(CDROM_MEDIA_STATE_BLANK), "blank");
        ASSERT_STREQ(cdrom_media_state_name(CDROM_MEDIA_STATE_OTHER), "other");
        ASSERT_TRUE(cdrom_media_state_name(CDROM_MEDIA_STATE_UNKNOWN) == NULL);
}

int main(void)
{
        log_set_max_level(getenv("TEST_DEBUG") ? LOG_DEBUG : LOG_WARNING);
        TEST_RUN(test_names);
        TEST_RUN(test_all_failing);
        TEST_RUN(test_qemu_ide_profiles);
        TEST_RUN(test_recordings);
        return 0;
}
