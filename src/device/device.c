/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: worker-local (a device_ctx and its devices belong to one thread) */
/* The lazily read sysfs device view (device/device.h).
 *
 * Facts replicated from sd-device (systemd 252):
 *  - a device made from a path is the canonical (symlink-free) directory; below
 *    <sys>/devices it must contain "uevent", elsewhere any directory will do
 *    (drivers, modules, /sys/bus/<x>, /sys/class/<x>);
 *  - the parent is the nearest ancestor that qualifies by the same rule, the
 *    walk ends before <sys> (so below <sys>/devices it ends at <sys>/devices);
 *  - the event device never reads its uevent file: devtype, devnum, devnode,
 *    ifindex and driver come from the kernel record (driver falls back to the
 *    "driver" link when the record has none);
 *  - other devices read their uevent file once: DEVTYPE, DEVNAME, IFINDEX,
 *    MAJOR/MINOR are interpreted, every line is a property, MAJOR/MINOR are
 *    listed last, an unterminated last line is ignored;
 *  - subsystem = basename of the "subsystem" link, else "module" below
 *    /module/, "drivers" for driver directories, "subsystem" below /class/ or
 *    /bus/;
 *  - sysattr reads (the rules are at device_get_sysattr() in device.h), cached
 *    per device (failures too).
 *
 * Devnodes are made absolute under roots.dev (= "/dev" in the daemon). */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "device/device.h"
#include "shared/log.h"
#include "shared/macro.h"

#define DEVICE_CTX_DEVICES_MAX 4096   /* devices one context may hold */
#define DEVICE_SYSATTR_CACHE_MAX 1024 /* cached attributes per device */
#define DEVICE_UEVENT_FILE_MAX 8192   /* kernel: one page */
#define DEVICE_UEVENT_PROPS_MAX UEVENT_PROPS_MAX
#define DEVICE_NAME_MAX 255           /* one path component */

struct device_prop {
        const char *key;
        const char *value;
};

struct sysattr_entry {
        char *name;
        char *value; /* NULL on error */
        int error;
};

/* Lazily computed value: state 0 = not yet, 1 = done (error or value). */
struct device {
        struct device_ctx *ctx;
        char *syspath;       /* owned: <sys> + devpath */
        const char *devpath; /* into syspath */
        char *sysname;       /* owned, '!' replaced by '/' */
        const char *sysnum;  /* into sysname, or NULL */
        const struct uevent *uevent; /* event device: borrowed kernel record */

        bool subsystem_done;
        int subsystem_error;
        const char *subsystem; /* record or subsystem_buf */
        char *subsystem_buf;

        bool driver_done;
        int driver_error;
        const char *driver; /* record or driver_buf */
        char *driver_buf;

        /* Kernel properties and what is derived from them. */
        bool props_done;
        int props_error;
        char *uevent_buf;          /* owned copy of the uevent file (others) */
        struct device_prop *props; /* owned array */
        size_t n_props;
        const char *devtype;
        char *devnode;             /* owned, absolute under roots.dev */
        unsigned major, minor;
        int ifindex;
        bool devnum_done;

        bool id_done;
        int id_error;
        char id[UEVENT_ID_MAX];

        bool parent_done;
        int parent_error;
        struct device *parent;

        bool db_done;
        int db_error;
        struct db_record db;

        struct sysattr_entry *attrs;
        size_t n_attrs, cap_attrs;
};

struct device_ctx {
        struct device_roots roots; /* point into the owned strings below */
        char *sys, *dev, *run;
        size_t sys_len;
        char *sys_real; /* canonical path of roots.sys, computed on first use */
        struct device **devices;
        size_t n_devices, cap_devices;
};

/* ------------------------------------------------------------------ helpers */

static char *root_dup(const char *s, const char *fallback)
{
        size_t n;
        char *p;

        if (!s || !*s)
                s = fallback;
        n = strlen(s);
        while (n > 1 && s[n - 1] == '/')
                n--;
        p = strndup(s, n);
        return p;
}

/* "a" + "/" + "b" into buf. */
static int join2(char *buf, size_t size, const char *a, const char *b)
{
        int n = snprintf(buf, size, "%s/%s", a, b);

        if (n < 0)
                return -EINVAL;
        if ((size_t)n >= size)
                return -ENAMETOOLONG;
        return 0;
}

/* Basename of a symlink's target. */
static int readlink_basename(const char *path, char **ret)
{
        char buf[PATH_MAX];
        const char *base;
        ssize_t n;

        n = readlink(path, buf, sizeof(buf));
        if (n < 0)
                return negative_errno();
        if ((size_t)n >= sizeof(buf))
                return -ENAMETOOLONG;
        buf[n] = '\0';
        while (n > 1 && buf[n - 1] == '/')
                buf[--n] = '\0';
        base = strrchr(buf, '/');
        base = base ? base + 1 : buf;
        if (!*base)
                return -EINVAL;
        *ret = strdup(base);
        return *ret ? 0 : -ENOMEM;
}

/* "a/b/c": non-empty components, none "." or "..". */
static bool relpath_is_safe(const char *p)
{
        if (!*p || *p == '/')
                return false;
        while (*p) {
                const char *end = strchrnul(p, '/');
                size_t n = (size_t)(end - p);

                if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
                        return false;
                p = *end ? end + 1 : end;
        }
        return true;
}

static bool parse_uint(const char *s, unsigned long long max, unsigned long long *ret)
{
        unsigned long long v = 0;

        if (!s || !*s)
                return false;
        for (; *s; s++) {
                if (*s < '0' || *s > '9')
                        return false;
                if (v > (max - (unsigned)(*s - '0')) / 10)
                        return false;
                v = v * 10 + (unsigned)(*s - '0');
        }
        *ret = v;
        return true;
}

/* Read at most `max` bytes of a regular file (already opened) into a new
 * buffer; *ret_len excludes the terminating NUL that is appended. */
static int read_fd_upto(int fd, size_t max, char **ret, size_t *ret_len)
{
        _cleanup_free_ char *buf = malloc(max + 1);
        size_t len = 0;

        if (!buf)
                return -ENOMEM;
        while (len < max) {
                ssize_t n = read(fd, buf + len, max - len);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (n == 0)
                        break;
                len += (size_t)n;
        }
        buf[len] = '\0';
        *ret_len = len;
        *ret = TAKE_PTR(buf);
        return 0;
}

/* ------------------------------------------------------------------ context */

int device_ctx_new(const struct device_roots *roots, struct device_ctx **ret)
{
        struct device_ctx *ctx;

        if (!ret)
                return -EINVAL;
        ctx = calloc(1, sizeof(*ctx));
        if (!ctx)
                return -ENOMEM;
        ctx->sys = root_dup(roots ? roots->sys : NULL, "/sys");
        ctx->dev = root_dup(roots ? roots->dev : NULL, "/dev");
        ctx->run = root_dup(roots ? roots->run : NULL, "/run/udev");
        if (!ctx->sys || !ctx->dev || !ctx->run) {
                device_ctx_free(ctx);
                return -ENOMEM;
        }
        /* "/" as a root would give "//devices": keep the empty prefix instead. */
        if (streq(ctx->sys, "/"))
                ctx->sys[0] = '\0';
        if (streq(ctx->dev, "/"))
                ctx->dev[0] = '\0';
        ctx->sys_len = strlen(ctx->sys);
        /* Leave room for every path built below (<sys>/bus/<255>/devices/<255>). */
        if (ctx->sys_len > PATH_MAX - 1024 || strlen(ctx->dev) > PATH_MAX - 1024) {
                device_ctx_free(ctx);
                return -ENAMETOOLONG;
        }
        ctx->roots = (struct device_roots){ .sys = ctx->sys, .dev = ctx->dev, .run = ctx->run };
        *ret = ctx;
        return 0;
}

static void device_free(struct device *d)
{
        if (!d)
                return;
        free(d->syspath);
        free(d->sysname);
        free(d->subsystem_buf);
        free(d->driver_buf);
        free(d->uevent_buf);
        free(d->props);
        free(d->devnode);
        db_record_clear(&d->db);
        for (size_t i = 0; i < d->n_attrs; i++) {
                free(d->attrs[i].name);
                free(d->attrs[i].value);
        }
        free(d->attrs);
        free(d);
}

void device_ctx_free(struct device_ctx *ctx)
{
        if (!ctx)
                return;
        for (size_t i = 0; i < ctx->n_devices; i++)
                device_free(ctx->devices[i]);
        free(ctx->devices);
        free(ctx->sys);
        free(ctx->dev);
        free(ctx->run);
        free(ctx->sys_real);
        free(ctx);
}

const struct device_roots *device_ctx_roots(const struct device_ctx *ctx)
{
        return ctx ? &ctx->roots : NULL;
}

/* Event devices are found first: they carry the kernel record. */
static struct device *ctx_find(struct device_ctx *ctx, const char *syspath)
{
        struct device *found = NULL;

        for (size_t i = 0; i < ctx->n_devices; i++) {
                struct device *d = ctx->devices[i];

                if (!streq(d->syspath, syspath))
                        continue;
                if (d->uevent)
                        return d;
                if (!found)
                        found = d;
        }
        return found;
}

static int ctx_add(struct device_ctx *ctx, struct device *d)
{
        if (ctx->n_devices >= DEVICE_CTX_DEVICES_MAX)
                return -E2BIG;
        if (ctx->n_devices == ctx->cap_devices) {
                size_t cap = ctx->cap_devices ? ctx->cap_devices * 2 : 16;
                struct device **p = realloc(ctx->devices, cap * sizeof(*p));

                if (!p)
                        return -ENOMEM;
                ctx->devices = p;
                ctx->cap_devices = cap;
        }
        ctx->devices[ctx->n_devices++] = d;
        return 0;
}

/* sysname = last component with '!' -> '/'; sysnum = its trailing digits
 * unless it is all digits. */
static int device_set_names(struct device *d)
{
        const char *last = strrchr(d->devpath, '/');
        size_t len, n = 0;

        last = last ? last + 1 : d->devpath;
        if (!*last)
                return -EINVAL;
        d->sysname = strdup(last);
        if (!d->sysname)
                return -ENOMEM;
        for (char *p = d->sysname; *p; p++)
                if (*p == '!')
                        *p = '/';
        len = strlen(d->sysname);
        while (n < len && d->sysname[len - n - 1] >= '0' && d->sysname[len - n - 1] <= '9')
                n++;
        d->sysnum = (n > 0 && n < len) ? d->sysname + len - n : NULL;
        return 0;
}

/* Takes `syspath` (malloc'd, "<sys>/..." already validated). */
static int device_new(struct device_ctx *ctx, char *syspath, struct device **ret)
{
        struct device *d;
        int r;

        d = calloc(1, sizeof(*d));
        if (!d) {
                free(syspath);
                return -ENOMEM;
        }
        d->ctx = ctx;
        d->syspath = syspath;
        d->devpath = syspath + ctx->sys_len;
        r = device_set_names(d);
        if (r < 0)
                goto fail;
        r = ctx_add(ctx, d);
        if (r < 0)
                goto fail;
        *ret = d;
        return 0;
fail:
        device_free(d);
        return r;
}

/* ------------------------------------------------------------ constructors */

int device_from_uevent(struct device_ctx *ctx, const struct uevent *ev, struct device **ret)
{
        struct device *d;
        char *syspath;
        int r;

        if (!ctx || !ev || !ret || !ev->devpath || ev->devpath[0] != '/')
                return -EINVAL;
        if (ctx->sys_len + strlen(ev->devpath) >= PATH_MAX)
                return -ENAMETOOLONG;
        if (asprintf(&syspath, "%s%s", ctx->sys, ev->devpath) < 0)
                return -ENOMEM;
        d = ctx_find(ctx, syspath);
        if (d && d->uevent == ev) {
                free(syspath);
                *ret = d;
                return 0;
        }
        r = device_new(ctx, syspath, &d);
        if (r < 0)
                return r;
        d->uevent = ev;
        d->subsystem_done = true;
        d->subsystem = ev->subsystem;
        if (!d->subsystem || !*d->subsystem) {
                d->subsystem = NULL;
                d->subsystem_error = -ENOENT;
        }
        if (ev->driver) {
                d->driver_done = true;
                d->driver = ev->driver;
        }
        d->id_done = true;
        if (ev->id[0] && strlen(ev->id) < sizeof(d->id))
                memcpy(d->id, ev->id, strlen(ev->id) + 1);
        else
                d->id_error = -ENOENT;
        *ret = d;
        return 0;
}

static const char *ctx_sys_real(struct device_ctx *ctx)
{
        if (!ctx->sys_real)
                ctx->sys_real = realpath(ctx->sys[0] ? ctx->sys : "/", NULL);
        return ctx->sys_real;
}

/* Canonicalise `path` and map it back under roots.sys. */
static int canonical_syspath(struct device_ctx *ctx, const char *path, char **ret)
{
        _cleanup_free_ char *real = NULL;
        const char *root, *rel;
        size_t n;

        root = ctx_sys_real(ctx);
        if (!root)
                return negative_errno();
        real = realpath(path, NULL);
        if (!real)
                return (errno == ENOENT || errno == ENOTDIR) ? -ENOENT : negative_errno();
        n = strlen(root);
        if (streq(root, "/"))
                n = 0;
        if (strncmp(real, root, n) != 0 || real[n] != '/')
                return -EINVAL;
        rel = real + n;
        if (ctx->sys_len + strlen(rel) >= PATH_MAX)
                return -ENAMETOOLONG;
        if (asprintf(ret, "%s%s", ctx->sys, rel) < 0)
                return -ENOMEM;
        return 0;
}

static bool devpath_below_devices(const char *devpath)
{
        return strneq(devpath, "/devices", STRLEN("/devices")) &&
               (devpath[STRLEN("/devices")] == '\0' || devpath[STRLEN("/devices")] == '/');
}

/* Does the canonical syspath name a device? 0, -EINVAL (not a device), -ENOENT, -errno. */
static int syspath_check(struct device_ctx *ctx, const char *syspath)
{
        const char *devpath = syspath + ctx->sys_len;
        char p[PATH_MAX];
        struct stat st;
        int r;

        if (devpath[0] != '/' || devpath[1] == '\0')
                return -EINVAL;
        if (devpath_below_devices(devpath)) {
                r = join2(p, sizeof(p), syspath, "uevent");
                if (r < 0)
                        return r;
                if (access(p, F_OK) < 0) {
                        if (errno == ENOENT || errno == ENOTDIR)
                                return -EINVAL;
                        return negative_errno();
                }
                return 0;
        }
        if (stat(syspath, &st) < 0)
                return (errno == ENOENT || errno == ENOTDIR) ? -ENOENT : negative_errno();
        return S_ISDIR(st.st_mode) ? 0 : -EINVAL;
}

/* `syspath` is canonical and checked; takes it. */
static int device_get_or_new(struct device_ctx *ctx, char *syspath, struct device **ret)
{
        struct device *d = ctx_find(ctx, syspath);

        if (d) {
                free(syspath);
                *ret = d;
                return 0;
        }
        return device_new(ctx, syspath, ret);
}

int device_from_syspath(struct device_ctx *ctx, const char *syspath, struct device **ret)
{
        char *canon = NULL;
        struct device *d;
        int r;

        if (!ctx || !syspath || !ret || syspath[0] != '/')
                return -EINVAL;
        if (strlen(syspath) >= PATH_MAX)
                return -ENAMETOOLONG;
        d = ctx_find(ctx, syspath);
        if (d) {
                *ret = d;
                return 0;
        }
        r = canonical_syspath(ctx, syspath, &canon);
        if (r < 0)
                return r;
        r = syspath_check(ctx, canon);
        if (r < 0) {
                free(canon);
                return r;
        }
        return device_get_or_new(ctx, canon, ret);
}

/* One candidate path of the subsystem/sysname lookup: 1 found, 0 absent. */
static int try_path(struct device_ctx *ctx, const char *path, struct device **ret)
{
        int r;

        if (strlen(path) >= PATH_MAX)
                return 0;
        if (access(path, F_OK) < 0) {
                if (errno == ENOENT || errno == ENOTDIR || errno == ENAMETOOLONG)
                        return 0;
                return negative_errno();
        }
        r = device_from_syspath(ctx, path, ret);
        return r < 0 ? r : 1;
}

static bool name_is_valid(const char *s)
{
        size_t n = strlen(s);

        return n > 0 && n <= DEVICE_NAME_MAX && !streq(s, ".") && !streq(s, "..") &&
               !strchr(s, '/');
}

int device_from_subsystem_sysname(struct device_ctx *ctx, const char *subsystem,
                                  const char *sysname, struct device **ret)
{
        char name[DEVICE_NAME_MAX + 1], p[PATH_MAX];
        const char *sys;
        int r;

        if (!ctx || !subsystem || !sysname || !ret)
                return -EINVAL;
        if (strlen(sysname) > DEVICE_NAME_MAX)
                return -ENOENT;
        /* sysname back to the sysfs file name */
        memcpy(name, sysname, strlen(sysname) + 1);
        for (char *c = name; *c; c++)
                if (*c == '/')
                        *c = '!';
        if (!name_is_valid(subsystem) || !relpath_is_safe(sysname) || !name_is_valid(name))
                return -EINVAL;
        sys = ctx->sys;

        if (streq(subsystem, "subsystem")) {
                snprintf(p, sizeof(p), "%s/bus/%s", sys, name);
                r = try_path(ctx, p, ret);
                if (r != 0)
                        return r < 0 ? r : 0;
                snprintf(p, sizeof(p), "%s/class/%s", sys, name);
                r = try_path(ctx, p, ret);
                if (r != 0)
                        return r < 0 ? r : 0;
        } else if (streq(subsystem, "module")) {
                snprintf(p, sizeof(p), "%s/module/%s", sys, name);
                r = try_path(ctx, p, ret);
                if (r != 0)
                        return r < 0 ? r : 0;
        } else if (streq(subsystem, "drivers")) {
                const char *sep = strchr(name, ':');

                if (sep && sep[1]) {
                        int len = (int)(sep - name);

                        if (streq(sep + 1, "drivers"))
                                snprintf(p, sizeof(p), "%s/bus/%.*s/drivers", sys, len, name);
                        else
                                snprintf(p, sizeof(p), "%s/bus/%.*s/drivers/%s", sys, len, name,
                                         sep + 1);
                        r = try_path(ctx, p, ret);
                        if (r != 0)
                                return r < 0 ? r : 0;
                }
        }

        snprintf(p, sizeof(p), "%s/bus/%s/devices/%s", sys, subsystem, name);
        r = try_path(ctx, p, ret);
        if (r != 0)
                return r < 0 ? r : 0;
        snprintf(p, sizeof(p), "%s/class/%s/%s", sys, subsystem, name);
        r = try_path(ctx, p, ret);
        if (r != 0)
                return r < 0 ? r : 0;
        snprintf(p, sizeof(p), "%s/firmware/%s/%s", sys, subsystem, name);
        r = try_path(ctx, p, ret);
        if (r != 0)
                return r < 0 ? r : 0;
        return -ENOENT;
}

int device_from_devnum(struct device_ctx *ctx, char type, unsigned major, unsigned minor,
                       struct device **ret)
{
        char p[PATH_MAX];
        struct device *d;
        const char *subsystem = NULL;
        unsigned ma, mi;
        int r;

        if (!ctx || !ret || (type != 'b' && type != 'c'))
                return -EINVAL;
        if (major == 0)
                return -ENOENT;
        snprintf(p, sizeof(p), "%s/dev/%s/%u:%u", ctx->sys, type == 'b' ? "block" : "char", major,
                 minor);
        r = device_from_syspath(ctx, p, &d);
        if (r < 0)
                return r;
        r = device_get_devnum(d, &ma, &mi);
        if (r == -ENOENT || (r >= 0 && (ma != major || mi != minor)))
                return -ENOENT;
        if (r < 0)
                return r;
        r = device_get_subsystem(d, &subsystem);
        if (r < 0 && r != -ENOENT)
                return r;
        if ((subsystem && streq(subsystem, "block")) != (type == 'b'))
                return -ENOENT;
        *ret = d;
        return 0;
}

/* Read <dir>/<name>/ifindex without making a device. */
static int net_entry_ifindex(int dfd, const char *name)
{
        char p[DEVICE_NAME_MAX + 16], buf[32];
        unsigned long long v;
        ssize_t n;
        int fd;

        if (snprintf(p, sizeof(p), "%s/ifindex", name) >= (int)sizeof(p))
                return -ENAMETOOLONG;
        fd = openat(dfd, p, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return negative_errno();
        n = read(fd, buf, sizeof(buf) - 1);
        safe_close(fd);
        if (n <= 0)
                return -EINVAL;
        buf[n] = '\0';
        buf[strcspn(buf, "\n")] = '\0';
        if (!parse_uint(buf, INT_MAX, &v) || v == 0)
                return -EINVAL;
        return (int)v;
}

int device_from_ifindex(struct device_ctx *ctx, int ifindex, struct device **ret)
{
        char p[PATH_MAX], found[DEVICE_NAME_MAX + 1] = "";
        struct device *d;
        struct dirent *de;
        DIR *dir;
        int dfd, r, i;

        if (!ctx || !ret || ifindex <= 0)
                return -EINVAL;
        snprintf(p, sizeof(p), "%s/class/net", ctx->sys);
        dfd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return (errno == ENOENT || errno == ENOTDIR) ? -ENOENT : negative_errno();
        dir = fdopendir(dfd);
        if (!dir) {
                r = negative_errno();
                safe_close(dfd);
                return r;
        }
        while ((de = readdir(dir))) {
                if (de->d_name[0] == '.' || strlen(de->d_name) > DEVICE_NAME_MAX)
                        continue;
                if (net_entry_ifindex(dirfd(dir), de->d_name) == ifindex) {
                        memcpy(found, de->d_name, strlen(de->d_name) + 1);
                        break;
                }
        }
        closedir(dir);
        if (!found[0])
                return -ENOENT;
        snprintf(p, sizeof(p), "%s/class/net/%s", ctx->sys, found);
        r = device_from_syspath(ctx, p, &d);
        if (r < 0)
                return r;
        r = device_get_ifindex(d, &i);
        if (r == -ENOENT || (r >= 0 && i != ifindex))
                return -ENOENT;
        if (r < 0)
                return r;
        *ret = d;
        return 0;
}

/* "M:m" with decimal digits only. */
static bool parse_devnum(const char *s, unsigned *major, unsigned *minor)
{
        char buf[32];
        const char *colon = strchr(s, ':');
        unsigned long long ma, mi;
        size_t n;

        if (!colon)
                return false;
        n = (size_t)(colon - s);
        if (n == 0 || n >= sizeof(buf))
                return false;
        memcpy(buf, s, n);
        buf[n] = '\0';
        if (!parse_uint(buf, UINT32_MAX, &ma) || !parse_uint(colon + 1, UINT32_MAX, &mi))
                return false;
        *major = (unsigned)ma;
        *minor = (unsigned)mi;
        return true;
}

int device_from_id(struct device_ctx *ctx, const char *id, struct device **ret)
{
        unsigned long long v;
        unsigned ma, mi;

        if (!ctx || !id || !ret)
                return -EINVAL;
        switch (id[0]) {
        case 'b':
        case 'c':
                if (!parse_devnum(id + 1, &ma, &mi))
                        return -EINVAL;
                return device_from_devnum(ctx, id[0], ma, mi, ret);
        case 'n':
                if (!parse_uint(id + 1, INT_MAX, &v) || v == 0)
                        return -EINVAL;
                return device_from_ifindex(ctx, (int)v, ret);
        case '+': {
                const char *sep = strchr(id + 1, ':');
                char subsys[DEVICE_NAME_MAX + 1];
                size_t n;

                if (!sep)
                        return -EINVAL;
                n = (size_t)(sep - id - 1);
                if (n == 0 || n > DEVICE_NAME_MAX)
                        return -EINVAL;
                memcpy(subsys, id + 1, n);
                subsys[n] = '\0';
                return device_from_subsystem_sysname(ctx, subsys, sep + 1, ret);
        }
        default:
                return -EINVAL;
        }
}

/* ------------------------------------------------------------ identity */

const char *device_syspath(const struct device *d) { return d ? d->syspath : NULL; }
const char *device_devpath(const struct device *d) { return d ? d->devpath : NULL; }
const char *device_sysname(const struct device *d) { return d ? d->sysname : NULL; }
const char *device_sysnum(const struct device *d) { return d ? d->sysnum : NULL; }

/* ------------------------------------------------------------ subsystem, driver */

/* The subsystem of a "drivers" directory: the component before "/drivers". */
static bool devpath_is_drivers(const char *devpath)
{
        size_t n = strlen(devpath);

        return strstr(devpath, "/drivers/") ||
               (n >= STRLEN("/drivers") && streq(devpath + n - STRLEN("/drivers"), "/drivers"));
}

static bool has_nonempty_prefix(const char *s, const char *prefix)
{
        size_t n = strlen(prefix);

        return strneq(s, prefix, n) && s[n] != '\0';
}

static int device_load_subsystem(struct device *d)
{
        char p[PATH_MAX];
        int r;

        r = join2(p, sizeof(p), d->syspath, "subsystem");
        if (r >= 0)
                r = readlink_basename(p, &d->subsystem_buf);
        if (r >= 0) {
                d->subsystem = d->subsystem_buf;
                return 0;
        }
        if (r != -ENOENT) {
                log_debug_errno(r, "device: reading the subsystem of %s failed: %m", d->devpath);
                return r;
        }
        if (has_nonempty_prefix(d->devpath, "/module/"))
                d->subsystem = "module";
        else if (devpath_is_drivers(d->devpath))
                d->subsystem = "drivers";
        else if (has_nonempty_prefix(d->devpath, "/class/") ||
                 has_nonempty_prefix(d->devpath, "/bus/"))
                d->subsystem = "subsystem";
        else
                return -ENOENT;
        return 0;
}

int device_get_subsystem(struct device *d, const char **ret)
{
        if (!d)
                return -EINVAL;
        if (!d->subsystem_done) {
                d->subsystem_error = device_load_subsystem(d);
                d->subsystem_done = true;
        }
        if (d->subsystem_error < 0)
                return d->subsystem_error;
        if (ret)
                *ret = d->subsystem;
        return 0;
}

int device_get_driver(struct device *d, const char **ret)
{
        char p[PATH_MAX];
        int r;

        if (!d)
                return -EINVAL;
        if (!d->driver_done) {
                r = join2(p, sizeof(p), d->syspath, "driver");
                if (r >= 0)
                        r = readlink_basename(p, &d->driver_buf);
                if (r >= 0)
                        d->driver = d->driver_buf;
                else if (r != -ENOENT)
                        log_debug_errno(r, "device: reading the driver of %s failed: %m",
                                        d->devpath);
                d->driver_error = r < 0 ? r : 0;
                d->driver_done = true;
        }
        if (d->driver_error < 0)
                return d->driver_error;
        if (ret)
                *ret = d->driver;
        return 0;
}

/* ------------------------------------------------------------ kernel properties */

/* DEVNAME ("sda", "/dev/sda") -> "<dev>/sda"; NULL if unsafe. */
static int make_devnode(struct device *d, const char *devname)
{
        const char *rel = devname;

        if (rel[0] == '/') {
                if (!strneq(rel, "/dev/", STRLEN("/dev/")))
                        return -EINVAL;
                rel += STRLEN("/dev/");
        }
        if (!relpath_is_safe(rel))
                return -EINVAL;
        if (strlen(d->ctx->dev) + 1 + strlen(rel) >= PATH_MAX)
                return -ENAMETOOLONG;
        free(d->devnode);
        if (asprintf(&d->devnode, "%s/%s", d->ctx->dev, rel) < 0) {
                d->devnode = NULL;
                return -ENOMEM;
        }
        return 0;
}

static int props_from_uevent_record(struct device *d)
{
        const struct uevent *ev = d->uevent;
        int r;

        d->props = calloc(ev->n_props ? ev->n_props : 1, sizeof(*d->props));
        if (!d->props)
                return -ENOMEM;
        if (ev->devnode[0]) {
                r = make_devnode(d, ev->devnode);
                if (r < 0)
                        log_debug_errno(r, "device: ignoring DEVNAME of %s: %m", d->devpath);
        }
        for (size_t i = 0; i < ev->n_props; i++) {
                const char *value = ev->props[i].value;

                if (streq(ev->props[i].key, "DEVNAME")) {
                        if (!d->devnode)
                                continue;
                        value = d->devnode;
                }
                d->props[d->n_props++] = (struct device_prop){ ev->props[i].key, value };
        }
        d->devtype = ev->devtype;
        d->major = ev->major;
        d->minor = ev->major > 0 ? ev->minor : 0;
        d->ifindex = ev->ifindex;
        d->devnum_done = true;
        return 0;
}

static int read_uevent_file(struct device *d, char **ret, size_t *ret_len)
{
        char p[PATH_MAX];
        int fd, r;

        r = join2(p, sizeof(p), d->syspath, "uevent");
        if (r < 0)
                return r;
        fd = open(p, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
        if (fd < 0)
                return negative_errno();
        r = read_fd_upto(fd, DEVICE_UEVENT_FILE_MAX, ret, ret_len);
        safe_close(fd);
        return r;
}

static void props_put(struct device *d, size_t max, const char *key, const char *value)
{
        for (size_t i = 0; i < d->n_props; i++)
                if (streq(d->props[i].key, key)) {
                        d->props[i].value = value;
                        return;
                }
        if (d->n_props < max)
                d->props[d->n_props++] = (struct device_prop){ key, value };
}

/* Interpret one "KEY=VALUE" line of a uevent file. */
static void uevent_line(struct device *d, size_t max, const char *key, const char *value,
                        const char **major, const char **minor)
{
        unsigned long long v;

        if (streq(key, "MAJOR")) {
                *major = value;
                return;
        }
        if (streq(key, "MINOR")) {
                *minor = value;
                return;
        }
        if (streq(key, "DEVNAME")) {
                if (make_devnode(d, value) < 0)
                        return;
                value = d->devnode;
        } else if (streq(key, "IFINDEX")) {
                if (!parse_uint(value, INT_MAX, &v) || v == 0)
                        return;
                d->ifindex = (int)v;
        } else if (streq(key, "DEVTYPE"))
                d->devtype = value;
        props_put(d, max, key, value);
}

static int props_from_uevent_file(struct device *d)
{
        const char *major = NULL, *minor = NULL;
        unsigned long long ma, mi = 0;
        size_t len, max = DEVICE_UEVENT_PROPS_MAX;
        char *buf, *line;
        int r;

        r = read_uevent_file(d, &d->uevent_buf, &len);
        if (r < 0) {
                if (r == -EACCES || r == -EPERM || r == -ENOENT || r == -ENODEV || r == -ENXIO ||
                    r == -ENOTDIR)
                        return 0;
                return log_debug_errno(r, "device: reading %s/uevent failed: %m", d->devpath);
        }
        d->props = calloc(max, sizeof(*d->props));
        if (!d->props)
                return -ENOMEM;
        buf = d->uevent_buf;
        /* Lines end at '\n' or '\r'; an unterminated last line is ignored;
         * a line without '=' is skipped. */
        for (line = buf; line < buf + len;) {
                char *end = line + strcspn(line, "\n\r"), *eq;

                if (end >= buf + len || *end == '\0')
                        break;
                *end = '\0';
                eq = strchr(line, '=');
                if (eq && eq != line) {
                        *eq = '\0';
                        uevent_line(d, max - 2, line, eq + 1, &major, &minor);
                }
                line = end + 1;
        }
        if (major && parse_uint(major, UINT32_MAX, &ma) && ma > 0 &&
            (!minor || parse_uint(minor, UINT32_MAX, &mi))) {
                d->major = (unsigned)ma;
                d->minor = (unsigned)mi;
                props_put(d, max, "MAJOR", major);
                if (minor)
                        props_put(d, max, "MINOR", minor);
        }
        return 0;
}

static int device_load_props(struct device *d)
{
        if (d->props_done)
                return d->props_error;
        d->props_done = true;
        d->props_error = d->uevent ? props_from_uevent_record(d) : props_from_uevent_file(d);
        return d->props_error;
}

int device_get_devtype(struct device *d, const char **ret)
{
        int r;

        if (!d)
                return -EINVAL;
        r = device_load_props(d);
        if (r < 0)
                return r;
        if (!d->devtype)
                return -ENOENT;
        if (ret)
                *ret = d->devtype;
        return 0;
}

int device_get_devnode(struct device *d, const char **ret)
{
        int r;

        if (!d)
                return -EINVAL;
        r = device_load_props(d);
        if (r < 0)
                return r;
        if (!d->devnode)
                return -ENOENT;
        if (ret)
                *ret = d->devnode;
        return 0;
}

/* Fallback for a device whose uevent file has no MAJOR: its "dev" file. */
static void devnum_from_dev_file(struct device *d)
{
        char p[PATH_MAX], buf[64];
        unsigned ma, mi;
        ssize_t n;
        int fd;

        if (join2(p, sizeof(p), d->syspath, "dev") < 0)
                return;
        fd = open(p, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
        if (fd < 0)
                return;
        n = read(fd, buf, sizeof(buf) - 1);
        safe_close(fd);
        if (n <= 0)
                return;
        buf[n] = '\0';
        buf[strcspn(buf, "\n\r")] = '\0';
        if (parse_devnum(buf, &ma, &mi) && ma > 0) {
                d->major = ma;
                d->minor = mi;
        }
}

int device_get_devnum(struct device *d, unsigned *major, unsigned *minor)
{
        int r;

        if (!d)
                return -EINVAL;
        r = device_load_props(d);
        if (r < 0)
                return r;
        if (!d->devnum_done) {
                d->devnum_done = true;
                if (d->major == 0)
                        devnum_from_dev_file(d);
        }
        if (d->major == 0)
                return -ENOENT;
        if (major)
                *major = d->major;
        if (minor)
                *minor = d->minor;
        return 0;
}

int device_get_ifindex(struct device *d, int *ret)
{
        int r;

        if (!d)
                return -EINVAL;
        r = device_load_props(d);
        if (r < 0)
                return r;
        if (d->ifindex <= 0)
                return -ENOENT;
        if (ret)
                *ret = d->ifindex;
        return 0;
}

int device_get_id(struct device *d, const char **ret)
{
        const char *subsystem;
        unsigned ma = 0, mi = 0;
        int r, ifindex = 0;

        if (!d)
                return -EINVAL;
        if (!d->id_done) {
                d->id_done = true;
                r = device_get_subsystem(d, &subsystem);
                if (r >= 0) {
                        r = device_get_devnum(d, &ma, &mi);
                        if (r == -ENOENT)
                                r = 0;
                }
                if (r >= 0) {
                        r = device_get_ifindex(d, &ifindex);
                        if (r == -ENOENT)
                                r = 0;
                }
                if (r >= 0)
                        r = device_id_format(d->id, sizeof(d->id), subsystem, d->devpath, ma, mi,
                                             ifindex);
                d->id_error = r < 0 ? r : 0;
        }
        if (d->id_error < 0)
                return d->id_error;
        if (ret)
                *ret = d->id;
        return 0;
}

/* Non-event devices list DEVPATH first and SUBSYSTEM last around their
 * uevent file properties (the order sd-device ends up with in `udevadm test`:
 * DEVPATH when the device is made, the uevent file when it is read,
 * SUBSYSTEM when the rules first look at it). */
static bool has_synth_subsystem(struct device *d)
{
        return !d->uevent && device_get_subsystem(d, NULL) >= 0;
}

int device_get_property(struct device *d, const char *key, const char **ret)
{
        int r;

        if (!d || !key)
                return -EINVAL;
        if (!d->uevent) {
                if (streq(key, "DEVPATH")) {
                        if (ret)
                                *ret = d->devpath;
                        return 0;
                }
                if (streq(key, "SUBSYSTEM"))
                        return device_get_subsystem(d, ret);
        }
        r = device_load_props(d);
        if (r < 0)
                return r;
        for (size_t i = 0; i < d->n_props; i++)
                if (streq(d->props[i].key, key)) {
                        if (ret)
                                *ret = d->props[i].value;
                        return 0;
                }
        return -ENOENT;
}

bool device_property_at(struct device *d, size_t i, const char **key, const char **value)
{
        const char *k, *v;
        size_t first;

        if (!d || device_load_props(d) < 0)
                return false;
        first = d->uevent ? 0 : 1;
        if (i == 0 && first) {
                k = "DEVPATH";
                v = d->devpath;
        } else if (i - first < d->n_props) {
                k = d->props[i - first].key;
                v = d->props[i - first].value;
        } else if (i - first == d->n_props && has_synth_subsystem(d)) {
                k = "SUBSYSTEM";
                v = d->subsystem;
        } else
                return false;
        if (key)
                *key = k;
        if (value)
                *value = v;
        return true;
}

/* ------------------------------------------------------------ sysattr */

static struct sysattr_entry *attr_find(struct device *d, const char *name)
{
        for (size_t i = 0; i < d->n_attrs; i++)
                if (streq(d->attrs[i].name, name))
                        return &d->attrs[i];
        return NULL;
}

/* Content of a regular attribute file: cut at SYSATTR_VALUE_MAX, trailing
 * '\n', '\r' (and NULs) dropped, the string ends at the first NUL. */
static int sysattr_read_file(const char *path, char **ret)
{
        struct stat st;
        size_t len;
        char *buf;
        int fd, r;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0) {
                r = negative_errno();
                safe_close(fd);
                return r;
        }
        if (!S_ISREG(st.st_mode)) {
                safe_close(fd);
                return -EINVAL;
        }
        r = read_fd_upto(fd, SYSATTR_VALUE_MAX, &buf, &len);
        safe_close(fd);
        if (r < 0)
                return r;
        while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r' || buf[len - 1] == '\0'))
                buf[--len] = '\0';
        *ret = buf;
        return 0;
}

static int sysattr_read(struct device *d, const char *name, char **ret)
{
        char p[PATH_MAX];
        struct stat st;
        int r;

        while (*name == '/')
                name++;
        if (!*name)
                return -EINVAL;
        r = join2(p, sizeof(p), d->syspath, name);
        if (r < 0)
                return r;
        if (lstat(p, &st) < 0)
                return negative_errno();
        if (S_ISLNK(st.st_mode)) {
                if (streq(name, "driver") || streq(name, "subsystem") || streq(name, "module"))
                        return readlink_basename(p, ret);
                return -EINVAL;
        }
        if (S_ISDIR(st.st_mode))
                return -EISDIR;
        if (!(st.st_mode & S_IRUSR))
                return -EPERM;
        if (!S_ISREG(st.st_mode))
                return -EINVAL;
        return sysattr_read_file(p, ret);
}

int device_get_sysattr(struct device *d, const char *name, const char **ret)
{
        struct sysattr_entry *e;
        char *value = NULL, *key;
        int r;

        if (!d || !name || !*name)
                return -EINVAL;
        e = attr_find(d, name);
        if (!e) {
                if (d->n_attrs >= DEVICE_SYSATTR_CACHE_MAX)
                        return -E2BIG;
                if (d->n_attrs == d->cap_attrs) {
                        size_t cap = d->cap_attrs ? d->cap_attrs * 2 : 8;
                        struct sysattr_entry *a = realloc(d->attrs, cap * sizeof(*a));

                        if (!a)
                                return -ENOMEM;
                        d->attrs = a;
                        d->cap_attrs = cap;
                }
                key = strdup(name);
                if (!key)
                        return -ENOMEM;
                r = sysattr_read(d, name, &value);
                if (r == -ENOMEM) {
                        free(key);
                        return r;
                }
                e = &d->attrs[d->n_attrs++];
                *e = (struct sysattr_entry){ .name = key, .value = value, .error = r < 0 ? r : 0 };
        }
        if (e->error < 0)
                return e->error;
        if (ret)
                *ret = e->value;
        return 0;
}

int device_set_sysattr(struct device *d, const char *name, const char *value)
{
        char p[PATH_MAX];
        size_t len;
        ssize_t n;
        int fd, r;

        if (!d || !name || !value)
                return -EINVAL;
        while (*name == '/')
                name++;
        if (!*name)
                return -EINVAL;
        len = strlen(value);
        if (len > SYSATTR_VALUE_MAX)
                return -EINVAL;
        r = join2(p, sizeof(p), d->syspath, name);
        if (r < 0)
                return r;
        fd = open(p, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
        if (fd < 0)
                return negative_errno();
        n = write(fd, value, len);
        r = n < 0 ? negative_errno() : ((size_t)n != len ? -EIO : 0);
        safe_close(fd);
        return r;
}

/* ------------------------------------------------------------ parents */

/* Directories of the kernel's device tree that are never devices, so the
 * parent walk need not look for their "uevent": /devices itself, the
 * /devices/virtual kobject, and the class directories right below it (the
 * kernel puts a parentless class device at /devices/virtual/<class>/<name>
 * and nothing else there). Every virtual device's walk would otherwise cost
 * three sysfs lookups, each taking the kernfs lock that an event storm keeps
 * busy. */
static bool devpath_never_device(const char *devpath)
{
        static const char virt[] = "/devices/virtual";

        if (streq(devpath, "/devices"))
                return true;
        if (!strneq(devpath, virt, STRLEN(virt)))
                return false;
        devpath += STRLEN(virt);
        if (devpath[0] == '\0')
                return true;
        return devpath[0] == '/' && devpath[1] != '\0' && !strchr(devpath + 1, '/');
}

/* The nearest ancestor that is a device (see the top of the file). */
static int device_find_parent(struct device *d, struct device **ret)
{
        struct device_ctx *ctx = d->ctx;
        char p[PATH_MAX];
        size_t len = strlen(d->syspath);

        if (len >= sizeof(p))
                return -ENAMETOOLONG;
        memcpy(p, d->syspath, len + 1);
        for (;;) {
                char *slash = strrchr(p + ctx->sys_len, '/');
                struct device *found;
                char *copy;
                int r;

                if (!slash || slash == p + ctx->sys_len)
                        return -ENOENT; /* reached <sys> */
                *slash = '\0';
                found = ctx_find(ctx, p);
                if (found) {
                        *ret = found;
                        return 0;
                }
                if (devpath_never_device(p + ctx->sys_len))
                        continue;
                r = syspath_check(ctx, p);
                if (r == -EINVAL || r == -ENOENT)
                        continue;
                if (r < 0)
                        return r;
                copy = strdup(p);
                if (!copy)
                        return -ENOMEM;
                return device_new(ctx, copy, ret);
        }
}

int device_get_parent(struct device *d, struct device **ret)
{
        if (!d)
                return -EINVAL;
        if (!d->parent_done) {
                d->parent_error = device_find_parent(d, &d->parent);
                if (d->parent_error == -ENOMEM)
                        return -ENOMEM; /* not cached: may work later */
                d->parent_done = true;
        }
        if (d->parent_error < 0)
                return d->parent_error;
        if (ret)
                *ret = d->parent;
        return 0;
}

int device_get_parent_with_subsystem_devtype(struct device *d, const char *subsystem,
                                             const char *devtype, struct device **ret)
{
        struct device *p = NULL;
        int r;

        if (!d || !subsystem)
                return -EINVAL;
        for (r = device_get_parent(d, &p); r >= 0; r = device_get_parent(p, &p)) {
                const char *s = NULL, *t = NULL;

                (void)device_get_subsystem(p, &s);
                if (!s || !streq(s, subsystem))
                        continue;
                if (!devtype)
                        break;
                (void)device_get_devtype(p, &t);
                if (t && streq(t, devtype))
                        break;
        }
        if (r < 0)
                return r;
        if (ret)
                *ret = p;
        return 0;
}

/* ------------------------------------------------------------ database */

int device_get_db(struct device *d, const struct db_record **ret)
{
        const char *id;
        int r;

        if (!d)
                return -EINVAL;
        if (!d->db_done) {
                r = device_get_id(d, &id);
                if (r >= 0)
                        r = db_read(d->ctx->run, id, &d->db);
                if (r == -ENOMEM)
                        return r;
                d->db_error = r < 0 ? r : 0;
                d->db_done = true;
        }
        if (d->db_error < 0)
                return d->db_error;
        if (ret)
                *ret = &d->db;
        return 0;
}

bool device_is_initialized(struct device *d)
{
        return device_get_db(d, NULL) >= 0;
}
