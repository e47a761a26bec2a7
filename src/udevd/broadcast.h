/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any, one broadcaster per thread (each worker's, the manager's) */
#pragma once
/* Sends processed events to libudev listeners: NETLINK_KOBJECT_UEVENT,
 * multicast group 2, libudev wire format (proto/monitor-msg.h); and, with
 * --kernel-broadcast, the kernel's own datagram once processed (for
 * libudev-zero, which reads that format). */

#include <stddef.h>
#include <stdint.h>

#include "proto/uevent.h"

struct broadcaster {
        int fd;
};
#define BROADCASTER_NULL { .fd = -1 }

int broadcaster_open(struct broadcaster *b);
void broadcaster_close(struct broadcaster *b);
/* Encode and send. `props` = "KEY=VALUE\0"... (without the DB-version
 * marker), `tags` NULL-terminated (all tags) or NULL. ECONNREFUSED (no
 * listener) counts as success. 0 or -errno. */
int broadcaster_send(struct broadcaster *b, const char *subsystem, const char *devtype,
                     const char *const *tags, const char *props, size_t props_len);

/* The netlink multicast groups (bit mask, as in sockaddr_nl.nl_groups) that
 * --kernel-broadcast sends to: 4, where mdevd -O 4 rebroadcasts and
 * libudev-zero listens. */
#define BROADCAST_KERNEL_GROUPS 4u
/* Send the kernel's datagram of `ev` (uevent_format_kernel()) to `groups`.
 * ECONNREFUSED (no listener) counts as success. 0 or -errno. */
int broadcaster_send_kernel(struct broadcaster *b, uint32_t groups, const struct uevent *ev);
