/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any */
#pragma once
/* One logging API for the daemon and udevadm.
 *
 * Levels are syslog's (LOG_ERR .. LOG_DEBUG). Messages go to stderr
 * (log_open_console) or to syslog (log_open_syslog). Each message is formatted
 * into a per-call stack buffer and written with a single write(2), so lines of
 * different threads never interleave. The maximum level is an atomic and may be
 * changed at any time from any thread; a thread may override it for itself
 * (log_set_thread_max_level). */

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <syslog.h>

#include "shared/macro.h"

#define LOG_LINE_MAX 2048

enum log_target {
        LOG_TARGET_CONSOLE, /* stderr, with a monotonic timestamp */
        LOG_TARGET_SYSLOG,  /* syslog(3) via /dev/log */
        LOG_TARGET_KMSG,    /* /dev/kmsg, "<prio>ident[pid]: message" */
        LOG_TARGET_AUTO,    /* console if stderr is a tty, else syslog if /dev/log
                             * exists, else kmsg (else console) */
};

/* Select where messages go; call before threads start. */
void log_set_target(enum log_target target, const char *ident);
/* Console lines without the "[time] level: " prefix (udevadm prints plain
 * messages, like systemd's). */
void log_set_console_plain(bool plain);
void log_set_max_level(int level);
/* The level in effect for the calling thread: its override if one is set,
 * else the process-wide level. */
int log_get_max_level(void);
/* Per-thread override of the maximum level (OPTIONS+="log_level=" for the
 * rest of one event): LOG_EMERG..LOG_DEBUG, or -1 to follow the
 * process-wide level again. Only the calling thread is affected; the worker
 * resets it after each event. */
void log_set_thread_max_level(int level);
int log_get_thread_max_level(void); /* -1: no override */
/* Parse "err", "info", "debug", ... or "0".."7"; returns level or -EINVAL. */
int log_level_from_string(const char *s);
const char *log_level_to_string(int level);

/* Returns -abs(error) (or 0 if error is 0) so callers can `return log_error_errno(r, ...)`.
 * %m in the format is replaced by strerror of `error` (thread-safe). */
int log_internal(int level, int error, const char *file, int line, const char *fmt, ...)
        _printf_(5, 6);

#define log_full_errno(level, error, ...)                                          \
        ({                                                                         \
                int _lvl = (level), _e = (error);                                  \
                _lvl <= log_get_max_level()                                        \
                        ? log_internal(_lvl, _e, __FILE__, __LINE__, __VA_ARGS__)  \
                        : -abs(_e);                                                \
        })
#define log_full(level, ...) (void)log_full_errno(level, 0, __VA_ARGS__)

#define log_debug(...) log_full(LOG_DEBUG, __VA_ARGS__)
#define log_info(...) log_full(LOG_INFO, __VA_ARGS__)
#define log_notice(...) log_full(LOG_NOTICE, __VA_ARGS__)
#define log_warning(...) log_full(LOG_WARNING, __VA_ARGS__)
#define log_error(...) log_full(LOG_ERR, __VA_ARGS__)
#define log_debug_errno(e, ...) log_full_errno(LOG_DEBUG, e, __VA_ARGS__)
#define log_info_errno(e, ...) log_full_errno(LOG_INFO, e, __VA_ARGS__)
#define log_warning_errno(e, ...) log_full_errno(LOG_WARNING, e, __VA_ARGS__)
#define log_error_errno(e, ...) log_full_errno(LOG_ERR, e, __VA_ARGS__)

/* Rate limit for input-driven messages: at most `burst` messages per
 * `interval_usec`; the suppressed count is reported with the next allowed one.
 * Thread-safe (atomic counters); declare one static instance per call site. */
struct ratelimit {
        uint64_t interval_usec;
        unsigned burst;
        _Atomic uint64_t begin;
        _Atomic unsigned num;
        _Atomic unsigned suppressed;
};
#define RATELIMIT_INIT(interval, b) { .interval_usec = (interval), .burst = (b) }
/* Returns true if the message may be logged; *suppressed gets the number of
 * messages dropped since the last allowed one. */
bool ratelimit_below(struct ratelimit *rl, unsigned *suppressed);

#define log_ratelimited(level, ...)                                                \
        do {                                                                       \
                static struct ratelimit _rl = RATELIMIT_INIT(5000000, 10);         \
                unsigned _sup;                                                     \
                if (ratelimit_below(&_rl, &_sup)) {                                \
                        if (_sup)                                                  \
                                log_full(level, "(%u similar messages suppressed)", _sup); \
                        log_full(level, __VA_ARGS__);                              \
                }                                                                  \
        } while (0)
