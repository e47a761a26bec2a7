/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: single-threaded program */
/* ata_id [--export] DEVICE: the ATA identity of a disk or ATAPI drive, as
 * systemd 252's ata_id prints it (rules: 60-persistent-storage.rules), or
 * 257's when the builtins follow systemd 257 (builtins_follow_systemd_257():
 * the naming scheme in effect): ID_ATA_READ_LOOKAHEAD*,
 * ID_ATA_PERIPHERAL_DEVICE_TYPE, the v3 SG_IO answer taken as it is.
 * Exit status: 0 printed, 1 no device / cannot open (and as 257: an unknown
 * option, or no IDENTIFY data), 2 no IDENTIFY data (neither SCSI/ATA
 * Translation nor HDIO_GET_IDENTITY answered) as 252. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtins/builtin-util.h"
#include "helpers/ata-identify.h"
#include "helpers/helper-util.h"
#include "shared/log.h"
#include "shared/macro.h"

static void usage(void)
{
        printf("Usage: %s [--export] [--help] <device>\n"
               "  -x,--export    print values as environment keys\n"
               "  -h,--help      print this help text\n\n",
               program_invocation_short_name);
}

int main(int argc, char *argv[])
{
        static const struct option options[] = {
                { "export", no_argument, NULL, 'x' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        static struct helper_out out = HELPER_OUT_INIT;
        uint8_t raw[ATA_IDENTIFY_SIZE];
        struct ata_info info;
        _cleanup_close_ int fd = -1;
        bool export = false;
        const char *node;
        int peripheral_type = -1;
        bool sd257;
        int c, r;

        log_set_target(LOG_TARGET_CONSOLE, program_invocation_short_name);
        log_set_console_plain(true);
        log_set_max_level(LOG_INFO);

        /* the scheme's "Using ... naming scheme" notice is the daemon's to
         * print, not this program's */
        log_set_max_level(LOG_WARNING);
        sd257 = builtins_follow_systemd_257();
        log_set_max_level(LOG_INFO);

        /* An unknown option is reported by getopt; systemd 252 skips it,
         * 257 fails. */
        while ((c = getopt_long(argc, argv, "xh", options, NULL)) >= 0) {
                if (c == 'x')
                        export = true;
                else if (c == 'h') {
                        usage();
                        return 0;
                } else if (sd257)
                        return 1;
        }

        node = argv[optind];
        if (!node) {
                log_error("no node specified");
                return 1;
        }
        fd = open(node, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) {
                log_error_errno(errno, "unable to open '%s': %m", node);
                return 1;
        }

        r = ata_identify_probe(fd, raw, sd257, &peripheral_type);
        if (r >= 0) {
                ata_info_from_identify(&info, raw);
                if (!sd257)
                        peripheral_type = -1;
        } else {
                uint8_t hdio[ATA_IDENTIFY_SIZE];

                log_debug_errno(r, "%s: no IDENTIFY data through SG_IO: %m", node);
                r = hdio_get_identity(fd, hdio);
                if (r < 0) {
                        log_debug_errno(r, "HDIO_GET_IDENTITY failed for '%s': %m", node);
                        return sd257 ? 1 : 2;
                }
                ata_info_from_hdio(&info, hdio);
        }

        (void)ata_identify_format(&info, raw, sd257, peripheral_type, export, &out);
        r = helper_out_flush_stdout(&out);
        if (r < 0) {
                log_error_errno(r, "cannot write the output: %m");
                return 1;
        }
        return 0;
}
