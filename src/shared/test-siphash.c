/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: test (single thread) */
#include <stdint.h>
#include <string.h>

#include "shared/macro.h"
#include "shared/siphash.h"
#include "shared/tests.h"

/* The 64 test vectors of the SipHash-2-4 reference implementation: key
 * 00 01 .. 0f, message i = the bytes 00 01 .. (i-1), the 8 output bytes read
 * as a little-endian word. */
static const uint64_t vectors[64] = {
        0x726fdb47dd0e0e31ULL, 0x74f839c593dc67fdULL, 0x0d6c8009d9a94f5aULL,
        0x85676696d7fb7e2dULL, 0xcf2794e0277187b7ULL, 0x18765564cd99a68dULL,
        0xcbc9466e58fee3ceULL, 0xab0200f58b01d137ULL, 0x93f5f5799a932462ULL,
        0x9e0082df0ba9e4b0ULL, 0x7a5dbbc594ddb9f3ULL, 0xf4b32f46226bada7ULL,
        0x751e8fbc860ee5fbULL, 0x14ea5627c0843d90ULL, 0xf723ca908e7af2eeULL,
        0xa129ca6149be45e5ULL, 0x3f2acc7f57c29bdbULL, 0x699ae9f52cbe4794ULL,
        0x4bc1b3f0968dd39cULL, 0xbb6dc91da77961bdULL, 0xbed65cf21aa2ee98ULL,
        0xd0f2cbb02e3b67c7ULL, 0x93536795e3a33e88ULL, 0xa80c038ccd5ccec8ULL,
        0xb8ad50c6f649af94ULL, 0xbce192de8a85b8eaULL, 0x17d835b85bbb15f3ULL,
        0x2f2e6163076bcfadULL, 0xde4daaaca71dc9a5ULL, 0xa6a2506687956571ULL,
        0xad87a3535c49ef28ULL, 0x32d892fad841c342ULL, 0x7127512f72f27cceULL,
        0xa7f32346f95978e3ULL, 0x12e0b01abb051238ULL, 0x15e034d40fa197aeULL,
        0x314dffbe0815a3b4ULL, 0x027990f029623981ULL, 0xcadcd4e59ef40c4dULL,
        0x9abfd8766a33735cULL, 0x0e3ea96b5304a7d0ULL, 0xad0c42d6fc585992ULL,
        0x187306c89bc215a9ULL, 0xd4a60abcf3792b95ULL, 0xf935451de4f21df2ULL,
        0xa9538f0419755787ULL, 0xdb9acddff56ca510ULL, 0xd06c98cd5c0975ebULL,
        0xe612a3cb9ecba951ULL, 0xc766e62cfcadaf96ULL, 0xee64435a9752fe72ULL,
        0xa192d576b245165aULL, 0x0a8787bf8ecb74b2ULL, 0x81b3e73d20b49b6fULL,
        0x7fa8220ba3b2eceaULL, 0x245731c13ca42499ULL, 0xb78dbfaf3a8d83bdULL,
        0xea1ad565322a1a0bULL, 0x60e61c23a3795013ULL, 0x6606d7e446282b93ULL,
        0x6ca4ecb15c5f91e1ULL, 0x9f626da15c9625f3ULL, 0xe51b38608ef25f57ULL,
        0x958a324ceb064572ULL,
};

static void fill(uint8_t key[16], uint8_t msg[64])
{
        for (int i = 0; i < 16; i++)
                key[i] = (uint8_t)i;
        for (int i = 0; i < 64; i++)
                msg[i] = (uint8_t)i;
}

static void test_reference_vectors(void)
{
        uint8_t key[16], msg[64];

        fill(key, msg);
        for (size_t i = 0; i < ARRAY_SIZE(vectors); i++) {
                if (siphash24(msg, i, key) != vectors[i])
                        fprintf(stderr, "message length %zu\n", i);
                ASSERT_TRUE(siphash24(msg, i, key) == vectors[i]);
        }
}

static void test_paper_vectors(void)
{
        uint8_t key[16], msg[64];

        /* Appendix A of the SipHash paper: key 00..0f, message 00..0e */
        fill(key, msg);
        ASSERT_TRUE(siphash24(msg, 15, key) == UINT64_C(0xa129ca6149be45e5));
        /* the empty message, 7/8/9 bytes (the block edges) and the longest,
         * as the reference's vectors.h prints them (bytes, little-endian) */
        ASSERT_TRUE(siphash24(NULL, 0, key) == UINT64_C(0x726fdb47dd0e0e31));
        ASSERT_TRUE(siphash24(msg, 7, key) == UINT64_C(0xab0200f58b01d137));
        ASSERT_TRUE(siphash24(msg, 8, key) == UINT64_C(0x93f5f5799a932462));
        ASSERT_TRUE(siphash24(msg, 9, key) == UINT64_C(0x9e0082df0ba9e4b0));
        ASSERT_TRUE(siphash24(msg, 63, key) == UINT64_C(0x958a324ceb064572));
}

static void test_alignment_and_key(void)
{
        uint8_t key[16], msg[64], buf[64 + 8], key2[16 + 3];

        /* the same bytes at every misalignment give the same value */
        fill(key, msg);
        for (size_t off = 0; off < 8; off++) {
                memcpy(buf + off, msg, 40);
                ASSERT_TRUE(siphash24(buf + off, 40, key) == vectors[40]);
        }
        memcpy(key2 + 3, key, 16);
        ASSERT_TRUE(siphash24(msg, 33, key2 + 3) == vectors[33]);
        /* every key byte counts */
        for (int i = 0; i < 16; i++) {
                key[i] ^= 0x80;
                ASSERT_TRUE(siphash24(msg, 15, key) != vectors[15]);
                key[i] ^= 0x80;
        }
}

int main(void)
{
        TEST_RUN(test_reference_vectors);
        TEST_RUN(test_paper_vectors);
        TEST_RUN(test_alignment_and_key);
        return 0;
}
