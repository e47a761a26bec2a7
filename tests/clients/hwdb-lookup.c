/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: single-threaded test client */
/*
 * hwdb-lookup: look modaliases up in the hardware database with the SYSTEM's
 * libudev (udev_hwdb_new(), udev_hwdb_get_properties_list_entry()), i.e. with
 * systemd's own reader, to check that a hwdb.bin is read as intended.
 *
 *   hwdb-lookup < MODALIASES
 *
 * libudev takes the first existing file of its fixed search path
 * (/etc/systemd/hwdb/hwdb.bin, /etc/udev/hwdb.bin, ...): the caller puts the
 * file to test there, in a private mount namespace. For every input line
 * (one modalias, at most LINE_MAX - 1 bytes) the output is the matching
 * properties as KEY=VALUE lines, in libudev's order, then an empty line.
 * Exit status 0; 1 if there is no database; 2 on a usage or input error.
 */

#include <libudev.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char *argv[])
{
        char line[LINE_MAX];
        struct udev *udev;
        struct udev_hwdb *hwdb;
        int ret = 0;

        if (argc != 1) {
                fprintf(stderr, "usage: %s < MODALIASES\n", argv[0]);
                return 2;
        }
        udev = udev_new();
        if (!udev) {
                fprintf(stderr, "hwdb-lookup: udev_new() failed\n");
                return 1;
        }
        hwdb = udev_hwdb_new(udev);
        if (!hwdb) {
                fprintf(stderr, "hwdb-lookup: udev_hwdb_new() failed: no hwdb.bin?\n");
                udev_unref(udev);
                return 1;
        }
        while (fgets(line, sizeof(line), stdin)) {
                struct udev_list_entry *e;
                size_t n = strlen(line);

                if (n == 0 || line[n - 1] != '\n') {
                        fprintf(stderr, "hwdb-lookup: input line too long or unterminated\n");
                        ret = 2;
                        break;
                }
                line[n - 1] = '\0';
                udev_list_entry_foreach(e, udev_hwdb_get_properties_list_entry(hwdb, line, 0))
                        printf("%s=%s\n", udev_list_entry_get_name(e),
                               udev_list_entry_get_value(e));
                printf("\n");
        }
        udev_hwdb_unref(hwdb);
        udev_unref(udev);
        if (fflush(stdout) != 0)
                return 2;
        return ret;
}
