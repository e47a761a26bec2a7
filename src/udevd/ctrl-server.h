/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: manager */
#pragma once
/* The control socket /run/udev/control (protocol: proto/ctrl-msg.h), mode
 * 0600.
 *
 * Up to CTRL_CONN_MAX connections are served at once, each closed after
 * CTRL_CONN_TIMEOUT_USEC. When all are taken, a new connection replaces the
 * least recently active idle one (END not received, nothing waiting to be
 * read), so connections held open by one client cannot lock the others out;
 * if none is idle the new one is closed at once. A peer whose SO_PEERCRED uid
 * is not 0, a message
 * without uid-0 credentials, of the wrong size, or that fails to decode ends
 * the connection (logged, rate-limited). Messages are handed to the manager's
 * handler; on END the connection is closed -- after the handler's "sync"
 * completed if the connection sent PING (see ctrl_server_sync_done()). */

#include <stdint.h>

#include "proto/ctrl-msg.h"

#define CTRL_CONN_MAX 16
#define CTRL_LISTEN_BACKLOG 64
#define CTRL_CONN_TIMEOUT_USEC (30 * 1000000ULL)

struct loop;
struct ctrl_server;

struct ctrl_server_ops {
        /* Handle one request (not END, not PING). */
        void (*handle)(const struct ctrl_msg *m, void *userdata);
        /* PING received: return a sync ticket; the connection is closed on END
         * only once ctrl_server_sync_done() reports a ticket >= this one. */
        uint64_t (*request_sync)(void *userdata);
        /* The highest ticket whose sync has completed. */
        uint64_t (*synced)(void *userdata);
        void *userdata;
};

/* Bind (unlinking a stale socket) and listen on `path`; registers in `loop`. */
int ctrl_server_new(struct loop *loop, const char *path, const struct ctrl_server_ops *ops,
                    struct ctrl_server **ret);
/* Stop accepting and close all connections; unlink the socket path. */
void ctrl_server_free(struct ctrl_server *s);
/* All syncs up to `ticket` completed: close connections waiting for them. */
void ctrl_server_sync_done(struct ctrl_server *s, uint64_t ticket);
/* Close connections older than CTRL_CONN_TIMEOUT_USEC. */
void ctrl_server_expire(struct ctrl_server *s, uint64_t now_usec);
/* Stop accepting new connections (exit in progress); existing ones finish. */
void ctrl_server_stop_accepting(struct ctrl_server *s);
