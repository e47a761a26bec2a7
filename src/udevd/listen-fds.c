/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: manager (main(), before any thread exists: it changes the environment) */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/netlink.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "shared/log.h"
#include "shared/macro.h"
#include "udevd/listen-fds.h"

/* A decimal number without sign, blanks or leading '+', at most `max`. */
static int parse_decimal(const char *s, unsigned long max, unsigned long *ret)
{
        unsigned long v = 0;

        if (!s || !*s)
                return -EINVAL;
        for (const char *p = s; *p; p++) {
                if (*p < '0' || *p > '9')
                        return -EINVAL;
                if (v > (max - (unsigned long)(*p - '0')) / 10)
                        return -EINVAL;
                v = v * 10 + (unsigned long)(*p - '0');
        }
        *ret = v;
        return 0;
}

int listen_fds_parse(const char *pid_text, const char *fds_text, pid_t self, unsigned *ret_n)
{
        unsigned long pid, n;

        *ret_n = 0;
        if (!pid_text && !fds_text)
                return 0;
        if (parse_decimal(pid_text, INT_MAX, &pid) < 0 || pid == 0)
                return -EINVAL;
        if ((pid_t)pid != self)
                return 0; /* meant for another process */
        if (parse_decimal(fds_text, LISTEN_FDS_MAX, &n) < 0)
                return -EINVAL;
        *ret_n = (unsigned)n;
        return 0;
}

static int sockopt_int(int fd, int opt, int *ret)
{
        socklen_t len = sizeof(*ret);

        if (getsockopt(fd, SOL_SOCKET, opt, ret, &len) < 0)
                return negative_errno();
        return len == sizeof(*ret) ? 0 : -EINVAL;
}

static bool is_control_socket(int fd, const char *control_path)
{
        struct sockaddr_un sa = {};
        socklen_t len = sizeof(sa);
        size_t path_len = strlen(control_path);
        int type, listening;

        if (sockopt_int(fd, SO_TYPE, &type) < 0 || type != SOCK_SEQPACKET ||
            sockopt_int(fd, SO_ACCEPTCONN, &listening) < 0 || !listening)
                return false;
        if (getsockname(fd, (struct sockaddr *)&sa, &len) < 0 || len > sizeof(sa) ||
            sa.sun_family != AF_UNIX)
                return false;
        /* The bound name: len covers the family and the path, with or
         * without its terminating NUL; an abstract name starts with NUL. */
        size_t n = len - offsetof(struct sockaddr_un, sun_path);
        if (len <= offsetof(struct sockaddr_un, sun_path) || sa.sun_path[0] == '\0')
                return false;
        if (n > 0 && sa.sun_path[n - 1] == '\0')
                n--;
        return n == path_len && memcmp(sa.sun_path, control_path, n) == 0;
}

static bool is_uevent_socket(int fd)
{
        struct sockaddr_nl sa = {};
        socklen_t len = sizeof(sa);
        int type, protocol;

        if (sockopt_int(fd, SO_TYPE, &type) < 0 || (type != SOCK_RAW && type != SOCK_DGRAM) ||
            sockopt_int(fd, SO_PROTOCOL, &protocol) < 0 || protocol != NETLINK_KOBJECT_UEVENT)
                return false;
        if (getsockname(fd, (struct sockaddr *)&sa, &len) < 0 || len < sizeof(sa) ||
            sa.nl_family != AF_NETLINK)
                return false;
        return (sa.nl_groups & 1) != 0;
}

enum listen_fd_kind listen_fd_classify(int fd, const char *control_path)
{
        struct stat st;
        int domain;

        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode))
                return LISTEN_FD_OTHER;
        if (sockopt_int(fd, SO_DOMAIN, &domain) < 0)
                return LISTEN_FD_OTHER;
        if (domain == AF_UNIX && control_path && is_control_socket(fd, control_path))
                return LISTEN_FD_CONTROL;
        if (domain == AF_NETLINK && is_uevent_socket(fd))
                return LISTEN_FD_UEVENT;
        return LISTEN_FD_OTHER;
}

int listen_fds_take(const char *control_path, struct listen_fds *ret)
{
        const char *pid_text = getenv("LISTEN_PID"), *fds_text = getenv("LISTEN_FDS");
        unsigned n = 0;
        int adopted = 0;

        ret->control_fd = ret->uevent_fd = -1;
        if (listen_fds_parse(pid_text, fds_text, getpid(), &n) < 0)
                log_warning("Ignoring malformed LISTEN_PID='%.20s' LISTEN_FDS='%.20s'",
                            pid_text ? pid_text : "", fds_text ? fds_text : "");
        /* Whatever they said: no child of ours may take them as its own. */
        (void)unsetenv("LISTEN_PID");
        (void)unsetenv("LISTEN_FDS");
        (void)unsetenv("LISTEN_FDNAMES");

        for (unsigned i = 0; i < n; i++) {
                int fd = LISTEN_FDS_START + (int)i, flags = fcntl(fd, F_GETFD);
                int *slot = NULL;

                if (flags < 0) {
                        log_warning_errno(errno, "Passed fd %d is not open: %m", fd);
                        continue;
                }
                if (!(flags & FD_CLOEXEC) && fcntl(fd, F_SETFD, flags | FD_CLOEXEC) < 0)
                        log_warning_errno(errno, "Failed to set FD_CLOEXEC on passed fd %d: %m",
                                          fd);
                switch (listen_fd_classify(fd, control_path)) {
                case LISTEN_FD_CONTROL:
                        slot = &ret->control_fd;
                        break;
                case LISTEN_FD_UEVENT:
                        slot = &ret->uevent_fd;
                        break;
                case LISTEN_FD_OTHER:
                        break;
                }
                if (!slot) {
                        log_warning("Passed fd %d is neither the control socket (listening "
                                    "AF_UNIX SOCK_SEQPACKET on %s) nor a kernel uevent socket "
                                    "(NETLINK_KOBJECT_UEVENT, group 1); closing it",
                                    fd, control_path ? control_path : "?");
                        safe_close(fd);
                        continue;
                }
                if (*slot >= 0) {
                        log_warning("Passed fd %d is a second %s socket; closing it", fd,
                                    slot == &ret->control_fd ? "control" : "uevent");
                        safe_close(fd);
                        continue;
                }
                *slot = fd;
                adopted++;
                log_debug("Using the %s socket passed by the service manager (fd %d)",
                          slot == &ret->control_fd ? "control" : "uevent", fd);
        }
        return adopted;
}
