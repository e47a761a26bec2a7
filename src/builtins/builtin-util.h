/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any */
#pragma once
/* Helpers shared by path_id, usb_id, net_id, net_setup_link and blkid (owned
 * by builtins engineer 2): systemd 252's number parsers (so values are
 * accepted or refused exactly as systemd does), the kernel command line, and
 * the naming-scheme table of net_id. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Flags or'ed into `base` of parse_atou_full() (systemd's SAFE_ATO_*). */
#define PARSE_REFUSE_PLUS_MINUS (1u << 30)
#define PARSE_REFUSE_LEADING_ZERO (1u << 29)
#define PARSE_REFUSE_LEADING_WHITESPACE (1u << 28)
#define PARSE_BASE_MASK 0xffu

/* systemd's safe_atou_full(): leading whitespace skipped (unless refused),
 * base 0 = "0x"/"0b"/"0o"/C-octal auto detection, no trailing garbage, "-N"
 * refused with -ERANGE. 0 or -EINVAL/-ERANGE. */
int parse_atou_full(const char *s, unsigned base, unsigned *ret);
static inline int parse_atou(const char *s, unsigned *ret) { return parse_atou_full(s, 0, ret); }
/* systemd's safe_atollu_full() (= safe_atolu_full() on 64-bit). */
int parse_atollu_full(const char *s, unsigned base, unsigned long long *ret);
/* systemd's safe_atoi() (base auto detected). */
int parse_atoi(const char *s, int *ret);
/* systemd's safe_atolli() / safe_atoi64() (base auto detected). */
int parse_atolli(const char *s, long long *ret);
/* systemd's safe_atou64() / safe_atou32(): parse_atollu_full(s, 0) with range check. */
int parse_atou32(const char *s, uint32_t *ret);

/* ---- hardware addresses (systemd's struct hw_addr_data) ---- */

#define HW_ADDR_MAX 32
#define HW_ADDR_STR_MAX (HW_ADDR_MAX * 3)

struct hw_addr {
        size_t length;
        uint8_t bytes[HW_ADDR_MAX];
};

/* systemd's parse_hw_addr_full(): "xx:xx:..", "xx-xx-..", "xxxx.xxxx.xxxx";
 * expected_len 0 also takes IPv4/IPv6 literals and requires a length of 4,
 * 16, 6 or 20; SIZE_MAX any length; else exactly that length. 0 or -EINVAL. */
int parse_hw_addr_full(const char *s, size_t expected_len, struct hw_addr *ret);
/* Lowercase hex, with ':' between bytes unless no_colon. */
char *hw_addr_to_string(const struct hw_addr *a, bool no_colon, char buf[static HW_ADDR_STR_MAX]);

/* /etc/machine-id as 16 bytes: 0, -ENOMEDIUM (missing, empty, invalid, all
 * zero), -errno. */
int read_machine_id(uint8_t id[16]);

/* ---- kernel command line ---- */

#define CMDLINE_MAX (64 * 1024)

/* Value of the last "key=value" word of the kernel command line
 * ($SYSTEMD_PROC_CMDLINE if set, else /proc/cmdline, read at every call; '-'
 * and '_' are the same in keys; "rd." words count only in the initrd).
 * 1 and *ret (caller frees; NULL if the key appeared without '=' and
 * `value_optional`), 0 if absent, -errno. */
int cmdline_get_key(const char *key, bool value_optional, char **ret);
/* systemd's parse_boolean(): 1/yes/y/true/t/on -> 1, 0/no/n/false/f/off -> 0,
 * else -EINVAL. */
int parse_boolean(const char *s);

/* ---- net_id naming schemes (systemd's netif-naming-scheme.h, v238 ... v257) ---- */

enum {
        NAMING_SR_IOV_V = 1u << 0,
        NAMING_NPAR_ARI = 1u << 1,
        NAMING_INFINIBAND = 1u << 2,
        NAMING_ZERO_ACPI_INDEX = 1u << 3,
        NAMING_ALLOW_RERENAMES = 1u << 4,
        NAMING_STABLE_VIRTUAL_MACS = 1u << 5,
        NAMING_NETDEVSIM = 1u << 6,
        NAMING_LABEL_NOPREFIX = 1u << 7,
        NAMING_NSPAWN_LONG_HASH = 1u << 8,
        NAMING_BRIDGE_NO_SLOT = 1u << 9,
        NAMING_SLOT_FUNCTION_ID = 1u << 10,
        NAMING_16BIT_INDEX = 1u << 11,
        NAMING_REPLACE_STRICTLY = 1u << 12,
        NAMING_XEN_VIF = 1u << 13,
        NAMING_BRIDGE_MULTIFUNCTION_SLOT = 1u << 14,
        NAMING_DEVICETREE_ALIASES = 1u << 15,
        NAMING_USB_HOST = 1u << 16,             /* v253: USB not behind PCI gets a path name */
        NAMING_SR_IOV_R = 1u << 17,             /* v254: "r<VF>" for SR-IOV representors */
        NAMING_FIRMWARE_NODE_SUN = 1u << 18,    /* v257: slot from firmware_node/sun */
        NAMING_DEVICETREE_PORT_ALIASES = 1u << 19, /* v257: of_node of the interface itself */
};

struct naming_scheme {
        const char *name;
        unsigned flags;
        unsigned version; /* 238 ... 257 */
};

/* "v238" ... "v255", "v257" (there is no v256 scheme), or "latest" (= the
 * newest, v257); NULL if unknown. */
const struct naming_scheme *naming_scheme_from_name(const char *name);
/* The default scheme's name as configured (configure
 * --with-default-net-naming-scheme=NAME, a scheme name or "latest"; "v252"
 * unless configured otherwise). */
const char *naming_scheme_default_name(void);
/* The scheme in effect, decided as systemd does: $NET_NAMING_SCHEME if set
 * (a leading ':' lets net.naming_scheme= on the kernel command line win),
 * else net.naming_scheme= on the kernel command line ('-' and '_' alike),
 * else the configured default (an unknown request is warned about and the
 * default used). Logs "Using interface naming scheme 'vNNN'." or "Using
 * default interface naming scheme 'vNNN'." once. Determined once per process
 * (thread-safe). */
const struct naming_scheme *naming_scheme(void);
static inline bool naming_scheme_has(unsigned flags)
{
        return (naming_scheme()->flags & flags) == flags;
}
/* Which systemd the builtins' other details follow (path_id's
 * ID_PATH_WITH_USB_REVISION and its refusal of a device without subsystem,
 * net_id's property order and hexadecimal dev_id): systemd 257 with a scheme
 * of v253 or later, systemd 252 with v252 or earlier, so that a system kept
 * on v252 gets exactly systemd 252's properties. */
static inline bool builtins_follow_systemd_257(void)
{
        return naming_scheme()->version > 252;
}
