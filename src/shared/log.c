/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <syslog.h>
#include <unistd.h>

#include "shared/compat.h"
#include "shared/log.h"
#include "shared/time-util.h"

static _Atomic int max_level = LOG_INFO;
static _Thread_local int thread_level = -1; /* -1: follow max_level */
static _Atomic int target = LOG_TARGET_CONSOLE;
static int kmsg_fd = -1;
static _Atomic bool console_plain = false;
static char log_ident[32] = "tudev";

static const char *const level_names[8] = {
        "emerg", "alert", "crit", "err", "warning", "notice", "info", "debug",
};

void log_set_target(enum log_target t, const char *ident)
{
        snprintf(log_ident, sizeof(log_ident), "%s", ident);
        if (t == LOG_TARGET_AUTO) {
                if (isatty(STDERR_FILENO))
                        t = LOG_TARGET_CONSOLE;
                else if (access("/dev/log", W_OK) == 0)
                        t = LOG_TARGET_SYSLOG;
                else
                        t = LOG_TARGET_KMSG;
        }
        if (t == LOG_TARGET_KMSG && kmsg_fd < 0) {
                kmsg_fd = open("/dev/kmsg", O_WRONLY | O_NOCTTY | O_CLOEXEC);
                if (kmsg_fd < 0)
                        t = LOG_TARGET_CONSOLE;
        }
        if (t == LOG_TARGET_SYSLOG)
                openlog(log_ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
        atomic_store(&target, t);
}

void log_set_console_plain(bool plain) { atomic_store(&console_plain, plain); }

void log_set_max_level(int level)
{
        if (level < LOG_EMERG)
                level = LOG_EMERG;
        if (level > LOG_DEBUG)
                level = LOG_DEBUG;
        atomic_store(&max_level, level);
}

int log_get_max_level(void)
{
        if (thread_level >= 0)
                return thread_level;
        return atomic_load_explicit(&max_level, memory_order_relaxed);
}

void log_set_thread_max_level(int level)
{
        if (level < 0)
                thread_level = -1;
        else
                thread_level = level > LOG_DEBUG ? LOG_DEBUG : level;
}

int log_get_thread_max_level(void) { return thread_level; }

int log_level_from_string(const char *s)
{
        if (!s || !*s)
                return -EINVAL;
        if (s[0] >= '0' && s[0] <= '7' && s[1] == '\0')
                return s[0] - '0';
        for (int i = 0; i < 8; i++)
                if (strcmp(s, level_names[i]) == 0)
                        return i;
        if (strcmp(s, "error") == 0)
                return LOG_ERR;
        if (strcmp(s, "warn") == 0)
                return LOG_WARNING;
        return -EINVAL;
}

const char *log_level_to_string(int level)
{
        if (level < 0 || level > 7)
                return "?";
        return level_names[level];
}

/* Expand %m to the message of `error` (error_message()) while copying fmt. */
static void expand_percent_m(char *out, size_t n, const char *fmt, int error)
{
        char ebuf[128];
        const char *msg = NULL;
        size_t o = 0;

        for (const char *p = fmt; *p && o + 1 < n; p++) {
                if (p[0] == '%' && p[1] == '%') {
                        if (o + 2 >= n)
                                break;
                        out[o++] = '%';
                        out[o++] = '%';
                        p++;
                        continue;
                }
                if (p[0] == '%' && p[1] == 'm') {
                        if (!msg)
                                msg = error_message(error, ebuf, sizeof(ebuf));
                        for (const char *m = msg; *m && o + 2 < n; m++) {
                                if (*m == '%')
                                        out[o++] = '%';
                                out[o++] = *m;
                        }
                        p++;
                        continue;
                }
                out[o++] = *p;
        }
        out[o] = '\0';
}

int log_internal(int level, int error, const char *file, int line, const char *fmt, ...)
{
        char fmtbuf[512], buf[LOG_LINE_MAX];
        int saved_errno = errno;
        int e = error < 0 ? -error : error;
        va_list ap;

        expand_percent_m(fmtbuf, sizeof(fmtbuf), fmt, e);
        va_start(ap, fmt);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
        /* fmtbuf is the caller's (compile-time checked) format with %m expanded */
        int len = vsnprintf(buf, sizeof(buf) - 1, fmtbuf, ap);
#pragma GCC diagnostic pop
        va_end(ap);
        if (len < 0)
                len = 0;
        if ((size_t)len >= sizeof(buf) - 1)
                len = sizeof(buf) - 2; /* truncated: keep what fits */

        int t = atomic_load(&target);
        if (t == LOG_TARGET_SYSLOG) {
                syslog(level, "%s", buf);
        } else if (t == LOG_TARGET_KMSG) {
                char prefix[64];
                int plen = snprintf(prefix, sizeof(prefix), "<%d>%s[%d]: ",
                                    LOG_DAEMON | level, log_ident, (int)getpid());
                buf[len++] = '\n';
                struct iovec iov[2] = {
                        { .iov_base = prefix, .iov_len = (size_t)plen },
                        { .iov_base = buf, .iov_len = (size_t)len },
                };
                ssize_t _unused_ w = writev(kmsg_fd, iov, 2);
        } else {
                char prefix[64];
                uint64_t ts = now_usec(CLOCK_MONOTONIC);
                int plen = 0;
                if (!atomic_load(&console_plain))
                        plen = snprintf(prefix, sizeof(prefix), "[%5llu.%06llu] %s: ",
                                        (unsigned long long)(ts / USEC_PER_SEC),
                                        (unsigned long long)(ts % USEC_PER_SEC),
                                        log_level_to_string(level));
                buf[len++] = '\n';
                struct iovec iov[2] = {
                        { .iov_base = prefix, .iov_len = (size_t)plen },
                        { .iov_base = buf, .iov_len = (size_t)len },
                };
                ssize_t _unused_ w = writev(STDERR_FILENO, iov, 2);
        }
        (void)file;
        (void)line;
        errno = saved_errno;
        return -e;
}

bool ratelimit_below(struct ratelimit *rl, unsigned *suppressed)
{
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        uint64_t begin = atomic_load(&rl->begin);

        *suppressed = 0;
        if (begin == 0 || now - begin > rl->interval_usec) {
                if (atomic_compare_exchange_strong(&rl->begin, &begin, now)) {
                        atomic_store(&rl->num, 0);
                        *suppressed = atomic_exchange(&rl->suppressed, 0);
                }
        }
        if (atomic_fetch_add(&rl->num, 1) < rl->burst)
                return true;
        atomic_fetch_add(&rl->suppressed, 1);
        return false;
}
