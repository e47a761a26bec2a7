/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (records under w->lock; the inotify thread only reads them) */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "device/device.h"
#include "proto/uevent.h"
#include "shared/fileio.h"
#include "shared/hashmap.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "shared/thread-util.h"
#include "shared/time-util.h"
#include "udevd/event-queue.h"
#include "udevd/watch-limit.h"
#include "udevd/watch.h"

#define WATCH_PATH_MAX 256           /* <run>/watch(.old) */
#define WATCH_WD_MAX 16              /* decimal int + NUL */
#define WATCH_PARTITIONS_MAX 1024    /* partitions of one disk given a "change" */
#define WATCH_READ_BUF 4096          /* inotify read buffer */
/* Rate limit of synthesized changes (watch-limit.h): one pending per device;
 * after this long without its event starting, another is written. */
#define WATCH_LIMIT_WINDOW_USEC (3 * USEC_PER_SEC)
#define WATCH_LIMIT_DEVICES 4096     /* devices tracked at once */

struct watch {
        char run_dir[WATCH_PATH_MAX];
        char sys_dir[WATCH_PATH_MAX];
        char dir[WATCH_PATH_MAX];     /* <run>/watch */
        char old_dir[WATCH_PATH_MAX]; /* <run>/watch.old */
        struct event_queue *queue;    /* borrowed, may be NULL */
        int inotify_fd;
        int stop_fd;                  /* eventfd: stop the thread */
        pthread_mutex_t lock;         /* serialises record updates + add/rm_watch,
                                       * and guards `limit` */
        struct watch_limit limit;     /* pending synthesized changes */
        struct hashmap watched;       /* ids with a record in dir (values: their
                                       * owned copies, keys point into them);
                                       * under lock. Every record is made and
                                       * removed here (restore() included), so
                                       * an id not in it has none. */
        pthread_t thread;
        bool thread_started;
};

/* ------------------------------------------------------------- records */

/* Symlink target of dirfd/name into buf (NUL-terminated). 0 or -errno;
 * -ENAMETOOLONG if it does not fit. */
static int read_link(int dirfd, const char *name, char *buf, size_t size)
{
        ssize_t n = readlinkat(dirfd, name, buf, size);

        if (n < 0)
                return negative_errno();
        if ((size_t)n >= size)
                return -ENAMETOOLONG;
        buf[n] = '\0';
        return 0;
}

static bool parse_wd(const char *s, int *ret)
{
        char *end;
        long v;

        if (s[0] < '0' || s[0] > '9')
                return false;
        errno = 0;
        v = strtol(s, &end, 10);
        if (errno != 0 || *end != '\0' || v < 0 || v > INT_MAX)
                return false;
        *ret = (int)v;
        return true;
}

static int open_dir(const char *path)
{
        int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);

        return fd < 0 ? negative_errno() : fd;
}

/* ------------------------------------------------- the set of watched ids */

static bool watched_has(const struct watch *w, const char *id)
{
        return hashmap_get(&w->watched, id, strlen(id)) != NULL;
}

static int watched_add(struct watch *w, const char *id)
{
        size_t len = strlen(id);
        char *copy;
        int r;

        if (watched_has(w, id))
                return 0;
        copy = strdup(id);
        if (!copy)
                return -ENOMEM;
        r = hashmap_put(&w->watched, copy, len, copy);
        if (r < 0)
                free(copy);
        return r;
}

static void watched_remove(struct watch *w, const char *id)
{
        free(hashmap_remove(&w->watched, id, strlen(id)));
}

/* Remove the record pair of `id` (called with w->lock held). If the pair is
 * consistent ("<wd>" points back to id) the wd is unwatched too. */
static int clear_locked(struct watch *w, int dirfd, const char *id)
{
        char wd_str[WATCH_WD_MAX], back[UEVENT_ID_MAX];
        int wd, r;

        r = read_link(dirfd, id, wd_str, sizeof(wd_str));
        if (r == -ENOENT) {
                watched_remove(w, id);
                return 0;
        }
        if (r >= 0 && parse_wd(wd_str, &wd) && read_link(dirfd, wd_str, back, sizeof(back)) >= 0 &&
            streq(back, id)) {
                if (unlinkat(dirfd, wd_str, 0) < 0 && errno != ENOENT)
                        r = log_debug_errno(errno, "watch: failed to remove %s/%s: %m", w->dir,
                                            wd_str);
                log_debug("watch: removing watch %d of %s", wd, id);
                (void)inotify_rm_watch(w->inotify_fd, wd);
        }
        if (unlinkat(dirfd, id, 0) < 0 && errno != ENOENT)
                r = log_debug_errno(errno, "watch: failed to remove %s/%s: %m", w->dir, id);
        else
                watched_remove(w, id);
        return r < 0 ? r : 0;
}

/* A "<wd>" record left by a device whose node went away before its remove
 * event (the kernel dropped the watch and may reuse the number). */
static void drop_stale_wd_locked(struct watch *w, int dirfd, const char *wd_str, const char *id)
{
        char old_id[UEVENT_ID_MAX], old_wd[WATCH_WD_MAX];

        if (read_link(dirfd, wd_str, old_id, sizeof(old_id)) < 0)
                return;
        if (!streq(old_id, id)) {
                log_debug("watch: watch %s now belongs to %s, dropping the record of %s", wd_str,
                          id, old_id);
                if (read_link(dirfd, old_id, old_wd, sizeof(old_wd)) >= 0 &&
                    streq(old_wd, wd_str) && unlinkat(dirfd, old_id, 0) >= 0)
                        watched_remove(w, old_id);
        }
        (void)unlinkat(dirfd, wd_str, 0);
}

static bool valid_id(const char *id)
{
        size_t n = strnlen(id, UEVENT_ID_MAX);

        return n > 0 && n < UEVENT_ID_MAX && id[0] != '.' && !strchr(id, '/');
}

static int begin_locked(struct watch *w, const char *id, const char *devnode)
{
        _cleanup_close_ int dirfd = -1;
        char wd_str[WATCH_WD_MAX];
        int wd, r;

        dirfd = open_dir(w->dir);
        if (dirfd == -ENOENT) { /* made on first use, not checked per event */
                r = mkdir_p(w->dir, 0755);
                if (r < 0)
                        return log_debug_errno(r, "watch: failed to create %s: %m", w->dir);
                dirfd = open_dir(w->dir);
        }
        if (dirfd < 0)
                return log_debug_errno(dirfd, "watch: failed to open %s: %m", w->dir);
        (void)clear_locked(w, dirfd, id);
        /* room in the set first: a record it does not list would never be
         * removed by watch_end() */
        r = hashmap_reserve(&w->watched, 1);
        if (r < 0)
                return log_debug_errno(r, "watch: failed to watch %s: %m", devnode);

        wd = inotify_add_watch(w->inotify_fd, devnode, IN_CLOSE_WRITE);
        if (wd < 0)
                return log_debug_errno(errno, "watch: failed to watch %s: %m", devnode);
        snprintf(wd_str, sizeof(wd_str), "%d", wd);
        drop_stale_wd_locked(w, dirfd, wd_str, id);
        if (symlinkat(wd_str, dirfd, id) < 0) {
                r = log_debug_errno(errno, "watch: failed to record %s -> %s: %m", id, wd_str);
                goto fail;
        }
        if (symlinkat(id, dirfd, wd_str) < 0) {
                r = log_debug_errno(errno, "watch: failed to record %s -> %s: %m", wd_str, id);
                (void)unlinkat(dirfd, id, 0);
                goto fail;
        }
        r = watched_add(w, id);
        if (r < 0) {
                (void)unlinkat(dirfd, wd_str, 0);
                (void)unlinkat(dirfd, id, 0);
                goto fail;
        }
        log_debug("watch: watching %s (%s) as %d", devnode, id, wd);
        return 0;
fail:
        (void)inotify_rm_watch(w->inotify_fd, wd);
        return r;
}

int watch_begin(struct watch *w, const char *id, const char *devnode)
{
        int r;

        if (!w || !id || !devnode || !devnode[0] || !valid_id(id))
                return -EINVAL;
        pthread_mutex_lock(&w->lock);
        r = begin_locked(w, id, devnode);
        pthread_mutex_unlock(&w->lock);
        return r;
}

int watch_end(struct watch *w, const char *id)
{
        _cleanup_close_ int dirfd = -1;
        int r;

        if (!w || !id || !valid_id(id))
                return -EINVAL;
        pthread_mutex_lock(&w->lock);
        /* Every event of a device with a node comes here: most have no
         * watch, and the set says so without a system call. */
        if (!watched_has(w, id)) {
                pthread_mutex_unlock(&w->lock);
                return 0;
        }
        dirfd = open_dir(w->dir);
        r = dirfd == -ENOENT ? 0 : dirfd < 0 ? dirfd : clear_locked(w, dirfd, id);
        watch_limit_clear(&w->limit, id); /* its pending change (if any) starts now */
        pthread_mutex_unlock(&w->lock);
        return r;
}

/* ------------------------------------------------------- synthesize change */

static bool startswith(const char *s, const char *prefix)
{
        return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool is_block_devtype(struct device *d, const char *devtype)
{
        const char *s;

        return device_get_subsystem(d, &s) >= 0 && streq(s, "block") &&
               device_get_devtype(d, &s) >= 0 && streq(s, devtype);
}

/* The whole disk whose requeued events may run now (systemd:
 * event_queue_assume_block_device_unlocked()). */
static void retry_whole_disk(struct watch *w, struct device *d)
{
        const char *sysname = device_sysname(d);
        struct device *disk = d;

        if (!w->queue || startswith(sysname, "dm-") || startswith(sysname, "md") ||
            startswith(sysname, "drbd"))
                return;
        if (!is_block_devtype(d, "disk")) {
                if (!is_block_devtype(d, "partition") || device_get_parent(d, &disk) < 0 ||
                    !is_block_devtype(disk, "disk"))
                        return;
        }
        event_queue_retry_disk(w->queue, device_devpath(disk));
}

static int trigger_change(struct device *d)
{
        int r = device_set_sysattr(d, "uevent", "change");

        if (r < 0)
                return log_debug_errno(r, "watch: failed to write 'change' to %s/uevent: %m",
                                       device_syspath(d));
        log_debug("watch: synthesized 'change' for %s", device_devpath(d));
        return 0;
}

/* Lock the disk exclusively and ask the kernel to re-read its partition
 * table (systemd: blockdev_reread_partition_table()). 0 or -errno. */
static int reread_partition_table(struct device *disk)
{
        _cleanup_close_ int fd = -1;
        unsigned ma, mi;
        const char *node;
        struct stat st;
        int r;

        r = device_get_devnode(disk, &node);
        if (r < 0)
                return r;
        r = device_get_devnum(disk, &ma, &mi);
        if (r < 0)
                return r;
        fd = open(node, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (!S_ISBLK(st.st_mode) || st.st_rdev != makedev(ma, mi))
                return -ENXIO;
        if (flock(fd, LOCK_EX | LOCK_NB) < 0)
                return negative_errno();
        if (ioctl(fd, BLKRRPART, 0) < 0)
                return negative_errno();
        return 0;
}

/* The partitions of `disk`: its child directories named <disk>* that are
 * block devices of devtype partition. Returns how many were stored. */
static size_t find_partitions(struct device_ctx *ctx, struct device *disk,
                              struct device **parts, size_t max)
{
        const char *sysname = device_sysname(disk);
        char path[PATH_MAX];
        struct dirent *de;
        size_t n = 0;
        DIR *dir;

        dir = opendir(device_syspath(disk));
        if (!dir)
                return 0;
        while (n < max && (de = readdir(dir))) {
                struct device *p;

                if (de->d_name[0] == '.' || !startswith(de->d_name, sysname))
                        continue;
                if (snprintf(path, sizeof(path), "%s/%s", device_syspath(disk), de->d_name) >=
                    (int)sizeof(path))
                        continue;
                if (device_from_syspath(ctx, path, &p) >= 0 && is_block_devtype(p, "partition"))
                        parts[n++] = p;
        }
        closedir(dir);
        return n;
}

static void synthesize_change(struct device_ctx *ctx, struct device *d)
{
        struct device *parts[WATCH_PARTITIONS_MAX];
        size_t n;
        int r;

        if (startswith(device_sysname(d), "dm-") || !is_block_devtype(d, "disk")) {
                (void)trigger_change(d);
                return;
        }
        r = reread_partition_table(d);
        if (r < 0)
                log_debug_errno(r, "watch: %s: failed to re-read the partition table: %m",
                                device_sysname(d));
        n = find_partitions(ctx, d, parts, ARRAY_SIZE(parts));
        /* Re-read with partitions: the kernel sent change/remove/add itself. */
        if (r >= 0 && n > 0)
                return;
        (void)trigger_change(d);
        for (size_t i = 0; i < n; i++)
                (void)trigger_change(parts[i]);
}

/* ------------------------------------------------------ inotify thread */

static void on_close_write(struct watch *w, int wd)
{
        const struct device_roots roots = { .sys = w->sys_dir, .dev = "/dev", .run = w->run_dir };
        char wd_str[WATCH_WD_MAX], id[UEVENT_ID_MAX];
        _cleanup_close_ int dirfd = -1;
        struct device_ctx *ctx = NULL;
        struct device *d;
        const char *node;
        int r;

        snprintf(wd_str, sizeof(wd_str), "%d", wd);
        dirfd = open_dir(w->dir);
        r = dirfd < 0 ? dirfd : read_link(dirfd, wd_str, id, sizeof(id));
        if (r < 0) {
                log_debug_errno(r, "watch: unknown watch %d: %m", wd);
                return;
        }
        r = device_ctx_new(&roots, &ctx);
        if (r >= 0)
                r = device_from_id(ctx, id, &d);
        if (r >= 0)
                r = device_get_devnode(d, &node);
        if (r < 0) {
                /* removed right after the close */
                log_debug_errno(r, "watch: device %s of watch %d is gone: %m", id, wd);
                device_ctx_free(ctx);
                return;
        }
        log_debug("watch: %s (%s) closed after writing", node, device_devpath(d));
        retry_whole_disk(w, d);
        pthread_mutex_lock(&w->lock);
        bool admit = watch_limit_admit(&w->limit, id, now_usec(CLOCK_MONOTONIC));
        pthread_mutex_unlock(&w->lock);
        if (admit)
                synthesize_change(ctx, d);
        else
                log_debug("watch: a change of %s is pending, not writing another", id);
        device_ctx_free(ctx);
}

static void read_inotify(struct watch *w)
{
        _Alignas(struct inotify_event) char buf[WATCH_READ_BUF];

        for (;;) {
                ssize_t n = read(w->inotify_fd, buf, sizeof(buf));
                size_t off = 0;

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno != EAGAIN)
                                log_error_errno(errno, "watch: failed to read inotify events: %m");
                        return;
                }
                while (off + sizeof(struct inotify_event) <= (size_t)n) {
                        const struct inotify_event *ie = (const void *)(buf + off);
                        size_t len = sizeof(*ie) + ie->len;

                        if (len > (size_t)n - off)
                                break; /* cannot happen: the kernel never splits events */
                        if (ie->mask & IN_Q_OVERFLOW)
                                log_warning("watch: inotify queue overflow, close events lost");
                        if (ie->mask & IN_CLOSE_WRITE)
                                on_close_write(w, ie->wd);
                        off += len;
                }
        }
}

static void *watch_main(void *userdata)
{
        struct watch *w = userdata;
        struct pollfd pfd[2] = {
                { .fd = w->inotify_fd, .events = POLLIN },
                { .fd = w->stop_fd, .events = POLLIN },
        };

        thread_set_name("udevd-watch");

        for (;;) {
                if (poll(pfd, ARRAY_SIZE(pfd), -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        log_error_errno(errno, "watch: poll failed, no more watch events: %m");
                        break;
                }
                if (pfd[1].revents)
                        break;
                if (pfd[0].revents)
                        read_inotify(w);
        }
        return NULL;
}

/* ------------------------------------------------------------ restore */

/* Delete the (flat) directory of a previous instance's records. */
static void remove_records_dir(const char *path)
{
        struct dirent *de;
        DIR *dir = opendir(path);

        if (!dir) {
                if (errno != ENOENT)
                        log_warning_errno(errno, "watch: failed to open %s: %m", path);
                return;
        }
        while ((de = readdir(dir)))
                if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
                        (void)unlinkat(dirfd(dir), de->d_name, 0);
        closedir(dir);
        if (rmdir(path) < 0 && errno != ENOENT)
                log_warning_errno(errno, "watch: failed to remove %s: %m", path);
}

static void restore_one(struct watch *w, struct device_ctx *ctx, int dirfd, const char *name)
{
        char id[UEVENT_ID_MAX];
        struct device *d;
        const char *node;
        int wd, r;

        if (!parse_wd(name, &wd))
                return; /* the "<id>" direction */
        r = read_link(dirfd, name, id, sizeof(id));
        if (r >= 0)
                r = valid_id(id) ? device_from_id(ctx, id, &d) : -EINVAL;
        if (r >= 0)
                r = device_get_devnode(d, &node);
        if (r < 0) {
                log_debug_errno(r, "watch: not restoring watch %s: %m", name);
                return;
        }
        (void)watch_begin(w, id, node);
}

/* Watch again what a previous instance watched. */
static void restore(struct watch *w)
{
        const struct device_roots roots = { .sys = w->sys_dir, .dev = "/dev", .run = w->run_dir };
        struct device_ctx *ctx = NULL;
        struct dirent *de;
        DIR *dir;

        remove_records_dir(w->old_dir);
        if (rename(w->dir, w->old_dir) < 0) {
                if (errno != ENOENT)
                        log_warning_errno(errno, "watch: failed to move %s: %m", w->dir);
                return;
        }
        dir = opendir(w->old_dir);
        if (!dir) {
                log_warning_errno(errno, "watch: failed to open %s: %m", w->old_dir);
                return;
        }
        if (device_ctx_new(&roots, &ctx) >= 0) {
                while ((de = readdir(dir)))
                        restore_one(w, ctx, dirfd(dir), de->d_name);
                device_ctx_free(ctx);
        }
        closedir(dir);
        remove_records_dir(w->old_dir);
}

/* ------------------------------------------------------------- lifetime */

static int copy_path(char *buf, size_t size, const char *a, const char *b)
{
        int n = snprintf(buf, size, "%s%s", a, b);

        return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int watch_new(const char *run_dir, const char *sys_dir, struct event_queue *queue,
              struct watch **ret)
{
        struct watch *w;
        int r;

        w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        w->inotify_fd = w->stop_fd = -1;
        w->queue = queue;
        pthread_mutex_init(&w->lock, NULL);
        hashmap_init(&w->watched);
        watch_limit_init(&w->limit, WATCH_LIMIT_WINDOW_USEC, WATCH_LIMIT_DEVICES);
        r = copy_path(w->run_dir, sizeof(w->run_dir), run_dir, "");
        if (r >= 0)
                r = copy_path(w->sys_dir, sizeof(w->sys_dir), sys_dir, "");
        if (r >= 0)
                r = copy_path(w->dir, sizeof(w->dir), run_dir, "/watch");
        if (r >= 0)
                r = copy_path(w->old_dir, sizeof(w->old_dir), run_dir, "/watch.old");
        if (r < 0)
                goto fail;
        w->inotify_fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
        w->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (w->inotify_fd < 0 || w->stop_fd < 0) {
                r = negative_errno();
                goto fail;
        }
        restore(w);
        r = thread_start(&w->thread, watch_main, w);
        if (r < 0)
                goto fail;
        w->thread_started = true;
        *ret = w;
        return 0;
fail:
        watch_free(w);
        return r;
}

void watch_free(struct watch *w)
{
        uint64_t one = 1;

        if (!w)
                return;
        if (w->thread_started) {
                ssize_t _unused_ n = write(w->stop_fd, &one, sizeof(one));
                pthread_join(w->thread, NULL);
        }
        safe_close(w->inotify_fd);
        safe_close(w->stop_fd);
        watch_limit_done(&w->limit);
        hashmap_deinit_free_values(&w->watched);
        pthread_mutex_destroy(&w->lock);
        free(w);
}

uint64_t watch_limited(struct watch *w)
{
        uint64_t n;

        if (!w)
                return 0;
        pthread_mutex_lock(&w->lock);
        n = watch_limit_dropped(&w->limit);
        pthread_mutex_unlock(&w->lock);
        return n;
}
