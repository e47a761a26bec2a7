/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (a pure function of its arguments) */
#pragma once
/* SipHash-2-4 (Aumasson & Bernstein), the keyed 64-bit hash systemd uses
 * where tudev must reproduce its values byte for byte: the names of the
 * stack directories under /run/udev/links/ whose link name is too long
 * (device/node.c) and the "persistent" MAC addresses net_setup_link derives
 * from the machine id (builtins/net_setup_link.c).
 *
 * The key is read as two little-endian 64-bit words, the message in
 * little-endian 8-byte blocks, and the result is the 64-bit value the
 * reference implementation stores little-endian (its test vector for key
 * 00..0f and message 00..0e is 0xa129ca6149be45e5). */

#include <stddef.h>
#include <stdint.h>

/* The hash of in[0..len-1] (in may be NULL when len is 0). */
uint64_t siphash24(const void *in, size_t len, const uint8_t key[16]);
