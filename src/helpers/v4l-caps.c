/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (no state outside the call) */
/* v4l_id's output (v4l-caps.h). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "helpers/helper-util.h"
#include "helpers/v4l-caps.h"

void v4l_print_capability(const struct v4l2_capability *cap, FILE *f)
{
        /* the card name runs to the first NUL of the structure's rest */
        size_t off = offsetof(struct v4l2_capability, card), max = sizeof(*cap) - off;
        const uint8_t *card = (const uint8_t *)cap + off;
        const uint8_t *nul = memchr(card, 0, max);
        size_t n = nul ? (size_t)(nul - card) : max;
        char name[sizeof(*cap) + 1];
        uint32_t caps;

        memcpy(name, card, n);
        name[n] = '\0';

        fputs("ID_V4L_VERSION=2\n", f);
        /* an empty name is printed (empty), an unprintable one left out */
        if (n == 0 || helper_string_is_printable(name))
                fprintf(f, "ID_V4L_PRODUCT=%s\n", name);
        caps = cap->capabilities & V4L2_CAP_DEVICE_CAPS ? cap->device_caps : cap->capabilities;
        fputs("ID_V4L_CAPABILITIES=:", f);
        if (caps & (V4L2_CAP_VIDEO_CAPTURE | V4L2_CAP_VIDEO_CAPTURE_MPLANE))
                fputs("capture:", f);
        if (caps & (V4L2_CAP_VIDEO_OUTPUT | V4L2_CAP_VIDEO_OUTPUT_MPLANE))
                fputs("video_output:", f);
        if (caps & V4L2_CAP_VIDEO_OVERLAY)
                fputs("video_overlay:", f);
        if (caps & V4L2_CAP_AUDIO)
                fputs("audio:", f);
        if (caps & V4L2_CAP_TUNER)
                fputs("tuner:", f);
        if (caps & V4L2_CAP_RADIO)
                fputs("radio:", f);
        fputc('\n', f);
}
