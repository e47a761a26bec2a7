/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (sockets belong to the caller; the sequence counter is atomic) */
/* One rtnetlink request and its answer (rtnl.h). */
#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "shared/macro.h"
#include "shared/rtnl.h"
#include "shared/time-util.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif
#ifndef NETLINK_CAP_ACK
#define NETLINK_CAP_ACK 10
#endif

static atomic_uint rtnl_seq;

void rtnl_req_link(struct rtnl_req *q, uint16_t type, uint16_t flags, int ifindex)
{
        struct ifinfomsg *ifi;

        memset(q, 0, sizeof(*q));
        q->u.hdr.nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg));
        q->u.hdr.nlmsg_type = type;
        q->u.hdr.nlmsg_flags = (uint16_t)(NLM_F_REQUEST | flags);
        ifi = NLMSG_DATA(&q->u.hdr);
        ifi->ifi_family = AF_UNSPEC;
        ifi->ifi_index = ifindex;
}

struct rtattr *rtnl_req_attr(struct rtnl_req *q, uint16_t type, const void *data, size_t len)
{
        size_t off = NLMSG_ALIGN(q->u.hdr.nlmsg_len);
        struct rtattr *a;

        if (q->overflow || len > UINT16_MAX - RTA_LENGTH(0) ||
            off + RTA_SPACE(len) > sizeof(q->u.buf)) {
                q->overflow = true;
                return NULL;
        }
        /* Addressed from the whole buffer, not from the header member of the
         * union: gcc's object-size checks (-Wstringop-overflow, with ASan)
         * otherwise take the attribute for a part of nlmsg_len. */
        unsigned char *at = (unsigned char *)q + offsetof(struct rtnl_req, u) + off;

        a = (struct rtattr *)(void *)at;
        a->rta_type = type;
        a->rta_len = (unsigned short)RTA_LENGTH(len);
        if (len)
                memcpy(at + RTA_LENGTH(0), data, len);
        memset(at + RTA_LENGTH(len), 0, RTA_SPACE(len) - RTA_LENGTH(len));
        q->u.hdr.nlmsg_len = (uint32_t)(off + RTA_SPACE(len));
        return a;
}

struct rtattr *rtnl_req_str(struct rtnl_req *q, uint16_t type, const char *s)
{
        return rtnl_req_attr(q, type, s, strlen(s) + 1);
}

struct rtattr *rtnl_req_u32(struct rtnl_req *q, uint16_t type, uint32_t v)
{
        return rtnl_req_attr(q, type, &v, sizeof(v));
}

struct rtattr *rtnl_req_nest_begin(struct rtnl_req *q, uint16_t type)
{
        return rtnl_req_attr(q, (uint16_t)(type | NLA_F_NESTED), NULL, 0);
}

int rtnl_req_nest_end(struct rtnl_req *q, struct rtattr *nest)
{
        size_t len;

        if (q->overflow || !nest)
                return -ENOBUFS;
        len = (size_t)(q->u.buf + q->u.hdr.nlmsg_len - (char *)nest);
        if (len > UINT16_MAX) {
                q->overflow = true;
                return -ENOBUFS;
        }
        nest->rta_len = (unsigned short)len;
        return 0;
}

int rtnl_open(int *fd)
{
        struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
        int one = 1;

        if (*fd >= 0)
                return 0;
        *fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
        if (*fd < 0)
                return -errno;
        if (bind(*fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
                int r = -errno;

                *fd = safe_close(*fd);
                return r;
        }
        /* errors without the echoed request, where the kernel knows how */
        (void)setsockopt(*fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
        return 0;
}

bool rtnl_find_answer(void *buf, size_t n, uint32_t seq, bool want_data, struct nlmsghdr **ret,
                      int *result)
{
        size_t off = 0;

        while (n - off >= sizeof(struct nlmsghdr)) {
                struct nlmsghdr *h = (struct nlmsghdr *)((char *)buf + off);
                size_t hl = h->nlmsg_len;

                if (hl < sizeof(struct nlmsghdr) || hl > n - off)
                        return false;
                if (h->nlmsg_seq == seq) {
                        if (h->nlmsg_type == NLMSG_ERROR) {
                                const struct nlmsgerr *e = NLMSG_DATA(h);

                                if (hl < NLMSG_LENGTH(sizeof(*e)))
                                        *result = -EBADMSG;
                                else if (e->error > 0 || e->error < -4095)
                                        *result = -EIO;
                                else if (e->error == 0 && want_data)
                                        *result = -EIO; /* an ack where data was due */
                                else
                                        *result = e->error;
                                return true;
                        }
                        if (want_data) {
                                if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_NOOP ||
                                    h->nlmsg_type == NLMSG_OVERRUN)
                                        *result = -EIO;
                                else {
                                        *ret = h;
                                        *result = 0;
                                }
                                return true;
                        }
                        /* data for an ack-only request: the ack follows */
                }
                if (NLMSG_ALIGN(hl) > n - off)
                        break;
                off += NLMSG_ALIGN(hl);
        }
        return false;
}

int rtnl_call(int *fd, struct rtnl_req *q, void *buf, size_t size, struct nlmsghdr **ret)
{
        static const struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
        char ack[RTNL_ACK_MAX] __attribute__((aligned(8)));
        uint64_t deadline;
        uint32_t seq;
        int r;

        if (q->overflow)
                return -ENOBUFS;
        if (!buf) {
                if (ret)
                        return -EINVAL;
                buf = ack;
                size = sizeof(ack);
        }
        r = rtnl_open(fd);
        if (r < 0)
                return r;
        do
                seq = atomic_fetch_add(&rtnl_seq, 1) + 1;
        while (seq == 0);
        q->u.hdr.nlmsg_seq = seq;
        if (sendto(*fd, q->u.buf, q->u.hdr.nlmsg_len, 0, (const struct sockaddr *)&kernel,
                   sizeof(kernel)) < 0)
                return -errno;
        deadline = now_usec(CLOCK_MONOTONIC) + RTNL_TIMEOUT_MSEC * USEC_PER_MSEC;
        for (;;) {
                struct pollfd pfd = { .fd = *fd, .events = POLLIN };
                struct sockaddr_nl from;
                socklen_t fromlen = sizeof(from);
                uint64_t now = now_usec(CLOCK_MONOTONIC);
                ssize_t n;
                int p;

                if (now >= deadline)
                        return -ETIMEDOUT;
                p = poll(&pfd, 1, (int)((deadline - now + USEC_PER_MSEC - 1) / USEC_PER_MSEC));
                if (p < 0 && errno == EINTR)
                        continue;
                if (p < 0)
                        return -errno;
                if (p == 0)
                        return -ETIMEDOUT;
                memset(&from, 0, sizeof(from));
                n = recvfrom(*fd, buf, size, MSG_TRUNC | MSG_DONTWAIT, (struct sockaddr *)&from,
                             &fromlen);
                if (n < 0) {
                        if (errno == EINTR || errno == EAGAIN)
                                continue;
                        return -errno;
                }
                if (from.nl_family != AF_NETLINK || from.nl_pid != 0)
                        continue; /* not from the kernel */
                if ((size_t)n > size)
                        return -ENOBUFS;
                if (rtnl_find_answer(buf, (size_t)n, seq, ret != NULL, ret, &r))
                        return r;
        }
}
