/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (type definitions only) */
#pragma once
/* On-disk layout of hwdb.bin (systemd's format, as systemd-hwdb and
 * `udevadm hwdb --update` write it), shared by the reader (hwdb-reader.c)
 * and the compiler (hwdb-compile.c). Every integer is little-endian, every
 * structure packed; offsets count from the start of the file and strings are
 * NUL-terminated.
 *
 *   header | nodes (each followed by its child entries, then its value
 *   entries) | strings
 *
 * A reader must take the three entry sizes from the header (newer writers may
 * append fields). Version 1 value entries are struct hwdb_value_f; versions
 * 2/3 are struct hwdb_value2_f (file priority 0 = version 2). */

#include <stdint.h>

#define HWDB_SIG "KSLPHHRH"

struct hwdb_header_f {
        uint8_t signature[8];
        uint64_t tool_version;
        uint64_t file_size;
        uint64_t header_size;
        uint64_t node_size;
        uint64_t child_entry_size;
        uint64_t value_entry_size;
        uint64_t nodes_root_off;
        uint64_t nodes_len;
        uint64_t strings_len;
} __attribute__((packed));

struct hwdb_node_f {
        uint64_t prefix_off;
        uint8_t children_count;
        uint8_t padding[7];
        uint64_t values_count;
} __attribute__((packed));

struct hwdb_child_f {
        uint8_t c;
        uint8_t padding[7];
        uint64_t child_off;
} __attribute__((packed));

struct hwdb_value_f {
        uint64_t key_off;
        uint64_t value_off;
} __attribute__((packed));

struct hwdb_value2_f {
        uint64_t key_off;
        uint64_t value_off;
        uint64_t filename_off;
        uint32_t line_number;
        uint16_t file_priority;
        uint16_t padding;
} __attribute__((packed));

_Static_assert(sizeof(struct hwdb_header_f) == 80, "hwdb header size");
_Static_assert(sizeof(struct hwdb_node_f) == 24, "hwdb node size");
_Static_assert(sizeof(struct hwdb_child_f) == 16, "hwdb child entry size");
_Static_assert(sizeof(struct hwdb_value_f) == 16, "hwdb value entry size");
_Static_assert(sizeof(struct hwdb_value2_f) == 32, "hwdb value entry v2 size");
