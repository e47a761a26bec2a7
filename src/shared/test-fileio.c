/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: test (one thread per check, see test_names_per_thread) */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/fileio.h"
#include "shared/macro.h"
#include "shared/tests.h"
#include "shared/thread-util.h"

static char root[64];

static void make_root(void)
{
        snprintf(root, sizeof(root), "/tmp/test-fileio.XXXXXX");
        ASSERT_TRUE(mkdtemp(root) != NULL);
}

static void remove_root(void)
{
        char cmd[PATH_MAX + 16];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
        ASSERT_EQ(system(cmd), 0);
}

static int is_dir(const char *path)
{
        struct stat st;

        return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static void test_mkdir_p(void)
{
        char p[PATH_MAX], q[PATH_MAX];

        make_root();
        /* a deep chain from nothing, with doubled and trailing slashes */
        snprintf(p, sizeof(p), "%s/a//b/c/d/", root);
        ASSERT_EQ(mkdir_p(p, 0755), 0);
        snprintf(q, sizeof(q), "%s/a/b/c/d", root);
        ASSERT_TRUE(is_dir(q));
        /* existing: still 0 */
        ASSERT_EQ(mkdir_p(q, 0755), 0);
        /* a sibling branch below an existing part */
        snprintf(p, sizeof(p), "%s/a/b/x/y", root);
        ASSERT_EQ(mkdir_p(p, 0755), 0);
        ASSERT_TRUE(is_dir(p));
        /* a file in the way, at the leaf and in the middle */
        snprintf(p, sizeof(p), "%s/file", root);
        ASSERT_EQ(close(open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)), 0);
        ASSERT_EQ(mkdir_p(p, 0755), -ENOTDIR);
        snprintf(q, sizeof(q), "%s/file/sub/dir", root);
        ASSERT_EQ(mkdir_p(q, 0755), -ENOTDIR);
        /* parents only */
        snprintf(p, sizeof(p), "%s/m/n/leaf", root);
        ASSERT_EQ(mkdir_parents(p, 0755), 0);
        snprintf(q, sizeof(q), "%s/m/n", root);
        ASSERT_TRUE(is_dir(q));
        ASSERT_TRUE(!is_dir(p));
        ASSERT_EQ(mkdir_p("/", 0755), 0);
        ASSERT_EQ(mkdir_p("", 0755), -EINVAL);
        remove_root();
}

static void test_touch_and_write_create_parents(void)
{
        char p[PATH_MAX];
        struct stat st;

        make_root();
        snprintf(p, sizeof(p), "%s/tags/systemd/b7:0", root);
        ASSERT_EQ(touch_file(p, 0444), 0);
        ASSERT_EQ(stat(p, &st), 0);
        ASSERT_EQ(st.st_mode & 07777, 0444);
        ASSERT_EQ(touch_file(p, 0444), 0); /* again: exists */
        snprintf(p, sizeof(p), "%s/nodir/data", root);
        ASSERT_EQ(write_file_atomic(p, "x", 1, 0644), -ENOENT); /* no parents made here */
        remove_root();
}

/* The mode of an atomic write is exact whatever the umask: with the umask
 * known (fileio_set_umask) and unable to narrow the mode, the temp file is
 * created with it; otherwise fchmod widens it. */
static void test_write_atomic_modes(void)
{
        static const struct {
                mode_t mask;
                mode_t mode;
        } cases[] = {
                { 022, 0644 }, { 022, 0666 }, { 077, 0644 }, { 022, 0600 },
                { 0, 0666 }, { 0277, 0644 },
        };
        char p[PATH_MAX];
        struct stat st;

        make_root();
        snprintf(p, sizeof(p), "%s/data", root);
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                fileio_set_umask(cases[i].mask);
                ASSERT_EQ(write_file_atomic(p, "abc", 3, cases[i].mode), 0);
                ASSERT_EQ(stat(p, &st), 0);
                ASSERT_EQ(st.st_mode & 07777, cases[i].mode);
                ASSERT_EQ(st.st_size, 3);
        }
        fileio_set_umask(022);
        remove_root();
}

/* An empty file in one step: exact mode, -EEXIST over anything there. */
static void test_create_empty_file(void)
{
        char p[PATH_MAX];
        struct stat st;

        make_root();
        snprintf(p, sizeof(p), "%s/empty", root);
        for (mode_t mask = 0; mask <= 077; mask += 077) {
                fileio_set_umask(mask);
                ASSERT_EQ(create_empty_file(p, 0644), 0);
                ASSERT_EQ(stat(p, &st), 0);
                ASSERT_TRUE(S_ISREG(st.st_mode));
                ASSERT_EQ(st.st_mode & 07777, 0644);
                ASSERT_EQ(st.st_size, 0);
                ASSERT_EQ(create_empty_file(p, 0644), -EEXIST);
                ASSERT_EQ(unlink(p), 0);
        }
        fileio_set_umask(022);
        snprintf(p, sizeof(p), "%s/nodir/empty", root);
        ASSERT_EQ(create_empty_file(p, 0644), -ENOENT);
        remove_root();
}

#define NAMES_PER_THREAD 20000
static uint64_t names[2][NAMES_PER_THREAD];

static void *draw_names(void *arg)
{
        uint64_t *out = arg;

        for (size_t i = 0; i < NAMES_PER_THREAD; i++)
                out[i] = random_name_u64();
        return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

        return x < y ? -1 : x > y;
}

/* Two threads draw names: no repeats within or across them (each thread
 * seeds its own generator). */
static void test_read_uint64_file(void)
{
        static const struct {
                const char *content;
                int r;
                uint64_t v;
        } cases[] = {
                { "0", 0, 0 },
                { "12345\n", 0, 12345 },
                { "18446744073709551615\n", 0, UINT64_MAX },
                { "18446744073709551616\n", -ERANGE, 0 },
                { "", -EINVAL, 0 },
                { "\n", -EINVAL, 0 },
                { "-1\n", -EINVAL, 0 },
                { " 7\n", -EINVAL, 0 },
                { "7 \n", -EINVAL, 0 },
                { "7\n\n", -EINVAL, 0 },
                { "7x", -EINVAL, 0 },
                { "00000000000000000000000000000001", -EINVAL, 0 }, /* 32 bytes */
        };
        char path[PATH_MAX];
        uint64_t v;

        make_root();
        snprintf(path, sizeof(path), "%s/n", root);
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                ASSERT_EQ(write_file_atomic(path, cases[i].content, strlen(cases[i].content),
                                            0644), 0);
                v = 42;
                ASSERT_EQ(read_uint64_file(path, &v), cases[i].r);
                ASSERT_EQ(v, cases[i].r == 0 ? cases[i].v : 42);
        }
        snprintf(path, sizeof(path), "%s/missing", root);
        ASSERT_EQ(read_uint64_file(path, &v), -ENOENT);
        remove_root();
}

static void test_names_per_thread(void)
{
        pthread_t t[2];
        uint64_t *all = malloc(sizeof(names));

        for (int i = 0; i < 2; i++)
                ASSERT_EQ(thread_start(&t[i], draw_names, names[i]), 0);
        for (int i = 0; i < 2; i++)
                ASSERT_EQ(pthread_join(t[i], NULL), 0);
        ASSERT_TRUE(all != NULL);
        memcpy(all, names, sizeof(names));
        qsort(all, 2 * NAMES_PER_THREAD, sizeof(uint64_t), cmp_u64);
        for (size_t i = 1; i < 2 * NAMES_PER_THREAD; i++)
                ASSERT_TRUE(all[i] != all[i - 1]);
        free(all);
}

int main(void)
{
        TEST_RUN(test_mkdir_p);
        TEST_RUN(test_touch_and_write_create_parents);
        TEST_RUN(test_write_atomic_modes);
        TEST_RUN(test_create_empty_file);
        TEST_RUN(test_names_per_thread);
        TEST_RUN(test_read_uint64_file);
        return 0;
}
