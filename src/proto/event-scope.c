/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (pure functions over caller-owned structs) */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/event-scope.h"

bool event_scope_devpath_below(const char *prefix, const char *devpath)
{
        size_t n = strlen(prefix);

        if (n == 0)
                return true;
        return strncmp(prefix, devpath, n) == 0 && (devpath[n] == '\0' || devpath[n] == '/');
}

bool event_scope_match(const struct event_scope *s, uint64_t first_seqnum,
                       const char *subsystem, const char *devpath)
{
        if (s->seqnum > 0 && first_seqnum > s->seqnum)
                return false;
        if (s->subsystem[0] && strcmp(s->subsystem, subsystem ? subsystem : "") != 0)
                return false;
        return event_scope_devpath_below(s->devpath, devpath ? devpath : "");
}

static bool has_ctrl(const char *s, bool no_space)
{
        for (; *s; s++)
                if ((unsigned char)*s < 0x20 || *s == 0x7f || (no_space && *s == ' '))
                        return true;
        return false;
}

static bool subsystem_valid(const char *s)
{
        return s[0] && !has_ctrl(s, true);
}

static bool devpath_valid(const char *s)
{
        size_t n = strlen(s);

        return s[0] == '/' && n > 1 && s[n - 1] != '/' && !has_ctrl(s, false);
}

static int copy_value(char *dst, size_t size, const char *src, size_t len)
{
        if (len >= size)
                return -ENAMETOOLONG;
        memcpy(dst, src, len);
        dst[len] = '\0';
        return 0;
}

int event_scope_parse(const char *args, struct event_scope *ret)
{
        struct event_scope s = {};
        int last = -1; /* index of the last key seen: keys come in order */
        const char *p = args;
        int r;

        while (*p) {
                if (strncmp(p, "seqnum=", 7) == 0 && last < 0) {
                        const char *v = p + 7;
                        char *end;

                        if (*v < '0' || *v > '9')
                                return -EINVAL;
                        errno = 0;
                        unsigned long long n = strtoull(v, &end, 10);
                        if (errno != 0 || n == 0 || (*end && *end != ' '))
                                return -EINVAL;
                        s.seqnum = n;
                        p = end;
                        last = 0;
                } else if (strncmp(p, "subsystem=", 10) == 0 && last < 1) {
                        const char *v = p + 10;
                        size_t len = strcspn(v, " ");

                        r = copy_value(s.subsystem, sizeof(s.subsystem), v, len);
                        if (r < 0)
                                return r;
                        if (!subsystem_valid(s.subsystem))
                                return -EINVAL;
                        p = v + len;
                        last = 1;
                } else if (strncmp(p, "devpath=", 8) == 0) {
                        const char *v = p + 8;

                        r = copy_value(s.devpath, sizeof(s.devpath), v, strlen(v));
                        if (r < 0)
                                return r;
                        if (!devpath_valid(s.devpath))
                                return -EINVAL;
                        p = v + strlen(v);
                        last = 2;
                } else {
                        return -EINVAL;
                }
                if (*p == ' ') {
                        p++;
                        if (!*p)
                                return -EINVAL; /* trailing space */
                }
        }
        *ret = s;
        return 0;
}

int event_scope_format(const struct event_scope *s, const char *name, char *buf, size_t size)
{
        size_t len = 0;
        int n;

        if (s->subsystem[0] && !subsystem_valid(s->subsystem))
                return -EINVAL;
        if (s->devpath[0] && !devpath_valid(s->devpath))
                return -EINVAL;
#define APPEND(...)                                                                    \
        do {                                                                           \
                n = snprintf(buf + len, size > len ? size - len : 0, __VA_ARGS__);     \
                if (n < 0)                                                             \
                        return -EINVAL;                                                \
                len += (size_t)n;                                                      \
                if (len >= size)                                                       \
                        return -ENAMETOOLONG;                                          \
        } while (0)
        if (size == 0)
                return -ENAMETOOLONG;
        APPEND("%s", name);
        if (s->seqnum > 0)
                APPEND(" seqnum=%" PRIu64, s->seqnum);
        if (s->subsystem[0])
                APPEND(" subsystem=%s", s->subsystem);
        if (s->devpath[0])
                APPEND(" devpath=%s", s->devpath);
#undef APPEND
        return (int)len;
}
