/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (single-threaded test) */
/* Unit tests of the settle timeout report: parsing the daemon's "pending"
 * lines and the printed text. udevadm's objects are not in a library, so
 * the modules are compiled in here. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/tests.h"
#include "udevadm/pending-report.c"
#include "udevadm/udevadm-util.c"

static char *report(const char *answer, pending_keep_fn keep, void *ud, int *ret)
{
        char *text = strdup(answer), *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);

        ASSERT_TRUE(text && f);
        *ret = pending_report_print(text, keep, ud, f);
        fclose(f);
        free(text);
        return buf;
}

static void test_parse_line(void)
{
        char line[] = "12\tadd\t/devices/a\tnet\t1500\tprogram\t/bin/sleep:42:1000\t10";
        char old[] = "12\tchange\t/devices/a b\tblock\t7\tqueued\t-";
        struct pending_line l;

        ASSERT_EQ(pending_line_parse(line, &l), 0);
        ASSERT_EQ(l.seqnum, 12);
        ASSERT_EQ(l.first_seqnum, 10);
        ASSERT_EQ(l.age_usec, 1500);
        ASSERT_STREQ(l.devpath, "/devices/a");
        ASSERT_STREQ(l.detail, "/bin/sleep:42:1000");
        ASSERT_EQ(pending_line_parse(old, &l), 0); /* no FIRST_SEQNUM: its own */
        ASSERT_EQ(l.first_seqnum, 12);
        ASSERT_STREQ(l.devpath, "/devices/a b");

        static const char *const bad[] = {
                "", "12\tadd", "x\tadd\t/a\tnet\t1\tqueued\t-",
                "12\tadd\t/a\tnet\t\tqueued\t-", "12\tadd\t/a\tnet\t1\tqueued\t-\t1\textra",
                "12\tadd\t/a\tnet\t1\tqueued\t-\tx",
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                char *s = strdup(bad[i]);
                ASSERT_EQ(pending_line_parse(s, &l), -EBADMSG);
                free(s);
        }
}

static void test_print(void)
{
        int r;
        char *out = report("100\tadd\t/devices/v/net/a\tnet\t1234567\tprogram\t/bin/sleep:4242:"
                           "1200000\t100\n"
                           "101\tadd\t/devices/v/net/a/queues/rx-0\tqueues\t1000\twaiting\t100\t101\n"
                           "105\tchange\t/devices/v/block/loop0\tblock\t5\tqueued\t-\t103\n"
                           "106\tchange\t/devices/v/block/loop1\tblock\t5\tdisk-lock\t-\t106\n"
                           "107\tchange\t/devices/v/block/loop2\tblock\t5\trunning\t-\t107\n"
                           "108\tchange\t/devices/v/block/loop3\tblock\t5\twaiting\t-\t108\n",
                           NULL, NULL, &r);
        ASSERT_EQ(r, 6);
        ASSERT_STREQ(out,
                     "Events still pending (SEQNUM ACTION DEVPATH (SUBSYSTEM) for AGE: WAITS ON):\n"
                     "  100 add /devices/v/net/a (net) for 1.234s: program /bin/sleep (pid 4242, "
                     "running 1.200s)\n"
                     "  101 add /devices/v/net/a/queues/rx-0 (queues) for 0.001s: event 100\n"
                     "  103..105 change /devices/v/block/loop0 (block) for 0.000s: a free worker\n"
                     "  106 change /devices/v/block/loop1 (block) for 0.000s: a locked disk\n"
                     "  107 change /devices/v/block/loop2 (block) for 0.000s: running rules\n"
                     "  108 change /devices/v/block/loop3 (block) for 0.000s: an earlier event\n");
        free(out);

        out = report("", NULL, NULL, &r);
        ASSERT_EQ(r, 0);
        ASSERT_TRUE(strstr(out, "  (none any more)\n") != NULL);
        free(out);

        out = report("1\tadd\t/a\tnet\t1\tqueued\t-\t1\nbroken\n", NULL, NULL, &r);
        ASSERT_EQ(r, -EBADMSG);
        free(out);
}

static bool keep_odd(const struct pending_line *l, void *ud)
{
        (void)ud;
        return l->seqnum % 2 == 1;
}

static void test_keep_and_limit(void)
{
        size_t cap = 200 * 64, len = 0;
        char *answer = malloc(cap), *out;
        int r;

        ASSERT_TRUE(answer);
        answer[0] = '\0';
        for (int i = 1; i <= 200; i++)
                len += (size_t)snprintf(answer + len, cap - len,
                                        "%d\tadd\t/devices/x%d\tnet\t1\tqueued\t-\t%d\n", i, i, i);
        snprintf(answer + len, cap - len, "# 7 more\n");
        out = report(answer, keep_odd, NULL, &r);
        ASSERT_EQ(r, 100);
        ASSERT_TRUE(strstr(out, "  1 add /devices/x1 ") != NULL);
        ASSERT_TRUE(strstr(out, "  2 add") == NULL);
        ASSERT_TRUE(strstr(out, "  99 add /devices/x99 ") != NULL);  /* the 50th kept */
        ASSERT_TRUE(strstr(out, "  101 add") == NULL);
        ASSERT_TRUE(strstr(out, "  ... and 50 more\n") != NULL);
        ASSERT_TRUE(strstr(out, "  ... and 7 more events the daemon did not list\n") != NULL);
        free(out);
        free(answer);
}

int main(void)
{
        TEST_RUN(test_parse_line);
        TEST_RUN(test_print);
        TEST_RUN(test_keep_and_limit);
        return 0;
}
