/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (the mapping is read-only; lookups keep their state on the stack and in res) */
/* hwdb.bin reader: see hwdb-reader.h. */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "builtins/hwdb-format.h"
#include "builtins/hwdb-reader.h"
#include "shared/log.h"
#include "shared/macro.h"

struct hwdb {
        const uint8_t *map;
        size_t size;
        size_t node_size, child_size, value_size;
        uint64_t root_off;
        char *path;
        struct hwdb_stamp stamp;
};

const char *const hwdb_bin_paths[] = {
        "/etc/systemd/hwdb/hwdb.bin",
        "/etc/udev/hwdb.bin",
        "/usr/lib/systemd/hwdb/hwdb.bin",
        "/lib/systemd/hwdb/hwdb.bin",
        "/lib/udev/hwdb.bin",
        NULL,
};

/* ---- bounds-checked access to the mapping ---- */

static bool in_map(const struct hwdb *h, uint64_t off, uint64_t len)
{
        return off <= h->size && len <= h->size - off;
}

static const struct hwdb_node_f *node_at(const struct hwdb *h, uint64_t off)
{
        if (off == 0 || !in_map(h, off, h->node_size))
                return NULL;
        return (const struct hwdb_node_f *)(h->map + off);
}

/* A NUL-terminated string inside the mapping, or NULL. */
static const char *string_at(const struct hwdb *h, uint64_t off)
{
        if (off >= h->size || !memchr(h->map + off, '\0', h->size - off))
                return NULL;
        return (const char *)(h->map + off);
}

static size_t node_children(const struct hwdb *h, const struct hwdb_node_f *n)
{
        uint64_t off = (uint64_t)((const uint8_t *)n - h->map) + h->node_size;

        if (!in_map(h, off, (uint64_t)n->children_count * h->child_size))
                return 0;
        return n->children_count;
}

static const struct hwdb_child_f *child_at(const struct hwdb *h, const struct hwdb_node_f *n,
                                          size_t i)
{
        return (const struct hwdb_child_f *)((const uint8_t *)n + h->node_size + i * h->child_size);
}

static uint64_t node_values(const struct hwdb *h, const struct hwdb_node_f *n)
{
        uint64_t off = (uint64_t)((const uint8_t *)n - h->map) + h->node_size +
                       (uint64_t)n->children_count * h->child_size;
        uint64_t count = le64toh(n->values_count);

        if (off > h->size || count > (h->size - off) / h->value_size)
                return 0;
        return count;
}

static const void *value_at(const struct hwdb *h, const struct hwdb_node_f *n, uint64_t i)
{
        return (const uint8_t *)n + h->node_size + (size_t)n->children_count * h->child_size +
               i * h->value_size;
}

/* Children are sorted by character: binary search. */
static const struct hwdb_node_f *node_lookup(const struct hwdb *h, const struct hwdb_node_f *n,
                                           uint8_t c)
{
        size_t lo = 0, hi = node_children(h, n);

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                const struct hwdb_child_f *ch = child_at(h, n, mid);

                if (ch->c == c)
                        return node_at(h, le64toh(ch->child_off));
                if (ch->c < c)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return NULL;
}

/* ---- result list ---- */

static int result_add(const struct hwdb *h, struct hwdb_result *res, const void *entry)
{
        const struct hwdb_value_f *v = entry;
        const char *key = string_at(h, le64toh(v->key_off));
        const char *value = string_at(h, le64toh(v->value_off));

        /* Keys not starting with ' ' are reserved for future use: ignored. */
        if (!key || !value || key[0] != ' ')
                return 0;
        key++;

        for (size_t i = 0; i < res->n; i++) {
                struct hwdb_property *p = &res->items[i];

                if (strcmp(p->key, key) != 0)
                        continue;
                if (h->value_size >= sizeof(struct hwdb_value2_f)) {
                        const struct hwdb_value2_f *n2 = entry, *o2 = p->entry;

                        /* v2 format: file order, then line; v3: priority, then line */
                        if (n2->file_priority == 0) {
                                if (le64toh(n2->filename_off) < le64toh(o2->filename_off) ||
                                    (n2->filename_off == o2->filename_off &&
                                     le32toh(n2->line_number) < le32toh(o2->line_number)))
                                        return 0;
                        } else if (le16toh(n2->file_priority) < le16toh(o2->file_priority) ||
                                   (n2->file_priority == o2->file_priority &&
                                    le32toh(n2->line_number) < le32toh(o2->line_number)))
                                return 0;
                }
                /* replaced in place: the position of the first match is kept */
                *p = (struct hwdb_property){ .key = key, .value = value, .entry = entry };
                return 0;
        }

        if (res->n == res->cap) {
                size_t cap = res->cap ? res->cap * 2 : 16;
                struct hwdb_property *items;

                if (res->n >= HWDB_RESULT_MAX)
                        return -E2BIG;
                items = reallocarray(res->items, cap, sizeof(*items));
                if (!items)
                        return -ENOMEM;
                res->items = items;
                res->cap = cap;
        }
        res->items[res->n++] = (struct hwdb_property){ .key = key, .value = value, .entry = entry };
        return 0;
}

static int add_node_values(const struct hwdb *h, const struct hwdb_node_f *n,
                           struct hwdb_result *res)
{
        uint64_t count = node_values(h, n);

        for (uint64_t i = 0; i < count; i++) {
                int r = result_add(h, res, value_at(h, n, i));

                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---- lookup ---- */

struct lookup {
        const struct hwdb *h;
        struct hwdb_result *res;
        char buf[HWDB_LINE_MAX]; /* pattern reconstructed from the trie */
        size_t len;
};

/* Match the whole subtree below `n` (from prefix position p on) against
 * `search` with fnmatch(): the pattern is the reconstructed rest of each
 * key. Depth is bounded by the buffer: every level adds a character. */
static int fnmatch_subtree(struct lookup *l, const struct hwdb_node_f *n, size_t p,
                           const char *search)
{
        const struct hwdb *h = l->h;
        const char *prefix = string_at(h, le64toh(n->prefix_off));
        size_t len, children;
        int r;

        if (!prefix || strnlen(prefix, p) < p)
                return 0;
        len = strlen(prefix + p);
        if (l->len + len >= sizeof(l->buf))
                return 0; /* longer than any pattern sd-hwdb can match: skip */
        memcpy(l->buf + l->len, prefix + p, len);
        l->len += len;

        children = node_children(h, n);
        for (size_t i = 0; i < children; i++) {
                const struct hwdb_child_f *ch = child_at(h, n, i);
                const struct hwdb_node_f *child = node_at(h, le64toh(ch->child_off));

                if (!child || l->len + 1 >= sizeof(l->buf))
                        continue;
                l->buf[l->len++] = (char)ch->c;
                r = fnmatch_subtree(l, child, 0, search);
                l->len--;
                if (r < 0)
                        return r;
        }

        r = 0;
        if (node_values(h, n) > 0) {
                l->buf[l->len] = '\0';
                if (fnmatch(l->buf, search, 0) == 0)
                        r = add_node_values(h, n, l->res);
        }
        l->len -= len;
        return r;
}

/* A child for a glob character: everything below it is matched by pattern. */
static int glob_child(struct lookup *l, const struct hwdb_node_f *n, char c, const char *search)
{
        const struct hwdb_node_f *child = node_lookup(l->h, n, (uint8_t)c);
        int r;

        if (!child)
                return 0;
        l->buf[l->len++] = c;
        r = fnmatch_subtree(l, child, 0, search);
        l->len--;
        return r;
}

static int trie_search(struct lookup *l, const char *search)
{
        const struct hwdb *h = l->h;
        const struct hwdb_node_f *n = node_at(h, h->root_off);
        size_t i = 0;
        int r;

        while (n) {
                if (n->prefix_off != 0) {
                        const char *prefix = string_at(h, le64toh(n->prefix_off));
                        size_t p;

                        if (!prefix)
                                return 0;
                        for (p = 0; prefix[p] != '\0'; p++) {
                                if (strchr("*?[", prefix[p]))
                                        return fnmatch_subtree(l, n, p, search + i + p);
                                if (prefix[p] != search[i + p])
                                        return 0;
                        }
                        i += p;
                }
                r = glob_child(l, n, '*', search + i);
                if (r >= 0)
                        r = glob_child(l, n, '?', search + i);
                if (r >= 0)
                        r = glob_child(l, n, '[', search + i);
                if (r < 0)
                        return r;
                if (search[i] == '\0')
                        return add_node_values(h, n, l->res);
                n = node_lookup(h, n, (uint8_t)search[i]);
                i++;
        }
        return 0;
}

int hwdb_lookup(const struct hwdb *h, const char *modalias, struct hwdb_result *res)
{
        struct lookup *l;
        int r;

        res->n = 0;
        l = malloc(sizeof(*l));
        if (!l)
                return -ENOMEM;
        l->h = h;
        l->res = res;
        l->len = 0;
        r = trie_search(l, modalias);
        free(l);
        if (r < 0)
                res->n = 0;
        return r;
}

void hwdb_result_done(struct hwdb_result *res)
{
        free(res->items);
        *res = (struct hwdb_result){};
}

/* ---- open / close ---- */

static void stamp_from_stat(struct hwdb_stamp *s, const struct stat *st)
{
        *s = (struct hwdb_stamp){ .exists = true, .dev = st->st_dev, .ino = st->st_ino,
                                  .size = st->st_size, .mtime = st->st_mtim };
}

void hwdb_stamp_current(struct hwdb_stamp *ret)
{
        struct stat st;

        *ret = (struct hwdb_stamp){};
        for (size_t i = 0; hwdb_bin_paths[i]; i++)
                if (stat(hwdb_bin_paths[i], &st) == 0) {
                        stamp_from_stat(ret, &st);
                        return;
                }
}

bool hwdb_stamp_equal(const struct hwdb_stamp *a, const struct hwdb_stamp *b)
{
        if (!a->exists || !b->exists)
                return a->exists == b->exists;
        return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
               a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec;
}

const struct hwdb_stamp *hwdb_stamp(const struct hwdb *h)
{
        return &h->stamp;
}

const char *hwdb_path(const struct hwdb *h)
{
        return h->path;
}

static int check_header(struct hwdb *h)
{
        const struct hwdb_header_f *hd = (const struct hwdb_header_f *)h->map;

        if (h->size < sizeof(*hd) || memcmp(hd->signature, HWDB_SIG, 8) != 0 ||
            le64toh(hd->file_size) != h->size)
                return -EINVAL;
        h->node_size = le64toh(hd->node_size);
        h->child_size = le64toh(hd->child_entry_size);
        h->value_size = le64toh(hd->value_entry_size);
        h->root_off = le64toh(hd->nodes_root_off);
        /* newer tools may append fields, never shrink them */
        if (h->node_size < sizeof(struct hwdb_node_f) || h->node_size > h->size ||
            h->child_size < sizeof(struct hwdb_child_f) || h->child_size > h->size ||
            h->value_size < sizeof(struct hwdb_value_f) || h->value_size > h->size ||
            !node_at(h, h->root_off))
                return -EINVAL;
        return 0;
}

int hwdb_open(const char *path, struct hwdb **ret)
{
        _cleanup_close_ int fd = -1;
        struct hwdb *h;
        struct stat st;
        void *map;
        int r;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(struct hwdb_header_f))
                return -EINVAL;
        h = calloc(1, sizeof(*h));
        if (!h)
                return -ENOMEM;
        h->path = strdup(path);
        if (!h->path) {
                free(h);
                return -ENOMEM;
        }
        map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
        if (map == MAP_FAILED) {
                r = negative_errno();
                free(h->path);
                free(h);
                return r;
        }
        h->map = map;
        h->size = (size_t)st.st_size;
        stamp_from_stat(&h->stamp, &st);
        r = check_header(h);
        if (r < 0) {
                log_debug("Failed to recognize the format of %s", path);
                hwdb_close(h);
                return r;
        }
        *ret = h;
        return 0;
}

/* Set while the last hwdb_open_default() found no file: the missing database
 * is reported once, not by every thread or on every reload attempt. */
static atomic_bool missing_reported;

int hwdb_open_default(struct hwdb **ret)
{
        for (size_t i = 0; hwdb_bin_paths[i]; i++) {
                int r = hwdb_open(hwdb_bin_paths[i], ret);

                if (r != -ENOENT) {
                        if (r >= 0)
                                atomic_store(&missing_reported, false);
                        return r;
                }
        }
        if (!atomic_exchange(&missing_reported, true))
                log_info("hwdb.bin does not exist, please run 'udevadm hwdb --update'");
        return -ENOENT;
}

void hwdb_close(struct hwdb *h)
{
        if (!h)
                return;
        munmap((void *)h->map, h->size);
        free(h->path);
        free(h);
}
