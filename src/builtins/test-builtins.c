/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: main + builtin worker threads in test_threads */
/* builtin.c: table, prefix lookup, dispatch, builtin_add_property (test mode
 * printing, removal), input_id over the device fixture, and the per-thread
 * library state: several threads run kmod and hwdb builtins while the main
 * thread keeps calling builtins_should_reload()/builtins_reload(), then each
 * thread releases its state (TSan build: no race; ASan: no leak). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "builtins/builtin-util.h"
#include "builtins/builtin.h"
#include "device/test-sysfs-fixture.h"
#include "event/udev-event.h"
#include "shared/log.h"
#include "shared/tests.h"
#include "shared/thread-util.h"

static struct sysfs_fixture fx;

static void test_table(void)
{
        ASSERT_EQ(builtin_lookup("hwdb"), BUILTIN_HWDB);
        ASSERT_EQ(builtin_lookup("hw"), _BUILTIN_INVALID);
        ASSERT_EQ(builtin_lookup_prefix("hw", 2), BUILTIN_HWDB);
        ASSERT_EQ(builtin_lookup_prefix("k", 1), BUILTIN_KEYBOARD); /* table order */
        ASSERT_EQ(builtin_lookup_prefix("km", 2), BUILTIN_KMOD);
        /* "net" still finds net_id first: net_driver sits last in the table */
        ASSERT_EQ(builtin_lookup_prefix("net", 3), BUILTIN_NET_ID);
        ASSERT_EQ(builtin_lookup_prefix("net_d", 5), BUILTIN_NET_DRIVER);
        ASSERT_EQ(builtin_lookup("net_driver"), BUILTIN_NET_DRIVER);
        ASSERT_STREQ(builtin_name(BUILTIN_NET_DRIVER), "net_driver");
        ASSERT_TRUE(!builtin_run_once(BUILTIN_NET_DRIVER));
        ASSERT_EQ(builtin_lookup_prefix("x", 1), _BUILTIN_INVALID);
        ASSERT_EQ(builtin_lookup_prefix("", 0), _BUILTIN_INVALID);
        ASSERT_STREQ(builtin_name(BUILTIN_UACCESS), "uaccess");
        ASSERT_TRUE(builtin_name(_BUILTIN_MAX) == NULL);
        ASSERT_TRUE(builtin_run_once(BUILTIN_PATH_ID));
        ASSERT_TRUE(!builtin_run_once(BUILTIN_HWDB));
}

struct ev_holder {
        struct device_ctx *ctx;
        struct udev_event ev;
};

static void event_open(struct ev_holder *h, const char *devpath)
{
        char path[PATH_MAX];
        struct device *dev;

        snprintf(path, sizeof(path), "%s%s", fx.sys, devpath);
        ASSERT_EQ(device_ctx_new(&fx.roots, &h->ctx), 0);
        ASSERT_EQ(device_from_syspath(h->ctx, path, &dev), 0);
        ASSERT_EQ(udev_event_init(&h->ev, h->ctx, dev, NULL, UEVENT_ACTION_ADD), 0);
}

static void event_close(struct ev_holder *h)
{
        udev_event_done(&h->ev);
        device_ctx_free(h->ctx);
}

static void test_add_property(void)
{
        struct ev_holder h;

        event_open(&h, EVENT3);
        ASSERT_EQ(builtin_add_property(&h.ev, false, "ID_X", "1"), 0);
        ASSERT_STREQ(proplist_get(&h.ev.props, "ID_X"), "1");
        ASSERT_EQ(builtin_add_property(&h.ev, false, "ID_X", "2"), 0);
        ASSERT_STREQ(proplist_get(&h.ev.props, "ID_X"), "2");
        ASSERT_EQ(builtin_add_property(&h.ev, false, "ID_X", NULL), 0);
        ASSERT_TRUE(proplist_get(&h.ev.props, "ID_X") == NULL);
        ASSERT_EQ(builtin_add_property(&h.ev, false, "ID_NEVER", NULL), 0);
        event_close(&h);
}

static void test_dispatch(void)
{
        char cmd[] = "input_id";
        char *argv[] = { cmd, NULL };
        struct ev_holder h;

        event_open(&h, EVENT3);
        ASSERT_EQ(builtin_run(_BUILTIN_MAX, &h.ev, 1, argv, false), -EINVAL);
        ASSERT_EQ(builtin_run(BUILTIN_INPUT_ID, &h.ev, 0, argv, false), -EINVAL);
        /* the fixture's input3 has no capabilities: ID_INPUT only if it had;
         * input_id always succeeds */
        ASSERT_EQ(builtin_run(BUILTIN_INPUT_ID, &h.ev, 1, argv, false), 0);
        event_close(&h);
}

/* net_driver: the loopback interface (every network namespace has "lo")
 * answers ETHTOOL_GDRVINFO with EOPNOTSUPP: success, no property. */
static void test_net_driver(void)
{
        char cmd[] = "net_driver";
        char *argv[] = { cmd, NULL };
        struct ev_holder h;

        event_open(&h, LO);
        ASSERT_EQ(builtin_run(BUILTIN_NET_DRIVER, &h.ev, 1, argv, false), 0);
        ASSERT_TRUE(proplist_get(&h.ev.props, "ID_NET_DRIVER") == NULL);
        event_close(&h);
}

/* path_id with the scheme set in main() (v257): the USB stick behind the
 * fixture's root hub usb1 gets systemd 257's ID_PATH_WITH_USB_REVISION; the
 * revision comes from the root hub's bDeviceProtocol (and speed for 0). */
static void test_path_id_usb_revision(void)
{
        static const struct {
                const char *proto, *speed, *want;
        } cases[] = {
                { "01", "480", "pci-0000:00:1d.0-usbv2-0:1:1.0-scsi-0:0:0:0" },
                { "03", "5000", "pci-0000:00:1d.0-usbv3-0:1:1.0-scsi-0:0:0:0" },
                { "00", "480", "pci-0000:00:1d.0-usbv2-0:1:1.0-scsi-0:0:0:0" },
                { "00", "12", "pci-0000:00:1d.0-usbv1-0:1:1.0-scsi-0:0:0:0" },
                { "09", "480", NULL }, /* unknown protocol: no revision */
        };
        char cmd[] = "path_id";
        char *argv[] = { cmd, NULL };

        ASSERT_EQ(naming_scheme()->version, 257);
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                struct ev_holder h;

                fx_attr(&fx, USB1, "bDeviceProtocol", cases[i].proto);
                fx_attr(&fx, USB1, "speed", cases[i].speed);
                event_open(&h, SDA);
                ASSERT_EQ(builtin_run(BUILTIN_PATH_ID, &h.ev, 1, argv, false), 0);
                ASSERT_STREQ(proplist_get(&h.ev.props, "ID_PATH"),
                             "pci-0000:00:1d.0-usb-0:1:1.0-scsi-0:0:0:0");
                ASSERT_STREQ(proplist_get(&h.ev.props, "ID_PATH_TAG"),
                             "pci-0000_00_1d_0-usb-0_1_1_0-scsi-0_0_0_0");
                if (cases[i].want)
                        ASSERT_STREQ(proplist_get(&h.ev.props, "ID_PATH_WITH_USB_REVISION"),
                                     cases[i].want);
                else
                        ASSERT_TRUE(!proplist_get(&h.ev.props, "ID_PATH_WITH_USB_REVISION"));
                event_close(&h);
        }
}

static void *worker(void *arg)
{
        (void)arg;
        for (int i = 0; i < 30; i++) {
                char c0[] = "kmod", c1[] = "load", c2[] = "no_such_module_tudev";
                char h0[] = "hwdb", h1[] = "usb:v1D6Bp0002";
                char *kargv[] = { c0, c1, c2, NULL };
                char *hargv[] = { h0, h1, NULL };
                struct ev_holder h;

                event_open(&h, EVENT3);
                ASSERT_EQ(builtin_run(BUILTIN_KMOD, &h.ev, 3, kargv, false), 0);
                (void)builtin_run(BUILTIN_HWDB, &h.ev, 2, hargv, false);
                event_close(&h);
                if (i % 10 == 9)
                        builtins_thread_exit();
        }
        builtins_thread_exit();
        return NULL;
}

static void test_threads(void)
{
        pthread_t t[4];

        for (size_t i = 0; i < ARRAY_SIZE(t); i++)
                ASSERT_EQ(thread_start(&t[i], worker, NULL), 0);
        for (int i = 0; i < 20; i++) {
                (void)builtins_should_reload();
                builtins_reload();
                usleep(1000);
        }
        for (size_t i = 0; i < ARRAY_SIZE(t); i++)
                ASSERT_EQ(pthread_join(t[i], NULL), 0);
        builtins_thread_exit();
        ASSERT_TRUE(!builtins_should_reload());
}

int main(void)
{
        /* no module index override: kmod_new(NULL, NULL) as in production */
        unsetenv("TUDEV_TEST_KMOD_DIR");
        unsetenv("TUDEV_TEST_KMOD_CONFIG");
        log_set_max_level(LOG_WARNING);
        /* the scheme is chosen once per process: systemd 257's */
        setenv("NET_NAMING_SCHEME", "v257", 1);
        fixture_setup(&fx);
        TEST_RUN(test_table);
        TEST_RUN(test_add_property);
        TEST_RUN(test_dispatch);
        TEST_RUN(test_net_driver);
        TEST_RUN(test_path_id_usb_revision);
        TEST_RUN(test_threads);
        fixture_teardown(&fx);
        builtins_reload(); /* frees the baseline kmod context */
        return 0;
}
