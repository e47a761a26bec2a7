/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: manager (start-up before any other thread; device_forget also from the resync) */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "device/db.h"
#include "device/node.h"
#include "shared/fileio.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "udevd/run-repair.h"

#define DEV_WALK_DEPTH_MAX 16     /* /dev directory levels searched for temp files */
#define IFINDEX_FILE_MAX 64       /* bytes of <sys>/class/net/X/ifindex read */
#define NET_IFACES_MAX (1u << 20) /* interface indexes remembered */
#define STACK_ENTRIES_MAX 4096    /* claimants of one link considered */
#define STACK_TARGET_MAX (NODE_PATH_MAX + 16)

static void closedirp(DIR **d)
{
        if (*d)
                closedir(*d);
}
#define _cleanup_closedir_ _cleanup_(closedirp)

static int path_fmt(char *buf, size_t size, const char *fmt, ...) _printf_(3, 4);
static int path_fmt(char *buf, size_t size, const char *fmt, ...)
{
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vsnprintf(buf, size, fmt, ap);
        va_end(ap);
        return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

static bool path_exists(const char *path)
{
        struct stat st;
        return lstat(path, &st) >= 0;
}

bool is_atomic_temp_name(const char *name)
{
        size_t n = strlen(name);

        if (n < 2 + 1 + 16 || name[0] != '.' || name[1] != '#')
                return false;
        return strspn(name + n - 16, "0123456789abcdef") == 16;
}

/* ---- existence of a device from its id ---- */

struct sysfs_presence {
        char sys[PATH_MAX];
        bool have_net; /* <sys>/class/net could be read */
        int *ifindexes; /* sorted */
        size_t n_ifindexes;
};

static int cmp_int(const void *a, const void *b)
{
        int x = *(const int *)a, y = *(const int *)b;
        return (x > y) - (x < y);
}

/* sysfs attributes claim a size of 4096: read at most what we need. */
static int read_ifindex(int netfd, const char *name)
{
        char path[NAME_MAX + 16], buf[IFINDEX_FILE_MAX];
        _cleanup_close_ int fd = -1;
        ssize_t n;
        char *end;
        long v;

        if (path_fmt(path, sizeof(path), "%s/ifindex", name) < 0)
                return -ENAMETOOLONG;
        fd = openat(netfd, path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        n = read(fd, buf, sizeof(buf) - 1);
        if (n <= 0)
                return -EIO;
        buf[n] = '\0';
        errno = 0;
        v = strtol(buf, &end, 10);
        if (errno || end == buf || (*end && *end != '\n') || v <= 0 || v > INT_MAX)
                return -EINVAL;
        return (int)v;
}

static int load_ifindexes(struct sysfs_presence *p)
{
        char path[PATH_MAX];
        _cleanup_closedir_ DIR *dir = NULL;
        struct dirent *de;
        size_t cap = 0;

        if (path_fmt(path, sizeof(path), "%s/class/net", p->sys) < 0)
                return -ENAMETOOLONG;
        dir = opendir(path);
        if (!dir)
                return errno == ENOENT ? 0 : -errno;
        while ((de = readdir(dir))) {
                if (de->d_name[0] == '.')
                        continue;
                int idx = read_ifindex(dirfd(dir), de->d_name);
                if (idx <= 0)
                        continue;
                if (p->n_ifindexes == cap) {
                        size_t ncap = cap ? 2 * cap : 64;
                        if (ncap > NET_IFACES_MAX)
                                return -E2BIG;
                        int *n = realloc(p->ifindexes, ncap * sizeof(int));
                        if (!n)
                                return -ENOMEM;
                        p->ifindexes = n;
                        cap = ncap;
                }
                p->ifindexes[p->n_ifindexes++] = idx;
        }
        if (p->n_ifindexes > 0)
                qsort(p->ifindexes, p->n_ifindexes, sizeof(int), cmp_int);
        p->have_net = true;
        return 0;
}

int sysfs_presence_new(const char *sys_root, struct sysfs_presence **ret)
{
        struct sysfs_presence *p = calloc(1, sizeof(*p));
        int r;

        if (!p)
                return -ENOMEM;
        if (path_fmt(p->sys, sizeof(p->sys), "%s", sys_root) < 0) {
                free(p);
                return -ENAMETOOLONG;
        }
        r = load_ifindexes(p);
        if (r < 0)
                log_debug_errno(r, "Failed to read the interface indexes, ignoring: %m");
        *ret = p;
        return 0;
}

void sysfs_presence_free(struct sysfs_presence *p)
{
        if (!p)
                return;
        free(p->ifindexes);
        free(p);
}

/* "M:m" -> numbers; false if malformed. */
static bool parse_devnum(const char *s, unsigned *major, unsigned *minor)
{
        char *end;
        unsigned long a, b;

        if (*s < '0' || *s > '9')
                return false;
        errno = 0;
        a = strtoul(s, &end, 10);
        if (errno || *end != ':' || a > UINT_MAX || end[1] < '0' || end[1] > '9')
                return false;
        b = strtoul(end + 1, &end, 10);
        if (errno || *end || b > UINT_MAX)
                return false;
        *major = (unsigned)a;
        *minor = (unsigned)b;
        return true;
}

static enum presence presence_devnum(const struct sysfs_presence *p, const char *id)
{
        const char *kind = id[0] == 'b' ? "block" : "char";
        char path[PATH_MAX], dir[PATH_MAX];
        unsigned major, minor;

        if (!parse_devnum(id + 1, &major, &minor) || major == 0)
                return PRESENCE_UNKNOWN;
        if (path_fmt(path, sizeof(path), "%s/dev/%s/%u:%u", p->sys, kind, major, minor) < 0 ||
            path_fmt(dir, sizeof(dir), "%s/dev/%s", p->sys, kind) < 0)
                return PRESENCE_UNKNOWN;
        if (path_exists(path))
                return PRESENCE_PRESENT;
        return errno == ENOENT && path_exists(dir) ? PRESENCE_GONE : PRESENCE_UNKNOWN;
}

static enum presence presence_ifindex(const struct sysfs_presence *p, const char *id)
{
        char *end;
        long v;

        errno = 0;
        v = strtol(id + 1, &end, 10);
        if (errno || end == id + 1 || *end || v <= 0 || v > INT_MAX || !p->have_net)
                return PRESENCE_UNKNOWN;
        int key = (int)v;
        return bsearch(&key, p->ifindexes, p->n_ifindexes, sizeof(int), cmp_int)
                       ? PRESENCE_PRESENT
                       : PRESENCE_GONE;
}

static bool name_is_plain(const char *s, size_t n)
{
        if (n == 0 || memchr(s, '/', n))
                return false;
        return !(n == 1 && s[0] == '.') && !(n == 2 && s[0] == '.' && s[1] == '.');
}

/* Up to 3 candidate paths (and their parent directories) for "+subsystem:sysname". */
static enum presence presence_subsystem(const struct sysfs_presence *p, const char *id)
{
        const char *sub = id + 1, *colon = strchr(sub, ':');
        char paths[3][PATH_MAX], parents[3][PATH_MAX];
        size_t n = 0;
        bool parent_seen = false;

        if (!colon || !name_is_plain(sub, (size_t)(colon - sub)))
                return PRESENCE_UNKNOWN;
        const char *name = colon + 1;
        int sl = (int)(colon - sub);
        if (sl == 7 && strneq(sub, "drivers", 7)) {
                const char *c2 = strchr(name, ':');
                if (!c2 || !name_is_plain(name, (size_t)(c2 - name)) ||
                    !name_is_plain(c2 + 1, strlen(c2 + 1)))
                        return PRESENCE_UNKNOWN;
                if (path_fmt(parents[n], PATH_MAX, "%s/bus/%.*s/drivers", p->sys,
                             (int)(c2 - name), name) < 0 ||
                    path_fmt(paths[n], PATH_MAX, "%s/%s", parents[n], c2 + 1) < 0)
                        return PRESENCE_UNKNOWN;
                n++;
        } else {
                if (!name_is_plain(name, strlen(name)))
                        return PRESENCE_UNKNOWN;
                if (path_fmt(parents[n], PATH_MAX, "%s/bus/%.*s/devices", p->sys, sl, sub) >= 0 &&
                    path_fmt(paths[n], PATH_MAX, "%s/%s", parents[n], name) >= 0)
                        n++;
                if (path_fmt(parents[n], PATH_MAX, "%s/class/%.*s", p->sys, sl, sub) >= 0 &&
                    path_fmt(paths[n], PATH_MAX, "%s/%s", parents[n], name) >= 0)
                        n++;
                if (sl == 6 && strneq(sub, "module", 6) &&
                    path_fmt(parents[n], PATH_MAX, "%s/module", p->sys) >= 0 &&
                    path_fmt(paths[n], PATH_MAX, "%s/%s", parents[n], name) >= 0)
                        n++;
        }
        for (size_t i = 0; i < n; i++) {
                if (path_exists(paths[i]))
                        return PRESENCE_PRESENT;
                if (path_exists(parents[i]))
                        parent_seen = true;
        }
        return parent_seen ? PRESENCE_GONE : PRESENCE_UNKNOWN;
}

enum presence sysfs_presence_of_id(const struct sysfs_presence *p, const char *id)
{
        switch (id[0]) {
        case 'b':
        case 'c':
                return presence_devnum(p, id);
        case 'n':
                return presence_ifindex(p, id);
        case '+':
                return presence_subsystem(p, id);
        default:
                return PRESENCE_UNKNOWN;
        }
}

/* ---- forgetting a device ---- */

/* The node identity derivable from an id alone: devnum and block/char. */
static void node_device_from_id(const char *id, const char *devnode, struct node_device *ret)
{
        *ret = (struct node_device){ .id = id, .devnode = devnode ? devnode : "" };
        if ((id[0] == 'b' || id[0] == 'c') && parse_devnum(id + 1, &ret->major, &ret->minor))
                ret->subsystem = id[0] == 'b' ? "block" : NULL;
        else
                ret->major = ret->minor = 0;
}

int device_forget(const struct device_roots *roots, const char *id)
{
        struct db_record rec = {};
        struct node_device nd;
        int r;

        r = db_read(roots->run, id, &rec);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                log_warning_errno(r, "%s: unreadable database record, deleting it: %m", id);
        r = tags_index_remove(roots->run, id, &rec.tags);
        if (r < 0)
                log_debug_errno(r, "%s: failed to remove tag index entries: %m", id);
        node_device_from_id(id, NULL, &nd);
        r = node_remove(roots, &nd, &rec.devlinks);
        if (r < 0)
                log_debug_errno(r, "%s: failed to remove its links: %m", id);
        db_record_clear(&rec);
        r = db_delete(roots->run, id);
        if (r < 0)
                return log_warning_errno(r, "%s: failed to delete the database record: %m", id);
        return 0;
}

/* ---- step 2: temporary files ---- */

static unsigned remove_temps_in(int dfd, const char *what, bool want_symlink)
{
        _cleanup_closedir_ DIR *dir = opendir_dup(dfd);
        struct dirent *de;
        unsigned n = 0;

        if (!dir)
                return 0;
        while ((de = readdir(dir))) {
                struct stat st;
                if (!is_atomic_temp_name(de->d_name) ||
                    fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                if (want_symlink ? !S_ISLNK(st.st_mode) : !S_ISREG(st.st_mode))
                        continue;
                if (unlinkat(dfd, de->d_name, 0) < 0) {
                        log_debug_errno(errno, "Failed to remove %s/%s: %m", what, de->d_name);
                        continue;
                }
                log_debug("Removed leftover temporary file %s/%s", what, de->d_name);
                n++;
        }
        return n;
}

/* Temporary symlinks of the link code anywhere in /dev (one file system). */
static unsigned remove_dev_temps(int dfd, dev_t dev, const char *what, unsigned depth)
{
        _cleanup_closedir_ DIR *dir = NULL;
        struct dirent *de;
        unsigned n = remove_temps_in(dfd, what, true);

        if (depth >= DEV_WALK_DEPTH_MAX || !(dir = opendir_dup(dfd)))
                return n;
        while ((de = readdir(dir))) {
                struct stat st;
                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
                        continue;
                if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                    !S_ISDIR(st.st_mode) || st.st_dev != dev)
                        continue;
                _cleanup_close_ int sub = openat(dfd, de->d_name,
                                                 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (sub < 0)
                        continue;
                char sub_what[PATH_MAX];
                if (path_fmt(sub_what, sizeof(sub_what), "%s/%s", what, de->d_name) < 0)
                        continue;
                n += remove_dev_temps(sub, dev, sub_what, depth + 1);
        }
        return n;
}

static unsigned repair_temp_files(const struct device_roots *roots)
{
        char path[PATH_MAX];
        unsigned n = 0;
        struct stat st;

        if (path_fmt(path, sizeof(path), "%s/data", roots->run) >= 0) {
                _cleanup_close_ int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (fd >= 0)
                        n += remove_temps_in(fd, path, false);
        }
        _cleanup_close_ int dfd = open(roots->dev, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0 && fstat(dfd, &st) >= 0)
                n += remove_dev_temps(dfd, st.st_dev, roots->dev, 0);
        return n;
}

/* ---- step 3: records of vanished devices ---- */

/* The names in a directory (not starting with '.'), into `out`. */
static int list_dir(const char *path, struct strlist *out)
{
        _cleanup_closedir_ DIR *dir = opendir(path);
        struct dirent *de;

        if (!dir)
                return errno == ENOENT ? 0 : -errno;
        while ((de = readdir(dir)))
                if (de->d_name[0] != '.' && strlist_add(out, de->d_name) < 0)
                        return -ENOMEM;
        return 0;
}

static unsigned repair_records(const struct device_roots *roots, struct sysfs_presence *pres)
{
        struct strlist ids = {};
        char path[PATH_MAX];
        unsigned n = 0;

        if (path_fmt(path, sizeof(path), "%s/data", roots->run) < 0 || list_dir(path, &ids) < 0) {
                strlist_clear(&ids);
                return 0;
        }
        for (size_t i = 0; i < ids.n; i++) {
                if (sysfs_presence_of_id(pres, ids.items[i]) != PRESENCE_GONE)
                        continue;
                log_debug("%s: device vanished while udevd was not running, forgetting it",
                          ids.items[i]);
                if (device_forget(roots, ids.items[i]) >= 0)
                        n++;
        }
        strlist_clear(&ids);
        return n;
}

/* ---- step 4: tag index ---- */

static bool record_exists(const struct device_roots *roots, const char *id)
{
        char path[PATH_MAX];

        if (path_fmt(path, sizeof(path), "%s/data/%s", roots->run, id) < 0)
                return true; /* cannot tell: keep */
        return path_exists(path) || errno != ENOENT;
}

static unsigned repair_tags(const struct device_roots *roots)
{
        struct strlist tags = {};
        char path[PATH_MAX];
        unsigned n = 0;

        if (path_fmt(path, sizeof(path), "%s/tags", roots->run) < 0 || list_dir(path, &tags) < 0) {
                strlist_clear(&tags);
                return 0;
        }
        for (size_t i = 0; i < tags.n; i++) {
                char tdir[PATH_MAX];
                struct strlist ids = {};
                if (path_fmt(tdir, sizeof(tdir), "%s/%s", path, tags.items[i]) < 0 ||
                    list_dir(tdir, &ids) < 0) {
                        strlist_clear(&ids);
                        continue;
                }
                for (size_t j = 0; j < ids.n; j++) {
                        char entry[PATH_MAX];
                        if (record_exists(roots, ids.items[j]) ||
                            path_fmt(entry, sizeof(entry), "%s/%s", tdir, ids.items[j]) < 0)
                                continue;
                        if (unlink(entry) >= 0)
                                n++;
                }
                strlist_clear(&ids);
        }
        strlist_clear(&tags);
        return n;
}

/* ---- step 5: link stacks ---- */

struct claimant {
        char id[NAME_MAX + 1];
        char devnode[NODE_PATH_MAX]; /* "" if the entry does not say */
        int priority;
        int64_t ctime_ns;
        bool listed; /* the device's record lists the link */
};

struct stack {
        char name[NODE_STACK_NAME_MAX + 1];
        char link[NODE_PATH_MAX]; /* logical "/dev/...", "" if unknown */
        struct claimant *c;
        size_t n;
};

/* Undo the escaping of node_stack_dir_name(); true if `name` is exactly the
 * stack directory of the result (not a hashed long name). */
static bool stack_name_to_link(const char *name, char *out, size_t size)
{
        char check[NODE_STACK_NAME_MAX + 1];
        size_t o = STRLEN("/dev/");

        if (size <= o)
                return false;
        memcpy(out, "/dev/", o);
        for (const char *p = name; *p; p++) {
                char c = *p;
                if (strneq(p, "\\x2f", 4) || strneq(p, "\\x5c", 4)) {
                        c = p[3] == 'f' ? '/' : '\\';
                        p += 3;
                }
                if (o + 1 >= size)
                        return false;
                out[o++] = c;
        }
        out[o] = '\0';
        return node_stack_dir_name(out, check, sizeof(check)) >= 0 && streq(check, name);
}

static bool record_lists_link(const struct db_record *rec, const char *link)
{
        char norm[NODE_PATH_MAX];

        for (size_t i = 0; i < rec->devlinks.n; i++)
                if (node_link_normalize(rec->devlinks.items[i], norm, sizeof(norm)) >= 0 &&
                    streq(norm, link))
                        return true;
        return false;
}

/* A hashed stack name: find the link among the claimants' records. */
static void stack_link_from_records(const struct device_roots *roots, struct stack *s)
{
        for (size_t i = 0; i < s->n && !s->link[0]; i++) {
                struct db_record rec = {};
                if (db_read(roots->run, s->c[i].id, &rec) < 0)
                        continue;
                for (size_t j = 0; j < rec.devlinks.n && !s->link[0]; j++) {
                        char name[NODE_STACK_NAME_MAX + 1], norm[NODE_PATH_MAX];
                        if (node_link_normalize(rec.devlinks.items[j], norm, sizeof(norm)) >= 0 &&
                            node_stack_dir_name(norm, name, sizeof(name)) >= 0 &&
                            streq(name, s->name))
                                snprintf(s->link, sizeof(s->link), "%s", norm);
                }
                db_record_clear(&rec);
        }
}

/* "<prio>:<devnode>" -> claimant fields; an unreadable entry keeps devnode "". */
static void claimant_read(int dfd, struct claimant *c)
{
        char buf[STACK_TARGET_MAX];
        struct stat st;
        ssize_t n;
        char *colon, *end;
        long prio;

        if (fstatat(dfd, c->id, &st, AT_SYMLINK_NOFOLLOW) >= 0)
                c->ctime_ns = (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec;
        n = readlinkat(dfd, c->id, buf, sizeof(buf) - 1);
        if (n <= 0)
                return;
        buf[n] = '\0';
        colon = strchr(buf, ':');
        if (!colon || colon == buf || strlen(colon + 1) >= sizeof(c->devnode))
                return;
        *colon = '\0';
        errno = 0;
        prio = strtol(buf, &end, 10);
        if (errno || *end || prio < INT_MIN || prio > INT_MAX)
                return;
        c->priority = (int)prio;
        snprintf(c->devnode, sizeof(c->devnode), "%s", colon + 1);
}

static int stack_load(const struct device_roots *roots, const char *name, struct stack *s)
{
        char path[PATH_MAX];
        _cleanup_closedir_ DIR *dir = NULL;
        struct dirent *de;
        size_t cap = 0;

        snprintf(s->name, sizeof(s->name), "%s", name);
        if (!stack_name_to_link(name, s->link, sizeof(s->link)))
                s->link[0] = '\0';
        if (path_fmt(path, sizeof(path), "%s/links/%s", roots->run, name) < 0)
                return -ENAMETOOLONG;
        dir = opendir(path);
        if (!dir)
                return -errno;
        while ((de = readdir(dir))) {
                if (de->d_name[0] == '.')
                        continue;
                if (s->n == cap) {
                        size_t ncap = cap ? 2 * cap : 8;
                        if (ncap > STACK_ENTRIES_MAX)
                                break;
                        struct claimant *c = realloc(s->c, ncap * sizeof(*c));
                        if (!c)
                                return -ENOMEM;
                        s->c = c;
                        cap = ncap;
                }
                struct claimant *c = &s->c[s->n++];
                *c = (struct claimant){};
                snprintf(c->id, sizeof(c->id), "%s", de->d_name);
                claimant_read(dirfd(dir), c);
        }
        if (!s->link[0])
                stack_link_from_records(roots, s);
        return 0;
}

static void stack_mark_listed(const struct device_roots *roots, struct stack *s)
{
        for (size_t i = 0; i < s->n; i++) {
                struct db_record rec = {};
                s->c[i].listed = db_read(roots->run, s->c[i].id, &rec) >= 0 &&
                                 record_lists_link(&rec, s->link);
                db_record_clear(&rec);
        }
}

static int dev_path_of(const struct device_roots *roots, const char *link, char *out, size_t size)
{
        return path_fmt(out, size, "%s%s", roots->dev, link + STRLEN("/dev"));
}

static bool devnode_exists(const struct device_roots *roots, const char *devnode)
{
        char path[PATH_MAX];

        return devnode[0] && strneq(devnode, "/dev/", 5) &&
               dev_path_of(roots, devnode, path, sizeof(path)) >= 0 && access(path, F_OK) >= 0;
}

/* The best valid claimant (highest priority, then newest entry), or NULL. */
static const struct claimant *stack_best(const struct device_roots *roots, const struct stack *s)
{
        const struct claimant *best = NULL;

        for (size_t i = 0; i < s->n; i++) {
                const struct claimant *c = &s->c[i];
                if (!c->listed || !devnode_exists(roots, c->devnode))
                        continue;
                if (!best || c->priority > best->priority ||
                    (c->priority == best->priority && c->ctime_ns > best->ctime_ns))
                        best = c;
        }
        return best;
}

/* Drop a claim; through the link code (which re-resolves the link) unless
 * something that is not a symlink sits at the link's path. */
static bool release_claim(const struct device_roots *roots, const struct stack *s,
                          const struct claimant *c, bool foreign)
{
        char path[PATH_MAX];
        struct node_device nd;

        log_debug("%s: claim by %s has no database record listing it, releasing", s->link,
                  c->id);
        if (foreign)
                return path_fmt(path, sizeof(path), "%s/links/%s/%s", roots->run, s->name,
                                c->id) >= 0 && unlink(path) >= 0;
        node_device_from_id(c->id, c->devnode, &nd);
        return node_link_update(roots, &nd, s->link, false) >= 0;
}

/* 0: nothing at the path, 1: a symlink, -1: something else (or unknown). */
static int link_kind(const char *path)
{
        struct stat st;

        if (lstat(path, &st) < 0)
                return errno == ENOENT ? 0 : -1;
        return S_ISLNK(st.st_mode) ? 1 : -1;
}

static void repair_stack(const struct device_roots *roots, const char *name,
                         struct run_repair_stats *st)
{
        struct stack s = {};
        char path[PATH_MAX];
        struct stat tst;
        struct node_device nd;
        bool any_valid = false;
        int kind;

        if (stack_load(roots, name, &s) < 0 || !s.link[0] ||
            dev_path_of(roots, s.link, path, sizeof(path)) < 0) {
                if (!s.link[0])
                        log_debug("links/%s: cannot tell which link it is, leaving it alone",
                                  name);
                free(s.c);
                return;
        }
        stack_mark_listed(roots, &s);
        kind = link_kind(path);
        for (size_t i = 0; i < s.n; i++) {
                if (s.c[i].listed)
                        any_valid = true;
                else if (release_claim(roots, &s, &s.c[i], kind < 0))
                        st->stale_claims++;
        }
        kind = link_kind(path);
        if (kind < 0)
                goto done; /* not ours to touch */
        bool live = kind > 0 && stat(path, &tst) >= 0;
        const struct claimant *best = any_valid && !live ? stack_best(roots, &s) : NULL;
        if (best) {
                node_device_from_id(best->id, best->devnode, &nd);
                nd.priority = best->priority;
                if (node_link_update(roots, &nd, s.link, true) >= 0) {
                        log_debug("%s: pointed at %s again", s.link, best->devnode);
                        st->links_resolved++;
                }
        } else if (kind > 0 && (!live || !any_valid)) {
                /* dangling, or nobody claims it: a release by nobody scans the
                 * stack and removes the symlink */
                node_device_from_id("", NULL, &nd);
                if (node_link_update(roots, &nd, s.link, false) >= 0 && link_kind(path) == 0) {
                        log_debug("%s: no usable claimant left, removed", s.link);
                        st->links_removed++;
                }
        }
done:
        free(s.c);
}

static void repair_links(const struct device_roots *roots, struct run_repair_stats *st)
{
        struct strlist names = {};
        char path[PATH_MAX];

        if (path_fmt(path, sizeof(path), "%s/links", roots->run) >= 0 &&
            list_dir(path, &names) >= 0)
                for (size_t i = 0; i < names.n; i++)
                        repair_stack(roots, names.items[i], st);
        strlist_clear(&names);
}

/* ---- all steps ---- */

int run_repair(const struct device_roots *roots, struct run_repair_stats *ret)
{
        struct run_repair_stats st = {};
        struct sysfs_presence *pres = NULL;
        char path[PATH_MAX];
        int r;

        if (path_fmt(path, sizeof(path), "%s/queue", roots->run) >= 0 && unlink(path) >= 0)
                st.queue_flag = 1;
        st.temp_files = repair_temp_files(roots);
        r = sysfs_presence_new(roots->sys, &pres);
        if (r >= 0) {
                st.stale_records = repair_records(roots, pres);
                sysfs_presence_free(pres);
        }
        st.stale_tags = repair_tags(roots);
        repair_links(roots, &st);
        if (st.queue_flag || st.temp_files || st.stale_records || st.stale_tags ||
            st.stale_claims || st.links_resolved || st.links_removed)
                log_info("Repaired the state of an unclean shutdown: queue flag %u, temporary "
                         "files %u, records of vanished devices %u, orphaned tag entries %u, "
                         "stale link claims %u, links re-resolved %u, links removed %u",
                         st.queue_flag, st.temp_files, st.stale_records, st.stale_tags,
                         st.stale_claims, st.links_resolved, st.links_removed);
        if (ret)
                *ret = st;
        return 0;
}
