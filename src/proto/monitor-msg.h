/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any */
#pragma once
/* The libudev netlink wire format (group 2), byte-exact with systemd's
 * sd-device monitor, which libudev and sd-device clients parse:
 *
 *   40-byte header  | "UDEV_DATABASE_VERSION=1\0" "KEY=VALUE\0" ...
 *
 * magic, hashes and bloom words are big-endian; header_size, properties_off
 * and properties_len are host-endian. */

#include <stddef.h>
#include <stdint.h>

#define MONITOR_MSG_HEADER_SIZE 40
#define MONITOR_MSG_MAGIC 0xfeedcafeU
#define MONITOR_MSG_MAX (64 * 1024) /* largest message we build or accept */

struct monitor_msg_header {
        char prefix[8];          /* "libudev\0" */
        uint32_t magic_be;       /* htobe32(0xfeedcafe) */
        uint32_t header_size;    /* 40 */
        uint32_t properties_off; /* 40 */
        uint32_t properties_len;
        uint32_t subsystem_hash_be;
        uint32_t devtype_hash_be;
        uint32_t tag_bloom_hi_be;
        uint32_t tag_bloom_lo_be;
};
_Static_assert(sizeof(struct monitor_msg_header) == 40, "libudev header must be 40 bytes");

/* Austin Appleby's 32-bit MurmurHash2, seed 0, host-endian block reads. */
uint32_t murmur_hash2(const void *key, size_t len, uint32_t seed);
/* 64-bit bloom bits of one tag (4 bits from MurmurHash2(tag)). */
uint64_t monitor_tag_bloom(const char *tag);

/* Builder. `props` is a sequence of "KEY=VALUE\0" strings of total length
 * `props_len` (each NUL counted), which must NOT include the
 * UDEV_DATABASE_VERSION marker: the encoder writes it first.
 * `tags` is a NULL-terminated array of all (sticky) tags, or NULL.
 * Writes header + marker + props into `out` (capacity `size`) and returns the
 * total length, or -ENOBUFS if it does not fit, -EINVAL on bad arguments
 * (subsystem NULL, property buffer shorter than 32 bytes in total). */
int monitor_msg_encode(void *out, size_t size, const char *subsystem, const char *devtype,
                       const char *const *tags, const char *props, size_t props_len);

/* Decoder used by udevadm monitor and tests: validates prefix, magic, offsets
 * (properties_off + 32 <= len, properties from properties_off to the end as
 * libudev does) and returns a pointer/length of the property area.
 * Returns 0 or -EBADMSG. */
int monitor_msg_decode(const void *msg, size_t len, const char **props, size_t *props_len);
