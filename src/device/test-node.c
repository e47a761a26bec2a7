/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (test; the concurrency test starts its own threads) */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "device/node.h"
#include "shared/fileio.h"
#include "shared/log.h"
#include "shared/tests.h"
#include "shared/thread-util.h"

static char root[256];
static char sys_root[512], dev_root[512], run_root[512];
static struct device_roots roots;

static int rm_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        return remove(path);
}

static void setup(void)
{
        if (root[0])
                nftw(root, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
        snprintf(root, sizeof(root), "/tmp/test-node.XXXXXX");
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

/* A fake device node: a regular file is enough for the link logic. */
static void fake_node(const char *name)
{
        char p[PATH_MAX];
        snprintf(p, sizeof(p), "%s/%s", dev_root, name);
        ASSERT_EQ(touch_file(p, 0644), 0);
}

static void remove_fake_node(const char *name)
{
        char p[PATH_MAX];
        snprintf(p, sizeof(p), "%s/%s", dev_root, name);
        ASSERT_EQ(unlink(p), 0);
}

/* Target of <dev>/link, or "" if none. */
static const char *link_target(const char *link)
{
        static char buf[PATH_MAX];
        char p[PATH_MAX];
        ssize_t n;

        snprintf(p, sizeof(p), "%s/%s", dev_root, link);
        n = readlink(p, buf, sizeof(buf) - 1);
        if (n < 0)
                return "";
        buf[n] = '\0';
        return buf;
}

static bool exists2(const char *dir, const char *name)
{
        char p[PATH_MAX];
        struct stat st;

        snprintf(p, sizeof(p), "%s%s", dir, name);
        return lstat(p, &st) == 0;
}

static void pause_ms(long ms)
{
        struct timespec ts = { .tv_sec = 0, .tv_nsec = ms * 1000000 };
        nanosleep(&ts, NULL);
}

#define DEV(_id, _node, _maj, _min, _prio)                                         \
        ((struct node_device){ .id = (_id), .devnode = (_node), .subsystem = "block", \
                               .devtype = "disk", .major = (_maj), .minor = (_min), \
                               .priority = (_prio) })

static void test_normalize(void)
{
        char out[NODE_PATH_MAX];

        ASSERT_EQ(node_link_normalize("disk/by-id/x", out, sizeof(out)), 0);
        ASSERT_STREQ(out, "/dev/disk/by-id/x");
        ASSERT_EQ(node_link_normalize("/dev/foo", out, sizeof(out)), 0);
        ASSERT_STREQ(out, "/dev/foo");
        ASSERT_EQ(node_link_normalize("a//b/./c/", out, sizeof(out)), 0);
        ASSERT_STREQ(out, "/dev/a/b/c");
        ASSERT_EQ(node_link_normalize("./c", out, sizeof(out)), 0);
        ASSERT_STREQ(out, "/dev/c");
        ASSERT_EQ(node_link_normalize("../x", out, sizeof(out)), -EINVAL);
        ASSERT_EQ(node_link_normalize("a/../b", out, sizeof(out)), -EINVAL);
        ASSERT_EQ(node_link_normalize("/etc/passwd", out, sizeof(out)), -EINVAL);
        ASSERT_EQ(node_link_normalize("/dev/", out, sizeof(out)), -EINVAL);
        ASSERT_EQ(node_link_normalize("/dev", out, sizeof(out)), -EINVAL);
        ASSERT_EQ(node_link_normalize("", out, sizeof(out)), -EINVAL);
        ASSERT_EQ(node_link_normalize("a..b", out, sizeof(out)), 0);
        ASSERT_STREQ(out, "/dev/a..b");
}

static void test_stack_dir_name(void)
{
        char name[NODE_STACK_NAME_MAX + 1], link[NODE_PATH_MAX] = "";
        char expect[NODE_STACK_NAME_MAX + 1] = "";

        ASSERT_EQ(node_stack_dir_name("/dev/disk/by-uuid/1234-ABCD", name, sizeof(name)), 0);
        ASSERT_STREQ(name, "disk\\x2fby-uuid\\x2f1234-ABCD");
        ASSERT_EQ(node_stack_dir_name("a\\b", name, sizeof(name)), 0);
        ASSERT_STREQ(name, "a\\x5cb");

        /* Long name: 244 bytes of escape + 11 hash characters (vector taken
         * from systemd 252's /run/udev/links for this very link). */
        for (int i = 0; i < 10; i++)
                strcat(link, "abcdefghijklmnopqrstuvwxyz0123/");
        strcat(link, "end");
        for (int i = 0; i < 7; i++)
                strcat(expect, "abcdefghijklmnopqrstuvwxyz0123\\x2f");
        strcat(expect, "abcdefB-tDd_5qN6a");
        ASSERT_EQ(node_stack_dir_name(link, name, sizeof(name)), 0);
        ASSERT_EQ(strlen(name), 255);
        ASSERT_STREQ(name, expect);
}

static void test_claim_and_relative(void)
{
        struct node_device a = DEV("b8:0", "/dev/sda", 8, 0, 0);
        char p[PATH_MAX];

        setup();
        fake_node("sda");
        ASSERT_EQ(node_link_update(&roots, &a, "/dev/disk/by-id/foo", true), 0);
        ASSERT_STREQ(link_target("disk/by-id/foo"), "../../sda");
        ASSERT_EQ(node_link_update(&roots, &a, "top", true), 0);
        ASSERT_STREQ(link_target("top"), "sda");
        /* the stack entry is "<prio>:<devnode>" */
        snprintf(p, sizeof(p), "%s/links/disk\\x2fby-id\\x2ffoo/b8:0", run_root);
        char buf[64];
        ssize_t n = readlink(p, buf, sizeof(buf) - 1);
        ASSERT_TRUE(n > 0);
        buf[n] = '\0';
        ASSERT_STREQ(buf, "0:/dev/sda");
        /* release: link and empty parents go, the stack dir stays (until cleanup) */
        ASSERT_EQ(node_link_update(&roots, &a, "/dev/disk/by-id/foo", false), 0);
        ASSERT_STREQ(link_target("disk/by-id/foo"), "");
        ASSERT_TRUE(!exists2(dev_root, "/disk"));
        teardown();
}

static void test_priorities(void)
{
        struct node_device a = DEV("b8:0", "/dev/sda", 8, 0, 0);
        struct node_device b = DEV("b8:16", "/dev/sdb", 8, 16, 10);

        setup();
        fake_node("sda");
        fake_node("sdb");
        ASSERT_EQ(node_link_update(&roots, &a, "l", true), 0);
        ASSERT_STREQ(link_target("l"), "sda");
        ASSERT_EQ(node_link_update(&roots, &b, "l", true), 0);
        ASSERT_STREQ(link_target("l"), "sdb");
        /* a lower priority does not take it back, even when processed last */
        ASSERT_EQ(node_link_update(&roots, &a, "l", true), 0);
        ASSERT_STREQ(link_target("l"), "sdb");
        /* the winner lowers its priority: full scan, tie -> stays with it */
        b.priority = 0;
        ASSERT_EQ(node_link_update(&roots, &b, "l", true), 0);
        ASSERT_STREQ(link_target("l"), "sdb");
        b.priority = -5;
        ASSERT_EQ(node_link_update(&roots, &b, "l", true), 0);
        ASSERT_STREQ(link_target("l"), "sda");
        /* release of the winner hands the link to the next best */
        a.priority = 3;
        b.priority = 1;
        ASSERT_EQ(node_link_update(&roots, &a, "l", true), 0);
        ASSERT_EQ(node_link_update(&roots, &b, "l", true), 0);
        ASSERT_STREQ(link_target("l"), "sda");
        ASSERT_EQ(node_link_update(&roots, &a, "l", false), 0);
        ASSERT_STREQ(link_target("l"), "sdb");
        /* release of a non-owner leaves the link alone */
        ASSERT_EQ(node_link_update(&roots, &a, "l", true), 0);
        ASSERT_STREQ(link_target("l"), "sda");
        ASSERT_EQ(node_link_update(&roots, &b, "l", false), 0);
        ASSERT_STREQ(link_target("l"), "sda");
        /* last one out removes the link */
        ASSERT_EQ(node_link_update(&roots, &a, "l", false), 0);
        ASSERT_STREQ(link_target("l"), "");
        teardown();
}

static void test_ties(void)
{
        struct node_device a = DEV("b8:0", "/dev/sda", 8, 0, 0);
        struct node_device b = DEV("b8:16", "/dev/sdb", 8, 16, 0);
        struct node_device c = DEV("b8:32", "/dev/sdc", 8, 32, 0);

        setup();
        fake_node("sda");
        fake_node("sdb");
        fake_node("sdc");
        /* ties go to the device processed last */
        ASSERT_EQ(node_link_update(&roots, &a, "t", true), 0);
        ASSERT_STREQ(link_target("t"), "sda");
        pause_ms(20);
        ASSERT_EQ(node_link_update(&roots, &b, "t", true), 0);
        ASSERT_STREQ(link_target("t"), "sdb");
        pause_ms(20);
        ASSERT_EQ(node_link_update(&roots, &c, "t", true), 0);
        ASSERT_STREQ(link_target("t"), "sdc");
        pause_ms(20);
        ASSERT_EQ(node_link_update(&roots, &a, "t", true), 0); /* change event of a */
        ASSERT_STREQ(link_target("t"), "sda");
        pause_ms(20);
        ASSERT_EQ(node_link_update(&roots, &c, "t", true), 0);
        ASSERT_STREQ(link_target("t"), "sdc");
        /* winner released: among equal priorities the most recently written wins */
        ASSERT_EQ(node_link_update(&roots, &c, "t", false), 0);
        ASSERT_STREQ(link_target("t"), "sdb");
        /* a candidate whose node vanished is skipped */
        remove_fake_node("sdb");
        ASSERT_EQ(node_link_update(&roots, &b, "t", false), 0);
        ASSERT_STREQ(link_target("t"), "sda");
        teardown();
}

static void test_conflicting_inode(void)
{
        struct node_device a = DEV("b8:0", "/dev/sda", 8, 0, 0);
        char p[PATH_MAX];
        struct stat st;

        setup();
        fake_node("sda");
        fake_node("busy");
        ASSERT_EQ(node_link_update(&roots, &a, "busy", true), -EEXIST);
        snprintf(p, sizeof(p), "%s/busy", dev_root);
        ASSERT_EQ(lstat(p, &st), 0);
        ASSERT_TRUE(S_ISREG(st.st_mode));
        /* a directory is not replaced either */
        snprintf(p, sizeof(p), "%s/dir", dev_root);
        ASSERT_EQ(mkdir(p, 0755), 0);
        ASSERT_EQ(node_link_update(&roots, &a, "dir", true), -EEXIST);
        /* releasing the refused links leaves the file and the directory alone
         * (systemd 252 unlinks whatever is there) */
        ASSERT_EQ(node_link_update(&roots, &a, "busy", false), 0);
        ASSERT_EQ(node_link_update(&roots, &a, "dir", false), 0);
        snprintf(p, sizeof(p), "%s/busy", dev_root);
        ASSERT_EQ(lstat(p, &st), 0);
        ASSERT_TRUE(S_ISREG(st.st_mode));
        snprintf(p, sizeof(p), "%s/dir", dev_root);
        ASSERT_EQ(lstat(p, &st), 0);
        ASSERT_TRUE(S_ISDIR(st.st_mode));
        /* nor does the removal of the device: a file at /dev/block/M:m stays */
        snprintf(p, sizeof(p), "%s/block", dev_root);
        ASSERT_EQ(mkdir(p, 0755), 0);
        snprintf(p, sizeof(p), "%s/block/8:0", dev_root);
        ASSERT_EQ(mknod(p, S_IFREG | 0644, 0), 0);
        ASSERT_EQ(node_remove(&roots, &a, NULL), 0);
        ASSERT_EQ(lstat(p, &st), 0);
        ASSERT_TRUE(S_ISREG(st.st_mode));
        /* invalid names are refused before touching anything */
        ASSERT_EQ(node_link_update(&roots, &a, "../escape", true), -EINVAL);
        ASSERT_EQ(node_link_update(&roots, &a, "/etc/x", true), -EINVAL);
        ASSERT_TRUE(!exists2(dev_root, "/../escape"));
        teardown();
}

static void test_diskseq(void)
{
        struct node_device disk = DEV("b8:0", "/dev/sda", 8, 0, 0);
        struct node_device part = DEV("b8:1", "/dev/sda1", 8, 1, 0);
        char p[PATH_MAX];

        disk.diskseq = "9";
        part.diskseq = "9";
        part.devtype = "partition";
        part.sysnum = "1";
        setup();
        fake_node("sda");
        fake_node("sda1");
        ASSERT_EQ(node_link_update(&roots, &disk, "disk/by-diskseq/9", true), 0);
        ASSERT_STREQ(link_target("disk/by-diskseq/9"), "../../sda");
        ASSERT_EQ(node_link_update(&roots, &part, "disk/by-diskseq/9-part1", true), 0);
        ASSERT_STREQ(link_target("disk/by-diskseq/9-part1"), "../../sda1");
        /* no stack directories for them */
        snprintf(p, sizeof(p), "%s/links/disk\\x2fby-diskseq\\x2f9", run_root);
        ASSERT_TRUE(!exists2(p, ""));
        /* a mismatching number goes through the stack as usual */
        ASSERT_EQ(node_link_update(&roots, &disk, "disk/by-diskseq/10", true), 0);
        snprintf(p, sizeof(p), "%s/links/disk\\x2fby-diskseq\\x2f10", run_root);
        ASSERT_TRUE(exists2(p, ""));
        /* release: just unlinked */
        ASSERT_EQ(node_link_update(&roots, &part, "disk/by-diskseq/9-part1", false), 0);
        ASSERT_STREQ(link_target("disk/by-diskseq/9-part1"), "");
        ASSERT_STREQ(link_target("disk/by-diskseq/9"), "../../sda");
        teardown();
}

static void test_update_and_remove(void)
{
        struct node_device a = DEV("b8:0", "/dev/sda", 8, 0, 0);
        struct strlist old = {}, new = {};

        setup();
        fake_node("sda");
        strlist_add(&old, "disk/by-label/old"); /* DB form: relative */
        strlist_add(&old, "disk/by-id/keep");
        ASSERT_EQ(node_update(&roots, &a, NULL, &old), 0);
        ASSERT_STREQ(link_target("disk/by-label/old"), "../../sda");
        ASSERT_STREQ(link_target("block/8:0"), "../sda");
        strlist_add(&new, "/dev/disk/by-id/keep");
        strlist_add(&new, "/dev/disk/by-label/new");
        /* an existing link with the right target is left alone (same inode) */
        char kp[PATH_MAX];
        struct stat st1, st2;
        snprintf(kp, sizeof(kp), "%s/disk/by-id/keep", dev_root);
        ASSERT_EQ(lstat(kp, &st1), 0);
        ASSERT_EQ(node_update(&roots, &a, &old, &new), 0);
        ASSERT_EQ(lstat(kp, &st2), 0);
        ASSERT_EQ(st1.st_ino, st2.st_ino);
        ASSERT_STREQ(link_target("disk/by-label/old"), "");
        ASSERT_STREQ(link_target("disk/by-label/new"), "../../sda");
        ASSERT_STREQ(link_target("disk/by-id/keep"), "../../sda");
        /* char devices get /dev/char */
        struct node_device t = { .id = "c4:1", .devnode = "/dev/tty1", .subsystem = "tty",
                                 .major = 4, .minor = 1 };
        fake_node("tty1");
        ASSERT_EQ(node_update(&roots, &t, NULL, NULL), 0);
        ASSERT_STREQ(link_target("char/4:1"), "../tty1");

        ASSERT_EQ(node_remove(&roots, &a, &new), 0);
        ASSERT_STREQ(link_target("disk/by-id/keep"), "");
        ASSERT_STREQ(link_target("block/8:0"), "");
        ASSERT_TRUE(!exists2(dev_root, "/disk"));

        /* cleanup: .lock files and empty stack dirs go */
        char p[PATH_MAX];
        snprintf(p, sizeof(p), "%s/links", run_root);
        ASSERT_TRUE(exists2(p, "/disk\\x2fby-id\\x2fkeep/.lock"));
        ASSERT_EQ(node_update(&roots, &a, NULL, &new), 0); /* keep one entry alive */
        ASSERT_EQ(node_cleanup_stack_dirs(&roots), 0);
        ASSERT_TRUE(exists2(p, "/disk\\x2fby-id\\x2fkeep/b8:0"));
        ASSERT_TRUE(!exists2(p, "/disk\\x2fby-id\\x2fkeep/.lock"));
        ASSERT_TRUE(!exists2(p, "/disk\\x2fby-label\\x2fold"));
        strlist_clear(&old);
        strlist_clear(&new);
        teardown();
}

static void test_permissions(void)
{
        struct node_device d = { .id = "c1:3", .devnode = "/dev/mynull", .subsystem = "mem",
                                 .major = 1, .minor = 3 };
        struct node_perms p = { .uid = 1, .uid_set = true, .gid = 2, .gid_set = true };
        char path[PATH_MAX];
        struct stat st;

        if (geteuid() != 0) {
                fprintf(stderr, "(skipped: not root) ");
                return;
        }
        setup();
        /* missing node: skipped */
        ASSERT_EQ(node_apply_permissions(&roots, &d, &p, true), 0);
        ASSERT_EQ(node_create_devnode(&roots, &d, 0600, 0, 0), 0);
        ASSERT_EQ(node_create_devnode(&roots, &d, 0600, 0, 0), 1);
        snprintf(path, sizeof(path), "%s/mynull", dev_root);
        ASSERT_EQ(stat(path, &st), 0);
        ASSERT_TRUE(S_ISCHR(st.st_mode));
        ASSERT_EQ(st.st_mode & 07777, 0600);
        /* GROUP without MODE: 0660 */
        ASSERT_EQ(node_apply_permissions(&roots, &d, &p, true), 0);
        ASSERT_EQ(stat(path, &st), 0);
        ASSERT_EQ(st.st_uid, 1);
        ASSERT_EQ(st.st_gid, 2);
        ASSERT_EQ(st.st_mode & 07777, 0660);
        p.mode = 0604;
        p.mode_set = true;
        ASSERT_EQ(node_apply_permissions(&roots, &d, &p, false), 0);
        ASSERT_EQ(stat(path, &st), 0);
        ASSERT_EQ(st.st_mode & 07777, 0604);
        /* nothing to change: only the timestamps are touched */
        struct timespec old_times[2] = { { .tv_sec = 1000 }, { .tv_sec = 1000 } };
        ASSERT_EQ(utimensat(AT_FDCWD, path, old_times, 0), 0);
        ASSERT_EQ(node_apply_permissions(&roots, &d, &p, false), 0);
        ASSERT_EQ(stat(path, &st), 0);
        ASSERT_EQ(st.st_mode & 07777, 0604);
        ASSERT_TRUE(st.st_mtim.tv_sec > 1000 && st.st_atim.tv_sec > 1000);
        /* a node of another device is left alone, timestamps included */
        struct node_device other = d;
        other.minor = 5;
        p.mode = 0666;
        ASSERT_EQ(utimensat(AT_FDCWD, path, old_times, 0), 0);
        ASSERT_EQ(node_apply_permissions(&roots, &other, &p, true), 0);
        ASSERT_EQ(node_apply_permissions(&roots, &other, &p, false), 0);
        p.mode = 0604;
        ASSERT_EQ(node_apply_permissions(&roots, &other, &p, false), 0);
        p.mode = 0666;
        ASSERT_EQ(stat(path, &st), 0);
        ASSERT_EQ(st.st_mode & 07777, 0604);
        ASSERT_EQ(st.st_mtim.tv_sec, 1000);
        ASSERT_EQ(node_remove_devnode(&roots, &other), 0);
        ASSERT_EQ(stat(path, &st), 0);
        ASSERT_EQ(node_remove_devnode(&roots, &d), 0);
        ASSERT_TRUE(stat(path, &st) < 0);
        teardown();
}

/* The node's security attribute `name` into buf ("" when absent). */
static void get_label(const char *path, const char *name, char *buf, size_t size)
{
        ssize_t n = getxattr(path, name, buf, size - 1);

        if (n < 0) {
                ASSERT_EQ(errno, ENODATA);
                n = 0;
        }
        buf[n] = '\0';
}

static void test_seclabels(void)
{
        struct node_device d = { .id = "b7:9", .devnode = "/dev/lbl", .subsystem = "block",
                                 .major = 7, .minor = 9 };
        struct node_mac mac;
        struct strlist labels = {};
        struct node_perms p = { .seclabels = &labels, .mac = &mac };
        char path[PATH_MAX], dir[PATH_MAX + 16], buf[256];
        ssize_t n;

        if (geteuid() != 0) {
                fprintf(stderr, "(skipped: not root) ");
                return;
        }
        setup();
        /* detection: nothing under <sys>/fs */
        node_mac_detect(sys_root, &mac);
        ASSERT_TRUE(!mac.selinux);
        ASSERT_TRUE(!mac.smack);
        /* a smackfs directory means SMACK; a plain directory is no selinuxfs */
        snprintf(dir, sizeof(dir), "%s/fs/smackfs", sys_root);
        ASSERT_EQ(mkdir_p(dir, 0755), 0);
        snprintf(dir, sizeof(dir), "%s/fs/selinux", sys_root);
        ASSERT_EQ(mkdir_p(dir, 0755), 0);
        node_mac_detect(sys_root, &mac);
        ASSERT_TRUE(!mac.selinux);
        ASSERT_TRUE(mac.smack);

        ASSERT_EQ(node_create_devnode(&roots, &d, 0600, 0, 0), 0);
        snprintf(path, sizeof(path), "%s/lbl", dev_root);
        ASSERT_EQ(strlist_add(&labels, "smack=System::Shared"), 0);
        ASSERT_EQ(strlist_add(&labels, "selinux=system_u:object_r:fixed_disk_device_t:s0"), 0);
        ASSERT_EQ(strlist_add(&labels, "apparmor=x"), 0); /* unknown: logged */
        /* not an add and nothing to change: no labels */
        ASSERT_EQ(node_apply_permissions(&roots, &d, &p, false), 0);
        get_label(path, "security.SMACK64", buf, sizeof(buf));
        ASSERT_STREQ(buf, "");
        /* add: SMACK64 without a NUL; SELinux not active, so no context */
        ASSERT_EQ(node_apply_permissions(&roots, &d, &p, true), 0);
        n = getxattr(path, "security.SMACK64", buf, sizeof(buf));
        ASSERT_EQ(n, (ssize_t)strlen("System::Shared"));
        ASSERT_EQ(memcmp(buf, "System::Shared", (size_t)n), 0);
        get_label(path, "security.selinux", buf, sizeof(buf));
        ASSERT_STREQ(buf, "");
        /* with SELinux active the context is stored with its NUL */
        mac.selinux = true;
        ASSERT_EQ(node_apply_permissions(&roots, &d, &p, true), 0);
        n = getxattr(path, "security.selinux", buf, sizeof(buf));
        ASSERT_EQ(n, (ssize_t)sizeof("system_u:object_r:fixed_disk_device_t:s0"));
        ASSERT_STREQ(buf, "system_u:object_r:fixed_disk_device_t:s0");
        /* a mode change applies them too; without a smack label SMACK64 goes */
        strlist_clear(&labels);
        ASSERT_EQ(strlist_add(&labels, "selinux=other_t"), 0);
        p.mode = 0640;
        p.mode_set = true;
        ASSERT_EQ(node_apply_permissions(&roots, &d, &p, false), 0);
        get_label(path, "security.SMACK64", buf, sizeof(buf));
        ASSERT_STREQ(buf, "");
        get_label(path, "security.selinux", buf, sizeof(buf));
        ASSERT_STREQ(buf, "other_t");
        /* no module active: the node keeps what it has */
        mac = (struct node_mac){};
        strlist_clear(&labels);
        ASSERT_EQ(strlist_add(&labels, "selinux=third_t"), 0);
        ASSERT_EQ(node_apply_permissions(&roots, &d, &p, true), 0);
        get_label(path, "security.selinux", buf, sizeof(buf));
        ASSERT_STREQ(buf, "other_t");
        /* no mac at all (NULL) is the same */
        p.mac = NULL;
        ASSERT_EQ(node_apply_permissions(&roots, &d, &p, true), 0);
        get_label(path, "security.selinux", buf, sizeof(buf));
        ASSERT_STREQ(buf, "other_t");
        strlist_clear(&labels);
        teardown();
}

/* Many threads claim and release one link; whatever the interleaving, the
 * link ends at the highest-priority device still claiming it. */
struct racer {
        struct node_device d;
        char id[16], node[32];
        int rounds;
};

static void *racer_main(void *arg)
{
        struct racer *r = arg;

        for (int i = 0; i < r->rounds; i++) {
                ASSERT_EQ(node_link_update(&roots, &r->d, "race/link", true), 0);
                ASSERT_EQ(node_link_update(&roots, &r->d, "race/link", false), 0);
        }
        ASSERT_EQ(node_link_update(&roots, &r->d, "race/link", true), 0);
        return NULL;
}

static void test_concurrency(void)
{
        enum { N = 6 };
        struct racer rc[N];
        pthread_t t[N];

        setup();
        for (int i = 0; i < N; i++) {
                snprintf(rc[i].id, sizeof(rc[i].id), "b7:%d", i);
                snprintf(rc[i].node, sizeof(rc[i].node), "/dev/loop%d", i);
                fake_node(rc[i].node + 5);
                rc[i].d = DEV(rc[i].id, rc[i].node, 7, (unsigned)i, i == 3 ? 50 : i);
                rc[i].rounds = 30;
        }
        for (int i = 0; i < N; i++)
                ASSERT_EQ(thread_start(&t[i], racer_main, &rc[i]), 0);
        for (int i = 0; i < N; i++)
                pthread_join(t[i], NULL);
        ASSERT_STREQ(link_target("race/link"), "../loop3");
        teardown();
}

int main(void)
{
        log_set_max_level(getenv("TEST_DEBUG") ? LOG_DEBUG : LOG_WARNING);
        TEST_RUN(test_normalize);
        TEST_RUN(test_stack_dir_name);
        TEST_RUN(test_claim_and_relative);
        TEST_RUN(test_priorities);
        TEST_RUN(test_ties);
        TEST_RUN(test_conflicting_inode);
        TEST_RUN(test_diskseq);
        TEST_RUN(test_update_and_remove);
        TEST_RUN(test_permissions);
        TEST_RUN(test_seclabels);
        TEST_RUN(test_concurrency);
        return 0;
}
