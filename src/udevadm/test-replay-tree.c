/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (single-threaded test) */
/* The replay's sysfs tree (replay-tree.c): the fake sysfs tree recorded
 * (record-sysfs.c) and rebuilt reads the same through the device view
 * (attributes, subsystem, driver, parents, lookups by subsystem/sysname and
 * by device number); gone devices disappear; a recording cannot make the
 * rebuild write outside its tree. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "device/test-sysfs-fixture.h"
#include "shared/log.h"
#include "shared/tests.h"
#include "udevadm/record-file.c"
#include "udevadm/record-sysfs.c"
#include "udevadm/replay-tree.c"

static struct uevent *mk_uevent(const char *action, const char *devpath, const char *subsystem,
                                uint64_t seqnum)
{
        char buf[1024];
        int n = snprintf(buf, sizeof(buf), "%s@%s%cACTION=%s%cDEVPATH=%s%cSUBSYSTEM=%s%cSEQNUM=%llu",
                         action, devpath, 0, action, 0, devpath, 0, subsystem, 0,
                         (unsigned long long)seqnum);
        struct uevent *u = NULL;

        ASSERT_EQ(uevent_parse_kernel(buf, (size_t)n + 1, 0, &u), 0);
        return u;
}

/* Record events for `devpaths` from the fixture, then a remove of the last. */
static char *record(struct sysfs_fixture *fx, const char *const *devpaths, size_t n,
                    size_t *len)
{
        struct record_sysfs s;
        struct record_writer w;
        char *buf = NULL, dgram[UEVENT_BUFFER_MAX];
        FILE *f = open_memstream(&buf, len);
        uint64_t seq = 1;

        record_sysfs_init(&s, fx->sys);
        ASSERT_EQ(record_writer_begin(&w, f), 0);
        for (size_t i = 0; i < n; i++) {
                struct uevent *u = mk_uevent("add", devpaths[i], "x", seq);
                int dl = uevent_format_kernel(u, dgram, sizeof(dgram));
                ASSERT_EQ(record_sysfs_event(&s, &w, u), 0);
                ASSERT_EQ(record_write_event(&w, seq++, dgram, (size_t)dl), 0);
                uevent_free(u);
        }
        ASSERT_EQ(record_writer_end(&w), 0);
        fclose(f);
        record_sysfs_done(&s);
        return buf;
}

static void rebuild(struct replay_tree *t, const char *buf, size_t len)
{
        FILE *f = fmemopen((void *)buf, len, "r");
        struct record_reader r;
        struct record_item it;
        int k;

        ASSERT_EQ(record_reader_begin(&r, f, "t"), 0);
        while ((k = record_read_next(&r, &it)) > 0)
                ASSERT_EQ(replay_tree_apply(t, &it), 0);
        ASSERT_EQ(k, 0);
        record_reader_done(&r);
        fclose(f);
}

/* Every attribute of `devpath` reads the same in both trees. */
static void same_device(struct device_ctx *a, struct device_ctx *b, const char *devpath,
                        const char *const *attrs)
{
        char pa[PATH_MAX], pb[PATH_MAX];
        struct device *da, *db;
        const char *va, *vb;

        snprintf(pa, sizeof(pa), "%s%s", device_ctx_roots(a)->sys, devpath);
        snprintf(pb, sizeof(pb), "%s%s", device_ctx_roots(b)->sys, devpath);
        ASSERT_EQ(device_from_syspath(a, pa, &da), 0);
        ASSERT_EQ(device_from_syspath(b, pb, &db), 0);
        ASSERT_STREQ(device_devpath(db), devpath);
        for (size_t i = 0; attrs[i]; i++) {
                int ra = device_get_sysattr(da, attrs[i], &va);
                int rb = device_get_sysattr(db, attrs[i], &vb);
                if (ra != rb)
                        fprintf(stderr, "%s %s: %d != %d\n", devpath, attrs[i], ra, rb);
                ASSERT_EQ(ra, rb);
                if (ra >= 0)
                        ASSERT_STREQ(va, vb);
        }
        ASSERT_EQ(device_get_subsystem(da, &va), device_get_subsystem(db, &vb));
        ASSERT_STREQ(va, vb);
        if (device_get_driver(da, &va) >= 0) {
                ASSERT_EQ(device_get_driver(db, &vb), 0);
                ASSERT_STREQ(va, vb);
        }
        while (device_get_parent(da, &da) >= 0) {
                ASSERT_EQ(device_get_parent(db, &db), 0);
                ASSERT_STREQ(device_devpath(da), device_devpath(db));
        }
        ASSERT_EQ(device_get_parent(db, &db), -ENOENT);
}

static void test_rebuilt_tree_reads_the_same(void)
{
        static const char *const devs[] = { SDA1, ETH0, EVENT3, DMI };
        static const char *const sda_attrs[] = { "size", "removable", "dev", "uevent", "none",
                                                 "subsystem", NULL };
        static const char *const pci_attrs[] = { "vendor", "device", "crlf", "spaces",
                                                 "power/control", "config", "nulend", "nulmid",
                                                 "remove", "driver", "subsystem",
                                                 "firmware_node", NULL };
        static const char *const usb_attrs[] = { "idVendor", "idProduct", "serial", "product",
                                                 "manufacturer", NULL };
        static const char *const eth_attrs[] = { "ifindex", "address", "mtu", NULL };
        static const char *const dmi_attrs[] = { "product_name", "sys_vendor", NULL };
        struct sysfs_fixture fx;
        struct replay_tree t;
        struct device_ctx *a, *b;
        struct device *d;
        size_t len = 0;
        char *buf;

        fixture_setup(&fx);
        buf = record(&fx, devs, ARRAY_SIZE(devs), &len);
        ASSERT_EQ(replay_tree_new(&t), 0);
        rebuild(&t, buf, len);
        ASSERT_EQ(device_ctx_new(&fx.roots, &a), 0);
        ASSERT_EQ(device_ctx_new(&t.roots, &b), 0);
        same_device(a, b, SDA, sda_attrs);
        same_device(a, b, SDA1, sda_attrs);
        same_device(a, b, PCI_USB, pci_attrs);
        same_device(a, b, USB_DEV, usb_attrs);
        same_device(a, b, ETH0, eth_attrs);
        same_device(a, b, DMI, dmi_attrs);
        same_device(a, b, EVENT3, eth_attrs);
        /* lookups through the registrations */
        ASSERT_EQ(device_from_devnum(b, 'b', 8, 1, &d), 0);
        ASSERT_STREQ(device_devpath(d), SDA1);
        ASSERT_EQ(device_from_devnum(b, 'c', 13, 67, &d), 0);
        ASSERT_STREQ(device_devpath(d), EVENT3);
        ASSERT_EQ(device_from_subsystem_sysname(b, "net", "eth0", &d), 0);
        ASSERT_STREQ(device_devpath(d), ETH0);
        ASSERT_EQ(device_from_subsystem_sysname(b, "pci", "0000:00:1d.0", &d), 0);
        ASSERT_STREQ(device_devpath(d), PCI_USB);
        /* the child device of a recorded parent was not recorded */
        ASSERT_EQ(device_from_subsystem_sysname(b, "block", "sda2", &d), -ENOENT);
        device_ctx_free(a);
        device_ctx_free(b);
        free(buf);
        replay_tree_remove(&t);
        fixture_teardown(&fx);
}

static struct record_item item(enum record_item_type type, const char *path, const char *data)
{
        return (struct record_item){ .type = type, .path = path, .data = data,
                                     .len = data ? strlen(data) : 0, .target = data };
}

static void test_snapshot_replaces_and_gone_removes(void)
{
        struct replay_tree t;
        struct record_item it;
        char p[PATH_MAX + 64];
        struct stat st;

        ASSERT_EQ(replay_tree_new(&t), 0);
        it = item(RECORD_ITEM_DEVICE, "/devices/a", NULL);
        ASSERT_EQ(replay_tree_apply(&t, &it), 0);
        it = item(RECORD_ITEM_FILE, "uevent", "");
        ASSERT_EQ(replay_tree_apply(&t, &it), 0);
        it = item(RECORD_ITEM_FILE, "old", "1\n");
        ASSERT_EQ(replay_tree_apply(&t, &it), 0);
        it = item(RECORD_ITEM_FILE, "power/old", "1\n");
        ASSERT_EQ(replay_tree_apply(&t, &it), 0);
        it = item(RECORD_ITEM_UNREADABLE, "secret", NULL);
        ASSERT_EQ(replay_tree_apply(&t, &it), 0);
        it = item(RECORD_ITEM_LINK, "peer", "/class/x");
        ASSERT_EQ(replay_tree_apply(&t, &it), 0);
        /* a file through the link: refused */
        it = item(RECORD_ITEM_FILE, "peer/evil", "x");
        ASSERT_EQ(replay_tree_apply(&t, &it), -ELOOP);
        it = item(RECORD_ITEM_DEVICE, "/devices/a/b", NULL);
        ASSERT_EQ(replay_tree_apply(&t, &it), 0);
        it = item(RECORD_ITEM_FILE, "uevent", "");
        ASSERT_EQ(replay_tree_apply(&t, &it), 0);
        snprintf(p, sizeof(p), "%s/devices/a/secret", t.sys);
        ASSERT_EQ(stat(p, &st), 0);
        ASSERT_EQ(st.st_mode & 07777, 0200);

        /* a new snapshot of a: old files gone, the child stays */
        it = item(RECORD_ITEM_DEVICE, "/devices/a", NULL);
        ASSERT_EQ(replay_tree_apply(&t, &it), 0);
        it = item(RECORD_ITEM_FILE, "uevent", "");
        ASSERT_EQ(replay_tree_apply(&t, &it), 0);
        it = item(RECORD_ITEM_END, NULL, NULL);
        ASSERT_EQ(replay_tree_apply(&t, &it), 0);
        snprintf(p, sizeof(p), "%s/devices/a/old", t.sys);
        ASSERT_EQ(lstat(p, &st), -1);
        snprintf(p, sizeof(p), "%s/devices/a/power/old", t.sys);
        ASSERT_EQ(lstat(p, &st), -1);
        snprintf(p, sizeof(p), "%s/devices/a/peer", t.sys);
        ASSERT_EQ(lstat(p, &st), -1);
        snprintf(p, sizeof(p), "%s/devices/a/b/uevent", t.sys);
        ASSERT_EQ(lstat(p, &st), 0);
        it = item(RECORD_ITEM_GONE, "/devices/a", NULL);
        ASSERT_EQ(replay_tree_apply(&t, &it), 0);
        snprintf(p, sizeof(p), "%s/devices/a", t.sys);
        ASSERT_EQ(lstat(p, &st), -1);
        replay_tree_remove(&t);
        ASSERT_EQ(lstat(p, &st), -1);
}

int main(void)
{
        log_set_max_level(LOG_WARNING);
        TEST_RUN(test_rebuilt_tree_reads_the_same);
        TEST_RUN(test_snapshot_replaces_and_gone_removes);
        return 0;
}
