/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: test (main only) */
#include <errno.h>
#include <string.h>

#include "proto/event-scope.h"
#include "shared/tests.h"

static void test_devpath_below(void)
{
        ASSERT_TRUE(event_scope_devpath_below("/devices/a", "/devices/a"));
        ASSERT_TRUE(event_scope_devpath_below("/devices/a", "/devices/a/b"));
        ASSERT_TRUE(event_scope_devpath_below("/devices/a", "/devices/a/b/c"));
        ASSERT_TRUE(!event_scope_devpath_below("/devices/a", "/devices/ab"));
        ASSERT_TRUE(!event_scope_devpath_below("/devices/a", "/devices/ab/c"));
        ASSERT_TRUE(!event_scope_devpath_below("/devices/a", "/devices"));
        ASSERT_TRUE(!event_scope_devpath_below("/devices/a/b", "/devices/a"));
        ASSERT_TRUE(!event_scope_devpath_below("/devices/a", ""));
        ASSERT_TRUE(event_scope_devpath_below("", "/devices/x"));
}

static void test_match(void)
{
        struct event_scope s = {};

        /* empty scope: everything */
        ASSERT_TRUE(event_scope_match(&s, 5, "net", "/devices/virtual/net/a"));

        /* seqnum: the event's first covered SEQNUM counts */
        s.seqnum = 10;
        ASSERT_TRUE(event_scope_match(&s, 10, "net", "/x"));
        ASSERT_TRUE(event_scope_match(&s, 3, "net", "/x"));
        ASSERT_TRUE(!event_scope_match(&s, 11, "net", "/x"));
        /* a merged change: own SEQNUM 15, first 8 <= 10: still pending for 10 */
        ASSERT_TRUE(event_scope_match(&s, 8, "net", "/x"));

        /* every given key must match */
        s.seqnum = 0;
        strcpy(s.subsystem, "block");
        ASSERT_TRUE(event_scope_match(&s, 1, "block", "/devices/virtual/block/loop0"));
        ASSERT_TRUE(!event_scope_match(&s, 1, "net", "/devices/virtual/net/a"));
        ASSERT_TRUE(!event_scope_match(&s, 1, NULL, "/devices/virtual/net/a"));
        ASSERT_TRUE(!event_scope_match(&s, 1, "blocks", "/devices/virtual/block/loop0"));

        strcpy(s.devpath, "/devices/virtual/block/loop0");
        ASSERT_TRUE(event_scope_match(&s, 1, "block", "/devices/virtual/block/loop0"));
        ASSERT_TRUE(event_scope_match(&s, 1, "block", "/devices/virtual/block/loop0/loop0p1"));
        ASSERT_TRUE(!event_scope_match(&s, 1, "block", "/devices/virtual/block/loop01"));
        ASSERT_TRUE(!event_scope_match(&s, 1, "bdi", "/devices/virtual/block/loop0/x"));
        s.seqnum = 4;
        ASSERT_TRUE(!event_scope_match(&s, 5, "block", "/devices/virtual/block/loop0"));
        ASSERT_TRUE(event_scope_match(&s, 4, "block", "/devices/virtual/block/loop0"));
}

static void test_parse(void)
{
        struct event_scope s;

        ASSERT_EQ(event_scope_parse("", &s), 0);
        ASSERT_TRUE(event_scope_is_empty(&s));

        ASSERT_EQ(event_scope_parse("seqnum=42", &s), 0);
        ASSERT_EQ(s.seqnum, 42);
        ASSERT_TRUE(!s.subsystem[0] && !s.devpath[0]);

        ASSERT_EQ(event_scope_parse("seqnum=18446744073709551615 subsystem=net "
                                    "devpath=/devices/a b/c",
                                    &s),
                  0);
        ASSERT_EQ(s.seqnum, UINT64_MAX);
        ASSERT_STREQ(s.subsystem, "net");
        ASSERT_STREQ(s.devpath, "/devices/a b/c");

        ASSERT_EQ(event_scope_parse("devpath=/devices/x", &s), 0);
        ASSERT_STREQ(s.devpath, "/devices/x");
        ASSERT_EQ(s.seqnum, 0);

        static const char *const bad[] = {
                "seqnum=0", "seqnum=", "seqnum=-1", "seqnum=1x", "seqnum=+1",
                "seqnum=18446744073709551616", "subsystem=", "devpath=", "devpath=x",
                "devpath=/", "devpath=/a/", "subsystem=net seqnum=1", "seqnum=1 seqnum=2",
                "subsystem=a subsystem=b", "devpath=/a\tb", "other=1", "seqnum=1 ", " seqnum=1",
                "seqnum=1  subsystem=a", "subsystem=a\x01",
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                int r = event_scope_parse(bad[i], &s);
                if (r != -EINVAL)
                        fprintf(stderr, "\"%s\": %d\n", bad[i], r);
                ASSERT_EQ(r, -EINVAL);
        }
        char longsub[100];
        memset(longsub, 'a', sizeof(longsub));
        memcpy(longsub, "subsystem=", 10);
        longsub[sizeof(longsub) - 1] = '\0';
        ASSERT_EQ(event_scope_parse(longsub, &s), -ENAMETOOLONG);
}

static void test_format_round_trip(void)
{
        struct event_scope s = { .seqnum = 7 }, back;
        char buf[256];

        ASSERT_EQ(event_scope_format(&s, "pending", buf, sizeof(buf)), 16);
        ASSERT_STREQ(buf, "pending seqnum=7");
        strcpy(s.subsystem, "block");
        strcpy(s.devpath, "/devices/virtual/block/loop1");
        ASSERT_TRUE(event_scope_format(&s, "pending-count", buf, sizeof(buf)) > 0);
        ASSERT_STREQ(buf, "pending-count seqnum=7 subsystem=block "
                          "devpath=/devices/virtual/block/loop1");
        ASSERT_EQ(event_scope_parse(strchr(buf, ' ') + 1, &back), 0);
        ASSERT_EQ(back.seqnum, 7);
        ASSERT_STREQ(back.subsystem, "block");
        ASSERT_STREQ(back.devpath, s.devpath);

        struct event_scope e = {};
        ASSERT_EQ(event_scope_format(&e, "pending", buf, sizeof(buf)), 7);
        ASSERT_STREQ(buf, "pending");

        /* too long for the buffer (a query holds at most 255 bytes) */
        memset(s.devpath, 'x', sizeof(s.devpath) - 1);
        s.devpath[0] = '/';
        s.devpath[sizeof(s.devpath) - 1] = '\0';
        ASSERT_EQ(event_scope_format(&s, "pending", buf, sizeof(buf)), -ENAMETOOLONG);
        ASSERT_EQ(event_scope_format(&e, "pending", buf, 7), -ENAMETOOLONG);
        /* unparseable values are refused */
        strcpy(s.devpath, "devices/x");
        ASSERT_EQ(event_scope_format(&s, "pending", buf, sizeof(buf)), -EINVAL);
        strcpy(s.devpath, "/devices/x");
        strcpy(s.subsystem, "a b");
        ASSERT_EQ(event_scope_format(&s, "pending", buf, sizeof(buf)), -EINVAL);
}

int main(void)
{
        TEST_RUN(test_devpath_below);
        TEST_RUN(test_match);
        TEST_RUN(test_parse);
        TEST_RUN(test_format_round_trip);
        return 0;
}
