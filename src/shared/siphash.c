/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (no state; see siphash.h) */
#include <stddef.h>
#include <stdint.h>

#include "shared/siphash.h"

static uint64_t rotl64(uint64_t x, unsigned b)
{
        return (x << b) | (x >> (64 - b));
}

/* bytes p[0..7] as a little-endian word, whatever the host's byte order */
static uint64_t load_le64(const uint8_t *p)
{
        uint64_t v = 0;

        for (int i = 7; i >= 0; i--)
                v = (v << 8) | p[i];
        return v;
}

static void sip_round(uint64_t v[4])
{
        v[0] += v[1];
        v[1] = rotl64(v[1], 13);
        v[1] ^= v[0];
        v[0] = rotl64(v[0], 32);
        v[2] += v[3];
        v[3] = rotl64(v[3], 16);
        v[3] ^= v[2];
        v[0] += v[3];
        v[3] = rotl64(v[3], 21);
        v[3] ^= v[0];
        v[2] += v[1];
        v[1] = rotl64(v[1], 17);
        v[1] ^= v[2];
        v[2] = rotl64(v[2], 32);
}

/* one message word: 2 compression rounds ("2" of SipHash-2-4) */
static void sip_compress(uint64_t v[4], uint64_t m)
{
        v[3] ^= m;
        sip_round(v);
        sip_round(v);
        v[0] ^= m;
}

uint64_t siphash24(const void *in, size_t len, const uint8_t key[16])
{
        const uint8_t *p = in;
        uint64_t k0 = load_le64(key), k1 = load_le64(key + 8);
        uint64_t v[4] = {
                k0 ^ UINT64_C(0x736f6d6570736575),
                k1 ^ UINT64_C(0x646f72616e646f6d),
                k0 ^ UINT64_C(0x6c7967656e657261),
                k1 ^ UINT64_C(0x7465646279746573),
        };
        size_t full = len & ~(size_t)7;
        /* the last word: the 0..7 trailing bytes, the length mod 256 on top */
        uint64_t last = (uint64_t)(len & 0xff) << 56;

        for (size_t i = 0; i < full; i += 8)
                sip_compress(v, load_le64(p + i));
        for (size_t i = 0; i < (len & 7); i++)
                last |= (uint64_t)p[full + i] << (8 * i);
        sip_compress(v, last);
        /* finalisation: 4 rounds ("4" of SipHash-2-4) */
        v[2] ^= 0xff;
        for (int i = 0; i < 4; i++)
                sip_round(v);
        return v[0] ^ v[1] ^ v[2] ^ v[3];
}
