/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (pure functions; a parsed record is immutable) */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/uevent.h"
#include "shared/log.h"
#include "shared/macro.h"

#define DEVICE_ID_NAME_MAX 255 /* the id is a file name (NAME_MAX) */

/* The strings derived while parsing, before they move into the record's tail. */
struct uevent_derived {
        char id[DEVICE_ID_NAME_MAX + 1];
        char devnode[UEVENT_DEVNODE_MAX]; /* "" if no DEVNAME */
};

static const char *const action_table[_UEVENT_ACTION_MAX] = {
        [UEVENT_ACTION_ADD] = "add",       [UEVENT_ACTION_REMOVE] = "remove",
        [UEVENT_ACTION_CHANGE] = "change", [UEVENT_ACTION_MOVE] = "move",
        [UEVENT_ACTION_ONLINE] = "online", [UEVENT_ACTION_OFFLINE] = "offline",
        [UEVENT_ACTION_BIND] = "bind",     [UEVENT_ACTION_UNBIND] = "unbind",
};

/* Keys that define the identity, ordering or node of the event: a second
 * occurrence is ambiguous and rejects the whole message. */
static const char *const unique_keys[] = {
        "ACTION", "DEVPATH", "DEVPATH_OLD", "SUBSYSTEM", "SEQNUM",
        "MAJOR",  "MINOR",   "IFINDEX",     "DEVNAME",
};

const char *uevent_action_to_string(enum uevent_action a)
{
        if (a < 0 || a >= _UEVENT_ACTION_MAX)
                return NULL;
        return action_table[a];
}

enum uevent_action uevent_action_from_string(const char *s)
{
        if (!s)
                return _UEVENT_ACTION_INVALID;
        for (size_t i = 0; i < ARRAY_SIZE(action_table); i++)
                if (streq(action_table[i], s))
                        return (enum uevent_action)i;
        return _UEVENT_ACTION_INVALID;
}

static bool is_ctrl(unsigned char c) { return c < 0x20 || c == 0x7f; }

static bool has_ctrl(const char *s)
{
        for (; *s; s++)
                if (is_ctrl((unsigned char)*s))
                        return true;
        return false;
}

/* [A-Za-z0-9_.]+ */
static bool key_is_valid(const char *k, size_t len)
{
        if (len == 0)
                return false;
        for (size_t i = 0; i < len; i++) {
                char c = k[i];

                if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                      (c >= '0' && c <= '9') || c == '_' || c == '.'))
                        return false;
        }
        return true;
}

/* "a/b/c": non-empty components, none "." or "..", no control characters. */
static bool relpath_is_safe(const char *p)
{
        if (!*p || *p == '/')
                return false;
        while (*p) {
                const char *end = strchrnul(p, '/');
                size_t n = (size_t)(end - p);

                if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
                        return false;
                for (const char *c = p; c < end; c++)
                        if (is_ctrl((unsigned char)*c))
                                return false;
                if (!*end)
                        break;
                p = end + 1;
                if (!*p)
                        return false; /* trailing '/' */
        }
        return true;
}

static bool devpath_is_valid(const char *p) { return p[0] == '/' && relpath_is_safe(p + 1); }

/* Decimal digits only, no sign, no overflow past `max`. */
static int parse_decimal(const char *s, uint64_t max, uint64_t *ret)
{
        uint64_t v = 0;

        if (!*s)
                return -EINVAL;
        for (; *s; s++) {
                unsigned d;

                if (*s < '0' || *s > '9')
                        return -EINVAL;
                d = (unsigned)(*s - '0');
                if (v > (max - d) / 10)
                        return -ERANGE;
                v = v * 10 + d;
        }
        *ret = v;
        return 0;
}

static const char *last_component(const char *path)
{
        const char *slash = strrchr(path, '/');

        return slash ? slash + 1 : path;
}

/* The component right before the first "/drivers/" of devpath, or before a
 * final "/drivers", e.g. "pci" of "/bus/pci/drivers/e1000e" and of
 * "/bus/pci/drivers" (what sd-device stores as the driver subsystem). */
static int drivers_subsystem(const char *devpath, const char **ret, size_t *ret_len)
{
        const char *end = strstr(devpath, "/drivers/"), *p;
        size_t n = strlen(devpath);

        if (!end && n >= STRLEN("/drivers") && streq(devpath + n - STRLEN("/drivers"), "/drivers"))
                end = devpath + n - STRLEN("/drivers");
        if (!end)
                return -EINVAL;
        while (end > devpath && end[-1] == '/')
                end--;
        for (p = end; p > devpath && p[-1] != '/'; p--)
                ;
        if (p == end)
                return -EINVAL;
        /* sd-device refuses a ".." there; "." names no subsystem either */
        if ((end - p == 1 && p[0] == '.') || (end - p == 2 && p[0] == '.' && p[1] == '.'))
                return -EINVAL;
        *ret = p;
        *ret_len = (size_t)(end - p);
        return 0;
}

int device_id_format(char *buf, size_t size, const char *subsystem, const char *devpath,
                     unsigned major, unsigned minor, int ifindex)
{
        const char *sysname;
        int n;

        if (!buf || size == 0)
                return -EINVAL;
        if (!subsystem || !*subsystem)
                return -ENOENT;

        if (major > 0)
                n = snprintf(buf, size, "%c%u:%u", streq(subsystem, "block") ? 'b' : 'c', major,
                             minor);
        else if (ifindex > 0)
                n = snprintf(buf, size, "n%d", ifindex);
        else {
                if (!devpath || strchr(subsystem, '/'))
                        return -EINVAL;
                sysname = last_component(devpath);
                if (!*sysname || streq(sysname, ".") || streq(sysname, ".."))
                        return -EINVAL;

                if (streq(subsystem, "drivers")) {
                        const char *ds;
                        size_t dslen;

                        if (drivers_subsystem(devpath, &ds, &dslen) < 0 || dslen > INT_MAX)
                                return -EINVAL;
                        n = snprintf(buf, size, "+drivers:%.*s:%s", (int)dslen, ds, sysname);
                } else
                        n = snprintf(buf, size, "+%s:%s", subsystem, sysname);
        }

        if (n < 0)
                return -EINVAL;
        if ((size_t)n >= size || n > DEVICE_ID_NAME_MAX) {
                buf[0] = '\0';
                return -ENAMETOOLONG;
        }
        return 0;
}

static bool append(char *buf, size_t size, size_t *pos, const char *a, char sep, const char *b)
{
        size_t la = strlen(a), lb = strlen(b);

        if (size - *pos < la + 1 + lb + 1)
                return false;
        memcpy(buf + *pos, a, la);
        buf[*pos + la] = sep;
        memcpy(buf + *pos + la + 1, b, lb);
        buf[*pos + la + 1 + lb] = '\0';
        *pos += la + 1 + lb + 1;
        return true;
}

int uevent_format_kernel(const struct uevent *ev, char *buf, size_t size)
{
        size_t pos = 0;

        if (!append(buf, size, &pos, uevent_action_to_string(ev->action), '@', ev->devpath))
                return -ENOBUFS;
        for (size_t i = 0; i < ev->n_props; i++)
                if (!append(buf, size, &pos, ev->props[i].key, '=', ev->props[i].value))
                        return -ENOBUFS;
        return (int)pos;
}

const char *uevent_get(const struct uevent *ev, const char *key)
{
        if (!ev || !key)
                return NULL;
        for (size_t i = 0; i < ev->n_props; i++)
                if (streq(ev->props[i].key, key))
                        return ev->props[i].value;
        return NULL;
}

void uevent_free(struct uevent *ev) { free(ev); }

static bool key_must_be_unique(const char *key)
{
        for (size_t i = 0; i < ARRAY_SIZE(unique_keys); i++)
                if (streq(unique_keys[i], key))
                        return true;
        return false;
}

/* Split one "KEY=VALUE" string (in ev->buf, NUL-terminated, `slen` bytes) and
 * add it to the index. A repeated key keeps its first position and takes the
 * later value, except for the unique_keys which reject the message. */
static int add_property(struct uevent *ev, char *s, size_t slen, size_t *n_raw)
{
        char *eq, *value;

        eq = memchr(s, '=', slen);
        if (!eq || !key_is_valid(s, (size_t)(eq - s)))
                return -EBADMSG;
        if (*n_raw >= UEVENT_PROPS_MAX)
                return -E2BIG;
        (*n_raw)++;

        *eq = '\0';
        value = eq + 1;
        value[strcspn(value, "\n")] = '\0';

        for (size_t i = 0; i < ev->n_props; i++) {
                if (!streq(ev->props[i].key, s))
                        continue;
                if (key_must_be_unique(s))
                        return -EBADMSG;
                ev->props[i].value = value;
                return 0;
        }

        ev->props[ev->n_props++] = (struct uevent_prop){ .key = s, .value = value };
        return 0;
}

/* Index every string after the header. */
static int split_properties(struct uevent *ev, size_t start)
{
        size_t pos = start, n_raw = 0;
        int r;

        while (pos < ev->buf_len) {
                char *s = ev->buf + pos;
                size_t slen = strlen(s); /* buf ends in NUL */

                if (slen == 0)
                        return -EBADMSG;
                r = add_property(ev, s, slen, &n_raw);
                if (r < 0)
                        return r;
                pos += slen + 1;
        }
        return 0;
}

/* "/dev/" + DEVNAME, or DEVNAME itself if it is already "/dev/...". */
static int build_devnode(struct uevent_derived *d, const char *devname)
{
        const char *rel = devname;
        int n;

        if (devname[0] == '/') {
                if (!strneq(devname, "/dev/", 5))
                        return -EBADMSG;
                rel = devname + 5;
        }
        if (!relpath_is_safe(rel))
                return -EBADMSG;
        n = snprintf(d->devnode, sizeof(d->devnode), "/dev/%s", rel);
        if (n < 0 || (size_t)n >= sizeof(d->devnode))
                return -E2BIG;
        return 0;
}

static int parse_devnum(struct uevent *ev)
{
        const char *maj = uevent_get(ev, "MAJOR"), *min = uevent_get(ev, "MINOR");
        uint64_t v;

        if (maj) {
                if (parse_decimal(maj, UINT32_MAX, &v) < 0)
                        return -EBADMSG;
                ev->major = (unsigned)v;
        }
        if (min) {
                if (parse_decimal(min, UINT32_MAX, &v) < 0)
                        return -EBADMSG;
                ev->minor = (unsigned)v;
        }
        if (ev->major == 0)
                ev->minor = 0; /* no device number: MINOR alone means nothing */
        return 0;
}

static int parse_ifindex(struct uevent *ev)
{
        const char *s = uevent_get(ev, "IFINDEX");
        uint64_t v;

        if (!s)
                return 0;
        if (parse_decimal(s, INT_MAX, &v) < 0 || v == 0)
                return -EBADMSG;
        ev->ifindex = (int)v;
        return 0;
}

/* Plain identifier-ish value: non-empty, no control characters. */
static bool value_is_plain(const char *s) { return s && *s && !has_ctrl(s); }

static int resolve_identity(struct uevent *ev, const char *hdr, size_t action_len)
{
        const char *action = uevent_get(ev, "ACTION"), *seqnum = uevent_get(ev, "SEQNUM");
        uint64_t v;

        ev->devpath = uevent_get(ev, "DEVPATH");
        ev->subsystem = uevent_get(ev, "SUBSYSTEM");
        if (!action || !ev->devpath || !ev->subsystem || !seqnum)
                return -EBADMSG;

        ev->action = uevent_action_from_string(action);
        if (ev->action == _UEVENT_ACTION_INVALID)
                return -EBADMSG;
        if (strlen(action) != action_len || memcmp(action, hdr, action_len) != 0)
                return -EBADMSG;
        if (!streq(ev->devpath, hdr + action_len + 1))
                return -EBADMSG;
        if (!devpath_is_valid(ev->devpath))
                return -EBADMSG;
        ev->sysname = last_component(ev->devpath);

        ev->devpath_old = uevent_get(ev, "DEVPATH_OLD");
        if (ev->devpath_old && !devpath_is_valid(ev->devpath_old))
                return -EBADMSG;

        if (!value_is_plain(ev->subsystem) || strchr(ev->subsystem, '/'))
                return -EBADMSG;
        if (parse_decimal(seqnum, UINT64_MAX, &v) < 0 || v == 0)
                return -EBADMSG;
        ev->seqnum = v;
        return 0;
}

static int resolve_fields(struct uevent *ev, const char *hdr, size_t action_len,
                          struct uevent_derived *d)
{
        const char *devname;
        int r;

        r = resolve_identity(ev, hdr, action_len);
        if (r < 0)
                return r;

        ev->devtype = uevent_get(ev, "DEVTYPE");
        if (ev->devtype && !value_is_plain(ev->devtype))
                return -EBADMSG;
        ev->driver = uevent_get(ev, "DRIVER");
        if (ev->driver && !value_is_plain(ev->driver))
                return -EBADMSG;

        r = parse_devnum(ev);
        if (r < 0)
                return r;
        r = parse_ifindex(ev);
        if (r < 0)
                return r;

        devname = uevent_get(ev, "DEVNAME");
        if (devname) {
                r = build_devnode(d, devname);
                if (r < 0)
                        return r;
        }

        r = device_id_format(d->id, sizeof(d->id), ev->subsystem, ev->devpath, ev->major,
                             ev->minor, ev->ifindex);
        if (r == -ENAMETOOLONG)
                return -E2BIG;
        if (r < 0)
                return -EBADMSG;
        return 0;
}

/* Header "ACTION@DEVPATH": returns the length of ACTION. */
static int check_header(const char *hdr)
{
        const char *at = strchr(hdr, '@');

        if (!at || at == hdr || at[1] != '/')
                return -EBADMSG;
        return (int)(at - hdr);
}

/* Number of strings after the header (data[len - 1] is NUL): the slots of the
 * property index, capped at UEVENT_PROPS_MAX (add_property() rejects more). */
static size_t count_strings(const char *data, size_t len, size_t start)
{
        size_t n = 0;

        for (size_t pos = start; pos < len && n < UEVENT_PROPS_MAX; n++)
                pos += strlen(data + pos) + 1;
        return n;
}

static const char *rebase(const char *p, uintptr_t from, char *to)
{
        return p ? to + ((uintptr_t)p - from) : NULL;
}

/* Grow the record by the derived strings (id, devnode) and point at them. The
 * block may move: every pointer into it is rebased. Frees ev on failure. */
static struct uevent *append_derived(struct uevent *ev, size_t size, const struct uevent_derived *d)
{
        size_t id_len = strlen(d->id) + 1, node_len = d->devnode[0] ? strlen(d->devnode) + 1 : 0;
        uintptr_t from = (uintptr_t)ev;
        struct uevent *n = realloc(ev, size + id_len + node_len);
        char *tail;

        if (!n) {
                free(ev);
                return NULL;
        }
        n->alloc_size = size + id_len + node_len;
        if ((uintptr_t)n != from) {
                n->devpath = rebase(n->devpath, from, (char *)n);
                n->devpath_old = rebase(n->devpath_old, from, (char *)n);
                n->subsystem = rebase(n->subsystem, from, (char *)n);
                n->devtype = rebase(n->devtype, from, (char *)n);
                n->driver = rebase(n->driver, from, (char *)n);
                n->sysname = rebase(n->sysname, from, (char *)n);
                n->buf = (char *)n + ((uintptr_t)n->buf - from);
                for (size_t i = 0; i < n->n_props; i++) {
                        n->props[i].key = rebase(n->props[i].key, from, (char *)n);
                        n->props[i].value = rebase(n->props[i].value, from, (char *)n);
                }
        }
        tail = (char *)n + size;
        n->id = memcpy(tail, d->id, id_len);
        n->devnode = node_len > 0 ? memcpy(tail + id_len, d->devnode, node_len) : "";
        return n;
}

int uevent_parse_kernel(const void *data, size_t len, uint64_t recv_usec, struct uevent **ret)
{
        _cleanup_(uevent_freep) struct uevent *ev = NULL;
        struct uevent_derived derived = {};
        size_t n_slots, size;
        int action_len, r;

        if (!ret)
                return -EINVAL;
        if (!data || len == 0)
                return -EBADMSG;
        if (len > UEVENT_BUFFER_MAX)
                return -E2BIG;
        if (((const char *)data)[len - 1] != '\0')
                return -EBADMSG;

        /* [struct uevent][props: n_slots][payload: len][id][devnode] */
        n_slots = count_strings(data, len, strlen(data) + 1);
        size = sizeof(*ev) + n_slots * sizeof(ev->props[0]) + len;
        ev = calloc(1, size);
        if (!ev)
                return -ENOMEM;
        ev->buf = (char *)(ev->props + n_slots);
        memcpy(ev->buf, data, len);
        ev->buf_len = len;
        ev->recv_usec = recv_usec;

        action_len = check_header(ev->buf);
        if (action_len < 0)
                return action_len;

        r = split_properties(ev, strlen(ev->buf) + 1);
        if (r == 0)
                r = resolve_fields(ev, ev->buf, (size_t)action_len, &derived);
        if (r < 0) {
                log_debug("uevent: dropping malformed %s message (%zu bytes)",
                          r == -E2BIG ? "oversized" : "kernel", len);
                return r;
        }

        *ret = append_derived(TAKE_PTR(ev), size, &derived);
        return *ret ? 0 : -ENOMEM;
}

/* ------------------------------------------------------ block device policy */

static bool startswith_any(const char *s, const char *const *prefixes)
{
        for (; *prefixes; prefixes++)
                if (strncmp(s, *prefixes, strlen(*prefixes)) == 0)
                        return true;
        return false;
}

bool uevent_lock_disk(const struct uevent *ev, char *buf, size_t size)
{
        static const char *const unlocked[] = { "dm-", "md", "drbd", NULL };
        const char *slash;
        size_t len;

        if (ev->action == UEVENT_ACTION_REMOVE || !streq(ev->subsystem, "block") ||
            startswith_any(ev->sysname, unlocked) || !ev->devtype)
                return false;
        if (streq(ev->devtype, "disk"))
                len = strlen(ev->devpath);
        else if (streq(ev->devtype, "partition") && (slash = strrchr(ev->devpath, '/')) &&
                 slash > ev->devpath)
                len = (size_t)(slash - ev->devpath);
        else
                return false;
        if (len >= size)
                return false;
        memcpy(buf, ev->devpath, len);
        buf[len] = '\0';
        return true;
}

bool uevent_marks_read_only(const struct uevent *ev)
{
        static const char *const stacked[] = { "dm-", "md", "drbd", "loop", "nbd", "zram", NULL };

        return ev->action == UEVENT_ACTION_ADD && streq(ev->subsystem, "block") &&
               ev->devnode[0] && !startswith_any(ev->sysname, stacked);
}
