/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (the naming scheme is computed once under pthread_once) */
/* Number parsers, kernel command line and naming schemes for the builtins of
 * engineer 2 (builtin-util.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "builtins/builtin-util.h"
#include "shared/fileio.h"
#include "shared/log.h"
#include "shared/macro.h"

#define WHITESPACE " \t\n\r"

/* Python-style "0b"/"0o" prefixes when the base is automatic. */
static const char *mangle_base(const char *s, unsigned *base)
{
        if ((*base & PARSE_BASE_MASK) != 0)
                return s;
        if (s[0] == '0' && (s[1] == 'b' || s[1] == 'B')) {
                *base = 2 | (*base & ~PARSE_BASE_MASK);
                return s + 2;
        }
        if (s[0] == '0' && (s[1] == 'o' || s[1] == 'O')) {
                *base = 8 | (*base & ~PARSE_BASE_MASK);
                return s + 2;
        }
        return s;
}

static int parse_prefix_checks(const char **s, unsigned base)
{
        if ((base & PARSE_REFUSE_LEADING_WHITESPACE) && (*s)[0] && strchr(WHITESPACE, (*s)[0]))
                return -EINVAL;
        *s += strspn(*s, WHITESPACE);
        if ((base & PARSE_REFUSE_PLUS_MINUS) && ((*s)[0] == '+' || (*s)[0] == '-'))
                return -EINVAL;
        if ((base & PARSE_REFUSE_LEADING_ZERO) && (*s)[0] == '0' && (*s)[1] != '\0')
                return -EINVAL;
        return 0;
}

int parse_atollu_full(const char *s, unsigned base, unsigned long long *ret)
{
        unsigned long long v;
        char *end = NULL;
        int r;

        if (!s)
                return -EINVAL;
        r = parse_prefix_checks(&s, base);
        if (r < 0)
                return r;
        s = mangle_base(s, &base);
        errno = 0;
        v = strtoull(s, &end, (int)(base & PARSE_BASE_MASK));
        if (errno > 0)
                return -errno;
        if (!end || end == s || *end)
                return -EINVAL;
        if (v != 0 && s[0] == '-')
                return -ERANGE;
        if (ret)
                *ret = v;
        return 0;
}

int parse_atou_full(const char *s, unsigned base, unsigned *ret)
{
        unsigned long long v;
        int r;

        r = parse_atollu_full(s, base, &v);
        if (r < 0)
                return r;
        if (v > UINT_MAX)
                return -ERANGE;
        if (ret)
                *ret = (unsigned)v;
        return 0;
}

int parse_atou32(const char *s, uint32_t *ret)
{
        unsigned long long v;
        int r;

        r = parse_atollu_full(s, 0, &v);
        if (r < 0)
                return r;
        if (v > UINT32_MAX)
                return -ERANGE;
        if (ret)
                *ret = (uint32_t)v;
        return 0;
}

int parse_atoi(const char *s, int *ret)
{
        unsigned base = 0;
        char *end = NULL;
        long v;

        if (!s)
                return -EINVAL;
        s += strspn(s, WHITESPACE);
        s = mangle_base(s, &base);
        errno = 0;
        v = strtol(s, &end, (int)base);
        if (errno > 0)
                return -errno;
        if (!end || end == s || *end)
                return -EINVAL;
        if (v < INT_MIN || v > INT_MAX)
                return -ERANGE;
        if (ret)
                *ret = (int)v;
        return 0;
}

int parse_atolli(const char *s, long long *ret)
{
        unsigned base = 0;
        char *end = NULL;
        long long v;

        if (!s)
                return -EINVAL;
        s += strspn(s, WHITESPACE);
        s = mangle_base(s, &base);
        errno = 0;
        v = strtoll(s, &end, (int)base);
        if (errno > 0)
                return -errno;
        if (!end || end == s || *end)
                return -EINVAL;
        if (ret)
                *ret = v;
        return 0;
}

int parse_boolean(const char *s)
{
        static const char *const yes[] = { "1", "yes", "y", "true", "t", "on" };
        static const char *const no[] = { "0", "no", "n", "false", "f", "off" };

        if (!s)
                return -EINVAL;
        for (size_t i = 0; i < ARRAY_SIZE(yes); i++)
                if (strcasecmp(s, yes[i]) == 0)
                        return 1;
        for (size_t i = 0; i < ARRAY_SIZE(no); i++)
                if (strcasecmp(s, no[i]) == 0)
                        return 0;
        return -EINVAL;
}

/* ------------------------------------------------------------ hw addresses */

static int hexval(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

/* One field of `width` bytes (1..2*width hex digits) up to `sep` or the end.
 * 1: a separator follows, 0: the end, -EINVAL. */
static int hw_addr_field(const char **s, char sep, size_t width, uint8_t *buf)
{
        const char *p = *s;
        unsigned data = 0;
        bool more;

        for (size_t i = 0; i < width * 2; i++) {
                if (*p == '\0' || *p == sep) {
                        if (i == 0)
                                return -EINVAL;
                        break;
                }
                if (hexval(*p) < 0)
                        return -EINVAL;
                data = (data << 4) + (unsigned)hexval(*p);
                p++;
        }
        if (*p != '\0' && *p != sep)
                return -EINVAL;
        if (width == 1) {
                buf[0] = (uint8_t)data;
        } else {
                buf[0] = (uint8_t)(data >> 8);
                buf[1] = (uint8_t)data;
        }
        more = *p == sep;
        *s = p + more;
        return more;
}

int parse_hw_addr_full(const char *s, size_t expected_len, struct hw_addr *ret)
{
        uint8_t bytes[HW_ADDR_MAX];
        size_t width, max_len, len = 0;
        char sep;

        if (!s)
                return -EINVAL;
        if (expected_len == 0 || expected_len == 4 || expected_len == 16) {
                uint8_t a[16];

                if ((expected_len != 16 && inet_pton(AF_INET, s, a) == 1)) {
                        ret->length = 4;
                        memcpy(ret->bytes, a, 4);
                        return 0;
                }
                if (expected_len != 4 && inet_pton(AF_INET6, s, a) == 1) {
                        ret->length = 16;
                        memcpy(ret->bytes, a, 16);
                        return 0;
                }
        }
        max_len = expected_len == 0 ? 20 : expected_len == SIZE_MAX ? HW_ADDR_MAX : expected_len;
        if (max_len > HW_ADDR_MAX)
                return -EINVAL;
        sep = s[strspn(s, "0123456789abcdefABCDEF")];
        if (sep == '.')
                width = 2;
        else if (sep == ':' || sep == '-')
                width = 1;
        else
                return -EINVAL;
        if (max_len % width != 0)
                return -EINVAL;
        for (size_t i = 0; i < max_len / width; i++) {
                int r = hw_addr_field(&s, sep, width, bytes + i * width);

                if (r < 0)
                        return r;
                if (r == 0) {
                        len = (i + 1) * width;
                        break;
                }
        }
        if (len == 0)
                return -EINVAL;
        if (expected_len == 0) {
                if (len != 4 && len != 16 && len != 6 && len != 20)
                        return -EINVAL;
        } else if (expected_len != SIZE_MAX && len != expected_len) {
                return -EINVAL;
        }
        ret->length = len;
        memcpy(ret->bytes, bytes, len);
        return 0;
}

char *hw_addr_to_string(const struct hw_addr *a, bool no_colon, char buf[static HW_ADDR_STR_MAX])
{
        static const char hex[] = "0123456789abcdef";
        size_t j = 0;

        for (size_t i = 0; i < a->length && i < HW_ADDR_MAX; i++) {
                if (i > 0 && !no_colon)
                        buf[j++] = ':';
                buf[j++] = hex[a->bytes[i] >> 4];
                buf[j++] = hex[a->bytes[i] & 0xf];
        }
        buf[j] = '\0';
        return buf;
}

int read_machine_id(uint8_t id[16])
{
        _cleanup_free_ char *buf = NULL;
        bool zero = true;
        size_t len;
        int r;

        r = read_file_bounded("/etc/machine-id", 64, &buf, &len);
        if (r == -ENOENT || r == -EFBIG)
                return -ENOMEDIUM;
        if (r < 0)
                return r;
        while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
                buf[--len] = '\0';
        if (len != 32)
                return -ENOMEDIUM;
        for (size_t i = 0; i < 16; i++) {
                int hi = hexval(buf[2 * i]), lo = hexval(buf[2 * i + 1]);

                if (hi < 0 || lo < 0)
                        return -ENOMEDIUM;
                id[i] = (uint8_t)(hi << 4 | lo);
                zero = zero && id[i] == 0;
        }
        return zero ? -ENOMEDIUM : 0;
}

/* ------------------------------------------------------------ command line */

/* Next word (quotes removed, backslash escapes kept as they are, unterminated
 * quotes tolerated), written in place; NULL at the end. */
static char *next_word(char **cursor)
{
        char *s = *cursor, *w, *o;
        char quote = 0;

        s += strspn(s, WHITESPACE);
        if (!*s)
                return NULL;
        w = o = s;
        for (; *s; s++) {
                if (*s == '\\' && s[1]) {
                        *o++ = *s++;
                        *o++ = *s;
                } else if (quote) {
                        if (*s == quote)
                                quote = 0;
                        else
                                *o++ = *s;
                } else if (*s == '\'' || *s == '"') {
                        quote = *s;
                } else if (strchr(WHITESPACE, *s)) {
                        s++;
                        break;
                } else {
                        *o++ = *s;
                }
        }
        /* the terminator may overwrite the separator we already passed */
        *o = '\0';
        *cursor = s;
        return w;
}

static bool in_initrd(void)
{
        const char *e = getenv("SYSTEMD_IN_INITRD");

        if (e && parse_boolean(e) >= 0)
                return parse_boolean(e) > 0;
        return access("/etc/initrd-release", F_OK) >= 0;
}

/* "a-b" matches "a_b"; returns the rest of `word` after `key`, or NULL. */
static const char *key_startswith(const char *word, const char *key)
{
        for (; *key; word++, key++) {
                if (*word == *key)
                        continue;
                if ((*word == '-' && *key == '_') || (*word == '_' && *key == '-'))
                        continue;
                return NULL;
        }
        return word;
}

static int read_cmdline(char **ret)
{
        const char *e = getenv("SYSTEMD_PROC_CMDLINE");
        size_t len;

        if (e) {
                *ret = strdup(e);
                return *ret ? 0 : -ENOMEM;
        }
        return read_file_bounded("/proc/cmdline", CMDLINE_MAX, ret, &len);
}

int cmdline_get_key(const char *key, bool value_optional, char **ret)
{
        _cleanup_free_ char *line = NULL;
        char *cursor, *w, *value = NULL;
        bool found = false, initrd = in_initrd();
        int r;

        r = read_cmdline(&line);
        if (r < 0)
                return r;
        cursor = line;
        while ((w = next_word(&cursor))) {
                const char *rest;

                if (strneq(w, "rd.", 3)) {
                        if (!initrd)
                                continue;
                }
                rest = key_startswith(w, key);
                if (!rest)
                        continue;
                if (*rest == '=') {
                        free(value);
                        value = strdup(rest + 1);
                        if (!value)
                                return -ENOMEM;
                        found = true;
                } else if (*rest == '\0' && value_optional) {
                        /* systemd keeps a value seen before */
                        found = true;
                }
        }
        *ret = value;
        return found;
}

/* ------------------------------------------------------------ naming schemes */

#define NAMING_V238 0u
#define NAMING_V239 (NAMING_V238 | NAMING_SR_IOV_V | NAMING_NPAR_ARI)
#define NAMING_V240 (NAMING_V239 | NAMING_INFINIBAND | NAMING_ZERO_ACPI_INDEX | \
                     NAMING_ALLOW_RERENAMES)
#define NAMING_V241 (NAMING_V240 | NAMING_STABLE_VIRTUAL_MACS)
#define NAMING_V243 (NAMING_V241 | NAMING_NETDEVSIM | NAMING_LABEL_NOPREFIX)
#define NAMING_V245 (NAMING_V243 | NAMING_NSPAWN_LONG_HASH)
#define NAMING_V247 (NAMING_V245 | NAMING_BRIDGE_NO_SLOT)
#define NAMING_V249 (NAMING_V247 | NAMING_SLOT_FUNCTION_ID | NAMING_16BIT_INDEX | \
                     NAMING_REPLACE_STRICTLY)
#define NAMING_V250 (NAMING_V249 | NAMING_XEN_VIF)
#define NAMING_V251 (NAMING_V250 | NAMING_BRIDGE_MULTIFUNCTION_SLOT)
#define NAMING_V252 (NAMING_V251 | NAMING_DEVICETREE_ALIASES)
#define NAMING_V253 (NAMING_V252 | NAMING_USB_HOST)
#define NAMING_V254 (NAMING_V253 | NAMING_SR_IOV_R)
/* v255 drops the v251 rule that kept a bridge's slot for multi-function devices */
#define NAMING_V255 (NAMING_V254 & ~NAMING_BRIDGE_MULTIFUNCTION_SLOT)
#define NAMING_V257 (NAMING_V255 | NAMING_FIRMWARE_NODE_SUN | NAMING_DEVICETREE_PORT_ALIASES)

#define SCHEME(v) { "v" #v, NAMING_V##v, v }
static const struct naming_scheme schemes[] = {
        SCHEME(238), SCHEME(239), SCHEME(240), SCHEME(241), SCHEME(243), SCHEME(245),
        SCHEME(247), SCHEME(249), SCHEME(250), SCHEME(251), SCHEME(252), SCHEME(253),
        SCHEME(254), SCHEME(255), SCHEME(257),
};

/* configure --with-default-net-naming-scheme=NAME (Makefile: -D...) */
#ifndef DEFAULT_NET_NAMING_SCHEME
#define DEFAULT_NET_NAMING_SCHEME "v252"
#endif

const char *naming_scheme_default_name(void)
{
        return DEFAULT_NET_NAMING_SCHEME;
}

const struct naming_scheme *naming_scheme_from_name(const char *name)
{
        if (!name)
                return NULL;
        for (size_t i = 0; i < ARRAY_SIZE(schemes); i++)
                if (streq(schemes[i].name, name))
                        return &schemes[i];
        if (streq(name, "latest"))
                return &schemes[ARRAY_SIZE(schemes) - 1];
        return NULL;
}

static const struct naming_scheme *scheme_cache;
static pthread_once_t scheme_once = PTHREAD_ONCE_INIT;

static void scheme_init(void)
{
        _cleanup_free_ char *cmdline = NULL;
        const char *e, *k;

        (void)cmdline_get_key("net.naming_scheme", false, &cmdline);
        e = getenv("NET_NAMING_SCHEME");
        if (e)
                /* a leading ':' gives the kernel command line precedence */
                k = e[0] == ':' ? (cmdline ? cmdline : e + 1) : e;
        else
                k = cmdline;
        if (k) {
                scheme_cache = naming_scheme_from_name(k);
                if (scheme_cache) {
                        log_info("Using interface naming scheme '%s'.", scheme_cache->name);
                        return;
                }
                log_warning("Unknown interface naming scheme '%s' requested, ignoring.", k);
        }
        scheme_cache = naming_scheme_from_name(DEFAULT_NET_NAMING_SCHEME);
        if (!scheme_cache) /* a bad configure value cannot get this far, but be safe */
                scheme_cache = naming_scheme_from_name("latest");
        log_info("Using default interface naming scheme '%s'.", scheme_cache->name);
}

const struct naming_scheme *naming_scheme(void)
{
        pthread_once(&scheme_once, scheme_init);
        return scheme_cache;
}
