/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (one netlink socket per call) */
/* Renaming a network interface with rtnetlink (RTM_SETLINK + IFLA_IFNAME),
 * for NAME= (event-processing.md §7). */

#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rules/rules-exec.h"
#include "shared/macro.h"

#define RTNL_TIMEOUT_MS 5000

bool netif_name_valid(const char *name)
{
        size_t n = strlen(name);
        bool digits = true;

        if (n == 0 || n >= IFNAMSIZ || streq(name, ".") || streq(name, ".."))
                return false;
        for (const char *p = name; *p; p++) {
                unsigned char c = (unsigned char)*p;
                if (c <= 32 || c >= 127 || c == ':' || c == '/' || c == '%')
                        return false;
                if (c < '0' || c > '9')
                        digits = false;
        }
        return !digits;
}

int netif_rename(int ifindex, const char *name)
{
        struct {
                struct nlmsghdr nh;
                struct ifinfomsg ifi;
                char attrs[RTA_SPACE(IFNAMSIZ)];
        } req = {};
        char reply[1024] __attribute__((aligned(8)));
        struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
        struct rtattr *rta;
        size_t nl = strlen(name);
        _cleanup_close_ int fd = -1;
        struct pollfd pfd;
        ssize_t n;

        if (ifindex <= 0 || nl == 0 || nl >= IFNAMSIZ)
                return -EINVAL;
        req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg));
        req.nh.nlmsg_type = RTM_SETLINK;
        req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
        req.nh.nlmsg_seq = 1;
        req.ifi.ifi_family = AF_UNSPEC;
        req.ifi.ifi_index = ifindex;
        rta = (struct rtattr *)((char *)&req + NLMSG_ALIGN(req.nh.nlmsg_len));
        rta->rta_type = IFLA_IFNAME;
        rta->rta_len = (unsigned short)RTA_LENGTH(nl + 1);
        memcpy(RTA_DATA(rta), name, nl + 1);
        req.nh.nlmsg_len = NLMSG_ALIGN(req.nh.nlmsg_len) + RTA_ALIGN(rta->rta_len);

        fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
        if (fd < 0)
                return -errno;
        if (sendto(fd, &req, req.nh.nlmsg_len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0)
                return -errno;
        pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
        for (;;) {
                int p = poll(&pfd, 1, RTNL_TIMEOUT_MS);
                if (p < 0 && errno == EINTR)
                        continue;
                if (p < 0)
                        return -errno;
                if (p == 0)
                        return -ETIMEDOUT;
                n = recv(fd, reply, sizeof(reply), 0);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                size_t off = 0;
                while (off + sizeof(struct nlmsghdr) <= (size_t)n) {
                        const struct nlmsghdr *h = (const struct nlmsghdr *)(reply + off);
                        size_t hl = h->nlmsg_len;

                        if (hl < sizeof(struct nlmsghdr) || hl > (size_t)n - off)
                                break;
                        if (h->nlmsg_seq == 1 && h->nlmsg_type == NLMSG_ERROR) {
                                const struct nlmsgerr *e = NLMSG_DATA(h);
                                if (hl < NLMSG_LENGTH(sizeof(*e)))
                                        return -EBADMSG;
                                return e->error; /* 0 = ack, else -errno */
                        }
                        off += NLMSG_ALIGN(hl);
                }
        }
}
