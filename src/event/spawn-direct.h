/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (no shared state; each call owns its child and pipes) */
#pragma once
/* The direct program spawner: a struct udev_spawner (event/udev-event.h)
 * that runs PROGRAM, IMPORT{program} and RUN commands with posix_spawn()
 * from the calling thread. udevadm test and the blkid builtin's fallback
 * use it; udevd's workers use the exec helper (exec/exec-udev.h), which
 * looks programs up in the same directory. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event/udev-event.h"

/* Directory for program names without '/' (no $PATH search): the udevdir
 * the build was configured with (configure --with-udevdir, --with-rootprefix;
 * the Makefile passes it as TUDEV_UDEV_DIR), where make install puts the
 * helpers. Debian 12's udev uses /lib/udev, upstream /usr/lib/udev. */
#ifdef TUDEV_UDEV_DIR
#define UDEV_LIBEXEC_DIR TUDEV_UDEV_DIR
#else
#define UDEV_LIBEXEC_DIR "/lib/udev"
#endif

/* A spawner that runs programs directly with posix_spawn() from the calling
 * thread (udevadm test, and the daemon until the exec helper takes over).
 * Implements struct udev_spawner (event/udev-event.h). */
struct spawn_direct {
        int timeout_signal;      /* sent at the deadline (default SIGKILL) */
        const char *libexec_dir; /* NULL: UDEV_LIBEXEC_DIR */
        uint64_t exec_delay_usec; /* sleep before each RUN program */
};
int spawn_direct(void *userdata, const char *cmd, char *const envp[], bool is_run,
                 uint64_t deadline_usec, char *out, size_t out_size, bool *truncated);
static inline struct udev_spawner spawn_direct_spawner(struct spawn_direct *sd)
{
        return (struct udev_spawner){ .spawn = spawn_direct, .userdata = sd };
}
