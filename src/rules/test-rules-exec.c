/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (single-threaded test) */
/* Unit tests of the rules evaluator (rules-exec.c) and the per-event
 * pipeline (event-exec.c): rules compiled with rules_load_string() run
 * against events of the fake sysfs tree (device/test-sysfs-fixture.h).
 * Programs go through a fake spawner (below) except in test_spawn_direct. */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "builtins/builtin.h"
#include "device/db.h"
#include "device/device.h"
#include "device/test-sysfs-fixture.h"
#include "rules/event-exec.h"
#include "rules/rules-exec.h"
#include "event/event-format.h"
#include "rules/rules.h"
#include "event/udev-event.h"
#include "shared/fileio.h"
#include "shared/log.h"
#include "shared/tests.h"
#include "shared/time-util.h"

static struct sysfs_fixture fx;
static bool keep_db; /* the next event sees the DB as the previous one left it */

/* ---- fake spawner: "echo WORDS" prints them, "fail" exits 1, "print X"
 * prints X with \n, \t escapes decoded, "env KEY" prints KEY's value from the
 * environment; every command is recorded. ---- */

static char spawned[16][256];
static unsigned n_spawned;

static int fake_spawn(void *userdata, const char *cmd, char *const envp[], bool is_run,
                      uint64_t deadline_usec, char *out, size_t out_size, bool *truncated)
{
        char buf[4096] = "";

        if (n_spawned < 16)
                snprintf(spawned[n_spawned++], sizeof(spawned[0]), "%s%s", is_run ? "run:" : "",
                         cmd);
        if (strncmp(cmd, "echo ", 5) == 0) {
                snprintf(buf, sizeof(buf), "%s\n", cmd + 5);
        } else if (strncmp(cmd, "print ", 6) == 0) {
                size_t o = 0;
                for (const char *p = cmd + 6; *p && o + 1 < sizeof(buf); p++) {
                        if (p[0] == '\\' && p[1] == 'n') {
                                buf[o++] = '\n';
                                p++;
                        } else if (p[0] == '\\' && p[1] == 't') {
                                buf[o++] = '\t';
                                p++;
                        } else {
                                buf[o++] = *p;
                        }
                }
                buf[o] = '\0';
        } else if (strncmp(cmd, "env ", 4) == 0) {
                size_t kl = strlen(cmd + 4);
                for (char *const *e = envp; *e; e++)
                        if (strncmp(*e, cmd + 4, kl) == 0 && (*e)[kl] == '=')
                                snprintf(buf, sizeof(buf), "%s\n", *e + kl + 1);
        } else if (streq(cmd, "fail")) {
                return 1;
        }
        if (out && out_size) {
                snprintf(out, out_size, "%s", buf);
                if (truncated)
                        *truncated = strlen(buf) >= out_size;
        }
        return 0;
}

/* ---- one event ---- */

struct tev {
        struct rules *rules;
        struct uevent *uevent;
        struct device_ctx *ctx;
        struct udev_event ev;
        struct db_record old;
        int r;
};

static void tev_free(struct tev *t)
{
        udev_event_done(&t->ev);
        db_record_clear(&t->old);
        device_ctx_free(t->ctx);
        uevent_free(t->uevent);
        rules_unref(t->rules);
        memset(t, 0, sizeof(*t));
}

/* The fixture's DB record of sda, restored before every event. */
static void reset_db(void)
{
        static const char rec[] = "S:disk/by-id/usb-SanDisk_Cruzer\nI:1000\n"
                                  "E:ID_FS_TYPE=vfat\nE:ID_SERIAL=SanDisk_1\nG:systemd\n"
                                  "Q:systemd\nV:1\n";
        char p[PATH_MAX];
        int fd;

        snprintf(p, sizeof(p), "%s/data/b8:0", fx.run);
        fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(write(fd, rec, sizeof(rec) - 1), (ssize_t)(sizeof(rec) - 1));
        close(fd);
}

/* Adjusts each event before it runs (NULL: nothing). */
static void (*tev_hook)(struct udev_event *ev);

/* Compile `text`, build the event from the kernel datagram, run the rules
 * (only the rules, or the whole pipeline with `execute`). */
static void tev_run(struct tev *t, const char *text, const char *dgram, size_t len, bool execute)
{
        struct device *dev = NULL;

        memset(t, 0, sizeof(*t));
        n_spawned = 0;
        if (!keep_db)
                reset_db();
        ASSERT_EQ(rules_load_string("/test/10-test.rules", text, strlen(text), NULL, &t->rules), 0);
        t->uevent = fx_uevent(dgram, len);
        ASSERT_EQ(device_ctx_new(&fx.roots, &t->ctx), 0);
        ASSERT_EQ(device_from_uevent(t->ctx, t->uevent, &dev), 0);
        ASSERT_EQ(udev_event_init(&t->ev, t->ctx, dev, t->uevent, t->uevent->action), 0);
        if (t->uevent->id[0])
                (void)db_read(fx.run, t->uevent->id, &t->old);
        t->ev.old_db = &t->old;
        t->ev.spawner = (struct udev_spawner){ .spawn = fake_spawn };
        t->ev.start_usec = now_usec(CLOCK_MONOTONIC);
        t->ev.timeout_usec = 10 * USEC_PER_SEC;
        if (tev_hook)
                tev_hook(&t->ev);
        t->r = execute ? udev_event_execute(&t->ev, t->rules) : rules_apply(t->rules, &t->ev);
}

#define DG(lit) (lit), sizeof(lit)
#define SDA_ADD                                                                            \
        DG("add@" SDA "\0ACTION=add\0DEVPATH=" SDA "\0SUBSYSTEM=block\0MAJOR=8\0MINOR=0\0" \
           "DEVNAME=sda\0DEVTYPE=disk\0DISKSEQ=9\0SEQNUM=10")
#define SDA_REMOVE                                                                         \
        DG("remove@" SDA "\0ACTION=remove\0DEVPATH=" SDA "\0SUBSYSTEM=block\0MAJOR=8\0"    \
           "MINOR=0\0DEVNAME=sda\0DEVTYPE=disk\0DISKSEQ=9\0SEQNUM=11")
#define SDA1_ADD                                                                           \
        DG("add@" SDA1 "\0ACTION=add\0DEVPATH=" SDA1 "\0SUBSYSTEM=block\0MAJOR=8\0"        \
           "MINOR=1\0DEVNAME=sda1\0DEVTYPE=partition\0DISKSEQ=9\0PARTN=1\0SEQNUM=12")
#define ETH0_ADD                                                                           \
        DG("add@" ETH0 "\0ACTION=add\0DEVPATH=" ETH0 "\0SUBSYSTEM=net\0INTERFACE=eth0\0"   \
           "IFINDEX=2\0SEQNUM=13")
#define USB1_ADD /* no DRIVER= in the uevent: read lazily */                               \
        DG("add@" USB1 "\0ACTION=add\0DEVPATH=" USB1 "\0SUBSYSTEM=usb\0MAJOR=189\0"        \
           "MINOR=0\0DEVNAME=bus/usb/001/001\0DEVTYPE=usb_device\0SEQNUM=14")
#define USB1_REMOVE                                                                        \
        DG("remove@" USB1 "\0ACTION=remove\0DEVPATH=" USB1 "\0SUBSYSTEM=usb\0MAJOR=189\0"  \
           "MINOR=0\0DEVNAME=bus/usb/001/001\0DEVTYPE=usb_device\0SEQNUM=15")

static const char *prop(struct tev *t, const char *key)
{
        return proplist_get(&t->ev.props, key);
}

static bool has_link(struct tev *t, const char *link)
{
        return strlist_contains(&t->ev.devlinks, link);
}

/* ---- tests ---- */

static void test_line_mask_and_lazy_driver(void)
{
        struct tev t;

        /* A line whose only effect is SYMLINK is not even evaluated on
         * remove: its DRIVER== match does not read the driver. */
        tev_run(&t, "DRIVER==\"usb\", SYMLINK+=\"x\"\n", USB1_REMOVE, false);
        ASSERT_EQ(t.r, 0);
        ASSERT_TRUE(prop(&t, "DRIVER") == NULL);
        tev_free(&t);
        /* On add it is, and the lazily read driver becomes a property. */
        tev_run(&t, "DRIVER==\"usb\", SYMLINK+=\"x\"\n", USB1_ADD, false);
        ASSERT_STREQ(prop(&t, "DRIVER"), "usb");
        ASSERT_TRUE(has_link(&t, "/dev/x"));
        tev_free(&t);
        /* NAME= lines are skipped for devices without ifindex */
        tev_run(&t, "KERNEL==\"sda\", NAME=\"foo\"\n", SDA_ADD, false);
        ASSERT_TRUE(t.ev.name == NULL);
        tev_free(&t);
        /* SYMLINK on a device without devnum: skipped */
        tev_run(&t, "SYMLINK+=\"net-link\", ENV{A}=\"1\"\n", ETH0_ADD, false);
        ASSERT_EQ(t.ev.devlinks.n, 0);
        ASSERT_STREQ(prop(&t, "A"), "1");
        tev_free(&t);
}

static void test_order_and_first_failure(void)
{
        struct tev t;

        /* ENV is applied before SYMLINK of the same line; RESULT after PROGRAM */
        tev_run(&t,
                "ENV{X}=\"a\", SYMLINK+=\"$env{X}\"\n"
                "RESULT==\"hi\", PROGRAM=\"echo hi\", ENV{R}=\"1\"\n"
                "KERNEL==\"nope\", PROGRAM=\"echo never\"\n"
                "PROGRAM=\"echo two\", KERNEL==\"nope\", ENV{N}=\"1\"\n",
                SDA_ADD, false);
        ASSERT_EQ(t.r, 0);
        ASSERT_TRUE(has_link(&t, "/dev/a"));
        ASSERT_STREQ(prop(&t, "R"), "1");
        ASSERT_TRUE(prop(&t, "N") == NULL);
        /* the failing KERNEL== stopped both lines before their PROGRAM */
        ASSERT_EQ(n_spawned, 1);
        ASSERT_STREQ(spawned[0], "echo hi");
        tev_free(&t);
}

static void test_string_escape_per_line(void)
{
        struct tev t;

        tev_run(&t,
                "OPTIONS+=\"string_escape=replace\", ENV{A}=\"a/b c\"\n"
                "ENV{B}=\"a/b c\"\n"
                "ENV{C}=\"x y\", OPTIONS=\"string_escape=none\", SYMLINK+=\"$env{C}\"\n"
                "SYMLINK+=\"$env{C}\"\n",
                SDA_ADD, false);
        ASSERT_STREQ(prop(&t, "A"), "a_b_c");
        ASSERT_STREQ(prop(&t, "B"), "a/b c");
        /* none: the substituted "x y" splits into two links */
        ASSERT_TRUE(has_link(&t, "/dev/x"));
        ASSERT_TRUE(has_link(&t, "/dev/y"));
        /* unset (next line): whitespace in substituted parts becomes '_' */
        ASSERT_TRUE(has_link(&t, "/dev/x_y"));
        tev_free(&t);
}

static void test_parents(void)
{
        struct tev t;

        tev_run(&t,
                "KERNELS==\"0:0:0:0\", SUBSYSTEMS==\"scsi\", DRIVERS==\"sd\", "
                "ATTRS{vendor}==\"SanDisk\", ENV{M}=\"$attr{model}|%b|%d\"\n"
                "ENV{P}=\"%b\"\n"
                "KERNELS==\"sda\", SUBSYSTEMS==\"scsi\", ENV{BAD}=\"1\"\n"
                "ENV{Q}=\"[%b]\"\n"
                "KERNELS==\"1-1\", ATTRS{idVendor}==\"0781\", ENV{U}=\"%s{serial}\"\n",
                SDA_ADD, false);
        ASSERT_EQ(t.r, 0);
        ASSERT_STREQ(prop(&t, "M"), "Cruzer Blade|0:0:0:0|sd");
        /* the matched parent is remembered across lines ... */
        ASSERT_STREQ(prop(&t, "P"), "0:0:0:0");
        /* ... until a parent search fails: no single device had both */
        ASSERT_TRUE(prop(&t, "BAD") == NULL);
        ASSERT_STREQ(prop(&t, "Q"), "[]");
        ASSERT_STREQ(prop(&t, "U"), "4C530001");
        tev_free(&t);
        /* TAGS== tests the current tags of the parent from its DB record */
        tev_run(&t, "TAGS==\"systemd\", ENV{T}=\"%k\"\nTAGS==\"other\", ENV{T2}=\"1\"\n",
                SDA1_ADD, false);
        ASSERT_STREQ(prop(&t, "T"), "sda1");
        ASSERT_TRUE(prop(&t, "T2") == NULL);
        tev_free(&t);
}

static void test_goto(void)
{
        struct tev t;

        tev_run(&t,
                "KERNEL==\"sda\", GOTO=\"skip\"\n"
                "ENV{A}=\"1\"\n"
                "LABEL=\"skip\"\n"
                "ENV{B}=\"1\"\n"
                "KERNEL==\"nope\", GOTO=\"end\"\n"
                "ENV{C}=\"1\"\n"
                "LABEL=\"end\", ENV{D}=\"1\"\n",
                SDA_ADD, false);
        ASSERT_TRUE(prop(&t, "A") == NULL);
        ASSERT_STREQ(prop(&t, "B"), "1");
        ASSERT_STREQ(prop(&t, "C"), "1");
        ASSERT_STREQ(prop(&t, "D"), "1");
        tev_free(&t);
}

static void test_patterns_and_lists(void)
{
        struct tev t;

        tev_run(&t,
                "KERNEL==\"|sd[a-z]\", ENV{A}=\"1\"\n"
                "KERNEL==\"xx|sda\", ENV{B}=\"1\"\n"
                "KERNEL!=\"sd*\", ENV{C}=\"1\"\n"
                "ENV{NOPE}==\"|x\", ENV{D}=\"1\"\n"
                "ENV{DEVTYPE}==\"?*\", ENV{E}=\"1\"\n"
                "ENV{NOPE}!=\"?*\", ENV{F}=\"1\"\n"
                "SUBSYSTEM==\"subsystem\", ENV{G}=\"1\"\n"
                "SYMLINK+=\"disk/one disk/two\"\n"
                "SYMLINK==\"disk/t*\", ENV{H}=\"1\"\n"
                "SYMLINK!=\"disk/one\", ENV{I}=\"1\"\n"
                "TAG==\"\", ENV{J}=\"1\"\n"
                "TAG!=\"\", ENV{K}=\"1\"\n"
                "TAG+=\"t1\"\n"
                "TAG==\"t1\", ENV{L}=\"1\"\n"
                "TAG==\"systemd\", ENV{M}=\"1\"\n"
                /* "literal*" globs are prefix tests; anything else is fnmatch() */
                "KERNEL==\"sda*\", ENV{P1}=\"1\"\n"
                "KERNEL==\"x*|s*\", ENV{P2}=\"1\"\n"
                "KERNEL==\"sdab*\", ENV{P3}=\"1\"\n"
                "KERNEL==\"s\\d*\", ENV{P4}=\"1\"\n"
                "KERNEL==\"S*\", ENV{P5}=\"1\"\n"
                "KERNEL!=\"sd*\", ENV{P6}=\"1\"\n"
                "DEVPATH==\"/devices/*\", ENV{P7}=\"1\"\n"
                "KERNEL==\"sd*a\", ENV{P8}=\"1\"\n"
                "KERNEL==\"*\", ENV{P9}=\"1\"\n",
                SDA_ADD, true);
        ASSERT_EQ(t.r, 0);
        ASSERT_STREQ(prop(&t, "A"), "1");
        ASSERT_STREQ(prop(&t, "B"), "1");
        ASSERT_TRUE(prop(&t, "C") == NULL);
        ASSERT_STREQ(prop(&t, "D"), "1");
        ASSERT_STREQ(prop(&t, "E"), "1");
        ASSERT_STREQ(prop(&t, "F"), "1");
        ASSERT_TRUE(prop(&t, "G") == NULL);
        ASSERT_STREQ(prop(&t, "H"), "1");
        ASSERT_TRUE(prop(&t, "I") == NULL);
        ASSERT_TRUE(prop(&t, "J") == NULL);
        ASSERT_STREQ(prop(&t, "K"), "1");
        ASSERT_STREQ(prop(&t, "L"), "1");
        /* "systemd" is sticky (from the DB) but not current */
        ASSERT_TRUE(strlist_contains(&t.ev.tags, "systemd"));
        ASSERT_TRUE(prop(&t, "M") == NULL);
        ASSERT_STREQ(prop(&t, "P1"), "1");
        ASSERT_STREQ(prop(&t, "P2"), "1");
        ASSERT_TRUE(prop(&t, "P3") == NULL);
        ASSERT_STREQ(prop(&t, "P4"), "1"); /* "\\d" is a literal d for fnmatch() */
        ASSERT_TRUE(prop(&t, "P5") == NULL);
        ASSERT_TRUE(prop(&t, "P6") == NULL);
        ASSERT_STREQ(prop(&t, "P7"), "1");
        ASSERT_STREQ(prop(&t, "P8"), "1");
        ASSERT_STREQ(prop(&t, "P9"), "1");
        tev_free(&t);
}

static void test_attr_sysctl_test_const(void)
{
        struct tev t;
        char text[2048];

        snprintf(text, sizeof(text),
                 "ATTR{nonexistent}!=\"x\", ENV{A}=\"1\"\n"
                 "ATTR{size}==\"30031872\", ENV{B}=\"1\"\n"
                 "ATTR{size}!=\"1\", ENV{C}=\"1\"\n"
                 "ATTRS{model}==\"Cruzer Blade\", ENV{D}=\"1\"\n"
                 "ATTRS{model}==\"Cruzer Blade    \", ENV{E}=\"1\"\n"
                 "ATTRS{model}==\"Cruzer Blade \", ENV{F}=\"1\"\n"
                 "ATTR{[net/eth0]address}==\"52:54:*\", ENV{G}=\"1\"\n"
                 "ATTR{[net/nothere]address}!=\"x\", ENV{H}=\"1\"\n"
                 "SYSCTL{kernel.ostype}==\"Linux\", ENV{I}=\"1\"\n"
                 "SYSCTL{kernel/no_such_sysctl}==\"\", ENV{J}=\"1\"\n"
                 "TEST==\"size\", ENV{K}=\"1\"\n"
                 "TEST!=\"nothere\", ENV{L}=\"1\"\n"
                 "TEST{0200}==\"size\", ENV{M}=\"1\"\n"
                 "TEST{0001}==\"size\", ENV{N}=\"1\"\n"
                 "TEST==\"*/partition\", ENV{O}=\"1\"\n"
                 "TEST==\"[net/eth0]mtu\", ENV{P}=\"1\"\n"
                 "TEST==\"%s\", ENV{Q}=\"1\"\n"
                 "CONST{arch}==\"x86-64|arm64|x86|arm|ppc64-le|s390x|riscv64\", ENV{R}=\"1\"\n"
                 "CONST{virt}==\"?*\", ENV{S}=\"1\"\n",
                 fx.sys);
        tev_run(&t, text, SDA_ADD, false);
        ASSERT_EQ(t.r, 0);
        ASSERT_TRUE(prop(&t, "A") == NULL); /* unreadable: false for != too */
        ASSERT_STREQ(prop(&t, "B"), "1");
        ASSERT_STREQ(prop(&t, "C"), "1");
        ASSERT_STREQ(prop(&t, "D"), "1");
        ASSERT_STREQ(prop(&t, "E"), "1");
        ASSERT_TRUE(prop(&t, "F") == NULL);
        ASSERT_STREQ(prop(&t, "G"), "1");
        ASSERT_TRUE(prop(&t, "H") == NULL);
        ASSERT_STREQ(prop(&t, "I"), "1");
        ASSERT_STREQ(prop(&t, "J"), "1");
        ASSERT_STREQ(prop(&t, "K"), "1");
        ASSERT_STREQ(prop(&t, "L"), "1");
        ASSERT_STREQ(prop(&t, "M"), "1");
        ASSERT_TRUE(prop(&t, "N") == NULL);
        ASSERT_STREQ(prop(&t, "O"), "1");
        ASSERT_STREQ(prop(&t, "P"), "1");
        ASSERT_STREQ(prop(&t, "Q"), "1");
        ASSERT_STREQ(prop(&t, "R"), "1");
        ASSERT_STREQ(prop(&t, "S"), "1");
        tev_free(&t);
        /* a SYSCTL read error other than ENOENT aborts the event */
        tev_run(&t, "SYSCTL{kernel}==\"x\", ENV{A}=\"1\"\n", SDA_ADD, false);
        ASSERT_TRUE(t.r < 0);
        tev_free(&t);
}

static void test_program_import(void)
{
        struct tev t;
        char text[8192], path[PATH_MAX];
        int fd;

        snprintf(path, sizeof(path), "%s/import.txt", fx.root);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        ASSERT_TRUE(fd >= 0);
        ASSERT_TRUE(write(fd, "F1=one\n  F2 = \"two words\" \n#x\nbroken\nF3=\n", 41) == 41);
        close(fd);
        snprintf(text, sizeof(text),
                 "PROGRAM=\"print a\\tb*c\\n\\n\", ENV{R1}=\"%%c\"\n"
                 "PROGRAM=\"print one two three\", ENV{R2}=\"%%c{2}\", ENV{R3}=\"%%c{2+}\"\n"
                 "PROGRAM=\"fail\", ENV{R4}=\"1\"\n"
                 "PROGRAM!=\"fail\", ENV{R5}=\"[%%c]\"\n"
                 "IMPORT{program}=\"print P1=1\\nP2='q'\\n# c\\nbad line\\n\"\n"
                 "IMPORT{program}=\"env P1\", ENV{P3}=\"$result\"\n"
                 "IMPORT{file}=\"%s\"\n"
                 "IMPORT{file}=\"/nonexistent/file\", ENV{F4}=\"1\"\n"
                 "IMPORT{db}=\"ID_FS_TYPE\"\n"
                 "IMPORT{db}=\"NOT_IN_DB\", ENV{D2}=\"1\"\n",
                 path);
        tev_run(&t, text, SDA_ADD, false);
        ASSERT_EQ(t.r, 0);
        ASSERT_STREQ(prop(&t, "R1"), "a b_c");
        ASSERT_STREQ(prop(&t, "R2"), "two");
        ASSERT_STREQ(prop(&t, "R3"), "two three");
        ASSERT_TRUE(prop(&t, "R4") == NULL);
        ASSERT_STREQ(prop(&t, "R5"), "[]"); /* a failed PROGRAM clears RESULT */
        ASSERT_STREQ(prop(&t, "P1"), "1");
        ASSERT_STREQ(prop(&t, "P2"), "q");
        ASSERT_TRUE(prop(&t, "bad line") == NULL);
        ASSERT_STREQ(prop(&t, "F1"), "one");
        ASSERT_STREQ(prop(&t, "F2"), "two words");
        ASSERT_TRUE(prop(&t, "F3") == NULL);
        ASSERT_TRUE(prop(&t, "F4") == NULL);
        ASSERT_STREQ(prop(&t, "ID_FS_TYPE"), "vfat");
        ASSERT_TRUE(prop(&t, "D2") == NULL);
        /* programs see the properties set so far in their environment */
        ASSERT_STREQ(spawned[5], "env P1");
        tev_free(&t);

        /* IMPORT{parent}: the parent's uevent and DB properties by glob */
        tev_run(&t, "IMPORT{parent}=\"ID_*\"\nIMPORT{parent}=\"DISKSEQ\"\n", SDA1_ADD, false);
        ASSERT_STREQ(prop(&t, "ID_FS_TYPE"), "vfat");
        ASSERT_STREQ(prop(&t, "ID_SERIAL"), "SanDisk_1");
        ASSERT_STREQ(prop(&t, "DISKSEQ"), "9");
        tev_free(&t);
}

/* IMPORT{file} from hostile files: NUL and CR end lines as in systemd's
 * read_line(); a line over 1 MiB stops the import (the lines before stay);
 * a FIFO without writer, a directory and /dev/zero are not read at all. */
static void test_import_file_hostile(void)
{
        char text[6 * PATH_MAX], good[PATH_MAX], big[PATH_MAX], fifo[PATH_MAX], dir[PATH_MAX];
        static char line[2 * 1024 * 1024];
        struct tev t;
        int fd;

        snprintf(good, sizeof(good), "%s/import-nul.txt", fx.root);
        fd = open(good, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        ASSERT_TRUE(fd >= 0);
        ASSERT_TRUE(write(fd, "H1=1\0H2=2\rH3=3\n\0\0H4=\001x\n", 24) == 24);
        close(fd);
        snprintf(big, sizeof(big), "%s/import-big.txt", fx.root);
        fd = open(big, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        ASSERT_TRUE(fd >= 0);
        memset(line, 'y', sizeof(line));
        memcpy(line, "B1=1\nB2=", 8);
        ASSERT_TRUE(write(fd, line, sizeof(line)) == (ssize_t)sizeof(line));
        ASSERT_TRUE(write(fd, "\nB3=3\n", 6) == 6);
        close(fd);
        snprintf(fifo, sizeof(fifo), "%s/import.fifo", fx.root);
        unlink(fifo);
        ASSERT_EQ(mkfifo(fifo, 0600), 0);
        snprintf(dir, sizeof(dir), "%s/import.dir", fx.root);
        (void)mkdir(dir, 0755);
        snprintf(text, sizeof(text),
                 "IMPORT{file}=\"%s\", ENV{HG}=\"1\"\n"
                 "IMPORT{file}=\"%s\", ENV{HB}=\"1\"\n"
                 "IMPORT{file}!=\"%s\", ENV{HB_FAILED}=\"1\"\n"
                 "IMPORT{file}=\"%s\", ENV{HF}=\"1\"\n"
                 "IMPORT{file}=\"%s\", ENV{HD}=\"1\"\n"
                 "IMPORT{file}=\"/dev/zero\", ENV{HZ}=\"1\"\n"
                 "ENV{HDONE}=\"1\"\n",
                 good, big, big, fifo, dir);
        tev_run(&t, text, SDA_ADD, false);
        ASSERT_EQ(t.r, 0);
        ASSERT_STREQ(prop(&t, "H1"), "1");
        ASSERT_STREQ(prop(&t, "H2"), "2");
        ASSERT_STREQ(prop(&t, "H3"), "3");
        ASSERT_STREQ(prop(&t, "H4"), "\001x");
        ASSERT_STREQ(prop(&t, "HG"), "1");
        ASSERT_STREQ(prop(&t, "B1"), "1");
        ASSERT_TRUE(prop(&t, "B2") == NULL);
        ASSERT_TRUE(prop(&t, "B3") == NULL);
        ASSERT_TRUE(prop(&t, "HB") == NULL);
        ASSERT_STREQ(prop(&t, "HB_FAILED"), "1");
        ASSERT_TRUE(prop(&t, "HF") == NULL);
        ASSERT_TRUE(prop(&t, "HD") == NULL);
        ASSERT_TRUE(prop(&t, "HZ") == NULL);
        ASSERT_STREQ(prop(&t, "HDONE"), "1");
        tev_free(&t);
        unlink(fifo);
}

static void test_import_cmdline(void)
{
        _cleanup_free_ char *cmdline = NULL;
        char key[128], text[512];
        size_t len;
        struct tev t;

        /* use the first word of the real /proc/cmdline */
        ASSERT_EQ(read_file_bounded("/proc/cmdline", 65536, &cmdline, &len), 0);
        size_t kl = strcspn(cmdline, "= \n");
        if (kl == 0 || kl >= sizeof(key))
                return;
        memcpy(key, cmdline, kl);
        key[kl] = '\0';
        snprintf(text, sizeof(text),
                 "IMPORT{cmdline}=\"%s\", ENV{FOUND}=\"1\"\n"
                 "IMPORT{cmdline}=\"no_such_option_xyz\", ENV{NF}=\"1\"\n",
                 key);
        tev_run(&t, text, SDA_ADD, false);
        ASSERT_STREQ(prop(&t, "FOUND"), "1");
        ASSERT_TRUE(prop(&t, key) != NULL);
        ASSERT_TRUE(prop(&t, "NF") == NULL);
        tev_free(&t);
}

static void test_builtins_run_once(void)
{
        struct tev t;

        /* path_id runs once per event: the second IMPORT gets the remembered
         * result, whatever it was */
        tev_run(&t,
                "IMPORT{builtin}=\"path_id\", ENV{A}=\"1\"\n"
                "IMPORT{builtin}=\"path_id\", ENV{B}=\"1\"\n"
                "IMPORT{builtin}!=\"path_id\", ENV{C}=\"1\"\n"
                "RUN{builtin}+=\"kmod load %k\"\n",
                SDA_ADD, false);
        ASSERT_EQ(prop(&t, "A") != NULL, prop(&t, "B") != NULL);
        ASSERT_EQ(prop(&t, "A") != NULL, prop(&t, "C") == NULL);
        ASSERT_EQ(t.ev.builtin_ran, UINT64_C(1) << BUILTIN_PATH_ID);
        ASSERT_EQ(t.ev.n_run, 1);
        ASSERT_TRUE(t.ev.run[0].builtin);
        ASSERT_STREQ(t.ev.run[0].cmd, "kmod load sda");
        tev_free(&t);
}

static void test_assign_finality_env_tags(void)
{
        struct tev t;

        tev_run(&t,
                "SYMLINK:=\"first\", OWNER:=\"1\", GROUP=\"2\", MODE:=\"0640\"\n"
                "SYMLINK+=\"second\", OWNER=\"3\", GROUP=\"4\", MODE=\"0600\"\n"
                "ENV{A}=\"1\", ENV{A}+=\"2\", ENV{B}+=\"x\", ENV{C}=\"c\"\n"
                "ENV{C}=\"\", ENV{.HIDDEN}=\"h\", ENV{E}=\"$env{NOPE}\"\n"
                "TAG+=\"a\", TAG+=\"b\", TAG+=\"bad tag\"\n"
                "TAG-=\"a\"\n"
                "RUN+=\"/bin/one %k\", RUN+=\"/bin/one %k\"\n"
                "RUN:=\"/bin/two $devpath\"\n"
                "RUN+=\"/bin/three\"\n"
                "SECLABEL{selinux}=\"x_t\", SECLABEL{smack}+=\"s\"\n"
                "OPTIONS+=\"link_priority=-7\", OPTIONS+=\"db_persist\", OPTIONS:=\"nowatch\"\n"
                "OPTIONS+=\"watch\"\n",
                SDA_ADD, false);
        ASSERT_EQ(t.r, 0);
        ASSERT_EQ(t.ev.devlinks.n, 1);
        ASSERT_TRUE(has_link(&t, "/dev/first"));
        ASSERT_TRUE(t.ev.uid_set && t.ev.uid == 1);
        ASSERT_TRUE(t.ev.gid_set && t.ev.gid == 4);
        ASSERT_TRUE(t.ev.mode_set && t.ev.mode == 0640);
        ASSERT_STREQ(prop(&t, "A"), "1 2");
        ASSERT_STREQ(prop(&t, "B"), "x");
        ASSERT_TRUE(prop(&t, "C") == NULL);
        ASSERT_STREQ(prop(&t, ".HIDDEN"), "h");
        ASSERT_STREQ(prop(&t, "E"), "");
        ASSERT_EQ(t.ev.tags.n, 2);
        ASSERT_TRUE(strlist_contains(&t.ev.tags, "a"));
        ASSERT_TRUE(!strlist_contains(&t.ev.current_tags, "a"));
        ASSERT_TRUE(strlist_contains(&t.ev.current_tags, "b"));
        ASSERT_EQ(t.ev.n_run, 1);
        ASSERT_STREQ(t.ev.run[0].cmd, "/bin/two " SDA);
        ASSERT_EQ(t.ev.seclabels.n, 2);
        ASSERT_EQ(t.ev.link_priority, -7);
        ASSERT_TRUE(t.ev.db_persist);
        ASSERT_TRUE(!t.ev.inotify_watch);
        tev_free(&t);

        /* TAG= clears both sets, sticky ones from the DB included; RUN keeps
         * duplicates in order */
        tev_run(&t, "TAG=\"only\"\nRUN+=\"/bin/x\", RUN+=\"/bin/x\"\n", SDA_ADD, true);
        ASSERT_EQ(t.ev.tags.n, 1);
        ASSERT_STREQ(t.ev.tags.items[0], "only");
        ASSERT_EQ(t.ev.n_run, 2);
        tev_free(&t);
}

static void test_owner_group_names(void)
{
        struct tev t;

        tev_run(&t,
                "ENV{U}=\"root\", ENV{G}=\"nosuchgroup_xyz\"\n"
                "OWNER=\"$env{U}\", GROUP=\"$env{G}\", MODE=\"0%s{removable}60\"\n",
                SDA_ADD, false);
        ASSERT_TRUE(t.ev.uid_set && t.ev.uid == 0);
        ASSERT_TRUE(!t.ev.gid_set);
        ASSERT_TRUE(t.ev.mode_set && t.ev.mode == 0160);
        tev_free(&t);
}

/* Values known only after substitution meet the compiler's parser
 * (rules-perm.h), as in systemd: a blank before the mode is fine, "0o",
 * a sign or a trailing blank are not; an id with a leading zero, 65535 or a
 * sign is no number but a name (unknown), a number need not be known. */
static void test_owner_group_mode_substituted(void)
{
        static const struct {
                const char *mode, *owner, *group;
                bool mode_set, uid_set, gid_set;
                unsigned mode_v, uid, gid;
        } cases[] = {
                { " 0660", "1000", "3999999999", true, true, true, 0660, 1000, 3999999999u },
                { "660", "root", "0", true, true, true, 0660, 0, 0 },
                { "0o660", "0123", "65535", false, false, false, 0, 0, 0 },
                { "+660", "+1", " 1", false, false, false, 0, 0, 0 },
                { "0660 ", "4294967295", "00", false, false, false, 0, 0, 0 },
                { "12345", "1 ", "", false, false, false, 0, 0, 0 },
        };

        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                char rules[512];
                struct tev t;

                snprintf(rules, sizeof(rules),
                         "ENV{M}=\"%s\", ENV{U}=\"%s\", ENV{G}=\"%s\"\n"
                         "OWNER=\"$env{U}\", GROUP=\"$env{G}\", MODE=\"$env{M}\"\n",
                         cases[i].mode, cases[i].owner, cases[i].group);
                tev_run(&t, rules, SDA_ADD, false);
                if (t.ev.mode_set != cases[i].mode_set || t.ev.uid_set != cases[i].uid_set ||
                    t.ev.gid_set != cases[i].gid_set)
                        fprintf(stderr, "case %zu\n", i);
                ASSERT_EQ(t.ev.mode_set, cases[i].mode_set);
                ASSERT_EQ(t.ev.uid_set, cases[i].uid_set);
                ASSERT_EQ(t.ev.gid_set, cases[i].gid_set);
                if (cases[i].mode_set)
                        ASSERT_EQ(t.ev.mode, cases[i].mode_v);
                if (cases[i].uid_set)
                        ASSERT_EQ(t.ev.uid, cases[i].uid);
                if (cases[i].gid_set)
                        ASSERT_EQ(t.ev.gid, cases[i].gid);
                tev_free(&t);
        }
}

static void test_name_and_symlink_validation(void)
{
        struct tev t;

        tev_run(&t, "NAME=\"new:name/x\"\n", ETH0_ADD, false);
        ASSERT_STREQ(t.ev.name, "new_name_x");
        tev_free(&t);
        tev_run(&t, "OPTIONS=\"string_escape=none\", NAME=\"raw:name\"\nNAME==\"raw:*\", ENV{N}=\"1\"\n",
                ETH0_ADD, false);
        ASSERT_STREQ(t.ev.name, "raw:name");
        ASSERT_STREQ(prop(&t, "N"), "1");
        tev_free(&t);

        tev_run(&t,
                "SYMLINK+=\"/dev/abs ../bad a/../b /etc/no good//x/./y/ spaced\tname\"\n"
                "SYMLINK+=\"sub/$attr{[block/sda]removable} dup dup\"\n"
                "OPTIONS=\"string_escape=replace\", SYMLINK+=\"r e*p\"\n",
                SDA_ADD, false);
        ASSERT_TRUE(has_link(&t, "/dev/abs"));
        ASSERT_TRUE(has_link(&t, "/dev/good/x/y"));
        ASSERT_TRUE(has_link(&t, "/dev/spaced"));
        ASSERT_TRUE(has_link(&t, "/dev/name"));
        ASSERT_TRUE(has_link(&t, "/dev/sub/1"));
        ASSERT_TRUE(has_link(&t, "/dev/dup"));
        ASSERT_TRUE(has_link(&t, "/dev/r_e_p"));
        ASSERT_EQ(t.ev.devlinks.n, 7);
        tev_free(&t);
}

static void test_attr_write_and_dry_run(void)
{
        struct tev t;
        char p[PATH_MAX];
        _cleanup_free_ char *v = NULL;
        size_t len;

        fx_attr(&fx, SDA, "writable", "old\n");
        tev_run(&t, "ATTR{writable}=\"new %k\"\n", SDA_ADD, false);
        snprintf(p, sizeof(p), "%s%s/writable", fx.sys, SDA);
        ASSERT_EQ(read_file_bounded(p, 100, &v, &len), 0);
        ASSERT_STREQ(v, "new sda");
        tev_free(&t);
        free(v);
        v = NULL;

        /* dry run: ATTR and SYSCTL are not written */
        memset(&t, 0, sizeof(t));
        n_spawned = 0;
        {
                static const char text[] = "ATTR{writable}=\"dry\"\n"
                                           "SYSCTL{kernel.hostname}=\"never-set\"\n";
                struct device *dev;
                ASSERT_EQ(rules_load_string("x", text, strlen(text), NULL, &t.rules), 0);
                t.uevent = fx_uevent(SDA_ADD);
                ASSERT_EQ(device_ctx_new(&fx.roots, &t.ctx), 0);
                ASSERT_EQ(device_from_uevent(t.ctx, t.uevent, &dev), 0);
                ASSERT_EQ(udev_event_init(&t.ev, t.ctx, dev, t.uevent, t.uevent->action), 0);
                t.ev.dry_run = true;
                ASSERT_EQ(rules_apply(t.rules, &t.ev), 0);
        }
        ASSERT_EQ(read_file_bounded(p, 100, &v, &len), 0);
        ASSERT_STREQ(v, "new sda");
        tev_free(&t);
}

static const char *read_rel(const char *base, const char *rel)
{
        static char buf[4096];
        char p[PATH_MAX];
        int fd;
        ssize_t n;

        snprintf(p, sizeof(p), "%s/%s", base, rel);
        fd = open(p, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return NULL;
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        buf[n < 0 ? 0 : n] = '\0';
        return buf;
}

static const char *link_of(const char *rel)
{
        static char buf[PATH_MAX];
        char p[PATH_MAX];
        ssize_t n;

        snprintf(p, sizeof(p), "%s/%s", fx.dev, rel);
        n = readlink(p, buf, sizeof(buf) - 1);
        if (n < 0)
                return NULL;
        buf[n] = '\0';
        return buf;
}

static void test_pipeline_add_remove(void)
{
        struct tev t;
        char p[PATH_MAX];
        struct stat st;

        tev_run(&t,
                "KERNEL==\"sda\", SYMLINK+=\"disk/by-test/one\", ENV{ID_NEW}=\"x\", "
                "ENV{.TMP}=\"t\", TAG+=\"seat\", OPTIONS+=\"link_priority=3\"\n",
                SDA_ADD, true);
        ASSERT_EQ(t.r, 0);
        /* DB: rule properties (no kernel, no hidden), links relative, tags */
        const char *db = read_rel(fx.run, "data/b8:0");
        ASSERT_TRUE(db != NULL);
        ASSERT_TRUE(strstr(db, "S:disk/by-test/one\n") != NULL);
        ASSERT_TRUE(strstr(db, "L:3\n") != NULL);
        ASSERT_TRUE(strstr(db, "I:1000\n") != NULL); /* kept from the old record */
        ASSERT_TRUE(strstr(db, "E:ID_NEW=x\n") != NULL);
        ASSERT_TRUE(strstr(db, "DEVNAME") == NULL);
        ASSERT_TRUE(strstr(db, ".TMP") == NULL);
        ASSERT_TRUE(strstr(db, "G:seat\n") != NULL);
        ASSERT_TRUE(strstr(db, "G:systemd\n") != NULL); /* sticky */
        ASSERT_TRUE(strstr(db, "Q:seat\n") != NULL);
        ASSERT_TRUE(strstr(db, "Q:systemd\n") == NULL);
        ASSERT_TRUE(strstr(db, "E:ID_FS_TYPE") == NULL); /* not inherited */
        snprintf(p, sizeof(p), "%s/tags/seat/b8:0", fx.run);
        ASSERT_EQ(stat(p, &st), 0);
        /* links: the new one, /dev/block, and the old DB link released */
        ASSERT_STREQ(link_of("disk/by-test/one"), "../../sda");
        ASSERT_STREQ(link_of("block/8:0"), "../sda");
        tev_free(&t);

        /* remove: the rules see the DB record; links and DB go away */
        keep_db = true;
        tev_run(&t,
                "ENV{ID_NEW}==\"x\", SYMLINK==\"disk/by-test/*\", TAG==\"seat\", "
                "ENV{SEEN}=\"1\", RUN+=\"/bin/cleanup\"\n"
                "SYMLINK+=\"never\"\n",
                SDA_REMOVE, true);
        ASSERT_EQ(t.r, 0);
        ASSERT_STREQ(prop(&t, "SEEN"), "1");
        ASSERT_EQ(t.ev.n_run, 1);
        ASSERT_TRUE(read_rel(fx.run, "data/b8:0") == NULL);
        ASSERT_EQ(stat(p, &st), -1);
        ASSERT_TRUE(link_of("disk/by-test/one") == NULL);
        ASSERT_TRUE(link_of("block/8:0") == NULL);
        ASSERT_TRUE(link_of("never") == NULL);
        tev_free(&t);
        keep_db = false;
}

static void test_static_nodes(void)
{
        static const char text[] =
                "KERNEL==\"never-matches\", GROUP=\"2\", MODE=\"0666\", "
                "OPTIONS+=\"static_node=kvm\", TAG+=\"uaccess\"\n"
                "OPTIONS+=\"static_node=net/tun\", TAG+=\"t1\", TAG+=\"t2\"\n"
                "OPTIONS+=\"static_node=snd/seq\", MODE=\"0600\"\n"
                "OPTIONS+=\"static_node=plain\", OWNER=\"3\"\n";
        struct rules *rules = NULL;
        char p[PATH_MAX], l[PATH_MAX];
        struct stat st;
        ssize_t n;

        if (geteuid() != 0) {
                fprintf(stderr, "(skipped: not root) ");
                return;
        }
        snprintf(p, sizeof(p), "%s/net", fx.dev);
        (void)mkdir(p, 0755);
        snprintf(p, sizeof(p), "%s/kvm", fx.dev);
        ASSERT_EQ(mknod(p, S_IFCHR | 0600, makedev(10, 232)), 0);
        snprintf(p, sizeof(p), "%s/net/tun", fx.dev);
        ASSERT_EQ(mknod(p, S_IFCHR | 0600, makedev(10, 200)), 0);
        snprintf(p, sizeof(p), "%s/plain", fx.dev);
        ASSERT_EQ(touch_file(p, 0644), 0); /* not a node: ignored */
        ASSERT_EQ(rules_load_string("static.rules", text, strlen(text), NULL, &rules), 0);
        ASSERT_EQ(rules_apply_static_nodes(rules, &fx.roots), 0);
        rules_unref(rules);

        snprintf(p, sizeof(p), "%s/kvm", fx.dev);
        ASSERT_EQ(stat(p, &st), 0);
        ASSERT_EQ(st.st_gid, 2);
        ASSERT_EQ(st.st_mode & 07777, 0666);
        snprintf(l, sizeof(l), "%s/static_node-tags/uaccess/kvm", fx.run);
        n = readlink(l, p, sizeof(p) - 1);
        ASSERT_TRUE(n > 0);
        p[n] = '\0';
        ASSERT_STREQ(p, "/dev/kvm");
        snprintf(l, sizeof(l), "%s/static_node-tags/t2/net\\x2ftun", fx.run);
        ASSERT_EQ(lstat(l, &st), 0);
        snprintf(p, sizeof(p), "%s/net/tun", fx.dev);
        ASSERT_EQ(stat(p, &st), 0);
        ASSERT_EQ(st.st_mode & 07777, 0600); /* tags only: permissions untouched */
        snprintf(p, sizeof(p), "%s/plain", fx.dev);
        ASSERT_EQ(stat(p, &st), 0);
        ASSERT_EQ(st.st_uid, 0);
}

static void test_spawn_direct(void)
{
        struct spawn_direct sd = { .timeout_signal = SIGKILL, .libexec_dir = "/bin" };
        char *envp[] = { "FOO=bar baz", NULL };
        char out[64];
        bool trunc;
        uint64_t t0;

        ASSERT_EQ(spawn_direct(&sd, "/bin/sh -c 'echo \"$FOO\"; echo err >&2'", envp, false,
                               UINT64_MAX, out, sizeof(out), &trunc), 0);
        ASSERT_STREQ(out, "bar baz\n");
        ASSERT_TRUE(!trunc);
        /* relative names are looked up in the libexec dir */
        ASSERT_EQ(spawn_direct(&sd, "echo hello", envp, false, UINT64_MAX, out, sizeof(out),
                               &trunc), 0);
        ASSERT_STREQ(out, "hello\n");
        ASSERT_EQ(spawn_direct(&sd, "/bin/sh -c 'exit 3'", envp, true, UINT64_MAX, NULL, 0,
                               NULL), 3);
        ASSERT_TRUE(spawn_direct(&sd, "/nonexistent/prog", envp, false, UINT64_MAX, out,
                                 sizeof(out), &trunc) < 0);
        ASSERT_EQ(spawn_direct(&sd, "/bin/sh -c 'yes | head -c 1000'", envp, false, UINT64_MAX,
                               out, sizeof(out), &trunc), 0);
        ASSERT_TRUE(trunc);
        ASSERT_EQ(strlen(out), sizeof(out) - 1);
        /* the environment is exactly envp */
        ASSERT_EQ(spawn_direct(&sd, "/usr/bin/env", envp, false, UINT64_MAX, out, sizeof(out),
                               &trunc), 0);
        ASSERT_STREQ(out, "FOO=bar baz\n");
        /* deadline: killed, -ETIME, quickly */
        t0 = now_usec(CLOCK_MONOTONIC);
        ASSERT_EQ(spawn_direct(&sd, "/bin/sleep 10", envp, false, t0 + 300 * USEC_PER_MSEC, out,
                               sizeof(out), &trunc), -ETIME);
        ASSERT_TRUE(now_usec(CLOCK_MONOTONIC) - t0 < 3 * USEC_PER_SEC);
        /* a background process keeping stdout open does not hold the caller
         * once the program itself has exited; its output so far is kept */
        t0 = now_usec(CLOCK_MONOTONIC);
        ASSERT_EQ(spawn_direct(&sd, "/bin/sh -c 'sleep 10 & echo hi'", envp, false, UINT64_MAX,
                               out, sizeof(out), &trunc), 0);
        ASSERT_STREQ(out, "hi\n");
        ASSERT_TRUE(now_usec(CLOCK_MONOTONIC) - t0 < 5 * USEC_PER_SEC);
        /* endless output: bounded (the drain limit, or EAGAIN on the
         * non-blocking pipe as with systemd-udevd), flagged truncated */
        t0 = now_usec(CLOCK_MONOTONIC);
        ASSERT_TRUE(spawn_direct(&sd, "/usr/bin/yes", envp, false, t0 + 20 * USEC_PER_SEC, out,
                                 sizeof(out), &trunc) > 0);
        ASSERT_TRUE(trunc);
        ASSERT_TRUE(now_usec(CLOCK_MONOTONIC) - t0 < 10 * USEC_PER_SEC);
        /* NUL bytes: the result ends at the first one */
        ASSERT_EQ(spawn_direct(&sd, "/usr/bin/printf 'a\\000b\\n'", envp, false, UINT64_MAX, out,
                               sizeof(out), &trunc), 0);
        ASSERT_STREQ(out, "a");
}

/* ---- udevadm replay's mode: the builtin gate, dry_run + offline ---- */

static unsigned gate_calls;
static char gate_cmds[2][64];

static int gate(void *userdata, int id, const char *cmd)
{
        if (gate_calls < ARRAY_SIZE(gate_cmds))
                snprintf(gate_cmds[gate_calls], sizeof(gate_cmds[0]), "%s", cmd);
        gate_calls++;
        return id == BUILTIN_PATH_ID ? 1 : -EOPNOTSUPP;
}

static void hook_offline(struct udev_event *ev)
{
        ev->spawner.builtin = gate;
        ev->dry_run = true;
        ev->offline = true;
}

static void hook_dry_run(struct udev_event *ev)
{
        ev->dry_run = true;
}

static void test_offline_builtin_gate_and_rename(void)
{
        char p[PATH_MAX];
        struct tev t;

        tev_hook = hook_offline;
        tev_run(&t,
                "IMPORT{builtin}==\"kmod load %k\", ENV{K}=\"1\"\n"
                "IMPORT{builtin}=\"path_id\"\n",
                SDA_ADD, true);
        ASSERT_EQ(t.r, 0);
        ASSERT_EQ(gate_calls, 2);
        ASSERT_STREQ(gate_cmds[0], "kmod load sda"); /* substituted, then refused */
        ASSERT_TRUE(prop(&t, "K") == NULL);
        ASSERT_STREQ(gate_cmds[1], "path_id");       /* let through: it ran */
        ASSERT_TRUE(prop(&t, "ID_PATH") != NULL);
        tev_free(&t);

        /* NAME= is taken as done: the event reads as after the rename, and
         * nothing is written (no renaming record, no interface asked) */
        tev_run(&t, "NAME=\"lan0\"\n", ETH0_ADD, true);
        ASSERT_EQ(t.r, 0);
        ASSERT_STREQ(prop(&t, "INTERFACE"), "lan0");
        ASSERT_STREQ(prop(&t, "INTERFACE_OLD"), "eth0");
        ASSERT_STREQ(prop(&t, "ID_RENAMING"), "1");
        ASSERT_STREQ(prop(&t, "DEVPATH"), PCI_NET "/net/lan0");
        snprintf(p, sizeof(p), "%s/data/n2", fx.run);
        ASSERT_EQ(access(p, F_OK), -1);
        tev_free(&t);
        /* without offline, dry_run only says it would rename */
        tev_hook = hook_dry_run;
        tev_run(&t, "NAME=\"lan0\"\n", ETH0_ADD, true);
        ASSERT_EQ(t.r, 0);
        ASSERT_STREQ(t.ev.name, "lan0");
        ASSERT_STREQ(prop(&t, "INTERFACE"), "eth0");
        ASSERT_TRUE(prop(&t, "ID_RENAMING") == NULL);
        tev_free(&t);
        tev_hook = NULL;
}

int main(void)
{
        log_set_max_level(getenv("TEST_DEBUG") ? LOG_DEBUG : LOG_WARNING);
        fixture_setup(&fx);
        TEST_RUN(test_line_mask_and_lazy_driver);
        TEST_RUN(test_offline_builtin_gate_and_rename);
        TEST_RUN(test_order_and_first_failure);
        TEST_RUN(test_string_escape_per_line);
        TEST_RUN(test_parents);
        TEST_RUN(test_goto);
        TEST_RUN(test_patterns_and_lists);
        TEST_RUN(test_attr_sysctl_test_const);
        TEST_RUN(test_program_import);
        TEST_RUN(test_import_file_hostile);
        TEST_RUN(test_import_cmdline);
        TEST_RUN(test_builtins_run_once);
        TEST_RUN(test_assign_finality_env_tags);
        TEST_RUN(test_owner_group_names);
        TEST_RUN(test_owner_group_mode_substituted);
        TEST_RUN(test_name_and_symlink_validation);
        TEST_RUN(test_attr_write_and_dry_run);
        TEST_RUN(test_pipeline_add_remove);
        TEST_RUN(test_static_nodes);
        TEST_RUN(test_spawn_direct);
        fixture_teardown(&fx);
        return 0;
}
