/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (no state outside the call) */
/* The uaccess builtin, as systemd 252's
 * udev-builtin-uaccess.c with devnode_acl():
 *
 * If logind runs (/run/systemd/seats/ exists), give the active user of the
 * device's seat (ID_SEAT, default seat0; logind's ACTIVE_UID= in
 * /run/systemd/seats/<seat>) read-write access to the device node through its
 * POSIX access ACL: every named-user entry is removed, user:<uid>:rw- added
 * and the mask recomputed. Without an active user (or root), or on any
 * error, the named-user entries are flushed instead. Without logind nothing
 * is done (success): a system not running logind has no seats and nobody to
 * grant access to; logind re-applies the ACLs itself on session switches
 * (to the devices tagged "uaccess").
 *
 * The ACL is read and written as the kernel's system.posix_acl_access
 * extended attribute (the format of linux/posix_acl_xattr.h, which libacl's
 * acl_get_file()/acl_set_file() use too): no libacl needed. As with libacl,
 * a file without that attribute has the ACL its mode bits describe, and the
 * kernel folds an ACL without named entries back into the mode bits. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "builtins/builtins-internal.h"
#include "device/device.h"
#include "event/udev-event.h"
#include "shared/log.h"
#include "shared/macro.h"

#define SEATS_DIR "/run/systemd/seats"
#define ACL_XATTR "system.posix_acl_access"
#define ACL_XATTR_VERSION 2
#define ACL_ENTRIES_MAX 1024   /* more than any file system stores */
#define SEAT_FILE_MAX 65536
#define SEAT_NAME_MAX 255

enum {
        TAG_USER_OBJ = 0x01,
        TAG_USER = 0x02,
        TAG_GROUP_OBJ = 0x04,
        TAG_GROUP = 0x08,
        TAG_MASK = 0x10,
        TAG_OTHER = 0x20,
};
#define PERM_READ 4
#define PERM_WRITE 2
#define ID_UNDEFINED UINT32_MAX

struct acl_entry {
        uint16_t tag, perm;
        uint32_t id;
};
struct acl {
        struct acl_entry e[ACL_ENTRIES_MAX];
        size_t n;
};

static int acl_add(struct acl *a, uint16_t tag, uint16_t perm, uint32_t id)
{
        if (a->n >= ACL_ENTRIES_MAX)
                return -E2BIG;
        a->e[a->n++] = (struct acl_entry){ .tag = tag, .perm = perm, .id = id };
        return 0;
}

static uint16_t le16(const uint8_t *p)
{
        return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const uint8_t *p)
{
        return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put16(uint8_t *p, uint16_t v)
{
        p[0] = (uint8_t)v;
        p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
        put16(p, (uint16_t)v);
        put16(p + 2, (uint16_t)(v >> 16));
}

/* acl_get_file(path, ACL_TYPE_ACCESS): the attribute, or the mode bits. */
static int acl_read(const char *path, struct acl *a)
{
        uint8_t buf[4 + 8 * ACL_ENTRIES_MAX];
        struct stat st;
        ssize_t n;

        a->n = 0;
        n = getxattr(path, ACL_XATTR, buf, sizeof(buf));
        if (n < 0) {
                if (errno != ENODATA && errno != ENOTSUP)
                        return negative_errno();
                if (stat(path, &st) < 0)
                        return negative_errno();
                (void)acl_add(a, TAG_USER_OBJ, (st.st_mode >> 6) & 7, ID_UNDEFINED);
                (void)acl_add(a, TAG_GROUP_OBJ, (st.st_mode >> 3) & 7, ID_UNDEFINED);
                (void)acl_add(a, TAG_OTHER, st.st_mode & 7, ID_UNDEFINED);
                return 0;
        }
        if (n < 4 || (n - 4) % 8 != 0 || le32(buf) != ACL_XATTR_VERSION)
                return -EINVAL;
        for (ssize_t off = 4; off < n; off += 8) {
                int r = acl_add(a, le16(buf + off), le16(buf + off + 2), le32(buf + off + 4));

                if (r < 0)
                        return r;
        }
        return 0;
}

static int entry_cmp(const void *x, const void *y)
{
        const struct acl_entry *a = x, *b = y;

        if (a->tag != b->tag)
                return a->tag < b->tag ? -1 : 1;
        return a->id < b->id ? -1 : a->id > b->id;
}

/* acl_calc_mask() + acl_set_file(): mask = union of the group class
 * entries (added if missing), entries in the kernel's canonical order. */
static int acl_write(const char *path, struct acl *a)
{
        uint8_t buf[4 + 8 * ACL_ENTRIES_MAX];
        struct acl_entry *mask = NULL;
        uint16_t perm = 0;
        size_t len = 4;
        int r;

        for (size_t i = 0; i < a->n; i++) {
                if (a->e[i].tag == TAG_MASK)
                        mask = &a->e[i];
                else if (a->e[i].tag == TAG_USER || a->e[i].tag == TAG_GROUP_OBJ ||
                         a->e[i].tag == TAG_GROUP)
                        perm |= a->e[i].perm;
        }
        if (mask)
                mask->perm = perm;
        else {
                r = acl_add(a, TAG_MASK, perm, ID_UNDEFINED);
                if (r < 0)
                        return r;
        }
        qsort(a->e, a->n, sizeof(a->e[0]), entry_cmp);
        put32(buf, ACL_XATTR_VERSION);
        for (size_t i = 0; i < a->n; i++, len += 8) {
                put16(buf + len, a->e[i].tag);
                put16(buf + len + 2, a->e[i].perm);
                put32(buf + len + 4, a->e[i].id);
        }
        if (setxattr(path, ACL_XATTR, buf, len, 0) < 0)
                return negative_errno();
        return 0;
}

/* devnode_acl(path, flush=true, del=false, 0, add, uid): drop every
 * named-user entry, then (add && uid > 0) grant uid rw. 0 or -errno. */
static int devnode_acl(const char *path, bool add, uid_t uid)
{
        struct acl *a = malloc(sizeof(*a));
        bool changed = false;
        size_t j = 0;
        int r;

        if (!a)
                return -ENOMEM;
        r = acl_read(path, a);
        if (r < 0)
                goto out;
        for (size_t i = 0; i < a->n; i++) {
                if (a->e[i].tag == TAG_USER) {
                        changed = true;
                        continue;
                }
                a->e[j++] = a->e[i];
        }
        a->n = j;
        if (add && uid > 0) {
                r = acl_add(a, TAG_USER, PERM_READ | PERM_WRITE, (uint32_t)uid);
                if (r < 0)
                        goto out;
                changed = true;
        }
        r = changed ? acl_write(path, a) : 0;
out:
        free(a);
        return r;
}

/* Unquote a value of an env-style file in place ('…' or "…" around it). */
static char *env_value(char *v)
{
        size_t n;

        v += strspn(v, " \t");
        n = strcspn(v, "\r\n");
        v[n] = '\0';
        while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
                v[--n] = '\0';
        if (n >= 2 && (v[0] == '"' || v[0] == '\'') && v[n - 1] == v[0]) {
                v[n - 1] = '\0';
                v++;
        }
        return v;
}

/* systemd's parse_uid(): decimal, not -1 and not 65535. */
static int parse_uid(const char *s, uid_t *ret)
{
        unsigned long long v;
        char *end;

        if (*s < '0' || *s > '9')
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno != 0 || *end != '\0' || v > UINT32_MAX)
                return -ERANGE;
        if (v == UINT32_MAX || v == 0xFFFF)
                return -ENXIO;
        *ret = (uid_t)v;
        return 0;
}

/* sd_seat_get_active(seat, NULL, &uid): -ENXIO no such seat, -ENODATA no
 * active user, -EINVAL bad seat name. */
static int seat_active_uid(const char *seat, uid_t *ret)
{
        char path[sizeof(SEATS_DIR) + SEAT_NAME_MAX + 2];
        _cleanup_free_ char *buf = NULL;
        const char *uid = NULL;
        FILE *f;
        size_t n;

        if (!*seat || strlen(seat) > SEAT_NAME_MAX || strchr(seat, '/') || streq(seat, ".") ||
            streq(seat, ".."))
                return -EINVAL;
        snprintf(path, sizeof(path), "%s/%s", SEATS_DIR, seat);
        f = fopen(path, "re");
        if (!f)
                return errno == ENOENT ? -ENXIO : negative_errno();
        buf = malloc(SEAT_FILE_MAX + 1);
        n = buf ? fread(buf, 1, SEAT_FILE_MAX, f) : 0;
        fclose(f);
        if (!buf)
                return -ENOMEM;
        buf[n] = '\0';
        for (char *line = buf, *next; line; line = next) {
                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                line += strspn(line, " \t");
                if (strncmp(line, "ACTIVE_UID=", STRLEN("ACTIVE_UID=")) == 0)
                        uid = env_value(line + STRLEN("ACTIVE_UID="));
        }
        if (!uid)
                return -ENODATA;
        return parse_uid(uid, ret);
}

int builtin_uaccess(struct udev_event *ev, int argc, char *argv[], bool test)
{
        const char *sysname = device_sysname(ev->dev);
        const char *node = NULL, *seat;
        bool applied = false;
        uid_t uid;
        int r;

        (void)argc, (void)argv, (void)test;
        /* no logind: no seats, nothing to do */
        if (access(SEATS_DIR "/", F_OK) < 0)
                return 0;

        r = device_get_devnode(ev->dev, &node);
        if (r < 0) {
                log_error_errno(r, "%s: Failed to get device name: %m", sysname);
                node = NULL;
                goto finish;
        }
        seat = proplist_get(&ev->props, "ID_SEAT");
        if (!seat)
                seat = "seat0";
        r = seat_active_uid(seat, &uid);
        if (r < 0) {
                if (r == -ENXIO || r == -ENODATA)
                        r = 0; /* no active session on this seat */
                else
                        log_error_errno(r, "%s: Failed to determine active user on seat %s: %m",
                                        sysname, seat);
                goto finish;
        }
        r = devnode_acl(node, true, uid);
        if (r < 0) {
                log_full_errno(r == -ENOENT ? LOG_DEBUG : LOG_ERR, r,
                               "%s: Failed to apply ACL: %m", sysname);
                goto finish;
        }
        applied = true;
finish:
        if (node && !applied) {
                /* better safe than sorry: reset the ACL */
                int k = devnode_acl(node, false, 0);

                if (k < 0) {
                        log_full_errno(k == -ENOENT ? LOG_DEBUG : LOG_ERR, k,
                                       "%s: Failed to apply ACL: %m", sysname);
                        if (r >= 0)
                                r = k;
                }
        }
        return r;
}
