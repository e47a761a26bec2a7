/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: main only (single-threaded program) */
/* v4l_id [-h] DEVICE: the ID_V4L_* properties of a Video4Linux node from
 * VIDIOC_QUERYCAP, for 60-persistent-v4l.rules, with systemd 252's output
 * and exit status (printing in v4l-caps.c): 0 also when the node does not
 * answer VIDIOC_QUERYCAP (nothing printed), 2 without DEVICE, 3 when it
 * cannot be opened, 234 (-EINVAL) for an unknown option. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <string.h>
#include <sys/ioctl.h>

#include "helpers/v4l-caps.h"
#include "shared/macro.h"

int main(int argc, char *argv[])
{
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                {}
        };
        struct v4l2_capability cap;
        _cleanup_close_ int fd = -1;
        int c;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        printf("%s [-h,--help] <device file>\n\n"
                               "Video4Linux device identification.\n\n"
                               "  -h  Print this message\n",
                               program_invocation_short_name);
                        return 0;
                default:
                        return (unsigned char)-EINVAL;
                }

        if (!argv[optind])
                return 2;
        fd = open(argv[optind], O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return 3;
        memset(&cap, 0, sizeof(cap));
        if (ioctl(fd, VIDIOC_QUERYCAP, &cap) == 0)
                v4l_print_capability(&cap, stdout);
        return fflush(stdout) == 0 ? 0 : 1;
}
