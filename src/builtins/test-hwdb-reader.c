/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: main + reader threads in test_threads (one shared read-only hwdb) */
/* hwdb-reader.c over small hwdb.bin files written by the test itself (an
 * uncompressed trie: one character per node, every node with an empty prefix
 * string, as systemd-hwdb's format allows; compressed tries as systemd-hwdb
 * writes them are covered by tests/integration/test_builtins_compare.py):
 * exact keys, glob children, duplicate keys by priority and line,
 * the order of first matches, keys without the leading space; then damaged
 * files (truncated, bytes flipped) must never make a lookup read outside the
 * mapping (run under ASan), and concurrent lookups on one mapping (TSan). */
#include <endian.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "builtins/hwdb-reader.h"
#include "shared/macro.h"
#include "shared/tests.h"
#include "shared/thread-util.h"

#define BUF_MAX (256 * 1024)
#define NODE_CHILDREN_MAX 64
#define NODE_VALUES_MAX 16

struct entry {
        const char *pattern, *key, *value;
        uint16_t prio;
        uint32_t line;
};

struct tnode {
        struct tnode *child[NODE_CHILDREN_MAX];
        uint8_t child_c[NODE_CHILDREN_MAX];
        int n_child;
        const struct entry *val[NODE_VALUES_MAX];
        int n_val;
};

struct writer {
        uint8_t *buf;
        size_t len;
        uint64_t empty_off; /* offset of "" */
};

static struct tnode *tnode_new(void)
{
        struct tnode *n = calloc(1, sizeof(*n));

        ASSERT_TRUE(n);
        return n;
}

static void tnode_free(struct tnode *n)
{
        for (int i = 0; i < n->n_child; i++)
                tnode_free(n->child[i]);
        free(n);
}

static void trie_insert(struct tnode *root, const struct entry *e)
{
        struct tnode *n = root;

        for (const char *p = e->pattern; *p; p++) {
                int i, j;

                for (i = 0; i < n->n_child && n->child_c[i] < (uint8_t)*p; i++)
                        ;
                if (i == n->n_child || n->child_c[i] != (uint8_t)*p) {
                        ASSERT_TRUE(n->n_child < NODE_CHILDREN_MAX);
                        for (j = n->n_child; j > i; j--) {
                                n->child[j] = n->child[j - 1];
                                n->child_c[j] = n->child_c[j - 1];
                        }
                        n->child[i] = tnode_new();
                        n->child_c[i] = (uint8_t)*p;
                        n->n_child++;
                }
                n = n->child[i];
        }
        ASSERT_TRUE(n->n_val < NODE_VALUES_MAX);
        n->val[n->n_val++] = e;
}

static uint64_t put(struct writer *w, const void *data, size_t len)
{
        uint64_t off = w->len;

        ASSERT_TRUE(w->len + len <= BUF_MAX);
        memcpy(w->buf + w->len, data, len);
        w->len += len;
        return off;
}

static uint64_t put_string(struct writer *w, const char *s)
{
        return put(w, s, strlen(s) + 1);
}

static void put64(struct writer *w, uint64_t off, uint64_t v)
{
        v = htole64(v);
        memcpy(w->buf + off, &v, 8);
}

/* node: prefix_off u64, children_count u8, pad[7], values_count u64;
 * child: c u8, pad[7], child_off u64; value (v3): key_off, value_off,
 * filename_off u64, line u32, prio u16, pad u16. Returns the node offset. */
static uint64_t emit(struct writer *w, const struct tnode *n)
{
        uint8_t zero[32] = {};
        uint64_t off = put(w, zero, 24), child_off[NODE_CHILDREN_MAX];

        /* children and values must follow the node directly: strings are
         * appended by emit_strings() afterwards */
        put64(w, off, w->empty_off);
        w->buf[off + 8] = (uint8_t)n->n_child;
        put64(w, off + 16, (uint64_t)n->n_val);
        for (int i = 0; i < n->n_child; i++) {
                uint8_t c[16] = { n->child_c[i] };

                child_off[i] = put(w, c, 16);
        }
        for (int i = 0; i < n->n_val; i++) {
                uint64_t v = put(w, zero, 32);
                uint32_t line = htole32(n->val[i]->line);
                uint16_t prio = htole16(n->val[i]->prio);

                /* key_off and value_off: see emit_strings() */
                memcpy(w->buf + v + 24, &line, 4);
                memcpy(w->buf + v + 28, &prio, 2);
                put64(w, v + 16, w->empty_off);
        }
        for (int i = 0; i < n->n_child; i++)
                put64(w, child_off[i] + 8, emit(w, n->child[i]));
        return off;
}

/* Second pass: append key/value strings and patch each value entry. */
static void emit_strings(struct writer *w, const struct tnode *n, uint64_t off)
{
        uint64_t values = off + 24 + 16 * (uint64_t)n->n_child;

        for (int i = 0; i < n->n_val; i++) {
                put64(w, values + 32 * (uint64_t)i, put_string(w, n->val[i]->key));
                put64(w, values + 32 * (uint64_t)i + 8, put_string(w, n->val[i]->value));
        }
        for (int i = 0; i < n->n_child; i++) {
                uint64_t c;

                memcpy(&c, w->buf + off + 24 + 16 * (uint64_t)i + 8, 8);
                emit_strings(w, n->child[i], le64toh(c));
        }
}

/* Write the entries as a hwdb.bin to `path`; returns the file size. */
static size_t write_hwdb(const char *path, const struct entry *e, size_t n)
{
        struct writer w = { .buf = calloc(1, BUF_MAX) };
        struct tnode *root = tnode_new();
        uint8_t hdr[80] = "KSLPHHRH";
        uint64_t root_off;
        int fd;

        ASSERT_TRUE(w.buf);
        for (size_t i = 0; i < n; i++)
                trie_insert(root, &e[i]);
        put(&w, hdr, sizeof(hdr));
        w.empty_off = put_string(&w, "");
        root_off = emit(&w, root);
        emit_strings(&w, root, root_off);
        put64(&w, 8, 252);
        put64(&w, 16, w.len);
        put64(&w, 24, 80);
        put64(&w, 32, 24);
        put64(&w, 40, 16);
        put64(&w, 48, 32);
        put64(&w, 56, root_off);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(write(fd, w.buf, w.len), (ssize_t)w.len);
        close(fd);
        tnode_free(root);
        free(w.buf);
        return w.len;
}

static char dir[] = "/tmp/test-hwdb-reader.XXXXXX";
static char path[128];

static const struct entry entries[] = {
        { "usb:v1234p5678*", " ID_MODEL", "exact-ish", 1, 10 },
        { "usb:v1234*", " ID_VENDOR", "vendor", 1, 5 },
        { "usb:v1234*", " ID_MODEL", "vendor-model", 1, 6 },
        { "usb:v1234p5678*", " ID_EXTRA", "extra", 1, 11 },
        { "usb:v12?4p*", " ID_Q", "question", 1, 20 },
        { "usb:v[0-9]*", " ID_SET", "set", 1, 21 },
        { "usb:v1234p5678*", "NOSPACE", "ignored", 1, 12 },
        { "dmi:a", " ID_PRIO", "low-prio-late-line", 1, 99 },
        { "dmi:*", " ID_PRIO", "high-prio", 2, 1 },
        { "dmi:a", " ID_LINE", "line-3", 1, 3 },
        { "dmi:?", " ID_LINE", "line-4", 1, 4 },
        { "exact", " ID_EXACT", "yes", 1, 1 },
};

static void lookup_str(struct hwdb *h, const char *key, char *out, size_t size)
{
        struct hwdb_result res = {};
        size_t len = 0;

        ASSERT_EQ(hwdb_lookup(h, key, &res), 0);
        out[0] = '\0';
        for (size_t i = 0; i < res.n; i++)
                len += (size_t)snprintf(out + len, size - len, "%s=%s;", res.items[i].key,
                                        res.items[i].value);
        hwdb_result_done(&res);
}

static void test_lookups(void)
{
        struct hwdb *h = NULL;
        char out[1024];

        write_hwdb(path, entries, ARRAY_SIZE(entries));
        ASSERT_EQ(hwdb_open(path, &h), 0);
        lookup_str(h, "usb:v1234p5678d0001", out, sizeof(out));
        /* trie walk order: at each level the glob children ('*', '?', '[')
         * before the literal path, so shorter patterns come first; a later
         * match replaces a value in place; the higher line of the same
         * priority wins */
        ASSERT_STREQ(out, "ID_SET=set;ID_Q=question;ID_VENDOR=vendor;ID_MODEL=exact-ish;"
                          "ID_EXTRA=extra;");
        lookup_str(h, "usb:v1234", out, sizeof(out));
        ASSERT_STREQ(out, "ID_SET=set;ID_VENDOR=vendor;ID_MODEL=vendor-model;");
        lookup_str(h, "usb:v9", out, sizeof(out));
        ASSERT_STREQ(out, "ID_SET=set;");
        lookup_str(h, "dmi:a", out, sizeof(out));
        ASSERT_STREQ(out, "ID_PRIO=high-prio;ID_LINE=line-4;");
        lookup_str(h, "exact", out, sizeof(out));
        ASSERT_STREQ(out, "ID_EXACT=yes;");
        lookup_str(h, "exac", out, sizeof(out));
        ASSERT_STREQ(out, "");
        lookup_str(h, "exactly", out, sizeof(out));
        ASSERT_STREQ(out, "");
        lookup_str(h, "", out, sizeof(out));
        ASSERT_STREQ(out, "");
        hwdb_close(h);
}

static void test_bad_files(void)
{
        struct hwdb *h = NULL;
        size_t size = write_hwdb(path, entries, ARRAY_SIZE(entries));
        int fd;

        /* truncated: the header's file size no longer matches */
        ASSERT_EQ(truncate(path, (off_t)size - 1), 0);
        ASSERT_EQ(hwdb_open(path, &h), -EINVAL);
        ASSERT_EQ(truncate(path, 10), 0);
        ASSERT_EQ(hwdb_open(path, &h), -EINVAL);
        /* wrong signature */
        write_hwdb(path, entries, ARRAY_SIZE(entries));
        fd = open(path, O_WRONLY | O_CLOEXEC);
        ASSERT_EQ(pwrite(fd, "X", 1, 0), 1);
        close(fd);
        ASSERT_EQ(hwdb_open(path, &h), -EINVAL);
        ASSERT_EQ(hwdb_open("/nonexistent/hwdb.bin", &h), -ENOENT);
}

/* Flip random bytes after the header: lookups may find anything or nothing
 * but must stay inside the mapping (ASan) and terminate. */
static void test_corruption(void)
{
        static const char *const keys[] = { "usb:v1234p5678d0001", "dmi:a", "exact", "usb:v9",
                                            "zzz" };
        unsigned seed = 4242;

        for (int iter = 0; iter < 400; iter++) {
                size_t size = write_hwdb(path, entries, ARRAY_SIZE(entries));
                struct hwdb_result res = {};
                struct hwdb *h = NULL;
                int fd = open(path, O_WRONLY | O_CLOEXEC);

                ASSERT_TRUE(fd >= 0);
                for (int k = 0; k < 1 + iter % 8; k++) {
                        uint8_t b = (uint8_t)rand_r(&seed);
                        off_t off = 80 + (off_t)(rand_r(&seed) % (size - 80));

                        if (iter % 3 == 0) /* big values: offsets far out of range */
                                b = 0xff;
                        ASSERT_EQ(pwrite(fd, &b, 1, off), 1);
                }
                close(fd);
                if (hwdb_open(path, &h) < 0)
                        continue;
                for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
                        (void)hwdb_lookup(h, keys[i], &res);
                hwdb_result_done(&res);
                hwdb_close(h);
        }
}

static void *reader(void *arg)
{
        struct hwdb *h = arg;
        struct hwdb_result res = {};

        for (int i = 0; i < 2000; i++) {
                ASSERT_EQ(hwdb_lookup(h, i % 2 ? "usb:v1234p5678d0001" : "dmi:a", &res), 0);
                ASSERT_TRUE(res.n >= 2);
        }
        hwdb_result_done(&res);
        return NULL;
}

static void test_threads(void)
{
        pthread_t t[4];
        struct hwdb *h = NULL;

        write_hwdb(path, entries, ARRAY_SIZE(entries));
        ASSERT_EQ(hwdb_open(path, &h), 0);
        for (size_t i = 0; i < ARRAY_SIZE(t); i++)
                ASSERT_EQ(thread_start(&t[i], reader, h), 0);
        for (size_t i = 0; i < ARRAY_SIZE(t); i++)
                ASSERT_EQ(pthread_join(t[i], NULL), 0);
        hwdb_close(h);
}

int main(void)
{
        ASSERT_TRUE(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/hwdb.bin", dir);
        TEST_RUN(test_lookups);
        TEST_RUN(test_bad_files);
        TEST_RUN(test_corruption);
        TEST_RUN(test_threads);
        unlink(path);
        rmdir(dir);
        return 0;
}
