/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any */
#pragma once
/* The exec helper behind the rules engine's program spawner (struct
 * udev_spawner in event/udev-event.h): PROGRAM, IMPORT{program} and
 * RUN{program} commands are split and resolved as systemd-udevd does
 * (quotes group, no $PATH, a name without '/' is looked up in
 * UDEV_LIBEXEC_DIR), then run with exec_run() by the calling worker thread.
 * This is the only part of src/exec that knows the rules engine.
 *
 * In udevd's per-event setup:
 *     ev->spawner = exec_udev_spawner(settings->exec);
 *
 * Result convention (udev_spawner): 0 exited with status 0; >0 its exit
 * status, or 128 + signal if a signal killed it; -ETIME if it timed out;
 * -errno if it could not run (-ENOENT, -EACCES, ... or -ECONNRESET when the
 * helper died). stdout goes to out (NUL-terminated, *truncated set when cut);
 * with debug logging, stdout and stderr lines are logged as systemd-udevd
 * does ("'cmd'(out) 'line'"). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "exec/exec-client.h"
#include "event/udev-event.h"

#define EXEC_UDEV_ARGV_MAX 1024   /* words of one command line */
#define EXEC_UDEV_LOG_MAX 4096    /* stderr (and RUN stdout) kept for debug logging */

/* userdata: the struct exec_client (borrowed). deadline_usec: absolute
 * CLOCK_MONOTONIC, UINT64_MAX for none (the client's default timeout then). */
int exec_udev_spawn(void *userdata, const char *cmd, char *const envp[], bool is_run,
                    uint64_t deadline_usec, char *out, size_t out_size, bool *truncated);

static inline struct udev_spawner exec_udev_spawner(struct exec_client *c)
{
        return (struct udev_spawner){ .spawn = exec_udev_spawn, .userdata = c };
}
