/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (one enumerator per thread; udevadm is single-threaded) */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/log.h"
#include "shared/macro.h"
#include "udevadm/device-enum.h"

static inline void closedirp(DIR **d)
{
        if (*d)
                closedir(*d);
}

/* ---------------------------------------------------------------- ordering */

int device_enum_path_compare(const char *a, const char *b)
{
        for (;;) {
                size_t j, k;
                int r;

                a += strspn(a, "/");
                b += strspn(b, "/");
                if (*a == '\0' || *b == '\0')
                        return (*a != '\0') - (*b != '\0'); /* prefixes first */
                j = strcspn(a, "/");
                k = strcspn(b, "/");
                r = memcmp(a, b, MIN(j, k));
                if (r != 0)
                        return r < 0 ? -1 : 1;
                if (j != k)
                        return j < k ? -1 : 1;
                a += j;
                b += k;
        }
}

static bool devpath_is_late_block(const char *devpath)
{
        return strstr(devpath, "/block/md") || strstr(devpath, "/block/dm-");
}

static bool startswith(const char *s, const char *prefix)
{
        return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool endswith(const char *s, const char *suffix)
{
        size_t n = strlen(s), k = strlen(suffix);

        return n >= k && streq(s + n - k, suffix);
}

/* Within one sound card, the control device goes last: applications take
 * the ACL change of controlC* as "the whole card is ready". */
static int sound_compare(const char *a, const char *b)
{
        const char *card = strstr(a, "/sound/card"), *end;
        size_t prefix;

        if (!card)
                return 0;
        end = strchr(card + STRLEN("/sound/card"), '/');
        if (!end)
                return 0;
        prefix = (size_t)(end - a);
        if (strncmp(a, b, prefix) != 0)
                return 0;
        return (int)startswith(a + prefix, "/controlC") - (int)startswith(b + prefix, "/controlC");
}

int device_enum_devpath_compare(const char *a, const char *b)
{
        int r = sound_compare(a, b);

        if (r != 0)
                return r;
        r = (int)devpath_is_late_block(a) - (int)devpath_is_late_block(b);
        if (r != 0)
                return r;
        return device_enum_path_compare(a, b);
}

static int sysdev_compare(const void *x, const void *y, void *userdata)
{
        const struct sysdev *a = *(const struct sysdev *const *)x;
        const struct sysdev *b = *(const struct sysdev *const *)y;
        const struct device_enum *e = userdata;
        int r;

        if (e->v252_sound_order) {
                r = (int)devpath_is_late_block(a->devpath) - (int)devpath_is_late_block(b->devpath);
                return r != 0 ? r : device_enum_path_compare(a->devpath, b->devpath);
        }
        return device_enum_devpath_compare(a->devpath, b->devpath);
}

/* ---------------------------------------------------------------- filters */

static bool glob_any(const char *const *globs, size_t n, const char *s)
{
        for (size_t i = 0; i < n; i++)
                if (fnmatch(globs[i], s, 0) == 0)
                        return true;
        return false;
}

static bool match_subsystem(const struct device_enum *e, const char *subsystem)
{
        const struct device_enum_filter *f = e->filter;

        if (!subsystem)
                return false;
        if (glob_any(f->subsystem_nomatch, f->n_subsystem_nomatch, subsystem))
                return false;
        return f->n_subsystem_match == 0 ||
               glob_any(f->subsystem_match, f->n_subsystem_match, subsystem);
}

static bool match_sysname(const struct device_enum *e, const char *sysname)
{
        const struct device_enum_filter *f = e->filter;

        return f->n_sysname_match == 0 ||
               glob_any(f->sysname_match, f->n_sysname_match, sysname);
}

/* devpath is one of the parents or below one of them. */
static bool match_parent(const struct device_enum *e, const char *devpath)
{
        const struct device_enum_filter *f = e->filter;

        if (f->n_parents == 0)
                return true;
        for (size_t i = 0; i < f->n_parents; i++) {
                size_t n = strlen(f->parents[i]);

                while (n > 1 && f->parents[i][n - 1] == '/')
                        n--;
                if (strneq(devpath, f->parents[i], n) &&
                    (devpath[n] == '\0' || devpath[n] == '/'))
                        return true;
        }
        return false;
}

/* ---------------------------------------------------------------- probing */

/* "/devices" itself and everything below it follow the strict rules. */
static bool below_devices(const char *devpath)
{
        return startswith(devpath, "/devices") &&
               (devpath[STRLEN("/devices")] == '/' || devpath[STRLEN("/devices")] == '\0');
}

static bool has_nonempty_rest(const char *devpath, const char *prefix)
{
        return startswith(devpath, prefix) && devpath[strlen(prefix)] != '\0';
}

/* 1 if devpath is a device, 0 if not, -errno on an unexpected error. */
static int is_device(const struct device_enum *e, const char *devpath)
{
        char path[PATH_MAX];
        struct stat st;

        if (below_devices(devpath)) {
                int n = snprintf(path, sizeof(path), "%s/uevent", devpath + 1);

                if (n < 0 || (size_t)n >= sizeof(path))
                        return -ENAMETOOLONG;
                if (faccessat(e->root_fd, path, F_OK, 0) >= 0)
                        return 1;
                return errno == ENOENT || errno == ENOTDIR ? 0 : negative_errno();
        }
        if (fstatat(e->root_fd, devpath + 1, &st, 0) < 0)
                return errno == ENOENT || errno == ENOTDIR ? 0 : negative_errno();
        return S_ISDIR(st.st_mode) ? 1 : 0;
}

/* Subsystem of a device into buf; 1 found, 0 none, -errno. */
static int read_subsystem(const struct device_enum *e, const char *devpath, char *buf,
                          size_t size)
{
        char path[PATH_MAX], target[PATH_MAX];
        const char *name = NULL;
        ssize_t n;
        int k = snprintf(path, sizeof(path), "%s/subsystem", devpath + 1);

        if (k < 0 || (size_t)k >= sizeof(path))
                return -ENAMETOOLONG;
        n = readlinkat(e->root_fd, path, target, sizeof(target) - 1);
        if (n >= 0) {
                target[n] = '\0';
                name = strrchr(target, '/');
                name = name ? name + 1 : target;
        } else if (errno != ENOENT)
                return negative_errno();
        else if (has_nonempty_rest(devpath, "/module/"))
                name = "module";
        else if (strstr(devpath, "/drivers/") || endswith(devpath, "/drivers"))
                name = "drivers";
        else if (has_nonempty_rest(devpath, "/class/") || has_nonempty_rest(devpath, "/bus/"))
                name = "subsystem";
        if (!name || !*name)
                return 0;
        if (strlen(name) >= size)
                return -ENAMETOOLONG;
        strcpy(buf, name);
        return 1;
}

/* sysname: last component, '!' shown as '/'. */
static void get_sysname(const char *devpath, char *buf, size_t size)
{
        const char *s = strrchr(devpath, '/');
        size_t i = 0;

        for (s = s ? s + 1 : devpath; *s && i + 1 < size; s++)
                buf[i++] = *s == '!' ? '/' : *s;
        buf[i] = '\0';
}

static void remember_error(struct device_enum *e, const char *devpath, int r)
{
        log_debug_errno(r, "Failed to probe %s: %m", devpath);
        if (e->error == 0)
                e->error = r;
}

static int list_append(struct device_enum *e, struct sysdev *d)
{
        if (e->n_devs == e->cap_devs) {
                size_t cap = e->cap_devs ? e->cap_devs * 2 : 256;
                struct sysdev **n = realloc(e->devs, cap * sizeof(*n));

                if (!n)
                        return -ENOMEM;
                e->devs = n;
                e->cap_devs = cap;
        }
        e->devs[e->n_devs++] = d;
        return 0;
}

/* Whether a device with this subsystem passes the filters selected by flags. */
static bool passes(struct device_enum *e, const char *devpath, const char *subsystem,
                   unsigned flags)
{
        const struct device_enum_filter *f = e->filter;
        char sysname[NAME_MAX + 1];
        int r;

        if (!match_subsystem(e, subsystem))
                return false;
        if (flags & DEVICE_ENUM_CHECK_SYSNAME) {
                get_sysname(devpath, sysname, sizeof(sysname));
                if (!match_sysname(e, sysname))
                        return false;
        }
        if ((flags & DEVICE_ENUM_CHECK_PARENT) && !match_parent(e, devpath))
                return false;
        if (!f->match)
                return true;
        r = f->match(f->userdata, devpath, subsystem, flags);
        if (r < 0)
                remember_error(e, devpath, r);
        return r > 0;
}

/* Create the record of a path not seen before and decide whether it is
 * listed. Only -ENOMEM is fatal; other problems are remembered in e->error
 * and make the path a non-device. */
static int probe(struct device_enum *e, const char *devpath, size_t len, unsigned flags,
                 struct sysdev **ret)
{
        char subsystem[NAME_MAX + 1];
        struct sysdev *d;
        size_t slen = 0;
        int dev, has = 0;

        dev = is_device(e, devpath);
        if (dev < 0)
                remember_error(e, devpath, dev);
        if (dev > 0) {
                has = read_subsystem(e, devpath, subsystem, sizeof(subsystem));
                if (has < 0)
                        remember_error(e, devpath, has);
                if (has > 0)
                        slen = strlen(subsystem) + 1;
        }

        d = calloc(1, sizeof(*d) + len + 1 + slen);
        if (!d)
                return -ENOMEM;
        memcpy(d->devpath, devpath, len);
        d->devpath[len] = '\0';
        d->devpath_len = len;
        if (has > 0) {
                d->subsystem = d->devpath + len + 1;
                memcpy(d->devpath + len + 1, subsystem, slen);
        }
        d->included = dev > 0 && has > 0 && passes(e, d->devpath, d->subsystem, flags);

        if (hashmap_put(&e->seen, d->devpath, d->devpath_len, d) < 0) {
                free(d);
                return -ENOMEM;
        }
        if (d->included && list_append(e, d) < 0)
                return -ENOMEM; /* d is owned by the map already */
        *ret = d;
        return 0;
}

/* Probe every ancestor of devpath up to the sysfs root, stopping at the
 * first one whose own ancestors were walked before. */
static int walk_ancestors(struct device_enum *e, const char *devpath, unsigned flags)
{
        char path[PATH_MAX];
        size_t len = strlen(devpath);
        int r;

        if (len >= sizeof(path))
                return -ENAMETOOLONG;
        memcpy(path, devpath, len + 1);
        for (;;) {
                struct sysdev *p;

                while (len > 0 && path[len - 1] != '/')
                        len--;
                while (len > 0 && path[len - 1] == '/')
                        len--;
                if (len == 0)
                        return 0; /* the sysfs root itself is no device */
                path[len] = '\0';
                p = hashmap_get(&e->seen, path, len);
                if (!p) {
                        r = probe(e, path, len, flags, &p);
                        if (r < 0)
                                return r;
                } else if (p->ancestors_done)
                        return 0;
                p->ancestors_done = true;
        }
}

/* A candidate found by a scan; its record (new or old) in *ret. */
static int add_candidate(struct device_enum *e, const char *devpath, size_t len, unsigned flags,
                         struct sysdev **ret)
{
        struct sysdev *d = hashmap_get(&e->seen, devpath, len);
        int r = 0;

        if (!d)
                r = probe(e, devpath, len, flags, &d);
        *ret = d;
        return r;
}

/* An entry of a bus/class/module directory (its name passed the sysname
 * filter): listed if it passes the filters, and then its ancestors are
 * considered too. */
static int add_entry(struct device_enum *e, const char *devpath, size_t len)
{
        struct sysdev *d;
        int r = add_candidate(e, devpath, len, DEVICE_ENUM_CHECK_ALL & ~DEVICE_ENUM_CHECK_SYSNAME,
                              &d);

        if (r < 0)
                return r;
        if (!d->included || d->ancestors_done)
                return 0;
        d->ancestors_done = true;
        return walk_ancestors(e, d->devpath, DEVICE_ENUM_CHECK_ALL);
}

int device_enum_add_ancestors(struct device_enum *e, const char *devpath)
{
        return walk_ancestors(e, devpath, DEVICE_ENUM_CHECK_ALL & ~DEVICE_ENUM_CHECK_PARENT);
}

/* ---------------------------------------------------------------- scanning */

/* Resolve a relative symlink `target` found in directory `dir` (a devpath)
 * lexically; sysfs link targets are canonical paths. Length or -errno. */
static int resolve_link(const char *dir, const char *target, char *out, size_t size)
{
        size_t len = strlen(dir);

        if (target[0] == '/')
                return -EXDEV; /* sysfs links are relative */
        if (len >= size)
                return -ENAMETOOLONG;
        memcpy(out, dir, len + 1);
        for (const char *p = target; *p;) {
                size_t n = strcspn(p, "/");

                if (n == 2 && p[0] == '.' && p[1] == '.') {
                        if (len == 0)
                                return -EINVAL; /* above the sysfs root */
                        while (len > 0 && out[len - 1] != '/')
                                len--;
                        if (len > 0)
                                len--;
                        out[len] = '\0';
                } else if (n > 0 && !(n == 1 && p[0] == '.')) {
                        if (len + 1 + n >= size)
                                return -ENAMETOOLONG;
                        out[len++] = '/';
                        memcpy(out + len, p, n);
                        len += n;
                        out[len] = '\0';
                }
                p += n;
                p += strspn(p, "/");
        }
        return len > 0 ? (int)len : -EINVAL;
}

static DIR *open_dir(struct device_enum *e, const char *devpath)
{
        int fd = openat(e->root_fd, devpath[0] == '/' ? devpath + 1 : devpath,
                        O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d;

        if (fd < 0) {
                /* Necessarily racy: a vanished directory is fine. */
                if (errno != ENOENT)
                        remember_error(e, devpath, negative_errno());
                return NULL;
        }
        d = fdopendir(fd);
        if (!d) {
                remember_error(e, devpath, negative_errno());
                safe_close(fd);
        }
        return d;
}

static bool relevant_entry(const struct dirent *de)
{
        return de->d_name[0] != '.' && (de->d_type == DT_DIR || de->d_type == DT_LNK);
}

/* Every entry of directory `dir` (a devpath) is a device candidate. */
static int scan_entries(struct device_enum *e, const char *dir)
{
        _cleanup_(closedirp) DIR *d = open_dir(e, dir);
        char devpath[PATH_MAX], target[PATH_MAX];
        struct dirent *de;
        int r;

        if (!d)
                return 0;
        while ((errno = 0, de = readdir(d))) {
                int len;

                if (!relevant_entry(de) || !match_sysname(e, de->d_name))
                        continue;
                if (de->d_type == DT_LNK) {
                        ssize_t n = readlinkat(dirfd(d), de->d_name, target, sizeof(target) - 1);

                        if (n < 0) {
                                if (errno != ENOENT)
                                        remember_error(e, dir, negative_errno());
                                continue;
                        }
                        target[n] = '\0';
                        len = resolve_link(dir, target, devpath, sizeof(devpath));
                } else {
                        len = snprintf(devpath, sizeof(devpath), "%s/%s", dir, de->d_name);
                        if (len < 0 || (size_t)len >= sizeof(devpath))
                                len = -ENAMETOOLONG;
                }
                if (len < 0) {
                        remember_error(e, dir, len);
                        continue;
                }
                r = add_entry(e, devpath, (size_t)len);
                if (r < 0)
                        return r;
        }
        if (errno != 0)
                remember_error(e, dir, negative_errno());
        return 0;
}

/* For each <S> in `base` ("/bus", "/class") whose subsystem name
 * (`fixed_subsystem`, or else <S>) passes the filters: scan_entries() of
 * base/<S>[/subdir]. */
static int scan_subsystem_dirs(struct device_enum *e, const char *base, const char *subdir,
                               const char *fixed_subsystem)
{
        _cleanup_(closedirp) DIR *d = open_dir(e, base);
        char dir[PATH_MAX];
        struct dirent *de;
        int r;

        if (!d)
                return 0;
        while ((errno = 0, de = readdir(d))) {
                int n;

                if (!relevant_entry(de) || !match_subsystem(e, fixed_subsystem ?: de->d_name))
                        continue;
                n = snprintf(dir, sizeof(dir), "%s/%s%s%s", base, de->d_name, subdir ? "/" : "",
                             subdir ?: "");
                if (n < 0 || (size_t)n >= sizeof(dir))
                        continue;
                r = scan_entries(e, dir);
                if (r < 0)
                        return r;
        }
        if (errno != 0)
                remember_error(e, base, negative_errno());
        return 0;
}

static int scan_devices(struct device_enum *e)
{
        int r = scan_subsystem_dirs(e, "/bus", "devices", NULL);

        return r < 0 ? r : scan_subsystem_dirs(e, "/class", NULL, NULL);
}

static int scan_subsystems(struct device_enum *e)
{
        int r = 0;

        if (match_subsystem(e, "module"))
                r = scan_entries(e, "/module");
        if (r >= 0 && match_subsystem(e, "subsystem"))
                r = scan_entries(e, "/bus");
        if (r >= 0 && match_subsystem(e, "drivers"))
                r = scan_subsystem_dirs(e, "/bus", "drivers", "drivers");
        return r;
}

/* ---------------------------------------------------------------- crawling */

struct path_stack {
        char **items;
        size_t n, cap;
};

static int path_stack_push(struct path_stack *s, const char *path)
{
        char *copy = strdup(path);

        if (!copy)
                return -ENOMEM;
        if (s->n == s->cap) {
                size_t cap = s->cap ? s->cap * 2 : 64;
                char **n = realloc(s->items, cap * sizeof(*n));

                if (!n) {
                        free(copy);
                        return -ENOMEM;
                }
                s->items = n;
                s->cap = cap;
        }
        s->items[s->n++] = copy;
        return 0;
}

static void path_stack_done(struct path_stack *s)
{
        for (size_t i = 0; i < s->n; i++)
                free(s->items[i]);
        free(s->items);
}

/* The subdirectories of dir (symlinks are not followed): each one whose
 * name passes the sysname filter is a candidate, and all are crawled. */
static int crawl_dir(struct device_enum *e, const char *dir, struct path_stack *stack)
{
        _cleanup_(closedirp) DIR *d = open_dir(e, dir);
        char path[PATH_MAX];
        struct dirent *de;
        int r;

        if (!d)
                return 0;
        while ((errno = 0, de = readdir(d))) {
                struct sysdev *dev;
                int n;

                if (de->d_name[0] == '.' || de->d_type != DT_DIR)
                        continue;
                n = snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
                if (n < 0 || (size_t)n >= sizeof(path))
                        continue;
                if (match_sysname(e, de->d_name)) {
                        r = add_candidate(e, path, (size_t)n,
                                          DEVICE_ENUM_CHECK_ALL & ~(DEVICE_ENUM_CHECK_SYSNAME |
                                                                    DEVICE_ENUM_CHECK_PARENT),
                                          &dev);
                        if (r < 0)
                                return r;
                }
                r = path_stack_push(stack, path);
                if (r < 0)
                        return r;
        }
        if (errno != 0)
                remember_error(e, dir, negative_errno());
        return 0;
}

/* Each parent itself, and everything below it. */
static int scan_children(struct device_enum *e)
{
        const struct device_enum_filter *f = e->filter;
        struct path_stack stack = {};
        int r = 0;

        for (size_t i = 0; r >= 0 && i < f->n_parents; i++) {
                struct sysdev *dev;

                r = add_candidate(e, f->parents[i], strlen(f->parents[i]),
                                  DEVICE_ENUM_CHECK_ALL & ~DEVICE_ENUM_CHECK_PARENT, &dev);
                if (r >= 0)
                        r = crawl_dir(e, f->parents[i], &stack);
        }
        while (r >= 0 && stack.n > 0) {
                char *dir = stack.items[--stack.n];

                r = crawl_dir(e, dir, &stack);
                free(dir);
        }
        path_stack_done(&stack);
        return r;
}

/* The devices of one tag directory of the udev database. */
static int scan_tag(struct device_enum *e, const char *tag)
{
        const struct device_enum_filter *f = e->filter;
        _cleanup_(closedirp) DIR *d = NULL;
        char path[PATH_MAX];
        struct dirent *de;
        int r;

        r = snprintf(path, sizeof(path), "%s/%s", f->tags_dir, tag);
        if (r < 0 || (size_t)r >= sizeof(path) || strchr(tag, '/'))
                return 0; /* no such tag directory */
        d = opendir(path);
        if (!d) {
                if (errno != ENOENT)
                        remember_error(e, path, negative_errno());
                return 0;
        }
        while ((errno = 0, de = readdir(d))) {
                struct sysdev *dev;

                if (de->d_name[0] == '.')
                        continue;
                r = f->resolve_id(f->userdata, de->d_name, path, sizeof(path));
                if (r < 0)
                        remember_error(e, de->d_name, r);
                if (r <= 0)
                        continue;
                r = add_candidate(e, path, strlen(path),
                                  DEVICE_ENUM_CHECK_ALL & ~DEVICE_ENUM_CHECK_TAGS, &dev);
                if (r < 0)
                        return r;
        }
        if (errno != 0)
                remember_error(e, f->tags_dir, negative_errno());
        return 0;
}

static int scan_tags(struct device_enum *e)
{
        const struct device_enum_filter *f = e->filter;
        int r = 0;

        if (!f->resolve_id || !f->tags_dir)
                return -EINVAL;
        for (size_t i = 0; r >= 0 && i < f->n_tags; i++)
                r = scan_tag(e, f->tags[i]);
        return r;
}

int device_enum_scan(struct device_enum *e, enum device_enum_type type)
{
        int r = 0;

        if (type != DEVICE_ENUM_SUBSYSTEMS && e->filter->n_tags > 0)
                r = scan_tags(e);
        else if (type != DEVICE_ENUM_SUBSYSTEMS && e->filter->n_parents > 0)
                r = scan_children(e);
        else if (type == DEVICE_ENUM_DEVICES || type == DEVICE_ENUM_ALL)
                r = scan_devices(e);
        if (r >= 0 && (type == DEVICE_ENUM_SUBSYSTEMS ||
                       (type == DEVICE_ENUM_ALL && e->filter->n_tags == 0 &&
                        e->filter->n_parents == 0)))
                r = scan_subsystems(e);
        if (r < 0)
                return r;
        return e->error;
}

/* ---------------------------------------------------------------- sorting */

static void batch_add(struct sysdev **out, size_t *n, struct sysdev *d)
{
        d->batched = true;
        out[(*n)++] = d;
}

/* The device and every listed ancestor not placed yet. */
static void batch_add_with_ancestors(struct device_enum *e, struct sysdev **out, size_t *n,
                                     struct sysdev *d)
{
        size_t len = d->devpath_len;

        batch_add(out, n, d);
        for (;;) {
                struct sysdev *p;

                while (len > 0 && d->devpath[len - 1] != '/')
                        len--;
                while (len > 0 && d->devpath[len - 1] == '/')
                        len--;
                if (len == 0)
                        return;
                p = hashmap_get(&e->seen, d->devpath, len);
                if (p && p->included && !p->batched)
                        batch_add(out, n, p);
        }
}

int device_enum_sort(struct device_enum *e, const char *const *prioritized, size_t n_prioritized)
{
        struct sysdev **out;
        size_t n = 0, start;

        if (e->n_devs == 0)
                return 0;
        out = malloc(e->n_devs * sizeof(*out));
        if (!out)
                return -ENOMEM;
        for (size_t i = 0; i < e->n_devs; i++)
                e->devs[i]->batched = false;
        for (size_t p = 0; p < n_prioritized; p++) {
                start = n;
                for (size_t i = 0; i < e->n_devs; i++) {
                        struct sysdev *d = e->devs[i];

                        if (!d->batched && streq(d->subsystem, prioritized[p]))
                                batch_add_with_ancestors(e, out, &n, d);
                }
                qsort_r(out + start, n - start, sizeof(*out), sysdev_compare, e);
        }
        start = n;
        for (size_t i = 0; i < e->n_devs; i++)
                if (!e->devs[i]->batched)
                        batch_add(out, &n, e->devs[i]);
        qsort_r(out + start, n - start, sizeof(*out), sysdev_compare, e);

        free(e->devs);
        e->devs = out;
        e->cap_devs = e->n_devs;
        return 0;
}

/* ---------------------------------------------------------------- lifetime */

int device_enum_init(struct device_enum *e, const char *root,
                     const struct device_enum_filter *filter)
{
        *e = (struct device_enum){ .filter = filter };
        hashmap_init(&e->seen);
        e->root_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (e->root_fd < 0)
                return negative_errno();
        return 0;
}

void device_enum_done(struct device_enum *e)
{
        hashmap_deinit_free_values(&e->seen);
        free(e->devs);
        e->devs = NULL;
        e->n_devs = e->cap_devs = 0;
        e->root_fd = safe_close(e->root_fd);
}
