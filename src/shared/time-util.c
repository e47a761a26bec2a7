/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any */
#include <ctype.h>
#include <stdbool.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shared/time-util.h"

uint64_t now_usec(clockid_t clock)
{
        struct timespec ts;

        if (clock_gettime(clock, &ts) < 0)
                abort(); /* cannot fail for the clocks we use */
        return (uint64_t)ts.tv_sec * USEC_PER_SEC + (uint64_t)ts.tv_nsec / NSEC_PER_USEC;
}

static const struct {
        const char *suffix;
        uint64_t usec;
} units[] = {
        { "usec", 1 },     { "us", 1 },
        { "msec", 1000 },  { "ms", 1000 },
        { "seconds", USEC_PER_SEC }, { "second", USEC_PER_SEC }, { "sec", USEC_PER_SEC },
        { "s", USEC_PER_SEC },
        { "minutes", 60 * USEC_PER_SEC }, { "minute", 60 * USEC_PER_SEC },
        { "min", 60 * USEC_PER_SEC }, { "m", 60 * USEC_PER_SEC },
        { "hours", 3600 * USEC_PER_SEC }, { "hour", 3600 * USEC_PER_SEC },
        { "hr", 3600 * USEC_PER_SEC }, { "h", 3600 * USEC_PER_SEC },
};

int parse_timespan_usec(const char *s, uint64_t *ret)
{
        uint64_t total = 0;
        bool any = false;

        if (!s)
                return -EINVAL;
        for (const char *p = s;;) {
                while (isspace((unsigned char)*p))
                        p++;
                if (!*p)
                        break;
                if (!isdigit((unsigned char)*p))
                        return -EINVAL;
                errno = 0;
                char *end;
                unsigned long long v = strtoull(p, &end, 10);
                if (errno == ERANGE)
                        return -ERANGE;
                uint64_t mult = USEC_PER_SEC;
                p = end;
                while (isspace((unsigned char)*p))
                        p++;
                if (isalpha((unsigned char)*p)) {
                        size_t n = 0;
                        while (isalpha((unsigned char)p[n]))
                                n++;
                        bool found = false;
                        for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
                                if (strlen(units[i].suffix) == n &&
                                    strncmp(units[i].suffix, p, n) == 0) {
                                        mult = units[i].usec;
                                        found = true;
                                        break;
                                }
                        if (!found)
                                return -EINVAL;
                        p += n;
                }
                if (v > UINT64_MAX / mult || total + v * mult < total)
                        return -ERANGE;
                total += v * mult;
                any = true;
        }
        if (!any)
                return -EINVAL;
        *ret = total;
        return 0;
}
