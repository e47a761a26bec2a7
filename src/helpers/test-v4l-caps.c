/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: main only */
/* v4l-caps.c: VIDIOC_QUERYCAP answers to ID_V4L_* lines. The program
 * against systemd's v4l_id: tests/integration/test_helpers_v4l_mtd.py. */
#include "helpers/v4l-caps.h"
#include "shared/macro.h"
#include "shared/tests.h"

static char *print(const struct v4l2_capability *cap)
{
        char *out = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&out, &len);

        ASSERT_TRUE(f);
        v4l_print_capability(cap, f);
        ASSERT_EQ(fclose(f), 0);
        return out;
}

static void check(const char *card, unsigned caps, unsigned device_caps, const char *expected)
{
        struct v4l2_capability cap;
        char *out;

        memset(&cap, 0, sizeof(cap));
        memcpy(cap.card, card, MIN(strlen(card), sizeof(cap.card)));
        strcpy((char *)cap.bus_info, "usb-1");
        cap.capabilities = caps;
        cap.device_caps = device_caps;
        out = print(&cap);
        ASSERT_STREQ(out, expected);
        free(out);
}

static void test_capabilities(void)
{
        check("Cam", V4L2_CAP_DEVICE_CAPS | V4L2_CAP_VIDEO_CAPTURE | V4L2_CAP_META_CAPTURE,
              V4L2_CAP_VIDEO_CAPTURE,
              "ID_V4L_VERSION=2\nID_V4L_PRODUCT=Cam\nID_V4L_CAPABILITIES=:capture:\n");
        check("Cam", V4L2_CAP_DEVICE_CAPS | V4L2_CAP_VIDEO_CAPTURE, V4L2_CAP_META_CAPTURE,
              "ID_V4L_VERSION=2\nID_V4L_PRODUCT=Cam\nID_V4L_CAPABILITIES=:\n");
        check("TV", V4L2_CAP_VIDEO_CAPTURE_MPLANE | V4L2_CAP_VIDEO_OUTPUT_MPLANE |
                    V4L2_CAP_VIDEO_OVERLAY | V4L2_CAP_AUDIO | V4L2_CAP_TUNER | V4L2_CAP_RADIO,
              V4L2_CAP_RADIO,
              "ID_V4L_VERSION=2\nID_V4L_PRODUCT=TV\nID_V4L_CAPABILITIES="
              ":capture:video_output:video_overlay:audio:tuner:radio:\n");
}

static void test_card_names(void)
{
        check("", V4L2_CAP_VIDEO_OUTPUT, 0,
              "ID_V4L_VERSION=2\nID_V4L_PRODUCT=\nID_V4L_CAPABILITIES=:video_output:\n");
        check("Cam\nID_EVIL=1", 0, 0, "ID_V4L_VERSION=2\nID_V4L_CAPABILITIES=:\n");
        check("Cam\xff", 0, 0, "ID_V4L_VERSION=2\nID_V4L_CAPABILITIES=:\n");
        check("B\xc3\xbcro", 0, 0,
              "ID_V4L_VERSION=2\nID_V4L_PRODUCT=B\xc3\xbcro\nID_V4L_CAPABILITIES=:\n");
        /* 32 bytes without NUL: runs on into bus_info, as systemd reads it */
        check("0123456789abcdef0123456789abcdef", 0, 0,
              "ID_V4L_VERSION=2\nID_V4L_PRODUCT=0123456789abcdef0123456789abcdefusb-1\n"
              "ID_V4L_CAPABILITIES=:\n");
}

static void test_no_nul_anywhere(void)
{
        struct v4l2_capability cap;
        char *out;

        memset(&cap, 'A', sizeof(cap));
        cap.capabilities = 0;
        cap.device_caps = 0;
        out = print(&cap); /* reads stop at the structure's end (ASan checks) */
        ASSERT_TRUE(strstr(out, "ID_V4L_CAPABILITIES=:\n"));
        free(out);
}

int main(void)
{
        TEST_RUN(test_capabilities);
        TEST_RUN(test_card_names);
        TEST_RUN(test_no_nul_anywhere);
        return 0;
}
