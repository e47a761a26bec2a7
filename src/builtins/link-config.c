/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (no global mutable state except the search path, set once) */
/* .link files: search path, parsing, drop-ins, [Match] (link-config.h). */
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <linux/if_arp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "builtins/link-config.h"
#include "event/event-format.h"
#include "shared/fileio.h"
#include "shared/fnv.h"
#include "shared/log.h"
#include "shared/macro.h"

#define WHITESPACE " \t\n\r"
#define LINK_DIRS_MAX 16
#define LINK_FILES_MAX 4096 /* per directory listing */

enum {
        LINK_COND_HOST,
        LINK_COND_VIRTUALIZATION,
        LINK_COND_KERNEL_COMMAND_LINE,
        LINK_COND_KERNEL_VERSION,
        LINK_COND_CREDENTIAL,
        LINK_COND_ARCHITECTURE,
        LINK_COND_FIRMWARE,
};

/* ------------------------------------------------------------ search path */

static const char *default_dirs[] = {
        "/etc/systemd/network",      "/run/systemd/network", "/usr/local/lib/systemd/network",
        "/usr/lib/systemd/network",  "/lib/systemd/network", NULL,
};
static const char *env_dirs[LINK_DIRS_MAX + 1];
static char *env_dirs_buf;
static const char *const *dirs_in_use = default_dirs;
static pthread_once_t dirs_once = PTHREAD_ONCE_INIT;

static void dirs_init(void)
{
        const char *e = getenv(LINK_DIRS_ENV);
        size_t n = 0;

        if (!e || !*e)
                return;
        env_dirs_buf = strdup(e);
        if (!env_dirs_buf)
                return;
        for (char *s = env_dirs_buf, *tok; n < LINK_DIRS_MAX && (tok = strsep(&s, ":"));)
                if (*tok)
                        env_dirs[n++] = tok;
        env_dirs[n] = NULL;
        dirs_in_use = env_dirs;
        log_debug("Using .link directories from $%s: %s", LINK_DIRS_ENV, e);
}

const char *const *link_config_dirs(void)
{
        pthread_once(&dirs_once, dirs_init);
        return dirs_in_use;
}

/* ------------------------------------------------------------ small helpers */

static void strv_free(strv_t l)
{
        if (!l)
                return;
        for (char **p = l; *p; p++)
                free(*p);
        free(l);
}

static size_t strv_len(strv_t l)
{
        size_t n = 0;

        while (l && l[n])
                n++;
        return n;
}

/* Append (takes `s`); *l may be NULL. */
static int strv_push(strv_t *l, char *s)
{
        size_t n = strv_len(*l);
        char **a = realloc(*l, (n + 2) * sizeof(char *));

        if (!a) {
                free(s);
                return -ENOMEM;
        }
        a[n] = s;
        a[n + 1] = NULL;
        *l = a;
        return 0;
}

static bool is_ws(char c)
{
        return c && strchr(WHITESPACE, c);
}

static char *strstrip(char *s)
{
        size_t n;

        s += strspn(s, WHITESPACE);
        n = strlen(s);
        while (n > 0 && is_ws(s[n - 1]))
                s[--n] = '\0';
        return s;
}

enum {
        EXTRACT_UNQUOTE = 1u << 0,
        EXTRACT_RETAIN_ESCAPE = 1u << 1,
        EXTRACT_CUNESCAPE = 1u << 2,
        EXTRACT_RELAX = 1u << 3,
};

/* One C escape after the backslash at s (s[0] is the character after '\').
 * Writes the byte(s) to out, returns the number of input chars used or -1. */
static int cunescape_one(const char *s, char *out, size_t *n)
{
        static const char simple[] = "a\ab\bf\fn\nr\rt\tv\v\\\\\"\"''s ";
        int v = 0;

        for (size_t i = 0; simple[i]; i += 2)
                if (s[0] == simple[i]) {
                        out[(*n)++] = simple[i + 1];
                        return 1;
                }
        if (s[0] == 'x') {
                for (int i = 1; i <= 2; i++) {
                        int h = s[i] >= '0' && s[i] <= '9' ? s[i] - '0' :
                                (s[i] | 0x20) >= 'a' && (s[i] | 0x20) <= 'f' ?
                                (s[i] | 0x20) - 'a' + 10 : -1;
                        if (h < 0)
                                return -1;
                        v = v * 16 + h;
                }
                if (v == 0)
                        return -1;
                out[(*n)++] = (char)v;
                return 3;
        }
        if (s[0] >= '0' && s[0] <= '3') {
                for (int i = 0; i < 3; i++) {
                        if (s[i] < '0' || s[i] > '7')
                                return -1;
                        v = v * 8 + (s[i] - '0');
                }
                if (v == 0)
                        return -1;
                out[(*n)++] = (char)v;
                return 3;
        }
        return -1;
}

/* systemd's extract_first_word() for the flag combinations .link parsing
 * uses. 1 word, 0 end, -EINVAL (bad escape/quote), -ENOMEM. */
static int extract_word(const char **p, char **ret, unsigned flags)
{
        const char *s = *p;
        char quote = 0, *w;
        size_t n = 0;

        *ret = NULL;
        if (!s)
                return 0;
        s += strspn(s, WHITESPACE);
        if (!*s) {
                *p = NULL;
                return 0;
        }
        w = malloc(strlen(s) * 4 + 1);
        if (!w)
                return -ENOMEM;
        for (; *s; s++) {
                if (*s == '\\' && !(flags & EXTRACT_RETAIN_ESCAPE)) {
                        s++;
                        if (!*s) {
                                if (flags & EXTRACT_RELAX)
                                        break;
                                free(w);
                                return -EINVAL;
                        }
                        if (flags & EXTRACT_CUNESCAPE) {
                                int k = cunescape_one(s, w, &n);

                                if (k < 0) {
                                        free(w);
                                        return -EINVAL;
                                }
                                s += k - 1;
                        } else {
                                w[n++] = *s;
                        }
                        continue;
                }
                if (quote) {
                        if (*s == quote)
                                quote = 0;
                        else
                                w[n++] = *s;
                        continue;
                }
                if ((*s == '\'' || *s == '"') && (flags & EXTRACT_UNQUOTE)) {
                        quote = *s;
                        continue;
                }
                if (is_ws(*s))
                        break;
                w[n++] = *s;
        }
        if (quote && !(flags & EXTRACT_RELAX)) {
                free(w);
                return -EINVAL;
        }
        w[n] = '\0';
        s += strspn(s, WHITESPACE);
        *p = *s ? s : NULL;
        *ret = w;
        return 1;
}

/* ------------------------------------------------------------ names */

static const char *const policy_names[] = {
        [NAMEPOLICY_KERNEL] = "kernel", [NAMEPOLICY_KEEP] = "keep",
        [NAMEPOLICY_DATABASE] = "database", [NAMEPOLICY_ONBOARD] = "onboard",
        [NAMEPOLICY_SLOT] = "slot", [NAMEPOLICY_PATH] = "path", [NAMEPOLICY_MAC] = "mac",
};

int name_policy_from_string(const char *s, bool alternative)
{
        for (int i = alternative ? NAMEPOLICY_DATABASE : 0; i < (int)ARRAY_SIZE(policy_names); i++)
                if (streq(s, policy_names[i]))
                        return i;
        return -1;
}

const char *name_policy_to_string(int p)
{
        return p >= 0 && p < (int)ARRAY_SIZE(policy_names) ? policy_names[p] : NULL;
}

bool link_ifname_valid(const char *s, bool alternative)
{
        bool numeric = true;
        int v;

        if (!s || !*s)
                return false;
        /* a valid ifindex is not a name */
        if (parse_atoi(s, &v) >= 0 && v > 0)
                return false;
        if (strlen(s) >= (alternative ? ALTIFNAMSIZ_MAX : IFNAMSIZ_MAX))
                return false;
        if (streq(s, ".") || streq(s, "..") || streq(s, "all") || streq(s, "default"))
                return false;
        for (const char *t = s; *t; t++) {
                if (!udev_ifname_valid_char(*t))
                        return false;
                numeric = numeric && *t >= '0' && *t <= '9';
        }
        return !numeric;
}

#define A(n) { ARPHRD_##n, #n }
static const struct {
        unsigned type;
        const char *name;
} arphrd_names[] = {
        A(6LOWPAN), A(ADAPT), A(APPLETLK), A(ARCNET), A(ASH), A(ATM), A(AX25), A(BIF), A(CAIF),
        A(CAN), A(CHAOS), A(CISCO), A(CSLIP), A(CSLIP6), A(DDCMP), A(DLCI), A(ECONET), A(EETHER),
        A(ETHER), A(EUI64), A(FCAL), A(FCFABRIC), A(FCPL), A(FCPP), A(FDDI), A(FRAD), A(HIPPI),
        A(HWX25), A(IEEE1394), A(IEEE802), A(IEEE80211), A(IEEE80211_PRISM),
        A(IEEE80211_RADIOTAP), A(IEEE802154), A(IEEE802154_MONITOR), A(IEEE802_TR),
        A(INFINIBAND), A(IP6GRE), A(IPDDP), A(IPGRE), A(IRDA), A(LAPB), A(LOCALTLK),
        A(LOOPBACK), A(METRICOM), A(NETLINK), A(NETROM), A(NONE), A(PHONET), A(PHONET_PIPE),
        A(PIMREG), A(PPP), A(PRONET), A(RAWHDLC), A(RAWIP), A(ROSE), A(RSRVD), A(SIT), A(SKIP),
        A(SLIP), A(SLIP6), A(TUNNEL), A(TUNNEL6), A(VOID), A(VSOCKMON), A(X25),
#ifdef ARPHRD_MCTP
        A(MCTP),
#endif
};
#undef A

const char *arphrd_to_name(unsigned type)
{
        static _Thread_local char buf[32];

        for (size_t i = 0; i < ARRAY_SIZE(arphrd_names); i++) {
                if (arphrd_names[i].type != type)
                        continue;
                snprintf(buf, sizeof(buf), "%s", arphrd_names[i].name);
                for (char *c = buf; *c; c++)
                        if (*c >= 'A' && *c <= 'Z')
                                *c = (char)(*c - 'A' + 'a');
                return buf;
        }
        return NULL;
}

/* ------------------------------------------------------------ config objects */

static void match_clear(struct link_match *m)
{
        free(m->hw_addrs);
        free(m->perm_addrs);
        strv_free(m->path);
        strv_free(m->driver);
        strv_free(m->iftype);
        strv_free(m->kind);
        strv_free(m->ifname);
        strv_free(m->property);
        for (size_t i = 0; i < m->n_conds; i++)
                free(m->conds[i].value);
        free(m->conds);
        *m = (struct link_match){ 0 };
}

void link_config_free(struct link_config *c)
{
        if (!c)
                return;
        free(c->filename);
        match_clear(&c->match);
        free(c->description);
        free(c->name_policy);
        free(c->name);
        strv_free(c->alt_names);
        free(c->alt_names_policy);
        free(c->alias);
        strv_free(c->properties);
        strv_free(c->import_properties);
        strv_free(c->unset_properties);
        strv_free(c->dropins);
        free(c);
}

void link_config_set_free(struct link_config_set *set)
{
        while (set->first) {
                struct link_config *n = set->first->next;

                link_config_free(set->first);
                set->first = n;
        }
}

/* ------------------------------------------------------------ value parsers */

struct parse_ctx {
        const char *file;
        unsigned line;
        struct link_config *c;
};

#define syntax_warning(p, fmt, ...) \
        log_warning("%s:%u: " fmt, (p)->file, (p)->line, ##__VA_ARGS__)

typedef int (*value_parser)(struct parse_ctx *p, const char *key, const char *value, void *data);

/* Match.MACAddress, PermanentMACAddress: whitespace-separated, added to a set. */
struct addr_set {
        struct hw_addr **a;
        size_t *n;
        bool *set;
};

static int parse_hw_addrs(struct parse_ctx *p, struct addr_set *s, const char *value)
{
        const char *cur = value;

        if (!*value) {
                free(*s->a);
                *s->a = NULL;
                *s->n = 0;
                *s->set = false;
                return 0;
        }
        for (;;) {
                _cleanup_free_ char *w = NULL;
                struct hw_addr h, *na;
                int r = extract_word(&cur, &w, 0);

                if (r == 0)
                        return 0;
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        syntax_warning(p, "Invalid syntax, ignoring: %s", value);
                        return 0;
                }
                if (parse_hw_addr_full(w, 0, &h) < 0) {
                        syntax_warning(p, "Not a valid hardware address, ignoring: %s", w);
                        continue;
                }
                na = realloc(*s->a, (*s->n + 1) * sizeof(*na));
                if (!na)
                        return -ENOMEM;
                na[(*s->n)++] = h;
                *s->a = na;
                *s->set = true;
        }
}

static int p_match_mac(struct parse_ctx *p, const char *k, const char *v, void *d)
{
        struct link_match *m = &p->c->match;
        struct addr_set s = { &m->hw_addrs, &m->n_hw_addrs, &m->hw_addrs_set };

        (void)k, (void)d;
        return parse_hw_addrs(p, &s, v);
}

static int p_match_perm_mac(struct parse_ctx *p, const char *k, const char *v, void *d)
{
        struct link_match *m = &p->c->match;
        struct addr_set s = { &m->perm_addrs, &m->n_perm_addrs, &m->perm_addrs_set };

        (void)k, (void)d;
        return parse_hw_addrs(p, &s, v);
}

static bool env_assignment_valid(const char *s)
{
        const char *eq = strchr(s, '=');

        if (!eq || eq == s || (s[0] >= '0' && s[0] <= '9'))
                return false;
        for (const char *c = s; c < eq; c++)
                if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                      (*c >= '0' && *c <= '9') || *c == '_'))
                        return false;
        for (const char *c = eq + 1; *c; c++)
                if ((unsigned char)*c < ' ' && *c != '\t' && *c != '\n')
                        return false;
        return true;
}

enum { MATCH_STRV, MATCH_IFNAMES, MATCH_PROPERTY };

/* Match.Path/Driver/Type/Kind (globs), OriginalName, Property: a leading '!'
 * inverts every word of the assignment; words accumulate. */
static int parse_match_words(struct parse_ctx *p, const char *value, strv_t *l, int kind)
{
        const char *cur = value;
        bool invert;
        unsigned flags = kind == MATCH_STRV ? EXTRACT_UNQUOTE | EXTRACT_RETAIN_ESCAPE :
                         kind == MATCH_PROPERTY ? EXTRACT_UNQUOTE | EXTRACT_CUNESCAPE : 0;

        if (!*value) {
                strv_free(*l);
                *l = NULL;
                return 0;
        }
        invert = *cur == '!';
        cur += invert;
        for (;;) {
                char *w = NULL, *k;
                int r = extract_word(&cur, &w, flags);

                if (r == 0)
                        return 0;
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        syntax_warning(p, "Invalid syntax, ignoring: %s", value);
                        return 0;
                }
                if (kind == MATCH_IFNAMES && !link_ifname_valid(w, false)) {
                        syntax_warning(p, "Interface name is not valid or too long, "
                                       "ignoring assignment: %s", w);
                        free(w);
                        continue;
                }
                if (kind == MATCH_PROPERTY && !env_assignment_valid(w)) {
                        syntax_warning(p, "Invalid property or value, ignoring assignment: %s", w);
                        free(w);
                        continue;
                }
                if (invert) {
                        if (asprintf(&k, "!%s", w) < 0)
                                k = NULL;
                        free(w);
                        if (!k)
                                return -ENOMEM;
                } else {
                        k = w;
                }
                r = strv_push(l, k);
                if (r < 0)
                        return r;
        }
}

static int p_match_strv(struct parse_ctx *p, const char *k, const char *v, void *d)
{
        (void)k;
        return parse_match_words(p, v, d, MATCH_STRV);
}

static int p_match_ifnames(struct parse_ctx *p, const char *k, const char *v, void *d)
{
        (void)k;
        return parse_match_words(p, v, d, MATCH_IFNAMES);
}

static int p_match_property(struct parse_ctx *p, const char *k, const char *v, void *d)
{
        (void)k;
        return parse_match_words(p, v, d, MATCH_PROPERTY);
}

/* Host=, Virtualization=, ... : one condition of each type (the last wins);
 * empty removes it. */
static int p_condition(struct parse_ctx *p, const char *k, const char *v, void *d)
{
        struct link_match *m = &p->c->match;
        int type = (int)(intptr_t)d;
        struct link_condition *nc;
        size_t j = 0;
        bool negate;

        (void)k;
        for (size_t i = 0; i < m->n_conds; i++) {
                if (m->conds[i].type == type)
                        free(m->conds[i].value);
                else
                        m->conds[j++] = m->conds[i];
        }
        m->n_conds = j;
        if (!*v)
                return 0;
        negate = *v == '!';
        nc = realloc(m->conds, (m->n_conds + 1) * sizeof(*nc));
        if (!nc)
                return -ENOMEM;
        m->conds = nc;
        nc[m->n_conds].type = type;
        nc[m->n_conds].negate = negate;
        nc[m->n_conds].value = strdup(v + negate);
        if (!nc[m->n_conds].value)
                return -ENOMEM;
        m->n_conds++;
        return 0;
}

static int p_string(struct parse_ctx *p, const char *k, const char *v, void *d)
{
        char **s = d;

        (void)p, (void)k;
        free(*s);
        *s = NULL;
        if (!*v)
                return 0;
        *s = strdup(v);
        return *s ? 0 : -ENOMEM;
}

static int p_mac_policy(struct parse_ctx *p, const char *k, const char *v, void *d)
{
        static const char *const names[] = { "persistent", "random", "none" };

        (void)k, (void)d;
        if (!*v) {
                p->c->mac_policy = MAC_POLICY_NONE;
                return 0;
        }
        for (size_t i = 0; i < ARRAY_SIZE(names); i++)
                if (streq(v, names[i])) {
                        p->c->mac_policy = (enum mac_policy)i;
                        return 0;
                }
        syntax_warning(p, "Failed to parse MAC address policy, ignoring: %s", v);
        return 0;
}

static int p_mac(struct parse_ctx *p, const char *k, const char *v, void *d)
{
        struct hw_addr a;

        (void)k, (void)d;
        if (!*v) {
                p->c->mac = (struct hw_addr){ 0 };
                return 0;
        }
        if (parse_hw_addr_full(v, 0, &a) < 0) {
                syntax_warning(p, "Not a valid hardware address, ignoring assignment: %s", v);
                return 0;
        }
        p->c->mac = a;
        return 0;
}

/* NamePolicy=, AlternativeNamesPolicy=: the list is replaced; bad or
 * duplicate words are dropped. */
static int parse_policies(struct parse_ctx *p, const char *v, int **list, bool alternative)
{
        const char *cur = v;
        int *xs;
        size_t n = 0;

        xs = malloc(sizeof(int) * (strlen(v) / 2 + 2));
        if (!xs)
                return -ENOMEM;
        xs[0] = _NAMEPOLICY_END;
        for (;;) {
                _cleanup_free_ char *w = NULL;
                bool dup = false;
                int r = extract_word(&cur, &w, 0), x;

                if (r == 0)
                        break;
                if (r < 0) {
                        free(xs);
                        if (r == -ENOMEM)
                                return r;
                        syntax_warning(p, "Failed to parse interface name policy, ignoring: %s",
                                       v);
                        return 0;
                }
                x = name_policy_from_string(w, alternative);
                if (x < 0) {
                        syntax_warning(p, "Failed to parse %s, ignoring: %s",
                                       alternative ? "alternative names policy" :
                                       "interface name policy", w);
                        continue;
                }
                for (size_t i = 0; i < n; i++)
                        dup = dup || xs[i] == x;
                if (dup) {
                        log_notice("%s:%u: Duplicate entry, ignoring: %s", p->file, p->line, w);
                        continue;
                }
                xs[n++] = x;
                xs[n] = _NAMEPOLICY_END;
        }
        free(*list);
        *list = xs;
        return 0;
}

static int p_name_policy(struct parse_ctx *p, const char *k, const char *v, void *d)
{
        (void)k, (void)d;
        return parse_policies(p, v, &p->c->name_policy, false);
}

static int p_alt_policy(struct parse_ctx *p, const char *k, const char *v, void *d)
{
        (void)k, (void)d;
        return parse_policies(p, v, &p->c->alt_names_policy, true);
}

static int p_ifname(struct parse_ctx *p, const char *k, const char *v, void *d)
{
        (void)k, (void)d;
        if (*v && !link_ifname_valid(v, false)) {
                syntax_warning(p, "Interface name is not valid or too long, ignoring "
                               "assignment: %s", v);
                return 0;
        }
        return p_string(p, k, v, &p->c->name);
}

static int p_alt_names(struct parse_ctx *p, const char *k, const char *v, void *d)
{
        const char *cur = v;
        strv_t names = NULL;

        (void)k, (void)d;
        if (!*v) {
                strv_free(p->c->alt_names);
                p->c->alt_names = NULL;
                return 0;
        }
        for (;;) {
                char *w = NULL;
                int r = extract_word(&cur, &w, 0);

                if (r == 0)
                        break;
                if (r < 0) {
                        strv_free(names);
                        if (r == -ENOMEM)
                                return r;
                        syntax_warning(p, "Failed to extract interface name, ignoring "
                                       "assignment: %s", v);
                        return 0;
                }
                if (!link_ifname_valid(w, true)) {
                        syntax_warning(p, "Interface name is not valid or too long, ignoring "
                                       "assignment: %s", w);
                        free(w);
                        continue;
                }
                r = strv_push(&names, w);
                if (r < 0) {
                        strv_free(names);
                        return r;
                }
        }
        /* appended, without duplicates */
        for (size_t i = 0; names && names[i]; i++) {
                bool dup = false;
                int r;

                for (size_t j = 0; p->c->alt_names && p->c->alt_names[j]; j++)
                        dup = dup || streq(p->c->alt_names[j], names[i]);
                if (dup) {
                        free(names[i]);
                        continue;
                }
                r = strv_push(&p->c->alt_names, names[i]);
                if (r < 0) {
                        for (size_t j = i + 1; names[j]; j++)
                                free(names[j]);
                        free(names);
                        return r;
                }
        }
        free(names);
        return 0;
}

static int p_alias(struct parse_ctx *p, const char *k, const char *v, void *d)
{
        (void)d;
        for (const char *c = v; *c; c++)
                if ((unsigned char)*c >= 128) {
                        syntax_warning(p, "Interface alias is not ASCII clean, ignoring "
                                       "assignment: %s", v);
                        return 0;
                }
        if (strlen(v) >= IFALIAS_MAX) {
                syntax_warning(p, "Interface alias is too long, ignoring assignment: %s", v);
                return 0;
        }
        return p_string(p, k, v, &p->c->alias);
}

/* systemd's parse_size(): "1.5K", "9000", "1 M" ... with base-1024 suffixes. */
static int parse_size_1024(const char *t, uint64_t *ret)
{
        static const struct {
                char c;
                uint64_t f;
        } suffixes[] = { { 'E', 1ULL << 60 }, { 'P', 1ULL << 50 }, { 'T', 1ULL << 40 },
                         { 'G', 1ULL << 30 }, { 'M', 1ULL << 20 }, { 'K', 1ULL << 10 },
                         { 'B', 1 } };
        uint64_t total = 0;
        const char *s = t;

        do {
                unsigned long long whole, frac = 0, fdiv = 1, f = 1;
                char *end;

                s += strspn(s, WHITESPACE);
                if (*s == '-')
                        return -ERANGE;
                errno = 0;
                whole = strtoull(s, &end, 10);
                if (errno > 0)
                        return -errno;
                if (end == s)
                        return -EINVAL;
                s = end;
                if (*s == '.') {
                        s++;
                        while (*s >= '0' && *s <= '9') {
                                if (fdiv < 100000000000000ULL) {
                                        frac = frac * 10 + (unsigned)(*s - '0');
                                        fdiv *= 10;
                                }
                                s++;
                        }
                }
                s += strspn(s, WHITESPACE);
                for (size_t i = 0; i < ARRAY_SIZE(suffixes); i++)
                        if (*s == suffixes[i].c) {
                                f = suffixes[i].f;
                                s++;
                                break;
                        }
                if (whole > UINT64_MAX / f)
                        return -ERANGE;
                total += whole * f + frac * f / fdiv;
                s += strspn(s, WHITESPACE);
        } while (*s);
        *ret = total;
        return 0;
}

static int p_mtu(struct parse_ctx *p, const char *k, const char *v, void *d)
{
        uint64_t u;

        (void)k, (void)d;
        if (parse_size_1024(v, &u) < 0 || u > UINT32_MAX) {
                syntax_warning(p, "Failed to parse MTU value '%s', ignoring", v);
                return 0;
        }
        p->c->mtu = (uint32_t)u;
        return 0;
}

static int p_queues(struct parse_ctx *p, const char *k, const char *v, void *d)
{
        uint32_t *q = d, n;

        if (!*v) {
                *q = 0;
                return 0;
        }
        if (parse_atou32(v, &n) < 0 || n == 0 || n > 4096) {
                syntax_warning(p, "Invalid %s=, ignoring assignment: %s.", k, v);
                return 0;
        }
        *q = n;
        return 0;
}

static int p_txqueuelen(struct parse_ctx *p, const char *k, const char *v, void *d)
{
        uint32_t n;

        (void)d;
        if (!*v) {
                p->c->txqueuelen = UINT32_MAX;
                return 0;
        }
        if (parse_atou32(v, &n) < 0 || n == UINT32_MAX) {
                syntax_warning(p, "Failed to parse %s=, ignoring assignment: %s.", k, v);
                return 0;
        }
        p->c->txqueuelen = n;
        return 0;
}

static int p_gso_size(struct parse_ctx *p, const char *k, const char *v, void *d)
{
        uint64_t u;

        (void)d;
        if (parse_size_1024(v, &u) < 0) {
                syntax_warning(p, "Failed to parse %s=, ignoring assignment: %s", k, v);
                return 0;
        }
        p->c->gso_max_size = u;
        return 0;
}

static int p_gso_segs(struct parse_ctx *p, const char *k, const char *v, void *d)
{
        uint32_t n;

        (void)d;
        if (parse_atou32(v, &n) < 0) {
                syntax_warning(p, "Failed to parse %s=, ignoring assignment: %s", k, v);
                return 0;
        }
        p->c->gso_max_segments = n;
        return 0;
}

/* ---- systemd 256's udev property keys ---- */

bool link_property_can_set(const char *name)
{
        static const char *const owned[] = {
                "ACTION", "SEQNUM", "SYNTH_UUID", "DEVPATH", "DEVPATH_OLD", "SUBSYSTEM",
                "DEVTYPE", "DRIVER", "MODALIAS", "DEVNAME", "DEVMODE", "DEVUID", "DEVGID",
                "MAJOR", "MINOR", "DISKSEQ", "PARTN", "IFINDEX", "INTERFACE", "DEVLINKS",
                "TAGS", "CURRENT_TAGS", "USEC_INITIALIZED", "UDEV_DATABASE_VERSION",
        };

        if (!name)
                return false;
        for (size_t i = 0; i < ARRAY_SIZE(owned); i++)
                if (streq(name, owned[i]))
                        return false;
        return !strneq(name, "SYNTH_ARG_", STRLEN("SYNTH_ARG_"));
}

static bool env_name_valid(const char *s)
{
        size_t n = strlen(s);
        char *t;
        bool ok;

        if (n == 0)
                return false;
        t = malloc(n + 2);
        if (!t)
                return false;
        memcpy(t, s, n);
        t[n] = '=';
        t[n + 1] = '\0';
        ok = env_assignment_valid(t) && !strchr(s, '=');
        free(t);
        return ok;
}

/* First line of a small file, without the newline; NULL on error (errno). */
static char *read_first_line(const char *path)
{
        _cleanup_free_ char *buf = NULL;
        size_t len;
        int r;

        r = read_file_bounded(path, 4096, &buf, &len);
        if (r < 0) {
                errno = -r;
                return NULL;
        }
        buf[strcspn(buf, "\n")] = '\0';
        return strdup(buf);
}

/* KEY=VALUE from /etc/os-release (else /usr/lib/os-release), unquoted;
 * "" if absent. NULL on error (errno). */
static char *os_release_field(const char *key)
{
        static const char *const files[] = { "/etc/os-release", "/usr/lib/os-release" };
        size_t klen = strlen(key);

        for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
                _cleanup_free_ char *buf = NULL;
                size_t len;
                char *line, *save = NULL;

                if (read_file_bounded(files[i], 65536, &buf, &len) < 0)
                        continue;
                for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                        char *v;
                        size_t vl;

                        line += strspn(line, WHITESPACE);
                        if (!strneq(line, key, klen) || line[klen] != '=')
                                continue;
                        v = line + klen + 1;
                        vl = strlen(v);
                        while (vl > 0 && is_ws(v[vl - 1]))
                                v[--vl] = '\0';
                        if (vl >= 2 && (v[0] == '"' || v[0] == '\'') && v[vl - 1] == v[0]) {
                                v[vl - 1] = '\0';
                                v++;
                        }
                        return strdup(v);
                }
                return strdup("");
        }
        return strdup("");
}

static char *spec_hostname(bool short_name)
{
        char host[256];

        if (gethostname(host, sizeof(host) - 1) < 0)
                return NULL;
        host[sizeof(host) - 1] = '\0';
        if (short_name)
                host[strcspn(host, ".")] = '\0';
        return strdup(host);
}

/* PRETTY_HOSTNAME= of /etc/machine-info, else the host name. */
static char *spec_pretty_hostname(void)
{
        _cleanup_free_ char *buf = NULL;
        size_t len;

        if (read_file_bounded("/etc/machine-info", 65536, &buf, &len) >= 0) {
                char *save = NULL;

                for (char *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
                        if (strneq(l, "PRETTY_HOSTNAME=", 16)) {
                                char *v = l + 16;
                                size_t vl = strlen(v);

                                if (vl >= 2 && (v[0] == '"' || v[0] == '\'') && v[vl - 1] == v[0]) {
                                        v[vl - 1] = '\0';
                                        v++;
                                }
                                if (*v)
                                        return strdup(v);
                        }
        }
        return spec_hostname(false);
}

static char *spec_tmp(bool var)
{
        const char *e = getenv("TMPDIR");

        if (e && e[0] == '/')
                return strdup(e);
        return strdup(var ? "/var/tmp" : "/tmp");
}

static const char *architecture(void);

/* The value of one specifier letter; NULL with errno set on failure
 * (EBADSLT: unknown letter). */
static char *specifier_value(char c)
{
        struct utsname u;
        char *s;

        switch (c) {
        case '%':
                return strdup("%");
        case 'a':
                return strdup(architecture() ? architecture() : "");
        case 'A':
                return os_release_field("IMAGE_VERSION");
        case 'b':
                s = read_first_line("/proc/sys/kernel/random/boot_id");
                if (s) /* systemd formats the boot ID without dashes */
                        for (char *r = s, *w = s;; r++)
                                if (*r != '-' && !(*w++ = *r))
                                        break;
                return s;
        case 'B':
                return os_release_field("BUILD_ID");
        case 'H':
                return spec_hostname(false);
        case 'l':
                return spec_hostname(true);
        case 'm':
                s = read_first_line("/etc/machine-id");
                if (s && strlen(s) != 32) {
                        free(s);
                        errno = ENOMEDIUM;
                        return NULL;
                }
                return s;
        case 'M':
                return os_release_field("IMAGE_ID");
        case 'o':
                return os_release_field("ID");
        case 'q':
                return spec_pretty_hostname();
        case 'T':
                return spec_tmp(false);
        case 'v':
                if (uname(&u) < 0)
                        return NULL;
                return strdup(u.release);
        case 'V':
                return spec_tmp(true);
        case 'w':
                return os_release_field("VERSION_ID");
        case 'W':
                return os_release_field("VARIANT_ID");
        default:
                errno = EBADSLT;
                return NULL;
        }
}

int link_specifier_expand(const char *in, char **ret)
{
        size_t cap = strlen(in) + 1, n = 0;
        char *out = malloc(cap);

        if (!out)
                return -ENOMEM;
        for (const char *p = in; *p; p++) {
                _cleanup_free_ char *v = NULL;
                const char *add;
                char one[2] = { *p, 0 };
                size_t l;

                if (*p == '%') {
                        if (!p[1]) { /* a trailing '%' stays as it is */
                                add = "%";
                        } else {
                                errno = 0;
                                v = specifier_value(*++p);
                                if (!v) {
                                        int e = errno ? errno : ENOMEM;

                                        free(out);
                                        return -e;
                                }
                                add = v;
                        }
                } else {
                        add = one;
                }
                l = strlen(add);
                if (n + l + 1 > cap) {
                        char *t;

                        cap = (n + l + 1) * 2;
                        t = realloc(out, cap);
                        if (!t) {
                                free(out);
                                return -ENOMEM;
                        }
                        out = t;
                }
                memcpy(out + n, add, l);
                n += l;
        }
        out[n] = '\0';
        *ret = out;
        return 0;
}

/* Replace the entry with the same "KEY=" in *l, or append (takes `s`). */
static int strv_env_replace(strv_t *l, char *s)
{
        size_t klen = strcspn(s, "=") + 1;

        for (char **e = *l; e && *e; e++)
                if (strneq(*e, s, klen)) {
                        free(*e);
                        *e = s;
                        return 0;
                }
        return strv_push(l, s);
}

/* Link.Property= (names = false) and ImportProperty=/UnsetProperty= (names). */
static int parse_udev_properties(struct parse_ctx *p, const char *v, strv_t *l, bool names)
{
        const char *cur = v;

        if (!*v) {
                strv_free(*l);
                *l = NULL;
                return 0;
        }
        for (;;) {
                char *w = NULL, *res = NULL;
                int r = extract_word(&cur, &w, EXTRACT_CUNESCAPE | EXTRACT_UNQUOTE);

                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        syntax_warning(p, "Invalid syntax, ignoring assignment: %s", v);
                        return 0;
                }
                if (r == 0)
                        return 0;
                r = link_specifier_expand(w, &res);
                if (r == -ENOMEM) {
                        free(w);
                        return r;
                }
                if (r < 0) {
                        errno = -r;
                        syntax_warning(p, "Failed to resolve specifiers in %s, ignoring "
                                       "assignment: %m", w);
                        free(w);
                        continue;
                }
                if (names) {
                        if (!env_name_valid(res) || !link_property_can_set(res)) {
                                syntax_warning(p, "Invalid udev property name, ignoring "
                                               "assignment: %s", res);
                                free(w);
                                free(res);
                                continue;
                        }
                        free(w);
                        r = strv_push(l, res);
                } else {
                        char *key;

                        if (!env_assignment_valid(res)) {
                                syntax_warning(p, "Invalid udev property, ignoring "
                                               "assignment: %s", w);
                                free(w);
                                free(res);
                                continue;
                        }
                        key = strndup(res, strcspn(res, "="));
                        if (!key) {
                                free(w);
                                free(res);
                                return -ENOMEM;
                        }
                        if (!link_property_can_set(key)) {
                                syntax_warning(p, "Invalid udev property name '%s', ignoring "
                                               "assignment: %s", key, res);
                                free(key);
                                free(w);
                                free(res);
                                continue;
                        }
                        free(key);
                        free(w);
                        r = strv_env_replace(l, res);
                }
                if (r < 0)
                        return r;
        }
}

static int p_udev_property(struct parse_ctx *p, const char *k, const char *v, void *d)
{
        (void)k;
        return parse_udev_properties(p, v, d, false);
}

static int p_udev_property_name(struct parse_ctx *p, const char *k, const char *v, void *d)
{
        (void)k;
        return parse_udev_properties(p, v, d, true);
}

/* Keys of systemd 256+ tudev does not apply. */
static const char *const ignored_new_link_keys[] = {
        "ReceivePacketSteeringCPUMask",
};

#define OFF(field) ((size_t)offsetof(struct link_config, field))
#define NOFF ((size_t)-1)

static const struct key_def {
        const char *section;
        const char *key;
        value_parser parse;
        size_t offset; /* data = config + offset, NOFF: none */
        int ltype;
} keys[] = {
        { "Match", "MACAddress", p_match_mac, NOFF, 0 },
        { "Match", "PermanentMACAddress", p_match_perm_mac, NOFF, 0 },
        { "Match", "OriginalName", p_match_ifnames, OFF(match.ifname), 0 },
        { "Match", "Path", p_match_strv, OFF(match.path), 0 },
        { "Match", "Driver", p_match_strv, OFF(match.driver), 0 },
        { "Match", "Type", p_match_strv, OFF(match.iftype), 0 },
        { "Match", "Kind", p_match_strv, OFF(match.kind), 0 },
        { "Match", "Property", p_match_property, OFF(match.property), 0 },
        { "Match", "Host", p_condition, NOFF, LINK_COND_HOST },
        { "Match", "Virtualization", p_condition, NOFF, LINK_COND_VIRTUALIZATION },
        { "Match", "KernelCommandLine", p_condition, NOFF, LINK_COND_KERNEL_COMMAND_LINE },
        { "Match", "KernelVersion", p_condition, NOFF, LINK_COND_KERNEL_VERSION },
        { "Match", "Credential", p_condition, NOFF, LINK_COND_CREDENTIAL },
        { "Match", "Architecture", p_condition, NOFF, LINK_COND_ARCHITECTURE },
        { "Match", "Firmware", p_condition, NOFF, LINK_COND_FIRMWARE },
        { "Link", "Description", p_string, OFF(description), 0 },
        { "Link", "Property", p_udev_property, OFF(properties), 0 },
        { "Link", "ImportProperty", p_udev_property_name, OFF(import_properties), 0 },
        { "Link", "UnsetProperty", p_udev_property_name, OFF(unset_properties), 0 },
        { "Link", "MACAddressPolicy", p_mac_policy, NOFF, 0 },
        { "Link", "MACAddress", p_mac, NOFF, 0 },
        { "Link", "NamePolicy", p_name_policy, NOFF, 0 },
        { "Link", "Name", p_ifname, NOFF, 0 },
        { "Link", "AlternativeName", p_alt_names, NOFF, 0 },
        { "Link", "AlternativeNamesPolicy", p_alt_policy, NOFF, 0 },
        { "Link", "Alias", p_alias, NOFF, 0 },
        { "Link", "TransmitQueues", p_queues, OFF(txqueues), 0 },
        { "Link", "ReceiveQueues", p_queues, OFF(rxqueues), 0 },
        { "Link", "TransmitQueueLength", p_txqueuelen, NOFF, 0 },
        { "Link", "MTUBytes", p_mtu, NOFF, 0 },
        { "Link", "GenericSegmentOffloadMaxBytes", p_gso_size, NOFF, 0 },
        { "Link", "GenericSegmentOffloadMaxSegments", p_gso_segs, NOFF, 0 },
};

/* systemd 252's other [Link] keys (ethtool, coalescing, SR-IOV, ...):
 * recognised, not applied. */
static const char *const ignored_link_keys[] = {
        "BitsPerSecond", "Duplex", "AutoNegotiation", "WakeOnLan", "WakeOnLanPassword", "Port",
        "ReceiveChecksumOffload", "TransmitChecksumOffload", "GenericSegmentationOffload",
        "TCPSegmentationOffload", "TCP6SegmentationOffload", "UDPSegmentationOffload",
        "GenericReceiveOffload", "GenericReceiveOffloadHardware", "LargeReceiveOffload",
        "ReceiveVLANCTAGHardwareAcceleration", "TransmitVLANCTAGHardwareAcceleration",
        "ReceiveVLANCTAGFilter", "TransmitVLANSTAGHardwareAcceleration", "NTupleFilter",
        "RxChannels", "TxChannels", "OtherChannels", "CombinedChannels", "Advertise",
        "RxBufferSize", "RxMiniBufferSize", "RxJumboBufferSize", "TxBufferSize",
        "RxFlowControl", "TxFlowControl", "AutoNegotiationFlowControl", "RxCoalesceSec",
        "RxMaxCoalescedFrames", "RxCoalesceIrqSec", "RxMaxCoalescedIrqFrames", "TxCoalesceSec",
        "TxMaxCoalescedFrames", "TxCoalesceIrqSec", "TxMaxCoalescedIrqFrames",
        "StatisticsBlockCoalesceSec", "UseAdaptiveRxCoalesce", "UseAdaptiveTxCoalesce",
        "CoalescePacketRateLow", "RxCoalesceLowSec", "RxMaxCoalescedLowFrames",
        "TxCoalesceLowSec", "TxMaxCoalescedLowFrames", "CoalescePacketRateHigh",
        "RxCoalesceHighSec", "RxMaxCoalescedHighFrames", "TxCoalesceHighSec",
        "TxMaxCoalescedHighFrames", "CoalescePacketRateSampleIntervalSec", "MDI",
        "SR-IOVVirtualFunctions",
};
static const char *const ignored_sriov_keys[] = {
        "VirtualFunction", "VLANId", "QualityOfService", "VLANProtocol", "MACSpoofCheck",
        "QueryReceiveSideScaling", "Trust", "LinkState", "MACAddress",
};

/* Every key of the three tables above is numbered (ignored_new_link_keys
 * first, then ignored_link_keys, then ignored_sriov_keys): its bit in
 * link_config.warned. */
static_assert(ARRAY_SIZE(ignored_new_link_keys) + ARRAY_SIZE(ignored_link_keys) +
                              ARRAY_SIZE(ignored_sriov_keys) <=
                      LINK_IGNORED_KEYS_MAX,
              "link_config.warned is too small for the ignored keys");

/* A key tudev parses and does not apply: one info message per key and file
 * (drop-ins included), naming the first line that sets it. */
static int p_ignored(struct parse_ctx *p, const char *section, const char *key, unsigned bit,
                     bool new_key)
{
        uint32_t mask = UINT32_C(1) << (bit % 32);

        if (p->c->warned[bit / 32] & mask)
                return 0;
        p->c->warned[bit / 32] |= mask;
        log_info("%s:%u: %s= in [%s]%s is not applied by tudev, ignoring.", p->file, p->line, key,
                 section, new_key ? " (systemd 256)" : "");
        return 0;
}

static int assign(struct parse_ctx *p, const char *section, const char *key, const char *value)
{
        const size_t n_new = ARRAY_SIZE(ignored_new_link_keys);
        const size_t n_link = ARRAY_SIZE(ignored_link_keys);

        for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
                void *data;

                if (!streq(keys[i].section, section) || !streq(keys[i].key, key))
                        continue;
                data = keys[i].offset == NOFF ? (void *)(intptr_t)keys[i].ltype :
                                                (char *)p->c + keys[i].offset;
                return keys[i].parse(p, key, value, data);
        }
        if (streq(section, "Link")) {
                for (size_t i = 0; i < n_new; i++)
                        if (streq(key, ignored_new_link_keys[i]))
                                return p_ignored(p, section, key, (unsigned)i, true);
                for (size_t i = 0; i < n_link; i++)
                        if (streq(key, ignored_link_keys[i]))
                                return p_ignored(p, section, key, (unsigned)(n_new + i), false);
        }
        if (streq(section, "SR-IOV"))
                for (size_t i = 0; i < ARRAY_SIZE(ignored_sriov_keys); i++)
                        if (streq(key, ignored_sriov_keys[i]))
                                return p_ignored(p, section, key, (unsigned)(n_new + n_link + i),
                                                 false);
        if (!strneq(key, "X-", 2))
                syntax_warning(p, "Unknown key name '%s' in section '%s', ignoring.", key, section);
        return 0;
}

/* ------------------------------------------------------------ file parser */

static bool utf8_valid(const char *s)
{
        while (*s) {
                int n = udev_utf8_char_len(s);

                if (n < 0)
                        return false;
                s += n;
        }
        return true;
}

struct line_state {
        char section[64];
        bool in_section;
        bool section_ignored;
};

/* One logical line; <0 makes the whole file fail (as systemd's parser). */
static int parse_line(struct parse_ctx *p, struct line_state *st, char *l)
{
        char *e;
        size_t k;

        l = strstrip(l);
        if (!*l)
                return 0;
        if (!utf8_valid(l)) {
                syntax_warning(p, "Invalid UTF-8, ignoring.");
                return -EINVAL;
        }
        if (l[0] == '[') {
                k = strlen(l);
                if (l[k - 1] != ']') {
                        log_error("%s:%u: Invalid section header '%s'", p->file, p->line, l);
                        return -EBADMSG;
                }
                l[k - 1] = '\0';
                l++;
                for (char *c = l; *c; c++)
                        if ((unsigned char)*c < ' ' || *c == 127) {
                                log_error("%s:%u: Bad characters in section header", p->file,
                                          p->line);
                                return -EBADMSG;
                        }
                if (!streq(l, "Match") && !streq(l, "Link") && !streq(l, "SR-IOV")) {
                        if (!strneq(l, "X-", 2))
                                syntax_warning(p, "Unknown section '%s'. Ignoring.", l);
                        st->in_section = false;
                        st->section_ignored = true;
                        return 0;
                }
                snprintf(st->section, sizeof(st->section), "%s", l);
                st->in_section = true;
                st->section_ignored = false;
                return 0;
        }
        if (!st->in_section) {
                if (!st->section_ignored)
                        syntax_warning(p, "Assignment outside of section. Ignoring.");
                return 0;
        }
        e = strchr(l, '=');
        if (!e) {
                syntax_warning(p, "Missing '=', ignoring line.");
                return 0;
        }
        if (e == l) {
                syntax_warning(p, "Missing key name before '=', ignoring line.");
                return 0;
        }
        *e = '\0';
        return assign(p, st->section, strstrip(l), strstrip(e + 1));
}

/* Parse a whole file into p->c: comments, BOM, backslash continuations. */
static int parse_file(const char *path, struct link_config *c)
{
        _cleanup_free_ char *buf = NULL, *cont = NULL;
        struct parse_ctx p = { .file = path, .c = c };
        struct line_state st = { .in_section = false };
        size_t len;
        char *cur, *end;
        int r;

        r = read_file_bounded(path, LINK_FILE_MAX, &buf, &len);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return log_error_errno(r, "Failed to read configuration file '%s': %m", path);
        if (strlen(buf) != len)
                return log_error_errno(-EINVAL, "%s: contains NUL bytes", path);
        cur = buf;
        if (strneq(cur, "\xef\xbb\xbf", 3))
                cur += 3;
        end = buf + len;
        while (cur < end) {
                char *nl = strchr(cur, '\n'), *l = cur, *q;
                bool escaped = false;
                size_t n;

                if (nl)
                        *nl = '\0';
                cur = nl ? nl + 1 : end;
                p.line++;
                q = l + strspn(l, WHITESPACE);
                if (*q == '#' || *q == ';')
                        continue;
                if (cont) {
                        size_t a = strlen(cont), b = strlen(l);
                        char *nc;

                        if (a + b > LINK_LINE_MAX)
                                return -ENOBUFS;
                        nc = realloc(cont, a + b + 1);
                        if (!nc)
                                return -ENOMEM;
                        memcpy(nc + a, l, b + 1);
                        cont = nc;
                        l = cont;
                }
                n = strlen(l);
                for (size_t i = 0; i < n; i++) {
                        if (escaped)
                                escaped = false;
                        else if (l[i] == '\\')
                                escaped = true;
                }
                if (escaped) {
                        l[n - 1] = ' ';
                        if (!cont) {
                                cont = strdup(l);
                                if (!cont)
                                        return -ENOMEM;
                        }
                        continue;
                }
                r = parse_line(&p, &st, l);
                if (r < 0)
                        return r;
                free(cont);
                cont = NULL;
        }
        if (cont) {
                p.line++;
                r = parse_line(&p, &st, cont);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ------------------------------------------------------------ listing */

struct file_list {
        char **paths; /* "<dir>/<name>" */
        size_t n;
};

static void file_list_free(struct file_list *l)
{
        for (size_t i = 0; i < l->n; i++)
                free(l->paths[i]);
        free(l->paths);
        *l = (struct file_list){ 0 };
}

static const char *base_name(const char *p)
{
        const char *s = strrchr(p, '/');

        return s ? s + 1 : p;
}

static int cmp_base(const void *a, const void *b)
{
        return strcmp(base_name(*(char *const *)a), base_name(*(char *const *)b));
}

static bool hidden_or_backup(const char *n)
{
        static const char *const suffixes[] = { "~", ".rpmnew", ".rpmsave", ".rpmorig",
                                                ".dpkg-old", ".dpkg-new", ".dpkg-tmp",
                                                ".dpkg-dist", ".dpkg-bak", ".dpkg-backup",
                                                ".dpkg-remove", ".ucf-new", ".ucf-old",
                                                ".ucf-dist", ".swp", ".bak", ".old", ".new" };
        size_t len = strlen(n);

        if (n[0] == '.')
                return true;
        for (size_t i = 0; i < ARRAY_SIZE(suffixes); i++) {
                size_t s = strlen(suffixes[i]);

                if (len >= s && streq(n + len - s, suffixes[i]))
                        return true;
        }
        return false;
}

/* Files "*<suffix>" of `dirs` (each optionally + "/" + sub), the first
 * directory winning for a basename, sorted by basename. */
static int list_files(const char *const *dirs, const char *sub, const char *suffix,
                      struct file_list *out)
{
        size_t slen = strlen(suffix);

        for (size_t d = 0; dirs[d]; d++) {
                char dir[PATH_MAX];
                struct dirent *de;
                DIR *dp;

                if ((size_t)snprintf(dir, sizeof(dir), "%s%s%s", dirs[d], sub ? "/" : "",
                                     sub ? sub : "") >= sizeof(dir))
                        continue;
                dp = opendir(dir);
                if (!dp)
                        continue;
                while ((de = readdir(dp))) {
                        size_t nlen = strlen(de->d_name);
                        bool seen = false;
                        char **np, *path;

                        if (hidden_or_backup(de->d_name) || nlen <= slen ||
                            !streq(de->d_name + nlen - slen, suffix))
                                continue;
                        if (de->d_type != DT_REG && de->d_type != DT_LNK &&
                            de->d_type != DT_UNKNOWN)
                                continue;
                        for (size_t i = 0; i < out->n && !seen; i++)
                                seen = streq(base_name(out->paths[i]), de->d_name);
                        if (seen || out->n >= LINK_FILES_MAX)
                                continue;
                        if (asprintf(&path, "%s/%s", dir, de->d_name) < 0) {
                                closedir(dp);
                                return -ENOMEM;
                        }
                        np = realloc(out->paths, (out->n + 1) * sizeof(char *));
                        if (!np) {
                                free(path);
                                closedir(dp);
                                return -ENOMEM;
                        }
                        out->paths = np;
                        out->paths[out->n++] = path;
                }
                closedir(dp);
        }
        if (out->n > 1)
                qsort(out->paths, out->n, sizeof(char *), cmp_base);
        return 0;
}

/* A symlink to /dev/null or an empty regular file. */
static bool null_or_empty(const char *path)
{
        struct stat st;

        if (stat(path, &st) < 0)
                return false;
        if (S_ISREG(st.st_mode))
                return st.st_size == 0;
        return S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 && minor(st.st_rdev) == 3;
}

/* ------------------------------------------------------------ conditions */

static bool cond_kernel_command_line(const char *value)
{
        _cleanup_free_ char *line = NULL;
        const char *e = getenv("SYSTEMD_PROC_CMDLINE");
        const char *cur;
        bool has_eq = strchr(value, '=');
        size_t len;

        if (e) {
                line = strdup(e);
                if (!line)
                        return false;
        } else if (read_file_bounded("/proc/cmdline", CMDLINE_MAX, &line, &len) < 0) {
                return false;
        }
        cur = line;
        for (;;) {
                _cleanup_free_ char *w = NULL;
                const char *word;

                if (extract_word(&cur, &w, EXTRACT_UNQUOTE | EXTRACT_RELAX) <= 0)
                        return false;
                word = w;
                if (has_eq ? streq(word, value) :
                             (streq(word, value) ||
                              (strneq(word, value, strlen(value)) && word[strlen(value)] == '=')))
                        return true;
        }
}

static const char *architecture(void)
{
        static const struct {
                const char *machine;
                const char *name;
        } map[] = {
                { "x86_64", "x86-64" }, { "i686", "x86" },     { "i586", "x86" },
                { "i486", "x86" },      { "i386", "x86" },     { "aarch64", "arm64" },
                { "armv7l", "arm" },    { "armv6l", "arm" },   { "ppc64le", "ppc64-le" },
                { "ppc64", "ppc64" },   { "s390x", "s390x" },  { "riscv64", "riscv64" },
                { "loongarch64", "loongarch64" }, { "mips64", "mips64" },
        };
        static _Thread_local struct utsname u;

        if (uname(&u) < 0)
                return NULL;
        for (size_t i = 0; i < ARRAY_SIZE(map); i++)
                if (streq(u.machine, map[i].machine))
                        return map[i].name;
        return u.machine;
}

static bool cond_test(const struct link_condition *c)
{
        struct utsname u;
        char host[256];
        bool r;

        switch (c->type) {
        case LINK_COND_KERNEL_COMMAND_LINE:
                r = cond_kernel_command_line(c->value);
                break;
        case LINK_COND_HOST:
                r = gethostname(host, sizeof(host)) >= 0 &&
                    fnmatch(c->value, host, FNM_CASEFOLD) == 0;
                break;
        case LINK_COND_ARCHITECTURE:
                r = architecture() && streq(c->value, architecture());
                break;
        case LINK_COND_KERNEL_VERSION:
                r = uname(&u) >= 0 && fnmatch(c->value, u.release, 0) == 0;
                break;
        default:
                log_warning("A [Match] condition is not supported by tudev; "
                            "the .link file does not match.");
                return false;
        }
        return r != c->negate;
}

/* ------------------------------------------------------------ loading */

static bool match_empty(const struct link_match *m)
{
        return !m->hw_addrs_set && !m->perm_addrs_set && !m->path && !m->driver &&
               !m->iftype && !m->kind && !m->ifname && !m->property;
}

int link_config_parse_file(const char *path, struct link_config **ret)
{
        const char *const *dirs = link_config_dirs();
        struct file_list dropins = { 0 };
        struct link_config *c;
        char sub[NAME_MAX + 8];
        int r;

        *ret = NULL;
        if (null_or_empty(path)) {
                log_debug("Skipping empty file: %s", path);
                return 0;
        }
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->filename = strdup(path);
        c->mac_policy = MAC_POLICY_NONE;
        c->txqueuelen = UINT32_MAX;
        if (!c->filename) {
                link_config_free(c);
                return -ENOMEM;
        }
        snprintf(sub, sizeof(sub), "%s.d", base_name(path));
        r = list_files(dirs, sub, ".conf", &dropins);
        if (r >= 0)
                r = parse_file(path, c);
        for (size_t i = 0; r >= 0 && i < dropins.n; i++) {
                char *d;

                r = parse_file(dropins.paths[i], c);
                if (r < 0)
                        break;
                d = strdup(dropins.paths[i]);
                r = d ? strv_push(&c->dropins, d) : -ENOMEM;
        }
        file_list_free(&dropins);
        if (r < 0) {
                link_config_free(c);
                return r;
        }
        if (match_empty(&c->match) && c->match.n_conds == 0) {
                log_warning("%s: No valid settings found in the [Match] section, ignoring file. "
                            "To match all interfaces, add OriginalName=* in the [Match] section.",
                            path);
                link_config_free(c);
                return 0;
        }
        for (size_t i = 0; i < c->match.n_conds; i++)
                if (!cond_test(&c->match.conds[i])) {
                        log_debug("%s: Conditions do not match the system environment, "
                                  "skipping.", path);
                        link_config_free(c);
                        return 0;
                }
        if ((c->mac_policy == MAC_POLICY_PERSISTENT || c->mac_policy == MAC_POLICY_RANDOM) &&
            c->mac.length > 0)
                log_warning("%s: MACAddress= in [Link] section will be ignored when "
                            "MACAddressPolicy= is set to \"persistent\" or \"random\".", path);
        log_debug("Parsed configuration file \"%s\"", path);
        *ret = c;
        return 1;
}

int link_config_load(struct link_config_set *set)
{
        struct file_list files = { 0 };
        struct link_config **tail = &set->first;
        int r;

        link_config_set_free(set);
        r = list_files(link_config_dirs(), NULL, ".link", &files);
        if (r < 0) {
                file_list_free(&files);
                return r;
        }
        for (size_t i = 0; i < files.n; i++) {
                struct link_config *c;

                r = link_config_parse_file(files.paths[i], &c);
                if (r == -ENOMEM) {
                        file_list_free(&files);
                        return r;
                }
                if (r <= 0)
                        continue;
                *tail = c;
                tail = &c->next;
        }
        file_list_free(&files);
        return 0;
}

static uint64_t fp_path(uint64_t h, const char *path)
{
        struct stat st;

        h = fnv1a64(h, path, strlen(path) + 1);
        if (stat(path, &st) < 0)
                return fnv1a64(h, "-", 1);
        h = fnv1a64(h, &st.st_ino, sizeof(st.st_ino));
        h = fnv1a64(h, &st.st_dev, sizeof(st.st_dev));
        h = fnv1a64(h, &st.st_size, sizeof(st.st_size));
        h = fnv1a64(h, &st.st_mtim, sizeof(st.st_mtim));
        return h;
}

uint64_t link_config_fingerprint(void)
{
        const char *const *dirs = link_config_dirs();
        struct file_list files = { 0 };
        uint64_t h = FNV1A64_INIT;

        for (size_t d = 0; dirs[d]; d++)
                h = fp_path(h, dirs[d]);
        if (list_files(dirs, NULL, ".link", &files) < 0)
                return h ^ 1;
        for (size_t i = 0; i < files.n; i++) {
                struct file_list dropins = { 0 };
                char sub[NAME_MAX + 8];

                h = fp_path(h, files.paths[i]);
                snprintf(sub, sizeof(sub), "%s.d", base_name(files.paths[i]));
                for (size_t d = 0; dirs[d]; d++) {
                        char dir[PATH_MAX];

                        snprintf(dir, sizeof(dir), "%s/%s", dirs[d], sub);
                        h = fp_path(h, dir);
                }
                if (list_files(dirs, sub, ".conf", &dropins) >= 0)
                        for (size_t j = 0; j < dropins.n; j++)
                                h = fp_path(h, dropins.paths[j]);
                file_list_free(&dropins);
        }
        file_list_free(&files);
        return h;
}

/* ------------------------------------------------------------ matching */

/* Globs with '!' negation: any positive pattern must match, no negative. */
static bool test_strv(strv_t patterns, const char *s)
{
        bool match = false, positive = false;

        if (!patterns || !patterns[0])
                return true;
        for (char **p = patterns; *p; p++) {
                const char *q = *p;
                bool invert = *q == '!';

                q += invert;
                if (!invert)
                        positive = true;
                if (s && fnmatch(q, s, 0) == 0) {
                        if (invert)
                                return false;
                        match = true;
                }
        }
        return positive ? match : true;
}

static bool test_property(strv_t props, const struct link_match_input *in)
{
        for (char **p = props; p && *p; p++) {
                bool invert = **p == '!', v;
                const char *kv = *p + invert, *eq = strchr(kv, '='), *dv;
                char key[256];

                if (!eq || (size_t)(eq - kv) >= sizeof(key))
                        return false;
                memcpy(key, kv, (size_t)(eq - kv));
                key[eq - kv] = '\0';
                dv = in->get_property ? in->get_property(in->userdata, key) : NULL;
                v = dv && fnmatch(eq + 1, dv, 0) == 0;
                if (invert ? v : !v)
                        return false;
        }
        return true;
}

static bool addr_in(const struct hw_addr *set, size_t n, const struct hw_addr *a)
{
        for (size_t i = 0; i < n; i++)
                if (set[i].length == a->length && memcmp(set[i].bytes, a->bytes, a->length) == 0)
                        return true;
        return false;
}

bool link_match_test(const struct link_match *m, const struct link_match_input *in)
{
        if (m->hw_addrs_set && (!in->hw_addr || !addr_in(m->hw_addrs, m->n_hw_addrs, in->hw_addr)))
                return false;
        if (m->perm_addrs_set &&
            (!in->perm_addr || !addr_in(m->perm_addrs, m->n_perm_addrs, in->perm_addr)))
                return false;
        return test_strv(m->path, in->path) && test_strv(m->driver, in->driver) &&
               test_strv(m->iftype, in->iftype) && test_strv(m->kind, in->kind) &&
               test_strv(m->ifname, in->ifname) && test_property(m->property, in);
}
