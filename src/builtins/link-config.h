/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (a link_config_set is used by one thread; loading is reentrant) */
#pragma once
/* systemd.link files for the net_setup_link builtin
 * (systemd 252's src/udev/net/link-config.c; systemd.link(5)):
 * search path, basename override and masking, "<name>.d/<x>.conf" drop-ins, the
 * config parser's line rules, [Match] evaluation and the [Link] keys tudev
 * applies (Name, NamePolicy, AlternativeName, AlternativeNamesPolicy,
 * MACAddressPolicy, MACAddress, Alias, MTUBytes, TransmitQueueLength,
 * TransmitQueues, ReceiveQueues, GenericSegmentOffloadMax*, and systemd
 * 256's Property, ImportProperty and UnsetProperty, which net_setup_link
 * applies to the event's properties). Every other systemd 252 [Link]/[SR-IOV]
 * key, and systemd 256's ReceivePacketSteeringCPUMask, is accepted and
 * ignored with one info message per key and file (drop-ins included) naming
 * file:line and the key (tudev-link(5)); unknown keys and sections are warned
 * about as systemd does.
 * Property=, ImportProperty= and UnsetProperty= resolve the specifiers of
 * systemd.link(5) (%a %A %b %B %H %l %m %M %o %q %T %v %V %w %W %%) when the
 * file is loaded; a word with an unknown or unresolvable specifier is
 * ignored with a warning.
 *
 * Search path (first directory wins for a basename): /etc/systemd/network,
 * /run/systemd/network, /usr/local/lib/systemd/network,
 * /usr/lib/systemd/network, /lib/systemd/network.
 * TEST ONLY: $TUDEV_NETWORK_DIRS (directories separated by ':') replaces the
 * search path; read once per process. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "builtins/builtin-util.h"

#define LINK_DIRS_ENV "TUDEV_NETWORK_DIRS"
#define LINK_FILE_MAX (1024 * 1024) /* bigger .link files are refused */
#define LINK_LINE_MAX (1024 * 1024) /* systemd's LONG_LINE_MAX */
/* how many ignored keys (link-config.c's tables) link_config.warned can hold */
#define LINK_IGNORED_KEYS_MAX 128
#define IFNAMSIZ_MAX 16
#define ALTIFNAMSIZ_MAX 128
#define IFALIAS_MAX 256

enum name_policy {
        NAMEPOLICY_KERNEL,
        NAMEPOLICY_KEEP,
        NAMEPOLICY_DATABASE,
        NAMEPOLICY_ONBOARD,
        NAMEPOLICY_SLOT,
        NAMEPOLICY_PATH,
        NAMEPOLICY_MAC,
        _NAMEPOLICY_END = -1,
};

enum mac_policy {
        MAC_POLICY_PERSISTENT,
        MAC_POLICY_RANDOM,
        MAC_POLICY_NONE,
};

/* NULL-terminated string array; NULL = unset. */
typedef char **strv_t;

struct link_condition {
        int type;   /* LINK_COND_* (link-config.c) */
        bool negate;
        char *value;
};

struct link_match {
        struct hw_addr *hw_addrs; size_t n_hw_addrs; bool hw_addrs_set;
        struct hw_addr *perm_addrs; size_t n_perm_addrs; bool perm_addrs_set;
        strv_t path, driver, iftype, kind, ifname, property;
        struct link_condition *conds; size_t n_conds;
};

struct link_config {
        char *filename;                 /* as found on the search path */
        struct link_match match;
        char *description;
        enum mac_policy mac_policy;     /* default none */
        struct hw_addr mac;             /* MACAddress=, length 0 = unset */
        int *name_policy;               /* _NAMEPOLICY_END-terminated, NULL = unset */
        char *name;
        strv_t alt_names;
        int *alt_names_policy;
        char *alias;
        uint32_t txqueues, rxqueues;    /* 0 = unset */
        uint32_t txqueuelen;            /* UINT32_MAX = unset */
        uint32_t mtu;                   /* 0 = unset */
        uint64_t gso_max_size;          /* 0 = unset */
        uint32_t gso_max_segments;      /* 0 = unset */
        /* systemd 256+: udev properties (specifiers resolved at load time) */
        strv_t properties;              /* Property=: "KEY=VALUE", one per key, in order */
        strv_t import_properties;       /* ImportProperty=: names */
        strv_t unset_properties;        /* UnsetProperty=: names */
        /* ignored keys already reported for this file and its drop-ins: one
         * bit per entry of link-config.c's tables of ignored keys */
        uint32_t warned[LINK_IGNORED_KEYS_MAX / 32];
        strv_t dropins;                 /* the drop-in files read, in order (NULL: none) */
        struct link_config *next;
};

/* All loaded files in order (lexical by basename); owned. */
struct link_config_set {
        struct link_config *first;
};

/* The search path in effect (static strings; NULL-terminated). */
const char *const *link_config_dirs(void);

/* Load every .link file of the search path. Files that fail to parse, have
 * an empty [Match] section or whose conditions do not hold are skipped with
 * a log message. 0 or -ENOMEM. */
int link_config_load(struct link_config_set *set);
void link_config_set_free(struct link_config_set *set);
/* A fingerprint of the directories, .link files and drop-ins (paths, inode,
 * size, mtime): changes when anything was added, removed or modified. */
uint64_t link_config_fingerprint(void);

/* Parse one file (plus drop-ins) into a new config; exposed for unit tests.
 * 1 loaded (*ret set), 0 skipped (empty file, no [Match], conditions),
 * <0 error. */
int link_config_parse_file(const char *path, struct link_config **ret);
void link_config_free(struct link_config *c);

/* systemd's device_property_can_set(): false for the names the kernel or
 * udevd own (ACTION, SEQNUM, DEVPATH, SUBSYSTEM, DEVNAME, IFINDEX, TAGS, ...,
 * SYNTH_ARG_*). */
bool link_property_can_set(const char *name);
/* Resolve the specifiers listed above in `in`. 0 and *ret (caller frees),
 * -EBADSLT for an unknown specifier, -ENOENT/-errno when one cannot be
 * resolved (no machine-id, ...), -ENOMEM. */
int link_specifier_expand(const char *in, char **ret);

/* What [Match] is evaluated against. */
struct link_match_input {
        const struct hw_addr *hw_addr;
        const struct hw_addr *perm_addr;
        const char *driver;
        const char *iftype;             /* DEVTYPE or lowercase ARPHRD name */
        const char *kind;
        const char *ifname;
        const char *path;               /* ID_PATH property */
        /* property lookup for Property= (NULL if none) */
        const char *(*get_property)(void *userdata, const char *key);
        void *userdata;
};
bool link_match_test(const struct link_match *m, const struct link_match_input *in);

/* "kernel" ... "mac", or -1. `alternative`: only database..mac. */
int name_policy_from_string(const char *s, bool alternative);
const char *name_policy_to_string(int p);
/* systemd's ifname_valid_full(): alternative allows up to 127 characters. */
bool link_ifname_valid(const char *s, bool alternative);
/* Lowercase ARPHRD name ("ether", "loopback", ...) or NULL. */
const char *arphrd_to_name(unsigned type);
