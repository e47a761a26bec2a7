/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (one netlink socket per call) */
/* Renaming a network interface with rtnetlink (RTM_SETLINK + IFLA_IFNAME),
 * for NAME= on add (udevd(8) DESCRIPTION). */

#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rules/rules-exec.h"
#include "shared/macro.h"

#define RTNL_TIMEOUT_MS 5000
#define ALTNAME_SIZE 128 /* the kernel's ALTIFNAMSIZ (linux/if.h clashes with net/if.h) */

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

/* One rtnetlink request on a socket of its own, waiting (bounded) for its
 * acknowledgement: 0 or the kernel's -errno. `attr` is one attribute of
 * `attr_len` bytes, nested in IFLA_PROP_LIST when `in_prop_list`. */
static int rtnl_request(uint16_t type, uint16_t flags, int ifindex, uint16_t attr_type,
                        const char *value, bool in_prop_list)
{
        struct {
                struct nlmsghdr nh;
                struct ifinfomsg ifi;
                char attrs[RTA_SPACE(0) + RTA_SPACE(ALTNAME_SIZE)];
        } req = {};
        char reply[1024] __attribute__((aligned(8)));
        struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
        struct rtattr *rta, *outer = NULL;
        size_t vl = strlen(value) + 1;
        _cleanup_close_ int fd = -1;
        struct pollfd pfd;
        ssize_t n;

        if (vl > ALTNAME_SIZE)
                return -EINVAL;
        req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg));
        req.nh.nlmsg_type = type;
        req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
        req.nh.nlmsg_seq = 1;
        req.ifi.ifi_family = AF_UNSPEC;
        req.ifi.ifi_index = ifindex;
        rta = (struct rtattr *)((char *)&req + NLMSG_ALIGN(req.nh.nlmsg_len));
        if (in_prop_list) {
                outer = rta;
                outer->rta_type = IFLA_PROP_LIST | NLA_F_NESTED;
                rta = (struct rtattr *)((char *)outer + RTA_LENGTH(0));
        }
        rta->rta_type = attr_type;
        rta->rta_len = (unsigned short)RTA_LENGTH(vl);
        memcpy(RTA_DATA(rta), value, vl);
        if (outer)
                outer->rta_len = (unsigned short)(RTA_LENGTH(0) + RTA_ALIGN(rta->rta_len));
        req.nh.nlmsg_len = NLMSG_ALIGN(req.nh.nlmsg_len) +
                           RTA_ALIGN(outer ? outer->rta_len : rta->rta_len);

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

int netif_rename(int ifindex, const char *name, const char *old_name)
{
        size_t nl = strlen(name);
        int r;

        if (ifindex <= 0 || nl == 0 || nl >= IFNAMSIZ)
                return -EINVAL;
        r = rtnl_request(RTM_SETLINK, 0, ifindex, IFLA_IFNAME, name, false);
        if (r != -EEXIST)
                return r;
        /* The name may be an alternative name of this very interface (given
         * by the initramfs' daemon, say): the kernel counts it as taken. Drop
         * it from this interface's alternative names -- which fails unless
         * it is one of them -- and rename again; the old name becomes an
         * alternative name in its place, as systemd-udevd does. */
        if (rtnl_request(RTM_DELLINKPROP, 0, ifindex, IFLA_ALT_IFNAME, name, true) < 0)
                return -EEXIST;
        r = rtnl_request(RTM_SETLINK, 0, ifindex, IFLA_IFNAME, name, false);
        if (r < 0) {
                /* put the alternative name back; the rename error is what counts */
                (void)rtnl_request(RTM_NEWLINKPROP, NLM_F_CREATE | NLM_F_EXCL, ifindex,
                                   IFLA_ALT_IFNAME, name, true);
                return r;
        }
        if (old_name && *old_name)
                (void)rtnl_request(RTM_NEWLINKPROP, NLM_F_CREATE | NLM_F_EXCL, ifindex,
                                   IFLA_ALT_IFNAME, old_name, true);
        return 0;
}
