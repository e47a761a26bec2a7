/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any */
#pragma once
/* Private helpers of the rules evaluator (rules-exec.c, rules-const.c). The
 * public entry point is rules_apply() in rules/rules.h. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event/spawn-direct.h"
#include "event/udev-event.h"

/* CONST{arch} / CONST{virt} values, computed once per process. */
const char *rules_const_arch(void);
const char *rules_const_virt(void);

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
