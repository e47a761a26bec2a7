/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (one replay_tree per thread; udevadm is single-threaded) */
/* The replay's private sysfs tree (replay-tree.h). */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/fileio.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "udevadm/replay-tree.h"

int replay_tree_new(struct replay_tree *t)
{
        const char *tmp = getenv("TMPDIR");

        memset(t, 0, sizeof(*t));
        if (!tmp || tmp[0] != '/')
                tmp = "/tmp";
        if (snprintf(t->root, sizeof(t->root), "%s/tudev-replay-XXXXXX", tmp) >=
            (int)sizeof(t->root) - 8)
                return -ENAMETOOLONG;
        if (!mkdtemp(t->root)) {
                t->root[0] = '\0';
                return negative_errno();
        }
        snprintf(t->sys, sizeof(t->sys), "%s/sys", t->root);
        snprintf(t->run, sizeof(t->run), "%s/run", t->root);
        if (mkdir(t->sys, 0755) < 0 || mkdir(t->run, 0755) < 0)
                return negative_errno();
        t->roots = (struct device_roots){ .sys = t->sys, .dev = "/dev", .run = t->run };
        return 0;
}

static int rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
        (void)st;
        (void)ftw;
        if (type == FTW_DP)
                return rmdir(path) < 0 && errno != ENOENT ? -1 : 0;
        return unlink(path) < 0 && errno != ENOENT ? -1 : 0;
}

static int rm_rf(const char *path)
{
        struct stat st;

        if (lstat(path, &st) < 0)
                return errno == ENOENT ? 0 : negative_errno();
        if (!S_ISDIR(st.st_mode))
                return unlink(path) < 0 ? negative_errno() : 0;
        return nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS) < 0 ? negative_errno() : 0;
}

void replay_tree_remove(struct replay_tree *t)
{
        if (t->root[0] && rm_rf(t->root) < 0)
                log_warning_errno(errno, "Failed to remove %s: %m", t->root);
        t->root[0] = '\0';
}

/* "<sys><rel>" ("/devices/x" or "devices/x"). */
static int sys_path(const struct replay_tree *t, const char *rel, char *buf, size_t size)
{
        if (snprintf(buf, size, "%s/%s", t->sys, rel[0] == '/' ? rel + 1 : rel) >= (int)size)
                return -ENAMETOOLONG;
        return 0;
}

/* A symlink at <sys>/<link_rel> pointing at <sys>/<target_rel>, relative,
 * replacing whatever was there. */
static int make_link(const struct replay_tree *t, const char *link_rel, const char *target_rel)
{
        char p[PATH_MAX], target[PATH_MAX] = "";
        size_t o = 0;
        int r;

        if (link_rel[0] == '/')
                link_rel++;
        if (target_rel[0] == '/')
                target_rel++;
        for (const char *s = link_rel; *s; s++)
                if (*s == '/') {
                        if (o + 4 > sizeof(target))
                                return -ENAMETOOLONG;
                        memcpy(target + o, "../", 4);
                        o += 3;
                }
        if (snprintf(target + o, sizeof(target) - o, "%s", target_rel) >= (int)(sizeof(target) - o))
                return -ENAMETOOLONG;
        r = sys_path(t, link_rel, p, sizeof(p));
        if (r < 0)
                return r;
        r = mkdir_parents(p, 0755);
        if (r < 0)
                return r;
        (void)unlink(p);
        if (symlink(target, p) < 0)
                return negative_errno();
        return 0;
}

/* Remove the files and links of a directory (not its subdirectories). */
static void clear_files(int dfd)
{
        DIR *d = opendir_dup(dfd);
        struct dirent *de;

        if (!d)
                return;
        while ((de = readdir(d))) {
                struct stat st;
                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || S_ISDIR(st.st_mode))
                        continue;
                (void)unlinkat(dfd, de->d_name, 0);
        }
        closedir(d);
}

/* A new snapshot of `devpath`: the directory made, its old files gone. */
static int device_begin(struct replay_tree *t, const char *devpath)
{
        char p[PATH_MAX];
        _cleanup_close_ int dfd = -1;
        struct dirent *de;
        DIR *d;
        int r;

        r = sys_path(t, devpath, p, sizeof(p));
        if (r < 0)
                return r;
        r = mkdir_p(p, 0755);
        if (r < 0)
                return r;
        dfd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return negative_errno();
        clear_files(dfd);
        d = opendir_dup(dfd);
        if (!d)
                return negative_errno();
        while ((de = readdir(d))) {
                int sfd;
                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                sfd = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
                if (sfd < 0)
                        continue;
                if (faccessat(sfd, "uevent", F_OK, AT_SYMLINK_NOFOLLOW) < 0)
                        clear_files(sfd); /* an attribute group, not a child device */
                close(sfd);
        }
        closedir(d);
        snprintf(t->cur, sizeof(t->cur), "%s", devpath);
        t->cur_subsystem[0] = t->cur_dev[0] = '\0';
        return 0;
}

/* The completed snapshot's registrations. */
static int device_end(struct replay_tree *t)
{
        const char *sysname, *subsys = NULL;
        char rel[PATH_MAX];
        int r = 0;

        if (!t->cur[0])
                return 0;
        sysname = strrchr(t->cur, '/') + 1;
        if (t->cur_subsystem[0]) {
                subsys = strrchr(t->cur_subsystem, '/') + 1;
                if (strneq(t->cur_subsystem, "/bus/", 5))
                        snprintf(rel, sizeof(rel), "%s/devices/%s", t->cur_subsystem, sysname);
                else
                        snprintf(rel, sizeof(rel), "%s/%s", t->cur_subsystem, sysname);
                r = make_link(t, rel, t->cur);
        }
        if (r >= 0 && t->cur_dev[0]) {
                snprintf(rel, sizeof(rel), "/dev/%s/%s",
                         subsys && streq(subsys, "block") ? "block" : "char", t->cur_dev);
                r = make_link(t, rel, t->cur);
        }
        t->cur[0] = '\0';
        return r;
}

/* The path of attribute `name` of the current device; -ELOOP when its
 * first component is not a plain directory. */
static int attr_path(struct replay_tree *t, const char *name, char *buf, size_t size)
{
        const char *slash = strchr(name, '/');
        char dir[PATH_MAX];
        struct stat st;
        int r;

        if (!t->cur[0])
                return -EINVAL;
        if (snprintf(dir, sizeof(dir), "%s/%.*s", t->cur, slash ? (int)(slash - name) : 0,
                     name) >= (int)sizeof(dir))
                return -ENAMETOOLONG;
        if (slash) {
                char p[PATH_MAX];
                r = sys_path(t, dir, p, sizeof(p));
                if (r < 0)
                        return r;
                if (lstat(p, &st) == 0) {
                        if (!S_ISDIR(st.st_mode))
                                return -ELOOP;
                } else if (mkdir(p, 0755) < 0)
                        return negative_errno();
        }
        if (snprintf(dir, sizeof(dir), "%s/%s", t->cur, name) >= (int)sizeof(dir))
                return -ENAMETOOLONG;
        return sys_path(t, dir, buf, size);
}

/* MAJOR= and MINOR= of a uevent file, for a device without a "dev" file. */
static void devnum_from_uevent(struct replay_tree *t, const char *data)
{
        unsigned long v[2] = {};
        bool seen[2] = {};

        for (const char *l = data; *l; l += strcspn(l, "\n"), l += *l == '\n') {
                int k = strneq(l, "MAJOR=", 6) ? 0 : strneq(l, "MINOR=", 6) ? 1 : -1;
                char *end;
                if (k < 0 || l[6] < '0' || l[6] > '9')
                        continue;
                v[k] = strtoul(l + 6, &end, 10);
                seen[k] = *end == '\n' || *end == '\0';
        }
        if (seen[0] && seen[1] && v[0] > 0 && v[0] <= UINT32_MAX && v[1] <= UINT32_MAX)
                snprintf(t->cur_dev, sizeof(t->cur_dev), "%lu:%lu", v[0], v[1]);
}

static int write_attr(struct replay_tree *t, const char *name, const void *data, size_t len,
                      mode_t mode)
{
        char p[PATH_MAX];
        _cleanup_close_ int fd = -1;
        int r = attr_path(t, name, p, sizeof(p));

        if (r < 0)
                return r;
        (void)unlink(p);
        fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        if (fd < 0)
                return negative_errno();
        if (len > 0 && write(fd, data, len) != (ssize_t)len)
                return -EIO;
        if (fchmod(fd, mode) < 0)
                return negative_errno();
        if (streq(name, "dev")) {
                size_t n = strcspn(data, "\n");
                if (n > 0 && n < sizeof(t->cur_dev) && n == strspn(data, "0123456789:"))
                        snprintf(t->cur_dev, sizeof(t->cur_dev), "%.*s", (int)n,
                                 (const char *)data);
        } else if (streq(name, "uevent") && !t->cur_dev[0])
                devnum_from_uevent(t, data);
        return 0;
}

int replay_tree_apply(struct replay_tree *t, const struct record_item *it)
{
        char p[PATH_MAX], rel[PATH_MAX];
        int r;

        switch (it->type) {
        case RECORD_ITEM_FILE:
                return write_attr(t, it->path, it->data, it->len, 0644);
        case RECORD_ITEM_UNREADABLE:
                return write_attr(t, it->path, "", 0, 0200);
        case RECORD_ITEM_LINK:
                if (!t->cur[0])
                        return -EINVAL;
                if (streq(it->path, "subsystem"))
                        snprintf(t->cur_subsystem, sizeof(t->cur_subsystem), "%s", it->target);
                snprintf(rel, sizeof(rel), "%s/%s", t->cur, it->path);
                return make_link(t, rel, it->target);
        default:
                break;
        }
        r = device_end(t);
        if (r < 0)
                return r;
        if (it->type == RECORD_ITEM_DEVICE)
                return device_begin(t, it->path);
        if (it->type == RECORD_ITEM_GONE) {
                r = sys_path(t, it->path, p, sizeof(p));
                return r < 0 ? r : rm_rf(p);
        }
        return 0;
}
