/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: manager */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "shared/log.h"
#include "udevd/notify.h"

void notifier_init(struct notifier *n, int ready_fd)
{
        const char *e = getenv("NOTIFY_SOCKET");

        n->ready_fd = ready_fd;
        n->socket_path[0] = '\0';
        if (e && (e[0] == '/' || e[0] == '@') && strlen(e) < sizeof(n->socket_path))
                strcpy(n->socket_path, e);
}

int notifier_send(const struct notifier *n, const char *msg)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        socklen_t salen;
        int fd, r = 0;

        if (!n->socket_path[0])
                return 0;
        size_t l = strlen(n->socket_path);
        memcpy(sa.sun_path, n->socket_path, l);
        if (sa.sun_path[0] == '@')
                sa.sun_path[0] = '\0'; /* abstract namespace */
        salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + l);
        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return negative_errno();
        if (sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&sa, salen) < 0)
                r = log_debug_errno(errno, "Failed to notify %s: %m", n->socket_path);
        safe_close(fd);
        return r;
}

void notifier_ready(struct notifier *n, const char *status)
{
        char msg[256];

        snprintf(msg, sizeof(msg), "READY=1\nSTATUS=%s", status);
        (void)notifier_send(n, msg);
        if (n->ready_fd >= 0) {
                ssize_t w;
                do
                        w = write(n->ready_fd, "\n", 1);
                while (w < 0 && errno == EINTR);
                if (w < 0)
                        log_warning_errno(errno, "Failed to write to the readiness fd: %m");
                n->ready_fd = safe_close(n->ready_fd);
        }
}
