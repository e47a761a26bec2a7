/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any */
#pragma once
/* Private helpers of the rules evaluator (rules-exec.c, rules-const.c) and the
 * direct program spawner (spawn-direct.c). The public entry point is
 * rules_apply() in rules/rules.h. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rules/udev-event.h"

/* CONST{arch} / CONST{virt} values, computed once per process. */
const char *rules_const_arch(void);
const char *rules_const_virt(void);

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
 * Implements struct udev_spawner (rules/udev-event.h). */
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

/* Network interface names (netif-rename.c): valid = 1..15 printable ASCII
 * characters except ':', '/', '%', not "." / "..", not all digits. */
bool netif_name_valid(const char *name);
/* Rename interface `ifindex` (now called `old_name`) to `name` with
 * RTM_SETLINK IFLA_IFNAME. If `name` is one of the interface's own
 * alternative names, it is dropped from them first and `old_name` becomes an
 * alternative name after the rename (systemd-udevd's swap). 0 or -errno from
 * the kernel (-EBUSY: interface up, -EEXIST: name taken by another
 * interface, -ENODEV: no such interface). */
int netif_rename(int ifindex, const char *name, const char *old_name);

/* Run the collected RUN list of an event, in order: builtins in process,
 * programs through ev->spawner; failures are only logged. */
void rules_execute_run(struct udev_event *ev);
