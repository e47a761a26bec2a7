/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any, one broadcaster per thread */
#include <errno.h>
#include <linux/netlink.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "proto/monitor-msg.h"
#include "shared/log.h"
#include "udevd/broadcast.h"

int broadcaster_open(struct broadcaster *b)
{
        struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
        int fd;

        fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_KOBJECT_UEVENT);
        if (fd < 0)
                return negative_errno();
        /* bound with groups 0: we only send */
        if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
                int r = negative_errno();
                safe_close(fd);
                return r;
        }
        b->fd = fd;
        return 0;
}

void broadcaster_close(struct broadcaster *b)
{
        b->fd = safe_close(b->fd);
}

static int send_datagram(struct broadcaster *b, uint32_t groups, const void *buf, size_t len)
{
        struct sockaddr_nl dst = { .nl_family = AF_NETLINK, .nl_groups = groups };

        for (int attempt = 0; attempt < 3; attempt++) {
                ssize_t n = sendto(b->fd, buf, len, 0, (struct sockaddr *)&dst, sizeof(dst));
                if (n >= 0 || errno == ECONNREFUSED)
                        return 0;
                if (errno != EINTR && errno != EAGAIN)
                        return negative_errno();
        }
        return -EAGAIN;
}

int broadcaster_send_kernel(struct broadcaster *b, uint32_t groups, const struct uevent *ev)
{
        /* on the heap: at most ev->buf_len bytes, and workers' stacks stay small */
        char *msg = malloc(ev->buf_len);
        int r;

        if (!msg)
                return -ENOMEM;
        r = uevent_format_kernel(ev, msg, ev->buf_len);
        if (r > 0)
                r = send_datagram(b, groups, msg, (size_t)r);
        free(msg);
        return r;
}

int broadcaster_send(struct broadcaster *b, const char *subsystem, const char *devtype,
                     const char *const *tags, const char *props, size_t props_len)
{
        /* On the stack, not _Thread_local: per-thread static TLS is zero-filled
         * (so resident) in every worker; here only the bytes written are. */
        char buf[MONITOR_MSG_MAX];
        int len;

        len = monitor_msg_encode(buf, sizeof(buf), subsystem, devtype, tags, props, props_len);
        if (len < 0)
                return len;
        return send_datagram(b, 2, buf, (size_t)len);
}
