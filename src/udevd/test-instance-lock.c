/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: test (single-threaded; forks and spawns helper processes) */
/* The single-instance lock in a temporary directory: the pure helpers, a
 * second taker refused while the first holds it, the lock gone with a
 * killed holder, a live socket refused and a stale one accepted, and an
 * exec'd child that does not keep the lock. */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shared/log.h"
#include "shared/macro.h"
#include "shared/tests.h"
#include "udevd/instance-lock.h"

extern char **environ;

static char dir[64], lock_path[128], control_path[128];

static void setup(void)
{
        snprintf(dir, sizeof(dir), "/tmp/tudev-lock-XXXXXX");
        ASSERT_TRUE(mkdtemp(dir) != NULL);
        snprintf(lock_path, sizeof(lock_path), "%s/%s", dir, INSTANCE_LOCK_NAME);
        snprintf(control_path, sizeof(control_path), "%s/control", dir);
}

static void teardown(void)
{
        (void)unlink(control_path);
        ASSERT_EQ(unlink(lock_path), 0);
        ASSERT_EQ(rmdir(dir), 0);
}

static pid_t lock_file_pid(void)
{
        char buf[32] = "";
        pid_t pid = 0;
        int fd = open(lock_path, O_RDONLY | O_CLOEXEC);
        ssize_t n;

        ASSERT_TRUE(fd >= 0);
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        ASSERT_TRUE(n > 0);
        ASSERT_EQ(instance_lock_parse_pid(buf, (size_t)n, &pid), 0);
        return pid;
}

static void test_probe_classification(void)
{
        ASSERT_EQ(ctrl_probe_from_errno(0), CTRL_PROBE_ANSWERS);
        ASSERT_EQ(ctrl_probe_from_errno(EAGAIN), CTRL_PROBE_ANSWERS);
        ASSERT_EQ(ctrl_probe_from_errno(ENOENT), CTRL_PROBE_NOBODY);
        ASSERT_EQ(ctrl_probe_from_errno(ECONNREFUSED), CTRL_PROBE_NOBODY);
        ASSERT_EQ(ctrl_probe_from_errno(EACCES), CTRL_PROBE_UNKNOWN);
        ASSERT_EQ(ctrl_probe_from_errno(ENOTDIR), CTRL_PROBE_UNKNOWN);
}

static void test_parse_pid(void)
{
        static const char *bad[] = { "", "\n", "0", "0\n", "-1", "12a", " 12", "12 \n",
                                     "1\n\n", "99999999999", "2147483648" };
        pid_t pid = 0;

        ASSERT_EQ(instance_lock_parse_pid("123\n", 4, &pid), 0);
        ASSERT_EQ(pid, 123);
        ASSERT_EQ(instance_lock_parse_pid("4567", 4, &pid), 0);
        ASSERT_EQ(pid, 4567);
        ASSERT_EQ(instance_lock_parse_pid("2147483647", 10, &pid), 0);
        ASSERT_EQ(pid, 2147483647);
        /* only `len` bytes count */
        ASSERT_EQ(instance_lock_parse_pid("89\nxyz", 3, &pid), 0);
        ASSERT_EQ(pid, 89);
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
                ASSERT_EQ(instance_lock_parse_pid(bad[i], strlen(bad[i]), &pid), -EINVAL);
}

static void test_format_refusal(void)
{
        char buf[256];

        instance_lock_format_refusal(buf, sizeof(buf), 42, true, "/run/udev/control",
                                     "/run/udev/udevd.lock");
        ASSERT_STREQ(buf, "another udev daemon is running (PID 42, /run/udev/control answers); "
                          "not starting");
        instance_lock_format_refusal(buf, sizeof(buf), 0, true, "/run/udev/control",
                                     "/run/udev/udevd.lock");
        ASSERT_STREQ(buf, "another udev daemon is running (/run/udev/control answers); "
                          "not starting");
        instance_lock_format_refusal(buf, sizeof(buf), 7, false, "/run/udev/control",
                                     "/run/udev/udevd.lock");
        ASSERT_STREQ(buf, "another udev daemon is running (PID 7, holds /run/udev/udevd.lock); "
                          "not starting");
}

static void test_second_taker_refused(void)
{
        int fd, fd2;

        setup();
        fd = instance_lock_take(dir, control_path);
        ASSERT_TRUE(fd >= 0);
        ASSERT_TRUE(fcntl(fd, F_GETFD) & FD_CLOEXEC);
        ASSERT_EQ(lock_file_pid(), getpid());
        /* another open file description of the same file: refused, even in
         * this process; the holder's PID stays in the file */
        ASSERT_EQ(instance_lock_take(dir, control_path), -EBUSY);
        ASSERT_EQ(lock_file_pid(), getpid());
        ASSERT_EQ(instance_lock_set_pid(fd, 31337), 0);
        ASSERT_EQ(lock_file_pid(), 31337);
        fd = instance_lock_release(fd);
        ASSERT_EQ(fd, -1);
        fd2 = instance_lock_take(dir, control_path);
        ASSERT_TRUE(fd2 >= 0);
        ASSERT_EQ(lock_file_pid(), getpid());
        instance_lock_release(fd2);
        teardown();
}

static void test_killed_holder_releases(void)
{
        int pfd[2], fd;
        pid_t child;
        char b;

        setup();
        ASSERT_EQ(pipe2(pfd, O_CLOEXEC), 0);
        child = fork();
        ASSERT_TRUE(child >= 0);
        if (child == 0) {
                int cfd = instance_lock_take(dir, control_path);
                if (cfd < 0)
                        _exit(1);
                if (write(pfd[1], "L", 1) != 1)
                        _exit(1);
                for (;;)
                        pause();
        }
        close(pfd[1]);
        ASSERT_EQ(read(pfd[0], &b, 1), 1);
        close(pfd[0]);
        ASSERT_EQ(instance_lock_take(dir, control_path), -EBUSY);
        ASSERT_EQ(lock_file_pid(), child);
        ASSERT_EQ(kill(child, SIGKILL), 0);
        ASSERT_EQ(waitpid(child, NULL, 0), child);
        fd = instance_lock_take(dir, control_path);
        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(lock_file_pid(), getpid());
        instance_lock_release(fd);
        teardown();
}

static int listening_socket(void)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

        ASSERT_TRUE(s >= 0);
        strcpy(sa.sun_path, control_path);
        ASSERT_EQ(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
        ASSERT_EQ(listen(s, 4), 0);
        return s;
}

static void test_live_socket_refused_stale_accepted(void)
{
        struct stat st;
        int s, fd;

        setup();
        /* a daemon that does not take the lock serves the socket */
        s = listening_socket();
        ASSERT_EQ(instance_lock_take(dir, control_path), -EBUSY);
        /* the refusal released the lock and left the socket alone */
        ASSERT_EQ(stat(control_path, &st), 0);
        ASSERT_TRUE(S_ISSOCK(st.st_mode));
        /* that daemon died: the socket file stays, connect() is refused */
        close(s);
        fd = instance_lock_take(dir, control_path);
        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(stat(control_path, &st), 0); /* replacing it is the server's job */
        instance_lock_release(fd);
        /* a regular file at the path is no daemon either */
        ASSERT_EQ(unlink(control_path), 0);
        s = open(control_path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        ASSERT_TRUE(s >= 0);
        close(s);
        fd = instance_lock_take(dir, control_path);
        ASSERT_TRUE(fd >= 0);
        instance_lock_release(fd);
        teardown();
}

/* Until `pid` runs `comm` (it has exec'd), at most about 10 s. Under
 * valgrind posix_spawn() is a plain fork: it returns before the child's
 * exec, while the child still holds its copies of every descriptor. */
static bool wait_exec(pid_t pid, const char *comm)
{
        char path[64], buf[32];

        snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
        for (int i = 0; i < 1000; i++) {
                FILE *f = fopen(path, "re");
                bool done = false;

                if (f) {
                        done = fgets(buf, sizeof(buf), f) && strncmp(buf, comm, strlen(comm)) == 0 &&
                               buf[strlen(comm)] == '\n';
                        fclose(f);
                }
                if (done)
                        return true;
                usleep(10 * 1000);
        }
        return false;
}

static void test_exec_child_does_not_keep_it(void)
{
        char *argv[] = { (char *)"sleep", (char *)"30", NULL };
        pid_t child;
        int fd;

        setup();
        fd = instance_lock_take(dir, control_path);
        ASSERT_TRUE(fd >= 0);
        /* a plain spawn: no closefrom, only O_CLOEXEC keeps the fd out */
        ASSERT_EQ(posix_spawnp(&child, "sleep", NULL, NULL, argv, environ), 0);
        ASSERT_TRUE(wait_exec(child, "sleep"));
        close(fd); /* no LOCK_UN: as when the daemon dies; a copy in the child would hold it */
        fd = instance_lock_take(dir, control_path);
        ASSERT_TRUE(fd >= 0);
        instance_lock_release(fd);
        ASSERT_EQ(kill(child, SIGKILL), 0);
        ASSERT_EQ(waitpid(child, NULL, 0), child);
        teardown();
}

int main(void)
{
        log_set_max_level(getenv("TEST_DEBUG") ? LOG_DEBUG : LOG_CRIT);
        TEST_RUN(test_probe_classification);
        TEST_RUN(test_parse_pid);
        TEST_RUN(test_format_refusal);
        TEST_RUN(test_second_taker_refused);
        TEST_RUN(test_killed_holder_releases);
        TEST_RUN(test_live_socket_refused_stale_accepted);
        TEST_RUN(test_exec_child_does_not_keep_it);
        return 0;
}
