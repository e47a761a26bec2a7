/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (no shared state; one event per device at a time) */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "device/db.h"
#include "shared/fileio.h"
#include "shared/hashmap.h"
#include "shared/log.h"
#include "shared/macro.h"

#define DB_ID_MAX 255 /* ids are file names */

void db_record_clear(struct db_record *r)
{
        if (!r)
                return;
        strlist_clear(&r->devlinks);
        strlist_clear(&r->properties);
        strlist_clear(&r->tags);
        strlist_clear(&r->current_tags);
        free(r->raw);
        *r = (struct db_record){};
}

/* A device id is a plain file name that readers do not skip. */
static bool id_is_valid(const char *id)
{
        size_t n;

        if (!id)
                return false;
        n = strlen(id);
        return n > 0 && n <= DB_ID_MAX && id[0] != '.' && !strchr(id, '/');
}

static bool has_newline(const char *s) { return strpbrk(s, "\n\r") != NULL; }

/* sd-device 252 refuses tags with ':' or ' ' (they would break TAGS=), but
 * not the empty tag of TAG+="": it is stored ("G:", "Q:") and read back. */
static bool tag_is_valid(const char *t)
{
        return t && !strpbrk(t, ": \n\r");
}

/* The tag index additionally needs a usable directory name; the empty tag has
 * none: its entry is <run>/tags/<id> itself (see tag_path()). */
static bool tag_is_indexable(const char *t)
{
        return tag_is_valid(t) && t[0] != '.' && !strchr(t, '/');
}

static int path_join3(char *buf, size_t size, const char *a, const char *b, const char *c)
{
        int n = c ? snprintf(buf, size, "%s/%s/%s", a, b, c) : snprintf(buf, size, "%s/%s", a, b);

        if (n < 0 || (size_t)n >= size)
                return -ENAMETOOLONG;
        return 0;
}

static int parse_int(const char *s, int *ret)
{
        char *end;
        long v;

        if (!*s)
                return -EINVAL;
        errno = 0;
        v = strtol(s, &end, 10);
        if (errno || *end || v < INT_MIN || v > INT_MAX)
                return -EINVAL;
        *ret = (int)v;
        return 0;
}

static int parse_u64(const char *s, uint64_t *ret)
{
        uint64_t v = 0;

        if (!*s)
                return -EINVAL;
        for (; *s; s++) {
                if (*s < '0' || *s > '9')
                        return -EINVAL;
                if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
                        return -ERANGE;
                v = v * 10 + (uint64_t)(*s - '0');
        }
        *ret = v;
        return 0;
}

/* ---------------------------------------------------------------- read */

/* Parser state: hash indexes over the record's lists, so that every line costs
 * O(1) whatever the file holds (a 1 MiB file of repeated keys took seconds
 * with list scans). The indexes borrow the list items as keys. Properties are
 * indexed by key (value: position + 1); a replaced or unset property leaves a
 * NULL hole in the list, squeezed out at the end. */
struct db_parser {
        struct db_record *r;
        struct hashmap devlinks, tags, current_tags, properties;
        size_t n_properties; /* live entries (the list also holds holes) */
};

static void parser_init(struct db_parser *p, struct db_record *r)
{
        *p = (struct db_parser){ .r = r };
        hashmap_init(&p->devlinks);
        hashmap_init(&p->tags);
        hashmap_init(&p->current_tags);
        hashmap_init(&p->properties);
}

static void parser_done(struct db_parser *p)
{
        struct strlist *l = &p->r->properties;
        size_t j = 0;

        for (size_t i = 0; i < l->n; i++)
                if (l->items[i])
                        l->items[j++] = l->items[i];
        l->n = j;
        hashmap_deinit(&p->devlinks);
        hashmap_deinit(&p->tags);
        hashmap_deinit(&p->current_tags);
        hashmap_deinit(&p->properties);
}

static bool list_full(const char *s, size_t n)
{
        if (n < DB_ENTRIES_MAX)
                return false;
        log_debug("db: more than %d entries in one list, ignoring '%s'", DB_ENTRIES_MAX, s);
        return true;
}

/* Append a copy of s to a list without duplicates (index: `set`). */
static int list_add_unique(struct strlist *l, struct hashmap *set, const char *s)
{
        size_t len = strlen(s);
        int k;

        if (hashmap_get(set, s, len) || list_full(s, l->n))
                return 0;
        k = hashmap_reserve(set, 1);
        if (k == 0)
                k = strlist_add(l, s);
        if (k < 0)
                return k;
        return hashmap_put(set, l->items[l->n - 1], len, l->items[l->n - 1]);
}

/* "E:KEY=VALUE": a later line replaces an earlier one (and moves it to the
 * end), an empty value unsets. */
static int handle_property(struct db_parser *p, const char *value)
{
        struct strlist *l = &p->r->properties;
        const char *eq = strchr(value, '=');
        size_t klen, pos;
        int k;

        if (!eq || eq == value)
                return -EINVAL;
        klen = (size_t)(eq - value);
        pos = (size_t)(uintptr_t)hashmap_remove(&p->properties, value, klen);
        if (pos > 0) {
                free(l->items[pos - 1]);
                l->items[pos - 1] = NULL;
                p->n_properties--;
        }
        if (eq[1] == '\0' || list_full(value, p->n_properties))
                return 0;
        k = hashmap_reserve(&p->properties, 1);
        if (k == 0)
                k = strlist_add(l, value);
        if (k < 0)
                return k;
        p->n_properties++;
        return hashmap_put(&p->properties, l->items[l->n - 1], klen, (void *)(uintptr_t)l->n);
}

static int handle_tag(struct db_parser *p, const char *value, bool current)
{
        int k;

        if (!tag_is_valid(value))
                return -EINVAL;
        k = list_add_unique(&p->r->tags, &p->tags, value);
        if (k < 0 || !current)
                return k;
        return list_add_unique(&p->r->current_tags, &p->current_tags, value);
}

static int handle_line(struct db_parser *p, char key, const char *value)
{
        switch (key) {
        case 'S':
                return *value ? list_add_unique(&p->r->devlinks, &p->devlinks, value) : -EINVAL;
        case 'L':
                return parse_int(value, &p->r->link_priority);
        case 'I':
                return parse_u64(value, &p->r->usec_initialized);
        case 'E':
                return handle_property(p, value);
        case 'G':
        case 'Q':
                return handle_tag(p, value, key == 'Q');
        case 'V': /* format version: we understand 0 and 1 */
        case 'W': /* old watch handle */
                return 0;
        default:
                log_debug("db: unknown line type '%c', ignoring", key);
                return 0;
        }
}

/* Lines end with '\n' or '\r'; an unterminated last line is ignored, as
 * sd-device does. A line is "<char>:<value>"; anything else is skipped. */
static int parse_lines(struct db_parser *ps, char *data, size_t len)
{
        char *p = data, *end = data + len;

        while (p < end) {
                char *eol = p;
                int k;

                while (eol < end && *eol != '\n' && *eol != '\r')
                        eol++;
                if (eol == end)
                        break;
                *eol = '\0';
                if (eol - p >= 2 && p[1] == ':' && !memchr(p, '\0', (size_t)(eol - p))) {
                        k = handle_line(ps, p[0], p + 2);
                        if (k == -ENOMEM)
                                return k;
                        if (k < 0)
                                log_debug("db: invalid '%c:' line, ignoring", p[0]);
                } else if (eol > p)
                        log_debug("db: malformed line, ignoring");
                p = eol + 1;
        }
        return 0;
}

static int parse_db(char *data, size_t len, struct db_record *r)
{
        struct db_parser p;
        int k;

        parser_init(&p, r);
        k = parse_lines(&p, data, len);
        parser_done(&p);
        return k;
}

int db_parse(const char *data, size_t len, struct db_record *r)
{
        _cleanup_(db_record_clear) struct db_record rec = {};
        _cleanup_free_ char *copy = NULL;
        int k;

        if (!r || (!data && len > 0))
                return -EINVAL;
        db_record_clear(r);
        if (len > DB_FILE_MAX)
                return -EFBIG;
        copy = malloc(len + 1);
        if (!copy)
                return -ENOMEM;
        if (len > 0)
                memcpy(copy, data, len);
        copy[len] = '\0';

        k = parse_db(copy, len, &rec);
        if (k < 0)
                return k;
        *r = rec;
        rec = (struct db_record){};
        return 0;
}

int db_read(const char *run_dir, const char *id, struct db_record *r)
{
        _cleanup_(db_record_clear) struct db_record rec = {};
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *data = NULL;
        char path[PATH_MAX];
        struct stat st;
        size_t len;
        int k;

        if (!r)
                return -EINVAL;
        db_record_clear(r);
        if (!run_dir || !id_is_valid(id))
                return -EINVAL;
        k = path_join3(path, sizeof(path), run_dir, "data", id);
        if (k < 0)
                return k;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) {
                r->absent = errno == ENOENT;
                return -errno;
        }
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EBADMSG;

        k = read_fd_bounded(fd, DB_FILE_MAX, &data, &len);
        if (k < 0)
                return k;
        /* the bytes as read, for db_write_changed() (the parser splits in place) */
        rec.raw = malloc(len + 1);
        if (!rec.raw)
                return -ENOMEM;
        memcpy(rec.raw, data, len + 1);
        rec.raw_len = len;
        k = parse_db(data, len, &rec);
        if (k < 0)
                return k;

        rec.persist = (st.st_mode & S_ISVTX) != 0;
        rec.raw_mode = st.st_mode & 07777;
        *r = rec;
        rec = (struct db_record){};
        return 0;
}

/* ---------------------------------------------------------------- write */

static int check_list(const struct strlist *l, bool (*valid)(const char *))
{
        if (l->n > DB_ENTRIES_MAX)
                return -E2BIG;
        for (size_t i = 0; i < l->n; i++)
                if (!valid(l->items[i]))
                        return -EINVAL;
        return 0;
}

static bool devlink_is_valid(const char *s) { return *s && !has_newline(s); }

static bool property_is_valid(const char *s)
{
        const char *eq = strchr(s, '=');

        return eq && eq != s && !has_newline(s);
}

static bool property_is_stored(const char *s) { return s[0] != '.'; }

static int check_record(const struct db_record *r)
{
        int k;

        k = check_list(&r->devlinks, devlink_is_valid);
        if (k == 0)
                k = check_list(&r->properties, property_is_valid);
        if (k == 0)
                k = check_list(&r->tags, tag_is_valid);
        if (k == 0)
                k = check_list(&r->current_tags, tag_is_valid);
        return k;
}

static bool record_has_info(const struct db_record *r)
{
        if (r->devlinks.n > 0 || r->link_priority != 0 || r->tags.n > 0 || r->current_tags.n > 0)
                return true;
        for (size_t i = 0; i < r->properties.n; i++)
                if (property_is_stored(r->properties.items[i]))
                        return true;
        return false;
}

static void serialize(FILE *f, const struct db_record *r, bool has_devnum)
{
        if (has_devnum) {
                for (size_t i = 0; i < r->devlinks.n; i++)
                        fprintf(f, "S:%s\n", r->devlinks.items[i]);
                if (r->link_priority != 0)
                        fprintf(f, "L:%d\n", r->link_priority);
        }
        if (r->usec_initialized > 0)
                fprintf(f, "I:%" PRIu64 "\n", r->usec_initialized);
        for (size_t i = 0; i < r->properties.n; i++)
                if (property_is_stored(r->properties.items[i]))
                        fprintf(f, "E:%s\n", r->properties.items[i]);
        for (size_t i = 0; i < r->tags.n; i++)
                fprintf(f, "G:%s\n", r->tags.items[i]);
        for (size_t i = 0; i < r->current_tags.n; i++)
                fprintf(f, "Q:%s\n", r->current_tags.items[i]);
        fputs("V:1\n", f);
}

/* Render the file content into a new buffer. */
static int render(const struct db_record *r, bool has_devnum, char **ret, size_t *ret_len)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f;

        f = open_memstream(&buf, &len);
        if (!f)
                return -ENOMEM;
        if (record_has_info(r))
                serialize(f, r, has_devnum);
        if (ferror(f)) {
                fclose(f);
                free(buf);
                return -ENOMEM;
        }
        if (fclose(f) != 0) {
                free(buf);
                return -ENOMEM;
        }
        if (len > DB_FILE_MAX) {
                free(buf);
                return -EFBIG;
        }
        *ret = buf;
        *ret_len = len;
        return 0;
}

int db_render(const struct db_record *r, bool has_devnum, char **ret, size_t *ret_len)
{
        int k;

        if (!r || !ret || !ret_len)
                return -EINVAL;
        k = check_record(r);
        if (k < 0)
                return k;
        return render(r, has_devnum, ret, ret_len);
}

static int write_record(const char *run_dir, const char *id, const struct db_record *r,
                        bool has_devnum, bool has_ifindex, const struct db_record *old)
{
        _cleanup_free_ char *buf = NULL;
        char dir[PATH_MAX], path[PATH_MAX];
        size_t len;
        int k;

        if (!run_dir || !r || !id_is_valid(id))
                return -EINVAL;
        k = check_record(r);
        if (k < 0)
                return k;

        if (!record_has_info(r) && !has_devnum && !has_ifindex)
                return old && old->absent ? 0 : db_delete(run_dir, id);

        k = path_join3(dir, sizeof(dir), run_dir, "data", NULL);
        if (k == 0)
                k = path_join3(path, sizeof(path), run_dir, "data", id);
        if (k < 0)
                return k;

        k = render(r, has_devnum, &buf, &len);
        if (k < 0)
                return k;
        mode_t mode = r->persist ? 01644 : 0644;
        if (old && old->raw && old->raw_len == len && old->raw_mode == mode &&
            memcmp(old->raw, buf, len) == 0)
                return 0; /* the file already holds exactly this */
        /* A new empty record (a device no rule gave anything to store) is
         * made in one step; -EEXIST (it appeared meanwhile) or a missing
         * directory take the general way. */
        k = len == 0 && old && old->absent ? create_empty_file(path, mode) : -EEXIST;
        if (k == 0)
                return 0;
        k = write_file_atomic(path, buf, len, mode);
        if (k == -ENOENT) { /* the directory is made once, not checked per event */
                k = mkdir_p(dir, 0755);
                if (k == 0)
                        k = write_file_atomic(path, buf, len, mode);
        }
        if (k < 0) {
                /* A stale record is worse than none (sd-device does the same). */
                (void)unlink(path);
                return log_debug_errno(k, "db: failed to write %s: %m", path);
        }
        return 0;
}

int db_write(const char *run_dir, const char *id, const struct db_record *r, bool has_devnum,
             bool has_ifindex)
{
        return write_record(run_dir, id, r, has_devnum, has_ifindex, NULL);
}

int db_write_changed(const char *run_dir, const char *id, const struct db_record *r,
                     bool has_devnum, bool has_ifindex, const struct db_record *old)
{
        return write_record(run_dir, id, r, has_devnum, has_ifindex, old);
}

int db_delete(const char *run_dir, const char *id)
{
        char path[PATH_MAX];
        int k;

        if (!run_dir || !id_is_valid(id))
                return -EINVAL;
        k = path_join3(path, sizeof(path), run_dir, "data", id);
        if (k < 0)
                return k;
        if (unlink(path) < 0 && errno != ENOENT)
                return -errno;
        return 0;
}

/* ---------------------------------------------------------------- tags */

/* <run>/tags/<tag>/<id>. sd-device 252 joins "/run/udev/tags/", tag, "/", id
 * as strings, so the empty tag's entry is the file <run>/tags/<id>. */
static int tag_path(char *buf, size_t size, const char *run_dir, const char *tag, const char *id)
{
        int n = tag[0] ? snprintf(buf, size, "%s/tags/%s/%s", run_dir, tag, id)
                       : snprintf(buf, size, "%s/tags/%s", run_dir, id);

        if (n < 0 || (size_t)n >= size)
                return -ENAMETOOLONG;
        return 0;
}

static int tag_unlink(const char *run_dir, const char *tag, const char *id)
{
        char path[PATH_MAX];
        int k;

        if (!tag_is_indexable(tag))
                return -EINVAL;
        k = tag_path(path, sizeof(path), run_dir, tag, id);
        if (k < 0)
                return k;
        if (unlink(path) < 0 && errno != ENOENT)
                return -errno;
        return 0;
}

static int tag_touch(const char *run_dir, const char *tag, const char *id)
{
        char path[PATH_MAX];
        int k;

        if (!tag_is_indexable(tag))
                return -EINVAL;
        k = tag_path(path, sizeof(path), run_dir, tag, id);
        if (k < 0)
                return k;
        return touch_file(path, 0444);
}

/* Keep the first error, carry on with the rest. */
static void gather(int *r, int k)
{
        if (k < 0 && *r == 0)
                *r = k;
}

int tags_index_update(const char *run_dir, const char *id, const struct strlist *old_tags,
                      const struct strlist *tags)
{
        int r = 0;

        if (!run_dir || !id_is_valid(id))
                return -EINVAL;
        for (size_t i = 0; tags && i < tags->n; i++)
                gather(&r, tag_touch(run_dir, tags->items[i], id));
        for (size_t i = 0; old_tags && i < old_tags->n; i++) {
                if (strlist_contains(tags, old_tags->items[i]))
                        continue;
                gather(&r, tag_unlink(run_dir, old_tags->items[i], id));
        }
        return r;
}

int tags_index_remove(const char *run_dir, const char *id, const struct strlist *tags)
{
        int r = 0;

        if (!run_dir || !id_is_valid(id))
                return -EINVAL;
        for (size_t i = 0; tags && i < tags->n; i++)
                gather(&r, tag_unlink(run_dir, tags->items[i], id));
        return r;
}
