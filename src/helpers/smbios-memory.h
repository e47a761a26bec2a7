/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (no state outside the call) */
#pragma once
/* The decoder of the dmi_memory_id program: the SMBIOS entry point (SMBIOS
 * 3 "_SM3_", SMBIOS 2 "_SM_", legacy "_DMI_") and, in the structure table,
 * the Physical Memory Arrays used as system memory (type 16) and the Memory
 * Devices (type 17), printed as MEMORY_ARRAY_* and MEMORY_DEVICE_<n>_* lines
 * with the names, values, order and quirks of systemd 252's dmi_memory_id
 * (SMBIOS 3.3 fields; e.g. a voltage of 1.2 V prints as "1", as there).
 *
 * Every structure is checked to lie within the table, strings within their
 * structure. Strings that are not valid UTF-8 or hold control characters
 * (after stripping surrounding whitespace) are left out, as Debian's 252
 * does, so no firmware string can start a property line of its own. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SMBIOS_ENTRY_POINT_MAX 0x20 /* bytes of the entry point file read */

/* Where the structure table is, from the entry point. */
struct smbios_table_ref {
        uint64_t address; /* file offset in a dump (dmidecode --dump-bin) */
        uint32_t length;  /* maximum length for SMBIOS 3 */
        uint16_t count;   /* number of structures, 0 = unknown (SMBIOS 3) */
};

/* Parse the entry point in buf[0..size-1] (at most SMBIOS_ENTRY_POINT_MAX
 * bytes are looked at). 0 and *ret; -EINVAL without a known signature
 * (nothing logged, as systemd) or, logged as errors, for a length field too
 * large or a bad checksum. */
int smbios_parse_entry_point(const uint8_t *buf, size_t size, struct smbios_table_ref *ret);

/* Decode the structure table table[0..len-1] (count structures at most, 0 =
 * until the end or the end-of-table structure) and print the properties to
 * f. Never reads outside the table. */
void smbios_memory_print(const uint8_t *table, size_t len, uint16_t count, FILE *f);

/* dmi_memory_id's work: the entry point from entry_path, the table from
 * table_path (at the address the entry point names when at_address, as in a
 * dump, else from its start, as the kernel's DMI file), the properties to f.
 * 0, or -errno when a file cannot be read or the entry point is not
 * recognised (-EINVAL); failures are logged as systemd logs them (a missing
 * kernel entry point only at debug level). */
int smbios_memory_run(const char *entry_path, const char *table_path, bool at_address, FILE *f);
