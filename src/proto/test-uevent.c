/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: test (single-threaded) */
#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/uevent.h"
#include "shared/macro.h"
#include "shared/tests.h"

#define MSG_MAX (UEVENT_BUFFER_MAX + 4096)

/* Join NULL-terminated parts, each followed by a NUL, into a new exact-size
 * heap buffer (so ASan sees any over-read). */
static char *build(const char *const *parts, size_t *ret_len)
{
        size_t len = 0;
        char *buf, *p;

        for (size_t i = 0; parts[i]; i++)
                len += strlen(parts[i]) + 1;
        buf = malloc(len ? len : 1);
        ASSERT_TRUE(buf);
        p = buf;
        for (size_t i = 0; parts[i]; i++) {
                size_t n = strlen(parts[i]) + 1;

                memcpy(p, parts[i], n);
                p += n;
        }
        *ret_len = len;
        return buf;
}

static int parse_parts(const char *const *parts, struct uevent **ret)
{
        size_t len;
        char *buf = build(parts, &len);
        int r = uevent_parse_kernel(buf, len, 42, ret);

        free(buf);
        return r;
}

#define PARTS(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* Every record that parsed must be self-consistent. */
static void check_invariants(const struct uevent *ev)
{
        const char *lo = ev->buf, *hi = ev->buf + ev->buf_len;

        ASSERT_TRUE(ev->seqnum > 0);
        ASSERT_TRUE(ev->action >= 0 && ev->action < _UEVENT_ACTION_MAX);
        ASSERT_TRUE(ev->devpath && ev->devpath[0] == '/');
        ASSERT_TRUE(ev->subsystem && ev->subsystem[0]);
        ASSERT_TRUE(ev->sysname && ev->sysname[0]);
        ASSERT_TRUE(ev->id[0]);
        ASSERT_TRUE(strstr(ev->devpath, "/../") == NULL);
        ASSERT_TRUE(ev->devnode[0] == '\0' || strncmp(ev->devnode, "/dev/", 5) == 0);
        ASSERT_TRUE(strstr(ev->devnode, "..") == NULL || strstr(ev->devnode, "/../") == NULL);
        ASSERT_TRUE(ev->n_props <= UEVENT_PROPS_MAX);
        for (size_t i = 0; i < ev->n_props; i++) {
                ASSERT_TRUE(ev->props[i].key >= lo && ev->props[i].key < hi);
                ASSERT_TRUE(ev->props[i].value >= lo && ev->props[i].value < hi);
                ASSERT_TRUE(strchr(ev->props[i].value, '\n') == NULL);
        }
        /* one block: header, index, payload, id, devnode */
        ASSERT_TRUE(ev->buf >= (const char *)(ev->props + ev->n_props));
        ASSERT_TRUE(ev->buf <= (const char *)(ev->props + UEVENT_PROPS_MAX));
        ASSERT_EQ((size_t)(ev->buf - (const char *)ev->props) % sizeof(ev->props[0]), 0);
        ASSERT_TRUE(ev->id == ev->buf + ev->buf_len);
        ASSERT_TRUE(!ev->devnode[0] || ev->devnode == ev->id + strlen(ev->id) + 1);
}

/* Bytes the record needs: header, one index slot per string after the
 * "ACTION@DEVPATH" header, payload, id, devnode. */
static size_t expected_size(const struct uevent *ev, size_t n_strings)
{
        return sizeof(*ev) + n_strings * sizeof(ev->props[0]) + ev->buf_len + strlen(ev->id) + 1 +
               (ev->devnode[0] ? strlen(ev->devnode) + 1 : 0);
}

static void check_size(const char *const *parts, size_t max)
{
        _cleanup_(uevent_freep) struct uevent *ev = NULL;
        size_t n = 0, want;

        while (parts[n + 1])
                n++;
        ASSERT_EQ(parse_parts(parts, &ev), 0);
        check_invariants(ev);
        ASSERT_TRUE(ev->buf == (const char *)(ev->props + n));
        want = expected_size(ev, n);
        ASSERT_EQ(ev->alloc_size, want); /* what the event queue's budget counts */
        ASSERT_TRUE(malloc_usable_size(ev) >= want);
        ASSERT_TRUE(malloc_usable_size(ev) < want + 64);
        ASSERT_TRUE(want <= max);
}

/* Records are sized to their message (about twice the payload), not to the
 * limits (UEVENT_PROPS_MAX slots, UEVENT_BUFFER_MAX). */
static void test_compact(void)
{
        check_size(PARTS("add@/devices/virtual/net/veth0", "ACTION=add",
                         "DEVPATH=/devices/virtual/net/veth0", "SUBSYSTEM=net", "INTERFACE=veth0",
                         "IFINDEX=12", "SEQNUM=5000"),
                   500);
        check_size(PARTS("add@/devices/virtual/block/loop7", "ACTION=add",
                         "DEVPATH=/devices/virtual/block/loop7", "SUBSYSTEM=block", "MAJOR=7",
                         "MINOR=7", "DEVNAME=loop7", "DEVTYPE=disk", "DISKSEQ=31",
                         "SEQNUM=5001"),
                   600);
#define SDA1 "/devices/pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0/block/sda/sda1"
        check_size(PARTS("add@" SDA1, "ACTION=add", "DEVPATH=" SDA1,
                         "SUBSYSTEM=block", "MAJOR=8", "MINOR=1", "DEVNAME=sda1",
                         "DEVTYPE=partition", "DISKSEQ=1", "PARTN=1",
                         "PARTNAME=EFI System Partition", "SEQNUM=2210"),
                   800);
#undef SDA1
        /* a repeated key still takes a slot of its own */
        check_size(PARTS("change@/devices/virtual/net/veth0", "ACTION=change",
                         "DEVPATH=/devices/virtual/net/veth0", "SUBSYSTEM=net", "FOO=1", "FOO=2",
                         "IFINDEX=12", "SEQNUM=5002"),
                   600);
}

static void test_actions(void)
{
        for (int a = 0; a < _UEVENT_ACTION_MAX; a++)
                ASSERT_EQ(uevent_action_from_string(uevent_action_to_string(a)), a);
        ASSERT_EQ(uevent_action_from_string("frob"), _UEVENT_ACTION_INVALID);
        ASSERT_EQ(uevent_action_from_string(""), _UEVENT_ACTION_INVALID);
        ASSERT_EQ(uevent_action_from_string(NULL), _UEVENT_ACTION_INVALID);
        ASSERT_TRUE(uevent_action_to_string(_UEVENT_ACTION_MAX) == NULL);
        ASSERT_TRUE(uevent_action_to_string(_UEVENT_ACTION_INVALID) == NULL);
        ASSERT_STREQ(uevent_action_to_string(UEVENT_ACTION_UNBIND), "unbind");
}

#define SDB "/devices/pci0000:00/0000:00:1d.0/usb2/2-1/2-1:1.0/host6/target6:0:0/6:0:0:0/block/sdb"

static void test_block(void)
{
        _cleanup_(uevent_freep) struct uevent *ev = NULL;

        ASSERT_EQ(parse_parts(PARTS("add@" SDB, "ACTION=add", "DEVPATH=" SDB, "SUBSYSTEM=block",
                                    "MAJOR=8", "MINOR=16", "DEVNAME=sdb", "DEVTYPE=disk",
                                    "DISKSEQ=12", "SEQNUM=4711"),
                              &ev),
                  0);
        check_invariants(ev);
        ASSERT_EQ(ev->seqnum, 4711);
        ASSERT_EQ(ev->action, UEVENT_ACTION_ADD);
        ASSERT_EQ(ev->recv_usec, 42);
        ASSERT_STREQ(ev->devpath, SDB);
        ASSERT_TRUE(ev->devpath_old == NULL);
        ASSERT_STREQ(ev->subsystem, "block");
        ASSERT_STREQ(ev->devtype, "disk");
        ASSERT_TRUE(ev->driver == NULL);
        ASSERT_STREQ(ev->sysname, "sdb");
        ASSERT_EQ(ev->major, 8);
        ASSERT_EQ(ev->minor, 16);
        ASSERT_EQ(ev->ifindex, 0);
        ASSERT_STREQ(ev->id, "b8:16");
        ASSERT_STREQ(ev->devnode, "/dev/sdb");
        ASSERT_EQ(ev->n_props, 9);
        ASSERT_STREQ(ev->props[0].key, "ACTION");
        ASSERT_STREQ(ev->props[6].key, "DEVTYPE");
        ASSERT_STREQ(ev->props[8].key, "SEQNUM");
        ASSERT_STREQ(uevent_get(ev, "DEVNAME"), "sdb"); /* still relative */
        ASSERT_STREQ(uevent_get(ev, "DISKSEQ"), "12");
        ASSERT_TRUE(uevent_get(ev, "DISK") == NULL);
        ASSERT_TRUE(uevent_get(ev, "SEQNUM=4711") == NULL);
        ASSERT_TRUE(uevent_get(NULL, "SEQNUM") == NULL);
}

static void test_partition_remove(void)
{
        _cleanup_(uevent_freep) struct uevent *ev = NULL;

        ASSERT_EQ(parse_parts(PARTS("remove@/devices/virtual/block/loop0/loop0p1", "ACTION=remove",
                                    "DEVPATH=/devices/virtual/block/loop0/loop0p1",
                                    "SUBSYSTEM=block", "MAJOR=259", "MINOR=131072",
                                    "DEVNAME=loop0p1", "DEVTYPE=partition", "PARTN=1",
                                    "SEQNUM=18446744073709551615"),
                              &ev),
                  0);
        check_invariants(ev);
        ASSERT_EQ(ev->action, UEVENT_ACTION_REMOVE);
        ASSERT_TRUE(ev->seqnum == UINT64_MAX);
        ASSERT_STREQ(ev->id, "b259:131072");
        ASSERT_STREQ(ev->devnode, "/dev/loop0p1");
}

static void test_net(void)
{
        _cleanup_(uevent_freep) struct uevent *ev = NULL, *mv = NULL;

        ASSERT_EQ(parse_parts(PARTS("add@/devices/virtual/net/veth0", "ACTION=add",
                                    "DEVPATH=/devices/virtual/net/veth0", "SUBSYSTEM=net",
                                    "INTERFACE=veth0", "IFINDEX=3", "SEQNUM=77"),
                              &ev),
                  0);
        check_invariants(ev);
        ASSERT_EQ(ev->ifindex, 3);
        ASSERT_STREQ(ev->id, "n3");
        ASSERT_STREQ(ev->devnode, "");
        ASSERT_STREQ(ev->sysname, "veth0");

#define PCINET "/devices/pci0000:00/0000:00:03.0/net/"
        ASSERT_EQ(parse_parts(PARTS("move@" PCINET "enp0s3", "ACTION=move",
                                    "DEVPATH=" PCINET "enp0s3", "SUBSYSTEM=net",
                                    "DEVPATH_OLD=" PCINET "eth0", "INTERFACE=enp0s3",
                                    "IFINDEX=2147483647", "SEQNUM=78"),
                              &mv),
                  0);
        check_invariants(mv);
        ASSERT_EQ(mv->action, UEVENT_ACTION_MOVE);
        ASSERT_STREQ(mv->devpath_old, PCINET "eth0");
        ASSERT_STREQ(mv->id, "n2147483647");
}

#define USBDEV "/devices/pci0000:00/0000:00:14.0/usb3/3-2"

static void test_usb(void)
{
        _cleanup_(uevent_freep) struct uevent *dev = NULL, *intf = NULL;

        ASSERT_EQ(parse_parts(PARTS("add@" USBDEV, "ACTION=add", "DEVPATH=" USBDEV, "SUBSYSTEM=usb",
                                    "MAJOR=189", "MINOR=258", "DEVNAME=bus/usb/003/003",
                                    "DEVTYPE=usb_device", "DRIVER=usb", "PRODUCT=46d/c52b/1211",
                                    "TYPE=0/0/0", "BUSNUM=003", "DEVNUM=003", "SEQNUM=3001"),
                              &dev),
                  0);
        check_invariants(dev);
        ASSERT_STREQ(dev->id, "c189:258");
        ASSERT_STREQ(dev->devnode, "/dev/bus/usb/003/003");
        ASSERT_STREQ(dev->driver, "usb");
        ASSERT_STREQ(dev->devtype, "usb_device");

        ASSERT_EQ(parse_parts(PARTS("bind@" USBDEV "/3-2:1.0", "ACTION=bind",
                                    "DEVPATH=" USBDEV "/3-2:1.0", "SUBSYSTEM=usb",
                                    "DEVTYPE=usb_interface", "DRIVER=usbhid",
                                    "PRODUCT=46d/c52b/1211", "TYPE=0/0/0", "INTERFACE=3/1/1",
                                    "MODALIAS=usb:v046DpC52Bd1211dc00dsc00dp00ic03isc01ip01in00",
                                    "SEQNUM=3002"),
                              &intf),
                  0);
        check_invariants(intf);
        ASSERT_EQ(intf->action, UEVENT_ACTION_BIND);
        ASSERT_STREQ(intf->id, "+usb:3-2:1.0");
        ASSERT_STREQ(intf->devnode, "");
        ASSERT_EQ(intf->major, 0);
}

static void test_drivers(void)
{
        _cleanup_(uevent_freep) struct uevent *ev = NULL, *ev2 = NULL;

        ASSERT_EQ(parse_parts(PARTS("add@/bus/pci/drivers/e1000e", "ACTION=add",
                                    "DEVPATH=/bus/pci/drivers/e1000e", "SUBSYSTEM=drivers",
                                    "SEQNUM=9"),
                              &ev),
                  0);
        check_invariants(ev);
        ASSERT_STREQ(ev->id, "+drivers:pci:e1000e");
        ASSERT_STREQ(ev->subsystem, "drivers");
        ASSERT_STREQ(ev->sysname, "e1000e");

        ASSERT_EQ(parse_parts(PARTS("remove@/bus/usb-serial/drivers/pl2303", "ACTION=remove",
                                    "DEVPATH=/bus/usb-serial/drivers/pl2303", "SUBSYSTEM=drivers",
                                    "SEQNUM=10"),
                              &ev2),
                  0);
        ASSERT_STREQ(ev2->id, "+drivers:usb-serial:pl2303");

        /* No "/drivers/" component: no id, rejected (sd-device refuses it too). */
        ASSERT_EQ(parse_parts(PARTS("add@/module/e1000e", "ACTION=add", "DEVPATH=/module/e1000e",
                                    "SUBSYSTEM=drivers", "SEQNUM=9"),
                              &ev),
                  -EBADMSG);
        ASSERT_EQ(parse_parts(PARTS("add@/drivers/e1000e", "ACTION=add", "DEVPATH=/drivers/e1000e",
                                    "SUBSYSTEM=drivers", "SEQNUM=9"),
                              &ev),
                  -EBADMSG);
}

static void test_device_id_format(void)
{
        char buf[UEVENT_ID_MAX], small[6];

        ASSERT_EQ(device_id_format(buf, sizeof(buf), "block", "/devices/x/sda", 8, 0, 0), 0);
        ASSERT_STREQ(buf, "b8:0");
        ASSERT_EQ(device_id_format(buf, sizeof(buf), "mem", "/devices/virtual/mem/null", 1, 3, 0),
                  0);
        ASSERT_STREQ(buf, "c1:3");
        /* devnum wins over ifindex */
        ASSERT_EQ(device_id_format(buf, sizeof(buf), "net", "/devices/x/tun", 10, 200, 7), 0);
        ASSERT_STREQ(buf, "c10:200");
        ASSERT_EQ(device_id_format(buf, sizeof(buf), "net", "/devices/virtual/net/lo", 0, 5, 1), 0);
        ASSERT_STREQ(buf, "n1");
        ASSERT_EQ(device_id_format(buf, sizeof(buf), "pci", "/devices/pci0000:00/0000:00:1f.2", 0,
                                   0, 0),
                  0);
        ASSERT_STREQ(buf, "+pci:0000:00:1f.2");
        ASSERT_EQ(device_id_format(buf, sizeof(buf), "block", "/devices/x/cciss!c0d0", 0, 0, 0), 0);
        ASSERT_STREQ(buf, "+block:cciss!c0d0"); /* '!' kept */
        ASSERT_EQ(device_id_format(buf, sizeof(buf), "input", "/devices/virtual/input/input12", 0,
                                   0, 0),
                  0);
        ASSERT_STREQ(buf, "+input:input12");
        ASSERT_EQ(device_id_format(buf, sizeof(buf), NULL, "/devices/x", 8, 0, 0), -ENOENT);
        ASSERT_EQ(device_id_format(buf, sizeof(buf), "", "/devices/x", 8, 0, 0), -ENOENT);
        ASSERT_EQ(device_id_format(small, sizeof(small), "block", "/x", 259, 1, 0),
                  -ENAMETOOLONG);
        ASSERT_EQ(device_id_format(buf, sizeof(buf), "a/b", "/devices/x", 0, 0, 0), -EINVAL);
        ASSERT_EQ(device_id_format(buf, sizeof(buf), "pci", "/devices/x/", 0, 0, 0), -EINVAL);
        /* The cases device.c, udevice.c and the uevent parser each handled. */
        static const struct {
                const char *subsystem, *devpath;
                unsigned major, minor;
                int ifindex, r;
                const char *id;
        } cases[] = {
                /* net: the ifindex; none (0) or a negative one: the name */
                { "net", "/devices/virtual/net/eth0", 0, 0, 3, 0, "n3" },
                { "net", "/devices/virtual/net/eth0", 0, 0, 0, 0, "+net:eth0" },
                { "net", "/devices/virtual/net/eth0", 0, 0, -2, 0, "+net:eth0" },
                /* block or char by the subsystem (not the devtype) */
                { "block", "/devices/x/sda/sda1", 8, 1, 0, 0, "b8:1" },
                { "tty", "/devices/virtual/tty/tty0", 4, 64, 0, 0, "c4:64" },
                { "usb", "/devices/x/usb1", 189, 0, 0, 0, "c189:0" },
                { "misc", "/devices/x/m", 4294967295u, 4294967295u, 0, 0,
                  "c4294967295:4294967295" },
                /* major 0: no device number, whatever the minor */
                { "block", "/devices/x/sdz", 0, 64, 0, 0, "+block:sdz" },
                { "net", "/devices/x/wlan0", 0, 64, 9, 0, "n9" },
                /* "drivers": the real subsystem from the devpath */
                { "drivers", "/bus/pci/drivers/e1000e", 0, 0, 0, 0, "+drivers:pci:e1000e" },
                { "drivers", "/bus/pci/drivers", 0, 0, 0, 0, "+drivers:pci:drivers" },
                { "drivers", "/bus/usb/drivers/usb/drivers/x", 0, 0, 0, 0, "+drivers:usb:x" },
                { "drivers", "/bus/pci/driversx", 0, 0, 0, -EINVAL, NULL },
                { "drivers", "/drivers/e1000e", 0, 0, 0, -EINVAL, NULL },
                { "drivers", "/bus/../drivers/e1000e", 0, 0, 0, -EINVAL, NULL },
                { "drivers", "/bus/./drivers/e1000e", 0, 0, 0, -EINVAL, NULL },
                /* a device number needs neither a sysname nor a drivers path */
                { "drivers", "/x/", 1, 2, 0, 0, "c1:2" },
                /* the name: not ".", "..", nor without a devpath */
                { "pci", "/devices/x/.", 0, 0, 0, -EINVAL, NULL },
                { "pci", "/devices/x/..", 0, 0, 0, -EINVAL, NULL },
                { "pci", NULL, 0, 0, 0, -EINVAL, NULL },
        };
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                int r = device_id_format(buf, sizeof(buf), cases[i].subsystem, cases[i].devpath,
                                         cases[i].major, cases[i].minor, cases[i].ifindex);

                if (r != cases[i].r)
                        fprintf(stderr, "case %zu\n", i);
                ASSERT_EQ(r, cases[i].r);
                if (cases[i].id)
                        ASSERT_STREQ(buf, cases[i].id);
        }
        ASSERT_EQ(device_id_format(buf, 0, "block", "/x", 8, 0, 0), -EINVAL);
        ASSERT_EQ(device_id_format(NULL, 10, "block", "/x", 8, 0, 0), -EINVAL);
        {
                /* ids are file names: at most 255 bytes */
                char longname[300], path[320];

                memset(longname, 'a', 252);
                longname[252] = '\0';
                snprintf(path, sizeof(path), "/devices/%s", longname);
                ASSERT_EQ(device_id_format(buf, sizeof(buf), "x", path, 0, 0, 0), 0);
                ASSERT_EQ(strlen(buf), 255);
                snprintf(path, sizeof(path), "/devices/%sb", longname);
                ASSERT_EQ(device_id_format(buf, sizeof(buf), "x", path, 0, 0, 0), -ENAMETOOLONG);
        }
}

static void test_value_newline_cut(void)
{
        _cleanup_(uevent_freep) struct uevent *ev = NULL;

        ASSERT_EQ(parse_parts(PARTS("change@/devices/platform/x", "ACTION=change",
                                    "DEVPATH=/devices/platform/x", "SUBSYSTEM=platform",
                                    "DRIVER=foo\n", "MODALIAS=platform:x\ntrailing\x01junk",
                                    "EMPTY=", "NL=\n", "SEQNUM=5\n"),
                              &ev),
                  0);
        check_invariants(ev);
        ASSERT_STREQ(ev->driver, "foo");
        ASSERT_STREQ(uevent_get(ev, "MODALIAS"), "platform:x");
        ASSERT_STREQ(uevent_get(ev, "EMPTY"), "");
        ASSERT_STREQ(uevent_get(ev, "NL"), "");
        ASSERT_EQ(ev->seqnum, 5);
        ASSERT_STREQ(ev->id, "+platform:x");
}

static void test_devname_absolute(void)
{
        _cleanup_(uevent_freep) struct uevent *ev = NULL;

        ASSERT_EQ(parse_parts(PARTS("add@/devices/virtual/misc/fuse", "ACTION=add",
                                    "DEVPATH=/devices/virtual/misc/fuse", "SUBSYSTEM=misc",
                                    "MAJOR=10", "MINOR=229", "DEVNAME=/dev/fuse", "SEQNUM=1"),
                              &ev),
                  0);
        ASSERT_STREQ(ev->devnode, "/dev/fuse");
        ASSERT_STREQ(uevent_get(ev, "DEVNAME"), "/dev/fuse");
}

static void test_duplicates(void)
{
        _cleanup_(uevent_freep) struct uevent *ev = NULL;
        static const char *const unique[] = {
                "ACTION=add", "DEVPATH=/devices/x", "SUBSYSTEM=foo", "SEQNUM=1", "MAJOR=1",
                "MINOR=1",    "IFINDEX=1",          "DEVNAME=x",     "DEVPATH_OLD=/devices/y",
        };

        /* Ordinary keys: first position, last value. */
        ASSERT_EQ(parse_parts(PARTS("add@/devices/x", "ACTION=add", "DEVPATH=/devices/x",
                                    "FOO=1", "SUBSYSTEM=foo", "FOO=2", "DEVTYPE=a", "DEVTYPE=b",
                                    "SEQNUM=1"),
                              &ev),
                  0);
        check_invariants(ev);
        ASSERT_EQ(ev->n_props, 6);
        ASSERT_STREQ(ev->props[2].key, "FOO");
        ASSERT_STREQ(ev->props[2].value, "2");
        ASSERT_STREQ(uevent_get(ev, "FOO"), "2");
        ASSERT_STREQ(ev->devtype, "b");

        /* Identity keys: a repeat (even with the same value) rejects the message. */
        for (size_t i = 0; i < ARRAY_SIZE(unique); i++) {
                struct uevent *bad = NULL;

                ASSERT_EQ(parse_parts(PARTS("add@/devices/x", "ACTION=add", "DEVPATH=/devices/x",
                                            "SUBSYSTEM=foo", "SEQNUM=1", unique[i], unique[i]),
                                      &bad),
                          -EBADMSG);
                ASSERT_TRUE(bad == NULL);
        }
}

static void test_limits(void)
{
        static char keys[UEVENT_PROPS_MAX + 1][16];
        const char *parts[UEVENT_PROPS_MAX + 8];
        struct uevent *ev = NULL;
        size_t n = 0, len;
        char *buf;

        /* 4 fixed properties + extras: exactly UEVENT_PROPS_MAX is fine. */
        parts[n++] = "add@/devices/x";
        parts[n++] = "ACTION=add";
        parts[n++] = "DEVPATH=/devices/x";
        parts[n++] = "SUBSYSTEM=foo";
        parts[n++] = "SEQNUM=1";
        for (int i = 0; i < UEVENT_PROPS_MAX - 4; i++) {
                snprintf(keys[i], sizeof(keys[i]), "K%d=v", i);
                parts[n++] = keys[i];
        }
        parts[n] = NULL;
        ASSERT_EQ(parse_parts(parts, &ev), 0);
        ASSERT_EQ(ev->n_props, UEVENT_PROPS_MAX);
        uevent_free(ev);
        ev = NULL;

        snprintf(keys[UEVENT_PROPS_MAX], sizeof(keys[0]), "K%d=v", UEVENT_PROPS_MAX);
        parts[n++] = keys[UEVENT_PROPS_MAX];
        parts[n] = NULL;
        ASSERT_EQ(parse_parts(parts, &ev), -E2BIG);
        ASSERT_TRUE(ev == NULL);

        /* Size limit. */
        {
                static char big[UEVENT_BUFFER_MAX];

                memset(big, 'v', sizeof(big));
                memcpy(big, "BIG=", 4);
                big[sizeof(big) - 1] = '\0';
                buf = build(PARTS("add@/devices/x", "ACTION=add", "DEVPATH=/devices/x",
                                  "SUBSYSTEM=foo", "SEQNUM=1", big),
                            &len);
                ASSERT_TRUE(len > UEVENT_BUFFER_MAX);
                ASSERT_EQ(uevent_parse_kernel(buf, len, 0, &ev), -E2BIG);
                free(buf);
        }

        /* devnode too long for UEVENT_DEVNODE_MAX. */
        {
                char name[UEVENT_DEVNODE_MAX + 16];

                memcpy(name, "DEVNAME=", 8);
                memset(name + 8, 'n', UEVENT_DEVNODE_MAX);
                name[8 + UEVENT_DEVNODE_MAX] = '\0';
                ASSERT_EQ(parse_parts(PARTS("add@/devices/x", "ACTION=add", "DEVPATH=/devices/x",
                                            "SUBSYSTEM=foo", "MAJOR=1", "SEQNUM=1", name),
                                      &ev),
                          -E2BIG);
        }
}

/* One base message with one property replaced/added: must be rejected. */
static void expect_reject_with(const char *extra)
{
        struct uevent *ev = NULL;
        int r = parse_parts(PARTS("add@/devices/virtual/foo/x", "ACTION=add",
                                  "DEVPATH=/devices/virtual/foo/x", "SUBSYSTEM=foo", "SEQNUM=7",
                                  extra),
                            &ev);

        if (r != -EBADMSG) {
                fprintf(stderr, "extra property \"%s\" gave %d\n", extra, r);
                abort();
        }
        ASSERT_TRUE(ev == NULL);
}

static void test_rejects_properties(void)
{
        static const char *const bad[] = {
                /* numbers */
                "MAJOR=abc", "MAJOR=-1", "MAJOR=", "MAJOR=4294967296", "MAJOR= 8", "MAJOR=+8",
                "MINOR=x", "MINOR=1.5", "IFINDEX=0", "IFINDEX=-3", "IFINDEX=2147483648",
                "IFINDEX=abc", "IFINDEX=",
                /* DEVNAME */
                "DEVNAME=../etc/passwd", "DEVNAME=a/../b", "DEVNAME=a/..", "DEVNAME=..",
                "DEVNAME=.", "DEVNAME=./x", "DEVNAME=/etc/shadow", "DEVNAME=/dev/../etc/shadow",
                "DEVNAME=/dev/", "DEVNAME=/dev", "DEVNAME=a//b", "DEVNAME=a/", "DEVNAME=",
                "DEVNAME=a\001b", "DEVNAME=a\x7f", "DEVNAME=//dev/x", "DEVNAME=/devx/y",
                /* keys */
                "FOO BAR=1", "FOO-BAR=1", "=value", "F\x01O=1", "F\x7fO=1", "KEY", "FOO\t=1",
                "F\xc3\xa4=1",
                /* identity values */
                "DEVTYPE=di\tsk", "DEVTYPE=", "DRIVER=a\x1b[0m", "DRIVER=",
                "DEVPATH_OLD=relative", "DEVPATH_OLD=/devices/../x", "DEVPATH_OLD=/",
                "DEVPATH_OLD=/devices//x",
        };

        for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
                expect_reject_with(bad[i]);
}

static void expect_reject(const char *const *parts, int expected)
{
        struct uevent *ev = NULL;
        int r = parse_parts(parts, &ev);

        if (r != expected) {
                fprintf(stderr, "message starting \"%s\" gave %d, expected %d\n", parts[0], r,
                        expected);
                abort();
        }
        ASSERT_TRUE(ev == NULL);
}

static void test_rejects_structure(void)
{
        struct uevent *ev = NULL;
        static const char nonul[] = "add@/devices/x\0ACTION=add\0DEVPATH=/devices/x\0"
                                    "SUBSYSTEM=foo\0SEQNUM=1";
        static const char empty_entry[] = "add@/devices/x\0ACTION=add\0DEVPATH=/devices/x\0\0"
                                          "SUBSYSTEM=foo\0SEQNUM=1";

        ASSERT_EQ(uevent_parse_kernel(NULL, 0, 0, &ev), -EBADMSG);
        ASSERT_EQ(uevent_parse_kernel("", 0, 0, &ev), -EBADMSG);
        ASSERT_EQ(uevent_parse_kernel("", 1, 0, &ev), -EBADMSG);
        ASSERT_EQ(uevent_parse_kernel(nonul, sizeof(nonul) - 1, 0, &ev), -EBADMSG);
        ASSERT_EQ(uevent_parse_kernel(nonul, sizeof(nonul), 0, &ev), 0); /* with its NUL */
        uevent_free(ev);
        ev = NULL;
        ASSERT_EQ(uevent_parse_kernel(empty_entry, sizeof(empty_entry), 0, &ev), -EBADMSG);
        ASSERT_EQ(uevent_parse_kernel(nonul, sizeof(nonul), 0, NULL), -EINVAL);

        /* header */
        expect_reject(PARTS("add/devices/x", "ACTION=add", "DEVPATH=/devices/x", "SUBSYSTEM=foo",
                            "SEQNUM=1"),
                      -EBADMSG);
        expect_reject(PARTS("add@devices/x", "ACTION=add", "DEVPATH=/devices/x", "SUBSYSTEM=foo",
                            "SEQNUM=1"),
                      -EBADMSG);
        expect_reject(PARTS("@/devices/x", "ACTION=add", "DEVPATH=/devices/x", "SUBSYSTEM=foo",
                            "SEQNUM=1"),
                      -EBADMSG);
        expect_reject(PARTS("change@/devices/x", "ACTION=add", "DEVPATH=/devices/x",
                            "SUBSYSTEM=foo", "SEQNUM=1"),
                      -EBADMSG);
        expect_reject(PARTS("ad@/devices/x", "ACTION=add", "DEVPATH=/devices/x", "SUBSYSTEM=foo",
                            "SEQNUM=1"),
                      -EBADMSG);
        expect_reject(PARTS("add@/devices/y", "ACTION=add", "DEVPATH=/devices/x", "SUBSYSTEM=foo",
                            "SEQNUM=1"),
                      -EBADMSG);
        expect_reject(PARTS("add@/devices/x/", "ACTION=add", "DEVPATH=/devices/x",
                            "SUBSYSTEM=foo", "SEQNUM=1"),
                      -EBADMSG);
        /* header only / no properties */
        expect_reject(PARTS("add@/devices/x"), -EBADMSG);
        /* unknown action (header and property agree) */
        expect_reject(PARTS("frob@/devices/x", "ACTION=frob", "DEVPATH=/devices/x",
                            "SUBSYSTEM=foo", "SEQNUM=1"),
                      -EBADMSG);
        /* missing mandatory keys */
        expect_reject(PARTS("add@/devices/x", "DEVPATH=/devices/x", "SUBSYSTEM=foo", "SEQNUM=1"),
                      -EBADMSG);
        expect_reject(PARTS("add@/devices/x", "ACTION=add", "SUBSYSTEM=foo", "SEQNUM=1"), -EBADMSG);
        expect_reject(PARTS("add@/devices/x", "ACTION=add", "DEVPATH=/devices/x", "SEQNUM=1"),
                      -EBADMSG);
        expect_reject(PARTS("add@/devices/x", "ACTION=add", "DEVPATH=/devices/x", "SUBSYSTEM=foo"),
                      -EBADMSG);
        /* SEQNUM */
        static const char *const seqnums[] = {
                "SEQNUM=0", "SEQNUM=-1", "SEQNUM=abc", "SEQNUM=12a", "SEQNUM=",
                "SEQNUM=18446744073709551616", "SEQNUM=99999999999999999999", "SEQNUM= 1",
                "SEQNUM=0x10",
        };
        for (size_t i = 0; i < ARRAY_SIZE(seqnums); i++)
                expect_reject(PARTS("add@/devices/x", "ACTION=add", "DEVPATH=/devices/x",
                                    "SUBSYSTEM=foo", seqnums[i]),
                              -EBADMSG);
        /* DEVPATH shapes (header always matches) */
        static const char *const devpaths[] = {
                "/devices/../x", "/devices/./x", "/devices//x", "/..", "/", "/devices/x\x01",
        };
        for (size_t i = 0; i < ARRAY_SIZE(devpaths); i++) {
                char hdr[64], dp[64];

                snprintf(hdr, sizeof(hdr), "add@%s", devpaths[i]);
                snprintf(dp, sizeof(dp), "DEVPATH=%s", devpaths[i]);
                expect_reject(PARTS(hdr, "ACTION=add", dp, "SUBSYSTEM=foo", "SEQNUM=1"),
                              -EBADMSG);
        }
        /* SUBSYSTEM shapes */
        expect_reject(PARTS("add@/devices/x", "ACTION=add", "DEVPATH=/devices/x", "SUBSYSTEM=",
                            "SEQNUM=1"),
                      -EBADMSG);
        expect_reject(PARTS("add@/devices/x", "ACTION=add", "DEVPATH=/devices/x",
                            "SUBSYSTEM=a/b", "SEQNUM=1"),
                      -EBADMSG);
        expect_reject(PARTS("add@/devices/x", "ACTION=add", "DEVPATH=/devices/x",
                            "SUBSYSTEM=a\tb", "SEQNUM=1"),
                      -EBADMSG);
        /* DEVPATH cut at '\n' no longer matches the (uncut) header */
        expect_reject(PARTS("add@/devices/x\n", "ACTION=add", "DEVPATH=/devices/x\n",
                            "SUBSYSTEM=foo", "SEQNUM=1"),
                      -EBADMSG);
}

static void test_accepts_odd_but_valid(void)
{
        _cleanup_(uevent_freep) struct uevent *ev = NULL;

        /* MINOR without MAJOR, MAJOR=0, '.'-keys, lower case keys, UTF-8 and
         * control characters in ordinary values, spaces in the devpath. */
        ASSERT_EQ(parse_parts(PARTS("offline@/devices/system/cpu/cpu 1", "ACTION=offline",
                                    "DEVPATH=/devices/system/cpu/cpu 1", "SUBSYSTEM=cpu",
                                    "MAJOR=0", "MINOR=5", ".hidden=1", "lower_case.key=x",
                                    "NAME=\"Caf\xc3\xa9 \x01 keyboard\"", "SEQNUM=00012"),
                              &ev),
                  0);
        check_invariants(ev);
        ASSERT_EQ(ev->action, UEVENT_ACTION_OFFLINE);
        ASSERT_EQ(ev->major, 0);
        ASSERT_EQ(ev->minor, 0);
        ASSERT_EQ(ev->seqnum, 12);
        ASSERT_STREQ(ev->id, "+cpu:cpu 1");
        ASSERT_STREQ(uevent_get(ev, ".hidden"), "1");
        ASSERT_STREQ(uevent_get(ev, "NAME"), "\"Caf\xc3\xa9 \x01 keyboard\"");
}

/* xorshift64*: deterministic, seedable */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static uint64_t rnd(void)
{
        rng_state ^= rng_state >> 12;
        rng_state ^= rng_state << 25;
        rng_state ^= rng_state >> 27;
        return rng_state * 0x2545f4914f6cdd1dULL;
}

static void parse_copy(const char *data, size_t len)
{
        char *copy = malloc(len ? len : 1);
        struct uevent *ev = NULL;

        ASSERT_TRUE(copy);
        memcpy(copy, data, len);
        if (uevent_parse_kernel(copy, len, 0, &ev) == 0) {
                check_invariants(ev);
                uevent_free(ev);
        } else
                ASSERT_TRUE(ev == NULL);
        free(copy);
}

static void test_fuzz(void)
{
        static const char interesting[] = { 0, '\n', '=', '@', '/', '.', '!', ':', '0', '9',
                                            'a', '\x01', '\x7f', (char)0xff };
        size_t len;
        char *msg = build(PARTS("add@" USBDEV, "ACTION=add", "DEVPATH=" USBDEV, "SUBSYSTEM=usb",
                                "MAJOR=189", "MINOR=258", "DEVNAME=bus/usb/003/003",
                                "DEVTYPE=usb_device", "DRIVER=usb", "IFINDEX=4",
                                "DEVPATH_OLD=/devices/old", "SEQNUM=3001"),
                          &len);
        char *work = malloc(len);

        ASSERT_TRUE(work);
        /* every truncation */
        for (size_t n = 0; n <= len; n++)
                parse_copy(msg, n);
        /* every position x interesting byte */
        for (size_t i = 0; i < len; i++)
                for (size_t k = 0; k < sizeof(interesting); k++) {
                        memcpy(work, msg, len);
                        work[i] = interesting[k];
                        parse_copy(work, len);
                }
        /* random multi-byte mutations and truncations */
        for (int iter = 0; iter < 50000; iter++) {
                size_t n = len - (rnd() % 8 == 0 ? rnd() % len : 0);
                int flips = 1 + (int)(rnd() % 4);

                memcpy(work, msg, len);
                for (int f = 0; f < flips; f++) {
                        size_t pos = rnd() % len;

                        work[pos] = rnd() % 2 ? interesting[rnd() % sizeof(interesting)]
                                              : (char)rnd();
                }
                parse_copy(work, n);
        }
        /* pure random garbage, with and without a final NUL */
        for (int iter = 0; iter < 5000; iter++) {
                size_t n = 1 + rnd() % len;

                for (size_t i = 0; i < n; i++)
                        work[i] = (char)rnd();
                if (iter % 2)
                        work[n - 1] = '\0';
                parse_copy(work, n);
        }
        free(work);
        free(msg);
}

/* ------------------------------------------------ block device policy */

/* A parsed "add"-style record: ACTION, DEVPATH, SUBSYSTEM, then the extra
 * "KEY=VALUE" strings (ending with NULL), SEQNUM=1. */
static struct uevent *mk(const char *action, const char *devpath, const char *subsystem, ...)
{
        char hdr[512], a[64], d[512], s[128];
        const char *parts[16];
        struct uevent *ev = NULL;
        size_t n = 0;
        const char *x;
        va_list ap;

        snprintf(hdr, sizeof(hdr), "%s@%s", action, devpath);
        snprintf(a, sizeof(a), "ACTION=%s", action);
        snprintf(d, sizeof(d), "DEVPATH=%s", devpath);
        snprintf(s, sizeof(s), "SUBSYSTEM=%s", subsystem);
        parts[n++] = hdr;
        parts[n++] = a;
        parts[n++] = d;
        parts[n++] = s;
        va_start(ap, subsystem);
        while ((x = va_arg(ap, const char *)) && n < ARRAY_SIZE(parts) - 2)
                parts[n++] = x;
        va_end(ap);
        parts[n++] = "SEQNUM=1";
        parts[n] = NULL;
        ASSERT_EQ(parse_parts(parts, &ev), 0);
        return ev;
}

#define DISK "/devices/virtual/block/loop7"

static struct uevent *mk_disk(const char *action)
{
        return mk(action, DISK, "block", "DEVTYPE=disk", "MAJOR=7", "MINOR=7", "DEVNAME=loop7",
                  NULL);
}

static struct uevent *mk_part(const char *action)
{
        return mk(action, DISK "/loop7p1", "block", "DEVTYPE=partition", "MAJOR=259", "MINOR=1",
                  "DEVNAME=loop7p1", NULL);
}

static void check_lock_disk(struct uevent *ev, const char *want)
{
        char buf[256];
        bool r = uevent_lock_disk(ev, buf, sizeof(buf));

        if (want) {
                ASSERT_TRUE(r);
                ASSERT_STREQ(buf, want);
        } else {
                ASSERT_TRUE(!r);
        }
        uevent_free(ev);
}

/* uevent_format_kernel() gives back the datagram; repeated keys once with
 * the last value, values cut at a newline. */
static void test_format_kernel(void)
{
        _cleanup_(uevent_freep) struct uevent *ev = NULL, *dup = NULL;
        const char *const parts[] = { "add@/devices/virtual/net/veth0", "ACTION=add",
                                      "DEVPATH=/devices/virtual/net/veth0", "SUBSYSTEM=net",
                                      "INTERFACE=veth0", "IFINDEX=3", "SEQNUM=77", NULL };
        size_t len;
        char *orig = build(parts, &len), out[MSG_MAX];

        ASSERT_EQ(uevent_parse_kernel(orig, len, 42, &ev), 0);
        ASSERT_EQ(uevent_format_kernel(ev, out, sizeof(out)), (int)len);
        ASSERT_TRUE(memcmp(out, orig, len) == 0);
        for (size_t size = 0; size < len; size++)
                ASSERT_EQ(uevent_format_kernel(ev, out, size), -ENOBUFS);
        ASSERT_EQ(uevent_format_kernel(ev, out, len), (int)len);
        free(orig);

        ASSERT_EQ(parse_parts(PARTS("change@/devices/x", "ACTION=change", "DEVPATH=/devices/x",
                                    "FOO=1", "SUBSYSTEM=foo", "FOO=2\nmore", "SEQNUM=5"),
                              &dup),
                  0);
        const char *const want[] = { "change@/devices/x", "ACTION=change", "DEVPATH=/devices/x",
                                     "FOO=2", "SUBSYSTEM=foo", "SEQNUM=5", NULL };
        char *w = build(want, &len);
        ASSERT_EQ(uevent_format_kernel(dup, out, sizeof(out)), (int)len);
        ASSERT_TRUE(memcmp(out, w, len) == 0);
        ASSERT_TRUE(len <= dup->buf_len);
        free(w);
}

static void test_lock_disk(void)
{
        char small[8];
        struct uevent *ev;

        check_lock_disk(mk_disk("add"), DISK);
        check_lock_disk(mk_disk("change"), DISK);
        check_lock_disk(mk_part("change"), DISK);
        check_lock_disk(mk_disk("remove"), NULL);
        check_lock_disk(mk_part("remove"), NULL);
        check_lock_disk(mk("change", "/devices/virtual/block/dm-0", "block", "DEVTYPE=disk",
                           NULL), NULL);
        check_lock_disk(mk("change", "/devices/virtual/block/md127", "block",
                           "DEVTYPE=disk", NULL), NULL);
        check_lock_disk(mk("change", "/devices/virtual/block/drbd0", "block",
                           "DEVTYPE=disk", NULL), NULL);
        check_lock_disk(mk("change", "/devices/virtual/block/loop1", "block", NULL), NULL);
        check_lock_disk(mk("change", "/devices/virtual/tty/tty1", "tty", "DEVTYPE=disk",
                           NULL), NULL);
        ev = mk_disk("add");
        ASSERT_TRUE(!uevent_lock_disk(ev, small, sizeof(small)));
        uevent_free(ev);
}

static void check_read_only(struct uevent *ev, bool want)
{
        ASSERT_EQ(uevent_marks_read_only(ev), want);
        uevent_free(ev);
}

/* udev.blockdev_read_only: new physical disks and partitions only. */
static void test_marks_read_only(void)
{
        check_read_only(mk("add", "/devices/pci0000:00/0000:00:05.0/virtio2/block/vda",
                           "block", "DEVTYPE=disk", "DEVNAME=vda", NULL), true);
        check_read_only(mk("add", "/devices/pci0000:00/0000:00:05.0/virtio2/block/vda/vda1",
                           "block", "DEVTYPE=partition", "DEVNAME=vda1", NULL), true);
        check_read_only(mk("add", "/devices/platform/host0/target0:0:0/0:0:0:0/block/sdb",
                           "block", "DEVTYPE=disk", "DEVNAME=sdb", NULL), true);
        /* only once, when the device appears */
        check_read_only(mk("change", "/devices/x/block/sdb", "block", "DEVTYPE=disk",
                           "DEVNAME=sdb", NULL), false);
        check_read_only(mk("bind", "/devices/x/block/sdb", "block", "DEVTYPE=disk",
                           "DEVNAME=sdb", NULL), false);
        /* stacked or memory-backed devices, partitions of them included */
        check_read_only(mk_disk("add"), false);
        check_read_only(mk_part("add"), false);
        static const char *const names[] = { "dm-0", "md127", "drbd1", "nbd0", "zram0" };
        for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
                char path[64], node[64];

                snprintf(path, sizeof(path), "/devices/virtual/block/%s", names[i]);
                snprintf(node, sizeof(node), "DEVNAME=%s", names[i]);
                check_read_only(mk("add", path, "block", "DEVTYPE=disk", node, NULL), false);
        }
        /* no node, other subsystems */
        check_read_only(mk("add", "/devices/x/block/sdc", "block", "DEVTYPE=disk", NULL),
                        false);
        check_read_only(mk("add", "/devices/virtual/tty/tty1", "tty", "DEVNAME=tty1", NULL),
                        false);
}

int main(void)
{
        TEST_RUN(test_actions);
        TEST_RUN(test_block);
        TEST_RUN(test_partition_remove);
        TEST_RUN(test_net);
        TEST_RUN(test_usb);
        TEST_RUN(test_drivers);
        TEST_RUN(test_device_id_format);
        TEST_RUN(test_value_newline_cut);
        TEST_RUN(test_devname_absolute);
        TEST_RUN(test_duplicates);
        TEST_RUN(test_limits);
        TEST_RUN(test_compact);
        TEST_RUN(test_rejects_properties);
        TEST_RUN(test_rejects_structure);
        TEST_RUN(test_accepts_odd_but_valid);
        TEST_RUN(test_fuzz);
        TEST_RUN(test_format_kernel);
        TEST_RUN(test_lock_disk);
        TEST_RUN(test_marks_read_only);
        return 0;
}
