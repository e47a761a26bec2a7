/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: manager */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "device/db.h"
#include "proto/uevent.h"
#include "shared/fileio.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "shared/time-util.h"
#include "udevd/event-queue.h"
#include "udevd/known-devices.h"
#include "udevd/resync.h"
#include "udevd/run-repair.h"

#define SYSFS_WALK_DEPTH_MAX 48 /* /sys/devices nesting followed */
#define SYSFS_ATTR_MAX 64       /* bytes of "dev" / "ifindex" read */
#define MATCH_ALTERNATIVES_MAX 16
#define DEVPATH_MAX 4096

struct resync {
        const struct resync_params *p;
        struct resync_result *res;
        struct sysfs_presence *pres;
        struct strlist readd; /* DEVPATHs that need an "add" after a synthesized remove */
        struct strlist alternatives; /* the '|'-separated globs of p->match */
};

static void closedirp(DIR **d)
{
        if (*d)
                closedir(*d);
}

static bool devpath_matches(const struct resync *rs, const char *devpath)
{
        if (!rs->p->match)
                return true;
        for (size_t i = 0; i < rs->alternatives.n; i++)
                if (fnmatch(rs->alternatives.items[i], devpath, 0) == 0)
                        return true;
        return false;
}

static int split_match(const char *match, struct strlist *out)
{
        for (const char *p = match; p && *p;) {
                size_t n = strcspn(p, "|");
                if (n > 0) {
                        char buf[DEVPATH_MAX];
                        if (n >= sizeof(buf) || out->n >= MATCH_ALTERNATIVES_MAX)
                                return -E2BIG;
                        memcpy(buf, p, n);
                        buf[n] = '\0';
                        if (strlist_add(out, buf) < 0)
                                return -ENOMEM;
                }
                p += n;
                if (*p == '|')
                        p++;
        }
        return 0;
}

/* ---- records of vanished devices ---- */

enum known_state { KNOWN_PRESENT, KNOWN_GONE, KNOWN_REPLACED };

/* Is the device udevd knows still there, under the same DEVPATH? For a
 * device number now held by another device, its DEVPATH goes to `current`. */
static enum known_state known_presence(const struct resync *rs, const struct known_device *kd,
                                       char *current, size_t size)
{
        const char *sys = rs->p->roots->sys;
        char path[PATH_MAX], real[PATH_MAX];
        size_t sl = strlen(sys);

        /* The DEVPATH itself exists: present, whatever the id says. */
        if ((size_t)snprintf(path, sizeof(path), "%s%s", sys, kd->devpath) >= sizeof(path) ||
            access(path, F_OK) >= 0 || errno != ENOENT)
                return KNOWN_PRESENT;
        if (kd->id[0] == 'n')
                return sysfs_presence_of_id(rs->pres, kd->id) == PRESENCE_GONE ? KNOWN_GONE
                                                                               : KNOWN_PRESENT;
        if (kd->id[0] == 'b' || kd->id[0] == 'c') {
                enum presence pr = sysfs_presence_of_id(rs->pres, kd->id);
                if (pr != PRESENCE_PRESENT)
                        return pr == PRESENCE_GONE ? KNOWN_GONE : KNOWN_PRESENT;
                snprintf(path, sizeof(path), "%s/dev/%s/%u:%u", sys,
                         kd->id[0] == 'b' ? "block" : "char", kd->major, kd->minor);
                if (!realpath(path, real) || strncmp(real, sys, sl) != 0 ||
                    streq(real + sl, kd->devpath))
                        return KNOWN_PRESENT;
                snprintf(current, size, "%s", real + sl);
                return KNOWN_REPLACED;
        }
        return KNOWN_GONE;
}

/* Append "KEY=VALUE\0" to buf; false if it does not fit. */
static bool put_prop(char *buf, size_t size, size_t *len, const char *key, const char *value)
{
        int n = snprintf(buf + *len, size - *len, "%s=%s", key, value);

        if (n < 0 || (size_t)n + 1 > size - *len)
                return false;
        *len += (size_t)n + 1;
        return true;
}

/* The kernel-format datagram of a "remove" of `kd`, parsed into a record. */
static int synthesize_remove(const struct known_device *kd, uint64_t seqnum, struct uevent **ret)
{
        static char buf[UEVENT_BUFFER_MAX];
        char num[32];
        size_t len = 0;
        bool ok;
        int n;

        n = snprintf(buf, sizeof(buf), "remove@%s", kd->devpath);
        if (n < 0 || (size_t)n + 1 > sizeof(buf))
                return -E2BIG;
        len = (size_t)n + 1;
        ok = put_prop(buf, sizeof(buf), &len, "ACTION", "remove") &&
             put_prop(buf, sizeof(buf), &len, "DEVPATH", kd->devpath) &&
             put_prop(buf, sizeof(buf), &len, "SUBSYSTEM", kd->subsystem);
        if (ok && kd->devtype)
                ok = put_prop(buf, sizeof(buf), &len, "DEVTYPE", kd->devtype);
        if (ok && kd->major > 0) {
                snprintf(num, sizeof(num), "%u", kd->major);
                ok = put_prop(buf, sizeof(buf), &len, "MAJOR", num);
                snprintf(num, sizeof(num), "%u", kd->minor);
                ok = ok && put_prop(buf, sizeof(buf), &len, "MINOR", num);
        }
        if (ok && kd->devnode && strneq(kd->devnode, "/dev/", 5))
                ok = put_prop(buf, sizeof(buf), &len, "DEVNAME", kd->devnode + 5);
        if (ok && kd->ifindex > 0) {
                const char *slash = strrchr(kd->devpath, '/');
                snprintf(num, sizeof(num), "%d", kd->ifindex);
                ok = put_prop(buf, sizeof(buf), &len, "INTERFACE", slash + 1) &&
                     put_prop(buf, sizeof(buf), &len, "IFINDEX", num);
        }
        snprintf(num, sizeof(num), "%" PRIu64, seqnum);
        ok = ok && put_prop(buf, sizeof(buf), &len, "SEQNUM", num) &&
             put_prop(buf, sizeof(buf), &len, "TUDEV_RESYNC", "1");
        if (!ok)
                return -E2BIG;
        return uevent_parse_kernel(buf, len, now_usec(CLOCK_MONOTONIC), ret);
}

static void queue_remove(struct resync *rs, const struct known_device *kd)
{
        struct uevent *ev = NULL;
        int r = synthesize_remove(kd, rs->p->seqnum, &ev);

        if (r >= 0)
                r = event_queue_push(rs->p->queue, &ev, 1);
        if (r < 0) {
                log_warning_errno(r, "%s: failed to synthesize the lost remove event of %s: %m",
                                  kd->id, kd->devpath);
                return;
        }
        known_devices_forget(rs->p->known, kd->id);
        log_info("%s (%s) vanished during the overrun: remove event synthesized", kd->devpath,
                 kd->id);
        rs->res->removed++;
}

static void check_record(struct resync *rs, const char *id)
{
        _cleanup_free_ struct known_device *kd = NULL;
        char current[DEVPATH_MAX];
        int r;

        r = known_devices_get(rs->p->known, id, &kd);
        if (r == -ENOENT) {
                /* Nothing to announce it with: forget it quietly if it is gone. */
                if (rs->p->match || sysfs_presence_of_id(rs->pres, id) != PRESENCE_GONE)
                        return;
                rs->res->records++;
                log_info("%s vanished and its DEVPATH is unknown: record forgotten", id);
                if (device_forget(rs->p->roots, id) >= 0)
                        rs->res->forgotten++;
                return;
        }
        if (r < 0 || !devpath_matches(rs, kd->devpath))
                return;
        rs->res->records++;
        switch (known_presence(rs, kd, current, sizeof(current))) {
        case KNOWN_PRESENT:
                break;
        case KNOWN_GONE:
                queue_remove(rs, kd);
                break;
        case KNOWN_REPLACED:
                queue_remove(rs, kd);
                if (strlist_add(&rs->readd, current) < 0)
                        log_warning("Out of memory: no add event for %s", current);
                break;
        }
}

static int check_records(struct resync *rs)
{
        char path[PATH_MAX];
        struct strlist ids = {};
        _cleanup_(closedirp) DIR *dir = NULL;
        struct dirent *de;

        snprintf(path, sizeof(path), "%s/data", rs->p->roots->run);
        dir = opendir(path);
        if (!dir)
                return errno == ENOENT ? 0 : log_error_errno(errno, "Failed to open %s: %m", path);
        while ((de = readdir(dir)))
                if (de->d_name[0] != '.' && strlist_add(&ids, de->d_name) < 0) {
                        strlist_clear(&ids);
                        return -ENOMEM;
                }
        for (size_t i = 0; i < ids.n; i++)
                check_record(rs, ids.items[i]);
        strlist_clear(&ids);
        return 0;
}

/* ---- devices without a record ---- */

static int read_attr(int dfd, const char *name, char *buf, size_t size)
{
        _cleanup_close_ int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);
        ssize_t n;

        if (fd < 0)
                return -errno;
        n = read(fd, buf, size - 1);
        if (n < 0)
                return -errno;
        buf[n] = '\0';
        buf[strcspn(buf, "\n")] = '\0';
        return 0;
}

static int write_add(int dfd, const char *devpath)
{
        _cleanup_close_ int fd = openat(dfd, "uevent", O_WRONLY | O_CLOEXEC);

        if (fd < 0 || write(fd, "add", 3) != 3)
                return log_warning_errno(errno, "%s: failed to write \"add\" to its uevent "
                                         "file: %m", devpath);
        log_info("%s has no database record: add event requested", devpath);
        return 0;
}

/* A device directory: trigger "add" if it has a devnum/ifindex and no record. */
static void check_device(struct resync *rs, int dfd, const char *devpath)
{
        char link[PATH_MAX], attr[SYSFS_ATTR_MAX], id[UEVENT_ID_MAX], path[PATH_MAX];
        unsigned major = 0, minor = 0;
        int ifindex = 0;
        ssize_t n;

        if (!devpath_matches(rs, devpath))
                return;
        n = readlinkat(dfd, "subsystem", link, sizeof(link) - 1);
        if (n <= 0)
                return;
        link[n] = '\0';
        const char *subsystem = strrchr(link, '/') ? strrchr(link, '/') + 1 : link;
        if (read_attr(dfd, "dev", attr, sizeof(attr)) >= 0 &&
            sscanf(attr, "%u:%u", &major, &minor) != 2)
                major = minor = 0;
        if (streq(subsystem, "net") && read_attr(dfd, "ifindex", attr, sizeof(attr)) >= 0)
                ifindex = atoi(attr) > 0 ? atoi(attr) : 0;
        if (major == 0 && ifindex == 0)
                return;
        rs->res->devices++;
        if (device_id_format(id, sizeof(id), subsystem, devpath, major, minor, ifindex) < 0)
                return;
        snprintf(path, sizeof(path), "%s/data/%s", rs->p->roots->run, id);
        if (access(path, F_OK) >= 0 || errno != ENOENT)
                return;
        if (write_add(dfd, devpath) >= 0)
                rs->res->added++;
}

static void walk(struct resync *rs, int dfd, char *devpath, size_t len, unsigned depth)
{
        _cleanup_(closedirp) DIR *dir = NULL;
        struct dirent *de;

        if (faccessat(dfd, "uevent", F_OK, 0) >= 0)
                check_device(rs, dfd, devpath);
        if (depth >= SYSFS_WALK_DEPTH_MAX || !(dir = opendir_dup(dfd)))
                return;
        while ((de = readdir(dir))) {
                size_t nl = strlen(de->d_name);
                struct stat st;

                if (de->d_name[0] == '.' || (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN))
                        continue;
                if (len + 1 + nl >= DEVPATH_MAX)
                        continue;
                if (de->d_type == DT_UNKNOWN &&
                    (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                     !S_ISDIR(st.st_mode)))
                        continue;
                _cleanup_close_ int sub = openat(dfd, de->d_name,
                                                 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (sub < 0)
                        continue;
                devpath[len] = '/';
                memcpy(devpath + len + 1, de->d_name, nl + 1);
                walk(rs, sub, devpath, len + 1 + nl, depth + 1);
                devpath[len] = '\0';
        }
}

/* The directory part of a glob before its first wildcard ("/devices" at least). */
static void glob_static_dir(const char *glob, char *out, size_t size)
{
        size_t meta = strcspn(glob, "*?[\\");
        const char *slash = NULL;

        for (size_t i = 0; i < meta; i++)
                if (glob[i] == '/')
                        slash = glob + i;
        if (!strneq(glob, "/devices", 8) || !slash || slash - glob < 8 ||
            (glob[8] != '/' && glob[8] != '\0')) {
                snprintf(out, size, "/devices");
                return;
        }
        snprintf(out, size, "%.*s", (int)(slash - glob), glob);
}

static void scan_tree(struct resync *rs, const char *start)
{
        char path[PATH_MAX];
        static char devpath[DEVPATH_MAX];
        size_t len = strlen(start);
        _cleanup_close_ int fd = -1;

        if (len >= sizeof(devpath))
                return;
        snprintf(path, sizeof(path), "%s%s", rs->p->roots->sys, start);
        fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
                log_debug_errno(errno, "resync: cannot open %s: %m", path);
                return;
        }
        memcpy(devpath, start, len + 1);
        walk(rs, fd, devpath, len, 0);
}

static bool covered_by(const char *dir, const char *other)
{
        size_t n = strlen(other);
        return strneq(dir, other, n) && (dir[n] == '\0' || dir[n] == '/');
}

static void scan_sysfs(struct resync *rs)
{
        struct strlist dirs = {};

        if (!rs->p->match) {
                scan_tree(rs, "/devices");
                return;
        }
        for (size_t i = 0; i < rs->alternatives.n; i++) {
                char dir[DEVPATH_MAX];
                glob_static_dir(rs->alternatives.items[i], dir, sizeof(dir));
                (void)strlist_add_unique(&dirs, dir);
        }
        for (size_t i = 0; i < dirs.n; i++) {
                bool inside = false;
                for (size_t j = 0; j < dirs.n && !inside; j++)
                        inside = j != i && covered_by(dirs.items[i], dirs.items[j]);
                if (!inside)
                        scan_tree(rs, dirs.items[i]);
        }
        strlist_clear(&dirs);
}

static void trigger_readd(struct resync *rs)
{
        char path[PATH_MAX];

        for (size_t i = 0; i < rs->readd.n; i++) {
                snprintf(path, sizeof(path), "%s%s", rs->p->roots->sys, rs->readd.items[i]);
                _cleanup_close_ int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (fd >= 0 && write_add(fd, rs->readd.items[i]) >= 0)
                        rs->res->added++;
        }
}

int resync_run(const struct resync_params *p, struct resync_result *ret)
{
        struct resync_result res = {};
        struct resync rs = { .p = p, .res = &res };
        uint64_t start = now_usec(CLOCK_MONOTONIC);
        int r;

        r = split_match(p->match, &rs.alternatives);
        if (r < 0)
                goto out;
        r = sysfs_presence_new(p->roots->sys, &rs.pres);
        if (r < 0)
                goto out;
        r = check_records(&rs);
        if (r < 0)
                goto out;
        scan_sysfs(&rs);
        trigger_readd(&rs);
out:
        res.usec = now_usec(CLOCK_MONOTONIC) - start;
        sysfs_presence_free(rs.pres);
        strlist_clear(&rs.readd);
        strlist_clear(&rs.alternatives);
        *ret = res;
        return r;
}
