/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (no state outside the call) */
/* dmi_memory_id's decoder (smbios-memory.h). Field offsets and value tables
 * are those of the SMBIOS reference specification 3.3 (sections 7.17 and
 * 7.18), read as systemd 252 reads them. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers/smbios-memory.h"
#include "shared/log.h"
#include "shared/macro.h"

#define OUT_OF_SPEC "<OUT OF SPEC>"
/* Largest table read; real ones are a few KiB, and the kernel's DMI file
 * and dumps are shorter than an SMBIOS 3 entry point's maximum anyway. */
#define TABLE_MAX (64u * 1024 * 1024)

static uint16_t le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t le32(const uint8_t *p)
{
        return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t le64(const uint8_t *p) { return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32; }

/* ---- entry point ---- */

/* The bytes past what was read count as zero. */
static bool checksum_ok(const uint8_t *buf, size_t size, size_t len)
{
        uint8_t sum = 0;

        for (size_t i = 0; i < len && i < size; i++)
                sum = (uint8_t)(sum + buf[i]);
        return sum == 0;
}

int smbios_parse_entry_point(const uint8_t *buf, size_t size, struct smbios_table_ref *ret)
{
        size = MIN(size, (size_t)SMBIOS_ENTRY_POINT_MAX);

        if (size >= 24 && memcmp(buf, "_SM3_", 5) == 0) {
                if (buf[0x06] > 0x20) {
                        log_error("Entry point length too large (%u bytes, expected %u).",
                                  buf[0x06], 0x18u);
                        return -EINVAL;
                }
                if (!checksum_ok(buf, size, buf[0x06])) {
                        log_error("Failed to verify checksum.");
                        return -EINVAL;
                }
                *ret = (struct smbios_table_ref){
                        .address = le64(buf + 0x10),
                        .length = le32(buf + 0x0c),
                        .count = 0,
                };
                return 0;
        }
        if (size >= 31 && memcmp(buf, "_SM_", 4) == 0) {
                if (buf[0x05] > 0x20) {
                        log_error("Entry point length too large (%u bytes, expected %u).",
                                  buf[0x05], 0x1fu);
                        return -EINVAL;
                }
                if (!checksum_ok(buf, size, buf[0x05]) || memcmp(buf + 0x10, "_DMI_", 5) != 0 ||
                    !checksum_ok(buf + 0x10, size - 0x10, 0x0f)) {
                        log_error("Failed to verify checksum.");
                        return -EINVAL;
                }
                *ret = (struct smbios_table_ref){
                        .address = le32(buf + 0x18),
                        .length = le16(buf + 0x16),
                        .count = le16(buf + 0x1c),
                };
                return 0;
        }
        if (size >= 15 && memcmp(buf, "_DMI_", 5) == 0) {
                if (!checksum_ok(buf, size, 0x0f)) {
                        log_error("Failed to verify checksum.");
                        return -EINVAL;
                }
                *ret = (struct smbios_table_ref){
                        .address = le32(buf + 0x08),
                        .length = le16(buf + 0x06),
                        .count = le16(buf + 0x0c),
                };
                return 0;
        }
        return -EINVAL;
}

/* ---- one structure ---- */

struct dmi_struct {
        uint8_t type;
        uint8_t length;     /* formatted area */
        const uint8_t *data; /* the structure: formatted area, then strings */
        const uint8_t *end;  /* one past its final double NUL */
};

/* String number s of the structure, as systemd: "Not Specified" for 0,
 * "<BAD INDEX>" past the last. The strings end at the structure's double
 * NUL, so the walk stays inside it. */
static const char *dmi_string(const struct dmi_struct *d, uint8_t s)
{
        const char *p = (const char *)d->data + d->length;

        if (s == 0)
                return "Not Specified";
        for (; s > 1 && *p; s--)
                p += strlen(p) + 1;
        return *p ? p : "<BAD INDEX>";
}

static const char *table_name(const char *const *table, size_t n, unsigned code)
{
        return code < n && table[code] ? table[code] : OUT_OF_SPEC;
}
#define NAME(table, code) table_name(table, ARRAY_SIZE(table), code)

/* 7.17.1 */
static const char *const array_locations[] = {
        [0x01] = "Other",
        [0x02] = "Unknown",
        [0x03] = "System Board Or Motherboard",
        [0x04] = "ISA Add-on Card",
        [0x05] = "EISA Add-on Card",
        [0x06] = "PCI Add-on Card",
        [0x07] = "MCA Add-on Card",
        [0x08] = "PCMCIA Add-on Card",
        [0x09] = "Proprietary Add-on Card",
        [0x0a] = "NuBus",
};
static const char *const array_locations_a0[] = {
        [0x00] = "PC-98/C20 Add-on Card",
        [0x01] = "PC-98/C24 Add-on Card",
        [0x02] = "PC-98/E Add-on Card",
        [0x03] = "PC-98/Local Bus Add-on Card",
        [0x04] = "CXL Add-on Card",
};
/* 7.17.3 */
static const char *const array_ec_types[] = {
        [0x01] = "Other",  [0x02] = "Unknown",        [0x03] = "None",
        [0x04] = "Parity", [0x05] = "Single-bit ECC", [0x06] = "Multi-bit ECC",
        [0x07] = "CRC",
};
/* 7.18.1 */
static const char *const form_factors[] = {
        [0x01] = "Other", [0x02] = "Unknown", [0x03] = "SIMM",
        [0x04] = "SIP",   [0x05] = "Chip",    [0x06] = "DIP",
        [0x07] = "ZIP",   [0x08] = "Proprietary Card",
        [0x09] = "DIMM",  [0x0a] = "TSOP",    [0x0b] = "Row Of Chips",
        [0x0c] = "RIMM",  [0x0d] = "SODIMM",  [0x0e] = "SRIMM",
        [0x0f] = "FB-DIMM", [0x10] = "Die",
};
/* 7.18.2 */
static const char *const device_types[] = {
        [0x01] = "Other",    [0x02] = "Unknown",      [0x03] = "DRAM",
        [0x04] = "EDRAM",    [0x05] = "VRAM",         [0x06] = "SRAM",
        [0x07] = "RAM",      [0x08] = "ROM",          [0x09] = "Flash",
        [0x0a] = "EEPROM",   [0x0b] = "FEPROM",       [0x0c] = "EPROM",
        [0x0d] = "CDRAM",    [0x0e] = "3DRAM",        [0x0f] = "SDRAM",
        [0x10] = "SGRAM",    [0x11] = "RDRAM",        [0x12] = "DDR",
        [0x13] = "DDR2",     [0x14] = "DDR2 FB-DIMM", [0x15] = "Reserved",
        [0x16] = "Reserved", [0x17] = "Reserved",     [0x18] = "DDR3",
        [0x19] = "FBD2",     [0x1a] = "DDR4",         [0x1b] = "LPDDR",
        [0x1c] = "LPDDR2",   [0x1d] = "LPDDR3",       [0x1e] = "LPDDR4",
        [0x1f] = "Logical non-volatile device",
        [0x20] = "HBM",      [0x21] = "HBM2",         [0x22] = "DDR5",
        [0x23] = "LPDDR5",   [0x24] = "HBM3",
};
/* 7.18.3, bit numbers */
static const char *const type_details[] = {
        [1] = "Other",          [2] = "Unknown",        [3] = "Fast-paged",
        [4] = "Static Column",  [5] = "Pseudo-static",  [6] = "RAMBUS",
        [7] = "Synchronous",    [8] = "CMOS",           [9] = "EDO",
        [10] = "Window DRAM",   [11] = "Cache DRAM",    [12] = "Non-Volatile",
        [13] = "Registered (Buffered)", [14] = "Unbuffered (Unregistered)",
        [15] = "LRDIMM",
};
/* 7.18.6 */
static const char *const technologies[] = {
        [0x01] = "Other",    [0x02] = "Unknown",  [0x03] = "DRAM",
        [0x04] = "NVDIMM-N", [0x05] = "NVDIMM-F", [0x06] = "NVDIMM-P",
        [0x07] = "Intel Optane persistent memory",
};
/* 7.18.7, bit numbers */
static const char *const operating_modes[] = {
        [1] = "Other",
        [2] = "Unknown",
        [3] = "Volatile memory",
        [4] = "Byte-accessible persistent memory",
        [5] = "Block-accessible persistent memory",
};

/* The names of the bits 1.. set in code, space-separated. */
static void print_bits(FILE *f, const char *const *names, size_t n, uint16_t code)
{
        bool first = true;

        for (size_t i = 1; i < n; i++)
                if (code & (1u << i)) {
                        fprintf(f, "%s%s", first ? "" : " ", names[i]);
                        first = false;
                }
        fputc('\n', f);
}

/* Code points systemd's unichar_is_valid() refuses: past Unicode, UTF-16
 * surrogates, U+FDD0..U+FDEF and U+xxFFFE/U+xxFFFF. */
static bool unichar_ok(uint32_t c)
{
        return c < 0x110000 && (c & 0xfffff800) != 0xd800 && !(c >= 0xfdd0 && c <= 0xfdef) &&
               (c & 0xfffe) != 0xfffe;
}

/* Valid UTF-8 without control characters, as systemd's utf8_is_valid() and
 * string_has_cc(): shortest forms only, no C0 controls or DEL. */
static bool string_printable(const char *s, size_t n)
{
        const uint8_t *p = (const uint8_t *)s;

        for (size_t i = 0; i < n;) {
                uint32_t c = p[i];
                size_t len;

                if (c < 0x20 || c == 0x7f)
                        return false;
                if (c < 0x80) {
                        i++;
                        continue;
                }
                if ((c & 0xe0) == 0xc0)
                        len = 2, c &= 0x1f;
                else if ((c & 0xf0) == 0xe0)
                        len = 3, c &= 0x0f;
                else if ((c & 0xf8) == 0xf0)
                        len = 4, c &= 0x07;
                else
                        return false; /* continuation byte, or 5- and 6-byte forms (past Unicode) */
                if (n - i < len)
                        return false;
                for (size_t k = 1; k < len; k++) {
                        if ((p[i + k] & 0xc0) != 0x80)
                                return false;
                        c = c << 6 | (p[i + k] & 0x3f);
                }
                /* shortest form only */
                if ((len == 2 && c < 0x80) || (len == 3 && c < 0x800) || (len == 4 && c < 0x10000))
                        return false;
                if (!unichar_ok(c))
                        return false;
                i += len;
        }
        return true;
}

static void print_string(FILE *f, unsigned slot, const char *key, const struct dmi_struct *d,
                         uint8_t s)
{
        const char *str = dmi_string(d, s);
        size_t a, b;

        /* strip leading and trailing whitespace as systemd's strstrip() */
        for (a = 0; str[a] && strchr(" \t\n\r", str[a]); a++)
                ;
        for (b = strlen(str); b > a && strchr(" \t\n\r", str[b - 1]); b--)
                ;
        /* empty, or not safe to print as a property value: left out */
        if (b == a || !string_printable(str + a, b - a))
                return;
        fprintf(f, "MEMORY_DEVICE_%u_%s=%.*s\n", slot, key, (int)(b - a), str + a);
}

static void print_width(FILE *f, unsigned slot, const char *key, uint16_t code)
{
        /* 0 when no module is present */
        if (code != 0 && code != 0xffff)
                fprintf(f, "MEMORY_DEVICE_%u_%s=%u\n", slot, key, code);
}

static void print_size(FILE *f, unsigned slot, uint16_t code)
{
        uint64_t kib;

        if (code == 0) {
                fprintf(f, "MEMORY_DEVICE_%u_PRESENT=0\n", slot);
                return;
        }
        if (code == 0xffff)
                return;
        /* bit 15: the value is in KiB, else in MiB */
        kib = code & 0x7fff;
        if (!(code & 0x8000))
                kib <<= 10;
        fprintf(f, "MEMORY_DEVICE_%u_SIZE=%" PRIu64 "\n", slot, kib << 10);
}

static void print_voltage(FILE *f, unsigned slot, const char *key, uint16_t mv)
{
        if (mv == 0)
                return;
        /* systemd prints whole tenths with "%.1g": 1200 mV -> "1" */
        if (mv % 100 != 0)
                fprintf(f, "MEMORY_DEVICE_%u_%s=%g\n", slot, key, (double)mv / 1000);
        else
                fprintf(f, "MEMORY_DEVICE_%u_%s=%.1g\n", slot, key, (double)mv / 1000);
}

static void print_speed(FILE *f, unsigned slot, const char *key, uint16_t code)
{
        if (code != 0)
                fprintf(f, "MEMORY_DEVICE_%u_%s=%u\n", slot, key, code);
}

static void print_manufacturer_id(FILE *f, unsigned slot, const char *key, uint16_t code)
{
        /* 7.18.8: low byte = number of continuation codes (with parity), high = id */
        if (code != 0)
                fprintf(f, "MEMORY_DEVICE_%u_%s=Bank %d, Hex 0x%02X\n", slot, key,
                        (code & 0x7f) + 1, code >> 8);
}

static void print_product_id(FILE *f, unsigned slot, const char *key, uint16_t code)
{
        if (code != 0)
                fprintf(f, "MEMORY_DEVICE_%u_%s=0x%04X\n", slot, key, code);
}

static void print_size_detail(FILE *f, unsigned slot, const char *key, uint64_t code)
{
        if (code != 0 && code != UINT64_MAX)
                fprintf(f, "MEMORY_DEVICE_%u_%s=%" PRIu64 "\n", slot, key, code);
}

static void decode_memory_array(FILE *f, const struct dmi_struct *d)
{
        const uint8_t *p = d->data;
        uint32_t max;

        log_debug("Physical Memory Array");
        if (d->length < 0x0f)
                return;
        if (p[0x05] != 0x03) /* Use: System Memory */
                return;
        log_debug("Use: System Memory");

        if (p[0x04] >= 0xa0 && p[0x04] < 0xa0 + ARRAY_SIZE(array_locations_a0))
                fprintf(f, "MEMORY_ARRAY_LOCATION=%s\n", array_locations_a0[p[0x04] - 0xa0]);
        else
                fprintf(f, "MEMORY_ARRAY_LOCATION=%s\n", NAME(array_locations, p[0x04]));
        if (p[0x06] != 0x03) /* "None" is not printed */
                fprintf(f, "MEMORY_ARRAY_EC_TYPE=%s\n", NAME(array_ec_types, p[0x06]));
        max = le32(p + 0x07);
        if (max != 0x80000000)
                fprintf(f, "MEMORY_ARRAY_MAX_CAPACITY=%" PRIu64 "\n", (uint64_t)max << 10);
        else if (d->length >= 0x17) /* Extended Maximum Capacity, bytes */
                fprintf(f, "MEMORY_ARRAY_MAX_CAPACITY=%" PRIu64 "\n", le64(p + 0x0f));
}

static void decode_memory_device(FILE *f, const struct dmi_struct *d, unsigned slot)
{
        const uint8_t *p = d->data;
        uint16_t detail, modes;

        log_debug("Memory Device: %u", slot);
        if (d->length < 0x15)
                return;

        print_width(f, slot, "TOTAL_WIDTH", le16(p + 0x08));
        print_width(f, slot, "DATA_WIDTH", le16(p + 0x0a));
        if (d->length >= 0x20 && le16(p + 0x0c) == 0x7fff) /* Extended Size, MiB */
                fprintf(f, "MEMORY_DEVICE_%u_SIZE=%" PRIu64 "\n", slot,
                        (uint64_t)le32(p + 0x1c) * 1024 * 1024);
        else
                print_size(f, slot, le16(p + 0x0c));
        fprintf(f, "MEMORY_DEVICE_%u_FORM_FACTOR=%s\n", slot, NAME(form_factors, p[0x0e]));
        if (p[0x0f] == 0xff)
                fprintf(f, "MEMORY_DEVICE_%u_SET=Unknown\n", slot);
        else if (p[0x0f] != 0)
                fprintf(f, "MEMORY_DEVICE_%u_SET=%u\n", slot, p[0x0f]);
        print_string(f, slot, "LOCATOR", d, p[0x10]);
        print_string(f, slot, "BANK_LOCATOR", d, p[0x11]);
        fprintf(f, "MEMORY_DEVICE_%u_TYPE=%s\n", slot, NAME(device_types, p[0x12]));
        detail = le16(p + 0x13);
        if ((detail & 0xfffe) == 0)
                fprintf(f, "MEMORY_DEVICE_%u_TYPE_DETAIL=None\n", slot);
        else {
                fprintf(f, "MEMORY_DEVICE_%u_TYPE_DETAIL=", slot);
                print_bits(f, type_details, ARRAY_SIZE(type_details), detail);
        }
        if (d->length < 0x17)
                return;

        print_speed(f, slot, "SPEED_MTS", le16(p + 0x15));
        if (d->length < 0x1b)
                return;

        print_string(f, slot, "MANUFACTURER", d, p[0x17]);
        print_string(f, slot, "SERIAL_NUMBER", d, p[0x18]);
        print_string(f, slot, "ASSET_TAG", d, p[0x19]);
        print_string(f, slot, "PART_NUMBER", d, p[0x1a]);
        if (d->length < 0x1c)
                return;

        if (p[0x1b] & 0x0f)
                fprintf(f, "MEMORY_DEVICE_%u_RANK=%u\n", slot, p[0x1b] & 0x0fu);
        if (d->length < 0x22)
                return;

        print_speed(f, slot, "CONFIGURED_SPEED_MTS", le16(p + 0x20));
        if (d->length < 0x28)
                return;

        print_voltage(f, slot, "MINIMUM_VOLTAGE", le16(p + 0x22));
        print_voltage(f, slot, "MAXIMUM_VOLTAGE", le16(p + 0x24));
        print_voltage(f, slot, "CONFIGURED_VOLTAGE", le16(p + 0x26));
        if (d->length < 0x34)
                return;

        fprintf(f, "MEMORY_DEVICE_%u_MEMORY_TECHNOLOGY=%s\n", slot, NAME(technologies, p[0x28]));
        modes = le16(p + 0x29);
        if ((modes & 0xfffe) != 0) {
                /* bits past 5 have no name: the value may be empty, as in systemd */
                fprintf(f, "MEMORY_DEVICE_%u_MEMORY_OPERATING_MODE_CAPABILITY=", slot);
                print_bits(f, operating_modes, ARRAY_SIZE(operating_modes), modes);
        }
        print_string(f, slot, "FIRMWARE_VERSION", d, p[0x2b]);
        print_manufacturer_id(f, slot, "MODULE_MANUFACTURER_ID", le16(p + 0x2c));
        print_product_id(f, slot, "MODULE_PRODUCT_ID", le16(p + 0x2e));
        print_manufacturer_id(f, slot, "MEMORY_SUBSYSTEM_CONTROLLER_MANUFACTURER_ID",
                              le16(p + 0x30));
        print_product_id(f, slot, "MEMORY_SUBSYSTEM_CONTROLLER_PRODUCT_ID", le16(p + 0x32));
        if (d->length < 0x3c)
                return;

        print_size_detail(f, slot, "NON_VOLATILE_SIZE", le64(p + 0x34));
        if (d->length < 0x44)
                return;

        print_size_detail(f, slot, "VOLATILE_SIZE", le64(p + 0x3c));
        if (d->length < 0x4c)
                return;

        print_size_detail(f, slot, "CACHE_SIZE", le64(p + 0x44));
        if (d->length < 0x54)
                return;

        print_size_detail(f, slot, "LOGICAL_SIZE", le64(p + 0x4c));
}

void smbios_memory_print(const uint8_t *table, size_t len, uint16_t count, FILE *f)
{
        const uint8_t *p = table;
        unsigned slots = 0;

        for (unsigned i = 0; (i < count || count == 0) && len >= 4 && (size_t)(p - table) <= len - 4;
             i++) {
                struct dmi_struct d = {
                        .type = p[0],
                        .length = p[1],
                        .data = p,
                };
                size_t off, end;

                /* a header shorter than itself: the next one cannot be found */
                if (d.length < 4)
                        break;
                if (d.type == 127) /* end of table */
                        break;

                /* the structure ends after the first double NUL past its
                 * formatted area; it must lie within the table */
                off = (size_t)(p - table) + d.length;
                while (off + 1 < len && (table[off] != 0 || table[off + 1] != 0))
                        off++;
                end = off + 2;
                if (end > len)
                        break;
                d.end = table + end;

                if (d.type == 16)
                        decode_memory_array(f, &d);
                else if (d.type == 17)
                        decode_memory_device(f, &d, slots++);
                p = d.end;
        }
        if (slots > 0)
                fprintf(f, "MEMORY_ARRAY_NUM_DEVICES=%u\n", slots);
}

/* Read at most max bytes from offset of path: 0 with *ret (caller frees)
 * and *ret_len, which is shorter at the end of the file, or -errno. */
static int read_part(const char *path, uint64_t offset, size_t max, uint8_t **ret,
                     size_t *ret_len)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        _cleanup_free_ uint8_t *buf = NULL;
        struct stat st;
        size_t n = 0;

        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (S_ISREG(st.st_mode) && st.st_size > 0)
                max = offset >= (uint64_t)st.st_size ? 0 : MIN(max, (size_t)((uint64_t)st.st_size - offset));
        if (offset > (uint64_t)INT64_MAX)
                return -EINVAL;
        buf = malloc(max ? max : 1);
        if (!buf)
                return -ENOMEM;
        while (n < max) {
                ssize_t k = pread(fd, buf + n, max - n, (off_t)(offset + n));

                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (k == 0)
                        break;
                n += (size_t)k;
        }
        *ret = TAKE_PTR(buf);
        *ret_len = n;
        return 0;
}

int smbios_memory_run(const char *entry_path, const char *table_path, bool at_address, FILE *f)
{
        _cleanup_free_ uint8_t *entry = NULL, *table = NULL;
        struct smbios_table_ref ref;
        size_t entry_len, table_len;
        int r;

        r = read_part(entry_path, 0, SMBIOS_ENTRY_POINT_MAX, &entry, &entry_len);
        if (r < 0)
                /* no SMBIOS on this machine is not worth a message */
                return log_full_errno(!at_address && r == -ENOENT ? LOG_DEBUG : LOG_ERR, r,
                                      "Reading \"%s\" failed: %m", entry_path);
        r = smbios_parse_entry_point(entry, entry_len, &ref);
        if (r < 0)
                return r;
        r = read_part(table_path, at_address ? ref.address : 0,
                      MIN((size_t)ref.length, (size_t)TABLE_MAX), &table, &table_len);
        if (r < 0)
                return log_error_errno(r, "Failed to read table: %m");
        smbios_memory_print(table, table_len, ref.count, f);
        return 0;
}
