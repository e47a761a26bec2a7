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
#include <unistd.h>

#include "builtins/link-netlink.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "shared/rtnl.h"

#define NL_BUFFER_SIZE (64 * 1024)

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
        struct rtnl_req q;
        struct nlmsghdr *h;
        struct ifinfomsg *ifi;
        int r, len;

        if (!buf)
                return -ENOMEM;
        memset(ret, 0, sizeof(*ret));
        rtnl_req_link(&q, RTM_GETLINK, 0, ifindex);
        r = rtnl_call(fd, &q, buf, NL_BUFFER_SIZE, &h);
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
        struct rtnl_req q;

        if (!s->alias && (!s->hw_addr || s->hw_addr->length == 0) && s->txqueues == 0 &&
            s->rxqueues == 0 && s->txqueuelen == UINT32_MAX && s->mtu == 0 &&
            s->gso_max_size == 0 && s->gso_max_segments == 0)
                return 0;
        rtnl_req_link(&q, RTM_SETLINK, NLM_F_ACK, ifindex);
        if (s->alias)
                rtnl_req_attr(&q, IFLA_IFALIAS, s->alias, strlen(s->alias) + 1);
        if (s->hw_addr && s->hw_addr->length > 0)
                rtnl_req_attr(&q, IFLA_ADDRESS, s->hw_addr->bytes, s->hw_addr->length);
        if (s->txqueues > 0)
                rtnl_req_u32(&q, IFLA_NUM_TX_QUEUES, s->txqueues);
        if (s->rxqueues > 0)
                rtnl_req_u32(&q, IFLA_NUM_RX_QUEUES, s->rxqueues);
        if (s->txqueuelen < UINT32_MAX)
                rtnl_req_u32(&q, IFLA_TXQLEN, s->txqueuelen);
        if (s->mtu != 0)
                rtnl_req_u32(&q, IFLA_MTU, s->mtu);
        if (s->gso_max_size > 0)
                rtnl_req_u32(&q, IFLA_GSO_MAX_SIZE, s->gso_max_size);
        if (s->gso_max_segments > 0)
                rtnl_req_u32(&q, IFLA_GSO_MAX_SEGS, s->gso_max_segments);
        return rtnl_call(fd, &q, NULL, 0, NULL);
}

int rtnl_add_altnames(int *fd, int ifindex, char *const *names, size_t n)
{
        struct rtnl_req q;
        struct rtattr *list;

        if (n == 0)
                return 0;
        rtnl_req_link(&q, RTM_NEWLINKPROP, NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL, ifindex);
        list = rtnl_req_nest_begin(&q, IFLA_PROP_LIST);
        for (size_t i = 0; i < n; i++)
                rtnl_req_str(&q, IFLA_ALT_IFNAME, names[i]);
        if (rtnl_req_nest_end(&q, list) < 0)
                return -ENOBUFS;
        return rtnl_call(fd, &q, NULL, 0, NULL);
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
