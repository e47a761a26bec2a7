/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (no state outside the call) */
#pragma once
/* The output of the v4l_id program from a VIDIOC_QUERYCAP answer, as
 * systemd 252's v4l_id prints it: ID_V4L_VERSION=2, ID_V4L_PRODUCT (the card
 * name, left out unless valid UTF-8 without control characters) and
 * ID_V4L_CAPABILITIES (":capture:video_output:video_overlay:audio:tuner:
 * radio:", those present, from device_caps when the driver fills it). */

#include <linux/videodev2.h>
#include <stdio.h>

/* Print the properties for `cap` to f. The card name is read up to its
 * NUL; without one in its 32 bytes systemd reads on into bus_info and the
 * fields after it, and so does this, but never past the structure. */
void v4l_print_capability(const struct v4l2_capability *cap, FILE *f);
