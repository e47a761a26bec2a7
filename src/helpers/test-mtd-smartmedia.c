/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: main only */
/* mtd-smartmedia.c on flash images in temporary files. The program against
 * systemd's mtd_probe: tests/integration/test_helpers_v4l_mtd.py. */
#include <fcntl.h>

#include "helpers/mtd-smartmedia.h"
#include "shared/macro.h"
#include "shared/tests.h"

static const uint8_t cis[] = { 0x01, 0x03, 0xd9, 0x01, 0xff, 0x18, 0x02, 0xdf, 0x01, 0x20 };

/* A temporary image: `len` zero bytes with the CIS at `at` (or none, -1). */
static int image(size_t len, long at)
{
        char path[] = "/tmp/test-mtd-XXXXXX";
        uint8_t *buf = calloc(1, len + 1);
        int fd = mkostemp(path, O_CLOEXEC);

        ASSERT_TRUE(buf && fd >= 0);
        ASSERT_EQ(unlink(path), 0);
        if (at >= 0)
                memcpy(buf + at, cis, sizeof(cis));
        ASSERT_EQ(write(fd, buf, len), (ssize_t)len);
        free(buf);
        return fd;
}

static int probe(size_t len, long at, uint8_t type, uint32_t size, uint32_t erase, uint32_t write)
{
        struct mtd_info_user info = {
                .type = type, .size = size, .erasesize = erase, .writesize = write,
        };
        _cleanup_close_ int fd = image(len, at);

        return mtd_probe_smartmedia(fd, &info);
}

static void test_smartmedia(void)
{
        ASSERT_EQ(probe(4096, 0, MTD_NANDFLASH, 16 << 20, 16384, 512), 1);
        ASSERT_EQ(probe(4096, 256, MTD_NANDFLASH, 2 << 20, 4096, 256), 1);
        /* not NAND, other page sizes */
        ASSERT_EQ(probe(4096, 0, MTD_NORFLASH, 16 << 20, 16384, 512), 0);
        ASSERT_EQ(probe(4096, 0, MTD_NANDFLASH, 16 << 20, 16384, 2048), 0);
        /* no signature; one only in the second sector (the first read counts) */
        ASSERT_EQ(probe(4096, -1, MTD_NANDFLASH, 16 << 20, 16384, 512), 0);
        ASSERT_EQ(probe(4096, 512, MTD_NANDFLASH, 16 << 20, 16384, 512), 0);
        /* no full sector to read; no block to look in */
        ASSERT_EQ(probe(300, 0, MTD_NANDFLASH, 16 << 20, 16384, 512), 0);
        ASSERT_EQ(probe(4096, 0, MTD_NANDFLASH, 16 << 20, 0, 512), 0);
}

int main(void)
{
        TEST_RUN(test_smartmedia);
        return 0;
}
