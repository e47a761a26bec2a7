/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: test (single-threaded) */
/* The prober's output format (probe/blkid-wire.h): escaping round trips for
 * every byte, and every way a line can break the format is refused. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/blkid-wire.h"
#include "shared/macro.h"
#include "shared/tests.h"

/* Parse one whole output (copied to an exact-size heap buffer so ASan sees
 * over-reads); returns the last blkid_wire_next() result, the number of
 * records in *n, the last record's value copied to last (if any). */
static int parse_all(const char *text, size_t *n, char *last, size_t last_size)
{
        size_t len = strlen(text), pos = 0;
        char *buf = malloc(len + 1), *key, *value;
        int r;

        ASSERT_TRUE(buf);
        memcpy(buf, text, len + 1);
        *n = 0;
        while ((r = blkid_wire_next(buf, len, &pos, &key, &value)) > 0) {
                (*n)++;
                if (last)
                        snprintf(last, last_size, "%s", value);
        }
        free(buf);
        return r;
}

static void test_roundtrip_all_bytes(void)
{
        char value[256], esc[4 * 256 + 1], line[4 * 256 + 16], got[512];
        size_t n;

        for (int c = 1; c < 256; c++)
                value[c - 1] = (char)c;
        value[255] = '\0';
        ASSERT_TRUE(blkid_wire_escape(value, esc, sizeof(esc)) > 0);
        for (const char *p = esc; *p; p++)
                ASSERT_TRUE((unsigned char)*p >= 0x20 && *p != 0x7f);
        snprintf(line, sizeof(line), "ID_X=%s\n", esc);
        ASSERT_EQ(parse_all(line, &n, got, sizeof(got)), 0);
        ASSERT_EQ(n, 1);
        ASSERT_STREQ(got, value);
}

static void test_escape_bounds(void)
{
        char small[8];

        ASSERT_EQ(blkid_wire_escape("abc", small, sizeof(small)), 3);
        ASSERT_STREQ(small, "abc");
        ASSERT_EQ(blkid_wire_escape("\n\n", small, sizeof(small)), -ENOBUFS);
        ASSERT_EQ(blkid_wire_escape("", small, 1), 0);
        ASSERT_EQ(blkid_wire_escape("a", small, 1), -ENOBUFS);
}

static void test_valid_output(void)
{
        char got[64];
        size_t n;

        ASSERT_EQ(parse_all("", &n, NULL, 0), 0);
        ASSERT_EQ(n, 0);
        ASSERT_EQ(parse_all("ID_FS_TYPE=ext4\nID_FS_LABEL=a\\x5cb\\x0a\n.GPT_ROOT=x\n"
                            "ID_PART_ENTRY_lower_9=\n",
                            &n, got, sizeof(got)),
                  0);
        ASSERT_EQ(n, 4);
        ASSERT_STREQ(got, "");
        ASSERT_EQ(parse_all("ID_A=\xc3\xa4=\xff\n", &n, got, sizeof(got)), 0);
        ASSERT_STREQ(got, "\xc3\xa4=\xff");
}

static void test_refused(void)
{
        static const char *const bad[] = {
                "ID_A=1",            /* no newline at the end */
                "ID_A\n",            /* no '=' */
                "=1\n",              /* empty key */
                "DEVNAME=/dev/x\n",  /* not ID_ */
                "ID_=1\n",           /* nothing after ID_ */
                "ID_A-B=1\n",        /* bad key charset */
                "id_a=1\n",
                ".=1\n",
                ".lower=1\n",
                "ID_A=a\tb\n",       /* raw control byte */
                "ID_A=a\rb\n",
                "ID_A=a\x7f\n",
                "ID_A=a\\b\n",       /* a backslash that is no \xHH */
                "ID_A=a\\x4\n",
                "ID_A=a\\xg0\n",
                "ID_A=a\\\n",
                "ID_A=a\\x00b\n",    /* an escaped NUL */
                "ID_A=1\nID_B=2",    /* good line, then a cut one */
        };
        size_t n;

        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                if (parse_all(bad[i], &n, NULL, 0) != -EBADMSG) {
                        fprintf(stderr, "accepted: \"%s\"\n", bad[i]);
                        ASSERT_TRUE(false);
                }
        }
}

static void test_limits(void)
{
        size_t klen = BLKID_WIRE_KEY_MAX + 1, vlen = BLKID_WIRE_VALUE_MAX;
        char *text = malloc(klen + 4 * vlen + 8);
        size_t n;

        ASSERT_TRUE(text);
        /* longest key, longest value (escaped): accepted; one more: refused */
        memset(text, 'K', klen);
        memcpy(text, "ID_", 3);
        text[klen - 1] = '=';
        for (size_t i = 0; i < vlen; i++)
                memcpy(text + klen + 4 * i, "\\x41", 4);
        strcpy(text + klen + 4 * vlen, "\n");
        ASSERT_EQ(parse_all(text, &n, NULL, 0), 0);
        ASSERT_EQ(n, 1);
        strcpy(text + klen + 4 * vlen, "B\n");
        ASSERT_EQ(parse_all(text, &n, NULL, 0), -EBADMSG);
        text[klen - 1] = 'K';
        text[klen] = '=';
        strcpy(text + klen + 1, "1\n");
        ASSERT_EQ(parse_all(text, &n, NULL, 0), -EBADMSG);
        free(text);
}

static void test_id128(void)
{
        uint8_t a[16], b[16];

        ASSERT_EQ(blkid_wire_parse_id128("C12A7328-F81F-11D2-BA4B-00A0C93EC93B", a), 0);
        ASSERT_EQ(blkid_wire_parse_id128("c12a7328f81f11d2ba4b00a0c93ec93b", b), 0);
        ASSERT_TRUE(memcmp(a, b, 16) == 0);
        ASSERT_EQ(a[0], 0xc1);
        ASSERT_EQ(a[15], 0x3b);
        ASSERT_EQ(blkid_wire_parse_id128(NULL, a), -EINVAL);
        ASSERT_EQ(blkid_wire_parse_id128("", a), -EINVAL);
        ASSERT_EQ(blkid_wire_parse_id128("c12a7328-f81f-11d2-ba4b-00a0c93ec93", a), -EINVAL);
        ASSERT_EQ(blkid_wire_parse_id128("c12a7328xf81f-11d2-ba4b-00a0c93ec93b", a), -EINVAL);
        ASSERT_EQ(blkid_wire_parse_id128("g12a7328f81f11d2ba4b00a0c93ec93b", a), -EINVAL);
}

int main(void)
{
        TEST_RUN(test_roundtrip_all_bytes);
        TEST_RUN(test_escape_bounds);
        TEST_RUN(test_valid_output);
        TEST_RUN(test_refused);
        TEST_RUN(test_limits);
        TEST_RUN(test_id128);
        return 0;
}
