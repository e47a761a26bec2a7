/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (one netlink socket per netif_rename() call) */
/* Renaming a network interface with rtnetlink (RTM_SETLINK + IFLA_IFNAME),
 * for NAME= on add (udevd(8) DESCRIPTION). */

#include <errno.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "rules/rules-exec.h"
#include "shared/macro.h"
#include "shared/rtnl.h"

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

/* One link request (attribute `attr_type` holding the string `value`, nested
 * in IFLA_PROP_LIST when `in_prop_list`) on the socket *fd, opened on first
 * use; waits (bounded) for its acknowledgement: 0 or the kernel's -errno. */
static int rtnl_request(int *fd, uint16_t type, uint16_t flags, int ifindex,
                        uint16_t attr_type, const char *value, bool in_prop_list)
{
        struct rtnl_req q;
        struct rtattr *nest = NULL;

        if (strlen(value) + 1 > ALTNAME_SIZE)
                return -EINVAL;
        rtnl_req_link(&q, type, NLM_F_ACK | flags, ifindex);
        if (in_prop_list)
                nest = rtnl_req_nest_begin(&q, IFLA_PROP_LIST);
        rtnl_req_str(&q, attr_type, value);
        if (in_prop_list && rtnl_req_nest_end(&q, nest) < 0)
                return -ENOBUFS;
        return rtnl_call(fd, &q, NULL, 0, NULL);
}

int netif_rename(int ifindex, const char *name, const char *old_name)
{
        _cleanup_close_ int fd = -1;
        size_t nl = strlen(name);
        int r;

        if (ifindex <= 0 || nl == 0 || nl >= IFNAMSIZ)
                return -EINVAL;
        r = rtnl_request(&fd, RTM_SETLINK, 0, ifindex, IFLA_IFNAME, name, false);
        if (r != -EEXIST)
                return r;
        /* The name may be an alternative name of this very interface (given
         * by the initramfs' daemon, say): the kernel counts it as taken. Drop
         * it from this interface's alternative names -- which fails unless
         * it is one of them -- and rename again; the old name becomes an
         * alternative name in its place, as systemd-udevd does. */
        if (rtnl_request(&fd, RTM_DELLINKPROP, 0, ifindex, IFLA_ALT_IFNAME, name, true) < 0)
                return -EEXIST;
        r = rtnl_request(&fd, RTM_SETLINK, 0, ifindex, IFLA_IFNAME, name, false);
        if (r < 0) {
                /* put the alternative name back; the rename error is what counts */
                (void)rtnl_request(&fd, RTM_NEWLINKPROP, NLM_F_CREATE | NLM_F_EXCL, ifindex,
                                   IFLA_ALT_IFNAME, name, true);
                return r;
        }
        if (old_name && *old_name)
                (void)rtnl_request(&fd, RTM_NEWLINKPROP, NLM_F_CREATE | NLM_F_EXCL, ifindex,
                                   IFLA_ALT_IFNAME, old_name, true);
        return 0;
}
