/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: test */
#include <errno.h>
#include <signal.h>

#include "shared/log.h"
#include "shared/tests.h"
#include "shared/time-util.h"
#include "udevd/config.h"

static void test_udev_conf(void)
{
        struct udevd_config c = { 0 };

        udev_conf_parse("# comment\n; other comment\n"
                        "udev_log=\"debug\"\n"
                        "  children_max = 7  \n"
                        "exec_delay=3\n"
                        "event_timeout='2min'\n"
                        "timeout_signal=SIGTERM\n"
                        "resolve_names=never\n"
                        "explain_events=0\n"
                        "unknown_key=1\n"
                        "garbage line\n",
                        "test.conf", &c);
        ASSERT_TRUE(c.log_level_set);
        ASSERT_EQ(c.log_level, LOG_DEBUG);
        ASSERT_TRUE(c.children_max_set);
        ASSERT_EQ(c.children_max, 7);
        ASSERT_EQ(c.exec_delay_usec, 3 * USEC_PER_SEC);
        ASSERT_EQ(c.event_timeout_usec, 120 * USEC_PER_SEC);
        ASSERT_EQ(c.timeout_signal, SIGTERM);
        ASSERT_TRUE(c.resolve_names_set);
        ASSERT_EQ(c.resolve_names, RESOLVE_NAMES_NEVER);
        ASSERT_TRUE(c.explain_events_set);
        ASSERT_EQ(c.explain_events, 0u);

        struct udevd_settings s = { .explain_events = 256 };
        struct udevd_config d = { 0 };
        udev_conf_parse("explain_events=1000\n", "test.conf", &d);
        udevd_config_apply(&d, &s);
        ASSERT_EQ(s.explain_events, 1000u);
        udevd_config_apply(&c, &s);
        ASSERT_EQ(s.explain_events, 0u);
}

static void test_udev_conf_invalid(void)
{
        struct udevd_config c = { 0 };

        udev_conf_parse("udev_log=loud\nchildren_max=-1\nevent_timeout=0\n"
                        "timeout_signal=SIGNOPE\nresolve_names=sometimes\n"
                        "explain_events=-1\nexplain_events=65537\nexplain_events=many\n",
                        "bad.conf", &c);
        ASSERT_TRUE(!c.log_level_set);
        ASSERT_TRUE(!c.children_max_set);
        ASSERT_TRUE(!c.event_timeout_set);
        ASSERT_TRUE(!c.timeout_signal_set);
        ASSERT_TRUE(!c.resolve_names_set);
        ASSERT_TRUE(!c.explain_events_set);
}

static void test_queue_budget(void)
{
        struct udevd_config c = { 0 };
        struct udevd_settings set = { .queue_max_events = 1000, .queue_max_bytes = 1 };
        uint64_t b = 7;
        unsigned e = 7;

        udev_conf_parse("queue_max_events=200\nqueue_max_bytes=256K\n", "q.conf", &c);
        ASSERT_TRUE(c.queue_max_events_set && c.queue_max_bytes_set);
        udevd_config_apply(&c, &set);
        ASSERT_EQ(set.queue_max_events, 200);
        ASSERT_EQ(set.queue_max_bytes, 256 * 1024);

        ASSERT_EQ(queue_max_bytes_from_string("16384", &b), 0);
        ASSERT_EQ(b, 16384);
        ASSERT_EQ(queue_max_bytes_from_string("3M", &b), 0);
        ASSERT_EQ(b, 3 * 1024 * 1024);
        ASSERT_EQ(queue_max_bytes_from_string("64G", &b), 0);
        ASSERT_EQ(b, UINT64_C(64) << 30);
        b = 7;
        const char *bad_bytes[] = { "", "K", "16383", "15K", "65G", "1T", "8m", "8MB", "-8M",
                                    " 8M", "8 M", "0x100000", "99999999999999999999999" };
        for (size_t i = 0; i < ARRAY_SIZE(bad_bytes); i++)
                ASSERT_EQ(queue_max_bytes_from_string(bad_bytes[i], &b), -EINVAL);
        ASSERT_EQ(b, 7);

        ASSERT_EQ(queue_max_events_from_string("1", &e), 0);
        ASSERT_EQ(e, 1);
        ASSERT_EQ(queue_max_events_from_string("1000000", &e), 0);
        ASSERT_EQ(e, 1000000);
        e = 7;
        const char *bad_events[] = { "", "0", "-1", "1000001", "1K", "12x", " 5" };
        for (size_t i = 0; i < ARRAY_SIZE(bad_events); i++)
                ASSERT_EQ(queue_max_events_from_string(bad_events[i], &e), -EINVAL);
        ASSERT_EQ(e, 7);

        /* invalid values are ignored; the kernel command line does not set them */
        struct udevd_config d = { 0 };
        udev_conf_parse("queue_max_events=0\nqueue_max_bytes=1\n", "bad.conf", &d);
        ASSERT_TRUE(!d.queue_max_events_set && !d.queue_max_bytes_set);
        proc_cmdline_parse("udev.queue_max_events=5 udev.queue_max_bytes=1M", false, &d);
        ASSERT_TRUE(!d.queue_max_events_set && !d.queue_max_bytes_set);
}

static void test_cmdline(void)
{
        struct udevd_config c = { 0 };

        proc_cmdline_parse("BOOT_IMAGE=/vmlinuz root=/dev/vda1 quiet udev.log_level=3 "
                           "udev.children_max=5 udev.event_timeout=30 udev.exec_delay=1 "
                           "udev.timeout_signal=9 rd.udev.children_max=99 udev.blockdev_read_only "
                           "udev.bogus=1 udev.explain_events=9 net.ifnames=0\n",
                           false, &c);
        ASSERT_EQ(c.log_level, 3);
        ASSERT_EQ(c.children_max, 5); /* rd. ignored outside the initrd */
        ASSERT_EQ(c.event_timeout_usec, 30 * USEC_PER_SEC);
        ASSERT_EQ(c.exec_delay_usec, 1 * USEC_PER_SEC);
        ASSERT_EQ(c.timeout_signal, SIGKILL);
        ASSERT_TRUE(c.blockdev_read_only_set && c.blockdev_read_only);
        ASSERT_TRUE(!c.explain_events_set); /* udev.conf and the command line only */

        struct udevd_config d = { 0 };
        proc_cmdline_parse("udev.children_max=5 rd.udev.children_max=99 udev.log_priority=info",
                           true, &d);
        ASSERT_EQ(d.children_max, 99); /* in the initrd the later rd. one wins */
        ASSERT_EQ(d.log_level, LOG_INFO);
}

static void test_precedence(void)
{
        struct udevd_settings s = { .children_max = 0, .event_timeout_usec = 180 * USEC_PER_SEC };
        struct udevd_config conf = { 0 }, kernel = { 0 };

        udev_conf_parse("children_max=4\nevent_timeout=10\n", "u.conf", &conf);
        udevd_config_apply(&conf, &s);
        ASSERT_EQ(s.children_max, 4);
        s.children_max = 6; /* command line */
        proc_cmdline_parse("udev.event_timeout=20", false, &kernel);
        udevd_config_apply(&kernel, &s);
        ASSERT_EQ(s.children_max, 6);
        ASSERT_EQ(s.event_timeout_usec, 20 * USEC_PER_SEC);
}

int main(void)
{
        log_set_max_level(LOG_ERR);
        TEST_RUN(test_udev_conf);
        TEST_RUN(test_udev_conf_invalid);
        TEST_RUN(test_queue_budget);
        TEST_RUN(test_cmdline);
        TEST_RUN(test_precedence);
        return 0;
}
