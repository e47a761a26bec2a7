/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (single-threaded test) */
/* The recording format (record-file.c): round trip, every truncation and
 * corruption rejected with the place named; the device snapshots of
 * record-sysfs.c over the fake sysfs tree. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/test-sysfs-fixture.h"
#include "shared/log.h"
#include "shared/tests.h"
#include "udevadm/record-file.c"
#include "udevadm/record-sysfs.c"

static const char UEV1[] = "add@/devices/virtual/net/veth0\0ACTION=add\0"
                           "DEVPATH=/devices/virtual/net/veth0\0SUBSYSTEM=net\0"
                           "INTERFACE=veth0\0IFINDEX=5\0SEQNUM=100";
static const char UEV2[] = "remove@/devices/virtual/net/veth0\0ACTION=remove\0"
                           "DEVPATH=/devices/virtual/net/veth0\0SUBSYSTEM=net\0"
                           "INTERFACE=veth0\0IFINDEX=5\0SEQNUM=101";

/* A file written by the writer; *ret owned. */
static size_t write_sample(char **ret)
{
        struct record_writer w;
        size_t len = 0;
        FILE *f = open_memstream(ret, &len);
        static const char bin[] = "a\0b\nc\n";

        ASSERT_TRUE(f != NULL);
        ASSERT_EQ(record_writer_begin(&w, f), 0);
        ASSERT_EQ(record_write_device(&w, "/devices/virtual/net/veth0"), 0);
        ASSERT_EQ(record_write_file(&w, "address", "aa:bb\n", 6), 0);
        ASSERT_EQ(record_write_file(&w, "queue/blob name", bin, sizeof(bin) - 1), 0);
        ASSERT_EQ(record_write_file(&w, "empty", "", 0), 0);
        ASSERT_EQ(record_write_unreadable(&w, "power/wakeup"), 0);
        ASSERT_EQ(record_write_link(&w, "subsystem", "/class/net"), 0);
        ASSERT_EQ(record_write_event(&w, 100, UEV1, sizeof(UEV1)), 0);
        ASSERT_EQ(record_write_gone(&w, "/devices/virtual/net/veth0"), 0);
        ASSERT_EQ(record_write_event(&w, 101, UEV2, sizeof(UEV2)), 0);
        ASSERT_EQ(record_writer_end(&w), 0);
        ASSERT_EQ(w.events, 2);
        fclose(f);
        ASSERT_EQ(w.bytes, len);
        return len;
}

/* Read a whole buffer; returns 0 after END or the error, message in r. */
static int read_all(const char *buf, size_t len, struct record_reader *r, unsigned *items)
{
        FILE *f = fmemopen((void *)buf, len, "r");
        struct record_item it;
        int k;

        ASSERT_TRUE(f != NULL || len == 0);
        if (!f)
                f = fopen("/dev/null", "re");
        *items = 0;
        k = record_reader_begin(r, f, "rec");
        while (k >= 0 && (k = record_read_next(r, &it)) > 0)
                (*items)++;
        record_reader_done(r);
        fclose(f);
        return k;
}

static void test_round_trip(void)
{
        _cleanup_free_ char *buf = NULL;
        size_t len = write_sample(&buf);
        struct record_reader r;
        struct record_item it;
        FILE *f = fmemopen(buf, len, "r");

        ASSERT_TRUE(strneq(buf, "TUDEV-RECORD 1\nS /devices/virtual/net/veth0\nF 6 address\n"
                                "aa:bb\n\nF 6 queue/blob name\n", 66));
        ASSERT_EQ(record_reader_begin(&r, f, "rec"), 0);
        ASSERT_EQ(record_read_next(&r, &it), 1);
        ASSERT_EQ(it.type, RECORD_ITEM_DEVICE);
        ASSERT_STREQ(it.path, "/devices/virtual/net/veth0");
        ASSERT_EQ(it.line, 2);
        ASSERT_EQ(record_read_next(&r, &it), 1);
        ASSERT_EQ(it.type, RECORD_ITEM_FILE);
        ASSERT_STREQ(it.path, "address");
        ASSERT_EQ(it.len, 6);
        ASSERT_TRUE(memcmp(it.data, "aa:bb\n", 6) == 0);
        ASSERT_EQ(record_read_next(&r, &it), 1);
        ASSERT_STREQ(it.path, "queue/blob name");
        ASSERT_EQ(it.line, 6); /* "aa:bb\n" and its terminating newline: lines 4, 5 */
        ASSERT_EQ(it.len, 6);
        ASSERT_TRUE(memcmp(it.data, "a\0b\nc\n", 6) == 0);
        ASSERT_EQ(record_read_next(&r, &it), 1);
        ASSERT_STREQ(it.path, "empty");
        ASSERT_EQ(it.len, 0);
        ASSERT_EQ(it.line, 10); /* the payload's newlines count as lines */
        ASSERT_EQ(record_read_next(&r, &it), 1);
        ASSERT_EQ(it.type, RECORD_ITEM_UNREADABLE);
        ASSERT_STREQ(it.path, "power/wakeup");
        ASSERT_EQ(record_read_next(&r, &it), 1);
        ASSERT_EQ(it.type, RECORD_ITEM_LINK);
        ASSERT_STREQ(it.path, "subsystem");
        ASSERT_STREQ(it.target, "/class/net");
        ASSERT_EQ(record_read_next(&r, &it), 1);
        ASSERT_EQ(it.type, RECORD_ITEM_EVENT);
        ASSERT_EQ(it.seqnum, 100);
        ASSERT_EQ(it.len, sizeof(UEV1));
        ASSERT_TRUE(memcmp(it.data, UEV1, sizeof(UEV1)) == 0);
        ASSERT_STREQ(it.uevent->devpath, "/devices/virtual/net/veth0");
        ASSERT_EQ(it.uevent->ifindex, 5);
        ASSERT_EQ(record_read_next(&r, &it), 1);
        ASSERT_EQ(it.type, RECORD_ITEM_GONE);
        ASSERT_EQ(record_read_next(&r, &it), 1);
        ASSERT_EQ(it.type, RECORD_ITEM_EVENT);
        ASSERT_EQ(it.uevent->action, UEVENT_ACTION_REMOVE);
        ASSERT_EQ(record_read_next(&r, &it), 1);
        ASSERT_EQ(it.type, RECORD_ITEM_END);
        ASSERT_EQ(it.seqnum, 2);
        ASSERT_EQ(record_read_next(&r, &it), 0);
        record_reader_done(&r);
        fclose(f);
}

/* Every proper prefix of a valid file is an error naming a line. */
static void test_every_truncation(void)
{
        _cleanup_free_ char *buf = NULL;
        size_t len = write_sample(&buf);
        struct record_reader r;
        unsigned items;

        ASSERT_EQ(read_all(buf, len, &r, &items), 0);
        ASSERT_EQ(items, 10);
        for (size_t cut = 0; cut < len; cut++) {
                ASSERT_EQ(read_all(buf, cut, &r, &items), -EBADMSG);
                ASSERT_TRUE(strneq(r.error, "rec:", 4));
                ASSERT_TRUE(strtoul(r.error + 4, NULL, 10) >= 1);
        }
}

/* A text with one defect: the reader's message. */
static void expect_error(const char *text, size_t len, const char *msg)
{
        struct record_reader r;
        unsigned items;

        ASSERT_EQ(read_all(text, len, &r, &items), -EBADMSG);
        if (!streq(r.error, msg)) {
                fprintf(stderr, "got '%s', want '%s'\n", r.error, msg);
                ASSERT_TRUE(false);
        }
}
#define EXPECT_ERROR(lit, msg) expect_error((lit), sizeof(lit) - 1, (msg))

static void test_corrupt(void)
{
        char big[RECORD_LINE_MAX + 64];

        EXPECT_ERROR("", "rec:1: empty file, not a recording");
        EXPECT_ERROR("hello\n", "rec:1: not a recording (no 'TUDEV-RECORD 1' line)");
        EXPECT_ERROR("TUDEV-RECORD 2\nEND 0\n",
                     "rec:1: unsupported version '2' (this udevadm reads 1)");
        EXPECT_ERROR("TUDEV-RECORD 1\n", "rec:2: truncated: no END line (the recording was "
                     "cut short)");
        EXPECT_ERROR("TUDEV-RECORD 1\nEND 0", "rec:2: truncated: the last line has no newline");
        EXPECT_ERROR("TUDEV-RECORD 1\nEND 1\n", "rec:2: END says 1 events, the file has 0");
        EXPECT_ERROR("TUDEV-RECORD 1\nEND 0\nx", "rec:3: data after the END line");
        EXPECT_ERROR("TUDEV-RECORD 1\nF 1 a\nx\nEND 0\n",
                     "rec:2: F record outside a device snapshot (no S before it)");
        EXPECT_ERROR("TUDEV-RECORD 1\nS /devices/a\nF 4097 a\n",
                     "rec:3: file length 4097 above the cap of 4096");
        EXPECT_ERROR("TUDEV-RECORD 1\nS /devices/a\nF 1 a/b/c\nx\n",
                     "rec:3: invalid attribute name 'a/b/c'");
        EXPECT_ERROR("TUDEV-RECORD 1\nS /devices/a\nF 1 ../x\nx\n",
                     "rec:3: invalid attribute name '../x'");
        EXPECT_ERROR("TUDEV-RECORD 1\nS /devices/a\nF 01 a\nx\n",
                     "rec:3: malformed file line, expected 'F LENGTH NAME'");
        EXPECT_ERROR("TUDEV-RECORD 1\nS /devices/a\nF 1 a\nxy\nEND 0\n",
                     "rec:3: data longer than the 1 bytes announced");
        EXPECT_ERROR("TUDEV-RECORD 1\nS /sys/a\n", "rec:2: invalid devpath '/sys/a'");
        EXPECT_ERROR("TUDEV-RECORD 1\nS /devices/a/../b\n",
                     "rec:2: invalid devpath '/devices/a/../b'");
        EXPECT_ERROR("TUDEV-RECORD 1\nS /devices/a\nL subsystem class/net\n",
                     "rec:3: invalid link target 'class/net'");
        EXPECT_ERROR("TUDEV-RECORD 1\nS /devices/a\nL sub/system /class/net\n",
                     "rec:3: invalid link name 'sub/system'");
        EXPECT_ERROR("TUDEV-RECORD 1\nQ x\n", "rec:2: unknown record 'Q x'");
        EXPECT_ERROR("TUDEV-RECORD 1\nS /dev\0ices/a\n", "rec:2: NUL byte in a header line");
        EXPECT_ERROR("TUDEV-RECORD 1\nE 5 0\n\n", "rec:2: event length 0 out of range 1..8192");
        EXPECT_ERROR("TUDEV-RECORD 1\nE 5 3\nabc\n", "rec:2: invalid kernel uevent (malformed)");
        EXPECT_ERROR("TUDEV-RECORD 1\nE 5 9000\n", "rec:2: event length 9000 out of range "
                     "1..8192");
        {
                char text[512];
                size_t n = (size_t)snprintf(text, sizeof(text), "TUDEV-RECORD 1\nE 99 %zu\n",
                                            sizeof(UEV1));
                memcpy(text + n, UEV1, sizeof(UEV1));
                n += sizeof(UEV1);
                text[n++] = '\n';
                expect_error(text, n, "rec:2: SEQNUM=100 in the uevent, 99 in the event line");
                n = (size_t)snprintf(text, sizeof(text), "TUDEV-RECORD 1\nE 100 %zu\n",
                                     sizeof(UEV1));
                memcpy(text + n, UEV1, sizeof(UEV1));
                n += sizeof(UEV1);
                n += (size_t)snprintf(text + n, sizeof(text) - n, "\nE 100 %zu\n", sizeof(UEV1));
                memcpy(text + n, UEV1, sizeof(UEV1));
                n += sizeof(UEV1);
                text[n++] = '\n';
                expect_error(text, n, "rec:4: SEQNUM 100 not above the previous event's 100");
        }
        memset(big, 'a', sizeof(big));
        memcpy(big, "TUDEV-RECORD 1\nS /devices/", 26);
        big[sizeof(big) - 1] = '\n';
        expect_error(big, sizeof(big), "rec:2: line longer than 2048 bytes");
}

static void test_caps_on_write(void)
{
        char data[RECORD_FILE_DATA_MAX + 1] = "";
        struct record_writer w;
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);

        ASSERT_EQ(record_writer_begin(&w, f), 0);
        ASSERT_EQ(record_write_file(&w, "a", data, sizeof(data)), -E2BIG);
        ASSERT_EQ(record_write_file(&w, "a/b/c", data, 1), -EINVAL);
        ASSERT_EQ(record_write_file(&w, "a\nb", data, 1), -EINVAL);
        ASSERT_EQ(record_write_link(&w, "a b", "/class/x"), -EINVAL);
        ASSERT_EQ(record_write_device(&w, "/sys/devices/x"), -EINVAL);
        ASSERT_EQ(record_write_event(&w, 1, UEV1, UEVENT_BUFFER_MAX + 1), -E2BIG);
        w.bytes = RECORD_SIZE_MAX - 10;
        ASSERT_EQ(record_write_device(&w, "/devices/virtual/net/veth0"), -E2BIG);
        ASSERT_EQ(record_writer_end(&w), 0); /* the trailer always fits */
        fclose(f);
        ASSERT_TRUE(strstr(buf, "END 0\n") != NULL);
        ASSERT_TRUE(strstr(buf, "veth0") == NULL);
        free(buf);
}

/* Snapshots of the fake tree: ancestors first, sorted, links as sysfs
 * paths, unchanged devices not repeated, remove written as gone. */
static void test_sysfs_snapshots(void)
{
        struct sysfs_fixture fx;
        struct record_sysfs s;
        struct record_writer w;
        struct record_reader r;
        struct record_item it;
        char *buf = NULL, dgram[UEVENT_BUFFER_MAX];
        int dl;
        size_t len = 0;
        FILE *f;
        struct uevent *add = FX_UEVENT("add@" SDA1 "\0ACTION=add\0DEVPATH=" SDA1
                                       "\0SUBSYSTEM=block\0MAJOR=8\0MINOR=1\0DEVNAME=sda1\0"
                                       "DEVTYPE=partition\0SEQNUM=7");
        struct uevent *rm = FX_UEVENT("remove@" SDA1 "\0ACTION=remove\0DEVPATH=" SDA1
                                      "\0SUBSYSTEM=block\0MAJOR=8\0MINOR=1\0DEVNAME=sda1\0"
                                      "DEVTYPE=partition\0SEQNUM=8");
        const char *want_devices[] = { PCI_USB, USB1, USB_DEV, USB_INTF, SCSI_HOST, SCSI_TARGET,
                                       SCSI_DEV, SDA, SDA1 };
        size_t nd = 0;
        bool saw_size = false, saw_link = false, saw_subdir = false, saw_unreadable = false;

        fixture_setup(&fx);
        /* /devices/pci0000:00 has a uevent file in the fixture: the first */
        record_sysfs_init(&s, fx.sys);
        f = open_memstream(&buf, &len);
        ASSERT_EQ(record_writer_begin(&w, f), 0);
        ASSERT_EQ(record_sysfs_event(&s, &w, add), 0);
        dl = uevent_format_kernel(add, dgram, sizeof(dgram));
        ASSERT_TRUE(dl > 0);
        ASSERT_EQ(record_write_event(&w, 7, dgram, (size_t)dl), 0);
        ASSERT_EQ(s.snapshots, 10);
        /* the same state again: nothing new */
        ASSERT_EQ(record_sysfs_event(&s, &w, add), 0);
        ASSERT_EQ(s.snapshots, 10);
        /* a changed attribute: that device alone */
        fx_attr(&fx, SDA, "size", "1\n");
        ASSERT_EQ(record_sysfs_event(&s, &w, add), 0);
        ASSERT_EQ(s.snapshots, 11);
        ASSERT_EQ(record_sysfs_event(&s, &w, rm), 0);
        dl = uevent_format_kernel(rm, dgram, sizeof(dgram));
        ASSERT_TRUE(dl > 0);
        ASSERT_EQ(record_write_event(&w, 8, dgram, (size_t)dl), 0);
        ASSERT_EQ(record_writer_end(&w), 0);
        fclose(f);

        f = fmemopen(buf, len, "r");
        ASSERT_EQ(record_reader_begin(&r, f, "snap"), 0);
        while (record_read_next(&r, &it) > 0 && it.type != RECORD_ITEM_EVENT) {
                if (it.type == RECORD_ITEM_DEVICE) {
                        ASSERT_TRUE(nd < ARRAY_SIZE(want_devices) + 1);
                        if (nd == 0)
                                ASSERT_STREQ(it.path, "/devices/pci0000:00");
                        else
                                ASSERT_STREQ(it.path, want_devices[nd - 1]);
                        nd++;
                }
                if (it.type == RECORD_ITEM_FILE && streq(it.path, "size") && nd == 9) {
                        ASSERT_EQ(it.len, 9);
                        ASSERT_TRUE(memcmp(it.data, "30031872\n", 9) == 0);
                        saw_size = true;
                }
                if (it.type == RECORD_ITEM_FILE && streq(it.path, "power/control"))
                        saw_subdir = true;
                if (it.type == RECORD_ITEM_UNREADABLE && streq(it.path, "remove"))
                        saw_unreadable = true;
                if (it.type == RECORD_ITEM_LINK && streq(it.path, "subsystem") && nd == 10) {
                        ASSERT_STREQ(it.target, "/class/block");
                        saw_link = true;
                }
                /* the partition is a child device of sda, not a subdirectory */
                ASSERT_TRUE(!(it.path && strneq(it.path, "sda1/", 5)));
        }
        ASSERT_EQ(nd, 10);
        ASSERT_TRUE(saw_size && saw_link && saw_subdir && saw_unreadable);
        ASSERT_EQ(it.type, RECORD_ITEM_EVENT);
        /* the changed disk, then the removed partition */
        ASSERT_EQ(record_read_next(&r, &it), 1);
        ASSERT_EQ(it.type, RECORD_ITEM_DEVICE);
        ASSERT_STREQ(it.path, SDA);
        while (record_read_next(&r, &it) > 0 && it.type != RECORD_ITEM_GONE)
                ASSERT_TRUE(it.type != RECORD_ITEM_DEVICE && it.type != RECORD_ITEM_EVENT);
        ASSERT_STREQ(it.path, SDA1);
        ASSERT_EQ(record_read_next(&r, &it), 1);
        ASSERT_EQ(it.type, RECORD_ITEM_EVENT);
        ASSERT_EQ(it.seqnum, 8);
        ASSERT_EQ(record_read_next(&r, &it), 1);
        ASSERT_EQ(it.type, RECORD_ITEM_END);
        /* the removed device was forgotten: a new add writes it again */
        ASSERT_TRUE(hashmap_get(&s.last, SDA1, strlen(SDA1)) == NULL);
        ASSERT_TRUE(hashmap_get(&s.last, SDA, strlen(SDA)) != NULL);
        record_reader_done(&r);
        fclose(f);
        free(buf);
        record_sysfs_done(&s);
        uevent_free(add);
        uevent_free(rm);
        fixture_teardown(&fx);
}

/* A directory with more entries than a snapshot holds: the first ones in
 * name order are kept, the rest counted; the file stays readable. */
static void test_sysfs_entries_cap(void)
{
        struct sysfs_fixture fx;
        struct record_sysfs s;
        struct record_writer w;
        struct record_reader r;
        struct record_item it;
        char *buf = NULL, name[32];
        size_t len = 0;
        unsigned files = 0;
        int k;
        FILE *f;
        struct uevent *u = FX_UEVENT("change@/devices/virtual/test/1234\0ACTION=change\0"
                                     "DEVPATH=/devices/virtual/test/1234\0SUBSYSTEM=test\0"
                                     "SEQNUM=3");

        fixture_setup(&fx);
        for (int i = 0; i < RECORD_ENTRIES_MAX + 9; i++) {
                snprintf(name, sizeof(name), "a%05d", i);
                fx_attr(&fx, "/devices/virtual/test/1234", name, "v\n");
        }
        record_sysfs_init(&s, fx.sys);
        f = open_memstream(&buf, &len);
        ASSERT_EQ(record_writer_begin(&w, f), 0);
        ASSERT_EQ(record_sysfs_event(&s, &w, u), 0);
        ASSERT_EQ(record_writer_end(&w), 0);
        fclose(f);
        /* "subsystem" and "uevent" first, then 1022 of the 1033 files */
        ASSERT_EQ(s.entries_skipped, 11);
        f = fmemopen(buf, len, "r");
        ASSERT_EQ(record_reader_begin(&r, f, "cap"), 0);
        while ((k = record_read_next(&r, &it)) > 0) {
                if (it.type != RECORD_ITEM_FILE && it.type != RECORD_ITEM_LINK)
                        continue;
                files++;
                if (files == 1)
                        ASSERT_STREQ(it.path, "subsystem");
                if (files == 2)
                        ASSERT_STREQ(it.path, "uevent");
                if (files == RECORD_ENTRIES_MAX)
                        ASSERT_STREQ(it.path, "a01021");
        }
        ASSERT_EQ(k, 0);
        ASSERT_EQ(files, RECORD_ENTRIES_MAX);
        record_reader_done(&r);
        fclose(f);
        free(buf);
        record_sysfs_done(&s);
        uevent_free(u);
        fixture_teardown(&fx);
}

int main(void)
{
        log_set_max_level(LOG_WARNING);
        TEST_RUN(test_round_trip);
        TEST_RUN(test_every_truncation);
        TEST_RUN(test_corrupt);
        TEST_RUN(test_caps_on_write);
        TEST_RUN(test_sysfs_snapshots);
        TEST_RUN(test_sysfs_entries_cap);
        return 0;
}
