/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (single-threaded test) */
/* Unit tests of the trigger enumerator on a fake sysfs tree. udevadm's
 * objects are not in a library, so the module is compiled in here. */

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/tests.h"
#include "udevadm/device-enum.c"

static char root[] = "/tmp/test-device-enum-XXXXXX";

static void mkdirs(const char *rel)
{
        char p[PATH_MAX], *s;

        snprintf(p, sizeof(p), "%s/%s", root, rel);
        for (s = p + strlen(root) + 1; (s = strchr(s, '/')); s++) {
                *s = '\0';
                mkdir(p, 0755);
                *s = '/';
        }
        mkdir(p, 0755);
}

static void touch(const char *rel)
{
        char p[PATH_MAX];
        int fd;

        snprintf(p, sizeof(p), "%s/%s", root, rel);
        fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        ASSERT_TRUE(fd >= 0);
        close(fd);
}

static void link_rel(const char *target, const char *rel)
{
        char p[PATH_MAX];

        snprintf(p, sizeof(p), "%s/%s", root, rel);
        ASSERT_EQ(symlink(target, p), 0);
}

/* A device below /devices with a uevent file, a subsystem link (if subsystem
 * is given) and a class/bus entry pointing at it. */
static void add_device(const char *devpath, const char *subsystem, bool bus)
{
        char p[PATH_MAX], t[PATH_MAX], up[PATH_MAX] = "";
        const char *name = strrchr(devpath, '/') + 1;

        mkdirs(devpath + 1);
        snprintf(p, sizeof(p), "%s/uevent", devpath + 1);
        touch(p);
        if (!subsystem)
                return;
        for (const char *s = devpath; *s; s++)
                if (*s == '/')
                        strcat(up, "../");
        snprintf(p, sizeof(p), "%s/subsystem", devpath + 1);
        snprintf(t, sizeof(t), "%s%s/%s", up, bus ? "bus" : "class", subsystem);
        link_rel(t, p);
        if (bus) {
                snprintf(p, sizeof(p), "bus/%s/devices", subsystem);
                mkdirs(p);
                snprintf(p, sizeof(p), "bus/%s/devices/%s", subsystem, name);
                snprintf(t, sizeof(t), "../../..%s", devpath);
        } else {
                snprintf(p, sizeof(p), "class/%s", subsystem);
                mkdirs(p);
                snprintf(p, sizeof(p), "class/%s/%s", subsystem, name);
                snprintf(t, sizeof(t), "../..%s", devpath);
        }
        link_rel(t, p);
}

static void build_tree(void)
{
        ASSERT_TRUE(mkdtemp(root) != NULL);
        mkdirs("bus");
        mkdirs("class");
        /* root bus without subsystem: never listed, but walked through */
        add_device("/devices/pci0000:00", NULL, false);
        add_device("/devices/pci0000:00/0000:00:01.0", "pci", true);
        add_device("/devices/pci0000:00/0000:00:01.0/net/eth0", "net", false);
        /* a directory without uevent between two devices */
        mkdirs("devices/pci0000:00/0000:00:01.0/net/eth0/queues");
        add_device("/devices/pci0000:00/0000:00:01.0/net/eth0/queues/rx-0", "queues", false);
        add_device("/devices/virtual/block/md0", "block", false);
        add_device("/devices/virtual/block/loop0", "block", false);
        add_device("/devices/virtual/block/dm-1", "block", false);
        add_device("/devices/virtual/sound/card0", "sound", false);
        add_device("/devices/virtual/sound/card0/controlC0", "sound", false);
        add_device("/devices/virtual/sound/card0/pcmC0D0p", "sound", false);
        /* a dangling class entry: ignored */
        link_rel("../../devices/virtual/net/gone", "class/net/gone");
        /* subsystems */
        mkdirs("bus/pci/drivers/e1000");
        touch("bus/pci/drivers/e1000/uevent");
        touch("bus/pci/uevent");
        mkdirs("module/loop");
        touch("module/loop/uevent");
}

static void remove_tree(void)
{
        char cmd[PATH_MAX + 16];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
        ASSERT_EQ(system(cmd), 0);
}

/* The listed devpaths, one per line. */
static void listing(struct device_enum *e, char *out, size_t size)
{
        size_t n = 0;

        out[0] = '\0';
        for (size_t i = 0; i < e->n_devs; i++)
                n += (size_t)snprintf(out + n, size - n, "%s\n", e->devs[i]->devpath);
}

static void run_enum(enum device_enum_type type, const struct device_enum_filter *f,
                     const char *const *prio, size_t n_prio, char *out, size_t size)
{
        struct device_enum e;

        ASSERT_EQ(device_enum_init(&e, root, f), 0);
        ASSERT_EQ(device_enum_scan(&e, type), 0);
        ASSERT_EQ(device_enum_sort(&e, prio, n_prio), 0);
        listing(&e, out, size);
        device_enum_done(&e);
}

static void test_path_compare(void)
{
        ASSERT_TRUE(device_enum_path_compare("/a/b", "/a/b/c") < 0);
        ASSERT_TRUE(device_enum_path_compare("/a/b/c", "/a/b-c") < 0); /* '/' sorts first */
        ASSERT_TRUE(device_enum_path_compare("/a/b", "/a/bb") < 0);
        ASSERT_TRUE(device_enum_path_compare("/a//b/", "/a/b") == 0);
        ASSERT_TRUE(device_enum_path_compare("/b", "/a/z") > 0);
        ASSERT_TRUE(device_enum_devpath_compare("/devices/virtual/block/md0",
                                                "/devices/virtual/block/zz") > 0);
        ASSERT_TRUE(device_enum_devpath_compare("/x/sound/card1/controlC1",
                                                "/x/sound/card1/pcmC1D0p") > 0);
        ASSERT_TRUE(device_enum_devpath_compare("/x/sound/card1", "/x/sound/card1/controlC1") < 0);
        ASSERT_TRUE(device_enum_devpath_compare("/x/sound/card1/controlC1",
                                                "/x/sound/card2/pcmC2D0p") < 0);
}

static void test_resolve_link(void)
{
        char out[PATH_MAX];

        ASSERT_EQ(resolve_link("/class/net", "../../devices/virtual/net/lo", out, sizeof(out)),
                  (int)strlen("/devices/virtual/net/lo"));
        ASSERT_STREQ(out, "/devices/virtual/net/lo");
        ASSERT_TRUE(resolve_link("/class/net", "./../x/./y", out, sizeof(out)) > 0);
        ASSERT_STREQ(out, "/class/x/y");
        ASSERT_EQ(resolve_link("/class", "../../../etc", out, sizeof(out)), -EINVAL);
        ASSERT_EQ(resolve_link("/class", "/etc", out, sizeof(out)), -EXDEV);
        ASSERT_EQ(resolve_link("/class", "..", out, sizeof(out)), -EINVAL);
}

static const struct device_enum_filter no_filter;

static void test_devices(void)
{
        char out[4096];

        run_enum(DEVICE_ENUM_DEVICES, &no_filter, NULL, 0, out, sizeof(out));
        ASSERT_STREQ(out, "/devices/pci0000:00/0000:00:01.0\n"
                          "/devices/pci0000:00/0000:00:01.0/net/eth0\n"
                          "/devices/pci0000:00/0000:00:01.0/net/eth0/queues/rx-0\n"
                          "/devices/virtual/block/loop0\n"
                          "/devices/virtual/sound/card0\n"
                          "/devices/virtual/sound/card0/pcmC0D0p\n"
                          "/devices/virtual/sound/card0/controlC0\n"
                          "/devices/virtual/block/dm-1\n"
                          "/devices/virtual/block/md0\n");
}

static void test_filters(void)
{
        const char *match[] = { "b*", "q*" }, *nomatch[] = { "queues" }, *sysname[] = { "md?" };
        struct device_enum_filter f = {
                .subsystem_match = match, .n_subsystem_match = 2,
                .subsystem_nomatch = nomatch, .n_subsystem_nomatch = 1,
        };
        char out[4096];

        run_enum(DEVICE_ENUM_DEVICES, &f, NULL, 0, out, sizeof(out));
        ASSERT_STREQ(out, "/devices/virtual/block/loop0\n"
                          "/devices/virtual/block/dm-1\n"
                          "/devices/virtual/block/md0\n");
        f = (struct device_enum_filter){ .sysname_match = sysname, .n_sysname_match = 1 };
        run_enum(DEVICE_ENUM_ALL, &f, NULL, 0, out, sizeof(out));
        ASSERT_STREQ(out, "/devices/virtual/block/md0\n");
}

static void test_subsystems_and_priority(void)
{
        const char *prio[] = { "queues", "drivers" };
        char out[4096];

        run_enum(DEVICE_ENUM_SUBSYSTEMS, &no_filter, NULL, 0, out, sizeof(out));
        ASSERT_STREQ(out, "/bus/pci\n"
                          "/bus/pci/drivers\n"
                          "/bus/pci/drivers/e1000\n"
                          "/module/loop\n");
        /* each prioritized batch brings its listed ancestors along */
        run_enum(DEVICE_ENUM_ALL, &no_filter, prio, 2, out, sizeof(out));
        ASSERT_STREQ(out, "/devices/pci0000:00/0000:00:01.0\n"
                          "/devices/pci0000:00/0000:00:01.0/net/eth0\n"
                          "/devices/pci0000:00/0000:00:01.0/net/eth0/queues/rx-0\n"
                          "/bus/pci\n"
                          "/bus/pci/drivers\n"
                          "/bus/pci/drivers/e1000\n"
                          "/devices/virtual/block/loop0\n"
                          "/devices/virtual/sound/card0\n"
                          "/devices/virtual/sound/card0/pcmC0D0p\n"
                          "/devices/virtual/sound/card0/controlC0\n"
                          "/module/loop\n"
                          "/devices/virtual/block/dm-1\n"
                          "/devices/virtual/block/md0\n");
}

int main(void)
{
        log_set_max_level(LOG_WARNING);
        TEST_RUN(test_path_compare);
        TEST_RUN(test_resolve_link);
        build_tree();
        TEST_RUN(test_devices);
        TEST_RUN(test_filters);
        TEST_RUN(test_subsystems_and_priority);
        remove_tree();
        return 0;
}
