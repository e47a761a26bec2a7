/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (one record_sysfs per thread; udevadm is single-threaded) */
/* Device snapshots for `udevadm record` (record-sysfs.h). */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/fileio.h"
#include "shared/fnv.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "udevadm/record-sysfs.h"

struct last_entry {
        uint64_t hash;
        char devpath[];
};

void record_sysfs_init(struct record_sysfs *s, const char *sys_root)
{
        memset(s, 0, sizeof(*s));
        s->sys = sys_root;
        hashmap_init(&s->last);
}

void record_sysfs_done(struct record_sysfs *s)
{
        hashmap_deinit_free_values(&s->last);
}

static int cmp_names(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in directory `dfd` (borrowed) but "." and "..", sorted. *ret
 * owned (each name and the array). Returns the count or -errno. */
static int list_sorted(int dfd, char ***ret)
{
        struct dirent *de;
        char **v = NULL;
        size_t n = 0, cap = 0;
        DIR *d = opendir_dup(dfd);

        if (!d)
                return negative_errno();
        while ((de = readdir(d))) {
                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                if (n == cap) {
                        char **nv = realloc(v, (cap = cap ? cap * 2 : 64) * sizeof(*v));
                        if (!nv)
                                goto oom;
                        v = nv;
                }
                if (!(v[n] = strdup(de->d_name)))
                        goto oom;
                n++;
        }
        closedir(d);
        if (n > 1)
                qsort(v, n, sizeof(*v), cmp_names);
        *ret = v;
        return (int)MIN(n, (size_t)INT_MAX);
oom:
        closedir(d);
        for (size_t i = 0; i < n; i++)
                free(v[i]);
        free(v);
        return -ENOMEM;
}

static void free_names(char **v, int n)
{
        for (int i = 0; i < n; i++)
                free(v[i]);
        free(v);
}

struct snap {
        struct record_sysfs *s;
        struct record_writer w;   /* into the memory stream */
        unsigned entries;
};

/* Count one entry against the cap; false when it must be left out. */
static bool snap_room(struct snap *sn)
{
        if (sn->entries >= RECORD_ENTRIES_MAX) {
                sn->s->entries_skipped++;
                return false;
        }
        sn->entries++;
        return true;
}

static void snap_result(struct snap *sn, int r)
{
        if (r == -EINVAL) {
                sn->s->names_skipped++;
                sn->entries--;
        }
}

/* A regular file at `dfd`/`name`, recorded as `recname`. */
static void snap_file(struct snap *sn, int dfd, const char *name, const char *recname,
                      const struct stat *st)
{
        char buf[RECORD_FILE_DATA_MAX];
        size_t len = 0;
        int fd;

        if (!snap_room(sn))
                return;
        if (!(st->st_mode & S_IRUSR)) {
                snap_result(sn, record_write_unreadable(&sn->w, recname));
                return;
        }
        fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
        if (fd < 0) {
                snap_result(sn, record_write_unreadable(&sn->w, recname));
                return;
        }
        while (len < sizeof(buf)) {
                ssize_t k = read(fd, buf + len, sizeof(buf) - len);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0) {
                        close(fd);
                        snap_result(sn, record_write_unreadable(&sn->w, recname));
                        return;
                }
                if (k == 0)
                        break;
                len += (size_t)k;
        }
        close(fd);
        snap_result(sn, record_write_file(&sn->w, recname, buf, len));
}

/* Files of an attribute subdirectory ("power", "queue"), one level. */
static void snap_subdir(struct snap *sn, int dfd, const char *sub)
{
        _cleanup_close_ int sfd = openat(dfd, sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        char **names = NULL, rec[RECORD_PATH_MAX];
        struct stat st;
        int n;

        if (sfd < 0 || faccessat(sfd, "uevent", F_OK, AT_SYMLINK_NOFOLLOW) == 0)
                return; /* unreadable, or a child device */
        n = list_sorted(sfd, &names);
        for (int i = 0; i < n; i++) {
                if (fstatat(sfd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
                        continue;
                if (snprintf(rec, sizeof(rec), "%s/%s", sub, names[i]) >= (int)sizeof(rec)) {
                        sn->s->names_skipped++;
                        continue;
                }
                snap_file(sn, sfd, names[i], rec, &st);
        }
        if (n > 0)
                free_names(names, n);
}

/* A symlink: its canonical target below the sys root. */
static void snap_link(struct snap *sn, const char *syspath, const char *name, const char *sysreal)
{
        char p[PATH_MAX];
        _cleanup_free_ char *real = NULL;
        size_t rl = strlen(sysreal);

        if (snprintf(p, sizeof(p), "%s/%s", syspath, name) >= (int)sizeof(p))
                return;
        real = realpath(p, NULL);
        if (!real)
                return; /* dangling */
        if (streq(sysreal, "/"))
                rl = 0;
        if (strncmp(real, sysreal, rl) != 0 || real[rl] != '/')
                return; /* outside sysfs */
        if (!snap_room(sn))
                return;
        snap_result(sn, record_write_link(&sn->w, name, real + rl));
}

static bool is_essential(const char *name)
{
        return streq(name, "uevent") || streq(name, "subsystem") || streq(name, "driver") ||
               streq(name, "dev");
}

/* The snapshot of `devpath` into a memory buffer. 0 with *ret and *ret_len set,
 * -ENOENT if the directory is gone, -errno. */
static int snapshot(struct record_sysfs *s, const char *devpath, char **ret, size_t *ret_len)
{
        char syspath[PATH_MAX], **names = NULL;
        _cleanup_free_ char *sysreal = NULL;
        _cleanup_close_ int dfd = -1;
        struct snap sn = { .s = s };
        struct stat st;
        FILE *f;
        int n, r;

        if (snprintf(syspath, sizeof(syspath), "%s%s", s->sys, devpath) >= (int)sizeof(syspath))
                return -ENAMETOOLONG;
        dfd = open(syspath, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return negative_errno();
        sysreal = realpath(s->sys, NULL);
        if (!sysreal)
                return negative_errno();
        n = list_sorted(dfd, &names);
        if (n < 0)
                return n;
        f = open_memstream(ret, ret_len);
        if (!f) {
                free_names(names, n);
                return -ENOMEM;
        }
        sn.w = (struct record_writer){ .f = f };
        r = record_write_device(&sn.w, devpath);
        /* what identifies the device first, so that a cap never drops it */
        for (int pass = 0; pass < 2; pass++)
        for (int i = 0; r >= 0 && i < n; i++) {
                if (is_essential(names[i]) != (pass == 0))
                        continue;
                if (fstatat(dfd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                if (S_ISLNK(st.st_mode))
                        snap_link(&sn, syspath, names[i], sysreal);
                else if (S_ISREG(st.st_mode))
                        snap_file(&sn, dfd, names[i], names[i], &st);
                else if (S_ISDIR(st.st_mode))
                        snap_subdir(&sn, dfd, names[i]);
                if (sn.w.error)
                        r = sn.w.error;
        }
        free_names(names, n);
        if (fclose(f) != 0 && r >= 0)
                r = -ENOMEM;
        if (r < 0) {
                free(*ret);
                *ret = NULL;
        }
        return r;
}

/* Forget the snapshots of `devpath` and of every device below it. */
static void forget(struct record_sysfs *s, const char *devpath)
{
        size_t dl = strlen(devpath), st = 0, n = 0;
        struct last_entry **drop = NULL;
        void *v;

        while (hashmap_iterate(&s->last, &st, NULL, NULL, &v)) {
                struct last_entry *e = v;
                if (strneq(e->devpath, devpath, dl) &&
                    (e->devpath[dl] == '\0' || e->devpath[dl] == '/')) {
                        struct last_entry **nd = realloc(drop, (n + 1) * sizeof(*drop));
                        if (!nd)
                                break;
                        drop = nd;
                        drop[n++] = e;
                }
        }
        for (size_t i = 0; i < n; i++) {
                hashmap_remove(&s->last, drop[i]->devpath, strlen(drop[i]->devpath));
                free(drop[i]);
        }
        free(drop);
}

static int write_gone(struct record_sysfs *s, struct record_writer *w, const char *devpath)
{
        forget(s, devpath);
        return record_write_gone(w, devpath);
}

/* Snapshot one device unless unchanged. 0 or -errno of the writer. */
static int write_device(struct record_sysfs *s, struct record_writer *w, const char *devpath)
{
        _cleanup_free_ char *buf = NULL;
        struct last_entry *e;
        size_t len = 0;
        uint64_t h;
        int r;

        r = snapshot(s, devpath, &buf, &len);
        if (r == -ENOENT || r == -ENOTDIR)
                return write_gone(s, w, devpath);
        if (r < 0) {
                log_debug_errno(r, "%s: no snapshot of the device directory: %m", devpath);
                return r == -ENOMEM ? r : 0;
        }
        h = fnv1a64(FNV1A64_INIT, buf, len);
        e = hashmap_get(&s->last, devpath, strlen(devpath));
        if (e && e->hash == h)
                return 0;
        r = record_write_block(w, buf, len);
        if (r < 0)
                return r;
        s->snapshots++;
        if (e) {
                e->hash = h;
                return 0;
        }
        if (hashmap_size(&s->last) >= RECORD_SYSFS_DEVICES_MAX)
                return 0; /* not remembered: written again next time */
        e = malloc(sizeof(*e) + strlen(devpath) + 1);
        if (!e)
                return -ENOMEM;
        e->hash = h;
        strcpy(e->devpath, devpath);
        r = hashmap_put(&s->last, e->devpath, strlen(e->devpath), e);
        if (r < 0)
                free(e);
        return r;
}

static bool is_device_dir(struct record_sysfs *s, const char *devpath)
{
        char p[PATH_MAX];

        if (snprintf(p, sizeof(p), "%s%s/uevent", s->sys, devpath) >= (int)sizeof(p))
                return false;
        return access(p, F_OK) == 0;
}

int record_sysfs_event(struct record_sysfs *s, struct record_writer *w, const struct uevent *ev)
{
        char path[RECORD_PATH_MAX];
        unsigned devices = 0;
        int r = 0;

        if (!record_devpath_valid(ev->devpath)) {
                s->names_skipped++;
                return 0;
        }
        snprintf(path, sizeof(path), "%s", ev->devpath);
        /* ancestors first: "/devices/a", "/devices/a/b", ... */
        for (char *slash = strchr(path + STRLEN("/devices/"), '/'); slash && r >= 0;
             slash = strchr(slash + 1, '/')) {
                *slash = '\0';
                if (is_device_dir(s, path) && devices < RECORD_DEVICES_MAX - 2) {
                        devices++;
                        r = write_device(s, w, path);
                }
                *slash = '/';
        }
        if (r < 0)
                return r;
        if (ev->action == UEVENT_ACTION_REMOVE)
                r = write_gone(s, w, ev->devpath);
        else
                r = write_device(s, w, ev->devpath);
        if (r >= 0 && ev->devpath_old && record_devpath_valid(ev->devpath_old)) {
                char p[PATH_MAX];
                snprintf(p, sizeof(p), "%s%s", s->sys, ev->devpath_old);
                if (access(p, F_OK) < 0)
                        r = write_gone(s, w, ev->devpath_old);
        }
        return r;
}
