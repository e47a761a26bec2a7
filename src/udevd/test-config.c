/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: test */
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
        TEST_RUN(test_cmdline);
        TEST_RUN(test_precedence);
        return 0;
}
