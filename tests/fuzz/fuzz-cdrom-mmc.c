/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (libFuzzer runs the target single-threaded) */
/* libFuzzer target for cdrom_id's prober (src/helpers/cdrom-mmc.c, compiled
 * into this target): a fake drive answers every ioctl from the input.
 * Input layout: byte 0 options (bit 0 lock, bit 1 unlock, bit 2 eject);
 * then, for each ioctl in the order the prober sends them, one control byte
 * (bits 0-1: 0 success, 1 failure with errno EIO, 2 CHECK CONDITION with the
 * next 3 bytes as sense key, ASC, ASCQ, 3 failure without sense data) and
 * for a successful SG_IO a 2-byte big-endian length and that many data
 * bytes (cut to the transfer length); CDROM_GET_CAPABILITY and
 * CDROM_DRIVE_STATUS take their value from the next 4 bytes. An exhausted
 * input answers EIO.
 *
 * Checks: no access outside the buffers given to the drive (ASan), every
 * output line is ID_CDROM...=value without control characters.
 * Seed corpus: tests/fuzz/corpus-cdrom-mmc/. */

#include <linux/cdrom.h>
#include <scsi/sg.h>
#include <string.h>

#include "../../src/helpers/cdrom-mmc.c"
#include "fuzz.h"

struct input {
        const uint8_t *p;
        size_t left;
};

static bool take(struct input *in, void *out, size_t n)
{
        if (in->left < n)
                return false;
        memcpy(out, in->p, n);
        in->p += n;
        in->left -= n;
        return true;
}

static int fake_ioctl(void *userdata, unsigned long request, void *arg)
{
        struct input *in = userdata;
        uint8_t ctl, b[4];

        if (!take(in, &ctl, 1))
                return -EIO;
        switch (ctl & 3) {
        case 1:
                return -EIO;
        case 3:
                if (request == SG_IO) {
                        struct sg_io_hdr *h = arg;

                        h->info = SG_INFO_CHECK;
                        return 0;
                }
                return -ENOTTY;
        case 2:
                if (request == SG_IO) {
                        struct sg_io_hdr *h = arg;
                        uint8_t *s = h->sbp;

                        if (!take(in, b, 3))
                                return -EIO;
                        CHECK(h->mx_sb_len >= 14);
                        s[0] = 0x70;
                        s[2] = b[0];
                        s[12] = b[1];
                        s[13] = b[2];
                        h->info = SG_INFO_CHECK;
                        h->masked_status = 1;
                        return 0;
                }
                return -EIO;
        }
        if (request == SG_IO) {
                struct sg_io_hdr *h = arg;
                size_t n;

                CHECK(h->interface_id == 'S' && h->cmd_len >= 6 && h->cmd_len <= 16);
                if (!take(in, b, 2))
                        return -EIO;
                n = (size_t)(b[0] << 8 | b[1]);
                n = MIN(n, in->left);
                n = MIN(n, (size_t)h->dxfer_len);
                if (n) {
                        CHECK(h->dxfer_direction == SG_DXFER_FROM_DEV);
                        memcpy(h->dxferp, in->p, n);
                        in->p += n;
                        in->left -= n;
                }
                return 0;
        }
        if (request == CDROM_GET_CAPABILITY || request == CDROM_DRIVE_STATUS) {
                if (!take(in, b, 4))
                        return -EIO;
                return (int)(((uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3]) &
                             0x7fffffff);
        }
        return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        (void)argc;
        (void)argv;
        log_set_max_level(LOG_DEBUG);
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static struct cdrom_info info;
        struct input in = { data, size };
        struct cdrom_io io = { .ioctl = fake_ioctl, .userdata = &in };
        uint8_t opt = 0;
        bool line_start = true;
        char *out = NULL;
        size_t len = 0;
        FILE *f;

        if (size > 1 << 18)
                return 0;
        (void)take(&in, &opt, 1);
        if (cdrom_probe(&io, &info) < 0)
                return 0;
        if ((opt & 1) && info.has_media)
                (void)cdrom_media_lock(&io, true);
        if ((opt & 2) && info.has_media)
                (void)cdrom_media_lock(&io, false);
        if (opt & 4) {
                (void)cdrom_media_lock(&io, false);
                (void)cdrom_media_eject(&io);
        }
        f = open_memstream(&out, &len);
        CHECK(f);
        cdrom_info_print(&info, f);
        CHECK(fclose(f) == 0);
        for (size_t i = 0; i < len; i++) {
                if (line_start)
                        CHECK(len - i >= 8 && memcmp(out + i, "ID_CDROM", 8) == 0);
                CHECK((unsigned char)out[i] >= 0x20 || out[i] == '\n');
                line_start = out[i] == '\n';
        }
        free(out);
        return 0;
}
