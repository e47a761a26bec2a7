/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (each caller owns its sockets) */
#pragma once
/* The rtnetlink and ethtool requests of net_setup_link: read a link's type,
 * flags, kind, addresses and alternative names; set alias/MAC/MTU/queues;
 * add alternative names; driver name and permanent address via SIOCETHTOOL.
 * Sockets are opened lazily into the int the caller passes (-1 = not yet)
 * and belong to the caller (close them with safe_close()). The rtnetlink
 * requests go through shared/rtnl.h (sequence check, 5 s bound: -ETIMEDOUT). */

#include <stddef.h>
#include <stdint.h>

#include "builtins/builtin-util.h"

#define LINK_KIND_MAX 64
#define LINK_ALTNAMES_MAX 64
#define ALTNAME_MAX 128

struct link_info_nl {
        unsigned short iftype;
        unsigned flags;
        char kind[LINK_KIND_MAX];            /* "" if none */
        struct hw_addr hw_addr;              /* length 0 if none */
        struct hw_addr perm_addr;
        char altnames[LINK_ALTNAMES_MAX][ALTNAME_MAX];
        size_t n_altnames;
};

/* RTM_GETLINK. 0, -ENODEV (no such link), -errno. */
int rtnl_get_link_info(int *fd, int ifindex, struct link_info_nl *ret);

struct link_settings_nl {
        const char *alias;                   /* NULL = unchanged */
        const struct hw_addr *hw_addr;       /* NULL or length 0 = unchanged */
        uint32_t txqueues, rxqueues;         /* 0 = unchanged */
        uint32_t txqueuelen;                 /* UINT32_MAX = unchanged */
        uint32_t mtu;                        /* 0 = unchanged */
        uint32_t gso_max_size;               /* 0 = unchanged */
        uint32_t gso_max_segments;           /* 0 = unchanged */
};
/* RTM_SETLINK with what is set (nothing sent if nothing is). 0 or -errno. */
int rtnl_set_link_properties(int *fd, int ifindex, const struct link_settings_nl *s);
/* RTM_NEWLINKPROP with IFLA_ALT_IFNAME entries (nothing sent if n == 0). */
int rtnl_add_altnames(int *fd, int ifindex, char *const *names, size_t n);

/* ETHTOOL_GDRVINFO: -ENODATA if the driver name is empty. */
int ethtool_get_driver(int *fd, const char *ifname, char *buf, size_t size);
/* ETHTOOL_GPERMADDR */
int ethtool_get_perm_addr(int *fd, const char *ifname, struct hw_addr *ret);
