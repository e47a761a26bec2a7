/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (each call uses only its own stack and the thread-safe client) */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "exec/exec-udev.h"
#include "event/spawn-direct.h"
#include "event/event-format.h"
#include "shared/compat.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "shared/time-util.h"

#define EXEC_UDEV_CMD_MAX 16384 /* UDEV_LINE_SIZE: the substituted command */

/* Log each line of buf[0..len) at debug level, as systemd-udevd does. */
static void log_lines(const char *cmd, const char *what, const char *buf, size_t len,
                      bool truncated)
{
        const char *p = buf, *end = buf + len;

        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
                if (l > 0)
                        log_debug("'%s'(%s) '%.*s'", cmd, what, (int)MIN(l, (size_t)1024), p);
                p += l + 1;
        }
        if (truncated)
                log_debug("'%s'(%s) output truncated", cmd, what);
}

/* Split and resolve cmd into argv (pointing into buf and prog). */
static int prepare_argv(const char *cmd, char *buf, size_t buf_size, char *prog,
                        size_t prog_size, char **argv)
{
        size_t argc;
        int r;

        if (strlen(cmd) >= buf_size)
                return -E2BIG;
        strcpy(buf, cmd);
        r = udev_split_cmdline(buf, argv, EXEC_UDEV_ARGV_MAX + 1, &argc);
        if (r == -EINVAL || (r >= 0 && argv[0][0] == '\0'))
                return log_error_errno(-EINVAL, "Invalid command '%s'", cmd);
        if (r < 0)
                return log_error_errno(r, "Failed to split command '%s': %m", cmd);
        if (argv[0][0] != '/') {
                int w = snprintf(prog, prog_size, "%s/%s", UDEV_LIBEXEC_DIR, argv[0]);
                if (w < 0 || (size_t)w >= prog_size)
                        return -ENAMETOOLONG;
                argv[0] = prog;
        }
        return 0;
}

int exec_udev_spawn(void *userdata, const char *cmd, char *const envp[], bool is_run,
                    uint64_t deadline_usec, char *out, size_t out_size, bool *truncated)
{
        struct exec_client *c = userdata;
        char buf[EXEC_UDEV_CMD_MAX], prog[PATH_MAX];
        char out_log[EXEC_UDEV_LOG_MAX], err_log[EXEC_UDEV_LOG_MAX];
        char *argv[EXEC_UDEV_ARGV_MAX + 1];
        struct exec_result res;
        char what[64];
        int r;

        if (truncated)
                *truncated = false;
        if (out && out_size > 0)
                out[0] = '\0';
        else
                out = NULL;
        r = prepare_argv(cmd, buf, sizeof(buf), prog, sizeof(prog), argv);
        if (r < 0)
                return r;

        /* Without debug logging nobody reads stderr (or RUN's stdout): /dev/null. */
        bool debug = log_get_max_level() >= LOG_DEBUG;
        struct exec_request req = {
                .argv = argv,
                .envp = envp,
                .deadline_usec = deadline_usec == UINT64_MAX ? 0 : deadline_usec,
                .is_run = is_run,
                .out = out ?: (debug ? out_log : NULL),
                .out_size = out ? out_size : sizeof(out_log),
                .err = debug ? err_log : NULL,
                .err_size = sizeof(err_log),
        };
        log_debug("Starting '%s'", cmd);
        r = exec_run(c, &req, &res);
        if (debug) {
                if (req.out)
                        log_lines(cmd, "out", req.out, res.out_len, res.out_truncated);
                log_lines(cmd, "err", err_log, res.err_len, res.err_truncated);
        }
        if (r < 0)
                return r; /* the client has logged why */
        if (truncated && out)
                *truncated = res.out_truncated;

        switch (res.outcome) {
        case EXEC_EXITED:
                if (res.exit_status == 0)
                        log_debug("Process '%s' succeeded.", cmd);
                else
                        log_debug("Process '%s' failed with exit code %d.", cmd, res.exit_status);
                return res.exit_status;
        case EXEC_SIGNALED:
                log_debug("Process '%s' terminated by signal SIG%s.", cmd,
                          signal_abbrev(res.signal) ?: "?");
                return 128 + res.signal;
        case EXEC_TIMED_OUT:
                log_error("Spawned process '%s' [%d] timed out after %.1f s, killed: %s", cmd,
                          (int)res.pid, (double)res.usec / 1e6,
                          exec_result_to_string(&res, what, sizeof(what)));
                return -ETIME;
        case EXEC_SPAWN_FAILED:
        default:
                return log_debug_errno(-res.spawn_errno, "Failed to execute '%s': %m", cmd);
        }
}
