/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (no global state; sockets belong to the caller) */
/* rtnetlink and ethtool requests of net_setup_link (link-netlink.h). */
#include <errno.h>
#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "builtins/link-netlink.h"
#include "shared/log.h"
#include "shared/macro.h"

#define NL_BUFFER_SIZE (64 * 1024)
#define NL_REQUEST_MAX 8192
#define NL_TIMEOUT_SEC 5

static int rtnl_connect(int *fd)
{
        struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
        struct timeval tv = { .tv_sec = NL_TIMEOUT_SEC };

        if (*fd >= 0)
                return 0;
        *fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
        if (*fd < 0)
                return -errno;
        if (bind(*fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
            setsockopt(*fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0) {
                int r = -errno;

                *fd = safe_close(*fd);
                return r;
        }
        return 0;
}

/* A request being built in a fixed buffer. */
struct nl_req {
        union {
                struct nlmsghdr hdr;
                char buf[NL_REQUEST_MAX];
        } u;
        bool overflow;
};

static void req_init(struct nl_req *q, uint16_t type, uint16_t flags, int ifindex)
{
        struct ifinfomsg *ifi;

        memset(q, 0, sizeof(*q));
        q->u.hdr.nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg));
        q->u.hdr.nlmsg_type = type;
        q->u.hdr.nlmsg_flags = NLM_F_REQUEST | flags;
        ifi = NLMSG_DATA(&q->u.hdr);
        ifi->ifi_family = AF_UNSPEC;
        ifi->ifi_index = ifindex;
}

static struct rtattr *req_attr(struct nl_req *q, uint16_t type, const void *data, size_t len)
{
        size_t off = NLMSG_ALIGN(q->u.hdr.nlmsg_len);
        struct rtattr *a;

        if (off + RTA_SPACE(len) > sizeof(q->u.buf)) {
                q->overflow = true;
                return NULL;
        }
        a = (struct rtattr *)(q->u.buf + off);
        a->rta_type = type;
        a->rta_len = (unsigned short)RTA_LENGTH(len);
        if (len)
                memcpy(RTA_DATA(a), data, len);
        q->u.hdr.nlmsg_len = (uint32_t)(off + RTA_SPACE(len));
        return a;
}

static void req_u32(struct nl_req *q, uint16_t type, uint32_t v)
{
        req_attr(q, type, &v, sizeof(v));
}

/* Send `q` and read the answer: for requests with NLM_F_ACK the error code,
 * else the first message, copied to buf. */
static int nl_call(int *fd, struct nl_req *q, char *buf, size_t size, struct nlmsghdr **ret)
{
        static const struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
        uint32_t seq = (uint32_t)(uintptr_t)q ^ (uint32_t)getpid();
        ssize_t n;
        int r;

        if (q->overflow)
                return -ENOBUFS;
        r = rtnl_connect(fd);
        if (r < 0)
                return r;
        q->u.hdr.nlmsg_seq = seq;
        if (sendto(*fd, q->u.buf, q->u.hdr.nlmsg_len, 0, (const struct sockaddr *)&kernel,
                   sizeof(kernel)) < 0)
                return -errno;
        for (;;) {
                struct nlmsghdr *h;

                n = recv(*fd, buf, size, MSG_TRUNC);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if ((size_t)n > size)
                        return -ENOBUFS;
                for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, (unsigned)n); h = NLMSG_NEXT(h, n)) {
                        if (h->nlmsg_seq != seq)
                                continue;
                        if (h->nlmsg_type == NLMSG_ERROR) {
                                const struct nlmsgerr *e = NLMSG_DATA(h);

                                if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
                                        return -EIO;
                                if (e->error == 0 && ret)
                                        return -EIO; /* an ACK where data was expected */
                                return e->error;
                        }
                        if (ret) {
                                *ret = h;
                                return 0;
                        }
                }
        }
}

static void copy_addr(const struct rtattr *a, struct hw_addr *out)
{
        size_t len = RTA_PAYLOAD(a);

        if (len == 0 || len > HW_ADDR_MAX)
                return;
        out->length = len;
        memcpy(out->bytes, RTA_DATA(a), len);
}

static void copy_str(const struct rtattr *a, char *out, size_t size)
{
        size_t len = RTA_PAYLOAD(a);

        if (len >= size)
                len = size - 1;
        memcpy(out, RTA_DATA(a), len);
        out[len] = '\0';
        out[strnlen(out, len)] = '\0';
}

static void parse_linkinfo(const struct rtattr *li, struct link_info_nl *ret)
{
        int len = (int)RTA_PAYLOAD(li);

        for (const struct rtattr *a = RTA_DATA(li); RTA_OK(a, len); a = RTA_NEXT(a, len))
                if ((a->rta_type & NLA_TYPE_MASK) == IFLA_INFO_KIND)
                        copy_str(a, ret->kind, sizeof(ret->kind));
}

static void parse_proplist(const struct rtattr *pl, struct link_info_nl *ret)
{
        int len = (int)RTA_PAYLOAD(pl);

        for (const struct rtattr *a = RTA_DATA(pl); RTA_OK(a, len); a = RTA_NEXT(a, len))
                if ((a->rta_type & NLA_TYPE_MASK) == IFLA_ALT_IFNAME &&
                    ret->n_altnames < LINK_ALTNAMES_MAX)
                        copy_str(a, ret->altnames[ret->n_altnames++], ALTNAME_MAX);
}

int rtnl_get_link_info(int *fd, int ifindex, struct link_info_nl *ret)
{
        _cleanup_free_ char *buf = malloc(NL_BUFFER_SIZE);
        struct nl_req q;
        struct nlmsghdr *h;
        struct ifinfomsg *ifi;
        int r, len;

        if (!buf)
                return -ENOMEM;
        memset(ret, 0, sizeof(*ret));
        req_init(&q, RTM_GETLINK, 0, ifindex);
        r = nl_call(fd, &q, buf, NL_BUFFER_SIZE, &h);
        if (r == -EINVAL)
                return -ENODEV;
        if (r < 0)
                return r;
        if (h->nlmsg_type != RTM_NEWLINK || h->nlmsg_len < NLMSG_LENGTH(sizeof(*ifi)))
                return -EIO;
        ifi = NLMSG_DATA(h);
        ret->iftype = ifi->ifi_type;
        ret->flags = ifi->ifi_flags;
        len = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*ifi)));
        for (struct rtattr *a = IFLA_RTA(ifi); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
                /* the kernel marks nests (IFLA_PROP_LIST) with NLA_F_NESTED */
                switch (a->rta_type & NLA_TYPE_MASK) {
                case IFLA_ADDRESS:
                        copy_addr(a, &ret->hw_addr);
                        break;
                case IFLA_PERM_ADDRESS:
                        copy_addr(a, &ret->perm_addr);
                        break;
                case IFLA_LINKINFO:
                        parse_linkinfo(a, ret);
                        break;
                case IFLA_PROP_LIST:
                        parse_proplist(a, ret);
                        break;
                default:
                        break;
                }
        }
        return 0;
}

int rtnl_set_link_properties(int *fd, int ifindex, const struct link_settings_nl *s)
{
        char buf[NL_REQUEST_MAX];
        struct nl_req q;

        if (!s->alias && (!s->hw_addr || s->hw_addr->length == 0) && s->txqueues == 0 &&
            s->rxqueues == 0 && s->txqueuelen == UINT32_MAX && s->mtu == 0 &&
            s->gso_max_size == 0 && s->gso_max_segments == 0)
                return 0;
        req_init(&q, RTM_SETLINK, NLM_F_ACK, ifindex);
        if (s->alias)
                req_attr(&q, IFLA_IFALIAS, s->alias, strlen(s->alias) + 1);
        if (s->hw_addr && s->hw_addr->length > 0)
                req_attr(&q, IFLA_ADDRESS, s->hw_addr->bytes, s->hw_addr->length);
        if (s->txqueues > 0)
                req_u32(&q, IFLA_NUM_TX_QUEUES, s->txqueues);
        if (s->rxqueues > 0)
                req_u32(&q, IFLA_NUM_RX_QUEUES, s->rxqueues);
        if (s->txqueuelen < UINT32_MAX)
                req_u32(&q, IFLA_TXQLEN, s->txqueuelen);
        if (s->mtu != 0)
                req_u32(&q, IFLA_MTU, s->mtu);
        if (s->gso_max_size > 0)
                req_u32(&q, IFLA_GSO_MAX_SIZE, s->gso_max_size);
        if (s->gso_max_segments > 0)
                req_u32(&q, IFLA_GSO_MAX_SEGS, s->gso_max_segments);
        return nl_call(fd, &q, buf, sizeof(buf), NULL);
}

int rtnl_add_altnames(int *fd, int ifindex, char *const *names, size_t n)
{
        char buf[NL_REQUEST_MAX];
        struct nl_req q;
        struct rtattr *list;

        if (n == 0)
                return 0;
        req_init(&q, RTM_NEWLINKPROP, NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL, ifindex);
        list = req_attr(&q, IFLA_PROP_LIST | NLA_F_NESTED, NULL, 0);
        if (!list)
                return -ENOBUFS;
        for (size_t i = 0; i < n; i++)
                req_attr(&q, IFLA_ALT_IFNAME, names[i], strlen(names[i]) + 1);
        if (q.overflow)
                return -ENOBUFS;
        list->rta_len = (unsigned short)(q.u.buf + q.u.hdr.nlmsg_len - (char *)list);
        return nl_call(fd, &q, buf, sizeof(buf), NULL);
}

static int ethtool_connect(int *fd)
{
        if (*fd >= 0)
                return 0;
        *fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (*fd < 0)
                *fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
        return *fd < 0 ? -errno : 0;
}

static int ethtool_ioctl(int *fd, const char *ifname, void *data)
{
        struct ifreq ifr = { .ifr_data = data };
        int r;

        if (strlen(ifname) >= sizeof(ifr.ifr_name))
                return -EINVAL;
        r = ethtool_connect(fd);
        if (r < 0)
                return r;
        memcpy(ifr.ifr_name, ifname, strlen(ifname) + 1);
        return ioctl(*fd, SIOCETHTOOL, &ifr) < 0 ? -errno : 0;
}

int ethtool_get_driver(int *fd, const char *ifname, char *buf, size_t size)
{
        struct ethtool_drvinfo info = { .cmd = ETHTOOL_GDRVINFO };
        int r;

        r = ethtool_ioctl(fd, ifname, &info);
        if (r < 0)
                return r;
        info.driver[sizeof(info.driver) - 1] = '\0';
        if (!info.driver[0])
                return -ENODATA;
        if ((size_t)snprintf(buf, size, "%s", info.driver) >= size)
                return -ENAMETOOLONG;
        return 0;
}

int ethtool_get_perm_addr(int *fd, const char *ifname, struct hw_addr *ret)
{
        /* struct ethtool_perm_addr followed by room for the address */
        union {
                struct ethtool_perm_addr addr;
                uint8_t buf[sizeof(struct ethtool_perm_addr) + HW_ADDR_MAX];
        } ep;
        int r;

        memset(&ep, 0, sizeof(ep));
        ep.addr.cmd = ETHTOOL_GPERMADDR;
        ep.addr.size = HW_ADDR_MAX;
        r = ethtool_ioctl(fd, ifname, &ep);
        if (r < 0)
                return r;
        if (ep.addr.size == 0)
                return -ENODATA;
        if (ep.addr.size > HW_ADDR_MAX)
                return -EINVAL;
        ret->length = ep.addr.size;
        memcpy(ret->bytes, ep.buf + sizeof(struct ethtool_perm_addr), ep.addr.size);
        return 0;
}
