/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: test (single thread) */
/* Unit tests of rules-perm: the MODE= and OWNER=/GROUP= values systemd 252
 * accepts and refuses (parse_mode(), parse_uid(), get_user_creds()). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "rules/rules-perm.h"
#include "shared/macro.h"
#include "shared/tests.h"

static void test_parse_mode(void)
{
        static const struct {
                const char *s;
                int r;
                mode_t mode;
        } cases[] = {
                { "0660", 0, 0660 },       { "660", 0, 0660 },
                { " 660", 0, 0660 },       { "\t\n\r 0600", 0, 0600 },
                { "0", 0, 0 },             { "00000644", 0, 0644 },
                { "07777", 0, 07777 },     { "1777", 0, 01777 },
                { "7777", 0, 07777 },      { "12345", -ERANGE, 0 },
                { "010000", -ERANGE, 0 },  { "99999999999999999999999", -EINVAL, 0 },
                { "77777777777777777777777", -ERANGE, 0 },
                { "", -EINVAL, 0 },        { " ", -EINVAL, 0 },
                { "+660", -EINVAL, 0 },    { "-660", -EINVAL, 0 },
                { "-0", -EINVAL, 0 },      { " +660", -EINVAL, 0 },
                { "0o660", -EINVAL, 0 },   { "0x1b6", -EINVAL, 0 },
                { "660 ", -EINVAL, 0 },    { "660\n", -EINVAL, 0 },
                { "8", -EINVAL, 0 },       { "0668", -EINVAL, 0 },
                { "u+rw", -EINVAL, 0 },    { "rw-rw----", -EINVAL, 0 },
        };

        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                mode_t m = 01234;
                int r = rules_parse_mode(cases[i].s, &m);

                if (r != cases[i].r)
                        fprintf(stderr, "\"%s\"\n", cases[i].s);
                ASSERT_EQ(r, cases[i].r);
                ASSERT_EQ(m, r == 0 ? cases[i].mode : 01234); /* untouched on error */
        }
        ASSERT_EQ(rules_parse_mode("0644", NULL), 0);
}

static void test_parse_id(void)
{
        static const struct {
                const char *s;
                int r;
                uint32_t id;
        } cases[] = {
                { "0", 0, 0 },
                { "1", 0, 1 },
                { "1000", 0, 1000 },
                { "65534", 0, 65534 },
                { "65536", 0, 65536 },
                { "4294967294", 0, 4294967294u },
                { "65535", -ENXIO, 0 },      /* 16-bit (uid_t)-1 */
                { "4294967295", -ENXIO, 0 }, /* (uid_t)-1 */
                { "4294967296", -ERANGE, 0 },
                { "", -EINVAL, 0 },
                { "00", -EINVAL, 0 },
                { "0123", -EINVAL, 0 },
                { "+1", -EINVAL, 0 },
                { "-1", -EINVAL, 0 },
                { " 1", -EINVAL, 0 },
                { "1 ", -EINVAL, 0 },
                { "0x10", -EINVAL, 0 },
                { "1a", -EINVAL, 0 },
                { "root", -EINVAL, 0 },
        };

        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                uint32_t id = 77;
                int r = rules_parse_id(cases[i].s, &id);

                if (r != cases[i].r)
                        fprintf(stderr, "\"%s\"\n", cases[i].s);
                ASSERT_EQ(r, cases[i].r);
                ASSERT_EQ(id, r == 0 ? cases[i].id : 77);
        }
}

static void test_resolve_id(void)
{
        uint32_t id;

        for (int group = 0; group <= 1; group++) {
                /* root and numbers without NSS; a number need not be known */
                id = 1;
                ASSERT_EQ(rules_resolve_id(group, "root", &id), 0);
                ASSERT_EQ(id, 0);
                ASSERT_EQ(rules_resolve_id(group, "0", &id), 0);
                ASSERT_EQ(id, 0);
                ASSERT_EQ(rules_resolve_id(group, "3999999999", &id), 0);
                ASSERT_EQ(id, 3999999999u);
                /* no number: names, unknown here */
                ASSERT_EQ(rules_resolve_id(group, "0123", &id), -ESRCH);
                ASSERT_EQ(rules_resolve_id(group, "65535", &id), -ESRCH);
                ASSERT_EQ(rules_resolve_id(group, "4294967295", &id), -ESRCH);
                ASSERT_EQ(rules_resolve_id(group, "+5", &id), -ESRCH);
                ASSERT_EQ(rules_resolve_id(group, " 5", &id), -ESRCH);
                ASSERT_EQ(rules_resolve_id(group, "nosuch-tudev-name", &id), -ESRCH);
                ASSERT_EQ(id, 3999999999u); /* untouched on error */
        }
        /* nobody/nogroup: NSS's id, else 65534 (Debian's is 65534 either way) */
        ASSERT_EQ(rules_resolve_id(false, "nobody", &id), 0);
        ASSERT_EQ(id, RULES_ID_NOBODY);
        ASSERT_EQ(rules_resolve_id(true, "nogroup", &id), 0);
        ASSERT_EQ(id, RULES_ID_NOBODY);
}

int main(void)
{
        TEST_RUN(test_parse_mode);
        TEST_RUN(test_parse_id);
        TEST_RUN(test_resolve_id);
        return 0;
}
