/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: single-threaded test */
/* hwdb-compile.c over small hwdb.d trees built in a temporary root, the
 * result read back with hwdb-reader.c: property order as sd-hwdb returns it,
 * precedence of later files and later lines, masking by file name across the
 * directories, the line syntax (comments, records of several match lines,
 * line ends, malformed lines that are reported and skipped while the rest is
 * compiled), strings sharing their bytes, random sources checked against a
 * model of the lookup semantics, the output file itself (mode, atomic
 * replacement, removal when there is no source). The comparison with
 * systemd-hwdb over Debian's hwdb.d is tests/integration/test_hwdb_compile.py. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "builtins/hwdb-compile.h"
#include "builtins/hwdb-reader.h"
#include "shared/fileio.h"
#include "shared/macro.h"
#include "shared/tests.h"

#define OUT_MAX 4096

static char root[256];
static char output[PATH_MAX];

static void write_source(const char *rel, const char *text, size_t len)
{
        char path[PATH_MAX];
        int fd;

        snprintf(path, sizeof(path), "%s%s", root, rel);
        ASSERT_EQ(mkdir_parents(path, 0755), 0);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(write(fd, text, len), (ssize_t)len);
        close(fd);
}

static void put(const char *rel, const char *text)
{
        write_source(rel, text, strlen(text));
}

static void rm_rf(const char *path)
{
        struct stat st;

        if (lstat(path, &st) < 0)
                return;
        if (S_ISDIR(st.st_mode)) {
                DIR *d = opendir(path);
                struct dirent *de;

                ASSERT_TRUE(d);
                while ((de = readdir(d))) {
                        char sub[PATH_MAX];

                        if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                                continue;
                        snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
                        rm_rf(sub);
                }
                closedir(d);
                ASSERT_EQ(rmdir(path), 0);
        } else
                ASSERT_EQ(unlink(path), 0);
}

/* Empty the root between tests. */
static void reset(void)
{
        rm_rf(root);
        ASSERT_EQ(mkdir(root, 0755), 0);
}

static struct hwdb_compile_stats compile(void)
{
        struct hwdb_compile_options o = { .root = root, .output = output };
        struct hwdb_compile_stats st;

        ASSERT_EQ(hwdb_compile(&o, &st), 0);
        return st;
}

/* "K=V\n" lines of a lookup, in the reader's order. */
static const char *lookup(const char *modalias)
{
        static char out[OUT_MAX];
        struct hwdb *h = NULL;
        struct hwdb_result res = {};
        size_t n = 0;

        ASSERT_EQ(hwdb_open(output, &h), 0);
        ASSERT_EQ(hwdb_lookup(h, modalias, &res), 0);
        out[0] = '\0';
        for (size_t i = 0; i < res.n; i++) {
                int w = snprintf(out + n, sizeof(out) - n, "%s=%s\n", res.items[i].key,
                                 res.items[i].value);

                ASSERT_TRUE(w > 0 && (size_t)w < sizeof(out) - n);
                n += (size_t)w;
        }
        hwdb_result_done(&res);
        hwdb_close(h);
        return out;
}

static void test_lookup_order(void)
{
        reset();
        put("/lib/udev/hwdb.d/50-a.hwdb",
            "x:abc\n"
            " A=exact\n"
            " M=exact-m\n"
            "\n"
            "x:*\n"
            " Z=glob\n"
            " B=glob-b\n"
            "\n"
            "x:a?c\n"
            " Q=question\n"
            "\n"
            "x:[ab]bc\n"
            " R=bracket\n"
            "\n"
            "y:*\n"
            " NEVER=1\n");
        ASSERT_EQ(compile().errors, 0);
        /* sd-hwdb order: the glob children of a node ('*', '?', '[') are
         * matched before the walk goes on, each node's values sorted by key,
         * the exact node last */
        ASSERT_STREQ(lookup("x:abc"), "B=glob-b\nZ=glob\nR=bracket\nQ=question\n"
                                      "A=exact\nM=exact-m\n");
        ASSERT_STREQ(lookup("x:zzz"), "B=glob-b\nZ=glob\n");
        ASSERT_STREQ(lookup("x:bbc"), "B=glob-b\nZ=glob\nR=bracket\n");
        ASSERT_STREQ(lookup("x"), "");
        ASSERT_STREQ(lookup("z:abc"), "");
}

static void test_precedence(void)
{
        reset();
        /* a key matched by patterns of two files: the later file (by name)
         * wins, whatever the patterns and wherever the files are */
        put("/lib/udev/hwdb.d/10-a.hwdb", "k:x*\n K=10-a\n L=10-a\n\nsame:*\n S=10-a\n T=10-a\n");
        put("/etc/udev/hwdb.d/20-b.hwdb", "k:*\n K=20-b\n\nsame:*\n S=20-b\n");
        put("/lib/udev/hwdb.d/30-c.hwdb", "k:xy\n L=30-c\n");
        /* within a file the later line wins */
        put("/lib/udev/hwdb.d/40-d.hwdb",
            "line:*\n P=first\n\nline:a*\n P=second\n\nline:ab\n O=first\n\nline:*\n O=second\n"
            "\nrep:*\n V=one\n V=two\n");
        ASSERT_EQ(compile().errors, 0);
        ASSERT_STREQ(lookup("k:xy"), "K=20-b\nL=30-c\n");
        ASSERT_STREQ(lookup("k:xz"), "K=20-b\nL=10-a\n");
        /* the same pattern in two files: the later file's value replaces it */
        ASSERT_STREQ(lookup("same:1"), "S=20-b\nT=10-a\n");
        ASSERT_STREQ(lookup("line:ab"), "O=second\nP=second\n");
        ASSERT_STREQ(lookup("rep:1"), "V=two\n");
}

static void test_masking(void)
{
        char path[PATH_MAX];

        reset();
        put("/lib/udev/hwdb.d/20-over.hwdb", "o:*\n FROM=lib\n");
        put("/usr/lib/udev/hwdb.d/20-over.hwdb", "o:*\n FROM=usr\n");
        put("/etc/udev/hwdb.d/20-over.hwdb", "o:*\n FROM=etc\n");
        put("/lib/udev/hwdb.d/30-null.hwdb", "n:*\n FROM=lib\n");
        snprintf(path, sizeof(path), "%s/etc/udev/hwdb.d/30-null.hwdb", root);
        ASSERT_EQ(symlink("/dev/null", path), 0);
        put("/lib/udev/hwdb.d/40-empty.hwdb", "e:*\n FROM=lib\n");
        put("/run/udev/hwdb.d/40-empty.hwdb", "");
        put("/usr/local/lib/udev/hwdb.d/50-local.hwdb", "l:*\n FROM=local\n");
        put("/lib/udev/hwdb.d/50-local.hwdb", "l:*\n FROM=lib\n");
        /* names decide the order, not directories: 05-early.hwdb in /etc is
         * read before 60-late.hwdb in /lib, so the latter wins */
        put("/etc/udev/hwdb.d/05-early.hwdb", "p:*\n WHO=etc-05\n");
        put("/lib/udev/hwdb.d/60-late.hwdb", "p:*\n WHO=lib-60\n");
        /* not sources */
        put("/lib/udev/hwdb.d/70-x.hwdb.bak", "i:*\n BAD=1\n");
        put("/lib/udev/hwdb.d/.70-hidden.hwdb", "i:*\n BAD=1\n");
        put("/lib/udev/hwdb.d/80-dir.hwdb/inner.hwdb", "i:*\n BAD=1\n");
        /* a link inside the root, absolute: resolved under the root */
        put("/srv/target.hwdb", "t:*\n LINKED=1\n");
        snprintf(path, sizeof(path), "%s/etc/udev/hwdb.d/90-link.hwdb", root);
        ASSERT_EQ(symlink("/srv/target.hwdb", path), 0);

        struct hwdb_compile_stats st = compile();
        ASSERT_EQ(st.errors, 0);
        ASSERT_EQ(st.files, 5); /* 05-early 20-over 50-local 60-late 90-link */
        ASSERT_STREQ(lookup("o:1"), "FROM=etc\n");
        ASSERT_STREQ(lookup("n:1"), "");
        ASSERT_STREQ(lookup("e:1"), "");
        ASSERT_STREQ(lookup("l:1"), "FROM=local\n");
        ASSERT_STREQ(lookup("p:1"), "WHO=lib-60\n");
        ASSERT_STREQ(lookup("i:1"), "");
        ASSERT_STREQ(lookup("t:1"), "LINKED=1\n");
}

static void test_syntax(void)
{
        static const char text[] =
                "# a comment\n"
                "multi:a*\n"                /* several match lines: one record */
                "multi:b*\n"
                "# a comment between the patterns and the properties\n"
                " ONE=1 # a trailing comment\n"
                "  TWO =  2 \t\n"           /* blanks: one leading kept, trailing cut */
                " EQ=a=b\n"
                " EMPTY=\n"
                "\n"
                "crlf:*\r\n CR=1\r\n\r\n"
                "cr:*\r CR=2\r\r"
                "nul:*\n N=1\0 N2=2\n\n"
                "\n\n"
                "next:*\n"
                " OK=1\n"
                "   \t \n"                 /* blanks only: ends the record */
                " STRAY=1\n"               /* error: property outside a record */
                "after:*\n"
                " NOEQ\n"                  /* error: no '=' */
                " =value\n"                /* error: empty name */
                " GOOD=1\n"
                "late:*\n"                 /* error: pattern after properties */
                " LOST=1\n"                /* error: outside a record */
                "\n"
                "noprops:*\n"
                "\n"                       /* error: record without properties */
                "tab:*\n"
                "\tTAB=1\n"                /* a tab is no property indent: a pattern */
                " T=1\n"
                "\n"
                "end:*\n";                 /* error: record without properties */
        struct hwdb_compile_stats st;

        reset();
        write_source("/lib/udev/hwdb.d/10-syntax.hwdb", text, sizeof(text) - 1);
        st = compile();
        ASSERT_EQ(st.errors, 7);
        ASSERT_EQ(st.files, 1);
        ASSERT_STREQ(lookup("multi:a1"), "EMPTY=\nEQ=a=b\nONE=1\nTWO =  2\n");
        ASSERT_STREQ(lookup("multi:b1"), "EMPTY=\nEQ=a=b\nONE=1\nTWO =  2\n");
        ASSERT_STREQ(lookup("crlf:1"), "CR=1\n");
        ASSERT_STREQ(lookup("cr:1"), "CR=2\n");
        ASSERT_STREQ(lookup("nul:1"), "N=1\nN2=2\n");
        ASSERT_STREQ(lookup("next:1"), "OK=1\n");
        ASSERT_STREQ(lookup("after:1"), "GOOD=1\n");
        ASSERT_STREQ(lookup("late:1"), "");
        ASSERT_STREQ(lookup("noprops:1"), "");
        ASSERT_STREQ(lookup("tab:1"), "T=1\n");
        ASSERT_STREQ(lookup("\tTAB=1"), "T=1\n");
}

static void test_long_line(void)
{
        size_t n = HWDB_SOURCE_LINE_MAX + 10;
        char *text = malloc(n + 64);
        size_t len;

        ASSERT_TRUE(text);
        reset();
        len = (size_t)sprintf(text, "long:*\n BIG=");
        memset(text + len, 'v', n);
        len += n;
        len += (size_t)sprintf(text + len, "\n SMALL=1\n\nok:*\n OK=1\n");
        write_source("/lib/udev/hwdb.d/10-long.hwdb", text, len);
        free(text);
        ASSERT_EQ(compile().errors, 2); /* the long line, then SMALL outside a record */
        ASSERT_STREQ(lookup("long:1"), "");
        ASSERT_STREQ(lookup("ok:1"), "OK=1\n");
}

/* Keys and values that are tails of each other, many patterns sharing
 * prefixes (node splits at every level). */
static void test_shared_strings(void)
{
        char text[64 * 1024], want[64];
        size_t len = 0;

        reset();
        len += (size_t)snprintf(text + len, sizeof(text) - len,
                                "s:*\n ID_MODEL=foo\n MODEL=xfoo\n L=\n\n");
        for (int i = 0; i < 300; i++)
                len += (size_t)snprintf(text + len, sizeof(text) - len,
                                        "deep:%.*s\n V=%d\n\n", i % 40 + 1,
                                        "abcdefghijklmnopqrstuvwxyzabcdefghijklmnop", i);
        write_source("/lib/udev/hwdb.d/10-s.hwdb", text, len);
        ASSERT_EQ(compile().errors, 0);
        ASSERT_STREQ(lookup("s:1"), "ID_MODEL=foo\nL=\nMODEL=xfoo\n");
        /* deep:a...(k chars) is written for i = k-1, k+39, ...; the last wins */
        for (int k = 1; k <= 40; k++) {
                int last = k - 1;

                while (last + 40 < 300)
                        last += 40;
                snprintf(want, sizeof(want), "V=%d\n", last);
                snprintf(text, sizeof(text), "deep:%.*s", k,
                         "abcdefghijklmnopqrstuvwxyzabcdefghijklmnop");
                ASSERT_STREQ(lookup(text), want);
        }
}

static void test_output_file(void)
{
        struct hwdb_compile_options o = { .root = root, .output = output };
        struct hwdb_compile_stats st;
        struct stat s1, s2;
        char dir[PATH_MAX];
        DIR *d;
        struct dirent *de;
        int entries = 0;

        reset();
        put("/lib/udev/hwdb.d/10-a.hwdb", "a:*\n A=1\n");
        st = compile();
        ASSERT_EQ(st.files, 1);
        ASSERT_EQ(stat(output, &s1), 0);
        ASSERT_EQ(s1.st_mode & 07777, 0444);
        ASSERT_EQ((size_t)s1.st_size, st.size);
        /* replaced by rename: a new inode, no temporary file left */
        put("/lib/udev/hwdb.d/10-a.hwdb", "a:*\n A=2\n");
        compile();
        ASSERT_EQ(stat(output, &s2), 0);
        ASSERT_TRUE(s1.st_ino != s2.st_ino);
        ASSERT_STREQ(lookup("a:1"), "A=2\n");
        snprintf(dir, sizeof(dir), "%s/etc/udev", root);
        d = opendir(dir);
        ASSERT_TRUE(d);
        while ((de = readdir(d)))
                if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
                        entries++;
        closedir(d);
        ASSERT_EQ(entries, 1);

        /* no source left: the output is removed */
        reset();
        put("/etc/udev/hwdb.bin", "old");
        ASSERT_EQ(hwdb_compile(&o, &st), 1);
        ASSERT_EQ(access(output, F_OK), -1);
        ASSERT_EQ(hwdb_compile(&o, &st), 1);
        /* only masks: nothing to compile either */
        put("/lib/udev/hwdb.d/10-a.hwdb", "");
        ASSERT_EQ(hwdb_compile(&o, &st), 1);

        /* bad options */
        o.output = "relative/hwdb.bin";
        ASSERT_EQ(hwdb_compile(&o, &st), -EINVAL);
        o.output = output;
        o.root = "relative";
        ASSERT_EQ(hwdb_compile(&o, &st), -EINVAL);
}

/* Entries that cannot be read are reported, counted and skipped. */
static void test_bad_entries(void)
{
        char path[PATH_MAX];
        struct hwdb_compile_stats st;

        reset();
        put("/lib/udev/hwdb.d/10-a.hwdb", "a:*\n A=1\n");
        snprintf(path, sizeof(path), "%s/lib/udev/hwdb.d/20-loop.hwdb", root);
        ASSERT_EQ(symlink("20-loop.hwdb", path), 0);
        snprintf(path, sizeof(path), "%s/lib/udev/hwdb.d/30-dangling.hwdb", root);
        ASSERT_EQ(symlink("nothing-here", path), 0);
        put("/lib/udev/hwdb.d/40-b.hwdb", "b:*\n B=1\n");
        st = compile();
        ASSERT_EQ(st.errors, 1); /* the loop; a dangling link is only ignored */
        ASSERT_EQ(st.files, 2);
        ASSERT_STREQ(lookup("a:1"), "A=1\n");
        ASSERT_STREQ(lookup("b:1"), "B=1\n");
}

/* ---- random sources against a reference model ----
 *
 * The lookup semantics written out: a modalias gets every key of every
 * record with a pattern that fnmatch()es it; for a key set several times the
 * entry of the later file, then the later line, wins. Random patterns over a
 * small alphabet (literals, '*', '?', bracket sets) make the trie split at
 * every depth; the compiled file, read with hwdb-reader.c, must give exactly
 * the model's properties. */

#define R_FILES 3
#define R_RECORDS 60
#define R_ENTRIES (R_FILES * R_RECORDS * 9)
#define R_TEXT_MAX (64 * 1024)

struct r_entry {
        char pattern[40];
        char key[8];
        char value[24];
        int priority, line;
};

static uint64_t r_state;

static unsigned r_next(unsigned n)
{
        r_state ^= r_state << 13;
        r_state ^= r_state >> 7;
        r_state ^= r_state << 17;
        return (unsigned)(r_state % n);
}

static void r_pattern(char *buf, size_t size)
{
        static const char *const tokens[] = { "a", "b", "a", "b", "c", "*", "?", "[ab]",
                                              "[!a]", "ab" };
        unsigned n = 1 + r_next(6);
        size_t len = (size_t)snprintf(buf, size, "p:");

        for (unsigned i = 0; i < n; i++)
                len += (size_t)snprintf(buf + len, size - len, "%s",
                                        tokens[r_next(ARRAY_SIZE(tokens))]);
}

static void r_string(char *buf, size_t size)
{
        unsigned n = r_next(7);
        size_t len = (size_t)snprintf(buf, size, "p:");

        for (unsigned i = 0; i < n && len + 1 < size; i++)
                buf[len++] = "abcx"[r_next(4)];
        buf[len] = '\0';
}

/* Properties of `s` according to the model, as sorted "K=V\n" lines. */
static void r_expect(const struct r_entry *e, size_t n, const char *s, char *out, size_t size)
{
        const struct r_entry *best[10] = {};
        size_t len = 0;

        for (size_t i = 0; i < n; i++) {
                int k = e[i].key[1] - '0';

                if (fnmatch(e[i].pattern, s, 0) != 0)
                        continue;
                if (!best[k] || e[i].priority > best[k]->priority ||
                    (e[i].priority == best[k]->priority && e[i].line > best[k]->line))
                        best[k] = &e[i];
        }
        out[0] = '\0';
        for (int k = 0; k < 10; k++)
                if (best[k])
                        len += (size_t)snprintf(out + len, size - len, "%s=%s\n", best[k]->key,
                                                best[k]->value);
}

/* The reader's lines sorted (keys are K0..K9: sorting the lines sorts keys). */
static void sort_lines(const char *in, char *out, size_t size)
{
        char lines[10][40];
        int n = 0;
        size_t len = 0;

        for (const char *p = in; *p; n++) {
                const char *nl = strchr(p, '\n');

                ASSERT_TRUE(nl && n < 10 && (size_t)(nl - p) < sizeof(lines[0]));
                snprintf(lines[n], sizeof(lines[n]), "%.*s", (int)(nl - p), p);
                p = nl + 1;
        }
        for (int i = 1; i < n; i++)
                for (int j = i; j > 0 && strcmp(lines[j - 1], lines[j]) > 0; j--) {
                        char t[40];

                        memcpy(t, lines[j], sizeof(t));
                        memcpy(lines[j], lines[j - 1], sizeof(t));
                        memcpy(lines[j - 1], t, sizeof(t));
                }
        out[0] = '\0';
        for (int i = 0; i < n; i++)
                len += (size_t)snprintf(out + len, size - len, "%s\n", lines[i]);
}

static void test_random_against_model(void)
{
        static const char *const files[R_FILES] = {
                "/lib/udev/hwdb.d/10-r.hwdb", "/etc/udev/hwdb.d/20-r.hwdb",
                "/usr/lib/udev/hwdb.d/30-r.hwdb",
        };
        struct r_entry *e = calloc(R_ENTRIES, sizeof(*e));
        char *text = malloc(R_TEXT_MAX);
        char want[512], got[512], s[32];
        unsigned checked = 0, nonempty = 0;

        ASSERT_TRUE(e && text);
        for (uint64_t seed = 1; seed <= 25; seed++) {
                size_t n = 0;

                r_state = seed * 0x9E3779B97F4A7C15ULL;
                reset();
                for (int f = 0; f < R_FILES; f++) {
                        size_t len = 0;
                        int line = 0;

                        for (int r = 0; r < R_RECORDS; r++) {
                                char patterns[3][40];
                                unsigned np = 1 + r_next(3), nk = 1 + r_next(3);

                                for (unsigned i = 0; i < np; i++) {
                                        r_pattern(patterns[i], sizeof(patterns[i]));
                                        len += (size_t)snprintf(text + len, R_TEXT_MAX - len,
                                                                "%s\n", patterns[i]);
                                        line++;
                                }
                                for (unsigned k = 0; k < nk; k++) {
                                        unsigned key = r_next(10);

                                        line++;
                                        len += (size_t)snprintf(text + len, R_TEXT_MAX - len,
                                                                " K%u=f%d-l%d\n", key, f, line);
                                        for (unsigned i = 0; i < np; i++) {
                                                ASSERT_TRUE(n < R_ENTRIES);
                                                memcpy(e[n].pattern, patterns[i],
                                                       sizeof(e[n].pattern));
                                                snprintf(e[n].key, sizeof(e[n].key), "K%u", key);
                                                snprintf(e[n].value, sizeof(e[n].value),
                                                         "f%d-l%d", f, line);
                                                e[n].priority = f;
                                                e[n].line = line;
                                                n++;
                                        }
                                }
                                len += (size_t)snprintf(text + len, R_TEXT_MAX - len, "\n");
                                line++;
                                ASSERT_TRUE(len < R_TEXT_MAX - 256);
                        }
                        write_source(files[f], text, len);
                }
                ASSERT_EQ(compile().errors, 0);
                for (int i = 0; i < 200; i++) {
                        r_string(s, sizeof(s));
                        r_expect(e, n, s, want, sizeof(want));
                        sort_lines(lookup(s), got, sizeof(got));
                        ASSERT_STREQ(got, want);
                        checked++;
                        nonempty += want[0] != '\0';
                }
        }
        /* the model is not trivially empty */
        ASSERT_TRUE(nonempty > checked / 2);
        free(text);
        free(e);
}

/* Explicit directory list (o.dirs): only those are read, in that order. */
static void test_dirs_option(void)
{
        const char *dirs[] = { "/one", "/two", NULL };
        struct hwdb_compile_options o = { .root = root, .dirs = dirs, .output = output };
        struct hwdb_compile_stats st;

        reset();
        put("/one/10-a.hwdb", "d:*\n D=one\n");
        put("/two/10-a.hwdb", "d:*\n D=two\n");
        put("/two/20-b.hwdb", "d:*\n E=two\n");
        put("/lib/udev/hwdb.d/30-c.hwdb", "d:*\n F=lib\n");
        ASSERT_EQ(hwdb_compile(&o, &st), 0);
        ASSERT_EQ(st.files, 2);
        ASSERT_STREQ(lookup("d:1"), "D=one\nE=two\n");
}

int main(void)
{
        snprintf(root, sizeof(root), "/tmp/test-hwdb-compile.XXXXXX");
        ASSERT_TRUE(mkdtemp(root));
        snprintf(output, sizeof(output), "%s/etc/udev/hwdb.bin", root);
        TEST_RUN(test_lookup_order);
        TEST_RUN(test_precedence);
        TEST_RUN(test_masking);
        TEST_RUN(test_syntax);
        TEST_RUN(test_long_line);
        TEST_RUN(test_shared_strings);
        TEST_RUN(test_output_file);
        TEST_RUN(test_random_against_model);
        TEST_RUN(test_bad_entries);
        TEST_RUN(test_dirs_option);
        rm_rf(root);
        return 0;
}
