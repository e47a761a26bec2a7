/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: test (single-threaded) */
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "proto/monitor-msg.h"
#include "shared/macro.h"
#include "shared/tests.h"

/* Test vectors: MurmurHash2 (seed 0) of some subsystem and tag names and the
 * tag bloom words (hi, lo), computed with systemd's MurmurHash2.c on x86-64. */
static const struct {
        const char *s;
        uint32_t hash, hi, lo;
} vectors[] = {
        { "block", 0xf0031db7, 0x00c20000, 0x00000001 },
        { "disk", 0x7bcbc5ee, 0x10044000, 0x00800000 },
        { "partition", 0xcb234489, 0x00100000, 0x00040300 },
        { "input", 0xc1a28470, 0x00010100, 0x00020000 },
        { "net", 0xa74d3cc8, 0x00080000, 0x00080100 },
        { "usb", 0x0577c5e5, 0x10000020, 0x20800000 },
        { "usb_device", 0x27f8f50c, 0x40000000, 0x00109000 },
        { "drm", 0x16664179, 0x02000010, 0x02000020 },
        { "sound", 0xd196ab6e, 0x00006420, 0x00000000 },
        { "tty", 0x8afa90c8, 0x40000200, 0x00000108 },
        { "systemd", 0xa75f972a, 0x02000400, 0x10800000 },
        { "seat", 0x435b3e40, 0x02080000, 0x00400001 },
        { "uaccess", 0xe88ed0cc, 0x00002008, 0x00001008 },
};

#define LOOP0_PROPS                                                                \
        "ACTION=add\0DEVPATH=/devices/virtual/block/loop0\0SUBSYSTEM=block\0"      \
        "DEVNAME=/dev/loop0\0DEVTYPE=disk\0SEQNUM=1234\0USEC_INITIALIZED=5000000\0" \
        "MAJOR=7\0MINOR=0\0TAGS=:systemd:\0CURRENT_TAGS=:systemd:\0"

static const uint8_t loop0_header[48] = {
        0x6c, 0x69, 0x62, 0x75, 0x64, 0x65, 0x76, 0x00, 0xfe, 0xed, 0xca, 0xfe,
        0x28, 0x00, 0x00, 0x00, 0x28, 0x00, 0x00, 0x00, 0xd3, 0x00, 0x00, 0x00,
        0xf0, 0x03, 0x1d, 0xb7, 0x7b, 0xcb, 0xc5, 0xee, 0x02, 0x00, 0x04, 0x00,
        0x10, 0x80, 0x00, 0x00, 0x55, 0x44, 0x45, 0x56, 0x5f, 0x44, 0x41, 0x54,
};

static bool little_endian(void) { return htole32(1) == 1; }

static void test_hash_vectors(void)
{
        if (!little_endian())
                return; /* the vectors were computed with little-endian block reads */
        for (size_t i = 0; i < ARRAY_SIZE(vectors); i++) {
                uint64_t bloom = monitor_tag_bloom(vectors[i].s);

                ASSERT_EQ(murmur_hash2(vectors[i].s, strlen(vectors[i].s), 0), vectors[i].hash);
                ASSERT_EQ((uint32_t)(bloom >> 32), vectors[i].hi);
                ASSERT_EQ((uint32_t)(bloom & 0xffffffffU), vectors[i].lo);
        }
}

static void test_hash_misc(void)
{
        /* Empty key: h = 0 ^ 0, no blocks, no tail, only the final mix. */
        ASSERT_EQ(murmur_hash2("", 0, 0), 0);
        /* The bloom of one tag has 1..4 bits set. */
        for (size_t i = 0; i < ARRAY_SIZE(vectors); i++) {
                int bits = __builtin_popcountll(monitor_tag_bloom(vectors[i].s));

                ASSERT_TRUE(bits >= 1 && bits <= 4);
        }
        ASSERT_EQ(monitor_tag_bloom(NULL), 0);
        /* Unaligned keys hash like aligned ones. */
        {
                char buf[16] = "xpartition";

                ASSERT_EQ(murmur_hash2(buf + 1, 9, 0), murmur_hash2("partition", 9, 0));
        }
}

static void test_loop0_example(void)
{
        static const char props[] = LOOP0_PROPS;
        const char *tags[] = { "systemd", NULL };
        const char *dprops;
        size_t dlen;
        uint8_t out[512];
        int n;

        n = monitor_msg_encode(out, sizeof(out), "block", "disk", tags, props, sizeof(props) - 1);
        ASSERT_EQ(n, 251);
        if (little_endian())
                ASSERT_TRUE(memcmp(out, loop0_header, sizeof(loop0_header)) == 0);
        ASSERT_TRUE(memcmp(out + 40, "UDEV_DATABASE_VERSION=1\0", 24) == 0);
        ASSERT_TRUE(memcmp(out + 64, props, sizeof(props) - 1) == 0);

        /* Decode what we produced. */
        ASSERT_EQ(monitor_msg_decode(out, (size_t)n, &dprops, &dlen), 0);
        ASSERT_EQ(dlen, 211);
        ASSERT_TRUE(dprops == (const char *)out + 40);
        ASSERT_STREQ(dprops, "UDEV_DATABASE_VERSION=1");
        ASSERT_STREQ(dprops + 24, "ACTION=add");

        /* Exactly big enough, and one byte short. */
        ASSERT_EQ(monitor_msg_encode(out, 251, "block", "disk", tags, props, sizeof(props) - 1),
                  251);
        ASSERT_EQ(monitor_msg_encode(out, 250, "block", "disk", tags, props, sizeof(props) - 1),
                  -ENOBUFS);
}

static void test_encode_fields(void)
{
        static const char props[] = "ACTION=change\0DEVPATH=/devices/x\0SUBSYSTEM=net\0";
        const char *tags[] = { "seat", "uaccess", "seat", NULL };
        struct monitor_msg_header h;
        uint8_t out[256];
        int n;

        n = monitor_msg_encode(out, sizeof(out), "net", NULL, tags, props, sizeof(props) - 1);
        ASSERT_EQ(n, 40 + 24 + (int)sizeof(props) - 1);
        memcpy(&h, out, sizeof(h));
        ASSERT_EQ(h.header_size, 40);
        ASSERT_EQ(h.properties_off, 40);
        ASSERT_EQ(h.properties_len, 24 + sizeof(props) - 1);
        ASSERT_EQ(be32toh(h.subsystem_hash_be), murmur_hash2("net", 3, 0));
        ASSERT_EQ(h.devtype_hash_be, 0);
        {
                uint64_t bloom = monitor_tag_bloom("seat") | monitor_tag_bloom("uaccess");

                ASSERT_EQ(be32toh(h.tag_bloom_hi_be), (uint32_t)(bloom >> 32));
                ASSERT_EQ(be32toh(h.tag_bloom_lo_be), (uint32_t)bloom);
        }

        /* No tags: bloom 0. */
        n = monitor_msg_encode(out, sizeof(out), "net", NULL, NULL, props, sizeof(props) - 1);
        ASSERT_TRUE(n > 0);
        memcpy(&h, out, sizeof(h));
        ASSERT_EQ(h.tag_bloom_hi_be, 0);
        ASSERT_EQ(h.tag_bloom_lo_be, 0);
}

static void test_encode_rejects(void)
{
        static const char props[] = "ACTION=add\0DEVPATH=/devices/x\0";
        uint8_t out[256];

        ASSERT_EQ(monitor_msg_encode(out, sizeof(out), NULL, NULL, NULL, props, sizeof(props) - 1),
                  -EINVAL);
        /* marker (24) + "A=b\0" (4) < 32 */
        ASSERT_EQ(monitor_msg_encode(out, sizeof(out), "x", NULL, NULL, "A=b", 4), -EINVAL);
        ASSERT_EQ(monitor_msg_encode(out, sizeof(out), "x", NULL, NULL, NULL, 0), -EINVAL);
        /* marker (24) + "ACTION=a\0" (9) = 33 is fine */
        ASSERT_EQ(monitor_msg_encode(out, sizeof(out), "x", NULL, NULL, "ACTION=a", 9), 73);
        /* not NUL-terminated, empty entry, entry without '=' */
        ASSERT_EQ(monitor_msg_encode(out, sizeof(out), "x", NULL, NULL, props, sizeof(props) - 2),
                  -EINVAL);
        ASSERT_EQ(monitor_msg_encode(out, sizeof(out), "x", NULL, NULL, "ACTION=add\0\0", 12),
                  -EINVAL);
        ASSERT_EQ(monitor_msg_encode(out, sizeof(out), "x", NULL, NULL, "ACTION=add\0FOO\0", 15),
                  -EINVAL);
        ASSERT_EQ(monitor_msg_encode(out, 10, "x", NULL, NULL, props, sizeof(props) - 1), -ENOBUFS);
}

static void test_decode_rejects(void)
{
        static const char props[] = LOOP0_PROPS;
        uint8_t msg[512], bad[512];
        struct monitor_msg_header h;
        const char *p;
        size_t plen;
        int n;

        n = monitor_msg_encode(msg, sizeof(msg), "block", "disk", NULL, props, sizeof(props) - 1);
        ASSERT_TRUE(n > 0);

        ASSERT_EQ(monitor_msg_decode(NULL, 100, &p, &plen), -EBADMSG);
        ASSERT_EQ(monitor_msg_decode(msg, 39, &p, &plen), -EBADMSG);
        ASSERT_EQ(monitor_msg_decode(msg, 71, &p, &plen), -EBADMSG); /* 40 + 32 > 71 */

        memcpy(bad, msg, (size_t)n);
        bad[0] = 'L';
        ASSERT_EQ(monitor_msg_decode(bad, (size_t)n, &p, &plen), -EBADMSG);

        memcpy(bad, msg, (size_t)n);
        bad[7] = ' ';
        ASSERT_EQ(monitor_msg_decode(bad, (size_t)n, &p, &plen), -EBADMSG);

        memcpy(bad, msg, (size_t)n);
        bad[8] = 0xfa; /* magic */
        ASSERT_EQ(monitor_msg_decode(bad, (size_t)n, &p, &plen), -EBADMSG);

        memcpy(bad, msg, (size_t)n);
        memcpy(&h, bad, sizeof(h));
        h.properties_off = (uint32_t)n - 31; /* off + 32 > len */
        memcpy(bad, &h, sizeof(h));
        ASSERT_EQ(monitor_msg_decode(bad, (size_t)n, &p, &plen), -EBADMSG);
        h.properties_off = 8; /* into the header */
        memcpy(bad, &h, sizeof(h));
        ASSERT_EQ(monitor_msg_decode(bad, (size_t)n, &p, &plen), -EBADMSG);
        h.properties_off = 0xffffffffU;
        memcpy(bad, &h, sizeof(h));
        ASSERT_EQ(monitor_msg_decode(bad, (size_t)n, &p, &plen), -EBADMSG);

        /* off + 32 == len is accepted; the properties run to the end. */
        h.properties_off = (uint32_t)n - 32;
        memcpy(bad, &h, sizeof(h));
        ASSERT_EQ(monitor_msg_decode(bad, (size_t)n, &p, &plen), 0);
        ASSERT_EQ(plen, 32);

        /* Last byte not NUL. */
        memcpy(bad, msg, (size_t)n);
        bad[n - 1] = 'x';
        ASSERT_EQ(monitor_msg_decode(bad, (size_t)n, &p, &plen), -EBADMSG);

        /* A kernel-format message is not a libudev one. */
        static const char kmsg[] = "add@/devices/x\0ACTION=add\0DEVPATH=/devices/x\0SUBSYSTEM=y";
        ASSERT_EQ(monitor_msg_decode(kmsg, sizeof(kmsg), &p, &plen),
                  -EBADMSG);
        ASSERT_EQ(monitor_msg_decode(msg, (size_t)MONITOR_MSG_MAX + 1, &p, &plen), -EBADMSG);
}

/* Every truncation and single-byte corruption must be handled without crashing. */
static void test_decode_fuzz(void)
{
        static const char props[] = LOOP0_PROPS;
        uint8_t msg[512];
        const char *p;
        size_t plen;
        int n;

        n = monitor_msg_encode(msg, sizeof(msg), "block", "disk", NULL, props, sizeof(props) - 1);
        ASSERT_TRUE(n > 0);
        for (int len = 0; len <= n; len++) {
                uint8_t *copy = malloc((size_t)len + 1);

                ASSERT_TRUE(copy);
                memcpy(copy, msg, (size_t)len);
                (void)monitor_msg_decode(copy, (size_t)len, &p, &plen);
                for (int i = 0; i < len; i++) {
                        uint8_t saved = copy[i];

                        copy[i] ^= (uint8_t)(0x5a + i);
                        if (monitor_msg_decode(copy, (size_t)len, &p, &plen) == 0)
                                ASSERT_TRUE(p >= (const char *)copy + 40 &&
                                            p + plen == (const char *)copy + len);
                        copy[i] = saved;
                }
                free(copy);
        }
}

int main(void)
{
        TEST_RUN(test_hash_vectors);
        TEST_RUN(test_hash_misc);
        TEST_RUN(test_loop0_example);
        TEST_RUN(test_encode_fields);
        TEST_RUN(test_encode_rejects);
        TEST_RUN(test_decode_rejects);
        TEST_RUN(test_decode_fuzz);
        return 0;
}
