/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (per-thread .link configuration and sockets, see below) */
/* net_setup_link: match the interface against the .link files, apply the [Link]
 * settings tudev supports (link-config.h) and compute the interface name, as
 * systemd 252 does: ID_NET_DRIVER, ID_NET_LINK_FILE, ID_NET_NAME, plus the
 * properties of systemd 256's Property=, ImportProperty=, UnsetProperty=. When
 * builtins_follow_systemd_257() also as systemd 257 does:
 * ID_NET_LINK_FILE_DROPINS, and on events other than add/bind/move no matching
 * (the previous record's ID_NET_LINK_FILE and _DROPINS, ID_NET_NAME = the
 * current name); ID_NET_DRIVER stays (systemd 252's rules read it, 257's get it
 * from net_driver). With `test` (udevadm test-builtin, udevadm test) nothing is
 * changed on the interface.
 *
 * Each worker thread loads the .link files on first use into _Thread_local
 * state (with its rtnetlink and ethtool sockets); builtins_reload() bumps a
 * generation counter so every thread reloads on its next use, and
 * builtin_net_setup_link_thread_exit() releases the calling thread's state. */
#include <errno.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "builtins/builtin-util.h"
#include "builtins/builtins-internal.h"
#include "builtins/link-config.h"
#include "builtins/link-netlink.h"
#include "device/device.h"
#include "event/udev-event.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "shared/siphash.h"

#define NET_NAME_ENUM 1
#define NET_NAME_PREDICTABLE 2
#define NET_NAME_USER 3
#define NET_NAME_RENAMED 4
#define NET_ADDR_PERM 0
#define NET_ADDR_RANDOM 1
#define NET_ADDR_STOLEN 2
#define NET_ADDR_SET 3
#define DRIVER_MAX 64
#ifndef ARPHRD_IP6GRE
#define ARPHRD_IP6GRE 823
#endif

/* ------------------------------------------------------------ per-thread state */

struct nsl_state {
        unsigned generation;
        struct link_config_set set;
        int rtnl_fd, ethtool_fd;
};

static _Thread_local struct nsl_state *tstate;
static atomic_uint generation;
static pthread_mutex_t baseline_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t baseline;       /* fingerprint at the last reload / first load */
static bool baseline_set;

static void state_free(struct nsl_state *s)
{
        if (!s)
                return;
        link_config_set_free(&s->set);
        safe_close(s->rtnl_fd);
        safe_close(s->ethtool_fd);
        free(s);
}

static struct nsl_state *get_state(void)
{
        unsigned gen = atomic_load(&generation);
        struct nsl_state *s = tstate;
        uint64_t fp;

        if (s && s->generation == gen)
                return s;
        if (!s) {
                s = calloc(1, sizeof(*s));
                if (!s)
                        return NULL;
                s->rtnl_fd = s->ethtool_fd = -1;
                tstate = s;
        }
        fp = link_config_fingerprint();
        if (link_config_load(&s->set) < 0) {
                link_config_set_free(&s->set);
                return NULL;
        }
        s->generation = gen;
        pthread_mutex_lock(&baseline_lock);
        if (!baseline_set) {
                baseline = fp;
                baseline_set = true;
        }
        pthread_mutex_unlock(&baseline_lock);
        log_debug("Created link configuration context.");
        return s;
}

void builtin_net_setup_link_thread_exit(void)
{
        state_free(tstate);
        tstate = NULL;
}

bool builtin_net_setup_link_should_reload(void)
{
        bool set;
        uint64_t b;

        pthread_mutex_lock(&baseline_lock);
        set = baseline_set;
        b = baseline;
        pthread_mutex_unlock(&baseline_lock);
        if (!set)
                return false;
        if (link_config_fingerprint() == b)
                return false;
        log_debug("Link configuration context needs reloading.");
        return true;
}

void builtin_net_setup_link_reload(void)
{
        uint64_t fp = link_config_fingerprint();

        pthread_mutex_lock(&baseline_lock);
        baseline = fp;
        baseline_set = true;
        pthread_mutex_unlock(&baseline_lock);
        atomic_fetch_add(&generation, 1);
}

/* ------------------------------------------------------------ the link */

struct link {
        struct udev_event *ev;
        const char *ifname;
        int ifindex;
        unsigned name_assign_type, addr_assign_type;
        struct link_info_nl nl;
        char driver[DRIVER_MAX];
        bool has_driver;
        const struct link_config *config;
        const char *new_name;
};

static void sysattr_unsigned(struct device *d, const char *name, unsigned *ret)
{
        const char *v;
        int r;

        r = device_get_sysattr(d, name, &v);
        if (r < 0) {
                log_debug_errno(r, "%s: Failed to query %s: %m", device_sysname(d), name);
                return;
        }
        if (parse_atou(v, ret) < 0)
                log_warning("%s: Failed to parse %s \"%s\"", device_sysname(d), name, v);
}

static int link_new(struct nsl_state *s, struct udev_event *ev, struct link *l)
{
        int r;

        l->ev = ev;
        l->ifname = device_sysname(ev->dev);
        r = device_get_ifindex(ev->dev, &l->ifindex);
        if (r < 0)
                return r;
        sysattr_unsigned(ev->dev, "name_assign_type", &l->name_assign_type);
        sysattr_unsigned(ev->dev, "addr_assign_type", &l->addr_assign_type);
        r = rtnl_get_link_info(&s->rtnl_fd, l->ifindex, &l->nl);
        if (r < 0)
                return r;
        if (l->nl.hw_addr.length > 0 && l->nl.perm_addr.length == 0) {
                r = ethtool_get_perm_addr(&s->ethtool_fd, l->ifname, &l->nl.perm_addr);
                if (r < 0)
                        log_debug_errno(r, "%s: Failed to get permanent hardware address, "
                                        "ignoring: %m", l->ifname);
        }
        r = ethtool_get_driver(&s->ethtool_fd, l->ifname, l->driver, sizeof(l->driver));
        if (r < 0)
                log_debug_errno(r, "%s: Failed to get driver, ignoring: %m", l->ifname);
        else
                l->has_driver = true;
        return 0;
}

static const char *event_property(void *userdata, const char *key)
{
        const struct udev_event *ev = userdata;

        return proplist_get(&ev->props, key);
}

static int link_get_config(struct nsl_state *s, struct link *l)
{
        const char *devtype = NULL;
        struct link_match_input in = {
                .hw_addr = &l->nl.hw_addr,
                .perm_addr = &l->nl.perm_addr,
                .driver = l->has_driver ? l->driver : NULL,
                .kind = l->nl.kind[0] ? l->nl.kind : NULL,
                .ifname = l->ifname,
                .path = proplist_get(&l->ev->props, "ID_PATH"),
                .get_property = event_property,
                .userdata = l->ev,
        };

        /* loopback interfaces are never configured by .link files */
        if (l->nl.flags & IFF_LOOPBACK)
                return -ENOENT;
        if (device_get_devtype(l->ev->dev, &devtype) >= 0 && devtype && *devtype)
                in.iftype = devtype;
        else
                in.iftype = arphrd_to_name(l->nl.iftype);
        for (const struct link_config *c = s->set.first; c; c = c->next) {
                if (!link_match_test(&c->match, &in))
                        continue;
                if (c->match.ifname && l->name_assign_type == NET_NAME_ENUM) {
                        bool star = false;

                        for (char **p = c->match.ifname; *p; p++)
                                star = star || streq(*p, "*");
                        if (!star)
                                log_warning("%s: Config file %s is applied to device based on "
                                            "potentially unpredictable interface name.",
                                            l->ifname, c->filename);
                }
                log_debug("%s: Config file %s is applied", l->ifname, c->filename);
                l->config = c;
                return 0;
        }
        return -ENOENT;
}

/* ------------------------------------------------------------ MAC address */

static bool ether_valid(const struct hw_addr *a)
{
        bool zero = true, bcast = true;

        for (size_t i = 0; i < 6; i++) {
                zero = zero && a->bytes[i] == 0;
                bcast = bcast && a->bytes[i] == 0xff;
        }
        return !zero && !bcast;
}

/* systemd's hw_addr_is_valid() for generated addresses */
static bool generated_valid(const struct link *l, const struct hw_addr *a)
{
        if (l->nl.iftype == ARPHRD_ETHER)
                return ether_valid(a);
        for (size_t i = 12; i < 20; i++)
                if (a->bytes[i])
                        return true;
        return false;
}

static size_t arphrd_addr_len(unsigned type)
{
        switch (type) {
        case ARPHRD_ETHER:
                return 6;
        case ARPHRD_INFINIBAND:
                return 20;
        case ARPHRD_TUNNEL:
        case ARPHRD_SIT:
        case ARPHRD_IPGRE:
                return 4;
        case ARPHRD_TUNNEL6:
        case ARPHRD_IP6GRE:
                return 16;
        default:
                return 0;
        }
}

/* systemd's net_verify_hardware_address(). */
static int verify_hw_addr(const struct link *l, bool is_static, struct hw_addr *a)
{
        bool zero = true;

        if (a->length == 0)
                return 0;
        if (a->length != arphrd_addr_len(l->nl.iftype)) {
                if (is_static)
                        log_warning("%s: Specified MAC address with invalid length, refusing.",
                                    l->ifname);
                return -EINVAL;
        }
        switch (l->nl.iftype) {
        case ARPHRD_ETHER:
                if (!ether_valid(a)) {
                        if (is_static)
                                log_warning("%s: Specified MAC address is null or broadcast, "
                                            "refusing.", l->ifname);
                        return -EINVAL;
                }
                if (a->bytes[0] & 0x01) {
                        if (is_static)
                                log_warning("%s: Specified MAC address has the multicast bit "
                                            "set, clearing the bit.", l->ifname);
                        a->bytes[0] &= 0xfe;
                }
                if (!is_static && !(a->bytes[0] & 0x02))
                        a->bytes[0] |= 0x02; /* locally administered */
                return 0;
        case ARPHRD_INFINIBAND:
                for (size_t i = 12; i < 20; i++)
                        zero = zero && a->bytes[i] == 0;
                if (zero)
                        return -EINVAL;
                memcpy(a->bytes, l->nl.hw_addr.bytes, 12);
                return 0;
        default:
                if (is_static)
                        log_warning("%s: Unsupported interface type %u to set MAC address, "
                                    "refusing.", l->ifname, l->nl.iftype);
                return -EINVAL;
        }
}

static const uint8_t hash_key[16] = { 0xd3, 0x1e, 0x48, 0xfa, 0x90, 0xfe, 0x4b, 0x4c,
                                      0x9d, 0xaf, 0xd5, 0xd7, 0xa1, 0xb1, 0x2e, 0x8a };

/* The stable name the persistent MAC address is derived from. */
static const char *persistent_name(const struct link *l)
{
        static const char *const fields[] = { "ID_NET_NAME_ONBOARD", "ID_NET_NAME_SLOT",
                                              "ID_NET_NAME_PATH", "ID_NET_NAME_MAC" };

        for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
                const char *v = proplist_get(&l->ev->props, fields[i]);

                if (v)
                        return v;
        }
        return naming_scheme_has(NAMING_STABLE_VIRTUAL_MACS) ? l->ifname : NULL;
}

static int persistent_bytes(const struct link *l, uint8_t *p, size_t len)
{
        const char *name = persistent_name(l);
        uint8_t data[16 + 256];
        uint64_t h;
        int r;

        if (!name)
                return log_debug_errno(-ENODATA, "%s: No stable identifying information found",
                                       l->ifname);
        if (strlen(name) > sizeof(data) - 16)
                return -ENAMETOOLONG;
        r = read_machine_id(data);
        if (r < 0)
                return r;
        memcpy(data + 16, name, strlen(name));
        h = siphash24(data, 16 + strlen(name), hash_key);
        /* little-endian bytes of the hash, as systemd's htole64() + memcpy */
        for (size_t i = 0; i < len && i < 8; i++)
                p[i] = (uint8_t)(h >> (8 * i));
        return 0;
}

/* The MAC address to set, length 0 if none (systemd's link_generate_new_hw_addr()). */
static int new_hw_addr(const struct link *l, struct hw_addr *ret)
{
        const struct link_config *c = l->config;
        struct hw_addr a = { 0 };
        bool is_static = false;
        size_t off = 0, len;
        int r;

        *ret = (struct hw_addr){ 0 };
        if (l->nl.hw_addr.length == 0)
                goto finalize;
        if (c->mac_policy == MAC_POLICY_NONE) {
                a = c->mac;
                is_static = true;
                goto finalize;
        }
        if (l->nl.iftype != ARPHRD_ETHER && l->nl.iftype != ARPHRD_INFINIBAND)
                goto finalize;
        if (l->addr_assign_type == NET_ADDR_SET || l->addr_assign_type == NET_ADDR_STOLEN)
                goto finalize;
        if (l->addr_assign_type != NET_ADDR_RANDOM && l->addr_assign_type != NET_ADDR_PERM) {
                log_warning("%s: Unknown addr_assign_type %u, ignoring", l->ifname,
                            l->addr_assign_type);
                goto finalize;
        }
        if ((c->mac_policy == MAC_POLICY_RANDOM) == (l->addr_assign_type == NET_ADDR_RANDOM))
                goto finalize;
        a.length = arphrd_addr_len(l->nl.iftype);
        if (l->nl.iftype == ARPHRD_INFINIBAND)
                off = 12;
        len = a.length - off;
        if (c->mac_policy == MAC_POLICY_RANDOM) {
                for (;;) {
                        if (getrandom(a.bytes + off, len, 0) != (ssize_t)len)
                                return -EIO;
                        if (generated_valid(l, &a))
                                break;
                }
        } else {
                r = persistent_bytes(l, a.bytes + off, len);
                if (r < 0)
                        return log_warning_errno(r, "%s: Could not generate persistent MAC "
                                                 "address: %m", l->ifname);
                if (!generated_valid(l, &a))
                        return log_warning_errno(-EINVAL, "%s: Could not generate valid "
                                                 "persistent MAC address", l->ifname);
        }
finalize:
        r = verify_hw_addr(l, is_static, &a);
        if (r < 0)
                return r;
        if (a.length == l->nl.hw_addr.length &&
            memcmp(a.bytes, l->nl.hw_addr.bytes, a.length) == 0)
                return 0;
        *ret = a;
        return 0;
}

static void apply_rtnl_settings(struct nsl_state *s, struct link *l)
{
        const struct link_config *c = l->config;
        struct hw_addr mac;
        struct link_settings_nl set = {
                .alias = c->alias,
                .hw_addr = &mac,
                .txqueues = c->txqueues,
                .rxqueues = c->rxqueues,
                .txqueuelen = c->txqueuelen,
                .mtu = c->mtu,
                .gso_max_size = c->gso_max_size > UINT32_MAX ? UINT32_MAX :
                                                               (uint32_t)c->gso_max_size,
                .gso_max_segments = c->gso_max_segments,
        };
        char str[HW_ADDR_STR_MAX];
        int r;

        if (new_hw_addr(l, &mac) < 0)
                mac.length = 0;
        if (mac.length > 0)
                log_debug("%s: Applying %s MAC address: %s", l->ifname,
                          c->mac_policy == MAC_POLICY_NONE ? "static" :
                          c->mac_policy == MAC_POLICY_PERSISTENT ? "persistent" : "random",
                          hw_addr_to_string(&mac, false, str));
        r = rtnl_set_link_properties(&s->rtnl_fd, l->ifindex, &set);
        if (r < 0)
                log_warning_errno(r, "%s: Could not set Alias=, MACAddress=/MACAddressPolicy=, "
                                  "TransmitQueues=, ReceiveQueues=, TransmitQueueLength=, "
                                  "MTUBytes=, GenericSegmentOffloadMaxBytes= or "
                                  "GenericSegmentOffloadMaxSegments=, ignoring: %m", l->ifname);
}

/* ------------------------------------------------------------ names */

/* net.ifnames=0 on the kernel command line disables NamePolicy= (read once). */
static bool name_policy_enabled = true;
static pthread_once_t name_policy_once = PTHREAD_ONCE_INIT;

static void name_policy_init(void)
{
        _cleanup_free_ char *v = NULL;
        int r, b;

        r = cmdline_get_key("net.ifnames", true, &v);
        if (r <= 0 || !v)
                return;
        b = parse_boolean(v);
        if (b < 0) {
                log_warning("Failed to parse net.ifnames= kernel command line option, ignoring");
                return;
        }
        if (!b)
                log_info("Network interface NamePolicy= disabled on kernel command line.");
        name_policy_enabled = b;
}

static bool enable_name_policy(void)
{
        pthread_once(&name_policy_once, name_policy_init);
        return name_policy_enabled;
}

static const char *policy_property(int policy)
{
        switch (policy) {
        case NAMEPOLICY_DATABASE: return "ID_NET_NAME_FROM_DATABASE";
        case NAMEPOLICY_ONBOARD: return "ID_NET_NAME_ONBOARD";
        case NAMEPOLICY_SLOT: return "ID_NET_NAME_SLOT";
        case NAMEPOLICY_PATH: return "ID_NET_NAME_PATH";
        case NAMEPOLICY_MAC: return "ID_NET_NAME_MAC";
        default: return NULL;
        }
}

static void generate_new_name(struct link *l)
{
        const struct link_config *c = l->config;
        bool user = l->name_assign_type == NET_NAME_USER ||
                    l->name_assign_type == NET_NAME_RENAMED;

        l->new_name = l->ifname;
        if (l->ev->action == UEVENT_ACTION_MOVE) {
                log_debug("%s: Skipping to apply Name= and NamePolicy= on 'move' uevent.",
                          l->ifname);
                return;
        }
        if (user && !naming_scheme_has(NAMING_ALLOW_RERENAMES)) {
                log_debug("%s: Device already has a name given by userspace, not renaming.",
                          l->ifname);
                return;
        }
        if (c->name_policy && enable_name_policy()) {
                for (const int *p = c->name_policy; *p != _NAMEPOLICY_END; p++) {
                        const char *n;

                        if (*p == NAMEPOLICY_KERNEL) {
                                if (l->name_assign_type != NET_NAME_PREDICTABLE)
                                        continue;
                                log_debug("%s: Policy *kernel*: keeping predictable kernel name",
                                          l->ifname);
                                return;
                        }
                        if (*p == NAMEPOLICY_KEEP) {
                                if (!user)
                                        continue;
                                log_debug("%s: Policy *keep*: keeping existing userspace name",
                                          l->ifname);
                                return;
                        }
                        n = proplist_get(&l->ev->props, policy_property(*p));
                        if (link_ifname_valid(n, false)) {
                                log_debug("%s: Policy *%s* yields \"%s\".", l->ifname,
                                          name_policy_to_string(*p), n);
                                l->new_name = n;
                                return;
                        }
                }
        }
        if (c->name) {
                log_debug("%s: Policies didn't yield a name, using specified Name=%s.",
                          l->ifname, c->name);
                l->new_name = c->name;
                return;
        }
        log_debug("%s: Policies didn't yield a name and Name= is not given, not renaming.",
                  l->ifname);
}

static int cmp_str(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* AlternativeName= + AlternativeNamesPolicy= minus the current name, the new
 * name (it is about to become the interface's name, and the kernel refuses a
 * rename to one of its alternative names) and the existing alternative
 * names, sorted, without duplicates. */
static void apply_alternative_names(struct nsl_state *s, struct link *l)
{
        const struct link_config *c = l->config;
        char *names[LINK_ALTNAMES_MAX * 2];
        size_t n = 0, m = 0;
        int r;

        for (char **p = c->alt_names; p && *p && n < ARRAY_SIZE(names); p++)
                names[n++] = *p;
        for (const int *p = c->alt_names_policy; p && *p != _NAMEPOLICY_END; p++) {
                const char *v = proplist_get(&l->ev->props, policy_property(*p));

                if (v && *v && n < ARRAY_SIZE(names))
                        names[n++] = (char *)v;
        }
        for (size_t i = 0; i < n; i++) {
                bool drop = streq(names[i], l->ifname) ||
                            (l->new_name && streq(names[i], l->new_name));

                for (size_t j = 0; j < l->nl.n_altnames && !drop; j++)
                        drop = streq(names[i], l->nl.altnames[j]);
                for (size_t j = 0; j < m && !drop; j++)
                        drop = streq(names[i], names[j]);
                if (!drop)
                        names[m++] = names[i];
        }
        if (m == 0)
                return;
        qsort(names, m, sizeof(char *), cmp_str);
        r = rtnl_add_altnames(&s->rtnl_fd, l->ifindex, names, m);
        if (r < 0)
                log_full_errno(r == -EOPNOTSUPP ? LOG_DEBUG : LOG_WARNING, r,
                               "%s: Could not set AlternativeName= or apply "
                               "AlternativeNamesPolicy=, ignoring: %m", l->ifname);
}

/* The previous database record's value of `key`, or NULL. */
static const char *old_db_property(const struct udev_event *ev, const char *key)
{
        size_t klen = strlen(key);
        const char *found = NULL;

        if (!ev->old_db)
                return NULL;
        /* a later "E:" line of a key wins, as in db_read() */
        for (size_t i = 0; i < ev->old_db->properties.n; i++) {
                const char *e = ev->old_db->properties.items[i];

                if (strneq(e, key, klen) && e[klen] == '=')
                        found = e + klen + 1;
        }
        return found;
}

/* systemd 256's [Link] ImportProperty=, Property=, UnsetProperty=, in that
 * order (a property both imported and set takes Property='s value; unset
 * wins over both). Failures are ignored as systemd ignores them. */
static void apply_udev_properties(struct link *l, bool test)
{
        const struct link_config *c = l->config;
        struct udev_event *ev = l->ev;

        for (char **p = c->import_properties; p && *p; p++) {
                const char *v = old_db_property(ev, *p);

                if (v)
                        (void)builtin_add_property(ev, test, *p, v);
        }
        for (char **p = c->properties; p && *p; p++) {
                const char *eq = strchr(*p, '=');
                char *key = eq ? strndup(*p, (size_t)(eq - *p)) : NULL;

                if (!key)
                        continue;
                (void)builtin_add_property(ev, test, key, eq + 1);
                free(key);
        }
        for (char **p = c->unset_properties; p && *p; p++)
                (void)builtin_add_property(ev, test, *p, NULL);
}

static void apply_config(struct nsl_state *s, struct link *l, bool test)
{
        enum uevent_action a = l->ev->action;

        if (a != UEVENT_ACTION_ADD && a != UEVENT_ACTION_BIND && a != UEVENT_ACTION_MOVE) {
                log_debug("%s: Skipping to apply .link settings on '%s' uevent.", l->ifname,
                          uevent_action_to_string(a));
                l->new_name = l->ifname;
                return;
        }
        if (!test)
                apply_rtnl_settings(s, l);
        generate_new_name(l);
        if (!test)
                apply_alternative_names(s, l);
        apply_udev_properties(l, test);
}

/* systemd 257's ID_NET_LINK_FILE_DROPINS: the drop-in paths joined by ':',
 * each with ':', '\\' and unprintable bytes written as "\\xNN". NULL if none
 * (the property is then removed). */
static char *dropins_joined(const struct link_config *c)
{
        size_t len = 1;
        char *out, *w;

        if (!c->dropins || !c->dropins[0])
                return NULL;
        for (char **d = c->dropins; *d; d++)
                len += strlen(*d) * 4 + 1;
        out = malloc(len);
        if (!out)
                return NULL;
        w = out;
        for (char **d = c->dropins; *d; d++) {
                if (d != c->dropins)
                        *w++ = ':';
                for (const unsigned char *p = (const unsigned char *)*d; *p; p++)
                        if (*p < ' ' || *p >= 127 || *p == '\\' || *p == ':')
                                w += sprintf(w, "\\x%02x", *p);
                        else
                                *w++ = (char)*p;
        }
        *w = '\0';
        return out;
}

/* systemd 257 on change (and other non-add) events: no .link matching, the
 * previous event's file names are kept and ID_NET_NAME is the current name. */
static int keep_previous_link(struct udev_event *ev, bool test)
{
        static const char *const keys[] = { "ID_NET_LINK_FILE", "ID_NET_LINK_FILE_DROPINS" };
        int r;

        log_debug("%s: Not applying .link settings on '%s' uevent.", device_sysname(ev->dev),
                  uevent_action_to_string(ev->action));
        for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
                const char *v = old_db_property(ev, keys[i]);

                if (v) {
                        r = builtin_add_property(ev, test, keys[i], v);
                        if (r < 0)
                                return r;
                }
        }
        return builtin_add_property(ev, test, "ID_NET_NAME", device_sysname(ev->dev));
}

int builtin_net_setup_link(struct udev_event *ev, int argc, char *argv[], bool test)
{
        struct nsl_state *s;
        struct link *l;
        int r;

        (void)argv;
        if (argc > 1)
                return log_error_errno(-EINVAL, "This program takes no arguments.");
        s = get_state();
        if (!s)
                return -ENOMEM;
        l = calloc(1, sizeof(*l));
        if (!l)
                return -ENOMEM;
        r = link_new(s, ev, l);
        if (r == -ENODEV) {
                log_debug("%s: Link vanished while getting information, ignoring.",
                          device_sysname(ev->dev));
                r = 0;
                goto out;
        }
        if (r < 0) {
                log_warning_errno(r, "%s: Failed to get link information: %m",
                                  device_sysname(ev->dev));
                goto out;
        }
        if (l->has_driver) {
                r = builtin_add_property(ev, test, "ID_NET_DRIVER", l->driver);
                if (r < 0)
                        goto out;
        }
        if (builtins_follow_systemd_257() && ev->action != UEVENT_ACTION_ADD &&
            ev->action != UEVENT_ACTION_BIND && ev->action != UEVENT_ACTION_MOVE) {
                r = keep_previous_link(ev, test);
                goto out;
        }
        r = link_get_config(s, l);
        if (r == -ENOENT) {
                log_debug("%s: No matching link configuration found, ignoring device.",
                          l->ifname);
                r = 0;
                goto out;
        }
        apply_config(s, l, test);
        r = builtin_add_property(ev, test, "ID_NET_LINK_FILE", l->config->filename);
        if (r >= 0 && builtins_follow_systemd_257()) {
                char *joined = dropins_joined(l->config);

                r = builtin_add_property(ev, test, "ID_NET_LINK_FILE_DROPINS", joined);
                free(joined);
        }
        if (r >= 0 && l->new_name)
                r = builtin_add_property(ev, test, "ID_NET_NAME", l->new_name);
out:
        free(l);
        return r;
}
