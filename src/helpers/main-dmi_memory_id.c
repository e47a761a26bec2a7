/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: main only (single-threaded program) */
/* dmi_memory_id [-F FILE]: the MEMORY_ARRAY_* and MEMORY_DEVICE_<n>_*
 * properties of the SMBIOS tables, for 70-memory.rules, with the options,
 * output and exit status of systemd 252's dmi_memory_id (decoding in
 * smbios-memory.c). Without -F the entry point and the table are the
 * kernel's /sys/firmware/dmi/tables/{smbios_entry_point,DMI}; with -F FILE
 * both come from a dump (dmidecode --dump-bin: the entry point at offset 0,
 * the table at the address the entry point names). Exit 0 after printing
 * (possibly nothing), 1 when a file cannot be read, the entry point is not
 * recognised or its checksum is wrong. */
#include <getopt.h>
#include <stdio.h>

#include "helpers/smbios-memory.h"
#include "shared/log.h"

#define SYS_ENTRY_POINT "/sys/firmware/dmi/tables/smbios_entry_point"
#define SYS_TABLE "/sys/firmware/dmi/tables/DMI"

static void help(void)
{
        printf("Usage: %s [options]\n"
               " -F,--from-dump FILE   read DMI information from a binary file\n"
               " -h,--help             print this help text\n"
               "\n",
               program_invocation_short_name);
}

int main(int argc, char *argv[])
{
        static const struct option options[] = {
                { "from-dump", required_argument, NULL, 'F' },
                { "version", no_argument, NULL, 'V' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        const char *dump = NULL;
        int c, r;

        log_set_target(LOG_TARGET_CONSOLE, "dmi_memory_id");
        log_set_console_plain(true);
        while ((c = getopt_long(argc, argv, "F:hV", options, NULL)) >= 0)
                switch (c) {
                case 'F':
                        dump = optarg;
                        break;
                case 'V':
                        puts(VERSION);
                        return 0;
                case 'h':
                        help();
                        return 0;
                default:
                        return 1;
                }

        if (dump)
                r = smbios_memory_run(dump, dump, true, stdout);
        else
                r = smbios_memory_run(SYS_ENTRY_POINT, SYS_TABLE, false, stdout);
        if (r < 0)
                return 1;
        return fflush(stdout) == 0 ? 0 : 1;
}
