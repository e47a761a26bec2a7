/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any, one broadcaster per thread (each worker's, the manager's) */
#pragma once
/* Sends processed events to libudev listeners: NETLINK_KOBJECT_UEVENT,
 * multicast group 2, libudev wire format (proto/monitor-msg.h). */

#include <stddef.h>

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
