/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/* FNV-1a, 64 bits: a quick, non-cryptographic hash for small in-process
 * tables and fingerprints (never for anything an attacker can pick to
 * collide on purpose where that would matter). */

#include <stddef.h>
#include <stdint.h>

#define FNV1A64_INIT UINT64_C(14695981039346656037)

static inline uint64_t fnv1a64(uint64_t h, const void *data, size_t n)
{
        const unsigned char *p = data;

        for (size_t i = 0; i < n; i++)
                h = (h ^ p[i]) * UINT64_C(1099511628211);
        return h;
}
