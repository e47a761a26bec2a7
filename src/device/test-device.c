/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (test; test_threads runs one context per thread) */
/* Unit tests of the sysfs device view on a fake tree (test-sysfs-fixture.h). */

#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "device/device.h"
#include "device/test-sysfs-fixture.h"
#include "shared/tests.h"
#include "shared/thread-util.h"

static struct sysfs_fixture fx;

static struct device_ctx *new_ctx(void)
{
        struct device_ctx *ctx = NULL;

        ASSERT_EQ(device_ctx_new(&fx.roots, &ctx), 0);
        return ctx;
}

static struct device *dev_at(struct device_ctx *ctx, const char *devpath)
{
        char p[PATH_MAX];
        struct device *d = NULL;

        snprintf(p, sizeof(p), "%s%s", fx.sys, devpath);
        ASSERT_EQ(device_from_syspath(ctx, p, &d), 0);
        ASSERT_TRUE(d != NULL);
        return d;
}

static const char *in_dev(const char *rel)
{
        static char buf[PATH_MAX];

        snprintf(buf, sizeof(buf), "%s/%s", fx.dev, rel);
        return buf;
}

static void test_ctx_roots(void)
{
        struct device_roots r = { .sys = "/x/sys//", .dev = "/x/dev/", .run = NULL };
        struct device_ctx *ctx = NULL;

        ASSERT_EQ(device_ctx_new(&r, &ctx), 0);
        ASSERT_STREQ(device_ctx_roots(ctx)->sys, "/x/sys");
        ASSERT_STREQ(device_ctx_roots(ctx)->dev, "/x/dev");
        ASSERT_STREQ(device_ctx_roots(ctx)->run, "/run/udev");
        device_ctx_free(ctx);
        ASSERT_EQ(device_ctx_new(NULL, &ctx), 0);
        ASSERT_STREQ(device_ctx_roots(ctx)->sys, "/sys");
        ASSERT_STREQ(device_ctx_roots(ctx)->dev, "/dev");
        device_ctx_free(ctx);
        device_ctx_free(NULL);
        ASSERT_EQ(device_ctx_new(&r, NULL), -EINVAL);
}

static void test_syspath_and_names(void)
{
        struct device_ctx *ctx = new_ctx();
        struct device *sda = dev_at(ctx, SDA), *d;
        char p[PATH_MAX];

        snprintf(p, sizeof(p), "%s%s", fx.sys, SDA);
        ASSERT_STREQ(device_syspath(sda), p);
        ASSERT_STREQ(device_devpath(sda), SDA);
        ASSERT_STREQ(device_sysname(sda), "sda");
        ASSERT_TRUE(device_sysnum(sda) == NULL);
        ASSERT_STREQ(device_sysnum(dev_at(ctx, SDA1)), "1");
        ASSERT_STREQ(device_sysnum(dev_at(ctx, SCSI_DEV)), "0");
        ASSERT_STREQ(device_sysnum(dev_at(ctx, USB1)), "1");
        ASSERT_STREQ(device_sysnum(dev_at(ctx, PCI_USB)), "0");
        ASSERT_TRUE(device_sysnum(dev_at(ctx, LO)) == NULL);
        ASSERT_TRUE(device_sysnum(dev_at(ctx, "/devices/virtual/test/1234")) == NULL);
        d = dev_at(ctx, CCISS);
        ASSERT_STREQ(device_sysname(d), "cciss/c0d0");
        ASSERT_STREQ(device_sysnum(d), "0");
        ASSERT_STREQ(device_devpath(d), CCISS);

        /* Same object for the same device, also through symlinks and odd spellings. */
        ASSERT_TRUE(dev_at(ctx, SDA) == sda);
        ASSERT_TRUE(dev_at(ctx, "/class/block/sda") == sda);
        ASSERT_TRUE(dev_at(ctx, "/dev/block/8:0") == sda);
        ASSERT_TRUE(dev_at(ctx, "/class/block/sda/") == sda);
        ASSERT_TRUE(dev_at(ctx, "/class/block/../block/sda") == sda);

        /* Errors. */
        snprintf(p, sizeof(p), "%s/devices/nope", fx.sys);
        ASSERT_EQ(device_from_syspath(ctx, p, &d), -ENOENT);
        snprintf(p, sizeof(p), "%s%s/power", fx.sys, PCI_USB); /* dir without uevent */
        ASSERT_EQ(device_from_syspath(ctx, p, &d), -EINVAL);
        snprintf(p, sizeof(p), "%s%s/vendor", fx.sys, PCI_USB); /* a file */
        ASSERT_EQ(device_from_syspath(ctx, p, &d), -EINVAL);
        ASSERT_EQ(device_from_syspath(ctx, fx.sys, &d), -EINVAL);
        snprintf(p, sizeof(p), "%s/devices", fx.sys);
        ASSERT_EQ(device_from_syspath(ctx, p, &d), -EINVAL);
        ASSERT_EQ(device_from_syspath(ctx, fx.dev, &d), -EINVAL); /* outside sys */
        ASSERT_EQ(device_from_syspath(ctx, "/", &d), -EINVAL);
        ASSERT_EQ(device_from_syspath(ctx, "relative/path", &d), -EINVAL);
        ASSERT_EQ(device_from_syspath(ctx, NULL, &d), -EINVAL);
        device_ctx_free(ctx);
}

static void test_subsystem_driver_devtype(void)
{
        struct device_ctx *ctx = new_ctx();
        const char *s;
        struct device *d;
        char p[PATH_MAX];

        ASSERT_EQ(device_get_subsystem(dev_at(ctx, SDA), &s), 0);
        ASSERT_STREQ(s, "block");
        ASSERT_EQ(device_get_subsystem(dev_at(ctx, PCI_USB), &s), 0);
        ASSERT_STREQ(s, "pci");
        ASSERT_EQ(device_get_subsystem(dev_at(ctx, USB_INTF), &s), 0);
        ASSERT_STREQ(s, "usb");
        ASSERT_EQ(device_get_subsystem(dev_at(ctx, "/devices/pci0000:00"), &s), -ENOENT);
        ASSERT_EQ(device_get_subsystem(dev_at(ctx, "/bus/pci/drivers/e1000e"), &s), 0);
        ASSERT_STREQ(s, "drivers");
        ASSERT_EQ(device_get_subsystem(dev_at(ctx, "/bus/pci/drivers"), &s), 0);
        ASSERT_STREQ(s, "drivers");
        ASSERT_EQ(device_get_subsystem(dev_at(ctx, "/module/usb_storage"), &s), 0);
        ASSERT_STREQ(s, "module");
        ASSERT_EQ(device_get_subsystem(dev_at(ctx, "/class/net"), &s), 0);
        ASSERT_STREQ(s, "subsystem");
        ASSERT_EQ(device_get_subsystem(dev_at(ctx, "/bus/usb"), &s), 0);
        ASSERT_STREQ(s, "subsystem");
        ASSERT_EQ(device_get_subsystem(dev_at(ctx, "/firmware/acpi/tables"), &s), -ENOENT);

        ASSERT_EQ(device_get_driver(dev_at(ctx, PCI_USB), &s), 0);
        ASSERT_STREQ(s, "ehci-pci");
        ASSERT_EQ(device_get_driver(dev_at(ctx, SCSI_DEV), &s), 0);
        ASSERT_STREQ(s, "sd");
        ASSERT_EQ(device_get_driver(dev_at(ctx, SDA), &s), -ENOENT);
        ASSERT_EQ(device_get_driver(dev_at(ctx, SDA), NULL), -ENOENT);

        /* Cached: a changed link is not seen again within the context. */
        d = dev_at(ctx, "/devices/platform/i8042/serio0");
        ASSERT_EQ(device_get_driver(d, &s), 0);
        ASSERT_STREQ(s, "atkbd");
        snprintf(p, sizeof(p), "%s/devices/platform/i8042/serio0/driver", fx.sys);
        ASSERT_EQ(unlink(p), 0);
        ASSERT_EQ(device_get_driver(d, &s), 0);
        ASSERT_STREQ(s, "atkbd");
        ASSERT_EQ(symlink("../../../../bus/serio/drivers/atkbd", p), 0);

        ASSERT_EQ(device_get_devtype(dev_at(ctx, SDA), &s), 0);
        ASSERT_STREQ(s, "disk");
        ASSERT_EQ(device_get_devtype(dev_at(ctx, SDA1), &s), 0);
        ASSERT_STREQ(s, "partition");
        ASSERT_EQ(device_get_devtype(dev_at(ctx, USB1), &s), 0);
        ASSERT_STREQ(s, "usb_device");
        ASSERT_EQ(device_get_devtype(dev_at(ctx, PCI_USB), &s), -ENOENT);
        device_ctx_free(ctx);
}

static void test_devnode_devnum_ifindex(void)
{
        struct device_ctx *ctx = new_ctx();
        const char *s;
        unsigned ma = 0, mi = 0;
        int i = 0;

        ASSERT_EQ(device_get_devnode(dev_at(ctx, SDA), &s), 0);
        ASSERT_STREQ(s, in_dev("sda"));
        ASSERT_EQ(device_get_devnode(dev_at(ctx, USB1), &s), 0);
        ASSERT_STREQ(s, in_dev("bus/usb/001/001"));
        ASSERT_EQ(device_get_devnode(dev_at(ctx, CCISS), &s), 0);
        ASSERT_STREQ(s, in_dev("cciss/c0d0"));
        ASSERT_EQ(device_get_devnode(dev_at(ctx, EVENT3), &s), 0);
        ASSERT_STREQ(s, in_dev("input/event3"));
        ASSERT_EQ(device_get_devnode(dev_at(ctx, ETH0), &s), -ENOENT);

        ASSERT_EQ(device_get_devnum(dev_at(ctx, SDA), &ma, &mi), 0);
        ASSERT_EQ(ma, 8);
        ASSERT_EQ(mi, 0);
        ASSERT_EQ(device_get_devnum(dev_at(ctx, SDA2), &ma, &mi), 0);
        ASSERT_EQ(ma, 8);
        ASSERT_EQ(mi, 2);
        ASSERT_EQ(device_get_devnum(dev_at(ctx, TTYS0), &ma, &mi), 0);
        ASSERT_EQ(ma, 4);
        ASSERT_EQ(mi, 64);
        ASSERT_EQ(device_get_devnum(dev_at(ctx, ETH0), &ma, &mi), -ENOENT);
        ASSERT_EQ(device_get_devnum(dev_at(ctx, "/devices/virtual/test/devonly"), &ma, &mi), 0);
        ASSERT_EQ(ma, 10);
        ASSERT_EQ(mi, 200);

        ASSERT_EQ(device_get_ifindex(dev_at(ctx, ETH0), &i), 0);
        ASSERT_EQ(i, 2);
        ASSERT_EQ(device_get_ifindex(dev_at(ctx, LO), &i), 0);
        ASSERT_EQ(i, 1);
        ASSERT_EQ(device_get_ifindex(dev_at(ctx, SDA), &i), -ENOENT);
        device_ctx_free(ctx);
}

static void test_id(void)
{
        struct device_ctx *ctx = new_ctx();
        const char *s;

        ASSERT_EQ(device_get_id(dev_at(ctx, SDA), &s), 0);
        ASSERT_STREQ(s, "b8:0");
        ASSERT_EQ(device_get_id(dev_at(ctx, TTY0), &s), 0);
        ASSERT_STREQ(s, "c4:0");
        ASSERT_EQ(device_get_id(dev_at(ctx, ETH0), &s), 0);
        ASSERT_STREQ(s, "n2");
        ASSERT_EQ(device_get_id(dev_at(ctx, PCI_USB), &s), 0);
        ASSERT_STREQ(s, "+pci:0000:00:1d.0");
        ASSERT_EQ(device_get_id(dev_at(ctx, "/bus/pci/drivers/e1000e"), &s), 0);
        ASSERT_STREQ(s, "+drivers:pci:e1000e");
        /* the drivers directory itself (sd-device 252: "+drivers:pci:drivers") */
        ASSERT_EQ(device_get_id(dev_at(ctx, "/bus/pci/drivers"), &s), 0);
        ASSERT_STREQ(s, "+drivers:pci:drivers");
        ASSERT_EQ(device_get_id(dev_at(ctx, "/module/usb_storage"), &s), 0);
        ASSERT_STREQ(s, "+module:usb_storage");
        ASSERT_EQ(device_get_id(dev_at(ctx, "/devices/pci0000:00"), &s), -ENOENT);
        device_ctx_free(ctx);
}

static void test_properties(void)
{
        static const char *const expect[][2] = {
                { "DEVPATH", SDA }, { "DEVNAME", NULL }, { "DEVTYPE", "disk" },
                { "DISKSEQ", "9" }, { "MAJOR", "8" },    { "MINOR", "0" },
                { "SUBSYSTEM", "block" },
        };
        struct device_ctx *ctx = new_ctx();
        struct device *d = dev_at(ctx, SDA);
        const char *k, *v;
        size_t i;

        for (i = 0; device_property_at(d, i, &k, &v); i++) {
                ASSERT_TRUE(i < ARRAY_SIZE(expect));
                ASSERT_STREQ(k, expect[i][0]);
                ASSERT_STREQ(v, expect[i][1] ? expect[i][1] : in_dev("sda"));
        }
        ASSERT_EQ(i, ARRAY_SIZE(expect));
        ASSERT_EQ(device_get_property(d, "DEVNAME", &v), 0);
        ASSERT_STREQ(v, in_dev("sda"));
        ASSERT_EQ(device_get_property(d, "SUBSYSTEM", &v), 0);
        ASSERT_STREQ(v, "block");
        ASSERT_EQ(device_get_property(d, "DEVPATH", &v), 0);
        ASSERT_STREQ(v, SDA);
        ASSERT_EQ(device_get_property(d, "NOPE", &v), -ENOENT);

        /* A device without subsystem and with an empty uevent file: DEVPATH only. */
        d = dev_at(ctx, "/devices/pci0000:00");
        ASSERT_TRUE(device_property_at(d, 0, &k, &v));
        ASSERT_STREQ(k, "DEVPATH");
        ASSERT_TRUE(!device_property_at(d, 1, &k, &v));

        /* Malformed uevent file: CRLF, lines without '=', empty key/value,
         * unsafe DEVNAME, bad IFINDEX, MINOR without MAJOR, a repeated key,
         * an unterminated last line. */
        d = dev_at(ctx, "/devices/virtual/test/weird");
        ASSERT_EQ(device_get_property(d, "A", &v), 0);
        ASSERT_STREQ(v, "2");
        ASSERT_EQ(device_get_property(d, "B", &v), 0);
        ASSERT_STREQ(v, "");
        ASSERT_EQ(device_get_property(d, "NOEQUALS", &v), -ENOENT);
        ASSERT_EQ(device_get_property(d, "DEVNAME", &v), -ENOENT);
        ASSERT_EQ(device_get_property(d, "IFINDEX", &v), -ENOENT);
        ASSERT_EQ(device_get_property(d, "MINOR", &v), -ENOENT);
        ASSERT_EQ(device_get_property(d, "C", &v), -ENOENT);
        ASSERT_EQ(device_get_devnode(d, &v), -ENOENT);
        ASSERT_EQ(device_get_ifindex(d, NULL), -ENOENT);
        ASSERT_EQ(device_get_devnum(d, NULL, NULL), -ENOENT);
        ASSERT_TRUE(device_property_at(d, 1, &k, &v));
        ASSERT_STREQ(k, "A");
        ASSERT_TRUE(device_property_at(d, 2, &k, &v));
        ASSERT_STREQ(k, "B");
        ASSERT_TRUE(device_property_at(d, 3, &k, &v));
        ASSERT_STREQ(k, "SUBSYSTEM");
        ASSERT_STREQ(v, "test");
        ASSERT_TRUE(!device_property_at(d, 4, &k, &v));
        device_ctx_free(ctx);
}

static void test_from_uevent(void)
{
        struct uevent *ev = FX_UEVENT("add@" SDA "\0ACTION=add\0DEVPATH=" SDA
                                      "\0SUBSYSTEM=block\0MAJOR=8\0MINOR=0\0DEVNAME=sda\0"
                                      "DEVTYPE=disk\0SEQNUM=100\0FOO=bar");
        struct uevent *pev = FX_UEVENT("bind@" PCI_USB "\0ACTION=bind\0DEVPATH=" PCI_USB
                                       "\0SUBSYSTEM=pci\0DRIVER=fromrecord\0SEQNUM=101");
        struct uevent *gone = FX_UEVENT("remove@/devices/virtual/block/gone\0ACTION=remove\0"
                                        "DEVPATH=/devices/virtual/block/gone\0SUBSYSTEM=block\0"
                                        "MAJOR=7\0MINOR=9\0DEVNAME=/dev/loop9\0SEQNUM=102");
        static const char *const keys[] = { "ACTION",  "DEVPATH", "SUBSYSTEM", "MAJOR", "MINOR",
                                            "DEVNAME", "DEVTYPE", "SEQNUM",    "FOO" };
        struct device_ctx *ctx = new_ctx();
        struct device *d, *e, *p;
        const char *k, *v;
        unsigned ma, mi;
        size_t i;

        ASSERT_EQ(device_from_uevent(ctx, ev, &d), 0);
        ASSERT_STREQ(device_devpath(d), SDA);
        ASSERT_STREQ(device_sysname(d), "sda");
        ASSERT_EQ(device_get_devnode(d, &v), 0);
        ASSERT_STREQ(v, in_dev("sda"));
        ASSERT_EQ(device_get_devtype(d, &v), 0);
        ASSERT_STREQ(v, "disk");
        ASSERT_EQ(device_get_subsystem(d, &v), 0);
        ASSERT_STREQ(v, "block");
        ASSERT_EQ(device_get_devnum(d, &ma, &mi), 0);
        ASSERT_EQ(ma, 8);
        ASSERT_EQ(mi, 0);
        ASSERT_EQ(device_get_id(d, &v), 0);
        ASSERT_STREQ(v, "b8:0");
        ASSERT_EQ(device_get_driver(d, &v), -ENOENT);
        for (i = 0; device_property_at(d, i, &k, &v); i++) {
                ASSERT_TRUE(i < ARRAY_SIZE(keys));
                ASSERT_STREQ(k, keys[i]);
        }
        ASSERT_EQ(i, ARRAY_SIZE(keys));
        ASSERT_EQ(device_get_property(d, "DEVNAME", &v), 0);
        ASSERT_STREQ(v, in_dev("sda"));
        ASSERT_EQ(device_get_property(d, "FOO", &v), 0);
        ASSERT_STREQ(v, "bar");
        /* The event device is what later lookups of its syspath return. */
        ASSERT_TRUE(dev_at(ctx, SDA) == d);
        ASSERT_TRUE(dev_at(ctx, "/class/block/sda") == d);
        ASSERT_EQ(device_from_uevent(ctx, ev, &e), 0);
        ASSERT_TRUE(e == d);
        /* Its parent is an ordinary device. */
        ASSERT_EQ(device_get_parent(d, &p), 0);
        ASSERT_STREQ(device_devpath(p), SCSI_DEV);
        ASSERT_TRUE(dev_at(ctx, SCSI_DEV) == p);
        ASSERT_EQ(device_get_db(d, NULL), 0);
        ASSERT_TRUE(device_is_initialized(d));

        /* DRIVER from the record wins over the link. */
        ASSERT_EQ(device_from_uevent(ctx, pev, &e), 0);
        ASSERT_EQ(device_get_driver(e, &v), 0);
        ASSERT_STREQ(v, "fromrecord");
        ASSERT_EQ(device_get_devtype(e, &v), -ENOENT);
        ASSERT_EQ(device_get_devnode(e, &v), -ENOENT);

        /* A removed device: nothing in sysfs. */
        ASSERT_EQ(device_from_uevent(ctx, gone, &e), 0);
        ASSERT_EQ(device_get_devnode(e, &v), 0);
        ASSERT_STREQ(v, in_dev("loop9"));
        ASSERT_EQ(device_get_driver(e, &v), -ENOENT);
        ASSERT_EQ(device_get_sysattr(e, "size", &v), -ENOENT);
        ASSERT_EQ(device_get_parent(e, &p), -ENOENT);
        ASSERT_EQ(device_get_id(e, &v), 0);
        ASSERT_STREQ(v, "b7:9");
        ASSERT_TRUE(!device_is_initialized(e));

        device_ctx_free(ctx);
        uevent_free(ev);
        uevent_free(pev);
        uevent_free(gone);
}

static void test_parents(void)
{
        static const char *const chain[] = { SDA,      SCSI_DEV, SCSI_TARGET,
                                             SCSI_HOST, USB_INTF, USB_DEV,
                                             USB1,     PCI_USB,  "/devices/pci0000:00" };
        struct device_ctx *ctx = new_ctx();
        struct device *d = dev_at(ctx, SDA1), *p, *q;
        const char *s;
        size_t i;

        for (i = 0; device_get_parent(d, &p) == 0; i++, d = p) {
                ASSERT_TRUE(i < ARRAY_SIZE(chain));
                ASSERT_STREQ(device_devpath(p), chain[i]);
                ASSERT_EQ(device_get_parent(d, &q), 0); /* cached */
                ASSERT_TRUE(q == p);
        }
        ASSERT_EQ(i, ARRAY_SIZE(chain));
        ASSERT_EQ(device_get_parent(d, &p), -ENOENT);

        ASSERT_EQ(device_get_parent(dev_at(ctx, ETH0), &p), 0);
        ASSERT_STREQ(device_devpath(p), PCI_NET);
        ASSERT_EQ(device_get_parent(dev_at(ctx, LO), &p), -ENOENT);
        /* /devices, /devices/virtual and its class directories are never
         * devices, even with a (forged) uevent file; a real device below a
         * virtual device is still found. */
        fx_attr(&fx, "/devices/virtual/net", "uevent", "");
        fx_attr(&fx, "/devices/virtual", "uevent", "");
        fx_attr(&fx, "/devices", "uevent", "");
        fx_device(&fx, LO "/queues/rx-0", "class/queues", NULL, "", NULL);
        device_ctx_free(ctx);
        ctx = new_ctx();
        ASSERT_EQ(device_get_parent(dev_at(ctx, LO), &p), -ENOENT);
        ASSERT_EQ(device_get_parent(dev_at(ctx, LO "/queues/rx-0"), &p), 0);
        ASSERT_STREQ(device_devpath(p), LO);
        ASSERT_EQ(device_get_parent(dev_at(ctx, "/devices/pci0000:00"), &p), -ENOENT);
        for (const char *const *f = (const char *const[]){ "/devices/virtual/net/uevent",
                                                           "/devices/virtual/uevent",
                                                           "/devices/uevent", NULL };
             *f; f++) {
                char path[PATH_MAX];

                snprintf(path, sizeof(path), "%s%s", fx.sys, *f);
                ASSERT_EQ(unlink(path), 0);
        }
        ASSERT_EQ(device_get_parent(dev_at(ctx, SCSI_HOST "/scsi_host/host0"), &p), 0);
        ASSERT_STREQ(device_devpath(p), SCSI_HOST);
        /* Outside /devices any directory is a device (sd-device's rule). */
        ASSERT_EQ(device_get_parent(dev_at(ctx, "/bus/pci/drivers/e1000e"), &p), 0);
        ASSERT_STREQ(device_devpath(p), "/bus/pci/drivers");

        d = dev_at(ctx, SDA1);
        ASSERT_EQ(device_get_parent_with_subsystem_devtype(d, "usb", "usb_device", &p), 0);
        ASSERT_STREQ(device_devpath(p), USB_DEV);
        ASSERT_EQ(device_get_parent_with_subsystem_devtype(d, "usb", NULL, &p), 0);
        ASSERT_STREQ(device_devpath(p), USB_INTF);
        ASSERT_EQ(device_get_parent_with_subsystem_devtype(d, "scsi", "scsi_host", &p), 0);
        ASSERT_STREQ(device_devpath(p), SCSI_HOST);
        ASSERT_EQ(device_get_parent_with_subsystem_devtype(d, "block", "disk", &p), 0);
        ASSERT_STREQ(device_devpath(p), SDA);
        ASSERT_EQ(device_get_parent_with_subsystem_devtype(d, "nope", NULL, &p), -ENOENT);
        ASSERT_EQ(device_get_parent_with_subsystem_devtype(d, NULL, NULL, &p), -EINVAL);
        ASSERT_EQ(device_get_subsystem(p, &s), 0);
        device_ctx_free(ctx);
}

static void expect_lookup(struct device_ctx *ctx, const char *subsys, const char *sysname,
                          const char *devpath)
{
        struct device *d = NULL;

        ASSERT_EQ(device_from_subsystem_sysname(ctx, subsys, sysname, &d), 0);
        ASSERT_STREQ(device_devpath(d), devpath);
}

static void test_subsystem_sysname(void)
{
        struct device_ctx *ctx = new_ctx();
        struct device *d;

        expect_lookup(ctx, "block", "sda", SDA);
        expect_lookup(ctx, "pci", "0000:00:1d.0", PCI_USB);
        expect_lookup(ctx, "usb", "1-1:1.0", USB_INTF);
        expect_lookup(ctx, "net", "eth0", ETH0);
        expect_lookup(ctx, "block", "cciss/c0d0", CCISS);
        expect_lookup(ctx, "block", "cciss!c0d0", CCISS);
        expect_lookup(ctx, "dmi", "id", DMI);
        expect_lookup(ctx, "subsystem", "pci", "/bus/pci");
        expect_lookup(ctx, "subsystem", "net", "/class/net");
        expect_lookup(ctx, "module", "usb_storage", "/module/usb_storage");
        expect_lookup(ctx, "drivers", "pci:e1000e", "/bus/pci/drivers/e1000e");
        expect_lookup(ctx, "drivers", "pci:drivers", "/bus/pci/drivers");
        expect_lookup(ctx, "acpi", "tables", "/firmware/acpi/tables");
        ASSERT_EQ(device_from_subsystem_sysname(ctx, "block", "nope", &d), -ENOENT);
        ASSERT_EQ(device_from_subsystem_sysname(ctx, "drivers", "pci:", &d), -ENOENT);
        ASSERT_EQ(device_from_subsystem_sysname(ctx, "nope", "sda", &d), -ENOENT);
        ASSERT_EQ(device_from_subsystem_sysname(ctx, "block", "..", &d), -EINVAL);
        ASSERT_EQ(device_from_subsystem_sysname(ctx, "block", "a/../b", &d), -EINVAL);
        ASSERT_EQ(device_from_subsystem_sysname(ctx, "block", "", &d), -EINVAL);
        ASSERT_EQ(device_from_subsystem_sysname(ctx, "a/b", "x", &d), -EINVAL);
        ASSERT_EQ(device_from_subsystem_sysname(ctx, "", "x", &d), -EINVAL);
        ASSERT_EQ(device_from_subsystem_sysname(ctx, "..", "x", &d), -EINVAL);
        device_ctx_free(ctx);
}

static void test_devnum_ifindex_id_lookup(void)
{
        struct device_ctx *ctx = new_ctx();
        struct device *d = NULL;

        ASSERT_EQ(device_from_devnum(ctx, 'b', 8, 1, &d), 0);
        ASSERT_STREQ(device_devpath(d), SDA1);
        ASSERT_EQ(device_from_devnum(ctx, 'c', 4, 64, &d), 0);
        ASSERT_STREQ(device_devpath(d), TTYS0);
        ASSERT_EQ(device_from_devnum(ctx, 'b', 4, 64, &d), -ENOENT);
        ASSERT_EQ(device_from_devnum(ctx, 'c', 104, 0, &d), -ENOENT); /* block device */
        ASSERT_EQ(device_from_devnum(ctx, 'c', 0, 1, &d), -ENOENT);
        ASSERT_EQ(device_from_devnum(ctx, 'x', 8, 0, &d), -EINVAL);

        ASSERT_EQ(device_from_ifindex(ctx, 2, &d), 0);
        ASSERT_STREQ(device_devpath(d), ETH0);
        ASSERT_EQ(device_from_ifindex(ctx, 1, &d), 0);
        ASSERT_STREQ(device_devpath(d), LO);
        ASSERT_EQ(device_from_ifindex(ctx, 99, &d), -ENOENT);
        ASSERT_EQ(device_from_ifindex(ctx, 0, &d), -EINVAL);

        ASSERT_EQ(device_from_id(ctx, "b8:0", &d), 0);
        ASSERT_STREQ(device_devpath(d), SDA);
        ASSERT_EQ(device_from_id(ctx, "c13:67", &d), 0);
        ASSERT_STREQ(device_devpath(d), EVENT3);
        ASSERT_EQ(device_from_id(ctx, "n2", &d), 0);
        ASSERT_STREQ(device_devpath(d), ETH0);
        ASSERT_EQ(device_from_id(ctx, "+pci:0000:00:1d.0", &d), 0);
        ASSERT_STREQ(device_devpath(d), PCI_USB);
        ASSERT_EQ(device_from_id(ctx, "+drivers:pci:e1000e", &d), 0);
        ASSERT_STREQ(device_devpath(d), "/bus/pci/drivers/e1000e");
        ASSERT_EQ(device_from_id(ctx, "+block:cciss!c0d0", &d), 0);
        ASSERT_STREQ(device_devpath(d), CCISS);
        ASSERT_EQ(device_from_id(ctx, "b8:9", &d), -ENOENT);
        ASSERT_EQ(device_from_id(ctx, "x", &d), -EINVAL);
        ASSERT_EQ(device_from_id(ctx, "", &d), -EINVAL);
        ASSERT_EQ(device_from_id(ctx, "b8", &d), -EINVAL);
        ASSERT_EQ(device_from_id(ctx, "b8:x", &d), -EINVAL);
        ASSERT_EQ(device_from_id(ctx, "b:0", &d), -EINVAL);
        ASSERT_EQ(device_from_id(ctx, "b-8:0", &d), -EINVAL);
        ASSERT_EQ(device_from_id(ctx, "n0", &d), -EINVAL);
        ASSERT_EQ(device_from_id(ctx, "nabc", &d), -EINVAL);
        ASSERT_EQ(device_from_id(ctx, "+pci", &d), -EINVAL);
        ASSERT_EQ(device_from_id(ctx, "+:x", &d), -EINVAL);
        device_ctx_free(ctx);
}

static void test_sysattr(void)
{
        struct device_ctx *ctx = new_ctx();
        struct device *d = dev_at(ctx, PCI_USB), *w;
        const char *v, *v2;
        char p[PATH_MAX];

        ASSERT_EQ(device_get_sysattr(d, "vendor", &v), 0);
        ASSERT_STREQ(v, "0x8086");
        ASSERT_EQ(device_get_sysattr(d, "crlf", &v), 0);
        ASSERT_STREQ(v, "value");
        ASSERT_EQ(device_get_sysattr(d, "spaces", &v), 0);
        ASSERT_STREQ(v, "  lead and trail  ");
        ASSERT_EQ(device_get_sysattr(d, "power/control", &v), 0);
        ASSERT_STREQ(v, "auto");
        ASSERT_EQ(device_get_sysattr(d, "config", &v), 0); /* cut at the first NUL */
        ASSERT_EQ(strlen(v), 4);
        ASSERT_EQ(device_get_sysattr(d, "nulend", &v), 0);
        ASSERT_STREQ(v, "abc");
        ASSERT_EQ(device_get_sysattr(d, "nulmid", &v), 0); /* sd-device strips at the end only */
        ASSERT_STREQ(v, "abc\n");
        ASSERT_EQ(device_get_sysattr(d, "driver", &v), 0);
        ASSERT_STREQ(v, "ehci-pci");
        ASSERT_EQ(device_get_sysattr(d, "subsystem", &v), 0);
        ASSERT_STREQ(v, "pci");
        ASSERT_EQ(device_get_sysattr(d, "firmware_node", &v), -EINVAL);
        ASSERT_EQ(device_get_sysattr(d, "power", &v), -EISDIR);
        ASSERT_EQ(device_get_sysattr(d, "remove", &v), -EPERM);
        ASSERT_EQ(device_get_sysattr(d, "nope", &v), -ENOENT);
        ASSERT_EQ(device_get_sysattr(d, "", &v), -EINVAL);
        ASSERT_EQ(device_get_sysattr(dev_at(ctx, "/bus/pci/drivers/e1000e"), "module", &v), 0);
        ASSERT_STREQ(v, "e1000e");
        w = dev_at(ctx, "/devices/virtual/test/weird");
        ASSERT_EQ(device_get_sysattr(w, "big", &v), 0);
        ASSERT_EQ(strlen(v), SYSATTR_VALUE_MAX);

        /* Values and failures are cached. */
        ASSERT_EQ(device_get_sysattr(d, "vendor", &v2), 0);
        ASSERT_TRUE(v2 == v || streq(v2, "0x8086"));
        fx_attr(&fx, PCI_USB, "vendor", "0x1234\n");
        fx_attr(&fx, PCI_USB, "nope", "now here\n");
        ASSERT_EQ(device_get_sysattr(d, "vendor", &v), 0);
        ASSERT_STREQ(v, "0x8086");
        ASSERT_EQ(device_get_sysattr(d, "nope", &v), -ENOENT);
        /* A new context sees the new state. */
        device_ctx_free(ctx);
        ctx = new_ctx();
        d = dev_at(ctx, PCI_USB);
        ASSERT_EQ(device_get_sysattr(d, "vendor", &v), 0);
        ASSERT_STREQ(v, "0x1234");
        ASSERT_EQ(device_get_sysattr(d, "nope", &v), 0);
        ASSERT_STREQ(v, "now here");
        fx_attr(&fx, PCI_USB, "vendor", "0x8086\n");
        snprintf(p, sizeof(p), "%s%s/nope", fx.sys, PCI_USB);
        ASSERT_EQ(unlink(p), 0);

        /* Writes: one write(), no newline, no cache refresh. */
        ASSERT_EQ(device_get_sysattr(d, "device", &v), 0);
        ASSERT_EQ(device_set_sysattr(d, "device", "written"), 0);
        ASSERT_EQ(device_get_sysattr(d, "device", &v), 0);
        ASSERT_STREQ(v, "0x1c26");
        {
                char buf[64] = "";
                FILE *fp;

                snprintf(p, sizeof(p), "%s%s/device", fx.sys, PCI_USB);
                fp = fopen(p, "re");
                ASSERT_TRUE(fp != NULL);
                ASSERT_TRUE(fgets(buf, sizeof(buf), fp) != NULL);
                fclose(fp);
                ASSERT_STREQ(buf, "written");
        }
        fx_attr(&fx, PCI_USB, "device", "0x1c26\n");
        ASSERT_EQ(device_set_sysattr(d, "missing", "x"), -ENOENT);
        ASSERT_EQ(device_set_sysattr(d, "driver", "x"), -ELOOP);
        ASSERT_EQ(device_set_sysattr(d, "power", "x"), -EISDIR);
        {
                char big[SYSATTR_VALUE_MAX + 2];

                memset(big, 'y', sizeof(big) - 1);
                big[sizeof(big) - 1] = '\0';
                ASSERT_EQ(device_set_sysattr(d, "device", big), -EINVAL);
        }
        device_ctx_free(ctx);
}

static void test_db(void)
{
        struct device_ctx *ctx = new_ctx();
        const struct db_record *rec = NULL;
        struct device *d = dev_at(ctx, SDA);

        ASSERT_EQ(device_get_db(d, &rec), 0);
        ASSERT_TRUE(strlist_contains(&rec->properties, "ID_FS_TYPE=vfat"));
        ASSERT_TRUE(strlist_contains(&rec->tags, "systemd"));
        ASSERT_EQ(rec->usec_initialized, 1000);
        ASSERT_TRUE(device_is_initialized(d));
        ASSERT_TRUE(!device_is_initialized(dev_at(ctx, SDA1)));
        ASSERT_EQ(device_get_db(dev_at(ctx, SDA1), &rec), -ENOENT);
        ASSERT_EQ(device_get_db(dev_at(ctx, "/devices/pci0000:00"), &rec), -ENOENT);
        device_ctx_free(ctx);
}

/* Many devices and attributes in one context: everything freed (ASan). */
static void test_many(void)
{
        static const char *const paths[] = { SDA1,  SDA2,   ETH0,  LO, TTY0,
                                             TTYS0, EVENT3, CCISS, DMI };
        struct device_ctx *ctx = new_ctx();

        for (int round = 0; round < 3; round++)
                for (size_t i = 0; i < ARRAY_SIZE(paths); i++) {
                        struct device *d = dev_at(ctx, paths[i]), *p;
                        const char *v;
                        char name[32];

                        for (int a = 0; a < 40; a++) {
                                snprintf(name, sizeof(name), "attr%d", a);
                                (void)device_get_sysattr(d, name, &v);
                        }
                        while (device_get_parent(d, &p) == 0)
                                d = p;
                        (void)device_get_id(d, &v);
                        (void)device_property_at(d, 0, NULL, NULL);
                }
        device_ctx_free(ctx);
}

/* One context per thread, many threads at once (run under TSan too). */
static void *thread_main(void *arg)
{
        static const char *const paths[] = { SDA1, ETH0, TTYS0, EVENT3, CCISS };

        (void)arg;
        for (int iter = 0; iter < 50; iter++) {
                struct device_ctx *ctx = new_ctx();

                for (size_t i = 0; i < ARRAY_SIZE(paths); i++) {
                        struct device *d = dev_at(ctx, paths[i]), *p;
                        const char *v;

                        (void)device_get_sysattr(d, "size", &v);
                        (void)device_get_id(d, &v);
                        while (device_get_parent(d, &p) == 0) {
                                (void)device_get_subsystem(p, &v);
                                (void)device_get_driver(p, &v);
                                d = p;
                        }
                }
                ASSERT_EQ(device_from_ifindex(ctx, 2, &(struct device *){ NULL }), 0);
                device_ctx_free(ctx);
        }
        return NULL;
}

static void test_threads(void)
{
        pthread_t th[4];

        for (size_t i = 0; i < ARRAY_SIZE(th); i++)
                ASSERT_EQ(thread_start(&th[i], thread_main, NULL), 0);
        for (size_t i = 0; i < ARRAY_SIZE(th); i++)
                ASSERT_EQ(pthread_join(th[i], NULL), 0);
}

int main(void)
{
        fixture_setup(&fx);
        TEST_RUN(test_ctx_roots);
        TEST_RUN(test_syspath_and_names);
        TEST_RUN(test_subsystem_driver_devtype);
        TEST_RUN(test_devnode_devnum_ifindex);
        TEST_RUN(test_id);
        TEST_RUN(test_properties);
        TEST_RUN(test_from_uevent);
        TEST_RUN(test_parents);
        TEST_RUN(test_subsystem_sysname);
        TEST_RUN(test_devnum_ifindex_id_lookup);
        TEST_RUN(test_sysattr);
        TEST_RUN(test_db);
        TEST_RUN(test_many);
        TEST_RUN(test_threads);
        fixture_teardown(&fx);
        return 0;
}
