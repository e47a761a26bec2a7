/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any, but one caller at a time (see cpu-load.h) */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "udevd/cpu-load.h"

#define LOADAVG_TEXT_MAX 128 /* "1.00 1.00 1.00 4294967295/4294967295 4194304\n" */

struct cpu_load {
        int fd;
        unsigned cpus;
        bool have_sample;
        uint64_t last_usec; /* when the last reading was taken */
        bool busy;          /* its answer */
};

int cpu_load_parse_runnable(const char *text, unsigned *ret)
{
        const char *p = text;
        unsigned long v;
        char *end;

        /* skip the three averages */
        for (int i = 0; i < 3; i++) {
                p = strchr(p, ' ');
                if (!p)
                        return -EINVAL;
                p++;
        }
        if (*p < '0' || *p > '9')
                return -EINVAL;
        errno = 0;
        v = strtoul(p, &end, 10);
        if (errno != 0 || *end != '/' || v > UINT_MAX)
                return -EINVAL;
        *ret = (unsigned)v;
        return 0;
}

static int read_runnable(int fd, unsigned *ret)
{
        char buf[LOADAVG_TEXT_MAX];
        ssize_t n;

        n = pread(fd, buf, sizeof(buf) - 1, 0);
        if (n < 0)
                return -errno;
        buf[n] = '\0';
        return cpu_load_parse_runnable(buf, ret);
}

int cpu_load_new(const char *proc_root, unsigned cpus, struct cpu_load **ret)
{
        char path[PATH_MAX];
        struct cpu_load *l;
        unsigned runnable;
        int fd;

        snprintf(path, sizeof(path), "%s/loadavg", proc_root);
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -ENOENT;
        if (read_runnable(fd, &runnable) < 0) {
                close(fd);
                return -ENOENT;
        }
        l = calloc(1, sizeof(*l));
        if (!l) {
                close(fd);
                return -ENOMEM;
        }
        l->fd = fd;
        l->cpus = cpus ? cpus : 1;
        *ret = l;
        return 0;
}

void cpu_load_free(struct cpu_load *l)
{
        if (!l)
                return;
        close(l->fd);
        free(l);
}

bool cpu_load_busy(struct cpu_load *l, uint64_t now_usec, uint64_t period_usec)
{
        unsigned runnable;

        if (l->have_sample && now_usec < l->last_usec + period_usec)
                return l->busy;
        l->have_sample = true;
        l->last_usec = now_usec;
        if (read_runnable(l->fd, &runnable) < 0)
                return l->busy = false;
        /* the count includes the reader */
        return l->busy = runnable > l->cpus;
}
