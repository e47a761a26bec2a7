/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (one object per thread; the roots are set once at start) */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "proto/uevent.h"
#include "shared/fileio.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "udevadm/udevice.h"

#define SYSFS_MAGIC_NUMBER 0x62656572
#define DEVICE_MAJOR_LIMIT (1U << 12)
#define DEVICE_MINOR_LIMIT (1U << 20)
#define UNIT_NAME_MAX 256
#define DEVICE_UNIT_SUFFIX ".device"
#define DB_ID_NAME_MAX NAME_MAX

static const char *sysfs_root = UDEVICE_SYSFS_ROOT;
static const char *run_dir = UDEVICE_RUN_DIR;

void udevice_set_roots(const char *sysfs, const char *run)
{
        if (sysfs)
                sysfs_root = sysfs;
        if (run)
                run_dir = run;
}

const char *udevice_sysfs_root(void) { return sysfs_root; }
const char *udevice_run_dir(void) { return run_dir; }

/* ---------------------------------------------------------------- strings */

static bool startswith(const char *s, const char *prefix)
{
        return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool endswith(const char *s, const char *suffix)
{
        size_t n = strlen(s), k = strlen(suffix);

        return n >= k && streq(s + n - k, suffix);
}

/* Next path component of *p: skips slashes and "." components; returns its
 * length (0 at the end) and leaves *p after it. */
static size_t next_component(const char **p, const char **ret)
{
        for (;;) {
                size_t n;

                *p += strspn(*p, "/");
                n = strcspn(*p, "/");
                *ret = *p;
                *p += n;
                if (!(n == 1 && (*ret)[0] == '.'))
                        return n;
        }
}

const char *path_startswith(const char *path, const char *prefix)
{
        if ((path[0] == '/') != (prefix[0] == '/'))
                return NULL;
        for (;;) {
                const char *a, *b;
                size_t n, k;

                n = next_component(&path, &a);
                k = next_component(&prefix, &b);
                if (k == 0)
                        return n == 0 ? path : a;
                if (n != k || !strneq(a, b, n))
                        return NULL;
        }
}

/* systemd's safe_atou()/safe_atou64()/safe_atoi(): blanks, then C base
 * detection plus "0b"/"0o" prefixes; the whole string must parse. */
static const char *skip_number_prefix(const char *s, int *base)
{
        s += strspn(s, " \t\n\r");
        *base = 0;
        if (startswith(s, "0b") || startswith(s, "0B")) {
                *base = 2;
                return s + 2;
        }
        if (startswith(s, "0o") || startswith(s, "0O")) {
                *base = 8;
                return s + 2;
        }
        return s;
}

static int parse_u64(const char *s, uint64_t *ret)
{
        unsigned long long v;
        char *end;
        int base;

        s = skip_number_prefix(s, &base);
        errno = 0;
        v = strtoull(s, &end, base);
        if (errno > 0)
                return -errno;
        if (end == s || *end != '\0')
                return -EINVAL;
        if (v != 0 && s[0] == '-')
                return -ERANGE;
        *ret = v;
        return 0;
}

static int parse_uint(const char *s, unsigned *ret)
{
        uint64_t v;
        int r = parse_u64(s, &v);

        if (r < 0)
                return r;
        if (v > UINT_MAX)
                return -ERANGE;
        *ret = (unsigned)v;
        return 0;
}

static int parse_int(const char *s, int *ret)
{
        long v;
        char *end;
        int base;

        s = skip_number_prefix(s, &base);
        errno = 0;
        v = strtol(s, &end, base);
        if (errno > 0)
                return -errno;
        if (end == s || *end != '\0')
                return -EINVAL;
        if (v < INT_MIN || v > INT_MAX)
                return -ERANGE;
        *ret = (int)v;
        return 0;
}

static int parse_ifindex(const char *s)
{
        int v, r = parse_int(s, &v);

        if (r < 0)
                return r;
        return v > 0 ? v : -EINVAL;
}

/* "M:m" with decimal digits, as systemd's parse_devnum(). */
static int parse_devnum(const char *s, unsigned *ret_major, unsigned *ret_minor)
{
        char major[16];
        size_t n = strspn(s, "0123456789");
        unsigned x, y;
        int r;

        if (n == 0 || n >= sizeof(major) || s[n] != ':')
                return -EINVAL;
        memcpy(major, s, n);
        major[n] = '\0';
        r = parse_uint(major, &x);
        if (r == 0)
                r = parse_uint(s + n + 1, &y);
        if (r < 0)
                return r;
        if (x >= DEVICE_MAJOR_LIMIT || y >= DEVICE_MINOR_LIMIT)
                return -ERANGE;
        *ret_major = x;
        *ret_minor = y;
        return 0;
}

/* No empty, "." or ".." components, no "//". */
static bool path_is_normalized(const char *p)
{
        if (!*p || strlen(p) >= PATH_MAX || streq(p, ".") || streq(p, ".."))
                return false;
        if (startswith(p, "../") || endswith(p, "/..") || strstr(p, "/../"))
                return false;
        if (startswith(p, "./") || endswith(p, "/.") || strstr(p, "/./"))
                return false;
        return !strstr(p, "//");
}

/* ---------------------------------------------------------------- properties */

static ssize_t prop_index(const struct udevice *d, const char *key)
{
        for (size_t i = 0; i < d->n_props; i++)
                if (streq(d->props[i].key, key))
                        return (ssize_t)i;
        return -1;
}

static int prop_append(struct udevice *d, const char *key, const char *value)
{
        struct udevice_prop p = { strdup(key), strdup(value) };

        if (!p.key || !p.value)
                goto oom;
        if (d->n_props == d->cap_props) {
                size_t cap = d->cap_props ? d->cap_props * 2 : 16;
                struct udevice_prop *n = realloc(d->props, cap * sizeof(*n));

                if (!n)
                        goto oom;
                d->props = n;
                d->cap_props = cap;
        }
        d->props[d->n_props++] = p;
        return 0;
oom:
        free(p.key);
        free(p.value);
        return -ENOMEM;
}

/* Set (value) or remove (NULL) a property; an existing key keeps its place. */
static int prop_set(struct udevice *d, const char *key, const char *value)
{
        ssize_t i = prop_index(d, key);

        if (i < 0)
                return value ? prop_append(d, key, value) : 0;
        if (!value) {
                free(d->props[i].key);
                free(d->props[i].value);
                memmove(d->props + i, d->props + i + 1,
                        (d->n_props - (size_t)i - 1) * sizeof(*d->props));
                d->n_props--;
                return 0;
        }
        char *v = strdup(value);
        if (!v)
                return -ENOMEM;
        free(d->props[i].value);
        d->props[i].value = v;
        return 0;
}

/* Replace *field with a copy of value (or NULL). */
static int set_string(char **field, const char *value)
{
        char *v = NULL;

        if (value && !(v = strdup(value)))
                return -ENOMEM;
        free(*field);
        *field = v;
        return 0;
}

/* ---------------------------------------------------------------- lifetime */

struct udevice *udevice_free(struct udevice *d)
{
        if (!d)
                return NULL;
        udevice_free(d->parent);
        for (size_t i = 0; i < d->n_props; i++) {
                free(d->props[i].key);
                free(d->props[i].value);
        }
        free(d->props);
        free(d->syspath);
        free(d->subsystem);
        free(d->driver_subsystem);
        free(d->driver);
        free(d->devtype);
        free(d->devname);
        free(d->sysname);
        free(d->id);
        strlist_clear(&d->devlinks);
        strlist_clear(&d->tags);
        strlist_clear(&d->current_tags);
        free(d);
        return NULL;
}

/* A new object for devpath (must start with '/'); DEVPATH is the first property. */
static int udevice_alloc(const char *devpath, struct udevice **ret)
{
        _cleanup_(udevice_freep) struct udevice *d = calloc(1, sizeof(*d));

        if (!d)
                return -ENOMEM;
        if (devpath[0] != '/')
                return -ENODEV; /* the sysfs root alone is no device */
        if (asprintf(&d->syspath, "%s%s", sysfs_root, devpath) < 0) {
                d->syspath = NULL;
                return -ENOMEM;
        }
        d->devpath = d->syspath + strlen(sysfs_root);
        if (prop_set(d, "DEVPATH", d->devpath) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(d);
        return 0;
}

int udevice_new_from_devpath(const char *devpath, struct udevice **ret)
{
        return udevice_alloc(devpath, ret);
}

/* ---------------------------------------------------------------- lookup */

static bool verify_sysfs_magic(void)
{
        const char *v = getenv("SYSTEMD_DEVICE_VERIFY_SYSFS");

        if (!streq(sysfs_root, UDEVICE_SYSFS_ROOT))
                return false;
        return !v || !(streq(v, "0") || streq(v, "no") || streq(v, "n") || streq(v, "false") ||
                       streq(v, "f") || streq(v, "off"));
}

/* The canonical form of `path` relative to the sysfs root ("devices/..."),
 * or -ENODEV if it is outside. *ret owned. */
static int canonical_devpath(const char *path, char **ret)
{
        _cleanup_free_ char *real = realpath(path, NULL), *real_root = NULL;
        const char *rest;

        if (!real)
                return errno == ENOENT ? -ENODEV : negative_errno();
        rest = path_startswith(real, sysfs_root);
        if (!rest) {
                /* The sysfs root may be a symlink to the real mount point. */
                real_root = realpath(sysfs_root, NULL);
                if (!real_root)
                        return negative_errno();
                rest = path_startswith(real, real_root);
                if (!rest)
                        return -ENODEV;
        }
        if (!*rest)
                return -ENODEV; /* the root alone */
        if (asprintf(ret, "/%s", rest) < 0)
                return -ENOMEM;
        return 0;
}

/* A device below /devices needs a uevent file, anything else must be a
 * directory; and all of it must live on sysfs. */
static int check_device_dir(const char *syspath, const char *devpath)
{
        struct statfs sfs;
        struct stat st;
        char path[PATH_MAX];

        if (path_startswith(devpath, "/devices")) {
                int n = snprintf(path, sizeof(path), "%s/uevent", syspath);

                if (n < 0 || (size_t)n >= sizeof(path))
                        return -ENAMETOOLONG;
                if (access(path, F_OK) < 0)
                        return errno == ENOENT || errno == ENOTDIR ? -ENODEV : negative_errno();
        } else {
                if (stat(syspath, &st) < 0)
                        return negative_errno();
                if (!S_ISDIR(st.st_mode))
                        return -ENODEV;
        }
        if (verify_sysfs_magic()) {
                if (statfs(syspath, &sfs) < 0)
                        return negative_errno();
                if (sfs.f_type != SYSFS_MAGIC_NUMBER)
                        return -ENODEV;
        }
        return 0;
}

int udevice_new_from_syspath(const char *path, bool strict, struct udevice **ret)
{
        _cleanup_free_ char *devpath = NULL;
        _cleanup_(udevice_freep) struct udevice *d = NULL;
        int r;

        if (strict && !path_startswith(path, sysfs_root))
                return -EINVAL;
        r = canonical_devpath(path, &devpath);
        if (r < 0)
                return r;
        r = udevice_alloc(devpath, &d);
        if (r < 0)
                return r;
        r = check_device_dir(d->syspath, d->devpath);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(d);
        return 0;
}

static int new_from_mode_devnum(bool block, unsigned major, unsigned minor,
                                struct udevice **ret)
{
        _cleanup_(udevice_freep) struct udevice *d = NULL;
        char path[PATH_MAX];
        const char *subsystem = NULL;
        unsigned x, y;
        int r;

        if (major == 0)
                return -ENODEV;
        snprintf(path, sizeof(path), "%s/dev/%s/%u:%u", sysfs_root, block ? "block" : "char",
                 major, minor);
        r = udevice_new_from_syspath(path, true, &d);
        if (r < 0)
                return r;
        r = udevice_get_devnum(d, &x, &y);
        if (r == -ENOENT)
                return -ENXIO;
        if (r < 0)
                return r;
        if (x != major || y != minor)
                return -ENXIO;
        r = udevice_get_subsystem(d, &subsystem);
        if (r < 0 && r != -ENOENT)
                return r;
        if ((subsystem && streq(subsystem, "block")) != block)
                return -ENXIO;
        *ret = TAKE_PTR(d);
        return 0;
}

int udevice_new_from_devnum(char type, unsigned major, unsigned minor, struct udevice **ret)
{
        if (type != 'b' && type != 'c')
                return -EINVAL;
        return new_from_mode_devnum(type == 'b', major, minor, ret);
}

/* "/dev/block/M:m", "/dev/char/M:m": 1 with the numbers, 0 if not this form. */
static int parse_dev_major_minor(const char *devname, bool *block, unsigned *major,
                                 unsigned *minor)
{
        const char *rest;

        if ((rest = path_startswith(devname, "/dev/block")) && *rest)
                *block = true;
        else if ((rest = path_startswith(devname, "/dev/char")) && *rest)
                *block = false;
        else
                return 0;
        return parse_devnum(rest, major, minor) < 0 ? 0 : 1;
}

int udevice_new_from_devname(const char *devname, struct udevice **ret)
{
        const char *rest = path_startswith(devname, "/dev");
        unsigned major, minor;
        struct stat st;
        bool block;

        if (!rest || !*rest)
                return -EINVAL;
        if (parse_dev_major_minor(devname, &block, &major, &minor) > 0)
                return new_from_mode_devnum(block, major, minor, ret);
        if (stat(devname, &st) < 0)
                return errno == ENODEV || errno == ENXIO || errno == ENOENT ? -ENODEV
                                                                             : negative_errno();
        if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode))
                return -ENOTTY;
        return new_from_mode_devnum(S_ISBLK(st.st_mode), major(st.st_rdev), minor(st.st_rdev),
                                    ret);
}

int udevice_new_from_path(const char *path, struct udevice **ret)
{
        if (path_startswith(path, "/dev"))
                return udevice_new_from_devname(path, ret);
        return udevice_new_from_syspath(path, false, ret);
}

int udevice_new_from_ifindex(int ifindex, struct udevice **ret)
{
        _cleanup_(udevice_freep) struct udevice *d = NULL;
        char name[IF_NAMESIZE], path[PATH_MAX];
        int i, r;

        if (ifindex <= 0)
                return -EINVAL;
        if (!if_indextoname((unsigned)ifindex, name))
                return -ENODEV;
        snprintf(path, sizeof(path), "%s/class/net/%s", sysfs_root, name);
        r = udevice_new_from_syspath(path, true, &d);
        if (r < 0)
                return r;
        r = udevice_get_ifindex(d, &i);
        if (r == -ENOENT)
                return -ENXIO;
        if (r < 0)
                return r;
        if (i != ifindex)
                return -ENXIO;
        *ret = TAKE_PTR(d);
        return 0;
}

/* 1 and *ret if <root>/a b c d exists and is a device, 0 if it does not exist. */
static int try_join(const char *a, const char *b, const char *c, const char *d,
                    struct udevice **ret)
{
        char path[PATH_MAX];
        int r, n = snprintf(path, sizeof(path), "%s/%s%s%s%s", sysfs_root, a, b, c ?: "", d ?: "");

        if (n < 0 || (size_t)n >= sizeof(path))
                return 0; /* too long to exist */
        if (access(path, F_OK) < 0)
                return errno == ENOENT || errno == ENAMETOOLONG ? 0 : negative_errno();
        r = udevice_new_from_syspath(path, true, ret);
        return r < 0 ? r : 1;
}

/* The pseudo subsystems "subsystem", "module" and "drivers". */
static int lookup_pseudo(const char *subsystem, const char *name, struct udevice **ret)
{
        char sub[NAME_MAX + 1];
        const char *sep;
        int r;

        if (streq(subsystem, "subsystem")) {
                r = try_join("bus/", name, NULL, NULL, ret);
                return r != 0 ? r : try_join("class/", name, NULL, NULL, ret);
        }
        if (streq(subsystem, "module"))
                return try_join("module/", name, NULL, NULL, ret);
        if (!streq(subsystem, "drivers"))
                return 0;
        /* "<subsystem>:<driver>", or "<subsystem>:drivers" for the directory */
        sep = strchr(name, ':');
        if (!sep || sep[1] == '\0' || (size_t)(sep - name) > NAME_MAX)
                return 0;
        snprintf(sub, sizeof(sub), "%.*s", (int)(sep - name), name);
        if (streq(sep + 1, "drivers"))
                return try_join("bus/", sub, "/drivers", NULL, ret);
        return try_join("bus/", sub, "/drivers/", sep + 1, ret);
}

int udevice_new_from_subsystem_sysname(const char *subsystem, const char *sysname,
                                       struct udevice **ret)
{
        _cleanup_free_ char *name = NULL;
        int r;

        if (!path_is_normalized(subsystem) || !path_is_normalized(sysname))
                return -EINVAL;
        name = strdup(sysname);
        if (!name)
                return -ENOMEM;
        for (char *p = name; *p; p++)
                if (*p == '/')
                        *p = '!';
        r = lookup_pseudo(subsystem, name, ret);
        if (r == 0)
                r = try_join("bus/", subsystem, "/devices/", name, ret);
        if (r == 0)
                r = try_join("class/", subsystem, "/", name, ret);
        if (r == 0)
                r = try_join("firmware/", subsystem, "/", name, ret);
        if (r == 0)
                return -ENODEV;
        return r < 0 ? r : 0;
}

int udevice_new_from_device_id(const char *id, struct udevice **ret)
{
        unsigned major, minor;
        char subsystem[NAME_MAX + 1];
        const char *sep;
        int r;

        switch (id[0]) {
        case 'b':
        case 'c':
                r = parse_devnum(id + 1, &major, &minor);
                if (r < 0)
                        return r;
                return udevice_new_from_devnum(id[0], major, minor, ret);
        case 'n':
                r = parse_ifindex(id + 1);
                if (r < 0)
                        return r;
                return udevice_new_from_ifindex(r, ret);
        case '+':
                sep = strchr(id + 1, ':');
                if (!sep || (size_t)(sep - id - 1) > NAME_MAX)
                        return -EINVAL;
                snprintf(subsystem, sizeof(subsystem), "%.*s", (int)(sep - id - 1), id + 1);
                return udevice_new_from_subsystem_sysname(subsystem, sep + 1, ret);
        default:
                return -EINVAL;
        }
}

/* systemd's unit name unescaping: '-' is '/', "\\xNN" a byte. */
static int unescape_unit_prefix(const char *s, size_t n, char *out)
{
        size_t j = 0;

        for (size_t i = 0; i < n; i++) {
                unsigned v;

                if (s[i] == '-') {
                        out[j++] = '/';
                        continue;
                }
                if (s[i] != '\\') {
                        out[j++] = s[i];
                        continue;
                }
                if (i + 3 >= n || s[i + 1] != 'x' || !isxdigit((unsigned char)s[i + 2]) ||
                    !isxdigit((unsigned char)s[i + 3]) || sscanf(s + i + 2, "%2x", &v) != 1 ||
                    v == 0)
                        return -EINVAL;
                out[j++] = (char)v;
                i += 3;
        }
        out[j] = '\0';
        return 0;
}

/* A plain ".device" unit name, turned into its path. -EINVAL if it is not
 * one. *ret owned. */
static int device_unit_to_path(const char *unit, char **ret)
{
        static const char valid[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                    "0123456789:-_.\\";
        size_t n = strlen(unit), k = STRLEN(DEVICE_UNIT_SUFFIX);
        _cleanup_free_ char *p = NULL;
        int r;

        if (n <= k || n > UNIT_NAME_MAX || !endswith(unit, DEVICE_UNIT_SUFFIX))
                return -EINVAL;
        n -= k;
        if (strspn(unit, valid) < n)
                return -EINVAL;
        p = malloc(n + 2);
        if (!p)
                return -ENOMEM;
        p[0] = '/';
        if (n == 1 && unit[0] == '-') {
                p[1] = '\0';
        } else {
                r = unescape_unit_prefix(unit, n, p + 1);
                if (r < 0)
                        return r;
                if (p[1] == '/' || endswith(p, "/") || !path_is_normalized(p))
                        return -EINVAL;
        }
        *ret = TAKE_PTR(p);
        return 0;
}

/* Does the argument have the shape of a device id? */
static bool looks_like_device_id(const char *s)
{
        unsigned a, b;

        if ((s[0] == 'b' || s[0] == 'c') && parse_devnum(s + 1, &a, &b) == 0)
                return true;
        if (s[0] == 'n' && s[1] >= '1' && s[1] <= '9' && strspn(s + 1, "0123456789") ==
                                                                strlen(s + 1))
                return true;
        return s[0] == '+' && strchr(s + 1, ':');
}

int udevice_find(const char *arg, const char *prefix, struct udevice **ret)
{
        _cleanup_free_ char *path = NULL;
        int r;

        if (!*arg)
                return -EINVAL;
        if (udevice_new_from_path(arg, ret) >= 0)
                return 0;
        if (prefix && !path_startswith(arg, prefix)) {
                if (asprintf(&path, "%s%s%s", prefix,
                             endswith(prefix, "/") || arg[0] == '/' ? "" : "/", arg) < 0)
                        return -ENOMEM;
                if (udevice_new_from_path(path, ret) >= 0)
                        return 0;
                free(path);
                path = NULL;
        }
        if (strchr(arg, '/'))
                return -ENODEV; /* a path cannot be a unit name */
        if (looks_like_device_id(arg)) {
                r = udevice_new_from_device_id(arg, ret);
                return r == -ENXIO || r == -ENOENT ? -ENODEV : r;
        }
        r = device_unit_to_path(arg, &path);
        if (r < 0)
                return r;
        return udevice_new_from_path(path, ret);
}

/* ---------------------------------------------------------------- sysname, subsystem, driver */

static int load_sysname(struct udevice *d)
{
        const char *last = strrchr(d->devpath, '/');
        size_t len, digits;

        if (d->sysname)
                return 0;
        d->sysname = strdup(last ? last + 1 : d->devpath);
        if (!d->sysname)
                return -ENOMEM;
        for (char *p = d->sysname; *p; p++)
                if (*p == '!')
                        *p = '/';
        len = strlen(d->sysname);
        digits = 0;
        while (digits < len && isdigit((unsigned char)d->sysname[len - digits - 1]))
                digits++;
        /* A name of digits only has no number. */
        d->sysnum = digits > 0 && digits < len ? d->sysname + len - digits : NULL;
        return 0;
}

int udevice_get_sysname(struct udevice *d, const char **ret)
{
        int r = load_sysname(d);

        if (r < 0)
                return r;
        *ret = d->sysname;
        return 0;
}

int udevice_get_sysnum(struct udevice *d, const char **ret)
{
        int r = load_sysname(d);

        if (r < 0)
                return r;
        if (!d->sysnum)
                return -ENOENT;
        *ret = d->sysnum;
        return 0;
}

static int set_subsystem(struct udevice *d, const char *subsystem)
{
        int r = set_string(&d->subsystem, subsystem);

        if (r == 0)
                r = prop_set(d, "SUBSYSTEM", subsystem);
        if (r == 0)
                d->subsystem_set = true;
        return r;
}

/* "drivers": the real subsystem is the component before "/drivers". */
static int set_drivers_subsystem(struct udevice *d)
{
        const char *p = strstr(d->devpath, "/drivers/"), *start;
        char *sub;
        int r;

        if (!p && endswith(d->devpath, "/drivers"))
                p = d->devpath + strlen(d->devpath) - STRLEN("/drivers");
        if (!p)
                return -EINVAL;
        while (p > d->devpath && p[-1] == '/')
                p--;
        start = p;
        while (start > d->devpath && start[-1] != '/')
                start--;
        if (start == p)
                return -EINVAL;
        sub = strndup(start, (size_t)(p - start));
        if (!sub)
                return -ENOMEM;
        r = set_subsystem(d, "drivers");
        if (r < 0) {
                free(sub);
                return r;
        }
        free(d->driver_subsystem);
        d->driver_subsystem = sub;
        return 0;
}

/* The last component of the target of <syspath>/<name>; 0, -ENOENT, -errno. */
static int read_link_basename(const struct udevice *d, const char *name, char *buf, size_t size)
{
        char path[PATH_MAX], target[PATH_MAX];
        const char *base;
        ssize_t n;

        snprintf(path, sizeof(path), "%s/%s", d->syspath, name);
        n = readlink(path, target, sizeof(target) - 1);
        if (n < 0)
                return negative_errno();
        target[n] = '\0';
        base = strrchr(target, '/');
        base = base ? base + 1 : target;
        if (strlen(base) >= size)
                return -ENAMETOOLONG;
        strcpy(buf, base);
        return 0;
}

static bool nonempty_rest(const char *path, const char *prefix)
{
        const char *rest = path_startswith(path, prefix);

        return rest && *rest;
}

static int load_subsystem(struct udevice *d)
{
        char name[NAME_MAX + 1];
        int r = read_link_basename(d, "subsystem", name, sizeof(name));

        if (r < 0 && r != -ENOENT)
                return log_debug_errno(r, "%s: failed to read the subsystem link: %m", d->devpath);
        if (r == 0)
                return set_subsystem(d, name);
        if (nonempty_rest(d->devpath, "/module/"))
                return set_subsystem(d, "module");
        if (strstr(d->syspath, "/drivers/") || endswith(d->syspath, "/drivers"))
                return set_drivers_subsystem(d);
        if (nonempty_rest(d->devpath, "/class/") || nonempty_rest(d->devpath, "/bus/"))
                return set_subsystem(d, "subsystem");
        d->subsystem_set = true;
        return 0;
}

int udevice_get_subsystem(struct udevice *d, const char **ret)
{
        if (!d->subsystem_set) {
                int r = load_subsystem(d);

                if (r < 0)
                        return r;
        }
        if (!d->subsystem)
                return -ENOENT;
        if (ret)
                *ret = d->subsystem;
        return 0;
}

static int set_driver(struct udevice *d, const char *driver)
{
        int r = set_string(&d->driver, driver);

        if (r == 0)
                r = prop_set(d, "DRIVER", driver);
        if (r == 0)
                d->driver_set = true;
        return r;
}

int udevice_get_driver(struct udevice *d, const char **ret)
{
        if (!d->driver_set) {
                char name[NAME_MAX + 1];
                int r = read_link_basename(d, "driver", name, sizeof(name));

                if (r < 0 && r != -ENOENT)
                        return log_debug_errno(r, "%s: failed to read the driver link: %m",
                                               d->devpath);
                r = set_driver(d, r == 0 ? name : NULL);
                if (r < 0)
                        return r;
        }
        if (!d->driver)
                return -ENOENT;
        if (ret)
                *ret = d->driver;
        return 0;
}

/* ---------------------------------------------------------------- uevent file */

static int set_devname(struct udevice *d, const char *value)
{
        _cleanup_free_ char *v = NULL;

        if (value[0] != '/') {
                if (asprintf(&v, "/dev/%s", value) < 0)
                        return -ENOMEM;
        } else if (!(v = strdup(value)))
                return -ENOMEM;
        if (prop_set(d, "DEVNAME", v) < 0)
                return -ENOMEM;
        free(d->devname);
        d->devname = TAKE_PTR(v);
        return 0;
}

static int set_devnum(struct udevice *d, const char *major, const char *minor)
{
        unsigned x, y = 0;
        int r = parse_uint(major, &x);

        if (r < 0)
                return r;
        if (x == 0)
                return 0;
        if (x >= DEVICE_MAJOR_LIMIT)
                return -EINVAL;
        if (minor) {
                r = parse_uint(minor, &y);
                if (r < 0)
                        return r;
                if (y >= DEVICE_MINOR_LIMIT)
                        return -EINVAL;
        }
        if (prop_set(d, "MAJOR", major) < 0 || (minor && prop_set(d, "MINOR", minor) < 0))
                return -ENOMEM;
        d->major = x;
        d->minor = y;
        return 0;
}

/* One KEY=value of a uevent file or a received event. MAJOR/MINOR are only
 * remembered (applied after the whole list). */
static int handle_uevent_entry(struct udevice *d, const char *key, const char *value,
                               const char **major, const char **minor)
{
        unsigned u;
        uint64_t q;
        int r;

        if (streq(key, "DEVTYPE")) {
                r = set_string(&d->devtype, value);
                return r < 0 ? r : prop_set(d, key, value);
        }
        if (streq(key, "IFINDEX")) {
                r = parse_ifindex(value);
                if (r < 0)
                        return r;
                d->ifindex = r;
                return prop_set(d, key, value);
        }
        if (streq(key, "DEVNAME"))
                return set_devname(d, value);
        if (streq(key, "DEVMODE")) {
                r = parse_uint(value, &u);
                if (r < 0 || u > 07777)
                        return r < 0 ? r : -EINVAL;
                return prop_set(d, key, value);
        }
        if (streq(key, "DISKSEQ")) {
                r = parse_u64(value, &q);
                if (r < 0 || q == 0)
                        return r < 0 ? r : -EINVAL;
                d->diskseq = q;
                return prop_set(d, key, value);
        }
        if (streq(key, "MAJOR"))
                *major = value;
        else if (streq(key, "MINOR"))
                *minor = value;
        else
                return prop_set(d, key, value);
        return 0;
}

static bool is_newline(char c) { return c == '\n' || c == '\r'; }

/* sd-device's uevent file parser: "KEY=value" lines; a line without '='
 * is skipped; an unterminated last line is ignored. */
static int parse_uevent(struct udevice *d, char *buf, size_t len)
{
        enum { PRE_KEY, KEY, VALUE } state = PRE_KEY;
        const char *key = NULL, *value = NULL, *major = NULL, *minor = NULL;

        for (size_t i = 0; i < len; i++) {
                char c = buf[i];

                if (state == PRE_KEY) {
                        if (!is_newline(c)) {
                                key = buf + i;
                                state = KEY;
                        }
                } else if (state == KEY) {
                        if (c == '=') {
                                buf[i] = '\0';
                                value = buf + i + 1;
                                state = VALUE;
                        } else if (is_newline(c)) {
                                buf[i] = '\0';
                                log_debug("%s: invalid uevent line '%s', ignoring", d->devpath,
                                          key);
                                state = PRE_KEY;
                        }
                } else if (is_newline(c)) {
                        buf[i] = '\0';
                        if (handle_uevent_entry(d, key, value, &major, &minor) == -ENOMEM)
                                return -ENOMEM;
                        state = PRE_KEY;
                }
        }
        if (major && set_devnum(d, major, minor) == -ENOMEM)
                return -ENOMEM;
        return 0;
}

static int read_uevent(struct udevice *d)
{
        _cleanup_free_ char *buf = NULL;
        char path[PATH_MAX];
        size_t len;
        int r;

        if (d->uevent_loaded || d->sealed)
                return 0;
        d->uevent_loaded = true;
        snprintf(path, sizeof(path), "%s/uevent", d->syspath);
        r = read_virtual_file(path, &buf, &len);
        if (r < 0) {
                /* Write-only, vanished, or no uevent file at all: nothing to add. */
                if (r == -EACCES || r == -ENODEV || r == -ENXIO || r == -ENOENT)
                        return 0;
                return log_debug_errno(r, "%s: failed to read %s: %m", d->devpath, path);
        }
        return parse_uevent(d, buf, len);
}

int udevice_get_devtype(struct udevice *d, const char **ret)
{
        int r = read_uevent(d);

        if (r < 0)
                return r;
        if (!d->devtype)
                return -ENOENT;
        *ret = d->devtype;
        return 0;
}

int udevice_get_devnum(struct udevice *d, unsigned *ret_major, unsigned *ret_minor)
{
        int r = read_uevent(d);

        if (r < 0)
                return r;
        if (d->major == 0)
                return -ENOENT;
        if (ret_major)
                *ret_major = d->major;
        if (ret_minor)
                *ret_minor = d->minor;
        return 0;
}

int udevice_get_ifindex(struct udevice *d, int *ret)
{
        int r = read_uevent(d);

        if (r < 0)
                return r;
        if (d->ifindex <= 0)
                return -ENOENT;
        if (ret)
                *ret = d->ifindex;
        return 0;
}

int udevice_get_devname(struct udevice *d, const char **ret)
{
        int r = read_uevent(d);

        if (r < 0)
                return r;
        if (!d->devname)
                return -ENOENT;
        *ret = d->devname;
        return 0;
}

int udevice_get_diskseq(struct udevice *d, uint64_t *ret)
{
        int r = read_uevent(d);

        if (r < 0)
                return r;
        if (d->diskseq == 0)
                return -ENOENT;
        *ret = d->diskseq;
        return 0;
}

/* ---------------------------------------------------------------- database */

int udevice_get_id(struct udevice *d, const char **ret)
{
        const char *subsystem;
        unsigned major = 0, minor = 0;
        int ifindex = 0, r;
        char buf[DB_ID_NAME_MAX + 1];
        char *id;

        if (d->id) {
                *ret = d->id;
                return 0;
        }
        r = udevice_get_subsystem(d, &subsystem);
        if (r < 0)
                return r;
        /* as sd-device: a devnum or ifindex that cannot be read counts as none */
        if (udevice_get_devnum(d, &major, &minor) < 0)
                major = minor = 0;
        if (udevice_get_ifindex(d, &ifindex) < 0)
                ifindex = 0;
        r = device_id_format(buf, sizeof(buf), subsystem, d->devpath, major, minor, ifindex);
        if (r < 0) /* too long or no valid file name: sd-device says -EINVAL */
                return r == -ENOENT ? r : -EINVAL;
        id = strdup(buf);
        if (!id)
                return -ENOMEM;
        d->id = id;
        *ret = id;
        return 0;
}

/* The number of the first line sd-device would skip or reject, 0 if none. */
static unsigned first_bad_line(const char *buf, size_t len)
{
        unsigned line = 0;

        for (size_t i = 0; i < len;) {
                size_t n = 0;
                int v;
                uint64_t q;
                char tmp[64];

                while (i + n < len && !is_newline(buf[i + n]))
                        n++;
                line++;
                if (i + n == len || memchr(buf + i, '\0', n))
                        return line; /* unterminated or binary */
                if (n > 0) {
                        const char *val = buf + i + 2;
                        size_t vn = n >= 2 ? n - 2 : 0;
                        bool ok = n >= 2 && buf[i + 1] == ':';

                        if (ok && vn < sizeof(tmp)) {
                                memcpy(tmp, val, vn);
                                tmp[vn] = '\0';
                        }
                        switch (ok ? buf[i] : '?') {
                        case 'S':
                                ok = vn > 0;
                                break;
                        case 'L':
                                ok = vn < sizeof(tmp) && parse_int(tmp, &v) == 0;
                                break;
                        case 'I':
                        case 'V':
                                ok = vn < sizeof(tmp) && parse_u64(tmp, &q) == 0;
                                break;
                        case 'E':
                                ok = vn > 0 && val[0] != '=' && memchr(val, '=', vn);
                                break;
                        case 'G':
                        case 'Q':
                                ok = vn > 0 && !memchr(val, ':', vn) && !memchr(val, ' ', vn);
                                break;
                        case 'W':
                                break;
                        default:
                                ok = false;
                        }
                        if (!ok)
                                return line;
                }
                i += n + 1;
        }
        return 0;
}

static int add_unique(struct strlist *l, const char *s) { return strlist_add_unique(l, s); }

/* Take over what the record says (order of the file kept). */
static int apply_db_record(struct udevice *d, const struct db_record *rec)
{
        char buf[32];
        int r = 0;

        for (size_t i = 0; r >= 0 && i < rec->devlinks.n; i++) {
                _cleanup_free_ char *link = NULL;

                if (asprintf(&link, "/dev/%s", rec->devlinks.items[i]) < 0)
                        return -ENOMEM;
                r = add_unique(&d->devlinks, link);
                d->devlinks_outdated = true;
        }
        d->devlink_priority = rec->link_priority;
        if (r >= 0 && rec->usec_initialized > 0) {
                snprintf(buf, sizeof(buf), "%" PRIu64, rec->usec_initialized);
                r = prop_set(d, "USEC_INITIALIZED", buf);
        }
        for (size_t i = 0; r >= 0 && i < rec->properties.n; i++) {
                _cleanup_free_ char *kv = strdup(rec->properties.items[i]);
                char *eq = kv ? strchr(kv, '=') : NULL;

                if (!kv)
                        return -ENOMEM;
                if (!eq)
                        continue;
                *eq = '\0';
                r = prop_set(d, kv, eq + 1);
        }
        for (size_t i = 0; r >= 0 && i < rec->tags.n; i++) {
                r = add_unique(&d->tags, rec->tags.items[i]);
                d->tags_outdated = true;
        }
        for (size_t i = 0; r >= 0 && i < rec->current_tags.n; i++) {
                r = add_unique(&d->current_tags, rec->current_tags.items[i]);
                d->tags_outdated = true;
        }
        return r;
}

/* Read the file; -ENOENT if there is none. *ret owned. */
static int read_db_file(const char *path, char **ret, size_t *ret_len)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        struct stat st;

        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (S_ISDIR(st.st_mode))
                return -EISDIR;
        if (!S_ISREG(st.st_mode))
                return -EBADMSG;
        return read_fd_bounded(fd, DB_FILE_MAX, ret, ret_len);
}

int udevice_read_db(struct udevice *d)
{
        _cleanup_(db_record_clear) struct db_record rec = {};
        _cleanup_free_ char *buf = NULL;
        char path[PATH_MAX];
        const char *id;
        size_t len;
        int r;

        if (d->db_loaded || d->sealed)
                return 0;
        r = udevice_get_id(d, &id);
        if (r < 0)
                return r;
        snprintf(path, sizeof(path), "%s/data/%s", run_dir, id);
        r = read_db_file(path, &buf, &len);
        if (r == -ENOENT)
                return 0;
        if (r < 0) {
                d->db_error = r;
                return log_debug_errno(r, "%s: failed to read %s: %m", d->devpath, path);
        }
        d->initialized = true;
        d->db_loaded = true;
        d->db_bad_line = first_bad_line(buf, len);
        r = db_parse(buf, len, &rec);
        if (r >= 0)
                r = apply_db_record(d, &rec);
        if (r < 0)
                d->db_error = r;
        return r;
}

int udevice_is_initialized(struct udevice *d)
{
        int r = udevice_read_db(d);

        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        return d->initialized;
}

int udevice_get_devlink_priority(struct udevice *d, int *ret)
{
        int r = udevice_read_db(d);

        if (r < 0)
                return r;
        *ret = d->devlink_priority;
        return 0;
}

bool udevice_has_tag(struct udevice *d, const char *tag)
{
        (void)udevice_read_db(d);
        return strlist_contains(&d->tags, tag);
}

/* ---------------------------------------------------------------- properties */

/* Words joined by sep; with wrap also before and after ("", not ":" alone, if none). */
/* The list joined by sep (wrapped in it if `wrap`), empty items left out as
 * sd-device's set_strjoin() does: the empty tag a database may hold (TAG="")
 * never shows in TAGS= or CURRENT_TAGS=; "" when nothing is left. */
static char *join_list(const struct strlist *l, const char *sep, bool wrap)
{
        size_t len = 1, n = 0;
        char *s, *p;

        for (size_t i = 0; i < l->n; i++)
                if (l->items[i][0]) {
                        len += strlen(l->items[i]) + strlen(sep);
                        n++;
                }
        if (n == 0)
                return strdup("");
        len += wrap ? strlen(sep) : 0;
        s = p = malloc(len);
        if (!s)
                return NULL;
        *p = '\0';
        if (wrap)
                p = stpcpy(p, sep);
        n = 0;
        for (size_t i = 0; i < l->n; i++) {
                if (!l->items[i][0])
                        continue;
                if (n++ > 0)
                        p = stpcpy(p, sep);
                p = stpcpy(p, l->items[i]);
        }
        if (wrap)
                p = stpcpy(p, sep);
        return s;
}

static int set_joined(struct udevice *d, const char *key, const struct strlist *l,
                      const char *sep, bool wrap)
{
        _cleanup_free_ char *v = join_list(l, sep, wrap);

        if (!v)
                return -ENOMEM;
        return *v ? prop_set(d, key, v) : 0;
}

int udevice_properties_prepare(struct udevice *d)
{
        int r = read_uevent(d);

        if (r >= 0)
                r = udevice_read_db(d);
        if (r < 0)
                return r;
        if (d->devlinks_outdated) {
                r = set_joined(d, "DEVLINKS", &d->devlinks, " ", false);
                if (r < 0)
                        return r;
                d->devlinks_outdated = false;
        }
        if (d->tags_outdated) {
                r = set_joined(d, "TAGS", &d->tags, ":", true);
                if (r >= 0)
                        r = set_joined(d, "CURRENT_TAGS", &d->current_tags, ":", true);
                if (r < 0)
                        return r;
                d->tags_outdated = false;
        }
        return 0;
}

const char *udevice_get_property(struct udevice *d, const char *key)
{
        ssize_t i;

        if (udevice_properties_prepare(d) < 0)
                return NULL;
        i = prop_index(d, key);
        return i < 0 ? NULL : d->props[i].value;
}

/* ---------------------------------------------------------------- parent */

int udevice_get_parent(struct udevice *d, struct udevice **ret)
{
        size_t root_len = strlen(sysfs_root);

        if (!d->parent_set) {
                _cleanup_free_ char *p = strdup(d->syspath);
                size_t len = p ? strlen(p) : 0;

                if (!p)
                        return -ENOMEM;
                for (;;) {
                        int r;

                        while (len > root_len && p[len - 1] != '/')
                                len--;
                        while (len > root_len && p[len - 1] == '/')
                                len--;
                        if (len <= root_len)
                                break; /* reached the sysfs root */
                        p[len] = '\0';
                        r = udevice_new_from_syspath(p, true, &d->parent);
                        if (r >= 0)
                                break;
                        if (r != -ENODEV)
                                return r;
                }
                d->parent_set = true;
        }
        if (!d->parent)
                return -ENOENT;
        *ret = d->parent;
        return 0;
}

/* ---------------------------------------------------------------- events */

static int split_words(struct strlist *l, const char *value, const char *seps)
{
        _cleanup_free_ char *copy = strdup(value);
        char *save = NULL;

        if (!copy)
                return -ENOMEM;
        for (char *w = strtok_r(copy, seps, &save); w; w = strtok_r(NULL, seps, &save)) {
                int r = add_unique(l, w);

                if (r < 0)
                        return r;
        }
        return 0;
}

static int handle_event_entry(struct udevice *d, const char *key, const char *value,
                              const char **major, const char **minor)
{
        int r;

        if (streq(key, "UDEV_DATABASE_VERSION"))
                return 0;
        if (streq(key, "DEVPATH") || streq(key, "ACTION") || streq(key, "SEQNUM"))
                return prop_set(d, key, value);
        if (streq(key, "SUBSYSTEM"))
                return set_subsystem(d, value);
        if (streq(key, "DRIVER"))
                return set_driver(d, value);
        if (streq(key, "DEVLINKS")) {
                d->devlinks_outdated = true;
                return split_words(&d->devlinks, value, " \t\n");
        }
        if (streq(key, "TAGS") || streq(key, "CURRENT_TAGS")) {
                d->tags_outdated = true;
                r = split_words(&d->tags, value, ":");
                if (r >= 0 && streq(key, "CURRENT_TAGS"))
                        r = split_words(&d->current_tags, value, ":");
                return r;
        }
        return handle_uevent_entry(d, key, value, major, minor);
}

int udevice_new_from_event(const char *devpath, const struct udevice_kv *props, size_t n,
                           struct udevice **ret)
{
        _cleanup_(udevice_freep) struct udevice *d = NULL;
        const char *major = NULL, *minor = NULL;
        int r = udevice_alloc(devpath, &d);

        if (r < 0)
                return r;
        (void)prop_set(d, "DEVPATH", NULL); /* it takes its place in the message */
        d->sealed = true;
        d->subsystem_set = true;
        for (size_t i = 0; i < n; i++) {
                r = handle_event_entry(d, props[i].key, props[i].value, &major, &minor);
                if (r == -ENOMEM)
                        return r;
        }
        if (major && set_devnum(d, major, minor) == -ENOMEM)
                return -ENOMEM;
        if (d->subsystem && streq(d->subsystem, "drivers") && set_drivers_subsystem(d) == -ENOMEM)
                return -ENOMEM;
        d->initialized = true;
        *ret = TAKE_PTR(d);
        return 0;
}
