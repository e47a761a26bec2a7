/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (single-threaded test) */
/* Unit tests of the monitor's message parsing: property order and
 * normalisation as systemd's sd-device reports them. udevadm's objects are
 * not in a library, so the module is compiled in here. */

#include <stdio.h>
#include <string.h>

#include "shared/tests.h"
#include "udevadm/netlink-monitor.c"

/* Copy a "K=V\0K=V\0" literal into ev->buf; its length without the
 * literal's own terminating NUL. */
static size_t set_props(struct nlmon_event *ev, const char *lit, size_t size)
{
        memcpy(ev->buf, lit, size - 1);
        return size - 1;
}
#define PROPS(ev, lit) set_props((ev), (lit), sizeof(lit))

static void dump(const struct nlmon_event *ev, char *out, size_t size)
{
        size_t n = 0;

        out[0] = '\0';
        for (size_t i = 0; i < ev->n_props; i++)
                n += (size_t)snprintf(out + n, size - n, "%s=%s\n", ev->props[i].key,
                                      ev->props[i].value);
}

static void test_udev_order(void)
{
        struct nlmon_event *ev = nlmon_event_new();
        char out[2048];
        size_t len;

        ASSERT_TRUE(ev);
        len = PROPS(ev, "UDEV_DATABASE_VERSION=1\0ACTION=add\0DEVPATH=/devices/virtual/block/"
                        "loop7\0SUBSYSTEM=block\0MAJOR=7\0MINOR=7\0DEVNAME=loop7\0"
                        "DEVLINKS=/dev/a  /dev/b /dev/a\0TAGS=:x::y:\0CURRENT_TAGS=:z:\0"
                        "SEQNUM=12\0ID_X=1\nignored\0ID_X=2\0DEVTYPE=disk\0");
        ASSERT_EQ(parse_udev_props(ev, ev->buf, len), 0);
        dump(ev, out, sizeof(out));
        ASSERT_STREQ(out, "ACTION=add\n"
                          "DEVPATH=/devices/virtual/block/loop7\n"
                          "SUBSYSTEM=block\n"
                          "DEVNAME=/dev/loop7\n"
                          "SEQNUM=12\n"
                          "ID_X=2\n"
                          "DEVTYPE=disk\n"
                          "MAJOR=7\n"
                          "MINOR=7\n"
                          "DEVLINKS=/dev/a /dev/b\n"
                          "TAGS=:x:y:z:\n"
                          "CURRENT_TAGS=:z:\n");
        ASSERT_STREQ(ev->action, "add");
        ASSERT_STREQ(ev->devtype, "disk");
        ASSERT_TRUE(nlmon_event_has_tag(ev, "x"));
        ASSERT_TRUE(nlmon_event_has_tag(ev, "z"));
        ASSERT_TRUE(!nlmon_event_has_tag(ev, "w"));
        ASSERT_TRUE(!nlmon_event_has_tag(ev, ""));
        nlmon_event_free(ev);
}

static void test_udev_invalid(void)
{
        struct nlmon_event *ev = nlmon_event_new();
        size_t len;

        ASSERT_TRUE(ev);
        /* no SEQNUM */
        len = PROPS(ev, "ACTION=add\0DEVPATH=/devices/x\0SUBSYSTEM=s\0");
        ASSERT_EQ(parse_udev_props(ev, ev->buf, len), -EBADMSG);
        /* unknown action */
        len = PROPS(ev, "ACTION=explode\0DEVPATH=/devices/x\0SUBSYSTEM=s\0SEQNUM=1\0");
        ASSERT_EQ(parse_udev_props(ev, ev->buf, len), -EBADMSG);
        /* entry without '=' */
        len = PROPS(ev, "ACTION=add\0DEVPATH=/devices/x\0SUBSYSTEM=s\0SEQNUM=1\0junk\0");
        ASSERT_EQ(parse_udev_props(ev, ev->buf, len), -EBADMSG);
        /* last entry not terminated */
        len = PROPS(ev, "ACTION=add\0DEVPATH=/devices/x\0SUBSYSTEM=s\0SEQNUM=1");
        ASSERT_EQ(parse_udev_props(ev, ev->buf, len), -EBADMSG);
        /* SEQNUM 0 */
        len = PROPS(ev, "ACTION=add\0DEVPATH=/devices/x\0SUBSYSTEM=s\0SEQNUM=0\0");
        ASSERT_EQ(parse_udev_props(ev, ev->buf, len), -EBADMSG);
        /* major 0: no MAJOR/MINOR shown, still valid */
        len = PROPS(ev, "ACTION=add\0DEVPATH=/devices/x\0SUBSYSTEM=s\0SEQNUM=1\0MAJOR=0\0"
                        "MINOR=3\0");
        ASSERT_EQ(parse_udev_props(ev, ev->buf, len), 0);
        ASSERT_TRUE(nlmon_event_get(ev, "MAJOR") == NULL);
        ASSERT_TRUE(nlmon_event_get(ev, "MINOR") == NULL);
        ASSERT_TRUE(ev->tags == NULL);
        nlmon_event_free(ev);
}

static void test_kernel(void)
{
        static const char msg[] = "add@/devices/virtual/block/loop7\0ACTION=add\0"
                                  "DEVPATH=/devices/virtual/block/loop7\0SUBSYSTEM=block\0"
                                  "MAJOR=7\0MINOR=7\0DEVNAME=loop7\0DEVTYPE=disk\0DISKSEQ=9\0"
                                  "SEQNUM=100\0";
        struct nlmon_event *ev = nlmon_event_new();
        char out[2048];

        ASSERT_TRUE(ev);
        memcpy(ev->buf, msg, sizeof(msg));
        ASSERT_EQ(parse_kernel(ev, ev->buf, sizeof(msg) - 1), 0);
        dump(ev, out, sizeof(out));
        ASSERT_STREQ(out, "ACTION=add\n"
                          "DEVPATH=/devices/virtual/block/loop7\n"
                          "SUBSYSTEM=block\n"
                          "DEVNAME=/dev/loop7\n"
                          "DEVTYPE=disk\n"
                          "DISKSEQ=9\n"
                          "SEQNUM=100\n"
                          "MAJOR=7\n"
                          "MINOR=7\n");
        ASSERT_STREQ(ev->devpath, "/devices/virtual/block/loop7");
        ASSERT_TRUE(ev->tags == NULL);
        nlmon_event_free(ev);
}

int main(void)
{
        log_set_max_level(LOG_WARNING);
        TEST_RUN(test_udev_order);
        TEST_RUN(test_udev_invalid);
        TEST_RUN(test_kernel);
        return 0;
}
