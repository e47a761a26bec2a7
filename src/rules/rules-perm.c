/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (see rules-perm.h) */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "builtins/builtin-util.h"
#include "rules/rules-perm.h"
#include "shared/macro.h"

/* NSS record buffers grow up to this size (a group with many members). */
#define NSS_BUF_MAX (1024u * 1024u)

int rules_parse_mode(const char *s, mode_t *ret)
{
        unsigned m;
        int r;

        /* systemd: safe_atou_full(s, 8 | SAFE_ATO_REFUSE_PLUS_MINUS) */
        r = parse_atou_full(s, 8 | PARSE_REFUSE_PLUS_MINUS, &m);
        if (r < 0)
                return r;
        if (m > 07777)
                return -ERANGE;
        if (ret)
                *ret = (mode_t)m;
        return 0;
}

int rules_parse_id(const char *s, uint32_t *ret)
{
        unsigned long long v;
        int r;

        r = parse_atollu_full(s, 10 | PARSE_REFUSE_PLUS_MINUS | PARSE_REFUSE_LEADING_ZERO |
                                         PARSE_REFUSE_LEADING_WHITESPACE,
                              &v);
        if (r < 0)
                return r;
        if (v > UINT32_MAX)
                return -ERANGE;
        if (v == UINT32_MAX || v == 65535)
                return -ENXIO;
        if (ret)
                *ret = (uint32_t)v;
        return 0;
}

/* getpwnam_r()/getgrnam_r() with a growing buffer: 0, -ESRCH, -ENOMEM, -errno. */
static int nss_lookup(bool group, const char *name, uint32_t *ret)
{
        long hint = sysconf(group ? _SC_GETGR_R_SIZE_MAX : _SC_GETPW_R_SIZE_MAX);
        size_t size = hint > 0 && hint < (long)NSS_BUF_MAX ? (size_t)hint : 4096;

        for (;;) {
                _cleanup_free_ char *buf = malloc(size);
                int r;

                if (!buf)
                        return -ENOMEM;
                if (group) {
                        struct group gr, *res = NULL;

                        r = getgrnam_r(name, &gr, buf, size, &res);
                        if (r == 0 && res) {
                                *ret = (uint32_t)res->gr_gid;
                                return 0;
                        }
                } else {
                        struct passwd pw, *res = NULL;

                        r = getpwnam_r(name, &pw, buf, size, &res);
                        if (r == 0 && res) {
                                *ret = (uint32_t)res->pw_uid;
                                return 0;
                        }
                }
                if (r == ERANGE && size < NSS_BUF_MAX) {
                        size *= 2;
                        continue;
                }
                /* not found: 0 with no record, or ENOENT/ESRCH by some NSS modules */
                return r == 0 || r == ENOENT || r == ESRCH ? -ESRCH : -r;
        }
}

int rules_resolve_id(bool group, const char *name, uint32_t *ret)
{
        uint32_t id = 0;
        int r;

        if (streq(name, "root")) {
                *ret = 0;
                return 0;
        }
        if (rules_parse_id(name, &id) == 0) {
                *ret = id;
                return 0;
        }
        r = nss_lookup(group, name, &id);
        if (r < 0 && r != -ENOMEM && streq(name, group ? "nogroup" : "nobody")) {
                id = RULES_ID_NOBODY;
                r = 0;
        }
        if (r < 0)
                return r;
        *ret = id;
        return 0;
}
