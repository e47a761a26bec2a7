/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: test (single-threaded; forks to lay out fds 3, 4, ...) */
/* Socket activation (udevd/listen-fds.h): LISTEN_PID/LISTEN_FDS parsing,
 * each kind of fd told apart by real sockets (a listening SEQPACKET socket
 * on the control path and elsewhere, a socketpair, a stream socket, a
 * bound but not listening socket, abstract names, uevent netlink sockets
 * with and without group 1, a route netlink socket, a pipe, a file), and
 * listen_fds_take() in a child whose fds 3.. are laid out as systemd does. */

#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <stddef.h>
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
#include "udevd/listen-fds.h"

static char dir[64], control_path[128], other_path[128];

static void setup(void)
{
        snprintf(dir, sizeof(dir), "/tmp/tudev-listen-XXXXXX");
        ASSERT_TRUE(mkdtemp(dir) != NULL);
        snprintf(control_path, sizeof(control_path), "%s/control", dir);
        snprintf(other_path, sizeof(other_path), "%s/other", dir);
}

static void teardown(void)
{
        (void)unlink(control_path);
        (void)unlink(other_path);
        ASSERT_EQ(rmdir(dir), 0);
}

/* An AF_UNIX socket of `type` bound to `path` ("@name": abstract), listening if asked. */
static int unix_socket(int type, const char *path, bool listening)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        socklen_t len;
        int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);

        ASSERT_TRUE(fd >= 0);
        ASSERT_TRUE(strlen(path) < sizeof(sa.sun_path));
        strcpy(sa.sun_path, path);
        len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path) + 1);
        if (path[0] == '@') {
                sa.sun_path[0] = '\0';
                len--; /* abstract names have no terminating NUL */
        } else {
                (void)unlink(path);
        }
        ASSERT_EQ(bind(fd, (struct sockaddr *)&sa, len), 0);
        if (listening)
                ASSERT_EQ(listen(fd, 4), 0);
        return fd;
}

static int netlink_socket(int protocol, unsigned groups)
{
        struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = groups };
        int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, protocol);

        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
        return fd;
}

static void test_parse(void)
{
        unsigned n = 99;

        ASSERT_EQ(listen_fds_parse(NULL, NULL, 42, &n), 0);
        ASSERT_EQ(n, 0);
        ASSERT_EQ(listen_fds_parse("42", "2", 42, &n), 0);
        ASSERT_EQ(n, 2);
        ASSERT_EQ(listen_fds_parse("42", "0", 42, &n), 0);
        ASSERT_EQ(n, 0);
        ASSERT_EQ(listen_fds_parse("42", "64", 42, &n), 0);
        ASSERT_EQ(n, 64);
        /* another process's fds: not ours, whatever LISTEN_FDS says */
        n = 99;
        ASSERT_EQ(listen_fds_parse("43", "2", 42, &n), 0);
        ASSERT_EQ(n, 0);
        ASSERT_EQ(listen_fds_parse("43", "junk", 42, &n), 0);
        ASSERT_EQ(n, 0);
        /* malformed */
        const char *bad_pid[] = { NULL, "", "0", "-42", "+42", " 42", "42 ", "4x2",
                                  "99999999999999999999" };
        for (size_t i = 0; i < ARRAY_SIZE(bad_pid); i++) {
                n = 99;
                ASSERT_EQ(listen_fds_parse(bad_pid[i], "2", 42, &n), -EINVAL);
                ASSERT_EQ(n, 0);
        }
        const char *bad_fds[] = { NULL, "", "-1", "65", "1000000", "2 ", "0x2", "+1" };
        for (size_t i = 0; i < ARRAY_SIZE(bad_fds); i++) {
                n = 99;
                ASSERT_EQ(listen_fds_parse("42", bad_fds[i], 42, &n), -EINVAL);
                ASSERT_EQ(n, 0);
        }
}

static void test_classify(void)
{
        int pair[2], pipefd[2], fd;

        setup();
        fd = unix_socket(SOCK_SEQPACKET, control_path, true);
        ASSERT_EQ(listen_fd_classify(fd, control_path), LISTEN_FD_CONTROL);
        /* the same socket, but another path was expected */
        ASSERT_EQ(listen_fd_classify(fd, other_path), LISTEN_FD_OTHER);
        ASSERT_EQ(listen_fd_classify(fd, NULL), LISTEN_FD_OTHER);
        safe_close(fd);
        /* bound to another path */
        fd = unix_socket(SOCK_SEQPACKET, other_path, true);
        ASSERT_EQ(listen_fd_classify(fd, control_path), LISTEN_FD_OTHER);
        safe_close(fd);
        /* bound where expected, but not listening */
        fd = unix_socket(SOCK_SEQPACKET, control_path, false);
        ASSERT_EQ(listen_fd_classify(fd, control_path), LISTEN_FD_OTHER);
        safe_close(fd);
        /* a stream or datagram socket on the control path */
        fd = unix_socket(SOCK_STREAM, control_path, true);
        ASSERT_EQ(listen_fd_classify(fd, control_path), LISTEN_FD_OTHER);
        safe_close(fd);
        fd = unix_socket(SOCK_DGRAM, control_path, false);
        ASSERT_EQ(listen_fd_classify(fd, control_path), LISTEN_FD_OTHER);
        safe_close(fd);
        /* an abstract name that spells the path */
        char abstract[160];
        snprintf(abstract, sizeof(abstract), "@%s", control_path);
        fd = unix_socket(SOCK_SEQPACKET, abstract, true);
        ASSERT_EQ(listen_fd_classify(fd, control_path), LISTEN_FD_OTHER);
        safe_close(fd);
        /* an unbound connected pair */
        ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair), 0);
        ASSERT_EQ(listen_fd_classify(pair[0], control_path), LISTEN_FD_OTHER);
        safe_close(pair[0]);
        safe_close(pair[1]);

        /* the kernel's uevents: group 1 */
        fd = netlink_socket(NETLINK_KOBJECT_UEVENT, 1);
        ASSERT_EQ(listen_fd_classify(fd, control_path), LISTEN_FD_UEVENT);
        safe_close(fd);
        /* bound to no group (a sender), or only to udev's group 2 */
        fd = netlink_socket(NETLINK_KOBJECT_UEVENT, 0);
        ASSERT_EQ(listen_fd_classify(fd, control_path), LISTEN_FD_OTHER);
        safe_close(fd);
        fd = netlink_socket(NETLINK_KOBJECT_UEVENT, 2);
        ASSERT_EQ(listen_fd_classify(fd, control_path), LISTEN_FD_OTHER);
        safe_close(fd);
        /* another netlink protocol */
        fd = netlink_socket(NETLINK_ROUTE, 0);
        ASSERT_EQ(listen_fd_classify(fd, control_path), LISTEN_FD_OTHER);
        safe_close(fd);

        /* no sockets at all */
        ASSERT_EQ(pipe2(pipefd, O_CLOEXEC), 0);
        ASSERT_EQ(listen_fd_classify(pipefd[0], control_path), LISTEN_FD_OTHER);
        safe_close(pipefd[0]);
        safe_close(pipefd[1]);
        fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(listen_fd_classify(fd, control_path), LISTEN_FD_OTHER);
        safe_close(fd);
        ASSERT_EQ(listen_fd_classify(-1, control_path), LISTEN_FD_OTHER);
        ASSERT_EQ(listen_fd_classify(1000, control_path), LISTEN_FD_OTHER); /* not open */
        teardown();
}

/* In a child: put fds[i] at 3+i (without FD_CLOEXEC, as a service manager
 * leaves them), set the environment for `pid_of_env` (0: our PID), call
 * listen_fds_take() and check the result with check(). */
typedef void (*take_check)(const struct listen_fds *got, int adopted);

static void run_take(const int *fds, size_t n, bool own_pid, take_check check)
{
        pid_t pid = fork();
        int status;

        ASSERT_TRUE(pid >= 0);
        if (pid == 0) {
                int moved[8];
                char buf[32];

                ASSERT_TRUE(n <= ARRAY_SIZE(moved));
                for (size_t i = 0; i < n; i++) {
                        moved[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 100);
                        ASSERT_TRUE(moved[i] >= 100);
                }
                for (size_t i = 0; i < n; i++) {
                        ASSERT_EQ(dup2(moved[i], LISTEN_FDS_START + (int)i),
                                  LISTEN_FDS_START + (int)i);
                        close(moved[i]);
                }
                snprintf(buf, sizeof(buf), "%d", own_pid ? (int)getpid() : (int)getppid());
                setenv("LISTEN_PID", buf, 1);
                snprintf(buf, sizeof(buf), "%zu", n);
                setenv("LISTEN_FDS", buf, 1);
                setenv("LISTEN_FDNAMES", "a:b:c", 1);
                struct listen_fds got;
                int adopted = listen_fds_take(control_path, &got);
                ASSERT_TRUE(!getenv("LISTEN_PID"));
                ASSERT_TRUE(!getenv("LISTEN_FDS"));
                ASSERT_TRUE(!getenv("LISTEN_FDNAMES"));
                check(&got, adopted);
                _exit(0);
        }
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        ASSERT_TRUE(WIFEXITED(status));
        ASSERT_EQ(WEXITSTATUS(status), 0);
}

static bool is_open(int fd)
{
        return fcntl(fd, F_GETFD) >= 0;
}

static bool is_cloexec(int fd)
{
        int flags = fcntl(fd, F_GETFD);
        return flags >= 0 && (flags & FD_CLOEXEC);
}

static void check_both_and_junk_closed(const struct listen_fds *got, int adopted)
{
        ASSERT_EQ(adopted, 2);
        ASSERT_EQ(got->control_fd, 4);
        ASSERT_EQ(got->uevent_fd, 3);
        ASSERT_TRUE(is_cloexec(3));
        ASSERT_TRUE(is_cloexec(4));
        ASSERT_TRUE(!is_open(5)); /* the pipe: not ours, closed */
        ASSERT_TRUE(!is_open(6)); /* a second control socket: closed */
        ASSERT_EQ(listen_fd_classify(got->control_fd, control_path), LISTEN_FD_CONTROL);
}

static void check_not_ours(const struct listen_fds *got, int adopted)
{
        ASSERT_EQ(adopted, 0);
        ASSERT_EQ(got->control_fd, -1);
        ASSERT_EQ(got->uevent_fd, -1);
        /* another process's fds are left as they are */
        ASSERT_TRUE(is_open(3) && !is_cloexec(3));
        ASSERT_TRUE(is_open(4) && !is_cloexec(4));
}

static void check_control_only(const struct listen_fds *got, int adopted)
{
        ASSERT_EQ(adopted, 1);
        ASSERT_EQ(got->control_fd, 3);
        ASSERT_EQ(got->uevent_fd, -1);
        ASSERT_TRUE(is_cloexec(3));
}

static void test_take(void)
{
        int ctl, ctl2, nl, pipefd[2];

        setup();
        ctl = unix_socket(SOCK_SEQPACKET, control_path, true);
        nl = netlink_socket(NETLINK_KOBJECT_UEVENT, 1);
        ASSERT_EQ(pipe2(pipefd, O_CLOEXEC), 0);
        /* a second listening socket on the same path (the first's inode is
         * replaced, but both sockets say they are bound to it) */
        ctl2 = unix_socket(SOCK_SEQPACKET, control_path, true);
        const int all[] = { nl, ctl, pipefd[0], ctl2 };
        run_take(all, ARRAY_SIZE(all), true, check_both_and_junk_closed);
        run_take(all, 2, false, check_not_ours);
        const int one[] = { ctl };
        run_take(one, 1, true, check_control_only);
        safe_close(ctl);
        safe_close(ctl2);
        safe_close(nl);
        safe_close(pipefd[0]);
        safe_close(pipefd[1]);
        teardown();
}

static void check_nothing(const struct listen_fds *got, int adopted)
{
        ASSERT_EQ(adopted, 0);
        ASSERT_EQ(got->control_fd, -1);
        ASSERT_EQ(got->uevent_fd, -1);
}

static void test_take_nothing_passed(void)
{
        setup();
        run_take(NULL, 0, true, check_nothing);
        teardown();
}

int main(void)
{
        log_set_max_level(getenv("TEST_DEBUG") ? LOG_DEBUG : LOG_CRIT);
        TEST_RUN(test_parse);
        TEST_RUN(test_classify);
        TEST_RUN(test_take);
        TEST_RUN(test_take_nothing_passed);
        return 0;
}
