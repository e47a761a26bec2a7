/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (single-threaded test) */
/* Unit tests of the sd-device view used by `udevadm info` and the trigger
 * filters, on a fake sysfs tree and run directory. udevadm's objects are not
 * in a library, so the modules are compiled in here. */

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/tests.h"
#include "udevadm/udevice-sysattr.c"
#include "udevadm/udevice.c"

static char base[] = "/tmp/test-udevice-XXXXXX";
static char sysroot[256], runroot[256];

static void put(const char *root, const char *rel, const char *content, mode_t mode)
{
        char p[PATH_MAX], *s;
        int fd;

        snprintf(p, sizeof(p), "%s/%s", root, rel);
        for (s = p + strlen(root) + 1; (s = strchr(s, '/')); s++) {
                *s = '\0';
                mkdir(p, 0755);
                *s = '/';
        }
        if (!content) {
                mkdir(p, 0755);
                return;
        }
        fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(write(fd, content, strlen(content)), (ssize_t)strlen(content));
        close(fd);
        chmod(p, mode);
}

static void link_at(const char *target, const char *rel)
{
        char p[PATH_MAX];

        snprintf(p, sizeof(p), "%s/%s", sysroot, rel);
        ASSERT_EQ(symlink(target, p), 0);
}

static void build_tree(void)
{
        ASSERT_TRUE(mkdtemp(base) != NULL);
        snprintf(sysroot, sizeof(sysroot), "%s/sys", base);
        snprintf(runroot, sizeof(runroot), "%s/run", base);
        ASSERT_EQ(mkdir(sysroot, 0755), 0);
        ASSERT_EQ(mkdir(runroot, 0755), 0);
        put(sysroot, "devices/pci0000:00/0000:00:01.0/uevent", "PCI_ID=1AF4:1000\nDRIVER=virtio\n",
            0644);
        put(sysroot, "devices/pci0000:00/0000:00:01.0/vendor", "0x1af4\n", 0444);
        put(sysroot, "devices/pci0000:00/0000:00:01.0/config", "\x01\x02\n", 0644);
        put(sysroot, "devices/pci0000:00/0000:00:01.0/remove", "", 0200);
        put(sysroot, "devices/pci0000:00/0000:00:01.0/secret", "", 0);
        put(sysroot, "devices/pci0000:00/0000:00:01.0/power/control", "auto\n", 0644);
        put(sysroot, "devices/pci0000:00/0000:00:01.0/power/deep/x", "1\n", 0644);
        put(sysroot, "bus/pci/drivers/virtio-pci/uevent", "", 0644);
        put(sysroot, "class/block", NULL, 0);
        put(sysroot, "dev/block", NULL, 0);
        link_at("../../../bus/pci", "devices/pci0000:00/0000:00:01.0/subsystem");
        link_at("../../../bus/pci/drivers/virtio-pci", "devices/pci0000:00/0000:00:01.0/driver");
        /* a block disk below it */
        put(sysroot, "devices/pci0000:00/0000:00:01.0/block/vda/uevent",
            "MAJOR=254\nMINOR=0\nDEVNAME=vda\nDEVTYPE=disk\nDISKSEQ=9\nIFINDEX=x\n"
            "DEVMODE=0660\nEMPTY=\nnoequals\nLAST=unterminated", 0644);
        put(sysroot, "devices/pci0000:00/0000:00:01.0/block/vda/size", "42\n\n", 0644);
        link_at("../../../../../class/block",
                "devices/pci0000:00/0000:00:01.0/block/vda/subsystem");
        link_at("../../devices/pci0000:00/0000:00:01.0/block/vda", "class/block/vda");
        link_at("../../devices/pci0000:00/0000:00:01.0/block/vda", "dev/block/254:0");
        link_at("../block/vda", "devices/pci0000:00/0000:00:01.0/block/vda/bdi");
        /* a module, a bus */
        put(sysroot, "module/loop/parameters/max_loop", "8\n", 0644);
        put(sysroot, "bus/pci/uevent", "", 0644);
}

static void remove_tree(void)
{
        char cmd[PATH_MAX + 16];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
        ASSERT_EQ(system(cmd), 0);
}

static void test_path_startswith(void)
{
        ASSERT_STREQ(path_startswith("/sys/devices/x", "/sys"), "devices/x");
        ASSERT_STREQ(path_startswith("/sys//devices/", "/sys/devices"), "");
        ASSERT_STREQ(path_startswith("/sys", "/sys/"), "");
        ASSERT_TRUE(path_startswith("/sysfoo", "/sys") == NULL);
        ASSERT_TRUE(path_startswith("sys/x", "/sys") == NULL);
        ASSERT_STREQ(path_startswith("/dev/./block/8:0", "/dev/block"), "8:0");
}

static void test_names(void)
{
        char *p = NULL;
        unsigned a, b;

        ASSERT_EQ(device_unit_to_path("sys-devices-virtual-net-lo.device", &p), 0);
        ASSERT_STREQ(p, "/sys/devices/virtual/net/lo");
        free(p);
        ASSERT_EQ(device_unit_to_path("dev-disk-by\\x2did-x.device", &p), 0);
        ASSERT_STREQ(p, "/dev/disk/by-id/x");
        free(p);
        ASSERT_EQ(device_unit_to_path("-.device", &p), 0);
        ASSERT_STREQ(p, "/");
        free(p);
        ASSERT_EQ(device_unit_to_path("foo.service", &p), -EINVAL);
        ASSERT_EQ(device_unit_to_path("a--b.device", &p), -EINVAL);
        ASSERT_EQ(device_unit_to_path("a\\x00.device", &p), -EINVAL);
        ASSERT_EQ(device_unit_to_path("a b.device", &p), -EINVAL);
        ASSERT_TRUE(looks_like_device_id("b8:0") && looks_like_device_id("c1:3"));
        ASSERT_TRUE(looks_like_device_id("n3") && looks_like_device_id("+pci:0000:00:01.0"));
        ASSERT_TRUE(!looks_like_device_id("n0") && !looks_like_device_id("b8") &&
                    !looks_like_device_id("net") && !looks_like_device_id("+pci"));
        ASSERT_EQ(parse_devnum("4095:1048575", &a, &b), 0);
        ASSERT_EQ(parse_devnum("4096:0", &a, &b), -ERANGE);
        ASSERT_EQ(parse_devnum(":1", &a, &b), -EINVAL);
}

static void test_lookup(void)
{
        char p[PATH_MAX];
        struct udevice *d = NULL;

        snprintf(p, sizeof(p), "%s/class/block/vda", sysroot);
        ASSERT_EQ(udevice_new_from_syspath(p, true, &d), 0);
        ASSERT_STREQ(d->devpath, "/devices/pci0000:00/0000:00:01.0/block/vda");
        ASSERT_STREQ(d->props[0].key, "DEVPATH");
        d = udevice_free(d);
        /* below /devices a directory needs a uevent file */
        snprintf(p, sizeof(p), "%s/devices/pci0000:00/0000:00:01.0/block", sysroot);
        ASSERT_EQ(udevice_new_from_syspath(p, true, &d), -ENODEV);
        snprintf(p, sizeof(p), "%s/devices/nope", sysroot);
        ASSERT_EQ(udevice_new_from_syspath(p, true, &d), -ENODEV);
        ASSERT_EQ(udevice_new_from_syspath(sysroot, true, &d), -ENODEV);
        ASSERT_EQ(udevice_new_from_syspath("/tmp", true, &d), -EINVAL);
        ASSERT_EQ(udevice_new_from_syspath("/tmp", false, &d), -ENODEV);
        /* elsewhere any directory is one */
        snprintf(p, sizeof(p), "%s/module/loop", sysroot);
        ASSERT_EQ(udevice_new_from_syspath(p, true, &d), 0);
        d = udevice_free(d);
        ASSERT_EQ(udevice_new_from_devnum('b', 254, 0, &d), 0);
        ASSERT_STREQ(d->devpath, "/devices/pci0000:00/0000:00:01.0/block/vda");
        /* found through the device number: the uevent file was read first */
        ASSERT_STREQ(d->props[1].key, "DEVNAME");
        ASSERT_STREQ(d->props[d->n_props - 1].key, "SUBSYSTEM");
        d = udevice_free(d);
        ASSERT_EQ(udevice_new_from_devnum('c', 254, 0, &d), -ENODEV);
        ASSERT_EQ(udevice_new_from_device_id("+block:vda", &d), 0);
        d = udevice_free(d);
        ASSERT_EQ(udevice_new_from_device_id("+drivers:pci:virtio-pci", &d), 0);
        ASSERT_STREQ(d->devpath, "/bus/pci/drivers/virtio-pci");
        d = udevice_free(d);
        ASSERT_EQ(udevice_new_from_device_id("+subsystem:pci", &d), 0);
        d = udevice_free(d);
        ASSERT_EQ(udevice_new_from_device_id("+module:nope", &d), -ENODEV);
        ASSERT_EQ(udevice_new_from_device_id("+a/../b:x", &d), -EINVAL);
        ASSERT_EQ(udevice_new_from_device_id("x1", &d), -EINVAL);
}

static const char *prop_key(const struct udevice *d, size_t i)
{
        return i < d->n_props ? d->props[i].key : "(none)";
}

static void test_uevent_and_order(void)
{
        char p[PATH_MAX];
        struct udevice *d = NULL;
        const char *s;
        unsigned major, minor;
        uint64_t q;

        snprintf(p, sizeof(p), "%s/class/block/vda", sysroot);
        ASSERT_EQ(udevice_new_from_syspath(p, true, &d), 0);
        ASSERT_EQ(udevice_get_subsystem(d, &s), 0);
        ASSERT_STREQ(s, "block");
        ASSERT_EQ(udevice_get_devnum(d, &major, &minor), 0);
        ASSERT_EQ(major, 254);
        ASSERT_EQ(udevice_get_devname(d, &s), 0);
        ASSERT_STREQ(s, "/dev/vda");
        ASSERT_EQ(udevice_get_diskseq(d, &q), 0);
        ASSERT_EQ(q, 9);
        ASSERT_EQ(udevice_get_ifindex(d, NULL), -ENOENT); /* "x" is no index */
        ASSERT_EQ(udevice_get_sysnum(d, &s), -ENOENT);
        /* DEVPATH, SUBSYSTEM, then the file's keys with MAJOR/MINOR last */
        ASSERT_STREQ(prop_key(d, 0), "DEVPATH");
        ASSERT_STREQ(prop_key(d, 1), "SUBSYSTEM");
        ASSERT_STREQ(prop_key(d, 2), "DEVNAME");
        ASSERT_STREQ(d->props[2].value, "/dev/vda");
        ASSERT_STREQ(prop_key(d, 3), "DEVTYPE");
        ASSERT_STREQ(prop_key(d, 4), "DISKSEQ");
        ASSERT_STREQ(prop_key(d, 5), "DEVMODE");
        ASSERT_STREQ(prop_key(d, 6), "EMPTY");
        ASSERT_STREQ(d->props[6].value, "");
        ASSERT_STREQ(prop_key(d, 7), "MAJOR");
        ASSERT_STREQ(prop_key(d, 8), "MINOR");
        ASSERT_EQ(d->n_props, 9); /* no "noequals", no unterminated LAST */
        ASSERT_EQ(udevice_get_driver(d, &s), -ENOENT);
        ASSERT_EQ(udevice_get_id(d, &s), 0);
        ASSERT_STREQ(s, "b254:0");
        d = udevice_free(d);
}

static void test_subsystems(void)
{
        char p[PATH_MAX];
        struct udevice *d = NULL;
        const char *s;

        snprintf(p, sizeof(p), "%s/bus/pci/drivers/virtio-pci", sysroot);
        ASSERT_EQ(udevice_new_from_syspath(p, true, &d), 0);
        ASSERT_EQ(udevice_get_subsystem(d, &s), 0);
        ASSERT_STREQ(s, "drivers");
        ASSERT_STREQ(d->driver_subsystem, "pci");
        ASSERT_EQ(udevice_get_id(d, &s), 0);
        ASSERT_STREQ(s, "+drivers:pci:virtio-pci");
        d = udevice_free(d);
        snprintf(p, sizeof(p), "%s/bus/pci/drivers", sysroot);
        ASSERT_EQ(udevice_new_from_syspath(p, true, &d), 0);
        ASSERT_EQ(udevice_get_subsystem(d, &s), 0);
        ASSERT_STREQ(s, "drivers");
        ASSERT_EQ(udevice_get_id(d, &s), 0);
        ASSERT_STREQ(s, "+drivers:pci:drivers");
        d = udevice_free(d);
        snprintf(p, sizeof(p), "%s/module/loop/parameters", sysroot);
        ASSERT_EQ(udevice_new_from_syspath(p, true, &d), 0);
        ASSERT_EQ(udevice_get_subsystem(d, &s), 0);
        ASSERT_STREQ(s, "module");
        d = udevice_free(d);
        snprintf(p, sizeof(p), "%s/bus", sysroot);
        ASSERT_EQ(udevice_new_from_syspath(p, true, &d), 0);
        ASSERT_EQ(udevice_get_subsystem(d, &s), -ENOENT);
        ASSERT_EQ(udevice_read_db(d), -ENOENT); /* no subsystem, no id */
        ASSERT_EQ(udevice_properties_prepare(d), -ENOENT);
        d = udevice_free(d);
        snprintf(p, sizeof(p), "%s/devices/pci0000:00/0000:00:01.0", sysroot);
        ASSERT_EQ(udevice_new_from_syspath(p, true, &d), 0);
        ASSERT_EQ(udevice_get_driver(d, &s), 0);
        ASSERT_STREQ(s, "virtio-pci");
        ASSERT_EQ(udevice_get_sysnum(d, &s), 0);
        ASSERT_STREQ(s, "0");
        d = udevice_free(d);
}

static unsigned bad_line(const char *s) { return first_bad_line(s, strlen(s)); }

static void test_database(void)
{
        char p[PATH_MAX];
        struct udevice *d = NULL;
        const char *s;
        int prio;

        put(runroot, "data/b254:0",
            "S:disk/by-id/one\nS:disk/by-id/two\nL:-7\nI:555\nE:ID_A=1\nE:DEVTYPE=other\n"
            "G:seat\nG:systemd\nQ:systemd\nV:1\n", 0644);
        snprintf(p, sizeof(p), "%s/class/block/vda", sysroot);
        ASSERT_EQ(udevice_new_from_syspath(p, true, &d), 0);
        ASSERT_EQ(udevice_is_initialized(d), 1);
        ASSERT_EQ(udevice_get_devlink_priority(d, &prio), 0);
        ASSERT_EQ(prio, -7);
        ASSERT_TRUE(udevice_has_tag(d, "seat") && !udevice_has_tag(d, "nope"));
        ASSERT_EQ(udevice_properties_prepare(d), 0);
        s = udevice_get_property(d, "DEVLINKS");
        ASSERT_STREQ(s, "/dev/disk/by-id/one /dev/disk/by-id/two");
        ASSERT_STREQ(udevice_get_property(d, "TAGS"), ":seat:systemd:");
        ASSERT_STREQ(udevice_get_property(d, "CURRENT_TAGS"), ":systemd:");
        ASSERT_STREQ(udevice_get_property(d, "USEC_INITIALIZED"), "555");
        /* a database value replaces the uevent one in its place */
        ASSERT_STREQ(udevice_get_property(d, "DEVTYPE"), "other");
        ASSERT_EQ(d->db_bad_line, 0);
        d = udevice_free(d);

        ASSERT_EQ(bad_line(""), 0);
        ASSERT_EQ(bad_line("S:a\n\nW:3\r\nV:1\n"), 0);
        ASSERT_EQ(bad_line("S:a\nX:b\n"), 2);
        ASSERT_EQ(bad_line("E:A=1\nE:noeq\n"), 2);
        ASSERT_EQ(bad_line("E:=v\n"), 1);
        ASSERT_EQ(bad_line("L:1\nL:x\n"), 2);
        ASSERT_EQ(bad_line("G:a b\n"), 1);
        ASSERT_EQ(bad_line("Q:\n"), 1);
        ASSERT_EQ(bad_line("I:1\nI:2"), 2);
        ASSERT_EQ(first_bad_line("E:A=\0\n", 6), 1);
        ASSERT_EQ(bad_line("junk\n"), 1);
}

static void test_sysattrs(void)
{
        char p[PATH_MAX], **names = NULL, *v = NULL;
        struct udevice *d = NULL;
        size_t n = 0;
        char all[1024] = "";

        snprintf(p, sizeof(p), "%s/devices/pci0000:00/0000:00:01.0", sysroot);
        ASSERT_EQ(udevice_new_from_syspath(p, true, &d), 0);
        ASSERT_EQ(udevice_list_sysattrs(d, &names, &n), 0);
        for (size_t i = 0; i < n; i++) {
                strcat(all, names[i]);
                strcat(all, " ");
        }
        /* sorted; subdirectories included; the block child device and the
         * mode-0 file are not */
        ASSERT_STREQ(all, "config driver power/control power/deep/x remove subsystem uevent "
                          "vendor ");
        udevice_strv_free(names, n);
        ASSERT_EQ(udevice_read_sysattr(d, "vendor", &v), 0);
        ASSERT_STREQ(v, "0x1af4");
        free(v);
        ASSERT_EQ(udevice_read_sysattr(d, "driver", &v), 0);
        ASSERT_STREQ(v, "virtio-pci");
        free(v);
        ASSERT_EQ(udevice_read_sysattr(d, "remove", &v), -EPERM);
        ASSERT_EQ(udevice_read_sysattr(d, "power", &v), -EISDIR);
        ASSERT_EQ(udevice_read_sysattr(d, "nope", &v), -ENOENT);
        d = udevice_free(d);
        snprintf(p, sizeof(p), "%s/class/block/vda", sysroot);
        ASSERT_EQ(udevice_new_from_syspath(p, true, &d), 0);
        ASSERT_EQ(udevice_read_sysattr(d, "bdi", &v), -EINVAL); /* other links are no values */
        ASSERT_EQ(udevice_read_sysattr(d, "size", &v), 0);
        ASSERT_STREQ(v, "42");
        free(v);
        d = udevice_free(d);
}

static void test_parents(void)
{
        char p[PATH_MAX];
        struct udevice *d = NULL, *parent, *top;

        snprintf(p, sizeof(p), "%s/class/block/vda", sysroot);
        ASSERT_EQ(udevice_new_from_syspath(p, true, &d), 0);
        /* .../block has no uevent file and is skipped */
        ASSERT_EQ(udevice_get_parent(d, &parent), 0);
        ASSERT_STREQ(parent->devpath, "/devices/pci0000:00/0000:00:01.0");
        /* pci0000:00 has no uevent file either: the top */
        ASSERT_EQ(udevice_get_parent(parent, &top), -ENOENT);
        d = udevice_free(d);
}

static void test_event(void)
{
        const struct udevice_kv kv[] = {
                { "ACTION", "add" },          { "DEVPATH", "/devices/virtual/net/x0" },
                { "SUBSYSTEM", "net" },       { "INTERFACE", "x0" },
                { "IFINDEX", "5" },           { "SEQNUM", "7" },
                { "DEVLINKS", "/dev/a /dev/b" }, { "TAGS", ":t1:t2:" },
                { "CURRENT_TAGS", ":t2:" },
        };
        struct udevice *d = NULL;
        int ifindex;

        ASSERT_EQ(udevice_new_from_event("/devices/virtual/net/x0", kv, ARRAY_SIZE(kv), &d), 0);
        ASSERT_EQ(udevice_get_ifindex(d, &ifindex), 0);
        ASSERT_EQ(ifindex, 5);
        ASSERT_EQ(udevice_is_initialized(d), 1);
        ASSERT_EQ(udevice_properties_prepare(d), 0);
        ASSERT_STREQ(prop_key(d, 0), "ACTION");
        ASSERT_STREQ(prop_key(d, 1), "DEVPATH");
        ASSERT_STREQ(prop_key(d, 6), "DEVLINKS");
        ASSERT_STREQ(udevice_get_property(d, "TAGS"), ":t1:t2:");
        ASSERT_STREQ(udevice_get_property(d, "CURRENT_TAGS"), ":t2:");
        d = udevice_free(d);
}

int main(void)
{
        log_set_max_level(LOG_WARNING);
        build_tree();
        udevice_set_roots(sysroot, runroot);
        TEST_RUN(test_path_startswith);
        TEST_RUN(test_names);
        TEST_RUN(test_lookup);
        TEST_RUN(test_uevent_and_order);
        TEST_RUN(test_subsystems);
        TEST_RUN(test_database);
        TEST_RUN(test_sysattrs);
        TEST_RUN(test_parents);
        TEST_RUN(test_event);
        remove_tree();
        return 0;
}
