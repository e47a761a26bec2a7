/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (every call owns its trie, string table and buffers) */
/* hwdb.d compiler: see hwdb-compile.h.
 *
 * The sources are read into an in-memory radix trie (one node per branching
 * point, each holding the rest of its pattern as a prefix string), whose
 * shape is fully determined by the set of patterns; then every string (node
 * prefixes, keys, values, file names) is stored once in a string area where a
 * string that is the tail of another one shares its bytes; then the nodes
 * are written children first (so a parent knows their offsets), the string
 * area after them, and the header last. */
#include <ctype.h>
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "builtins/hwdb-compile.h"
#include "builtins/hwdb-format.h"
#include "shared/fileio.h"
#include "shared/hashmap.h"
#include "shared/log.h"
#include "shared/macro.h"

/* tool_version in the header: the systemd version whose format and lookup
 * semantics the file follows (informational only; readers ignore it). */
#define HWDB_TOOL_VERSION 252
#define READ_CHUNK (64 * 1024)
#define STRINGS_MAX ((size_t)UINT32_MAX - 1)

const char *const hwdb_source_dirs[] = {
        "/etc/udev/hwdb.d",
        "/run/udev/hwdb.d",
        "/usr/local/lib/udev/hwdb.d",
        "/usr/lib/udev/hwdb.d",
        "/lib/udev/hwdb.d",
        NULL,
};

/* ---- string table ---- */

struct strtab {
        struct hashmap index; /* string bytes -> id + 1 */
        char **strs;          /* owned copies, by id */
        size_t *lens;
        uint64_t *offs;       /* after strtab_layout(): offset in the string area */
        size_t n, cap;
        uint64_t size;        /* after strtab_layout(): bytes of the string area */
};

static void strtab_done(struct strtab *t)
{
        for (size_t i = 0; i < t->n; i++)
                free(t->strs[i]);
        free(t->strs);
        free(t->lens);
        free(t->offs);
        hashmap_deinit(&t->index);
        *t = (struct strtab){};
}

/* Id of the string s[0..len) (added if new). 0 or -ENOMEM, -E2BIG. */
static int strtab_add(struct strtab *t, const char *s, size_t len, uint32_t *ret)
{
        void *v = hashmap_get(&t->index, s, len);
        char *copy;
        int r;

        if (v) {
                *ret = (uint32_t)((uintptr_t)v - 1);
                return 0;
        }
        if (t->n >= STRINGS_MAX)
                return -E2BIG;
        if (t->n == t->cap) {
                size_t cap = t->cap ? t->cap * 2 : 1024;
                char **strs = reallocarray(t->strs, cap, sizeof(*strs));

                if (!strs)
                        return -ENOMEM;
                t->strs = strs;
                size_t *lens = reallocarray(t->lens, cap, sizeof(*lens));
                if (!lens)
                        return -ENOMEM;
                t->lens = lens;
                t->cap = cap;
        }
        copy = malloc(len + 1);
        if (!copy)
                return -ENOMEM;
        memcpy(copy, s, len);
        copy[len] = '\0';
        r = hashmap_put(&t->index, copy, len, (void *)(uintptr_t)(t->n + 1));
        if (r < 0) {
                free(copy);
                return r;
        }
        t->strs[t->n] = copy;
        t->lens[t->n] = len;
        *ret = (uint32_t)t->n++;
        return 0;
}

/* Order by the reversed strings: a string that is the tail of others comes
 * right before the first of them. */
static int cmp_reversed(const void *a, const void *b, void *userdata)
{
        const struct strtab *t = userdata;
        uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
        const unsigned char *s = (const unsigned char *)t->strs[x];
        const unsigned char *u = (const unsigned char *)t->strs[y];
        size_t i = t->lens[x], j = t->lens[y];

        while (i > 0 && j > 0) {
                unsigned char c = s[--i], d = u[--j];

                if (c != d)
                        return c < d ? -1 : 1;
        }
        if (i == j)
                return 0;
        return i > 0 ? 1 : -1;
}

static bool is_tail_of(const struct strtab *t, uint32_t a, uint32_t b)
{
        size_t la = t->lens[a], lb = t->lens[b];

        return la <= lb && memcmp(t->strs[b] + lb - la, t->strs[a], la) == 0;
}

/* Give every string its offset in the string area; tails share the bytes of
 * a longer string. 0 or -ENOMEM. */
static int strtab_layout(struct strtab *t)
{
        _cleanup_free_ uint32_t *order = NULL;
        uint64_t cursor = 0;

        t->offs = calloc(t->n ? t->n : 1, sizeof(*t->offs));
        order = calloc(t->n ? t->n : 1, sizeof(*order));
        if (!t->offs || !order)
                return -ENOMEM;
        for (size_t i = 0; i < t->n; i++)
                order[i] = (uint32_t)i;
        qsort_r(order, t->n, sizeof(*order), cmp_reversed, t);
        for (size_t k = t->n; k-- > 0;) {
                uint32_t id = order[k];

                if (k + 1 < t->n && is_tail_of(t, id, order[k + 1])) {
                        uint32_t next = order[k + 1];

                        t->offs[id] = t->offs[next] + t->lens[next] - t->lens[id];
                } else {
                        t->offs[id] = cursor;
                        cursor += t->lens[id] + 1;
                }
        }
        t->size = cursor;
        return 0;
}

/* ---- in-memory trie ---- */

struct tvalue {
        uint32_t key, value, file; /* string ids */
        uint32_t line;
        uint16_t priority;
};

struct tnode;
struct tchild {
        uint8_t c;
        struct tnode *node;
};

struct tnode {
        char *prefix;            /* owned: the rest of the pattern up to the next branch */
        struct tchild *children; /* sorted by c */
        struct tvalue *values;   /* sorted by key */
        size_t n_children, n_values, cap_values;
        uint32_t prefix_id;      /* set before writing */
        uint64_t off;            /* file offset, set while writing */
};

struct trie {
        struct tnode *root;
        struct strtab strings;
        size_t nodes, children, values;
};

static void tnode_free(struct tnode *n)
{
        if (!n)
                return;
        for (size_t i = 0; i < n->n_children; i++)
                tnode_free(n->children[i].node);
        free(n->children);
        free(n->values);
        free(n->prefix);
        free(n);
}

static struct tnode *tnode_new(const char *prefix)
{
        struct tnode *n = calloc(1, sizeof(*n));

        if (!n)
                return NULL;
        n->prefix = strdup(prefix);
        if (!n->prefix) {
                free(n);
                return NULL;
        }
        return n;
}

/* Index of child c, or of where it would be inserted (*found false). */
static size_t child_search(const struct tnode *n, uint8_t c, bool *found)
{
        size_t lo = 0, hi = n->n_children;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (n->children[mid].c == c) {
                        *found = true;
                        return mid;
                }
                if (n->children[mid].c < c)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        *found = false;
        return lo;
}

/* Insert `child` under character c (not present yet). 0 or -ENOMEM. */
static int add_child(struct trie *t, struct tnode *n, uint8_t c, struct tnode *child)
{
        struct tchild *children;
        bool found;
        size_t i = child_search(n, c, &found);

        children = reallocarray(n->children, n->n_children + 1, sizeof(*children));
        if (!children)
                return -ENOMEM;
        n->children = children;
        memmove(children + i + 1, children + i, (n->n_children - i) * sizeof(*children));
        children[i] = (struct tchild){ .c = c, .node = child };
        n->n_children++;
        t->children++;
        t->nodes++;
        return 0;
}

static int add_value(struct trie *t, struct tnode *n, const struct tvalue *v)
{
        const char *key = t->strings.strs[v->key];
        size_t lo = 0, hi = n->n_values;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = strcmp(t->strings.strs[n->values[mid].key], key);

                if (c == 0) {
                        /* the same key for the same pattern again: the later line
                         * (files are read in priority order) replaces it */
                        n->values[mid] = *v;
                        return 0;
                }
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (n->n_values == n->cap_values) {
                size_t cap = n->cap_values ? n->cap_values * 2 : 2;
                struct tvalue *values = reallocarray(n->values, cap, sizeof(*values));

                if (!values)
                        return -ENOMEM;
                n->values = values;
                n->cap_values = cap;
        }
        memmove(n->values + lo + 1, n->values + lo, (n->n_values - lo) * sizeof(*n->values));
        n->values[lo] = *v;
        n->n_values++;
        t->values++;
        return 0;
}

/* Split n after p characters of its prefix: the rest moves to a new child
 * with everything n had. 0 or -ENOMEM (n unchanged). */
static int split_node(struct trie *t, struct tnode *n, size_t p)
{
        struct tnode *child = tnode_new(n->prefix + p + 1);
        struct tchild *slot;
        uint8_t c = (uint8_t)n->prefix[p];

        if (!child)
                return -ENOMEM;
        slot = malloc(sizeof(*slot));
        if (!slot) {
                tnode_free(child);
                return -ENOMEM;
        }
        child->children = n->children;
        child->n_children = n->n_children;
        child->values = n->values;
        child->n_values = n->n_values;
        child->cap_values = n->cap_values;
        n->prefix[p] = '\0';
        n->children = slot;
        n->children[0] = (struct tchild){ .c = c, .node = child };
        n->n_children = 1;
        n->values = NULL;
        n->n_values = n->cap_values = 0;
        t->children++;
        t->nodes++;
        return 0;
}

static int trie_insert(struct trie *t, const char *pattern, const struct tvalue *v)
{
        struct tnode *n = t->root;
        size_t i = 0;
        int r;

        for (;;) {
                size_t p = 0;
                bool found;
                size_t at;

                while (n->prefix[p] != '\0' && n->prefix[p] == pattern[i + p])
                        p++;
                if (n->prefix[p] != '\0') {
                        r = split_node(t, n, p);
                        if (r < 0)
                                return r;
                }
                i += p;
                if (pattern[i] == '\0')
                        return add_value(t, n, v);

                at = child_search(n, (uint8_t)pattern[i], &found);
                if (!found) {
                        struct tnode *child = tnode_new(pattern + i + 1);

                        if (!child)
                                return -ENOMEM;
                        r = add_value(t, child, v);
                        if (r >= 0)
                                r = add_child(t, n, (uint8_t)pattern[i], child);
                        if (r < 0) {
                                tnode_free(child);
                                return r;
                        }
                        return 0;
                }
                n = n->children[at].node;
                i++;
        }
}

static void trie_free(struct trie *t)
{
        tnode_free(t->root);
        strtab_done(&t->strings);
        *t = (struct trie){};
}

/* ---- source files ---- */

struct source {
        char *name;     /* file name, for sorting and masking */
        char *path;     /* what is opened (root included) */
        char *db_path;  /* recorded in the database (root not included) */
        bool masked;    /* empty file or link to /dev/null: claims the name only */
};

struct source_list {
        struct source *items;
        size_t n;
};

static void source_list_done(struct source_list *l)
{
        for (size_t i = 0; i < l->n; i++) {
                free(l->items[i].name);
                free(l->items[i].path);
                free(l->items[i].db_path);
        }
        free(l->items);
        *l = (struct source_list){};
}

static bool source_seen(const struct source_list *l, const char *name)
{
        for (size_t i = 0; i < l->n; i++)
                if (streq(l->items[i].name, name))
                        return true;
        return false;
}

static bool is_source_name(const char *name)
{
        size_t n = strlen(name);

        return name[0] != '.' && n > STRLEN(".hwdb") && n <= NAME_MAX &&
               streq(name + n - STRLEN(".hwdb"), ".hwdb");
}

/* "a" + "b" (+ "/" + "c" if c), bounded by PATH_MAX. NULL: errno set. */
static char *path_join3(const char *a, const char *b, const char *c)
{
        char buf[PATH_MAX];
        int n = snprintf(buf, sizeof(buf), "%s%s%s%s", a, b, c ? "/" : "", c ? c : "");

        if (n < 0 || (size_t)n >= sizeof(buf)) {
                errno = ENAMETOOLONG;
                return NULL;
        }
        return strdup(buf);
}

/* Classify dir/name: 1 = add (*masked set), 0 = skip, <0 = -errno. */
static int classify(int dfd, const char *root, const char *dir_path, const char *name,
                    char **ret_path, bool *masked)
{
        _cleanup_free_ char *path = NULL;
        struct stat st;

        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : negative_errno();
        if (S_ISLNK(st.st_mode)) {
                char target[PATH_MAX];
                ssize_t n = readlinkat(dfd, name, target, sizeof(target) - 1);

                if (n < 0)
                        return errno == ENOENT ? 0 : negative_errno();
                target[n] = '\0';
                if (streq(target, "/dev/null")) {
                        *masked = true;
                        *ret_path = NULL;
                        return 1;
                }
                /* an absolute link is resolved inside the root */
                if (target[0] == '/' && root[0] != '\0')
                        path = path_join3(root, target, NULL);
                else
                        path = path_join3(dir_path, "", name);
        } else
                path = path_join3(dir_path, "", name);
        if (!path)
                return negative_errno();
        if (stat(path, &st) < 0) {
                if (errno == ENOENT) {
                        log_debug("%s: dangling link, ignored.", path);
                        return 0;
                }
                return negative_errno();
        }
        if (S_ISCHR(st.st_mode) || (S_ISREG(st.st_mode) && st.st_size == 0))
                *masked = true;
        else if (S_ISREG(st.st_mode))
                *masked = false;
        else
                return 0;
        *ret_path = TAKE_PTR(path);
        return 1;
}

/* Add the sources of one directory (names already seen are masked). An
 * entry that cannot be examined is logged, counted in *errors and skipped.
 * 0 or -errno (the directory cannot be read, -ENOMEM, -E2BIG). */
static int list_dir(struct source_list *l, const char *root, const char *dir, unsigned *errors)
{
        _cleanup_free_ char *dir_path = path_join3(root, dir, NULL);
        DIR *d;
        struct dirent *de;
        int r = 0;

        if (!dir_path)
                return negative_errno();
        d = opendir(dir_path); /* O_CLOEXEC in glibc */
        if (!d) {
                if (errno == ENOENT || errno == ENOTDIR)
                        return 0;
                return log_error_errno(errno, "Failed to open directory %s: %m", dir_path);
        }
        while ((errno = 0, de = readdir(d))) {
                struct source s = {};

                if (!is_source_name(de->d_name) || source_seen(l, de->d_name))
                        continue;
                r = classify(dirfd(d), root, dir_path, de->d_name, &s.path, &s.masked);
                if (r == -ENOMEM)
                        break;
                if (r < 0) {
                        (*errors)++;
                        log_warning_errno(r, "Ignoring %s/%s: %m", dir_path, de->d_name);
                        r = 0;
                        continue;
                }
                if (r == 0)
                        continue;
                if (l->n >= HWDB_SOURCE_FILES_MAX) {
                        free(s.path);
                        r = log_error_errno(-E2BIG, "More than %d hwdb files, giving up.",
                                            HWDB_SOURCE_FILES_MAX);
                        break;
                }
                s.name = strdup(de->d_name);
                s.db_path = path_join3(dir, "", de->d_name);
                struct source *items = reallocarray(l->items, l->n + 1, sizeof(*items));
                if (!s.name || !s.db_path || !items) {
                        free(s.name);
                        free(s.path);
                        free(s.db_path);
                        if (items)
                                l->items = items;
                        r = -ENOMEM;
                        break;
                }
                l->items = items;
                l->items[l->n++] = s;
                r = 0;
        }
        if (r == 0 && errno != 0)
                r = log_error_errno(errno, "Failed to read directory %s: %m", dir_path);
        closedir(d);
        return r;
}

static int cmp_source(const void *a, const void *b)
{
        return strcmp(((const struct source *)a)->name, ((const struct source *)b)->name);
}

/* ---- reading and parsing one file ---- */

struct line_reader {
        int fd;
        int error;      /* -errno of a failed read */
        bool eof;
        size_t pos, len;
        char buf[READ_CHUNK];
};

/* Next byte without consuming it, or -1 at the end (or after a read error). */
static int reader_peek(struct line_reader *r)
{
        while (r->pos == r->len) {
                ssize_t n;

                if (r->eof)
                        return -1;
                n = read(r->fd, r->buf, sizeof(r->buf));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        if (n < 0)
                                r->error = negative_errno();
                        r->eof = true;
                        return -1;
                }
                r->pos = 0;
                r->len = (size_t)n;
        }
        return (unsigned char)r->buf[r->pos];
}

enum { EOL_LF = 1, EOL_CR = 2, EOL_NUL = 4 };

static unsigned eol_kind(int c)
{
        return c == '\n' ? EOL_LF : c == '\r' ? EOL_CR : c == '\0' ? EOL_NUL : 0;
}

/* Read one line into line[HWDB_SOURCE_LINE_MAX + 1]. A line ends at the
 * first run of end-of-line characters in which none repeats ("\r\n" and
 * "\n\r" are one end, "\n\n" two) and that stops after a NUL. Returns 1 (a
 * line, *too_long if it was cut), 0 at the end of the file. */
static int read_line(struct line_reader *r, char *line, bool *too_long)
{
        size_t n = 0;
        unsigned seen = 0;
        bool any = false;
        int c;

        *too_long = false;
        while ((c = reader_peek(r)) >= 0 && eol_kind(c) == 0) {
                r->pos++;
                any = true;
                if (n < HWDB_SOURCE_LINE_MAX)
                        line[n++] = (char)c;
                else
                        *too_long = true;
        }
        while (!(seen & EOL_NUL) && (c = reader_peek(r)) >= 0) {
                unsigned k = eol_kind(c);

                if (k == 0 || (seen & k))
                        break;
                r->pos++;
                seen |= k;
                any = true;
        }
        line[n] = '\0';
        return any ? 1 : 0;
}

struct parse {
        struct trie *trie;
        const char *path;     /* for messages */
        uint32_t file_id;     /* string id of the recorded file name */
        uint16_t priority;
        uint32_t line_number;
        unsigned errors;
        char **matches;       /* patterns of the current record (owned) */
        size_t n_matches, cap_matches;
};

static void matches_clear(struct parse *ps)
{
        for (size_t i = 0; i < ps->n_matches; i++)
                free(ps->matches[i]);
        ps->n_matches = 0;
}

static int matches_add(struct parse *ps, const char *pattern)
{
        char *copy;

        if (ps->n_matches == ps->cap_matches) {
                size_t cap = ps->cap_matches ? ps->cap_matches * 2 : 8;
                char **m = reallocarray(ps->matches, cap, sizeof(*m));

                if (!m)
                        return -ENOMEM;
                ps->matches = m;
                ps->cap_matches = cap;
        }
        copy = strdup(pattern);
        if (!copy)
                return -ENOMEM;
        ps->matches[ps->n_matches++] = copy;
        return 0;
}

#define parse_warning(ps, fmt, ...)                                                \
        do {                                                                       \
                (ps)->errors++;                                                    \
                log_warning("%s:%" PRIu32 ": " fmt, (ps)->path, (ps)->line_number, \
                            ##__VA_ARGS__);                                        \
        } while (0)

/* A property line (line[0] == ' '): add it to every pattern of the record.
 * 0 (also when the line was malformed: logged) or -ENOMEM/-E2BIG. */
static int add_property(struct parse *ps, char *line)
{
        char *eq = strchr(line, '=');
        struct tvalue v;
        int r;

        if (!eq) {
                parse_warning(ps, "property \"%s\" has no '=', ignoring it.", line);
                return 0;
        }
        *eq = '\0';
        /* several leading blanks count as one */
        while (isblank((unsigned char)line[0]) && isblank((unsigned char)line[1]))
                line++;
        if (line[1] == '\0') {
                parse_warning(ps, "property \"%s=%s\" has an empty name, ignoring it.", line,
                              eq + 1);
                return 0;
        }
        v = (struct tvalue){ .file = ps->file_id, .line = ps->line_number,
                             .priority = ps->priority };
        r = strtab_add(&ps->trie->strings, line, strlen(line), &v.key);
        if (r >= 0)
                r = strtab_add(&ps->trie->strings, eq + 1, strlen(eq + 1), &v.value);
        for (size_t i = 0; r >= 0 && i < ps->n_matches; i++)
                r = trie_insert(ps->trie, ps->matches[i], &v);
        return r;
}

/* Parse one opened source file. 0 or a fatal -errno (-ENOMEM, -E2BIG); read
 * errors and malformed lines are logged and counted in ps->errors. */
static int parse_file(struct parse *ps, int fd)
{
        enum { IN_NONE, IN_MATCH, IN_DATA } state = IN_NONE;
        _cleanup_free_ struct line_reader *rd = calloc(1, sizeof(*rd));
        _cleanup_free_ char *line = malloc(HWDB_SOURCE_LINE_MAX + 1);
        bool too_long;
        int r = 0;

        if (!rd || !line)
                return -ENOMEM;
        rd->fd = fd;
        while (r >= 0 && read_line(rd, line, &too_long) > 0) {
                size_t len;
                char *hash;

                if (ps->line_number == UINT32_MAX) {
                        parse_warning(ps, "too many lines, ignoring the rest of the file.");
                        break;
                }
                ps->line_number++;
                if (too_long) {
                        parse_warning(ps, "line longer than %d bytes, ignoring it and the "
                                      "rest of its record.", HWDB_SOURCE_LINE_MAX);
                        state = IN_NONE;
                        matches_clear(ps);
                        continue;
                }
                if (line[0] == '#')
                        continue;
                hash = strchr(line, '#');
                if (hash)
                        *hash = '\0';
                len = strlen(line);
                while (len > 0 && isspace((unsigned char)line[len - 1]))
                        len--;
                line[len] = '\0';

                switch (state) {
                case IN_NONE:
                        if (len == 0)
                                break;
                        if (line[0] == ' ') {
                                parse_warning(ps, "property \"%s\" outside of a record (no "
                                              "match line before it), ignoring it.", line);
                                break;
                        }
                        r = matches_add(ps, line);
                        state = IN_MATCH;
                        break;
                case IN_MATCH:
                        if (len == 0) {
                                parse_warning(ps, "record without properties, ignoring it.");
                                matches_clear(ps);
                                state = IN_NONE;
                        } else if (line[0] != ' ')
                                r = matches_add(ps, line);
                        else {
                                state = IN_DATA;
                                r = add_property(ps, line);
                        }
                        break;
                case IN_DATA:
                        if (len == 0) {
                                matches_clear(ps);
                                state = IN_NONE;
                        } else if (line[0] != ' ') {
                                parse_warning(ps, "expected a property or an empty line, got "
                                              "\"%s\": ignoring it and the rest of the "
                                              "record.", line);
                                matches_clear(ps);
                                state = IN_NONE;
                        } else
                                r = add_property(ps, line);
                        break;
                }
        }
        if (r >= 0 && state == IN_MATCH)
                parse_warning(ps, "record without properties at the end of the file, "
                              "ignoring it.");
        matches_clear(ps);
        if (r >= 0 && rd->error < 0) {
                ps->errors++;
                log_error_errno(rd->error, "Failed to read %s: %m", ps->path);
        }
        return r;
}

static int compile_source(struct trie *t, const struct source *s, uint16_t priority,
                          unsigned *errors)
{
        struct parse ps = { .trie = t, .path = s->path, .priority = priority };
        _cleanup_close_ int fd = -1;
        int r;

        log_debug("Reading %s (priority %u)", s->path, priority);
        fd = open(s->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0) {
                (*errors)++;
                log_error_errno(errno, "Failed to open %s: %m", s->path);
                return 0;
        }
        r = strtab_add(&t->strings, s->db_path, strlen(s->db_path), &ps.file_id);
        if (r >= 0)
                r = parse_file(&ps, fd);
        free(ps.matches);
        *errors += ps.errors;
        return r;
}

/* ---- writing ---- */

static int intern_prefixes(struct trie *t, struct tnode *n)
{
        int r = strtab_add(&t->strings, n->prefix, strlen(n->prefix), &n->prefix_id);

        for (size_t i = 0; r >= 0 && i < n->n_children; i++)
                r = intern_prefixes(t, n->children[i].node);
        return r;
}

struct writer {
        uint8_t *buf;
        uint64_t pos;          /* next node goes here */
        uint64_t strings_off;  /* start of the string area */
        const struct strtab *strings;
};

static uint64_t str_off(const struct writer *w, uint32_t id)
{
        return htole64(w->strings_off + w->strings->offs[id]);
}

/* Children first, then the node with its child and value entries. */
static void write_node(struct writer *w, struct tnode *n)
{
        struct hwdb_node_f nf = {};

        for (size_t i = 0; i < n->n_children; i++)
                write_node(w, n->children[i].node);

        n->off = w->pos;
        nf.prefix_off = str_off(w, n->prefix_id);
        nf.children_count = (uint8_t)n->n_children;
        nf.values_count = htole64(n->n_values);
        memcpy(w->buf + w->pos, &nf, sizeof(nf));
        w->pos += sizeof(nf);
        for (size_t i = 0; i < n->n_children; i++) {
                struct hwdb_child_f cf = { .c = n->children[i].c,
                                           .child_off = htole64(n->children[i].node->off) };

                memcpy(w->buf + w->pos, &cf, sizeof(cf));
                w->pos += sizeof(cf);
        }
        for (size_t i = 0; i < n->n_values; i++) {
                const struct tvalue *v = &n->values[i];
                struct hwdb_value2_f vf = {
                        .key_off = str_off(w, v->key),
                        .value_off = str_off(w, v->value),
                        .filename_off = str_off(w, v->file),
                        .line_number = htole32(v->line),
                        .file_priority = htole16(v->priority),
                };

                memcpy(w->buf + w->pos, &vf, sizeof(vf));
                w->pos += sizeof(vf);
        }
}

/* The whole file in a new buffer. 0, -ENOMEM, -E2BIG. */
static int build_image(struct trie *t, uint8_t **ret, size_t *ret_size)
{
        struct hwdb_header_f h = { .signature = HWDB_SIG };
        struct writer w = { .strings = &t->strings };
        uint64_t nodes_len, size;
        int r;

        r = intern_prefixes(t, t->root);
        if (r < 0)
                return r;
        r = strtab_layout(&t->strings);
        if (r < 0)
                return r;
        /* counts are bounded by the input, far below these limits in practice */
        if (t->nodes > UINT32_MAX || t->values > UINT32_MAX)
                return -E2BIG;
        nodes_len = (uint64_t)t->nodes * sizeof(struct hwdb_node_f) +
                    (uint64_t)t->children * sizeof(struct hwdb_child_f) +
                    (uint64_t)t->values * sizeof(struct hwdb_value2_f);
        size = sizeof(h) + nodes_len + t->strings.size;
        if (size > SIZE_MAX / 2 || t->strings.size > SIZE_MAX / 2)
                return -E2BIG;

        w.buf = calloc(1, (size_t)size);
        if (!w.buf)
                return -ENOMEM;
        w.pos = sizeof(h);
        w.strings_off = sizeof(h) + nodes_len;
        write_node(&w, t->root);
        if (w.pos != w.strings_off) {
                /* the counters disagree with the trie: a bug, never a bad file */
                free(w.buf);
                return log_error_errno(-EINVAL, "hwdb: internal size mismatch (%llu != %llu)",
                                       (unsigned long long)w.pos,
                                       (unsigned long long)w.strings_off);
        }
        for (size_t i = 0; i < t->strings.n; i++)
                memcpy(w.buf + w.strings_off + t->strings.offs[i], t->strings.strs[i],
                       t->strings.lens[i] + 1);

        h.tool_version = htole64(HWDB_TOOL_VERSION);
        h.file_size = htole64(size);
        h.header_size = htole64(sizeof(struct hwdb_header_f));
        h.node_size = htole64(sizeof(struct hwdb_node_f));
        h.child_entry_size = htole64(sizeof(struct hwdb_child_f));
        h.value_entry_size = htole64(sizeof(struct hwdb_value2_f));
        h.nodes_root_off = htole64(t->root->off);
        h.nodes_len = htole64(nodes_len);
        h.strings_len = htole64(t->strings.size);
        memcpy(w.buf, &h, sizeof(h));
        *ret = w.buf;
        *ret_size = (size_t)size;
        return 0;
}

/* Temporary file beside `path`, written, synced and renamed over it. */
static int write_output(const char *path, const uint8_t *data, size_t size)
{
        const char *slash = strrchr(path, '/');
        char tmp[PATH_MAX];
        _cleanup_close_ int fd = -1;
        int n, r;

        r = mkdir_parents(path, 0755);
        if (r < 0)
                return r;
        n = snprintf(tmp, sizeof(tmp), "%.*s.#hwdb.bin%016llx", (int)(slash - path + 1), path,
                     (unsigned long long)random_name_u64());
        if (n < 0 || (size_t)n >= sizeof(tmp))
                return -ENAMETOOLONG;
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0444);
        if (fd < 0)
                return negative_errno();
        r = 0;
        if (fchmod(fd, 0444) < 0)
                r = negative_errno();
        for (size_t done = 0; r == 0 && done < size;) {
                ssize_t w = write(fd, data + done, size - done);

                if (w < 0 && errno == EINTR)
                        continue;
                if (w <= 0)
                        r = w < 0 ? negative_errno() : -EIO;
                else
                        done += (size_t)w;
        }
        if (r == 0 && fsync(fd) < 0)
                r = negative_errno();
        if (r == 0 && close(TAKE_FD(fd)) < 0)
                r = negative_errno();
        if (r == 0 && rename(tmp, path) < 0)
                r = negative_errno();
        if (r < 0)
                (void)unlink(tmp);
        return r;
}

static int remove_output(const char *path)
{
        if (unlink(path) < 0) {
                if (errno != ENOENT)
                        return log_error_errno(errno, "Failed to remove %s: %m", path);
                log_info("No hwdb files found, nothing to compile.");
        } else
                log_info("No hwdb files found, removed %s.", path);
        return 1;
}

int hwdb_compile(const struct hwdb_compile_options *o, struct hwdb_compile_stats *ret_stats)
{
        const char *const *dirs = o->dirs ? o->dirs : hwdb_source_dirs;
        const char *root = o->root && !streq(o->root, "/") ? o->root : "";
        struct hwdb_compile_stats st = {};
        struct source_list sources = {};
        struct trie t = {};
        _cleanup_free_ uint8_t *image = NULL;
        uint16_t priority = 0;
        size_t size = 0;
        int r;

        if (!o->output || o->output[0] != '/' || strlen(o->output) >= PATH_MAX ||
            strlen(root) >= PATH_MAX || (root[0] != '\0' && root[0] != '/'))
                return log_error_errno(-EINVAL, "hwdb: invalid root or output path.");
        if (ret_stats)
                *ret_stats = st;

        for (size_t i = 0; dirs[i]; i++) {
                if (dirs[i][0] != '/')
                        return log_error_errno(-EINVAL, "hwdb: not an absolute directory: %s",
                                               dirs[i]);
                r = list_dir(&sources, root, dirs[i], &st.errors);
                if (r < 0)
                        goto out;
        }
        if (sources.n > 0)
                qsort(sources.items, sources.n, sizeof(*sources.items), cmp_source);

        t.root = tnode_new("");
        if (!t.root) {
                r = -ENOMEM;
                goto out;
        }
        t.nodes = 1;
        hashmap_init(&t.strings.index);
        for (size_t i = 0; i < sources.n; i++) {
                if (sources.items[i].masked) {
                        log_debug("%s%s is masked.", root, sources.items[i].db_path);
                        continue;
                }
                /* priorities start at 1 (0 means "no priority", format version 2) */
                r = compile_source(&t, &sources.items[i], ++priority, &st.errors);
                if (r < 0) {
                        log_error_errno(r, "Failed to compile %s: %m", sources.items[i].path);
                        goto out;
                }
                st.files++;
        }
        if (priority == 0) {
                r = remove_output(o->output);
                goto out;
        }

        r = build_image(&t, &image, &size);
        if (r < 0) {
                log_error_errno(r, "Failed to build the hwdb database: %m");
                goto out;
        }
        r = write_output(o->output, image, size);
        if (r < 0) {
                log_error_errno(r, "Failed to write %s: %m", o->output);
                goto out;
        }
        st.nodes = t.nodes;
        st.values = t.values;
        st.size = size;
        log_debug("%s: %zu bytes, %zu nodes, %zu children, %zu values, %zu strings "
                  "(%llu bytes)", o->output, size, t.nodes, t.children, t.values,
                  t.strings.n, (unsigned long long)t.strings.size);
        r = 0;
out:
        if (r >= 0 && ret_stats)
                *ret_stats = st;
        trie_free(&t);
        source_list_done(&sources);
        return r;
}
