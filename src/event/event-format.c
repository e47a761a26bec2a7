/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (no shared state; udev_format() reads one worker's event) */
/* Substitutions, sanitising, command lines and property lines of the rules
 * engine (rules-format.h). Behaviour follows systemd 252's udev-event.c
 * (udev_event_apply_format, udev_check_format), udev-util.c
 * (udev_replace_*, udev_resolve_subsys_kernel), extract-word.c (the
 * relaxed, escape-retaining split used for argv) and udev-rules.c
 * (get_property_from_string); the code is our own. */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "device/device.h"
#include "event/event-format.h"
#include "event/udev-event.h"
#include "shared/log.h"
#include "shared/macro.h"

#define WHITESPACE " \t\n\r"

enum subst_type {
        SUBST_DEVNODE,
        SUBST_ATTR,
        SUBST_ENV,
        SUBST_KERNEL,
        SUBST_NUMBER,
        SUBST_DRIVER,
        SUBST_DEVPATH,
        SUBST_ID,
        SUBST_MAJOR,
        SUBST_MINOR,
        SUBST_RESULT,
        SUBST_PARENT,
        SUBST_NAME,
        SUBST_LINKS,
        SUBST_ROOT,
        SUBST_SYS,
};

/* Order matters: long names are matched by prefix, first match wins. */
static const struct {
        const char *name;
        char fmt;
        enum subst_type type;
} subst_map[] = {
        { "devnode", 'N', SUBST_DEVNODE }, { "tempnode", 'N', SUBST_DEVNODE },
        { "attr", 's', SUBST_ATTR },       { "sysfs", 's', SUBST_ATTR },
        { "env", 'E', SUBST_ENV },         { "kernel", 'k', SUBST_KERNEL },
        { "number", 'n', SUBST_NUMBER },   { "driver", 'd', SUBST_DRIVER },
        { "devpath", 'p', SUBST_DEVPATH }, { "id", 'b', SUBST_ID },
        { "major", 'M', SUBST_MAJOR },     { "minor", 'm', SUBST_MINOR },
        { "result", 'c', SUBST_RESULT },   { "parent", 'P', SUBST_PARENT },
        { "name", 'D', SUBST_NAME },       { "links", 'L', SUBST_LINKS },
        { "root", 'r', SUBST_ROOT },       { "sys", 'S', SUBST_SYS },
};

static const char *subst_name(enum subst_type t)
{
        for (size_t i = 0; i < ARRAY_SIZE(subst_map); i++)
                if (subst_map[i].type == t)
                        return subst_map[i].name;
        return "?";
}

static char subst_char(enum subst_type t)
{
        for (size_t i = 0; i < ARRAY_SIZE(subst_map); i++)
                if (subst_map[i].type == t)
                        return subst_map[i].fmt;
        return '?';
}

static bool is_space(char c)
{
        return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

/* At *str: 1 = a substitution (type, argument in attr, *str moved past it),
 * 0 = an ordinary character (for "$$"/"%%" *str is moved to the second one),
 * -EINVAL = malformed (*str unchanged). */
static int get_subst_type(const char **str, bool strict, enum subst_type *ret_type,
                          char attr[static UDEV_PATH_SIZE])
{
        const char *p = *str, *q = NULL;
        size_t i = 0;

        if (*p == '$') {
                p++;
                if (*p == '$') {
                        *str = p;
                        return 0;
                }
                for (i = 0; i < ARRAY_SIZE(subst_map); i++) {
                        size_t n = strlen(subst_map[i].name);

                        if (strneq(p, subst_map[i].name, n)) {
                                q = p + n;
                                break;
                        }
                }
        } else if (*p == '%') {
                p++;
                if (*p == '%') {
                        *str = p;
                        return 0;
                }
                for (i = 0; i < ARRAY_SIZE(subst_map); i++)
                        if (*p == subst_map[i].fmt) {
                                q = p + 1;
                                break;
                        }
        } else
                return 0;
        if (!q)
                return strict ? -EINVAL : 0;

        if (*q == '{') {
                const char *start = q + 1, *end = strchr(start, '}');
                size_t len;

                if (!end)
                        return -EINVAL;
                len = (size_t)(end - start);
                if (len == 0 || len >= UDEV_PATH_SIZE)
                        return -EINVAL;
                memcpy(attr, start, len);
                attr[len] = '\0';
                q = end + 1;
        } else
                attr[0] = '\0';

        *str = q;
        *ret_type = subst_map[i].type;
        return 1;
}

/* "N" or "N+" as systemd's safe_atou() takes it (leading whitespace, base
 * prefixes 0x/0/0b/0o). Returns 1 with '+', 0 without, -errno. */
static int parse_result_index(const char *attr, unsigned *ret)
{
        char buf[UDEV_PATH_SIZE];
        size_t n = strlen(attr);
        bool plus = false;
        const char *s;
        unsigned long v;
        unsigned base = 0;
        char *x = NULL;

        if (n >= sizeof(buf))
                return -EINVAL;
        if (n > 0 && attr[n - 1] == '+') {
                plus = true;
                n--;
        }
        memcpy(buf, attr, n);
        buf[n] = '\0';
        s = buf + strspn(buf, WHITESPACE);
        if (s[0] == '0' && (s[1] == 'b' || s[1] == 'B')) {
                base = 2;
                s += 2;
        } else if (s[0] == '0' && (s[1] == 'o' || s[1] == 'O')) {
                base = 8;
                s += 2;
        }
        errno = 0;
        v = strtoul(s, &x, (int)base);
        if (errno > 0)
                return -errno;
        if (!x || x == s || *x != '\0')
                return -EINVAL;
        if (v != 0 && s[0] == '-')
                return -ERANGE;
        if ((unsigned long)(unsigned)v != v)
                return -ERANGE;
        *ret = (unsigned)v;
        return plus;
}

/* Copy n bytes of src into dest[0..l-1] (NUL-terminated, l >= 1). */
static size_t put(char *dest, size_t l, const char *src, size_t n, bool *truncated)
{
        size_t k = n < l - 1 ? n : l - 1;

        memcpy(dest, src, k);
        dest[k] = '\0';
        if (k < n)
                *truncated = true;
        return k;
}

static size_t put_str(char *dest, size_t l, const char *src, bool *truncated)
{
        return put(dest, l, src, strlen(src), truncated);
}

/* A path below the device root, without it ("/dev/sda" -> "sda"). */
static const char *dev_relative(const struct udev_event *ev, const char *path)
{
        const struct device_roots *roots = device_ctx_roots(ev->ctx);
        size_t n;

        if (roots && roots->dev) {
                n = strlen(roots->dev);
                if (strneq(path, roots->dev, n) && path[n] == '/')
                        return path + n + 1;
        }
        if (strneq(path, "/dev/", STRLEN("/dev/")))
                return path + STRLEN("/dev/");
        return path;
}

static const char *root_of(const struct udev_event *ev, bool sys)
{
        const struct device_roots *roots = device_ctx_roots(ev->ctx);
        const char *r = roots ? (sys ? roots->sys : roots->dev) : NULL;

        if (!r || !*r)
                return sys ? "/sys" : "/dev";
        return r;
}

static ssize_t subst_result(const struct udev_event *ev, const char *attr, char *dest, size_t l,
                            bool *truncated)
{
        const char *p, *start;
        unsigned index = 0, i;
        bool plus = false;
        int r;

        if (!ev->program_result) {
                dest[0] = '\0';
                return 0;
        }
        if (attr[0]) {
                r = parse_result_index(attr, &index);
                if (r < 0)
                        return r;
                plus = r > 0;
        }
        if (index == 0)
                return (ssize_t)put_str(dest, l, ev->program_result, truncated);

        p = ev->program_result + strspn(ev->program_result, WHITESPACE);
        for (i = 1; i < index; i++) {
                p += strcspn(p, WHITESPACE);
                p += strspn(p, WHITESPACE);
                if (*p == '\0')
                        break;
        }
        if (i != index) {
                log_debug("rules: requested part %u of the result string not found", index);
                dest[0] = '\0';
                return 0;
        }
        start = p;
        if (plus)
                return (ssize_t)put_str(dest, l, start, truncated);
        return (ssize_t)put(dest, l, start, strcspn(start, WHITESPACE), truncated);
}

static ssize_t subst_attr(const struct udev_event *ev, const char *attr, char *dest, size_t l,
                          bool *truncated)
{
        char vbuf[UDEV_NAME_SIZE];
        const char *val = NULL;
        size_t n;

        if (!attr[0])
                return -EINVAL;
        /* "[subsystem/sysname]attribute" */
        if (attr[0] == '[' &&
            udev_resolve_subsys_kernel(ev->ctx, attr, true, vbuf, sizeof(vbuf)) == 0)
                val = vbuf;
        if (!val && ev->dev)
                (void)device_get_sysattr(ev->dev, attr, &val);
        if (!val && ev->dev_parent && ev->dev_parent != ev->dev)
                (void)device_get_sysattr(ev->dev_parent, attr, &val);
        if (!val) {
                dest[0] = '\0';
                return 0;
        }
        if (val != vbuf)
                (void)put_str(vbuf, sizeof(vbuf), val, truncated);
        n = strlen(vbuf);
        while (n > 0 && strchr(WHITESPACE, vbuf[n - 1]))
                vbuf[--n] = '\0';
        n = udev_replace_chars(vbuf, UDEV_ALLOWED_CHARS_INPUT);
        if (n > 0)
                log_debug("rules: %zu character(s) replaced in $attr{%s}", n, attr);
        return (ssize_t)put_str(dest, l, vbuf, truncated);
}

static ssize_t subst_links(const struct udev_event *ev, char *dest, size_t l, bool *truncated)
{
        size_t len = 0;

        dest[0] = '\0';
        for (size_t i = 0; i < ev->devlinks.n && !*truncated; i++) {
                const char *link = dev_relative(ev, ev->devlinks.items[i]);

                if (len > 0)
                        len += put(dest + len, l - len, " ", 1, truncated);
                len += put_str(dest + len, l - len, link, truncated);
        }
        return (ssize_t)len;
}

/* Write the value of one substitution into dest[0..l-1]; returns its length
 * or -errno (the rest of the format string is then dropped). */
static ssize_t subst_one(const struct udev_event *ev, enum subst_type type, const char *attr,
                         char *dest, size_t l, bool *truncated)
{
        struct device *dev = ev->dev, *parent;
        const char *val = NULL;
        char num[16];
        unsigned major = 0, minor = 0;
        int r;

        dest[0] = '\0';
        if (!dev && type != SUBST_ENV && type != SUBST_RESULT && type != SUBST_ROOT &&
            type != SUBST_SYS)
                return -ENODEV;

        switch (type) {
        case SUBST_DEVPATH:
                return (ssize_t)put_str(dest, l, device_devpath(dev), truncated);
        case SUBST_KERNEL:
                return (ssize_t)put_str(dest, l, device_sysname(dev), truncated);
        case SUBST_NUMBER:
                val = device_sysnum(dev);
                return val ? (ssize_t)put_str(dest, l, val, truncated) : 0;
        case SUBST_ID:
                if (!ev->dev_parent)
                        return 0;
                return (ssize_t)put_str(dest, l, device_sysname(ev->dev_parent), truncated);
        case SUBST_DRIVER:
                if (!ev->dev_parent)
                        return 0;
                r = device_get_driver(ev->dev_parent, &val);
                if (r == -ENOENT)
                        return 0;
                if (r < 0)
                        return r;
                return (ssize_t)put_str(dest, l, val, truncated);
        case SUBST_MAJOR:
        case SUBST_MINOR:
                r = device_get_devnum(dev, &major, &minor);
                if (r < 0 && r != -ENOENT)
                        return r;
                snprintf(num, sizeof(num), "%u",
                         r < 0 ? 0 : type == SUBST_MAJOR ? major : minor);
                return (ssize_t)put_str(dest, l, num, truncated);
        case SUBST_RESULT:
                return subst_result(ev, attr, dest, l, truncated);
        case SUBST_ATTR:
                return subst_attr(ev, attr, dest, l, truncated);
        case SUBST_PARENT:
                r = device_get_parent(dev, &parent);
                if (r == -ENOENT)
                        return 0;
                if (r < 0)
                        return r;
                r = device_get_devnode(parent, &val);
                if (r == -ENOENT)
                        return 0;
                if (r < 0)
                        return r;
                return (ssize_t)put_str(dest, l, dev_relative(ev, val), truncated);
        case SUBST_DEVNODE:
                r = device_get_devnode(dev, &val);
                if (r == -ENOENT)
                        return 0;
                if (r < 0)
                        return r;
                return (ssize_t)put_str(dest, l, val, truncated);
        case SUBST_NAME:
                if (ev->name)
                        return (ssize_t)put_str(dest, l, ev->name, truncated);
                if (device_get_devnode(dev, &val) >= 0)
                        return (ssize_t)put_str(dest, l, dev_relative(ev, val), truncated);
                return (ssize_t)put_str(dest, l, device_sysname(dev), truncated);
        case SUBST_LINKS:
                return subst_links(ev, dest, l, truncated);
        case SUBST_ROOT:
                return (ssize_t)put_str(dest, l, root_of(ev, false), truncated);
        case SUBST_SYS:
                return (ssize_t)put_str(dest, l, root_of(ev, true), truncated);
        case SUBST_ENV:
                if (!attr[0])
                        return -EINVAL;
                val = udev_event_get_property(ev, attr);
                return val ? (ssize_t)put_str(dest, l, val, truncated) : 0;
        }
        return -EINVAL;
}

size_t udev_format(const struct udev_event *ev, const char *src, char *dest, size_t size,
                   unsigned flags, bool *ret_truncated)
{
        const char *s = src;
        bool truncated = false;
        char *d = dest;

        if (!dest || size == 0) {
                if (ret_truncated)
                        *ret_truncated = true;
                return 0;
        }
        if (!ev || !src) {
                dest[0] = '\0';
                if (ret_truncated)
                        *ret_truncated = false;
                return 0;
        }

        while (*s) {
                char attr[UDEV_PATH_SIZE];
                enum subst_type type;
                bool t = false;
                ssize_t len;
                int r;

                r = get_subst_type(&s, false, &type, attr);
                if (r < 0) {
                        log_warning("rules: invalid format string, ignoring: %s", src);
                        break;
                }
                if (r == 0) {
                        if (size < 2) {
                                truncated = true;
                                break;
                        }
                        *d++ = *s++;
                        size--;
                        continue;
                }
                len = subst_one(ev, type, attr, d, size, &t);
                if (len < 0) {
                        log_warning_errno((int)len,
                                          "rules: failed to substitute '$%s' / '%%%c' in '%s', "
                                          "ignoring: %m",
                                          subst_name(type), subst_char(type), src);
                        break;
                }
                truncated = truncated || t;
                if ((flags & UDEV_FORMAT_REPLACE_WHITESPACE) && type != SUBST_RESULT)
                        len = (ssize_t)udev_replace_whitespace(d, d, (size_t)len);
                d += len;
                size -= (size_t)len;
        }
        *d = '\0';
        if (ret_truncated)
                *ret_truncated = truncated;
        return (size_t)(d - dest);
}

int udev_format_check_full(const char *value, size_t *ret_offset, const char **ret_hint)
{
        const char *s = value, *hint = NULL;
        char attr[UDEV_PATH_SIZE];
        enum subst_type type;
        unsigned idx;
        int r;

        if (!value)
                return -EINVAL;
        while (*s) {
                r = get_subst_type(&s, true, &type, attr);
                if (r < 0) {
                        hint = "invalid substitution type";
                        break;
                }
                if (r == 0) {
                        s++;
                        continue;
                }
                if ((type == SUBST_ATTR || type == SUBST_ENV) && !attr[0]) {
                        hint = "attribute value missing";
                        break;
                }
                if (type == SUBST_RESULT && attr[0] && parse_result_index(attr, &idx) < 0) {
                        hint = "attribute value not a valid number";
                        break;
                }
        }
        if (!hint)
                return 0;
        if (ret_offset)
                *ret_offset = (size_t)(s - value);
        if (ret_hint)
                *ret_hint = hint;
        return -EINVAL;
}

int udev_format_check(const char *s, char *errbuf, size_t n)
{
        const char *hint = NULL;
        size_t offset = 0;
        int r;

        r = udev_format_check_full(s, &offset, &hint);
        if (errbuf && n > 0) {
                if (r < 0 && hint)
                        snprintf(errbuf, n, "char %zu: %s", offset + 1, hint);
                else
                        errbuf[0] = '\0';
        }
        return r;
}

/* ------------------------------------------------------------ sanitising */

static bool allow_listed(char c, const char *allow)
{
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
               strchr("#+-.:=@_", c) || (allow && strchr(allow, c));
}

int udev_utf8_char_len(const char *s)
{
        const unsigned char *p = (const unsigned char *)s;
        uint32_t ch;
        int len;

        if (!s || p[0] == 0)
                return -EINVAL;
        if (p[0] < 0x80)
                return 1;
        if ((p[0] & 0xe0) == 0xc0) {
                len = 2;
                ch = p[0] & 0x1f;
        } else if ((p[0] & 0xf0) == 0xe0) {
                len = 3;
                ch = p[0] & 0x0f;
        } else if ((p[0] & 0xf8) == 0xf0) {
                len = 4;
                ch = p[0] & 0x07;
        } else
                return -EINVAL; /* continuation byte, or a 5/6-byte form (always > U+10FFFF) */
        for (int i = 1; i < len; i++) {
                if ((p[i] & 0xc0) != 0x80)
                        return -EINVAL; /* includes a NUL: truncated sequence */
                ch = (ch << 6) | (p[i] & 0x3f);
        }
        /* shortest form only */
        if ((len == 2 && ch < 0x80) || (len == 3 && ch < 0x800) || (len == 4 && ch < 0x10000))
                return -EINVAL;
        if (ch >= 0x110000 || (ch & 0xfffff800) == 0xd800 || (ch >= 0xfdd0 && ch <= 0xfdef) ||
            (ch & 0xfffe) == 0xfffe)
                return -EINVAL;
        return len;
}

size_t udev_replace_chars(char *s, const char *allow)
{
        size_t i = 0, replaced = 0;

        if (!s)
                return 0;
        while (s[i] != '\0') {
                int len;

                if (allow_listed(s[i], allow)) {
                        i++;
                        continue;
                }
                /* keep \x hex encodings */
                if (s[i] == '\\' && s[i + 1] == 'x') {
                        i += 2;
                        continue;
                }
                len = udev_utf8_char_len(s + i);
                if (len > 1) {
                        i += (size_t)len;
                        continue;
                }
                if (is_space(s[i]) && allow && strchr(allow, ' '))
                        s[i] = ' ';
                else
                        s[i] = '_';
                i++;
                replaced++;
        }
        return replaced;
}

size_t udev_replace_whitespace(const char *src, char *dst, size_t len)
{
        bool space = false;
        size_t i, j;

        if (!src || !dst)
                return 0;
        i = strspn(src, WHITESPACE);
        for (j = 0; j < len && i < len && src[i] != '\0'; i++) {
                if (is_space(src[i])) {
                        space = true;
                        continue;
                }
                if (space) {
                        if (j + 1 >= len)
                                break;
                        dst[j++] = '_';
                        space = false;
                }
                dst[j++] = src[i];
        }
        dst[j] = '\0';
        return j;
}

bool udev_ifname_valid_char(char c)
{
        unsigned char u = (unsigned char)c;

        return u > 32 && u < 127 && c != ':' && c != '/' && c != '%';
}

size_t udev_replace_ifname(char *s)
{
        size_t replaced = 0;

        for (char *p = s; p && *p; p++)
                if (!udev_ifname_valid_char(*p)) {
                        *p = '_';
                        replaced++;
                }
        return replaced;
}

size_t udev_sanitize_program_result(char *s)
{
        size_t n;

        if (!s)
                return 0;
        n = strlen(s);
        while (n > 0 && s[n - 1] == '\n')
                s[--n] = '\0';
        return udev_replace_chars(s, UDEV_ALLOWED_CHARS_INPUT);
}

/* ------------------------------------------------------------ [subsys/sysname]attr */

int udev_parse_subsys_kernel(const char *s, char *subsys, size_t subsys_size, char *sysname,
                             size_t sysname_size, const char **ret_attr)
{
        const char *slash, *close, *attr;
        size_t n;

        if (!s || s[0] != '[' || !subsys || !sysname)
                return -EINVAL;
        slash = strchr(s + 1, '/');
        if (!slash)
                return -EINVAL;
        close = strchr(slash + 1, ']');
        if (!close)
                return -EINVAL;
        n = (size_t)(slash - (s + 1));
        if (n >= subsys_size)
                return -EINVAL;
        memcpy(subsys, s + 1, n);
        subsys[n] = '\0';
        n = (size_t)(close - (slash + 1));
        if (n >= sysname_size)
                return -EINVAL;
        memcpy(sysname, slash + 1, n);
        sysname[n] = '\0';
        attr = close + 1;
        if (*attr == '/')
                attr++;
        if (ret_attr)
                *ret_attr = *attr ? attr : NULL;
        return 0;
}

int udev_resolve_subsys_kernel(struct device_ctx *ctx, const char *s, bool read_value,
                               char *result, size_t size)
{
        char subsys[UDEV_PATH_SIZE], sysname[UDEV_PATH_SIZE];
        const char *attr = NULL, *val;
        struct device *d;
        bool t = false;
        int r;

        if (!ctx || !result || size == 0)
                return -EINVAL;
        r = udev_parse_subsys_kernel(s, subsys, sizeof(subsys), sysname, sizeof(sysname), &attr);
        if (r < 0)
                return r;
        if (read_value && !attr)
                return -EINVAL;
        r = device_from_subsystem_sysname(ctx, subsys, sysname, &d);
        if (r < 0)
                return r;
        if (read_value) {
                r = device_get_sysattr(d, attr, &val);
                if (r < 0 && r != -EACCES && r != -EPERM && r != -ENOENT)
                        return r;
                (void)put_str(result, size, r >= 0 ? val : "", &t);
                log_debug("rules: value '[%s/%s]%s' is '%s'", subsys, sysname, attr, result);
                return 0;
        }
        r = snprintf(result, size, "%s%s%s", device_syspath(d), attr ? "/" : "", attr ? attr : "");
        if (r < 0)
                return -EINVAL;
        return 0;
}

/* ------------------------------------------------------------ command lines */

int udev_split_cmdline(char *cmd, char **argv, size_t argv_size, size_t *ret_argc)
{
        char *r = cmd, *w = cmd;
        size_t n = 0;

        if (!cmd || !argv || argv_size == 0)
                return -EINVAL;
        for (;;) {
                char quote = 0;
                bool more;

                r += strspn(r, WHITESPACE);
                if (*r == '\0')
                        break;
                if (n + 1 >= argv_size)
                        return -E2BIG;
                argv[n++] = w;
                for (; *r; r++) {
                        if (quote) {
                                if (*r == quote)
                                        quote = 0;
                                else
                                        *w++ = *r;
                                continue;
                        }
                        if (*r == '\'' || *r == '"') {
                                quote = *r;
                                continue;
                        }
                        if (strchr(WHITESPACE, *r))
                                break;
                        *w++ = *r;
                }
                more = *r != '\0';
                *w++ = '\0'; /* w <= r: at most overwrites the separator */
                if (!more)
                        break;
                r++;
        }
        argv[n] = NULL;
        if (ret_argc)
                *ret_argc = n;
        return n == 0 ? -EINVAL : 0;
}

/* ------------------------------------------------------------ property lines */

char *udev_next_line(char **cursor, char *end)
{
        char *p, *line;

        if (!cursor || !*cursor || !end)
                return NULL;
        p = *cursor;
        while (p < end && (*p == '\n' || *p == '\r' || *p == '\0'))
                p++;
        if (p >= end) {
                *cursor = end;
                return NULL;
        }
        line = p;
        while (p < end && *p != '\n' && *p != '\r' && *p != '\0')
                p++;
        if (p < end) {
                *p = '\0';
                *cursor = p + 1;
        } else {
                /* The last line runs to `end`: the caller's buffer must hold a
                 * NUL there (e.g. a NUL-terminated output buffer). */
                *cursor = end;
        }
        return line;
}

static char *strip(char *s)
{
        size_t n;

        s += strspn(s, WHITESPACE);
        n = strlen(s);
        while (n > 0 && strchr(WHITESPACE, s[n - 1]))
                s[--n] = '\0';
        return s;
}

int udev_property_line_parse(char *line, char **ret_key, char **ret_value)
{
        char *key, *val;
        size_t len;

        if (!line || !ret_key || !ret_value)
                return -EINVAL;
        key = line + strspn(line, WHITESPACE);
        if (key[0] == '#' || key[0] == '\0') {
                *ret_key = *ret_value = NULL;
                return 0;
        }
        val = strchr(key, '=');
        if (!val)
                return -EINVAL;
        *val++ = '\0';
        key = strip(key);
        if (!*key)
                return -EINVAL;
        val = strip(val);
        if (!*val)
                return -EINVAL;
        if (val[0] == '"' || val[0] == '\'') {
                len = strlen(val);
                if (len == 1 || val[len - 1] != val[0])
                        return -EINVAL;
                val[len - 1] = '\0';
                val++;
        }
        *ret_key = key;
        *ret_value = val;
        return 1;
}
