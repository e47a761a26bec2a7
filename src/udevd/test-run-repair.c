/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (test) */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "device/db.h"
#include "device/node.h"
#include "proto/uevent.h"
#include "shared/fileio.h"
#include "shared/log.h"
#include "shared/tests.h"
#include "udevd/known-devices.h"
#include "udevd/run-repair.h"

static char root[256];
static char sys_root[512], dev_root[512], run_root[512];
static struct device_roots roots;

static int rm_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        return remove(path);
}

static void setup(void)
{
        snprintf(root, sizeof(root), "/tmp/test-run-repair.XXXXXX");
        ASSERT_TRUE(mkdtemp(root));
        snprintf(sys_root, sizeof(sys_root), "%s/sys", root);
        snprintf(dev_root, sizeof(dev_root), "%s/dev", root);
        snprintf(run_root, sizeof(run_root), "%s/run/udev", root);
        ASSERT_EQ(mkdir_p(sys_root, 0755), 0);
        ASSERT_EQ(mkdir_p(dev_root, 0755), 0);
        ASSERT_EQ(mkdir_p(run_root, 0755), 0);
        roots = (struct device_roots){ .sys = sys_root, .dev = dev_root, .run = run_root };
}

static void teardown(void)
{
        nftw(root, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
        root[0] = '\0';
}

static const char *under(const char *base, const char *rel)
{
        static char bufs[4][PATH_MAX];
        static unsigned i;
        char *b = bufs[i++ % 4];

        snprintf(b, PATH_MAX, "%s/%s", base, rel);
        return b;
}

static void put_file(const char *base, const char *rel, const char *text)
{
        const char *p = under(base, rel);
        ASSERT_EQ(mkdir_parents(p, 0755), 0);
        ASSERT_EQ(write_file_atomic(p, text, strlen(text), 0644), 0);
}

static void put_dir(const char *base, const char *rel)
{
        ASSERT_EQ(mkdir_p(under(base, rel), 0755), 0);
}

static bool exists(const char *base, const char *rel)
{
        struct stat st;
        return lstat(under(base, rel), &st) == 0;
}

static const char *target(const char *base, const char *rel)
{
        static char buf[PATH_MAX];
        ssize_t n = readlink(under(base, rel), buf, sizeof(buf) - 1);

        if (n < 0)
                return "";
        buf[n] = '\0';
        return buf;
}

#define LOOP(_id, _node, _min, _prio)                                              \
        ((struct node_device){ .id = (_id), .devnode = (_node), .subsystem = "block", \
                               .devtype = "disk", .major = 7, .minor = (_min),    \
                               .priority = (_prio) })

static void test_temp_names(void)
{
        ASSERT_TRUE(is_atomic_temp_name(".#b7:10123456789abcdef"));
        ASSERT_TRUE(is_atomic_temp_name(".#x0000000000000000"));
        ASSERT_TRUE(!is_atomic_temp_name(".#0123456789abcdef"));   /* no name */
        ASSERT_TRUE(!is_atomic_temp_name(".#b7:10123456789abcdeF"));
        ASSERT_TRUE(!is_atomic_temp_name("b7:1"));
        ASSERT_TRUE(!is_atomic_temp_name(".lock"));
}

static void fake_sysfs(void)
{
        put_dir(sys_root, "dev/block/7:1");
        put_dir(sys_root, "dev/char/4:1");
        put_file(sys_root, "class/net/eth0/ifindex", "3\n");
        put_file(sys_root, "class/net/bogus/ifindex", "x\n");
        put_dir(sys_root, "bus/pci/devices/0000:00:01.0");
        put_dir(sys_root, "bus/pci/drivers/e1000e");
        put_dir(sys_root, "class/bdi/7:1");
        put_dir(sys_root, "module/loop");
}

static void test_presence(void)
{
        struct sysfs_presence *p;

        setup();
        fake_sysfs();
        ASSERT_EQ(sysfs_presence_new(sys_root, &p), 0);
        ASSERT_EQ(sysfs_presence_of_id(p, "b7:1"), PRESENCE_PRESENT);
        ASSERT_EQ(sysfs_presence_of_id(p, "b7:2"), PRESENCE_GONE);
        ASSERT_EQ(sysfs_presence_of_id(p, "c4:1"), PRESENCE_PRESENT);
        ASSERT_EQ(sysfs_presence_of_id(p, "c4:2"), PRESENCE_GONE);
        ASSERT_EQ(sysfs_presence_of_id(p, "b7"), PRESENCE_UNKNOWN);
        ASSERT_EQ(sysfs_presence_of_id(p, "b0:5"), PRESENCE_UNKNOWN);
        ASSERT_EQ(sysfs_presence_of_id(p, "n3"), PRESENCE_PRESENT);
        ASSERT_EQ(sysfs_presence_of_id(p, "n4"), PRESENCE_GONE);
        ASSERT_EQ(sysfs_presence_of_id(p, "n-1"), PRESENCE_UNKNOWN);
        ASSERT_EQ(sysfs_presence_of_id(p, "+pci:0000:00:01.0"), PRESENCE_PRESENT);
        ASSERT_EQ(sysfs_presence_of_id(p, "+pci:0000:00:02.0"), PRESENCE_GONE);
        ASSERT_EQ(sysfs_presence_of_id(p, "+bdi:7:1"), PRESENCE_PRESENT);
        ASSERT_EQ(sysfs_presence_of_id(p, "+bdi:7:2"), PRESENCE_GONE);
        ASSERT_EQ(sysfs_presence_of_id(p, "+queues:rx-0"), PRESENCE_UNKNOWN);
        ASSERT_EQ(sysfs_presence_of_id(p, "+drivers:pci:e1000e"), PRESENCE_PRESENT);
        ASSERT_EQ(sysfs_presence_of_id(p, "+drivers:pci:igb"), PRESENCE_GONE);
        ASSERT_EQ(sysfs_presence_of_id(p, "+drivers:usb:x"), PRESENCE_UNKNOWN);
        ASSERT_EQ(sysfs_presence_of_id(p, "+module:loop"), PRESENCE_PRESENT);
        ASSERT_EQ(sysfs_presence_of_id(p, "+pci:.."), PRESENCE_UNKNOWN);
        ASSERT_EQ(sysfs_presence_of_id(p, "+pci"), PRESENCE_UNKNOWN);
        ASSERT_EQ(sysfs_presence_of_id(p, "x1"), PRESENCE_UNKNOWN);
        sysfs_presence_free(p);
        teardown();
}

static void claim(const struct node_device *d, const char *link)
{
        ASSERT_EQ(node_link_update(&roots, d, link, true), 0);
}

static void test_repair(void)
{
        struct run_repair_stats st;
        struct node_device a = LOOP("b7:1", "/dev/loop1", 1, 0);
        struct node_device b = LOOP("b7:2", "/dev/loop2", 2, 10);

        setup();
        fake_sysfs();
        put_file(dev_root, "loop1", "");
        put_file(dev_root, "loop2", "");
        /* b7:1 exists and claims disk/a, disk/d; b7:2 vanished and claimed disk/a
         * (winning), disk/b; b7:1 also has a claim on disk/c its record lacks. */
        put_file(run_root, "data/b7:1", "S:disk/a\nS:disk/d\nI:1\nV:1\n");
        put_file(run_root, "data/b7:2", "S:disk/a\nS:disk/b\nL:10\nI:2\nG:tagx\nQ:tagx\nV:1\n");
        put_file(run_root, "data/n3", "I:3\nV:1\n");
        put_file(run_root, "data/n5", "I:5\nG:tagx\nV:1\n");
        put_file(run_root, "data/+queues:rx-0", "E:X=1\nV:1\n");
        put_file(run_root, "tags/tagx/b7:2", "");
        put_file(run_root, "tags/tagx/n5", "");
        put_file(run_root, "tags/orphan/c1:1", "");
        claim(&a, "disk/a");
        claim(&a, "disk/d");
        claim(&a, "disk/c");
        claim(&b, "disk/a");
        claim(&b, "disk/b");
        ASSERT_EQ(mkdir_parents(under(dev_root, "block/7:2"), 0755), 0);
        ASSERT_EQ(symlink("../loop2", under(dev_root, "block/7:2")), 0);
        ASSERT_STREQ(target(dev_root, "disk/a"), "../loop2");
        /* the crash: disk/d lost its symlink, temporary files stayed, queue flag */
        ASSERT_EQ(unlink(under(dev_root, "disk/d")), 0);
        put_file(run_root, "data/.#b7:10123456789abcdef", "S:x\n");
        ASSERT_EQ(symlink("../loop1", under(dev_root, "disk/.#a0123456789abcdef")), 0);
        put_file(run_root, "queue", "");
        /* an empty stack directory whose symlink survived */
        claim(&a, "disk/e");
        ASSERT_EQ(unlink(under(run_root, "links/disk\\x2fe/b7:1")), 0);

        ASSERT_EQ(run_repair(&roots, &st), 0);

        ASSERT_EQ(st.queue_flag, 1);
        ASSERT_EQ(st.temp_files, 2);
        ASSERT_EQ(st.stale_records, 2); /* b7:2, n5 */
        ASSERT_EQ(st.stale_tags, 1);    /* orphan/c1:1 (the others went with records) */
        ASSERT_EQ(st.stale_claims, 1);  /* disk/c by b7:1 */
        ASSERT_EQ(st.links_resolved, 1); /* disk/d */
        ASSERT_EQ(st.links_removed, 1);  /* disk/e */
        ASSERT_TRUE(!exists(run_root, "queue"));
        ASSERT_TRUE(!exists(run_root, "data/.#b7:10123456789abcdef"));
        ASSERT_TRUE(!exists(dev_root, "disk/.#a0123456789abcdef"));
        ASSERT_TRUE(exists(run_root, "data/b7:1"));
        ASSERT_TRUE(!exists(run_root, "data/b7:2"));
        ASSERT_TRUE(exists(run_root, "data/n3"));
        ASSERT_TRUE(!exists(run_root, "data/n5"));
        ASSERT_TRUE(exists(run_root, "data/+queues:rx-0"));
        ASSERT_TRUE(!exists(run_root, "tags/tagx/b7:2"));
        ASSERT_TRUE(!exists(run_root, "tags/tagx/n5"));
        ASSERT_TRUE(!exists(run_root, "tags/orphan/c1:1"));
        ASSERT_STREQ(target(dev_root, "disk/a"), "../loop1"); /* handed over */
        ASSERT_TRUE(!exists(dev_root, "disk/b"));
        ASSERT_TRUE(!exists(dev_root, "block/7:2"));
        ASSERT_TRUE(!exists(dev_root, "disk/c"));
        ASSERT_TRUE(!exists(run_root, "links/disk\\x2fc/b7:1"));
        ASSERT_STREQ(target(dev_root, "disk/d"), "../loop1");
        ASSERT_TRUE(!exists(dev_root, "disk/e"));
        ASSERT_TRUE(exists(dev_root, "loop2")); /* nodes are never touched */

        /* Idempotent: nothing left to do. */
        ASSERT_EQ(run_repair(&roots, &st), 0);
        ASSERT_EQ(st.queue_flag + st.temp_files + st.stale_records + st.stale_tags +
                  st.stale_claims + st.links_resolved + st.links_removed, 0);
        teardown();
}

static void test_repair_leaves_foreign_files(void)
{
        struct run_repair_stats st;
        struct node_device a = LOOP("b7:1", "/dev/loop1", 1, 0);

        setup();
        fake_sysfs();
        put_file(dev_root, "loop1", "");
        put_file(run_root, "data/b7:1", "V:1\n"); /* no S: for disk/f */
        claim(&a, "disk/f");
        /* someone replaced the symlink with a regular file: not ours */
        ASSERT_EQ(unlink(under(dev_root, "disk/f")), 0);
        put_file(dev_root, "disk/f", "data");
        put_file(dev_root, ".#notatemp", "");              /* wrong shape */
        put_file(dev_root, ".#x0123456789abcdef", "");      /* regular file in /dev */
        ASSERT_EQ(run_repair(&roots, &st), 0);
        ASSERT_EQ(st.stale_claims, 1);
        ASSERT_TRUE(exists(dev_root, "disk/f"));
        ASSERT_TRUE(exists(dev_root, ".#notatemp"));
        ASSERT_TRUE(exists(dev_root, ".#x0123456789abcdef"));
        ASSERT_EQ(st.temp_files, 0);
        teardown();
}

/* A kernel datagram written with '|' for the NULs. */
static struct uevent *parse(const char *text)
{
        char buf[1024], *p = buf;
        struct uevent *ev = NULL;
        int n = snprintf(buf, sizeof(buf), "%s", text);

        ASSERT_TRUE(n > 0 && (size_t)n < sizeof(buf));
        for (; *p; p++)
                if (*p == '|')
                        *p = '\0';
        ASSERT_EQ(uevent_parse_kernel(buf, (size_t)n, 1, &ev), 0);
        return ev;
}

static void test_known_devices(void)
{
        struct known_devices *k;
        struct known_device *d = NULL;
        struct uevent *evs[4];

        ASSERT_EQ(known_devices_new(&k), 0);
        evs[0] = parse("add@/devices/virtual/block/loop5|ACTION=add|DEVPATH=/devices/virtual/"
                       "block/loop5|SUBSYSTEM=block|DEVTYPE=disk|MAJOR=7|MINOR=5|DEVNAME=loop5|"
                       "SEQNUM=10|");
        evs[1] = parse("add@/devices/virtual/net/v0|ACTION=add|DEVPATH=/devices/virtual/net/v0|"
                       "SUBSYSTEM=net|INTERFACE=v0|IFINDEX=9|SEQNUM=11|");
        evs[2] = parse("move@/devices/virtual/net/w0|ACTION=move|DEVPATH=/devices/virtual/net/w0|"
                       "DEVPATH_OLD=/devices/virtual/net/v0|SUBSYSTEM=net|INTERFACE=w0|"
                       "IFINDEX=9|SEQNUM=12|");
        evs[3] = parse("add@/devices/virtual/bdi/7:5|ACTION=add|DEVPATH=/devices/virtual/bdi/7:5|"
                       "SUBSYSTEM=bdi|SEQNUM=13|");
        known_devices_note(k, evs, 4);
        ASSERT_EQ(known_devices_count(k), 3);
        ASSERT_EQ(known_devices_get(k, "b7:5", &d), 0);
        ASSERT_STREQ(d->devpath, "/devices/virtual/block/loop5");
        ASSERT_STREQ(d->subsystem, "block");
        ASSERT_STREQ(d->devtype, "disk");
        ASSERT_STREQ(d->devnode, "/dev/loop5");
        ASSERT_EQ(d->major, 7);
        ASSERT_EQ(d->minor, 5);
        free(d);
        ASSERT_EQ(known_devices_get(k, "n9", &d), 0);
        ASSERT_STREQ(d->devpath, "/devices/virtual/net/w0"); /* the move updated it */
        ASSERT_TRUE(d->devtype == NULL && d->devnode == NULL);
        ASSERT_EQ(d->ifindex, 9);
        free(d);
        ASSERT_EQ(known_devices_get(k, "+bdi:7:5", &d), 0);
        free(d);
        for (int i = 0; i < 4; i++)
                uevent_free(evs[i]);

        evs[0] = parse("remove@/devices/virtual/block/loop5|ACTION=remove|DEVPATH=/devices/"
                       "virtual/block/loop5|SUBSYSTEM=block|MAJOR=7|MINOR=5|SEQNUM=14|");
        evs[1] = NULL;
        known_devices_note(k, evs, 2);
        uevent_free(evs[0]);
        ASSERT_EQ(known_devices_get(k, "b7:5", &d), -ENOENT);
        known_devices_forget(k, "n9");
        known_devices_forget(k, "n9");
        ASSERT_EQ(known_devices_count(k), 1);
        known_devices_free(k);
}

int main(void)
{
        log_set_max_level(LOG_WARNING);
        TEST_RUN(test_temp_names);
        TEST_RUN(test_presence);
        TEST_RUN(test_repair);
        TEST_RUN(test_repair_leaves_foreign_files);
        TEST_RUN(test_known_devices);
        return 0;
}
