/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: main only */
/* smbios-memory.c over SMBIOS dumps (tests/helpers/fixtures/dmi/NAME.hex,
 * written out as binary files here):
 * the table of a QEMU 7.2 q35 VM and synthetic tables from
 * tests/helpers/make-smbios-dumps.py (several DIMMs, NVDIMMs, every entry
 * point kind, malformed tables). NAME.out and exit-codes hold what systemd
 * 252's dmi_memory_id -F printed and returned on them; the integration test
 * (tests/integration/test_helpers_cdrom_dmi.py) also runs both programs side
 * by side. Run from the source tree's top (or set TUDEV_SRCDIR). */
#include <dirent.h>

#include "helpers/smbios-memory.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "shared/tests.h"

#define FIXTURES "tests/helpers/fixtures/dmi"

static char *fixture_path(const char *name)
{
        const char *top = getenv("TUDEV_SRCDIR");
        char *p;

        ASSERT_TRUE(asprintf(&p, "%s/" FIXTURES "/%s", top ? top : ".", name) > 0);
        return p;
}

static char *read_text(const char *path)
{
        FILE *f = fopen(path, "re");
        char *buf = calloc(1, 65536);
        size_t n;

        ASSERT_TRUE(f && buf);
        n = fread(buf, 1, 65535, f);
        buf[n] = '\0';
        fclose(f);
        return buf;
}

/* Drop the leading '#' lines of a fixture, in place; returns text. */
static char *skip_comments(char *text)
{
        char *p = text;

        while (*p == '#') {
                char *nl = strchr(p, '\n');

                p = nl ? nl + 1 : p + strlen(p);
        }
        memmove(text, p, strlen(p) + 1);
        return text;
}

/* NAME.hex ('#' lines, then hex digits) as a binary file at `out`. */
static void write_dump(const char *hex_path, const char *out)
{
        _cleanup_free_ char *text = NULL;
        FILE *f = fopen(out, "we");
        int hi = -1, c;

        ASSERT_TRUE(f);
        text = read_text(hex_path);
        skip_comments(text);
        for (const char *p = text; *p; p++) {
                if (*p == '\n')
                        continue;
                c = *p >= 'a' ? *p - 'a' + 10 : *p - '0';
                ASSERT_TRUE(c >= 0 && c < 16);
                if (hi < 0)
                        hi = c;
                else {
                        ASSERT_TRUE(fputc(hi << 4 | c, f) != EOF);
                        hi = -1;
                }
        }
        ASSERT_EQ(hi, -1);
        ASSERT_EQ(fclose(f), 0);
}

/* The exit status systemd's dmi_memory_id gave on NAME, from exit-codes. */
static int expected_exit(const char *codes, const char *name)
{
        size_t n = strlen(name);

        for (const char *p = codes; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
                if (p[0] != '#' && strncmp(p, name, n) == 0 && p[n] == ' ')
                        return atoi(p + n + 1);
        fprintf(stderr, "%s: not in exit-codes\n", name);
        abort();
}

static void test_dumps(void)
{
        _cleanup_free_ char *dir = fixture_path(""), *codes_path = fixture_path("exit-codes");
        _cleanup_free_ char *codes = read_text(codes_path);
        char tmp[] = "/tmp/test-smbios-dump-XXXXXX";
        struct dirent **names;
        unsigned checked = 0;
        int n = scandir(dir, &names, NULL, alphasort);

        ASSERT_TRUE(n > 0);
        ASSERT_TRUE(mkdtemp(tmp));
        for (int i = 0; i < n; i++) {
                const char *name = names[i]->d_name;
                size_t l = strlen(name);

                if (l > 4 && streq(name + l - 4, ".hex")) {
                        _cleanup_free_ char *hex = fixture_path(name);
                        _cleanup_free_ char *base = strndup(name, l - 4);
                        char dump[sizeof(tmp) + 16];
                        _cleanup_free_ char *outname = NULL, *outpath = NULL, *expected = NULL;
                        char *got = NULL;
                        size_t len = 0;
                        FILE *f;
                        int r;

                        ASSERT_TRUE(base && asprintf(&outname, "%s.out", base) > 0);
                        outpath = fixture_path(outname);
                        expected = skip_comments(read_text(outpath));
                        snprintf(dump, sizeof(dump), "%s/dump", tmp);
                        write_dump(hex, dump);
                        f = open_memstream(&got, &len);
                        ASSERT_TRUE(f);
                        r = smbios_memory_run(dump, dump, true, f);
                        ASSERT_EQ(fclose(f), 0);
                        if (!streq(got, expected) || (r < 0) != (expected_exit(codes, base) != 0))
                                fprintf(stderr, "\n%s: r=%d, expected:\n%s--- got:\n%s", name, r,
                                        expected, got);
                        ASSERT_STREQ(got, expected);
                        ASSERT_EQ(r < 0 ? 1 : 0, expected_exit(codes, base));
                        free(got);
                        ASSERT_EQ(unlink(dump), 0);
                        checked++;
                }
                free(names[i]);
        }
        free(names);
        ASSERT_EQ(rmdir(tmp), 0);
        ASSERT_TRUE(checked >= 20);
}

/* The sysfs layout: entry point and table in two files, the table read from
 * its start whatever address the entry point names. */
static void test_sysfs_layout(void)
{
        _cleanup_free_ char *hex = fixture_path("qemu-q35.hex");
        _cleanup_free_ char *expected_path = fixture_path("qemu-q35.out");
        _cleanup_free_ char *expected = skip_comments(read_text(expected_path));
        char dir[] = "/tmp/test-smbios-XXXXXX", ep[64], tab[64], dump[64];
        uint8_t buf[4096];
        char *got = NULL;
        size_t n, len = 0;
        FILE *in, *f;

        ASSERT_TRUE(mkdtemp(dir));
        snprintf(dump, sizeof(dump), "%s/dump", dir);
        write_dump(hex, dump);
        in = fopen(dump, "re");
        ASSERT_TRUE(in);
        n = fread(buf, 1, sizeof(buf), in);
        fclose(in);
        ASSERT_TRUE(n > 0x20);
        snprintf(ep, sizeof(ep), "%s/smbios_entry_point", dir);
        snprintf(tab, sizeof(tab), "%s/DMI", dir);
        f = fopen(ep, "we");
        ASSERT_TRUE(f && fwrite(buf, 1, 31, f) == 31 && fclose(f) == 0);
        f = fopen(tab, "we");
        ASSERT_TRUE(f && fwrite(buf + 0x20, 1, n - 0x20, f) == n - 0x20 && fclose(f) == 0);

        f = open_memstream(&got, &len);
        ASSERT_TRUE(f);
        ASSERT_EQ(smbios_memory_run(ep, tab, false, f), 0);
        ASSERT_EQ(fclose(f), 0);
        ASSERT_STREQ(got, expected);
        free(got);

        /* no entry point file: -ENOENT */
        f = open_memstream(&got, &len);
        ASSERT_TRUE(f);
        ASSERT_EQ(smbios_memory_run("/nonexistent/smbios_entry_point", tab, false, f), -ENOENT);
        ASSERT_EQ(fclose(f), 0);
        ASSERT_STREQ(got, "");
        free(got);

        ASSERT_EQ(unlink(ep), 0);
        ASSERT_EQ(unlink(tab), 0);
        ASSERT_EQ(unlink(dump), 0);
        ASSERT_EQ(rmdir(dir), 0);
}

static void test_entry_points(void)
{
        /* SMBIOS 3: "_SM3_", checksum, length 0x18, 3.3, table max 0x1234 at 0x20 */
        uint8_t sm3[0x18] = { '_', 'S', 'M', '3', '_', 0, 0x18, 3, 3, 0, 1, 0,
                              0x34, 0x12, 0, 0, 0x20, 0, 0, 0, 0, 0, 0, 0 };
        uint8_t sum = 0;
        struct smbios_table_ref ref;

        for (size_t i = 0; i < sizeof(sm3); i++)
                sum = (uint8_t)(sum + sm3[i]);
        sm3[5] = (uint8_t)-sum;
        ASSERT_EQ(smbios_parse_entry_point(sm3, sizeof(sm3), &ref), 0);
        ASSERT_EQ(ref.address, 0x20);
        ASSERT_EQ(ref.length, 0x1234);
        ASSERT_EQ(ref.count, 0);
        /* too short for its signature */
        ASSERT_EQ(smbios_parse_entry_point(sm3, 23, &ref), -EINVAL);
        /* bad checksum */
        sm3[5]++;
        ASSERT_EQ(smbios_parse_entry_point(sm3, sizeof(sm3), &ref), -EINVAL);
        sm3[5]--;
        /* length past the entry point maximum */
        sm3[6] = 0x21;
        ASSERT_EQ(smbios_parse_entry_point(sm3, sizeof(sm3), &ref), -EINVAL);
        ASSERT_EQ(smbios_parse_entry_point((const uint8_t *)"", 0, &ref), -EINVAL);
}

/* A table of one memory device without strings area bytes to spare, walked
 * with a count limit, and cut at every length: nothing read outside. */
static void test_table_bounds(void)
{
        static const uint8_t dev[] = {
                17, 0x15, 0x01, 0x00, 0, 0, 0xfe, 0xff, 64, 0, 64, 0, 0x00, 0x04, 0x09, 0,
                1,  0,    0x1a, 0x80, 0, 'D', 'I', 'M', 'M', 0, 0,
        };
        for (size_t cut = 0; cut <= sizeof(dev); cut++) {
                uint8_t *copy = malloc(cut ? cut : 1);
                char *got = NULL;
                size_t len = 0;
                FILE *f = open_memstream(&got, &len);

                ASSERT_TRUE(copy && f);
                memcpy(copy, dev, cut);
                smbios_memory_print(copy, cut, 0, f);
                ASSERT_EQ(fclose(f), 0);
                if (cut < sizeof(dev))
                        ASSERT_STREQ(got, "");
                else
                        ASSERT_STREQ(got, "MEMORY_DEVICE_0_TOTAL_WIDTH=64\n"
                                          "MEMORY_DEVICE_0_DATA_WIDTH=64\n"
                                          "MEMORY_DEVICE_0_SIZE=1073741824\n"
                                          "MEMORY_DEVICE_0_FORM_FACTOR=DIMM\n"
                                          "MEMORY_DEVICE_0_LOCATOR=DIMM\n"
                                          "MEMORY_DEVICE_0_BANK_LOCATOR=Not Specified\n"
                                          "MEMORY_DEVICE_0_TYPE=DDR4\n"
                                          "MEMORY_DEVICE_0_TYPE_DETAIL=Synchronous\n"
                                          "MEMORY_ARRAY_NUM_DEVICES=1\n");
                free(got);
                free(copy);
        }
}

int main(void)
{
        log_set_max_level(getenv("TEST_DEBUG") ? LOG_DEBUG : LOG_CRIT);
        TEST_RUN(test_entry_points);
        TEST_RUN(test_table_bounds);
        TEST_RUN(test_sysfs_layout);
        TEST_RUN(test_dumps);
        return 0;
}
