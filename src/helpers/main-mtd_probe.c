/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: main only (single-threaded program) */
/* mtd_probe DEVICE: MTD_FTL=smartmedia for a SmartMedia card's MTD node,
 * for 75-probe_mtd.rules, with systemd 252's output and exit status (check
 * in mtd-smartmedia.c): 0 when it is one, else 1 (also for a bad command
 * line, which prints the usage on standard output, a node that cannot be
 * opened or does not answer MEMGETINFO). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/ioctl.h>

#include "helpers/mtd-smartmedia.h"
#include "shared/log.h"
#include "shared/macro.h"

int main(int argc, char *argv[])
{
        _cleanup_close_ int fd = -1;
        struct mtd_info_user info = { 0 };
        int r;

        log_set_target(LOG_TARGET_CONSOLE, "mtd_probe");
        log_set_console_plain(true);
        if (argc != 2) {
                puts("usage: mtd_probe /dev/mtd[n]");
                return 1;
        }
        fd = open(argv[1], O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) {
                log_error_errno(negative_errno(), "Failed to open: %m");
                return 1;
        }
        if (ioctl(fd, MEMGETINFO, &info) < 0) {
                log_error_errno(negative_errno(), "Failed to issue MEMGETINFO ioctl: %m");
                return 1;
        }
        r = mtd_probe_smartmedia(fd, &info);
        if (r == -ENOMEM)
                log_error("Out of memory.");
        if (r <= 0)
                return 1;
        puts("MTD_FTL=smartmedia");
        return fflush(stdout) == 0 ? 0 : 1;
}
