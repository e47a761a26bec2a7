/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (single-threaded test) */
/* Unit tests of the path helpers udevadm's verbs share (wait, lock):
 * systemd's path_simplify() and path_is_safe() rules. udevadm's objects are
 * not in a library, so the module is compiled in here. */

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared/log.h"
#include "shared/tests.h"
#include "udevadm/udevadm-util.c"

static void check_simplify(const char *in, const char *want)
{
        char *s = strdup(in);

        ASSERT_TRUE(s);
        ASSERT_STREQ(udevadm_path_simplify(s), want);
        free(s);
}

static void test_simplify(void)
{
        check_simplify("/", "/");
        check_simplify("//", "/");
        check_simplify("/sys/class/net/lo", "/sys/class/net/lo");
        check_simplify("/sys//class/./net/lo/", "/sys/class/net/lo");
        check_simplify("///dev/./null//", "/dev/null");
        check_simplify("/./", "/");
        check_simplify("/sys/../dev", "/sys/../dev"); /* ".." kept */
        check_simplify(".", ".");
        check_simplify("./", ".");
        check_simplify("./a/./b/", "a/b");
        check_simplify("a//b", "a/b");
        check_simplify("..//a", "../a");
        check_simplify("/.hidden/.x.", "/.hidden/.x.");
}

static void test_is_safe(void)
{
        char long_name[NAME_MAX + 3], long_path[PATH_MAX + 1];

        ASSERT_TRUE(udevadm_path_is_safe("/dev/sda"));
        ASSERT_TRUE(udevadm_path_is_safe("/"));
        ASSERT_TRUE(udevadm_path_is_safe("a/..b/c.."));
        ASSERT_TRUE(udevadm_path_is_safe("/..."));
        ASSERT_TRUE(!udevadm_path_is_safe(""));
        ASSERT_TRUE(!udevadm_path_is_safe(".."));
        ASSERT_TRUE(!udevadm_path_is_safe("/sys/../dev"));
        ASSERT_TRUE(!udevadm_path_is_safe("/sys/.."));
        ASSERT_TRUE(!udevadm_path_is_safe("../sys"));

        long_name[0] = '/';
        memset(long_name + 1, 'x', NAME_MAX);
        long_name[NAME_MAX + 1] = '\0';
        ASSERT_TRUE(udevadm_path_is_safe(long_name));
        long_name[NAME_MAX + 1] = 'x';
        long_name[NAME_MAX + 2] = '\0';
        ASSERT_TRUE(!udevadm_path_is_safe(long_name));

        for (size_t i = 0; i < PATH_MAX; i++)
                long_path[i] = i % 100 == 0 ? '/' : 'y';
        long_path[PATH_MAX] = '\0';
        ASSERT_TRUE(!udevadm_path_is_safe(long_path));
        long_path[PATH_MAX - 1] = '\0';
        ASSERT_TRUE(udevadm_path_is_safe(long_path));
}

static void test_absolute(void)
{
        char cwd[PATH_MAX], want[PATH_MAX + 16];
        char *p = NULL;

        ASSERT_EQ(udevadm_path_absolute("/dev//sda1/", &p), 0);
        ASSERT_STREQ(p, "/dev/sda1");
        free(p);

        ASSERT_TRUE(getcwd(cwd, sizeof(cwd)));
        ASSERT_EQ(udevadm_path_absolute("./x//y", &p), 0);
        snprintf(want, sizeof(want), "%s/x/y", streq(cwd, "/") ? "" : cwd);
        ASSERT_STREQ(p, want);
        free(p);

        ASSERT_EQ(chdir("/"), 0);
        ASSERT_EQ(udevadm_path_absolute("dev/loop0", &p), 0);
        ASSERT_STREQ(p, "/dev/loop0");
        free(p);
        ASSERT_EQ(udevadm_path_absolute(".", &p), 0);
        ASSERT_STREQ(p, "/");
        free(p);
        ASSERT_EQ(chdir(cwd), 0);
}

int main(void)
{
        log_set_max_level(LOG_WARNING);
        TEST_RUN(test_simplify);
        TEST_RUN(test_is_safe);
        TEST_RUN(test_absolute);
        return 0;
}
