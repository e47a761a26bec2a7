/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: main only (single-threaded program) */
/* cdrom_id [--lock-media|--unlock-media|--eject-media] [--debug] DEVICE: the
 * ID_CDROM* properties of an optical drive, for 60-cdrom_id.rules, with the
 * options, output and exit status of systemd 252's cdrom_id (the probing is
 * cdrom-mmc.c). Exit 0 after printing; 1 when no device is named, it cannot
 * be opened, or CDROM_GET_CAPABILITY fails (nothing printed then). An unknown
 * option exits 1 (systemd 252 aborts there). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <time.h>

#include "helpers/cdrom-mmc.h"
#include "shared/fileio.h"
#include "shared/log.h"
#include "shared/macro.h"

#define OPEN_TRIES 10 /* attempts while the drive is busy, 100-200 ms apart */

static void help(void)
{
        printf("Usage: %s [options] <device>\n"
               "  -l --lock-media    lock the media (to enable eject request events)\n"
               "  -u --unlock-media  unlock the media\n"
               "  -e --eject-media   eject the media\n"
               "  -d --debug         print debug messages to stderr\n"
               "  -h --help          print this help text\n"
               "\n",
               program_invocation_short_name);
}

static int open_drive(const char *node)
{
        for (int i = 1;; i++) {
                int fd = open(node, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
                struct timespec ts;

                if (fd >= 0) {
                        log_debug("probing: '%s'", node);
                        return fd;
                }
                if (i >= OPEN_TRIES || errno != EBUSY)
                        return log_debug_errno(negative_errno(), "Unable to open '%s': %m", node);
                ts.tv_sec = 0;
                ts.tv_nsec = (long)(100000000 + random_name_u64() % 100000000);
                (void)nanosleep(&ts, NULL);
        }
}

int main(int argc, char *argv[])
{
        static const struct option options[] = {
                { "lock-media", no_argument, NULL, 'l' },
                { "unlock-media", no_argument, NULL, 'u' },
                { "eject-media", no_argument, NULL, 'e' },
                { "debug", no_argument, NULL, 'd' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        bool lock = false, unlock = false, eject = false;
        _cleanup_free_ struct cdrom_info *info = NULL;
        _cleanup_close_ int fd = -1;
        struct cdrom_io io;
        const char *node;
        int c, r;

        log_set_target(LOG_TARGET_CONSOLE, "cdrom_id");
        log_set_console_plain(true);
        while ((c = getopt_long(argc, argv, "deluh", options, NULL)) >= 0)
                switch (c) {
                case 'l':
                        lock = true;
                        break;
                case 'u':
                        unlock = true;
                        break;
                case 'e':
                        eject = true;
                        break;
                case 'd':
                        log_set_max_level(LOG_DEBUG);
                        break;
                case 'h':
                        help();
                        return 0;
                default:
                        return 1;
                }

        node = argv[optind];
        if (!node) {
                log_error("No device specified.");
                return 1;
        }

        fd = open_drive(node);
        if (fd < 0)
                return 1;
        cdrom_io_init_fd(&io, &fd);

        info = malloc(sizeof(*info));
        if (!info) {
                log_error("Out of memory.");
                return 1;
        }
        r = cdrom_probe(&io, info);
        if (r < 0)
                return 1;

        /* a locked tray turns the eject button into an event */
        if (lock && info->has_media) {
                log_debug("PREVENT_ALLOW_MEDIUM_REMOVAL (lock)");
                (void)cdrom_media_lock(&io, true);
        }
        if (unlock && info->has_media) {
                log_debug("PREVENT_ALLOW_MEDIUM_REMOVAL (unlock)");
                (void)cdrom_media_lock(&io, false);
        }
        if (eject) {
                log_debug("PREVENT_ALLOW_MEDIUM_REMOVAL (unlock)");
                (void)cdrom_media_lock(&io, false);
                log_debug("START_STOP_UNIT (eject)");
                (void)cdrom_media_eject(&io);
        }

        cdrom_info_print(info, stdout);
        return fflush(stdout) == 0 ? 0 : 1;
}
