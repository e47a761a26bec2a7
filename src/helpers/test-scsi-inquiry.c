/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: single-threaded test */
/* scsi_id's decoding over recorded INQUIRY and VPD replies (the devices of
 * tests/helpers/ata_scsi_devices.py, as hex), through a fake transport. The
 * expected lines are what systemd 252's scsi_id --export --whitelisted prints
 * for the same replies (its run under tests/helpers/sg-shim.c); the
 * integration test test_helpers_ata_scsi.py compares both programs over
 * every device. Also: sense categories, the configuration file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers/helper-util.h"
#include "helpers/scsi-config.h"
#include "helpers/scsi-inquiry.h"
#include "shared/tests.h"

/* page -1: the standard INQUIRY; -2 ends the table */
struct reply {
        int page;
        const char *hex;
};

struct fake {
        const struct reply *replies;
        unsigned calls;
};

static size_t unhex(const char *s, uint8_t *out, size_t max)
{
        size_t n = 0;

        for (; s[0] && s[1] && n < max; s += 2) {
                unsigned v;

                ASSERT_EQ(sscanf(s, "%2x", &v), 1);
                out[n++] = (uint8_t)v;
        }
        return n;
}

/* A page the device lacks is an ILLEGAL REQUEST: "completed", buf[1] = 0. */
static int fake_inquiry(void *userdata, bool evpd, uint8_t page, uint8_t *buf, size_t len)
{
        struct fake *f = userdata;
        int want = evpd ? page : -1;

        f->calls++;
        ASSERT_TRUE(len == SCSI_INQ_BUFF_LEN);
        for (const struct reply *r = f->replies; r->page != -2; r++)
                if (r->page == want) {
                        unhex(r->hex, buf, len);
                        return (int)len;
                }
        buf[1] = 0;
        return (int)len;
}

/* qemu-scsi-hd */
static const struct reply QEMU_HD[] = {
        { -1, "000005021f00000251454d552020202051454d5520484152444449534b202020"
                  "322e352b" },
        { 0x00, "000000050083b0b1b2" },
        { 0x83, "008300150200001164726976652d73637369302d302d302d30" },
        { -2, NULL },
};
/* qemu-scsi-hd-wwn */
static const struct reply QEMU_HD_WWN[] = {
        { -1, "000005021f00000251454d552020202051454d5520484152444449534b202020"
                  "322e352b" },
        { 0x00, "00000006008083b0b1b2" },
        { 0x80, "0080000e514d2d53455249414c2d30303432" },
        { 0x83, "0083001e0200000e514d2d53455249414c2d30303432010300085000c50015ea"
                  "71ac" },
        { -2, NULL },
};
/* libata-ssd-wwn */
static const struct reply LIBATA_SSD[] = {
        { -1, "000005021f000002415441202020202053616d73756e67205353442038363020"
                  "31423651" },
        { 0x00, "0000000700808389b0b1b2" },
        { 0x80, "0080001453335a324e42304b313233343536412020202020" },
        { 0x83, "0083006c0200001453335a324e42304b31323334353641202020202002010044"
                  "415441202020202053616d73756e6720535344203836302045564f2035303047"
                  "4220202020202020202020202020202053335a324e42304b3132333435364120"
                  "20202020010300085002538e40a1b2c3" },
        { -2, NULL },
};
/* lio-lun-naa6-tpg */
static const struct reply LIO[] = {
        { -1, "000005021f0000024c494f2d4f524720626c6f636b3120202020202020202020"
                  "342e3020" },
        { 0x00, "0000000700808386b0b1b2" },
        { 0x80, "0080002466336237633561312d326434652d346636302d386139622d30633164"
                  "3265336634613562" },
        { 0x83, "0083008f010300106001405f3b7c5a12d4e4f608a9b0c1d2020100334c494f2d"
                  "4f524720626c6f636b313a66336237633561312d326434652d346636302d3861"
                  "39622d3063316432653366346135620194000400000001019500040000000103"
                  "98003069716e2e323030332d30312e6f72672e6c696e75782d69736373692e68"
                  "6f73743a736e2e313233342c742c3078310000" },
        { -2, NULL },
};
/* nvme-sntl-eui64 */
static const struct reply NVME[] = {
        { -1, "000005021f0000024e564d652020202053616d73756e67205353442039373020"
                  "32423251" },
        { 0x00, "00000003008083" },
        { 0x80, "00800014303032355f333835325f383142305f313233342e" },
        { 0x83, "0083000c010200080025385281b01234" },
        { -2, NULL },
};
/* usb-stick-no-vpd */
static const struct reply USB_STICK[] = {
        { -1, "008005021f00000253616e4469736b204372757a657220426c61646520202020"
                  "312e3030" },
        { -2, NULL },
};
/* emc-symmetrix-prespc3 */
static const struct reply EMC[] = {
        { -1, "000005021f000002454d43202020202053594d4d455452495820202020202020"
                  "35373731" },
        { 0x00, "00000003008083" },
        { 0x80, "0080000a30303031323334353637" },
        { 0x83, "008300106006048000028750123453594d323430" },
        { -2, NULL },
};
/* nul-vendor */
static const struct reply NUL_VENDOR[] = {
        { -1, "000005021f00000241420000000000004d6f64656c2020202020202020202020"
                  "312e3030" },
        { 0x00, "000000020083" },
        { 0x83, "008300080200000449442d31" },
        { -2, NULL },
};
/* odd-strings */
static const struct reply ODD[] = {
        { -1, "000005021f0000025665e920642020204d5c78206f6465096cc3202020202020"
                  "72203120" },
        { 0x00, "00000003008083" },
        { 0x80, "0080001420205345520949414c0a49445f4556494c3d3120" },
        { 0x83, "0083000c020000082061202062096320" },
        { -2, NULL },
};
/* page0-is-std-inquiry */
static const struct reply PAGE0_STD[] = {
        { -1, "000005021f00000247454e4552494320555342322e3020436172642052656164"
                  "312e3030" },
        { 0x00, "000005021f00000247454e4552494320555342322e3020436172642052656164"
                  "312e3030" },
        { 0x83, "0083000c010300085000000000000001" },
        { -2, NULL },
};
/* tape-tpg */
static const struct reply TAPE[] = {
        { -1, "010005021f0000024850202020202020556c747269756d20362d534353492020"
                  "33354744" },
        { 0x00, "00000003008083" },
        { 0x80, "0080000a48553132333441424344" },
        { 0x83, "008300140103000850014380123456ab011500040000012c" },
        { -2, NULL },
};

/* qemu-scsi-hd */
static const char EXPECT_QEMU_HD[] =
        "ID_SCSI=1\n"
        "ID_VENDOR=QEMU\n"
        "ID_VENDOR_ENC=QEMU\\x20\\x20\\x20\\x20\n"
        "ID_MODEL=QEMU_HARDDISK\n"
        "ID_MODEL_ENC=QEMU\\x20HARDDISK\\x20\\x20\\x20\n"
        "ID_REVISION=2.5+\n"
        "ID_TYPE=disk\n"
        "ID_SERIAL=0QEMU_QEMU_HARDDISK_drive-scsi0-0-0-0\n"
        "ID_SERIAL_SHORT=drive-scsi0-0-0-0\n";

/* qemu-scsi-hd-wwn */
static const char EXPECT_QEMU_HD_WWN[] =
        "ID_SCSI=1\n"
        "ID_VENDOR=QEMU\n"
        "ID_VENDOR_ENC=QEMU\\x20\\x20\\x20\\x20\n"
        "ID_MODEL=QEMU_HARDDISK\n"
        "ID_MODEL_ENC=QEMU\\x20HARDDISK\\x20\\x20\\x20\n"
        "ID_REVISION=2.5+\n"
        "ID_TYPE=disk\n"
        "ID_SERIAL=35000c50015ea71ac\n"
        "ID_SERIAL_SHORT=5000c50015ea71ac\n"
        "ID_WWN=0x5000c50015ea71ac\n"
        "ID_WWN_WITH_EXTENSION=0x5000c50015ea71ac\n"
        "ID_SCSI_SERIAL=QM-SERIAL-0042\n";

/* libata-ssd-wwn */
static const char EXPECT_LIBATA_SSD[] =
        "ID_SCSI=1\n"
        "ID_VENDOR=ATA\n"
        "ID_VENDOR_ENC=ATA\\x20\\x20\\x20\\x20\\x20\n"
        "ID_MODEL=Samsung_SSD_860\n"
        "ID_MODEL_ENC=Samsung\\x20SSD\\x20860\\x20\n"
        "ID_REVISION=1B6Q\n"
        "ID_TYPE=disk\n"
        "ID_SERIAL=35002538e40a1b2c3\n"
        "ID_SERIAL_SHORT=5002538e40a1b2c3\n"
        "ID_WWN=0x5002538e40a1b2c3\n"
        "ID_WWN_WITH_EXTENSION=0x5002538e40a1b2c3\n"
        "ID_SCSI_SERIAL=S3Z2NB0K123456A     \n";

/* lio-lun-naa6-tpg */
static const char EXPECT_LIO[] =
        "ID_SCSI=1\n"
        "ID_VENDOR=LIO-ORG\n"
        "ID_VENDOR_ENC=LIO-ORG\\x20\n"
        "ID_MODEL=block1\n"
        "ID_MODEL_ENC=block1\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\n"
        "ID_REVISION=4.0\n"
        "ID_TYPE=disk\n"
        "ID_SERIAL=36001405f3b7c5a12d4e4f608a9b0c1d2\n"
        "ID_SERIAL_SHORT=6001405f3b7c5a12d4e4f608a9b0c1d2\n"
        "ID_WWN=0x6001405f3b7c5a12\n"
        "ID_WWN_VENDOR_EXTENSION=0xd4e4f608a9b0c1d2\n"
        "ID_WWN_WITH_EXTENSION=0x6001405f3b7c5a12d4e4f608a9b0c1d2\n"
        "ID_TARGET_PORT=1\n"
        "ID_SCSI_SERIAL=f3b7c5a1-2d4e-4f60-8a9b-0c1d2e3f4a5b\n";

/* nvme-sntl-eui64 */
static const char EXPECT_NVME[] =
        "ID_SCSI=1\n"
        "ID_VENDOR=NVMe\n"
        "ID_VENDOR_ENC=NVMe\\x20\\x20\\x20\\x20\n"
        "ID_MODEL=Samsung_SSD_970\n"
        "ID_MODEL_ENC=Samsung\\x20SSD\\x20970\\x20\n"
        "ID_REVISION=2B2Q\n"
        "ID_TYPE=disk\n"
        "ID_SERIAL=20025385281b01234\n"
        "ID_SERIAL_SHORT=0025385281b01234\n"
        "ID_SCSI_SERIAL=0025_3852_81B0_1234.\n";

/* usb-stick-no-vpd */
static const char EXPECT_USB_STICK[] =
        "ID_SCSI=1\n"
        "ID_VENDOR=SanDisk\n"
        "ID_VENDOR_ENC=SanDisk\\x20\n"
        "ID_MODEL=Cruzer_Blade\n"
        "ID_MODEL_ENC=Cruzer\\x20Blade\\x20\\x20\\x20\\x20\n"
        "ID_REVISION=1.00\n"
        "ID_TYPE=disk\n";

/* emc-symmetrix-prespc3 */
static const char EXPECT_EMC[] =
        "ID_SCSI=1\n"
        "ID_VENDOR=EMC\n"
        "ID_VENDOR_ENC=EMC\\x20\\x20\\x20\\x20\\x20\n"
        "ID_MODEL=SYMMETRIX\n"
        "ID_MODEL_ENC=SYMMETRIX\\x20\\x20\\x20\\x20\\x20\\x20\\x20\n"
        "ID_REVISION=5771\n"
        "ID_TYPE=disk\n"
        "ID_SERIAL=36006048000028750123453594d323430\n"
        "ID_SERIAL_SHORT=36006048000028750123453594d323430\n"
        "ID_SCSI_SERIAL=0001234567\n";

/* nul-vendor */
static const char EXPECT_NUL_VENDOR[] =
        "ID_SCSI=1\n"
        "ID_VENDOR=AB\n"
        "ID_VENDOR_ENC=AB\n"
        "ID_MODEL=Model\n"
        "ID_MODEL_ENC=Model\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\\x20\n"
        "ID_REVISION=1.00\n"
        "ID_TYPE=disk\n"
        "ID_SERIAL=0\n"
        "ID_SERIAL_SHORT=\n";

/* odd-strings */
static const char EXPECT_ODD[] =
        "ID_SCSI=1\n"
        "ID_VENDOR=Ve__d\n"
        "ID_VENDOR_ENC=Ve\\xe9\\x20d\\x20\\x20\\x20\n"
        "ID_MODEL=M\\x_ode_l_\n"
        "ID_MODEL_ENC=M\\x5cx\\x20ode\\x09l\\xc3\\x20\\x20\\x20\\x20\\x20\\x20\n"
        "ID_REVISION=r_1\n"
        "ID_TYPE=disk\n"
        "ID_SERIAL=0Ve__d_M\\x_ode_l__a_b_c\n"
        "ID_SERIAL_SHORT=a_b_c\n";

/* page0-is-std-inquiry */
static const char EXPECT_PAGE0_STD[] =
        "ID_SCSI=1\n"
        "ID_VENDOR=GENERIC\n"
        "ID_VENDOR_ENC=GENERIC\\x20\n"
        "ID_MODEL=USB2.0_Card_Read\n"
        "ID_MODEL_ENC=USB2.0\\x20Card\\x20Read\n"
        "ID_REVISION=1.00\n"
        "ID_TYPE=disk\n";

/* tape-tpg */
static const char EXPECT_TAPE[] =
        "ID_SCSI=1\n"
        "ID_VENDOR=HP\n"
        "ID_VENDOR_ENC=HP\\x20\\x20\\x20\\x20\\x20\\x20\n"
        "ID_MODEL=Ultrium_6-SCSI\n"
        "ID_MODEL_ENC=Ultrium\\x206-SCSI\\x20\\x20\n"
        "ID_REVISION=35GD\n"
        "ID_TYPE=tape\n"
        "ID_SERIAL=350014380123456ab\n"
        "ID_SERIAL_SHORT=50014380123456ab\n"
        "ID_WWN=0x50014380123456ab\n"
        "ID_WWN_WITH_EXTENSION=0x50014380123456ab\n"
        "ID_TARGET_PORT=12c\n"
        "ID_SCSI_SERIAL=HU1234ABCD\n";

static void check_export(const struct reply *replies, int page, const char *expect)
{
        static struct helper_out out;
        static struct scsi_ident id;
        struct fake f = { .replies = replies };
        struct scsi_io io = { .inquiry = fake_inquiry, .userdata = &f, .name = "8:0" };
        struct scsi_values v;

        memset(&id, 0, sizeof(id));
        ASSERT_EQ(scsi_std_inquiry(&io, &id), 0);
        scsi_values_from_ident(&v, &id);
        (void)scsi_get_serial(&io, &id, page);
        out = (struct helper_out)HELPER_OUT_INIT;
        ASSERT_EQ(scsi_id_format_export(&v, &id, &out), 0);
        ASSERT_STREQ(out.buf, expect);
}

static void test_qemu_scsi_hd(void)
{
        /* the drive name, prefixed with '0' + vendor + model */
        check_export(QEMU_HD, SCSI_PAGE_UNSPECIFIED, EXPECT_QEMU_HD);
        check_export(QEMU_HD_WWN, SCSI_PAGE_UNSPECIFIED, EXPECT_QEMU_HD_WWN);
}

static void test_libata_ssd(void)
{
        check_export(LIBATA_SSD, SCSI_PAGE_UNSPECIFIED, EXPECT_LIBATA_SSD);
}

static void test_lio_naa6_target_port_group(void)
{
        check_export(LIO, SCSI_PAGE_UNSPECIFIED, EXPECT_LIO);
}

static void test_nvme_eui64(void)
{
        check_export(NVME, SCSI_PAGE_UNSPECIFIED, EXPECT_NVME);
}

static void test_usb_stick_without_vpd(void)
{
        check_export(USB_STICK, SCSI_PAGE_UNSPECIFIED, EXPECT_USB_STICK);
}

static void test_emc_pre_spc3(void)
{
        check_export(EMC, SCSI_PAGE_UNSPECIFIED, EXPECT_EMC);
}

static void test_quirks(void)
{
        /* vendor with a NUL: the '0' written before the check stays */
        check_export(NUL_VENDOR, SCSI_PAGE_UNSPECIFIED, EXPECT_NUL_VENDOR);
        /* control characters: no ID_SCSI_SERIAL */
        check_export(ODD, SCSI_PAGE_UNSPECIFIED, EXPECT_ODD);
        /* page 0 that is the standard INQUIRY again: no serial */
        check_export(PAGE0_STD, SCSI_PAGE_UNSPECIFIED, EXPECT_PAGE0_STD);
        check_export(TAPE, SCSI_PAGE_UNSPECIFIED, EXPECT_TAPE);
}

static void test_page_choice(void)
{
        static struct scsi_ident id;
        struct fake f = { .replies = QEMU_HD_WWN };
        struct scsi_io io = { .inquiry = fake_inquiry, .userdata = &f, .name = "8:0" };

        memset(&id, 0, sizeof(id));
        ASSERT_EQ(scsi_std_inquiry(&io, &id), 0);
        ASSERT_EQ(scsi_get_serial(&io, &id, SCSI_PAGE_80), 0);
        ASSERT_STREQ(id.serial, "SQEMU    QEMU HARDDISK   QM-SERIAL-0042");
        ASSERT_STREQ(id.serial_short, "QM-SERIAL-0042");
        ASSERT_STREQ(id.wwn, "");

        memset(&id, 0, sizeof(id));
        ASSERT_EQ(scsi_std_inquiry(&io, &id), 0);
        /* SPC-3 reply under pre-spc3-83: falls back to the descriptor search */
        ASSERT_EQ(scsi_get_serial(&io, &id, SCSI_PAGE_83_PRE_SPC3), 0);
        ASSERT_STREQ(id.serial, "35000c50015ea71ac");
        ASSERT_STREQ(id.wwn, "5000c50015ea71ac");

        f.replies = EMC;
        memset(&id, 0, sizeof(id));
        ASSERT_EQ(scsi_std_inquiry(&io, &id), 0);
        ASSERT_EQ(scsi_get_serial(&io, &id, SCSI_PAGE_83_PRE_SPC3), 0);
        ASSERT_STREQ(id.serial, "36006048000028750123453594d323430");
        ASSERT_STREQ(id.serial_short, "");

        f.replies = USB_STICK;
        memset(&id, 0, sizeof(id));
        ASSERT_EQ(scsi_std_inquiry(&io, &id), 0);
        ASSERT_EQ(scsi_get_serial(&io, &id, SCSI_PAGE_83), 1);
        ASSERT_EQ(scsi_get_serial(&io, &id, SCSI_PAGE_80), 1);
        ASSERT_STREQ(id.serial, "");
}

/* A page 0x83 whose declared length runs far past the buffer, with a
 * descriptor at the very end: the walk stays inside, nothing is found. */
static void test_hostile_page83(void)
{
        static struct scsi_ident id;
        static char std[80], p0[32], p83[SCSI_INQ_BUFF_LEN * 2 + 1];
        struct reply r[] = { { -1, std }, { 0x00, p0 }, { 0x83, p83 }, { -2, NULL } };
        struct fake f = { .replies = r };
        struct scsi_io io = { .inquiry = fake_inquiry, .userdata = &f, .name = "8:0" };

        snprintf(std, sizeof(std), "%s", QEMU_HD[0].hex);
        snprintf(p0, sizeof(p0), "0000000183");
        memset(p83, '0', sizeof(p83) - 1);
        memcpy(p83, "0083ffff", 8);               /* 65535 bytes declared */
        memcpy(p83 + 2 * 250, "0203ff", 6);        /* ASCII NAA, 255 bytes, from byte 250 */
        memset(&id, 0, sizeof(id));
        ASSERT_EQ(scsi_std_inquiry(&io, &id), 0);
        ASSERT_EQ(scsi_get_serial(&io, &id, SCSI_PAGE_UNSPECIFIED), 1);
        ASSERT_STREQ(id.wwn, "");
        /* identifier bytes past the reply read as zeros, never past the buffer */
        memcpy(p83 + 2 * 200, "02030010", 8);
        memset(&id, 0, sizeof(id));
        ASSERT_EQ(scsi_std_inquiry(&io, &id), 0);
        (void)scsi_get_serial(&io, &id, SCSI_PAGE_UNSPECIFIED);
}

static void test_sense_categories(void)
{
        uint8_t sense[SG_SENSE_MAX] = { 0 };
        struct sg_status st = { 0 };

        ASSERT_EQ(scsi_sg_category(&st, sense), SCSI_SG_CLEAN);
        st.device_status = 0x01; /* masked away */
        ASSERT_EQ(scsi_sg_category(&st, sense), SCSI_SG_CLEAN);

        st = (struct sg_status){ .device_status = 0x02, .driver_status = 0x08, .sense_len = 18 };
        sense[0] = 0x70;
        sense[2] = 0x05;
        ASSERT_EQ(scsi_sg_category(&st, sense), SCSI_SG_NOTSUPPORTED);
        sense[2] = 0x06;
        sense[12] = 0x29;
        ASSERT_EQ(scsi_sg_category(&st, sense), SCSI_SG_RESET);
        sense[12] = 0x28;
        ASSERT_EQ(scsi_sg_category(&st, sense), SCSI_SG_MEDIA_CHANGED);
        st.sense_len = 12; /* ASC not in the sense data */
        ASSERT_EQ(scsi_sg_category(&st, sense), SCSI_SG_SENSE);
        memset(sense, 0, sizeof(sense));
        sense[0] = 0x72; /* descriptor format */
        sense[1] = 0x01;
        st.sense_len = 8;
        ASSERT_EQ(scsi_sg_category(&st, sense), SCSI_SG_RECOVERED);
        st.sense_len = 2;
        ASSERT_EQ(scsi_sg_category(&st, sense), SCSI_SG_SENSE);

        st = (struct sg_status){ .transport_status = 0x0e };
        ASSERT_EQ(scsi_sg_category(&st, sense), SCSI_SG_RETRY);
        st.transport_status = 0x03;
        ASSERT_EQ(scsi_sg_category(&st, sense), SCSI_SG_TIMEOUT);
        st = (struct sg_status){ .driver_status = 0x06 };
        ASSERT_EQ(scsi_sg_category(&st, sense), SCSI_SG_TIMEOUT);
        st = (struct sg_status){ .device_status = 0x18 };
        ASSERT_EQ(scsi_sg_category(&st, sense), SCSI_SG_OTHER);
}

static char *write_config(const char *text)
{
        static char path[] = "/tmp/test-scsi-config-XXXXXX";
        int fd;

        strcpy(path, "/tmp/test-scsi-config-XXXXXX");
        fd = mkstemp(path);
        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(write(fd, text, strlen(text)), (ssize_t)strlen(text));
        close(fd);
        return path;
}

static void check_lookup(const char *text, const char *vendor, const char *model, int expect_r,
                         const char *expect_args)
{
        char *path = write_config(text);
        char **argv = NULL, joined[256] = "";
        int argc = 0, r;

        r = scsi_config_lookup(path, vendor, model, &argv, &argc);
        unlink(path);
        ASSERT_EQ(r, expect_r);
        if (r != 0)
                return;
        ASSERT_STREQ(argv[0], "");
        for (int i = 1; i < argc; i++) {
                strcat(joined, argv[i]);
                strcat(joined, "|");
        }
        ASSERT_TRUE(argv[argc] == NULL);
        ASSERT_STREQ(joined, expect_args);
        scsi_config_free(argv);
}

static void test_config_file(void)
{
        char **argv = NULL;
        int argc;

        ASSERT_EQ(scsi_config_lookup("/nonexistent/scsi_id.config", NULL, NULL, &argv, &argc), 1);
        check_lookup("# c\n\n  OPTIONS=-g -p 0x80\n", NULL, NULL, 0, "-g|-p|0x80|");
        check_lookup("VENDOR=\"ATA\",OPTIONS=\"-b\"\nOPTIONS=-g\n", NULL, NULL, 0, "-g|");
        check_lookup("vendor=\"ATA\",model=\"Sam\",options=\"-g\t-p 0x83\"\n", "ATA", "Samsung_SSD",
                     0, "-g|-p|0x83|");
        check_lookup("VENDOR=ATA,MODEL=WDC,OPTIONS=-g\n", "ATA", "Samsung", 1, NULL);
        check_lookup("VENDOR=ATA,OPTIONS=-g\n", NULL, NULL, 1, NULL);
        /* '=' splits: "--page" loses its value */
        check_lookup("OPTIONS=--page=0x80\n", NULL, NULL, 0, "--page|");
        check_lookup("VENDOR=Q\\=E,OPTIONS=a\\\\\\ b\n", "Q=EMU", "", 0, "a b|");
        /* errors before the matching line count, after it not */
        check_lookup("VENDOR=\"X\", MODEL=\"y\",OPTIONS=\"-b\"\nOPTIONS=-g\n", NULL, NULL, -EINVAL, NULL);
        check_lookup("OPTIONS=-g\nbogus\n", NULL, NULL, 0, "-g|");
        check_lookup("MODEL=x,OPTIONS=-g\n", NULL, NULL, -EINVAL, NULL);
        check_lookup("VENDOR=x\n", NULL, NULL, -EINVAL, NULL);
        check_lookup("OPTIONS=-g\\\n", NULL, NULL, -EINVAL, NULL);
        {
                char text[400];

                memset(text, 'x', sizeof(text));
                text[0] = '#';
                text[255] = '\n'; /* 255 characters: fine */
                strcpy(text + 256, "OPTIONS=-g\n");
                check_lookup(text, NULL, NULL, 0, "-g|");
                text[255] = 'x';
                text[256] = '\n';
                strcpy(text + 257, "OPTIONS=-g\n");
                check_lookup(text, NULL, NULL, -ENOBUFS, NULL);
        }
}

static void test_printable(void)
{
        ASSERT_TRUE(helper_string_is_printable("AB\xc3\xa9 x"));
        ASSERT_TRUE(!helper_string_is_printable(""));
        ASSERT_TRUE(!helper_string_is_printable("A\nB"));
        ASSERT_TRUE(!helper_string_is_printable("A\x7f"));
        ASSERT_TRUE(!helper_string_is_printable("A\xff"));
}

int main(void)
{
        TEST_RUN(test_qemu_scsi_hd);
        TEST_RUN(test_libata_ssd);
        TEST_RUN(test_lio_naa6_target_port_group);
        TEST_RUN(test_nvme_eui64);
        TEST_RUN(test_usb_stick_without_vpd);
        TEST_RUN(test_emc_pre_spc3);
        TEST_RUN(test_quirks);
        TEST_RUN(test_page_choice);
        TEST_RUN(test_hostile_page83);
        TEST_RUN(test_sense_categories);
        TEST_RUN(test_config_file);
        TEST_RUN(test_printable);
        return 0;
}
