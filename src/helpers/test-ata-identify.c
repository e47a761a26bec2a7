/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: single-threaded test */
/* ata_id's decoding over recorded IDENTIFY blocks (the devices of
 * tests/helpers/ata_scsi_devices.py, built here word by word). The expected
 * lines are what systemd 252's ata_id prints for the same blocks (taken
 * from its run under tests/helpers/sg-shim.c); the integration test
 * test_helpers_ata_scsi.py compares both programs over every device. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#include "helpers/ata-identify.h"
#include "helpers/helper-util.h"
#include "shared/tests.h"

struct word {
        unsigned idx;
        uint16_t val;
};

/* IDENTIFY block: words little-endian, ATA strings (byte-swapped pairs,
 * space padded) at words 10, 23 and 27. */
static void build(uint8_t blk[ATA_IDENTIFY_SIZE], const struct word *w, size_t n, const char *serial,
                  const char *fw, const char *model)
{
        const struct {
                const char *s;
                unsigned word, len;
        } str[] = { { serial, 10, 20 }, { fw, 23, 8 }, { model, 27, 40 } };

        memset(blk, 0, ATA_IDENTIFY_SIZE);
        for (size_t i = 0; i < n; i++) {
                blk[w[i].idx * 2] = (uint8_t)(w[i].val & 0xff);
                blk[w[i].idx * 2 + 1] = (uint8_t)(w[i].val >> 8);
        }
        for (size_t k = 0; k < ARRAY_SIZE(str); k++) {
                char pad[40];
                size_t l = strlen(str[k].s);

                memset(pad, ' ', sizeof(pad));
                memcpy(pad, str[k].s, l < str[k].len ? l : str[k].len);
                for (unsigned i = 0; i < str[k].len; i += 2) {
                        blk[str[k].word * 2 + i] = (uint8_t)pad[i + 1];
                        blk[str[k].word * 2 + i + 1] = (uint8_t)pad[i];
                }
        }
}

/* HDIO_GET_IDENTITY's view of a block: strings in reading order. */
static void to_hdio(uint8_t out[ATA_IDENTIFY_SIZE], const uint8_t blk[ATA_IDENTIFY_SIZE])
{
        memcpy(out, blk, ATA_IDENTIFY_SIZE);
        for (unsigned off = 20; off < 94; off += 2) {
                out[off] = blk[off + 1];
                out[off + 1] = blk[off];
        }
}

#define BUILD(blk, words, serial, fw, model) build(blk, words, ARRAY_SIZE(words), serial, fw, model)

static const struct word QEMU_HD[] = {
        { 0, 0x0040 }, { 1, 16383 }, { 3, 16 }, { 4, 512 * 63 }, { 5, 512 }, { 6, 63 }, { 20, 3 },
        { 21, 512 }, { 22, 4 }, { 47, 0x8010 }, { 48, 1 }, { 49, 0x0b00 }, { 51, 0x200 },
        { 52, 0x200 }, { 53, 7 }, { 54, 16383 }, { 55, 16 }, { 56, 63 }, { 57, 0xfc10 },
        { 58, 0x00fb }, { 59, 0x110 }, { 60, 0xffff }, { 61, 0x0fff }, { 62, 0x07 }, { 63, 0x07 },
        { 64, 0x03 }, { 65, 120 }, { 66, 120 }, { 67, 120 }, { 68, 120 }, { 75, 31 }, { 76, 0x0100 },
        { 80, 0xf0 }, { 81, 0x16 }, { 82, 0x4021 }, { 83, 0x7400 }, { 84, 0x4000 }, { 85, 0x4021 },
        { 86, 0x7400 }, { 87, 0x4000 }, { 88, 0x203f }, { 93, 0x6001 }, { 101, 0x0400 },
};
static const struct word QEMU_DVD[] = {
        { 0, 0x85c0 }, { 20, 3 }, { 21, 512 }, { 22, 4 }, { 48, 1 }, { 49, 0x0200 }, { 53, 3 },
        { 63, 0x103 }, { 64, 1 }, { 65, 0xb4 }, { 66, 0xb4 }, { 67, 0x12c }, { 68, 0xb4 },
        { 71, 30 }, { 72, 30 }, { 80, 0x1e },
};
static const struct word SATA_SSD[] = {
        { 0, 0x0040 }, { 47, 0x8001 }, { 49, 0x2f00 }, { 53, 0x0007 }, { 59, 0x0101 },
        { 60, 0xffff }, { 61, 0x0fff }, { 63, 0x0007 }, { 64, 0x0003 }, { 75, 0x001f },
        { 76, 0x170e }, { 77, 0x00c6 }, { 78, 0x016c }, { 79, 0x0040 }, { 80, 0x07f8 },
        { 82, 0x746b }, { 83, 0x7d61 }, { 84, 0x6163 }, { 85, 0x7469 }, { 86, 0xbc41 },
        { 87, 0x6163 }, { 88, 0x407f }, { 89, 0x0001 }, { 90, 0x0001 }, { 100, 0x6db0 },
        { 101, 0x3a38 }, { 106, 0x4000 }, { 108, 0x5002 }, { 109, 0x538e }, { 110, 0x40a1 },
        { 111, 0xb2c3 }, { 128, 0x0029 }, { 169, 0x0001 }, { 217, 0x0001 },
};
static const struct word SATA_HDD[] = {
        { 0, 0x427a }, { 47, 0x8010 }, { 49, 0x2f00 }, { 53, 0x0007 }, { 76, 0x670e },
        { 82, 0x346b }, { 83, 0x7f69 }, { 84, 0x6163 }, { 85, 0x346b }, { 86, 0xbe29 },
        { 87, 0x6163 }, { 89, 0x00a5 }, { 90, 0x00a5 }, { 91, 0x40fe }, { 94, 0x80fe },
        { 108, 0x5001 }, { 109, 0x4ee2 }, { 110, 0x0b1a }, { 111, 0x2f3c }, { 128, 0x0137 },
        { 217, 7200 },
};
static const struct word CF_CARD[] = {
        { 0, 0x848a }, { 76, 0xffff }, { 82, 0x000c }, { 83, 0x7068 }, { 85, 0x000c },
        { 86, 0x7044 }, { 91, 0x4060 },
};
static const struct word ODD[] = { { 0, 0x0040 }, { 82, 0x4021 }, { 85, 0x4001 } };

static const char EXPECT_QEMU_HD[] =
                "ID_ATA=1\n"
                "ID_TYPE=disk\n"
                "ID_BUS=ata\n"
                "ID_MODEL=QEMU_HARDDISK\n"
                "ID_MODEL_ENC=QEMU\\x20HARDDISK\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\n"
                "ID_REVISION=2.5+\n"
                "ID_SERIAL=QEMU_HARDDISK_QM00001\n"
                "ID_SERIAL_SHORT=QM00001\n"
                "ID_ATA_WRITE_CACHE=1\n"
                "ID_ATA_WRITE_CACHE_ENABLED=1\n"
                "ID_ATA_FEATURE_SET_SMART=1\n"
                "ID_ATA_FEATURE_SET_SMART_ENABLED=1\n"
                "ID_ATA_SATA=1\n";

static const char EXPECT_QEMU_DVD[] =
                "ID_ATA=1\n"
                "ID_TYPE=cd\n"
                "ID_BUS=ata\n"
                "ID_MODEL=QEMU_DVD-ROM\n"
                "ID_MODEL_ENC=QEMU\\x20DVD-ROM\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\n"
                "ID_REVISION=2.5+\n"
                "ID_SERIAL=QEMU_DVD-ROM_QM00003\n"
                "ID_SERIAL_SHORT=QM00003\n";

static const char EXPECT_SATA_SSD[] =
                "ID_ATA=1\n"
                "ID_TYPE=disk\n"
                "ID_BUS=ata\n"
                "ID_MODEL=Samsung_SSD_860_EVO_500GB\n"
                "ID_MODEL_ENC=Samsung\\x20SSD\\x20860\\x20EVO\\x20500GB\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\n"
                "ID_REVISION=RVT01B6Q\n"
                "ID_SERIAL=Samsung_SSD_860_EVO_500GB_S3Z2NB0K123456A\n"
                "ID_SERIAL_SHORT=S3Z2NB0K123456A\n"
                "ID_ATA_WRITE_CACHE=1\n"
                "ID_ATA_WRITE_CACHE_ENABLED=1\n"
                "ID_ATA_FEATURE_SET_HPA=1\n"
                "ID_ATA_FEATURE_SET_HPA_ENABLED=1\n"
                "ID_ATA_FEATURE_SET_PM=1\n"
                "ID_ATA_FEATURE_SET_PM_ENABLED=1\n"
                "ID_ATA_FEATURE_SET_SECURITY=1\n"
                "ID_ATA_FEATURE_SET_SECURITY_ENABLED=0\n"
                "ID_ATA_FEATURE_SET_SECURITY_ERASE_UNIT_MIN=2\n"
                "ID_ATA_FEATURE_SET_SECURITY_ENHANCED_ERASE_UNIT_MIN=2\n"
                "ID_ATA_FEATURE_SET_SECURITY_FROZEN=1\n"
                "ID_ATA_FEATURE_SET_SMART=1\n"
                "ID_ATA_FEATURE_SET_SMART_ENABLED=1\n"
                "ID_ATA_FEATURE_SET_PUIS=1\n"
                "ID_ATA_FEATURE_SET_PUIS_ENABLED=0\n"
                "ID_ATA_DOWNLOAD_MICROCODE=1\n"
                "ID_ATA_SATA=1\n"
                "ID_ATA_SATA_SIGNAL_RATE_GEN2=1\n"
                "ID_ATA_SATA_SIGNAL_RATE_GEN1=1\n"
                "ID_ATA_ROTATION_RATE_RPM=0\n"
                "ID_WWN=0x5002538e40a1b2c3\n"
                "ID_WWN_WITH_EXTENSION=0x5002538e40a1b2c3\n";

static const char EXPECT_SATA_HDD[] =
                "ID_ATA=1\n"
                "ID_TYPE=disk\n"
                "ID_BUS=ata\n"
                "ID_MODEL=WDC_WD10EZEX-08WN4A0\n"
                "ID_MODEL_ENC=WDC\\x20WD10EZEX-08WN4A0\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\n"
                "ID_REVISION=01.01A01\n"
                "ID_SERIAL=WDC_WD10EZEX-08WN4A0_WD-WCC6Y0ABCDEF\n"
                "ID_SERIAL_SHORT=WD-WCC6Y0ABCDEF\n"
                "ID_ATA_WRITE_CACHE=1\n"
                "ID_ATA_WRITE_CACHE_ENABLED=1\n"
                "ID_ATA_FEATURE_SET_HPA=1\n"
                "ID_ATA_FEATURE_SET_HPA_ENABLED=1\n"
                "ID_ATA_FEATURE_SET_PM=1\n"
                "ID_ATA_FEATURE_SET_PM_ENABLED=1\n"
                "ID_ATA_FEATURE_SET_SECURITY=1\n"
                "ID_ATA_FEATURE_SET_SECURITY_ENABLED=1\n"
                "ID_ATA_FEATURE_SET_SECURITY_ERASE_UNIT_MIN=330\n"
                "ID_ATA_FEATURE_SET_SECURITY_LEVEL=maximum\n"
                "ID_ATA_FEATURE_SET_SECURITY_ENHANCED_ERASE_UNIT_MIN=330\n"
                "ID_ATA_FEATURE_SET_SECURITY_EXPIRE=1\n"
                "ID_ATA_FEATURE_SET_SECURITY_LOCKED=1\n"
                "ID_ATA_FEATURE_SET_SMART=1\n"
                "ID_ATA_FEATURE_SET_SMART_ENABLED=1\n"
                "ID_ATA_FEATURE_SET_AAM=1\n"
                "ID_ATA_FEATURE_SET_AAM_ENABLED=1\n"
                "ID_ATA_FEATURE_SET_AAM_VENDOR_RECOMMENDED_VALUE=128\n"
                "ID_ATA_FEATURE_SET_AAM_CURRENT_VALUE=254\n"
                "ID_ATA_FEATURE_SET_PUIS=1\n"
                "ID_ATA_FEATURE_SET_PUIS_ENABLED=1\n"
                "ID_ATA_FEATURE_SET_APM=1\n"
                "ID_ATA_FEATURE_SET_APM_ENABLED=1\n"
                "ID_ATA_FEATURE_SET_APM_CURRENT_VALUE=254\n"
                "ID_ATA_DOWNLOAD_MICROCODE=1\n"
                "ID_ATA_SATA=1\n"
                "ID_ATA_SATA_SIGNAL_RATE_GEN2=1\n"
                "ID_ATA_SATA_SIGNAL_RATE_GEN1=1\n"
                "ID_ATA_ROTATION_RATE_RPM=7200\n"
                "ID_WWN=0x50014ee20b1a2f3c\n"
                "ID_WWN_WITH_EXTENSION=0x50014ee20b1a2f3c\n";

static const char EXPECT_CF_CARD[] =
                "ID_ATA=1\n"
                "ID_TYPE=generic\n"
                "ID_BUS=ata\n"
                "ID_MODEL=SanDisk_SDCFXS-016G\n"
                "ID_MODEL_ENC=SanDisk\\x20SDCFXS-016G\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\n"
                "ID_REVISION=V1.0\n"
                "ID_SERIAL=SanDisk_SDCFXS-016G_CF0123456789\n"
                "ID_SERIAL_SHORT=CF0123456789\n"
                "ID_ATA_FEATURE_SET_PM=1\n"
                "ID_ATA_FEATURE_SET_PM_ENABLED=1\n"
                "ID_ATA_FEATURE_SET_PUIS=1\n"
                "ID_ATA_FEATURE_SET_PUIS_ENABLED=0\n"
                "ID_ATA_FEATURE_SET_APM=1\n"
                "ID_ATA_FEATURE_SET_APM_ENABLED=0\n"
                "ID_ATA_CFA=1\n";

static const char EXPECT_ODD[] =
                "ID_ATA=1\n"
                "ID_TYPE=disk\n"
                "ID_BUS=ata\n"
                "ID_MODEL=Gr\xc3""\xbc""\xc3""\x9f""e__Disk_#+=@_x_y\n"
                "ID_MODEL_ENC=Gr\xc3""\xbc""\xc3""\x9f""e\\x20\\x20\\x5cDisk\\xff#+=@\\x20x\\x01y\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\n"
                "ID_REVISION=1.0\\x\n"
                "ID_SERIAL=Gr\xc3""\xbc""\xc3""\x9f""e__Disk_#+=@_x_y_AB_C_D\n"
                "ID_SERIAL_SHORT=AB_C_D\n"
                "ID_ATA_WRITE_CACHE=1\n"
                "ID_ATA_WRITE_CACHE_ENABLED=0\n"
                "ID_ATA_FEATURE_SET_SMART=1\n"
                "ID_ATA_FEATURE_SET_SMART_ENABLED=1\n";

static const char EXPECT_HDIO_QEMU_SG_SSD[] =
                "ID_ATA=1\n"
                "ID_TYPE=disk\n"
                "ID_BUS=ata\n"
                "ID_MODEL=QEMU_HARDDISK\n"
                "ID_MODEL_ENC=QEMU\\x20HARDDISK\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\n"
                "ID_REVISION=2.5+\n"
                "ID_SERIAL=QEMU_HARDDISK_QM00001\n"
                "ID_SERIAL_SHORT=QM00001\n"
                "ID_ATA_WRITE_CACHE=1\n"
                "ID_ATA_WRITE_CACHE_ENABLED=1\n"
                "ID_ATA_FEATURE_SET_SMART=1\n"
                "ID_ATA_FEATURE_SET_SMART_ENABLED=1\n"
                "ID_ATA_SATA=1\n"
                "ID_ATA_SATA_SIGNAL_RATE_GEN2=1\n"
                "ID_ATA_SATA_SIGNAL_RATE_GEN1=1\n"
                "ID_ATA_ROTATION_RATE_RPM=0\n"
                "ID_WWN=0x5002538e40a1b2c3\n"
                "ID_WWN_WITH_EXTENSION=0x5002538e40a1b2c3\n";

static const char EXPECT_HDIO_CF_SG_ZERO[] =
                "ID_ATA=1\n"
                "ID_TYPE=generic\n"
                "ID_BUS=ata\n"
                "ID_MODEL=SanDisk_SDCFXS-016G\n"
                "ID_MODEL_ENC=SanDisk\\x20SDCFXS-016G\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\n"
                "ID_REVISION=V1.0\n"
                "ID_SERIAL=SanDisk_SDCFXS-016G_CF0123456789\n"
                "ID_SERIAL_SHORT=CF0123456789\n"
                "ID_ATA_FEATURE_SET_PM=1\n"
                "ID_ATA_FEATURE_SET_PM_ENABLED=1\n"
                "ID_ATA_FEATURE_SET_PUIS=1\n"
                "ID_ATA_FEATURE_SET_PUIS_ENABLED=0\n"
                "ID_ATA_FEATURE_SET_APM=1\n"
                "ID_ATA_FEATURE_SET_APM_ENABLED=0\n";

/* Decode `blk` as a successful SG_IO IDENTIFY and compare the output. */
static void check_identify(const uint8_t blk[ATA_IDENTIFY_SIZE], bool export, const char *expect)
{
        static struct helper_out out;
        struct ata_info info;

        out = (struct helper_out)HELPER_OUT_INIT;
        ata_info_from_identify(&info, blk);
        ASSERT_EQ(ata_identify_format(&info, blk, false, -1, export, &out), 0);
        ASSERT_STREQ(out.buf, expect);
}

static void test_qemu_harddisk(void)
{
        uint8_t blk[ATA_IDENTIFY_SIZE];

        BUILD(blk, QEMU_HD, "QM00001", "2.5+", "QEMU HARDDISK");
        check_identify(blk, true, EXPECT_QEMU_HD);
        check_identify(blk, false, "QEMU_HARDDISK_QM00001\n");
}

static void test_qemu_dvd_rom(void)
{
        uint8_t blk[ATA_IDENTIFY_SIZE];

        BUILD(blk, QEMU_DVD, "QM00003", "2.5+", "QEMU DVD-ROM");
        check_identify(blk, true, EXPECT_QEMU_DVD);
}

/* systemd 257's ata_id ends with the INQUIRY's peripheral device type */
static void test_peripheral_type_257(void)
{
        static struct helper_out out;
        uint8_t blk[ATA_IDENTIFY_SIZE];
        struct ata_info info;
        char expect[sizeof(EXPECT_QEMU_DVD) + 64];

        BUILD(blk, QEMU_DVD, "QM00003", "2.5+", "QEMU DVD-ROM");
        ata_info_from_identify(&info, blk);
        out = (struct helper_out)HELPER_OUT_INIT;
        ASSERT_EQ(ata_identify_format(&info, blk, true, 5, true, &out), 0);
        snprintf(expect, sizeof(expect), "%sID_ATA_PERIPHERAL_DEVICE_TYPE=5\n", EXPECT_QEMU_DVD);
        ASSERT_STREQ(out.buf, expect);
        /* the single-line form has no properties to add it to */
        out = (struct helper_out)HELPER_OUT_INIT;
        ASSERT_EQ(ata_identify_format(&info, blk, true, 0, false, &out), 0);
        ASSERT_STREQ(out.buf, "QEMU_DVD-ROM_QM00003\n");
}

static void test_sata_ssd_wwn(void)
{
        uint8_t blk[ATA_IDENTIFY_SIZE];

        BUILD(blk, SATA_SSD, "S3Z2NB0K123456A", "RVT01B6Q", "Samsung SSD 860 EVO 500GB");
        check_identify(blk, true, EXPECT_SATA_SSD);
        check_identify(blk, false, "Samsung_SSD_860_EVO_500GB_S3Z2NB0K123456A\n");
}

static void test_sata_hdd_features(void)
{
        uint8_t blk[ATA_IDENTIFY_SIZE];

        BUILD(blk, SATA_HDD, "     WD-WCC6Y0ABCDEF", "01.01A01", "WDC WD10EZEX-08WN4A0");
        check_identify(blk, true, EXPECT_SATA_HDD);
}

static void test_cf_card(void)
{
        uint8_t blk[ATA_IDENTIFY_SIZE];

        BUILD(blk, CF_CARD, "CF0123456789", "V1.0", "SanDisk SDCFXS-016G");
        check_identify(blk, true, EXPECT_CF_CARD);
}

static void test_odd_strings(void)
{
        uint8_t blk[ATA_IDENTIFY_SIZE];

        BUILD(blk, ODD, "  AB\tC D  ", " 1.0\\x ", "Gr\xc3\xbc\xc3\x9f" "e  \\Disk\xff#+=@ x\x01y");
        check_identify(blk, true, EXPECT_ODD);
}

/* SG_IO left data but failed (no ATA return descriptor): the strings and
 * feature words come from HDIO_GET_IDENTITY, words 0/76/83/108-111/217 from
 * the SG_IO buffer, as in systemd. */
static void test_hdio_fallback_mixes_sources(void)
{
        static struct helper_out out;
        uint8_t sg[ATA_IDENTIFY_SIZE], qemu[ATA_IDENTIFY_SIZE], hdio[ATA_IDENTIFY_SIZE];
        struct ata_info info;

        BUILD(sg, SATA_SSD, "S3Z2NB0K123456A", "RVT01B6Q", "Samsung SSD 860 EVO 500GB");
        BUILD(qemu, QEMU_HD, "QM00001", "2.5+", "QEMU HARDDISK");
        to_hdio(hdio, qemu);
        ata_info_from_hdio(&info, hdio);
        out = (struct helper_out)HELPER_OUT_INIT;
        ASSERT_EQ(ata_identify_format(&info, sg, false, -1, true, &out), 0);
        ASSERT_STREQ(out.buf, EXPECT_HDIO_QEMU_SG_SSD);

        /* all-zero SG buffer: no SATA, WWN, rotation or CFA lines */
        memset(sg, 0, sizeof(sg));
        BUILD(qemu, CF_CARD, "CF0123456789", "V1.0", "SanDisk SDCFXS-016G");
        to_hdio(hdio, qemu);
        ata_info_from_hdio(&info, hdio);
        out = (struct helper_out)HELPER_OUT_INIT;
        ASSERT_EQ(ata_identify_format(&info, sg, false, -1, true, &out), 0);
        ASSERT_STREQ(out.buf, EXPECT_HDIO_CF_SG_ZERO);
}

static void test_rotation_and_wwn_bounds(void)
{
        static struct helper_out out;
        uint8_t blk[ATA_IDENTIFY_SIZE];
        struct ata_info info;

        BUILD(blk, ODD, "", "", "M");
        /* 0x0400 is reserved (no line), 0xffff reserved, NAA 6 is not an ATA WWN */
        blk[217 * 2] = 0x00;
        blk[217 * 2 + 1] = 0x04;
        blk[108 * 2 + 1] = 0x60;
        blk[76 * 2] = 0xff;
        blk[76 * 2 + 1] = 0xff;
        ata_info_from_identify(&info, blk);
        out = (struct helper_out)HELPER_OUT_INIT;
        ASSERT_EQ(ata_identify_format(&info, blk, false, -1, true, &out), 0);
        ASSERT_TRUE(!strstr(out.buf, "ROTATION"));
        ASSERT_TRUE(!strstr(out.buf, "ID_WWN"));
        ASSERT_TRUE(!strstr(out.buf, "ID_ATA_SATA"));
        ASSERT_TRUE(strstr(out.buf, "ID_SERIAL=M\n") != NULL);
        ASSERT_TRUE(!strstr(out.buf, "ID_SERIAL_SHORT"));
        out = (struct helper_out)HELPER_OUT_INIT;
        ASSERT_EQ(ata_identify_format(&info, blk, false, -1, false, &out), 0);
        ASSERT_STREQ(out.buf, "M\n");
}

static void test_replace_whitespace(void)
{
        char to[16];

        ASSERT_EQ(helper_replace_whitespace("  a  b\tc  ", to, 10), 5);
        ASSERT_STREQ(to, "a_b_c");
        /* only len bytes are read, and an underscore needs room for what follows */
        ASSERT_EQ(helper_replace_whitespace("ab cdef", to, 3), 2);
        ASSERT_STREQ(to, "ab");
        ASSERT_EQ(helper_replace_whitespace("    xy", to, 4), 0);
        ASSERT_STREQ(to, "");
        /* \v and \f count as inner whitespace but are not skipped at the start */
        ASSERT_EQ(helper_replace_whitespace("\va\fb", to, 8), 4);
        ASSERT_STREQ(to, "_a_b");
        strcpy(to, "x  y");
        helper_replace_whitespace(to, to, 4);
        ASSERT_STREQ(to, "x_y");
}

static void test_replace_chars_and_encode(void)
{
        char s[32], enc[64];

        strcpy(s, "a/b\\xc\x01\xc3\xa9 !");
        ASSERT_EQ(helper_replace_chars(s, NULL), 4);
        ASSERT_STREQ(s, "a_b\\xc_\xc3\xa9__");
        strcpy(s, "a\tb");
        ASSERT_EQ(helper_replace_chars(s, " "), 1);
        ASSERT_STREQ(s, "a b");

        ASSERT_EQ(helper_encode_devnode_name("a b\\\xc3\xa9\xed\xa0\x80", enc, sizeof(enc)), 0);
        ASSERT_STREQ(enc, "a\\x20b\\x5c\xc3\xa9\\xed\\xa0\\x80");
        ASSERT_EQ(helper_encode_devnode_name("a b", enc, 5), -ENOBUFS);
        ASSERT_STREQ(enc, "a");

        ASSERT_EQ(helper_utf8_char_len("\xc3\xa9"), 2);
        ASSERT_EQ(helper_utf8_char_len("\xc0\x80"), -EINVAL);         /* overlong */
        ASSERT_EQ(helper_utf8_char_len("\xef\xbf\xbe"), -EINVAL);     /* U+FFFE */
        ASSERT_EQ(helper_utf8_char_len("\xf4\x90\x80\x80"), -EINVAL); /* > U+10FFFF */
        ASSERT_EQ(helper_utf8_char_len("\xe2\x82"), -EINVAL);         /* cut by the NUL */
        ASSERT_EQ(helper_utf8_char_len("A"), 1);
}

static void test_out_truncation(void)
{
        static struct helper_out out;
        char big[HELPER_OUT_MAX / 2 + 1];

        out = (struct helper_out)HELPER_OUT_INIT;
        memset(big, 'x', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        ASSERT_EQ(helper_out_printf(&out, "%s", big), 0);
        ASSERT_EQ(helper_out_printf(&out, "%s", big), -ENOBUFS);
        ASSERT_TRUE(out.truncated);
        ASSERT_EQ(out.len, sizeof(big) - 1);
        ASSERT_EQ(helper_out_printf(&out, "y"), -ENOBUFS);
}

int main(void)
{
        TEST_RUN(test_qemu_harddisk);
        TEST_RUN(test_qemu_dvd_rom);
        TEST_RUN(test_peripheral_type_257);
        TEST_RUN(test_sata_ssd_wwn);
        TEST_RUN(test_sata_hdd_features);
        TEST_RUN(test_cf_card);
        TEST_RUN(test_odd_strings);
        TEST_RUN(test_hdio_fallback_mixes_sources);
        TEST_RUN(test_rotation_and_wwn_bounds);
        TEST_RUN(test_replace_whitespace);
        TEST_RUN(test_replace_chars_and_encode);
        TEST_RUN(test_out_truncation);
        return 0;
}
