/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: main only */
/* hid-fido.c: report descriptors of real tokens and other HID devices,
 * malformed ones, and the parent lookup on a temporary tree. The program
 * against systemd's fido_id: tests/integration/test_helpers_fido_v4l_mtd.py. */
#include <fcntl.h>
#include <sys/stat.h>

#include "helpers/hid-fido.h"
#include "shared/macro.h"
#include "shared/tests.h"

#define DESC(...) ((const uint8_t[]){ __VA_ARGS__ }), sizeof((const uint8_t[]){ __VA_ARGS__ })

static void test_descriptors(void)
{
        /* a U2F token: usage page 0xF1D0, usage 1, collection, reports */
        ASSERT_EQ(hid_fido_is_token(DESC(0x06, 0xd0, 0xf1, 0x09, 0x01, 0xa1, 0x01, 0x09, 0x20,
                                         0x15, 0x00, 0x26, 0xff, 0x00, 0x75, 0x08, 0x95, 0x40,
                                         0x81, 0x02, 0xc0)),
                  1);
        /* a keyboard */
        ASSERT_EQ(hid_fido_is_token(DESC(0x05, 0x01, 0x09, 0x06, 0xa1, 0x01, 0x05, 0x07, 0x19,
                                         0xe0, 0x29, 0xe7, 0x15, 0x00, 0x25, 0x01, 0x75, 0x01,
                                         0x95, 0x08, 0x81, 0x02, 0xc0)),
                  0);
        /* a 4-byte usage carries its page */
        ASSERT_EQ(hid_fido_is_token(DESC(0x05, 0x01, 0x0b, 0x01, 0x00, 0xd0, 0xf1)), 1);
        /* the FIDO page with another usage; the usage before the page */
        ASSERT_EQ(hid_fido_is_token(DESC(0x06, 0xd0, 0xf1, 0x09, 0x02)), 0);
        ASSERT_EQ(hid_fido_is_token(DESC(0x09, 0x01, 0x06, 0xd0, 0xf1)), 0);
        /* a long item is skipped whole */
        ASSERT_EQ(hid_fido_is_token(DESC(0xfe, 0x02, 0x10, 0x06, 0xd0, 0x06, 0xd0, 0xf1, 0x09,
                                         0x01)),
                  1);
        /* a long item's size byte missing; an item cut by the end */
        ASSERT_EQ(hid_fido_is_token(DESC(0x05, 0x01, 0xfe)), -EINVAL);
        ASSERT_EQ(hid_fido_is_token(DESC(0x05, 0x01, 0x26, 0xff)), -EINVAL);
        /* a long item running past the end just ends the walk */
        ASSERT_EQ(hid_fido_is_token(DESC(0xfe, 0x40, 0x00)), 0);
        /* a 4-byte usage page is refused, a match before it counts */
        ASSERT_EQ(hid_fido_is_token(DESC(0x07, 0xd0, 0xf1, 0x00, 0x00, 0x09, 0x01)), -EINVAL);
        ASSERT_EQ(hid_fido_is_token(DESC(0x06, 0xd0, 0xf1, 0x09, 0x01, 0x07, 0, 0, 0, 0)), 1);
        ASSERT_EQ(hid_fido_is_token(DESC(0x00)), 0);
}

static void make_file(const char *dir, const char *name)
{
        char p[1024];
        int fd;

        snprintf(p, sizeof(p), "%s/%s", dir, name);
        fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        ASSERT_TRUE(fd >= 0);
        close(fd);
}

/* The directories of the test tree, parents first. */
static const char *const tree[] = {
        "devices",
        "devices/usb1",
        "devices/usb1/1-1",
        "devices/usb1/1-1/0003:1050:0407.0001",
        "devices/usb1/1-1/0003:1050:0407.0001/hidraw",
        "devices/usb1/1-1/0003:1050:0407.0001/hidraw/hidraw0",
        "class",
        "class/hidraw",
};

static void test_parent(void)
{
        char root[] = "/tmp/test-hid-fido-XXXXXX", p[256], q[1024];
        char *parent = NULL, *dev = NULL;

        ASSERT_TRUE(mkdtemp(root));
        setenv("SYSTEMD_DEVICE_VERIFY_SYSFS", "0", 1);
        for (size_t i = 0; i < ARRAY_SIZE(tree); i++) {
                snprintf(q, sizeof(q), "%s/%s", root, tree[i]);
                ASSERT_EQ(mkdir(q, 0755), 0);
        }
        snprintf(p, sizeof(p), "%s/%s", root, tree[5]);
        make_file(p, "uevent");
        snprintf(q, sizeof(q), "%s/%s", root, tree[3]);
        make_file(q, "uevent");

        ASSERT_EQ(hid_parent_syspath(root, p, &parent), 0);
        ASSERT_STREQ(parent, q);
        free(parent);
        parent = NULL;
        ASSERT_EQ(hid_device_syspath(root, p, &dev), 0);
        ASSERT_STREQ(dev, p);
        free(dev);
        dev = NULL;
        /* the HID device without uevent: nothing above is a device */
        snprintf(q, sizeof(q), "%s/%s/uevent", root, tree[3]);
        ASSERT_EQ(unlink(q), 0);
        ASSERT_EQ(hid_parent_syspath(root, p, &parent), -ENODEV);
        /* a missing device; a path outside the root */
        snprintf(q, sizeof(q), "%s/devices/none", root);
        ASSERT_EQ(hid_device_syspath(root, q, &dev), -ENODEV);
        ASSERT_EQ(hid_device_syspath(root, "/", &dev), -ENODEV);
        /* outside devices/ a directory is enough */
        snprintf(q, sizeof(q), "%s/class/hidraw", root);
        ASSERT_EQ(hid_device_syspath(root, q, &dev), 0);
        free(dev);
        /* on a real file system the sysfs check refuses */
        unsetenv("SYSTEMD_DEVICE_VERIFY_SYSFS");
        ASSERT_EQ(hid_device_syspath(root, p, &dev), -ENODEV);

        snprintf(q, sizeof(q), "%s/uevent", p);
        ASSERT_EQ(unlink(q), 0);
        for (size_t i = ARRAY_SIZE(tree); i > 0; i--) {
                snprintf(q, sizeof(q), "%s/%s", root, tree[i - 1]);
                ASSERT_EQ(rmdir(q), 0);
        }
        ASSERT_EQ(rmdir(root), 0);
}

int main(void)
{
        TEST_RUN(test_descriptors);
        TEST_RUN(test_parent);
        return 0;
}
