/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (single-threaded test) */
/* Unit tests of the enumerator's parent, tag and device-level filters on a
 * fake sysfs tree (the module is compiled in, as in test-device-enum.c). */

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/tests.h"
#include "udevadm/device-enum.c"

static char root[] = "/tmp/test-device-enum-filters-XXXXXX";
static char tags_dir[300];

static void mk(const char *rel, bool file)
{
        char p[PATH_MAX], *s;

        snprintf(p, sizeof(p), "%s/%s", root, rel);
        for (s = p + strlen(root) + 1; (s = strchr(s, '/')); s++) {
                *s = '\0';
                mkdir(p, 0755);
                *s = '/';
        }
        if (file)
                close(open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
        else
                mkdir(p, 0755);
}

/* A device with a uevent file and a subsystem link to class/<subsystem>,
 * listed in class/<subsystem>/. */
static void add_device(const char *devpath, const char *subsystem)
{
        char p[PATH_MAX], t[PATH_MAX], up[PATH_MAX] = "";

        snprintf(p, sizeof(p), "%s/uevent", devpath + 1);
        mk(p, true);
        if (!subsystem)
                return;
        for (const char *s = devpath; *s; s++)
                if (*s == '/')
                        strcat(up, "../");
        snprintf(p, sizeof(p), "%s/%s/subsystem", root, devpath + 1);
        snprintf(t, sizeof(t), "%sclass/%s", up, subsystem);
        ASSERT_EQ(symlink(t, p), 0);
        snprintf(p, sizeof(p), "class/%s", subsystem);
        mk(p, false);
        snprintf(p, sizeof(p), "%s/class/%s/%s", root, subsystem, strrchr(devpath, '/') + 1);
        snprintf(t, sizeof(t), "../..%s", devpath);
        ASSERT_EQ(symlink(t, p), 0);
}

static void build_tree(void)
{
        ASSERT_TRUE(mkdtemp(root) != NULL);
        mk("bus", false);
        add_device("/devices/host", NULL);
        add_device("/devices/host/ctl0", "ctl");
        add_device("/devices/host/ctl0/disk0", "block");
        add_device("/devices/host/ctl0/disk0/disk0p1", "block");
        mk("devices/host/ctl0/disk0/queue", false); /* no device */
        add_device("/devices/host/ctl0/disk0/queue/deep0", "block");
        add_device("/devices/virtual/net/eth0", "net");
        add_device("/devices/virtual/net/eth1", "net");
        add_device("/devices/virtual/sound/card0", "sound");
        add_device("/devices/virtual/sound/card0/controlC0", "sound");
        add_device("/devices/virtual/sound/card0/pcmC0D0p", "sound");
        snprintf(tags_dir, sizeof(tags_dir), "%s/tags", root);
        mk("tags/seat/+block:disk0p1", true);
        mk("tags/seat/n1", true);
        mk("tags/seat/gone", true);
        mk("tags/other/n2", true);
}

static void remove_tree(void)
{
        char cmd[PATH_MAX + 16];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
        ASSERT_EQ(system(cmd), 0);
}

static void listing(struct device_enum *e, char *out, size_t size)
{
        size_t n = 0;

        out[0] = '\0';
        for (size_t i = 0; i < e->n_devs; i++)
                n += (size_t)snprintf(out + n, size - n, "%s\n", e->devs[i]->devpath);
}

static int run_enum(enum device_enum_type type, const struct device_enum_filter *f,
                    const char *ancestors_of, char *out, size_t size)
{
        struct device_enum e;
        int r;

        ASSERT_EQ(device_enum_init(&e, root, f), 0);
        r = device_enum_scan(&e, type);
        if (ancestors_of)
                ASSERT_EQ(device_enum_add_ancestors(&e, ancestors_of), 0);
        ASSERT_EQ(device_enum_sort(&e, NULL, 0), 0);
        listing(&e, out, size);
        device_enum_done(&e);
        return r;
}

static void test_parents(void)
{
        const char *parents[] = { "/devices/host/ctl0/disk0", "/devices/virtual/net/eth1" };
        struct device_enum_filter f = { .parents = parents, .n_parents = 2 };
        char out[4096];

        /* the parents and every device in their directories, no ancestors */
        ASSERT_EQ(run_enum(DEVICE_ENUM_ALL, &f, NULL, out, sizeof(out)), 0);
        ASSERT_STREQ(out, "/devices/host/ctl0/disk0\n"
                          "/devices/host/ctl0/disk0/disk0p1\n"
                          "/devices/host/ctl0/disk0/queue/deep0\n"
                          "/devices/virtual/net/eth1\n");
        /* the sysname filter is applied to the crawled names */
        const char *sysname[] = { "deep*" };
        f.sysname_match = sysname;
        f.n_sysname_match = 1;
        f.n_parents = 1;
        ASSERT_EQ(run_enum(DEVICE_ENUM_DEVICES, &f, NULL, out, sizeof(out)), 0);
        ASSERT_STREQ(out, "/devices/host/ctl0/disk0/queue/deep0\n");
        /* --tree DEVICE: crawl, then the ancestors */
        f = (struct device_enum_filter){ .parents = parents, .n_parents = 1 };
        ASSERT_EQ(run_enum(DEVICE_ENUM_ALL, &f, parents[0], out, sizeof(out)), 0);
        ASSERT_STREQ(out, "/devices/host/ctl0\n"
                          "/devices/host/ctl0/disk0\n"
                          "/devices/host/ctl0/disk0/disk0p1\n"
                          "/devices/host/ctl0/disk0/queue/deep0\n");
}

/* "+block:NAME" and "nN" (ethN-1) of the fake tree. */
static int resolve(void *userdata, const char *id, char *buf, size_t size)
{
        if (strcmp(id, "+block:disk0p1") == 0)
                snprintf(buf, size, "/devices/host/ctl0/disk0/disk0p1");
        else if (strcmp(id, "n1") == 0)
                snprintf(buf, size, "/devices/virtual/net/eth0");
        else if (strcmp(id, "n2") == 0)
                snprintf(buf, size, "/devices/virtual/net/eth1");
        else if (strcmp(id, "gone") == 0)
                return 0;
        else
                return -EINVAL;
        return 1;
}

static unsigned seen_flags;

static int match_net_only(void *userdata, const char *devpath, const char *subsystem,
                          unsigned flags)
{
        seen_flags |= flags;
        return strcmp(subsystem, "net") == 0;
}

static void test_tags(void)
{
        const char *tags[] = { "seat", "other" };
        struct device_enum_filter f = {
                .tags = tags, .n_tags = 1, .tags_dir = tags_dir, .resolve_id = resolve,
        };
        char out[4096];

        ASSERT_EQ(run_enum(DEVICE_ENUM_DEVICES, &f, NULL, out, sizeof(out)), 0);
        ASSERT_STREQ(out, "/devices/host/ctl0/disk0/disk0p1\n/devices/virtual/net/eth0\n");
        /* several tags: the devices of any of them (systemd's behaviour) */
        f.n_tags = 2;
        ASSERT_EQ(run_enum(DEVICE_ENUM_ALL, &f, NULL, out, sizeof(out)), 0);
        ASSERT_STREQ(out, "/devices/host/ctl0/disk0/disk0p1\n/devices/virtual/net/eth0\n"
                          "/devices/virtual/net/eth1\n");
        /* device-level test: told that the tag need not be checked again */
        f.match = match_net_only;
        seen_flags = 0;
        ASSERT_EQ(run_enum(DEVICE_ENUM_DEVICES, &f, NULL, out, sizeof(out)), 0);
        ASSERT_STREQ(out, "/devices/virtual/net/eth0\n/devices/virtual/net/eth1\n");
        ASSERT_EQ(seen_flags & DEVICE_ENUM_CHECK_TAGS, 0);
        /* a tag entry that is no device id fails the scan */
        mk("tags/seat/garbage", true);
        ASSERT_EQ(run_enum(DEVICE_ENUM_DEVICES, &f, NULL, out, sizeof(out)), -EINVAL);
}

static int match_fails(void *userdata, const char *devpath, const char *subsystem,
                       unsigned flags)
{
        seen_flags |= flags;
        return strstr(devpath, "eth1") ? -EIO : 1;
}

static void test_match_callback(void)
{
        struct device_enum_filter f = { .match = match_net_only };
        char out[4096];

        seen_flags = 0;
        ASSERT_EQ(run_enum(DEVICE_ENUM_DEVICES, &f, NULL, out, sizeof(out)), 0);
        ASSERT_STREQ(out, "/devices/virtual/net/eth0\n/devices/virtual/net/eth1\n");
        ASSERT_TRUE(seen_flags & DEVICE_ENUM_CHECK_TAGS); /* a normal scan checks tags */
        /* an error of the test: the device is left out and the scan fails */
        f.match = match_fails;
        ASSERT_EQ(run_enum(DEVICE_ENUM_DEVICES, &f, NULL, out, sizeof(out)), -EIO);
        ASSERT_TRUE(strstr(out, "eth1") == NULL && strstr(out, "eth0") != NULL);
}

static void test_sound_order(void)
{
        const char *match[] = { "sound" };
        struct device_enum_filter f = { .subsystem_match = match, .n_subsystem_match = 1 };
        struct device_enum e;
        char out[4096];

        /* the intended order: the control device last */
        ASSERT_EQ(run_enum(DEVICE_ENUM_DEVICES, &f, NULL, out, sizeof(out)), 0);
        ASSERT_STREQ(out, "/devices/virtual/sound/card0\n"
                          "/devices/virtual/sound/card0/pcmC0D0p\n"
                          "/devices/virtual/sound/card0/controlC0\n");
        /* what v252 really does (udevadm info): plain path order */
        ASSERT_EQ(device_enum_init(&e, root, &f), 0);
        e.v252_sound_order = true;
        ASSERT_EQ(device_enum_scan(&e, DEVICE_ENUM_DEVICES), 0);
        ASSERT_EQ(device_enum_sort(&e, NULL, 0), 0);
        listing(&e, out, sizeof(out));
        device_enum_done(&e);
        ASSERT_STREQ(out, "/devices/virtual/sound/card0\n"
                          "/devices/virtual/sound/card0/controlC0\n"
                          "/devices/virtual/sound/card0/pcmC0D0p\n");
}

int main(void)
{
        log_set_max_level(LOG_WARNING);
        build_tree();
        TEST_RUN(test_parents);
        TEST_RUN(test_tags);
        TEST_RUN(test_match_callback);
        TEST_RUN(test_sound_order);
        remove_tree();
        return 0;
}
