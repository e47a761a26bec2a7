/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (libFuzzer runs the target single-threaded) */
/* libFuzzer target for dmi_memory_id's decoder (src/helpers/smbios-memory.c,
 * compiled into this target): the input is a dmidecode --dump-bin style
 * dump, its first 32 bytes the entry point (smbios_parse_entry_point()),
 * the rest a structure table decoded by smbios_memory_print() with the
 * structure count of the entry point, or of its last two bytes when the
 * entry point is not recognised. The whole dump also goes through
 * smbios_memory_run() from a memory file, as -F reads it.
 *
 * Checks: no read outside the input (ASan), every output line is KEY=value
 * with a MEMORY_ key and no control characters but the newline.
 * Seed corpus: tests/fuzz/corpus-smbios-memory/ (the dumps of
 * tests/helpers/fixtures/dmi). */

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../src/helpers/smbios-memory.c"
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        (void)argc;
        (void)argv;
        log_set_max_level(LOG_DEBUG);
        return 0;
}

static void check_output(const char *out, size_t len)
{
        bool line_start = true;

        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char)out[i];

                if (line_start)
                        CHECK(len - i >= 7 && memcmp(out + i, "MEMORY_", 7) == 0);
                CHECK(c >= 0x20 || c == '\n');
                CHECK(c != 0x7f);
                line_start = c == '\n';
        }
        CHECK(len == 0 || out[len - 1] == '\n');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct smbios_table_ref ref;
        uint16_t count = 0;
        char *out = NULL;
        size_t len = 0;
        FILE *f;
        int fd;

        if (size > 1 << 20)
                return 0;
        if (smbios_parse_entry_point(data, size, &ref) == 0)
                count = ref.count;
        else if (size >= 2)
                count = (uint16_t)(data[size - 2] | data[size - 1] << 8);

        f = open_memstream(&out, &len);
        CHECK(f);
        if (size > 32)
                smbios_memory_print(data + 32, size - 32, count, f);
        CHECK(fclose(f) == 0);
        check_output(out, len);
        free(out);

        /* the same dump as a file, through the program's path */
        fd = memfd_create("dump", MFD_CLOEXEC);
        CHECK(fd >= 0);
        CHECK(write(fd, data, size) == (ssize_t)size);
        {
                char path[64];

                snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
                out = NULL;
                len = 0;
                f = open_memstream(&out, &len);
                CHECK(f);
                (void)smbios_memory_run(path, path, true, f);
                CHECK(fclose(f) == 0);
                check_output(out, len);
                free(out);
        }
        close(fd);
        return 0;
}
