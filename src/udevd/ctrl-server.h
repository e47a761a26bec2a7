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
 * completed if the connection sent PING (see ctrl_server_sync_done()).
 *
 * A TUDEV_QUERY is answered at once on the connection (ops.query; the reply
 * datagrams of proto/ctrl-msg.h); while a reply does not fit into the socket
 * the connection waits for EPOLLOUT and reads nothing more, and END closes it
 * only once the reply is out. Such a connection is never idle (below).
 *
 * A connection that sent EXIT is held: neither END, nor the timeout, nor a
 * peer of the connection limit closes it. At exit the daemon calls
 * ctrl_server_free_at_exit(), which leaves it (and every other connection,
 * and the listening socket) open, so the kernel closes them when the process
 * is gone: the client that asked for the exit -- tudev's `udevadm control
 * --exit` or systemd's -- sees the connection close only once the daemon has
 * exited, and so does a client still waiting in the listen backlog.
 *
 * The path is unlinked only while it is still the socket this server bound
 * (same st_dev and st_ino as right after bind()): a socket another daemon
 * bound there later is left alone. A socket passed by the service manager
 * (ctrl_server_adopt(), udevd/listen-fds.h) is never unlinked: it belongs to
 * systemd-udevd-control.socket, which keeps it, and the clients queued on
 * it, for the daemon's next start. */

#include <stdbool.h>
#include <stdint.h>

#include "proto/ctrl-msg.h"
#include "udevd/query.h"

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
        /* CTRL_MSG_TUDEV_QUERY: write the answer to `query` into `out` (the
         * server owns it) and return 0 or a negative errno (the reply's
         * status; see udevd/query.h). NULL: every query is answered
         * -EOPNOTSUPP. */
        int (*query)(const char *query, struct query_out *out, void *userdata);
        void *userdata;
};

/* Bind (unlinking a stale socket) and listen on `path`; registers in `loop`.
 * The caller makes sure no live daemon serves `path` (udevd/instance-lock.h). */
int ctrl_server_new(struct loop *loop, const char *path, const struct ctrl_server_ops *ops,
                    struct ctrl_server **ret);
/* Serve `fd`, a listening control socket bound to `path` that the service
 * manager passed (socket activation): it is made non-blocking and gets
 * SO_PASSCRED; its path is neither unlinked nor replaced, now or at exit.
 * Takes `fd` (closed on failure). */
int ctrl_server_adopt(struct loop *loop, const char *path, int fd,
                      const struct ctrl_server_ops *ops, struct ctrl_server **ret);
/* Stop accepting and close all connections; unlink the socket path if it is
 * still ours. */
void ctrl_server_free(struct ctrl_server *s);
/* The process is about to exit: unlink the socket path if it is still ours
 * (an adopted socket's path stays: true if the path still names it),
 * take every fd out of the loop without closing it (see above), free `s`.
 * Returns false if something else is at the path now (another daemon's
 * socket), true if it was ours (now unlinked) or is gone. */
bool ctrl_server_free_at_exit(struct ctrl_server *s);
/* The socket at the path is still the one this server bound. */
bool ctrl_server_owns_path(const struct ctrl_server *s);
/* All syncs up to `ticket` completed: close connections waiting for them. */
void ctrl_server_sync_done(struct ctrl_server *s, uint64_t ticket);
/* Close connections older than CTRL_CONN_TIMEOUT_USEC. */
void ctrl_server_expire(struct ctrl_server *s, uint64_t now_usec);
/* Stop accepting new connections (exit in progress); existing ones finish. */
void ctrl_server_stop_accepting(struct ctrl_server *s);
