/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: manager (the queue hooks run on the listener and worker threads) */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "builtins/builtin.h"
#include "device/db.h"
#include "device/node.h"
#include "exec/exec-client.h"
#include "proto/event-scope.h"
#include "rules/rules.h"
#include "shared/compat.h"
#include "shared/fileio.h"
#include "shared/log.h"
#include "shared/time-util.h"
#include "udevd/broadcast.h"
#include "udevd/ctrl-server.h"
#include "udevd/event-process.h"
#include "udevd/event-queue.h"
#include "udevd/known-devices.h"
#include "udevd/explain-ring.h"
#include "udevd/loop.h"
#include "udevd/manager.h"
#include "udevd/netlink-listener.h"
#include "udevd/query.h"
#include "udevd/resync.h"
#include "udevd/rules-snapshot.h"
#include "udevd/stats.h"
#include "udevd/run-repair.h"
#include "udevd/worker-pool.h"

#define MANAGER_TICK_USEC USEC_PER_SEC
/* How often rules_should_reload() may run (systemd-udevd's 3 s; udevd(8)). */
#define RULES_CHECK_INTERVAL_USEC (3 * USEC_PER_SEC)

/* Recovery after kernel buffer overruns (udevd/resync.h): wait until the
 * queue is idle, drain the socket (listener sync), compare and repair, then
 * wait until the repair's own events are done. */
enum resync_state {
        RESYNC_NONE,
        RESYNC_WAIT_IDLE,   /* an overrun happened; waiting for an idle queue */
        RESYNC_SYNCING,     /* socket drain requested (ticket) */
        RESYNC_WAIT_SETTLE, /* resync done; waiting for its events to finish */
        RESYNC_SETTLING,    /* socket drain requested (ticket) */
};

struct manager_resync {
        enum resync_state state;
        uint64_t ticket;        /* listener sync ticket */
        uint64_t overruns_done; /* listener enobufs count covered by the last resync */
        uint64_t detected_usec; /* when the first unhandled overrun was seen */
        unsigned runs, added, removed, forgotten;
};

struct manager {
        const struct udevd_settings *settings; /* borrowed */
        struct manager_options opts;
        char queue_path[256];
        char control_path[256];
        struct loop *loop;
        struct event_queue *queue;
        struct worker_pool *pool;
        struct listener *listener;
        struct known_devices *known;
        struct manager_resync resync;
        struct ctrl_server *ctrl;
        struct query_table queries; /* CTRL_MSG_TUDEV_QUERY handlers (udevd/query.h) */
        struct explain_ring *explain; /* recent events' rules traces (udevd/explain-ring.h) */
        struct broadcaster bc; /* failure broadcasts of timed-out events */
        int signal_fd;
        int timer_fd;
        unsigned children_max;
        bool exiting;
        bool drain_on_exit;
        int exit_status;
        size_t dropped_at_exit; /* queued events discarded by SIGTERM/SIGINT */
        /* Global properties set by `udevadm control --property`; workers read
         * them from the snapshot. */
        pthread_mutex_t env_lock;
        struct strlist global_env;
        bool env_dirty; /* changed since the last publish (published once per loop turn) */
        /* The rules: the manager's reference and what workers take per event. */
        struct rules *rules;
        struct snapshot_holder snapshots;
        uint64_t last_rules_check;
        bool run_files_released; /* control socket and queue flag, at exit */
        bool queue_stopped;  /* udevadm control --stop-exec-queue */
        bool links_cleaned;  /* stack directories cleaned since the queue went idle */
};

/* ---- queue hooks (called on listener/worker threads) ---- */

static void on_queue_busy_changed(bool busy, void *userdata)
{
        struct manager *m = userdata;
        int r;

        if (busy) {
                r = touch_file(m->queue_path, 0644);
                if (r < 0)
                        log_warning_errno(r, "Failed to create %s: %m", m->queue_path);
        } else if (unlink(m->queue_path) < 0 && errno != ENOENT) {
                log_warning_errno(errno, "Failed to remove %s: %m", m->queue_path);
        }
}

static void on_queue_need_worker(void *userdata)
{
        struct manager *m = userdata;
        worker_pool_grow(m->pool);
}

/* ---- rules ---- */

static int manager_load_rules(struct manager *m, struct rules **ret)
{
        const struct rules_load_options opts = {
                .dirs = m->settings->rules_dirs[0] ? m->settings->rules_dirs : NULL,
                .resolve_names = m->settings->resolve_names,
        };
        struct rules_stats st;
        int r;

        r = rules_load(&opts, ret);
        if (r < 0)
                return r;
        rules_get_stats(*ret, &st);
        log_info("Loaded %u rules from %u files (%u errors, %u warnings)", st.lines, st.files,
                 st.errors, st.warnings);
        return 0;
}

/* Hand the current rules and global properties to the workers. */
static int manager_publish(struct manager *m)
{
        int r;

        pthread_mutex_lock(&m->env_lock);
        r = snapshot_publish(&m->snapshots, m->rules ? rules_ref(m->rules) : NULL, &m->global_env);
        pthread_mutex_unlock(&m->env_lock);
        if (r < 0)
                log_error_errno(r, "Failed to publish the rules snapshot: %m");
        return r;
}

/* Reload the rules and the builtins' data. The periodic check (forced false)
 * reloads only what changed on disk (path, inode, mtime, size). A request
 * (SIGHUP, udevadm control --reload: forced) reloads everything at once,
 * whatever the file times say: a file rewritten in place with the same size
 * and a preserved mtime (cp -p, tar) looks unchanged to that check. The
 * manager answers the control connection only after this returns, so a
 * uevent sent after "udevadm control --reload" has returned runs with the new
 * snapshot (the builtins recreate their state before each thread's next
 * event). A failed load keeps the old rules. */
static void manager_reload(struct manager *m, bool forced)
{
        struct rules *n = NULL;
        int r;

        m->last_rules_check = now_usec(CLOCK_MONOTONIC);
        /* builtin data too: hwdb.bin, module index, .link files */
        if (builtins_should_reload() || forced) {
                builtins_reload();
                log_info("Builtin data %s, builtins reloaded", forced ? "requested" : "changed");
        }
        if (!forced && m->rules && !rules_should_reload(m->rules))
                return;
        r = manager_load_rules(m, &n);
        if (r < 0) {
                log_error_errno(r, "Failed to reload the rules, keeping the old ones: %m");
                return;
        }
        rules_unref(m->rules);
        m->rules = n;
        if (manager_publish(m) >= 0)
                log_info("Rules reloaded%s, generation %u", forced ? "" : " (files changed)",
                         snapshot_generation(&m->snapshots));
}

/* Remove stale link stack directories (/run/udev/links), only while no
 * event runs (an event may be creating a .lock file), as systemd-udevd does
 * when it is idle. */
static void manager_idle_cleanup(struct manager *m)
{
        const struct device_roots roots = { .sys = "/sys", .dev = "/dev",
                                            .run = m->settings->run_dir };
        struct event_queue_stats qs;

        event_queue_get_stats(m->queue, &qs);
        if (qs.queued > 0 || qs.running > 0 || worker_pool_busy(m->pool) > 0) {
                m->links_cleaned = false;
                return;
        }
        if (m->links_cleaned || m->exiting)
                return;
        event_queue_set_paused(m->queue, true);
        event_queue_get_stats(m->queue, &qs);
        if (qs.running == 0 && worker_pool_busy(m->pool) == 0) {
                (void)node_cleanup_stack_dirs(&roots);
                /* Once per idle period: give the heap a storm grew (queued
                 * records, per-thread arenas) back to the kernel. */
                malloc_release_free();
                m->links_cleaned = true;
        }
        event_queue_set_paused(m->queue, m->queue_stopped);
}

/* ---- control requests ---- */

/* Bounds on `udevadm control --property`: every event carries these. */
#define GLOBAL_ENV_MAX_ENTRIES 1024
#define GLOBAL_ENV_MAX_BYTES (64 * 1024)

static size_t global_env_bytes(const struct strlist *l)
{
        size_t n = 0;

        for (size_t i = 0; i < l->n; i++)
                n += strlen(l->items[i]) + 1;
        return n;
}

/* The new list reaches the workers at the end of this loop turn (one publish
 * for a burst of requests, not one per request). */
static void set_global_env(struct manager *m, const char *assignment)
{
        const char *eq = strchr(assignment, '=');
        size_t klen = (size_t)(eq - assignment);
        bool full;

        pthread_mutex_lock(&m->env_lock);
        for (size_t i = 0; i < m->global_env.n; i++) {
                const char *e = m->global_env.items[i];
                if (strncmp(e, assignment, klen + 1) == 0) {
                        strlist_remove(&m->global_env, e);
                        break;
                }
        }
        full = m->global_env.n >= GLOBAL_ENV_MAX_ENTRIES ||
               global_env_bytes(&m->global_env) + strlen(assignment) + 1 > GLOBAL_ENV_MAX_BYTES;
        if (eq[1] != '\0' && full)
                log_warning("control: too many global properties (at most %d, %d bytes), "
                            "ignoring %.*s", GLOBAL_ENV_MAX_ENTRIES, GLOBAL_ENV_MAX_BYTES,
                            (int)klen, assignment);
        else if (eq[1] != '\0' && strlist_add(&m->global_env, assignment) < 0)
                log_error("Out of memory storing global property");
        pthread_mutex_unlock(&m->env_lock);
        m->env_dirty = true;
        log_debug("control: global property %s%s", assignment, eq[1] ? "" : " (unset)");
}

static void begin_exit(struct manager *m, bool drain)
{
        if (m->exiting)
                return;
        m->exiting = true;
        m->drain_on_exit = drain;
        ctrl_server_stop_accepting(m->ctrl);
}

static void on_ctrl_msg(const struct ctrl_msg *msg, void *userdata)
{
        struct manager *m = userdata;

        switch (msg->type) {
        case CTRL_MSG_SET_LOG_LEVEL:
                if (msg->intval < 0 || msg->intval > 7) {
                        log_warning("control: ignoring invalid log level %d", msg->intval);
                        break;
                }
                log_info("control: log level set to %s", log_level_to_string(msg->intval));
                log_set_max_level(msg->intval);
                break;
        case CTRL_MSG_STOP_EXEC_QUEUE:
                log_debug("control: stop exec queue");
                m->queue_stopped = true;
                event_queue_set_paused(m->queue, true);
                break;
        case CTRL_MSG_START_EXEC_QUEUE:
                log_debug("control: start exec queue");
                m->queue_stopped = false;
                event_queue_set_paused(m->queue, false);
                break;
        case CTRL_MSG_RELOAD:
                log_debug("control: reload");
                manager_reload(m, true);
                break;
        case CTRL_MSG_SET_ENV:
                set_global_env(m, msg->strval);
                break;
        case CTRL_MSG_SET_CHILDREN_MAX: {
                unsigned n = msg->intval > 0 ? (unsigned)msg->intval : udevd_default_children_max();
                if (msg->intval < 0) {
                        log_warning("control: ignoring invalid children max %d", msg->intval);
                        break;
                }
                n = MIN(n, (unsigned)UDEVD_CHILDREN_MAX_LIMIT);
                log_debug("control: children max %u", n);
                m->children_max = n;
                worker_pool_set_max(m->pool, n);
                worker_pool_grow(m->pool);
                break;
        }
        case CTRL_MSG_EXIT:
                log_info("control: exit requested");
                begin_exit(m, true);
                break;
        default:
                break;
        }
}

static uint64_t on_ctrl_request_sync(void *userdata)
{
        struct manager *m = userdata;
        return listener_request_sync(m->listener);
}

static uint64_t on_ctrl_synced(void *userdata)
{
        struct manager *m = userdata;
        return listener_synced(m->listener);
}

/* ---- queries (udevd/query.h) ---- */

static int on_ctrl_query(const char *query, struct query_out *out, void *userdata)
{
        struct manager *m = userdata;
        return query_dispatch(&m->queries, query, out);
}

/* "queries": the names of the registered queries, one a line. */
static int query_list(const char *args, struct query_out *out, void *userdata)
{
        const struct query_table *t = userdata;

        if (args[0])
                return query_fail(out, -EINVAL, "queries: no arguments expected\n");
        for (size_t i = 0; i < t->n; i++)
                (void)query_printf(out, "%s\n", t->h[i].name);
        return 0;
}

/* "stats", "stats-json", "stats-prometheus": udevadm stats. */
static int query_stats(const char *args, struct query_out *out, void *userdata,
                       void (*format)(const struct stats_snapshot *, const struct stats_extra *,
                                      struct query_out *))
{
        struct manager *m = userdata;
        struct stats_snapshot *snap;
        struct listener_stats ls;
        struct event_queue_stats qs;
        struct worker_pool_stats ps;
        struct stats_extra x;

        if (args[0])
                return query_fail(out, -EINVAL, "stats: no arguments expected\n");
        snap = malloc(sizeof(*snap));
        if (!snap)
                return query_fail(out, -ENOMEM, "stats: out of memory\n");
        stats_read(snap);
        listener_get_stats(m->listener, &ls);
        event_queue_get_stats(m->queue, &qs);
        worker_pool_get_stats(m->pool, &ps);
        x = (struct stats_extra){
                .coalesced = qs.coalesced_total,
                .watch_limited = ps.watch_limited,
                .queued = qs.queued,
                .running = qs.running,
                .queue_bytes = qs.bytes,
                .queue_bytes_peak = qs.bytes_peak,
                .queue_max_events = qs.max_events,
                .queue_max_bytes = qs.max_bytes,
                .budget_pauses = ls.budget_pauses,
                .overruns = ls.enobufs,
                .lost = ls.lost,
                .resyncs = m->resync.runs,
                .received = ls.received,
                .rules_generation = snapshot_generation(&m->snapshots),
                .uptime_usec = now_usec(CLOCK_MONOTONIC) - snap->started_usec,
        };
        if (m->explain) {
                struct explain_ring_stats es;

                explain_ring_get_stats(m->explain, &es);
                x.explain_events = es.events;
                x.explain_bytes = es.bytes;
                x.explain_max_events = es.max_events;
                x.explain_max_bytes = es.max_bytes;
        }
        format(snap, &x, out);
        free(snap);
        return 0;
}

static int query_stats_text(const char *args, struct query_out *out, void *userdata)
{
        return query_stats(args, out, userdata, stats_format_text);
}

static int query_stats_json(const char *args, struct query_out *out, void *userdata)
{
        return query_stats(args, out, userdata, stats_format_json);
}

static int query_stats_prometheus(const char *args, struct query_out *out, void *userdata)
{
        return query_stats(args, out, userdata, stats_format_prometheus);
}

/* ---- "pending": what settle waits for ---- */

#define PENDING_MAX 2000

struct pending_item {
        uint64_t seqnum, first_seqnum, recv_usec, start_usec;
        enum uevent_action action;
        char devpath[256], subsystem[48];
        bool running, delayed;
        size_t blockers;
        /* the program its worker runs, if any */
        char program[64];
        uint64_t program_start;
};

struct pending_list {
        struct pending_item *items;
        size_t n, more;
};

static bool pending_collect(const struct queue_pending_info *info, void *userdata)
{
        struct pending_list *l = userdata;
        struct pending_item *it;

        if (l->n >= PENDING_MAX) {
                l->more++;
                return true;
        }
        it = &l->items[l->n++];
        *it = (struct pending_item){
                .seqnum = info->ev->seqnum, .first_seqnum = info->first_seqnum,
                .recv_usec = info->ev->recv_usec,
                .start_usec = info->start_usec, .action = info->ev->action,
                .running = info->running, .delayed = info->delayed,
                .blockers = info->blockers,
        };
        snprintf(it->devpath, sizeof(it->devpath), "%s", info->ev->devpath);
        snprintf(it->subsystem, sizeof(it->subsystem), "%s", info->ev->subsystem);
        return true;
}

static void pending_program(const struct worker_program_info *info, void *userdata)
{
        struct pending_list *l = userdata;

        for (size_t i = 0; i < l->n; i++)
                if (l->items[i].running && l->items[i].seqnum == info->seqnum) {
                        snprintf(l->items[i].program, sizeof(l->items[i].program), "%s",
                                 info->name);
                        l->items[i].program_start = info->start_usec;
                }
}

/* One devpath is the other or below it. */
static bool devpath_related(const char *a, const char *b)
{
        size_t na = strlen(a), nb = strlen(b), n = MIN(na, nb);

        return strncmp(a, b, n) == 0 && (na == nb || (na < nb ? b[n] : a[n]) == '/');
}

/* The pid of a running program: a child of the exec helper (or of udevd,
 * without one) whose comm is the program's base name. 0 if not found. */
static pid_t find_program_pid(pid_t parent, const char *name)
{
        const char *base = strrchr(name, '/');
        const char *src = base ? base + 1 : name;
        char comm[16];
        size_t len = strnlen(src, sizeof(comm) - 1); /* comm: the base name cut to 15 bytes */
        DIR *d;
        struct dirent *de;
        pid_t found = 0;

        memcpy(comm, src, len);
        comm[len] = '\0';
        d = opendir("/proc");
        if (!d)
                return 0;
        while (!found && (de = readdir(d))) {
                char path[300], buf[512], *rp;
                int ppid = 0, fd;
                ssize_t n;

                if (de->d_name[0] < '1' || de->d_name[0] > '9')
                        continue;
                snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
                fd = open(path, O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        continue;
                n = read(fd, buf, sizeof(buf) - 1);
                close(fd);
                if (n <= 0)
                        continue;
                buf[n] = '\0';
                rp = strrchr(buf, ')');
                if (!rp || sscanf(rp + 1, " %*c %d", &ppid) != 1 || ppid != parent)
                        continue;
                char *lp = strchr(buf, '(');
                if (!lp || (size_t)(rp - lp - 1) != strlen(comm) ||
                    strncmp(lp + 1, comm, strlen(comm)) != 0)
                        continue;
                found = (pid_t)atoi(de->d_name);
        }
        closedir(d);
        return found;
}

/* "pending [SCOPE]": every queued and running event in the scope
 * (proto/event-scope.h; none: all), one a line, tab-separated:
 *   SEQNUM ACTION DEVPATH SUBSYSTEM AGE_USEC STATE DETAIL FIRST_SEQNUM
 * STATE/DETAIL: program NAME:PID:USEC (a program runs for it), running -
 * (rules or builtins), disk-lock - (requeued: its disk is locked), waiting
 * SEQNUM (an earlier event it waits for), queued - (waits for a worker).
 * FIRST_SEQNUM: the lowest SEQNUM it covers (storm damping merged the later
 * ones into it); SEQNUM itself if none was merged. */
static int query_pending(const char *args, struct query_out *out, void *userdata)
{
        struct manager *m = userdata;
        struct pending_list l = {};
        struct event_scope scope;
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        pid_t parent = m->settings->exec ? exec_client_helper_pid(m->settings->exec) : getpid();

        if (event_scope_parse(args, &scope) < 0)
                return query_fail(out, -EINVAL, "pending: bad scope \"%.64s\"\n", args);
        l.items = calloc(PENDING_MAX, sizeof(*l.items));
        if (!l.items)
                return query_fail(out, -ENOMEM, "pending: out of memory\n");
        /* All of them: a waiting event names the event it waits for, which
         * may be out of the scope. */
        event_queue_foreach_pending(m->queue, pending_collect, &l);
        worker_pool_foreach_program(m->pool, pending_program, &l);
        for (size_t i = 0; i < l.n; i++) {
                const struct pending_item *it = &l.items[i];
                uint64_t age = now > it->recv_usec ? now - it->recv_usec : 0;

                if (!event_scope_match(&scope, it->first_seqnum, it->subsystem, it->devpath))
                        continue;
                query_printf(out, "%" PRIu64 "\t%s\t%s\t%s\t%" PRIu64 "\t", it->seqnum,
                             uevent_action_to_string(it->action), it->devpath, it->subsystem,
                             age);
                if (it->running && it->program[0]) {
                        uint64_t run = now > it->program_start ? now - it->program_start : 0;
                        query_printf(out, "program\t%s:%d:%" PRIu64, it->program,
                                     (int)find_program_pid(parent, it->program), run);
                } else if (it->running) {
                        query_printf(out, "running\t-");
                } else if (it->delayed) {
                        query_printf(out, "disk-lock\t-");
                } else if (it->blockers > 0) {
                        /* the latest earlier pending event of a related device */
                        uint64_t by = 0;
                        for (size_t j = 0; j < l.n; j++)
                                if (l.items[j].seqnum < it->seqnum && l.items[j].seqnum > by &&
                                    devpath_related(l.items[j].devpath, it->devpath))
                                        by = l.items[j].seqnum;
                        if (by)
                                query_printf(out, "waiting\t%" PRIu64, by);
                        else
                                query_printf(out, "waiting\t-");
                } else {
                        query_printf(out, "queued\t-");
                }
                query_printf(out, "\t%" PRIu64 "\n", it->first_seqnum);
        }
        if (l.more)
                query_printf(out, "# %zu more\n", l.more);
        free(l.items);
        return 0;
}

struct pending_count {
        const struct event_scope *scope;
        uint64_t n;
};

static bool pending_count_one(const struct queue_pending_info *info, void *userdata)
{
        struct pending_count *c = userdata;

        if (event_scope_match(c->scope, info->first_seqnum, info->ev->subsystem,
                              info->ev->devpath))
                c->n++;
        return true;
}

/* "pending-count [SCOPE]": the number of queued and running events in the
 * scope, one line. What settle polls: no allocation, no /proc scan. */
static int query_pending_count(const char *args, struct query_out *out, void *userdata)
{
        struct manager *m = userdata;
        struct event_scope scope;
        struct pending_count c = { .scope = &scope };

        if (event_scope_parse(args, &scope) < 0)
                return query_fail(out, -EINVAL, "pending-count: bad scope \"%.64s\"\n", args);
        event_queue_foreach_pending(m->queue, pending_count_one, &c);
        return query_printf(out, "%" PRIu64 "\n", c.n);
}

/* Every query the daemon answers; other modules add theirs here. */
static int manager_register_queries(struct manager *m)
{
        int r;

        r = query_register(&m->queries, "queries", query_list, &m->queries);
        if (r >= 0)
                r = query_register(&m->queries, "stats", query_stats_text, m);
        if (r >= 0)
                r = query_register(&m->queries, "stats-json", query_stats_json, m);
        if (r >= 0)
                r = query_register(&m->queries, "stats-prometheus", query_stats_prometheus, m);
        if (r >= 0)
                r = query_register(&m->queries, "pending", query_pending, m);
        if (r >= 0)
                r = query_register(&m->queries, "pending-count", query_pending_count, m);
        if (r >= 0)
                r = query_register(&m->queries, "explain", explain_query, m->explain);
        if (r < 0)
                return log_error_errno(r, "Failed to register the control queries: %m");
        return 0;
}

/* ---- overrun recovery ---- */

static bool queue_idle(struct manager *m)
{
        struct event_queue_stats qs;

        event_queue_get_stats(m->queue, &qs);
        return qs.queued == 0 && qs.running == 0 && worker_pool_busy(m->pool) == 0;
}

/* Compare sysfs with the database and repair (udevd/resync.h), with the
 * dispatching paused so that no worker writes meanwhile. False if the queue
 * was not idle after all. */
static bool manager_resync_now(struct manager *m, uint64_t overruns)
{
        const struct device_roots roots = { .sys = "/sys", .dev = "/dev",
                                            .run = m->settings->run_dir };
        struct listener_stats ls;
        struct resync_result res;
        int r;

        event_queue_set_paused(m->queue, true);
        if (!queue_idle(m)) {
                event_queue_set_paused(m->queue, m->queue_stopped);
                return false;
        }
        listener_get_stats(m->listener, &ls);
        const struct resync_params p = {
                .roots = &roots,
                .known = m->known,
                .queue = m->queue,
                .seqnum = MAX(ls.last_seqnum, (uint64_t)1),
                .match = m->opts.resync_match,
        };
        r = resync_run(&p, &res);
        event_queue_set_paused(m->queue, m->queue_stopped);
        m->resync.overruns_done = overruns;
        m->resync.runs++;
        m->resync.added += res.added;
        m->resync.removed += res.removed;
        m->resync.forgotten += res.forgotten;
        if (r < 0)
                log_error_errno(r, "Resync after the kernel buffer overrun failed: %m");
        log_warning("Resync #%u after %" PRIu64 " kernel buffer overrun(s): %u records and %u "
                    "sysfs devices compared in %" PRIu64 " ms; add requested for %u, remove "
                    "synthesized for %u, %u records forgotten",
                    m->resync.runs, overruns, res.records, res.devices, res.usec / USEC_PER_MSEC,
                    res.added, res.removed, res.forgotten);
        return true;
}

/* Timer tick: notice new overruns and move the recovery on. */
static void manager_resync_tick(struct manager *m)
{
        struct manager_resync *rs = &m->resync;
        struct listener_stats ls;

        if (m->exiting)
                return;
        listener_get_stats(m->listener, &ls);
        if (ls.enobufs > rs->overruns_done &&
            (rs->state == RESYNC_NONE || rs->state >= RESYNC_WAIT_SETTLE)) {
                if (rs->state == RESYNC_NONE)
                        rs->detected_usec = now_usec(CLOCK_MONOTONIC);
                rs->state = RESYNC_WAIT_IDLE;
        }
        if ((rs->state == RESYNC_WAIT_IDLE || rs->state == RESYNC_WAIT_SETTLE) && queue_idle(m)) {
                rs->ticket = listener_request_sync(m->listener);
                rs->state = rs->state == RESYNC_WAIT_IDLE ? RESYNC_SYNCING : RESYNC_SETTLING;
        }
}

/* A listener sync completed: if it was ours, the socket is drained. */
static void manager_resync_synced(struct manager *m, uint64_t synced)
{
        struct manager_resync *rs = &m->resync;
        struct listener_stats ls;

        if ((rs->state != RESYNC_SYNCING && rs->state != RESYNC_SETTLING) || synced < rs->ticket)
                return;
        listener_get_stats(m->listener, &ls);
        if (rs->state == RESYNC_SYNCING) {
                rs->state = manager_resync_now(m, ls.enobufs) ? RESYNC_WAIT_SETTLE
                                                               : RESYNC_WAIT_IDLE;
                return;
        }
        if (!queue_idle(m) || ls.enobufs > rs->overruns_done) {
                rs->state = ls.enobufs > rs->overruns_done ? RESYNC_WAIT_IDLE : RESYNC_WAIT_SETTLE;
                return;
        }
        log_warning("Recovered from the kernel buffer overrun(s) %.1f s after detecting it: "
                    "the database matches sysfs again",
                    (double)(now_usec(CLOCK_MONOTONIC) - rs->detected_usec) / USEC_PER_SEC);
        rs->state = RESYNC_NONE;
}

static void on_listener_sync(struct loop *l, int fd, uint32_t revents, void *userdata)
{
        struct manager *m = userdata;
        uint64_t v;

        if (read(fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
                log_debug_errno(errno, "sync eventfd read failed: %m");
        ctrl_server_sync_done(m->ctrl, listener_synced(m->listener));
        manager_resync_synced(m, listener_synced(m->listener));
}

static void on_signal(struct loop *l, int fd, uint32_t revents, void *userdata)
{
        struct manager *m = userdata;
        struct signalfd_siginfo si;

        while (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
                switch (si.ssi_signo) {
                case SIGTERM:
                case SIGINT:
                        log_info("Received %s, exiting", signal_abbrev((int)si.ssi_signo));
                        begin_exit(m, false);
                        break;
                case SIGHUP:
                        log_debug("Received SIGHUP: reload");
                        manager_reload(m, true);
                        break;
                default:
                        break;
                }
        }
}

struct timeout_check {
        struct manager *m;
        uint64_t now;
};

static void check_event_timeout(struct queued_event *qe, void *userdata)
{
        struct timeout_check *tc = userdata;
        const struct uevent *ev = queued_event_uevent(qe);
        uint64_t timeout = tc->m->settings->event_timeout_usec;
        uint64_t start = queued_event_start_usec(qe);
        /* started by a worker after tc->now was taken: not late */
        uint64_t age = start < tc->now ? tc->now - start : 0;
        uint64_t warn_at = (timeout + 2) / 3;

        if (queued_event_abandoned(qe))
                return;
        if (age >= timeout) {
                if (!queued_event_abandon_locked(tc->m->queue, qe))
                        return; /* finishing right now */
                log_error("SEQNUM=%" PRIu64 " %s (%s) timed out after %" PRIu64 " s; "
                          "abandoning it",
                          ev->seqnum, ev->devpath, ev->subsystem, age / USEC_PER_SEC);
                int r = event_broadcast_failure(&tc->m->bc, ev, -ETIMEDOUT);
                if (r < 0)
                        log_warning_errno(r, "Failed to broadcast the failed event: %m");
        } else if (age >= warn_at && age < warn_at + MANAGER_TICK_USEC) {
                log_warning("SEQNUM=%" PRIu64 " %s (%s) is taking a long time (%.1f s)",
                            ev->seqnum, ev->devpath, ev->subsystem, (double)age / 1e6);
        }
}

static void on_timer(struct loop *l, int fd, uint32_t revents, void *userdata)
{
        struct manager *m = userdata;
        struct timeout_check tc = { .m = m, .now = now_usec(CLOCK_MONOTONIC) };
        uint64_t v;

        if (read(fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
                log_debug_errno(errno, "timerfd read failed: %m");
        ctrl_server_expire(m->ctrl, tc.now);
        if (m->settings->exec)
                (void)exec_client_process(m->settings->exec); /* a held-back restart */
        event_queue_foreach_running(m->queue, check_event_timeout, &tc);
        if (tc.now - m->last_rules_check >= RULES_CHECK_INTERVAL_USEC)
                manager_reload(m, false);
        manager_resync_tick(m);
        manager_idle_cleanup(m);
}

/* ---- setup ---- */

static int setup_signals(struct manager *m)
{
        sigset_t mask;

        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        sigaddset(&mask, SIGCHLD);
        m->signal_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        if (m->signal_fd < 0)
                return log_error_errno(errno, "Failed to create signalfd: %m");
        return loop_add(m->loop, m->signal_fd, EPOLLIN, on_signal, m);
}

/* The exec helper exited: reap it, log it, start a new one. */
static void on_exec_helper(struct loop *l, int fd, uint32_t revents, void *userdata)
{
        struct manager *m = userdata;
        (void)exec_client_process(m->settings->exec);
}

static int setup_timer(struct manager *m)
{
        struct itimerspec its = {
                .it_interval = { .tv_sec = 1 },
                .it_value = { .tv_sec = 1 },
        };

        m->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
        if (m->timer_fd < 0 || timerfd_settime(m->timer_fd, 0, &its, NULL) < 0)
                return log_error_errno(errno, "Failed to create timerfd: %m");
        return loop_add(m->loop, m->timer_fd, EPOLLIN, on_timer, m);
}

int manager_new(const struct udevd_settings *settings, const struct manager_options *opts,
                struct manager **ret)
{
        const struct device_roots roots = { .sys = "/sys", .dev = "/dev",
                                            .run = settings->run_dir };
        struct manager *m;
        int r;

        m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        m->settings = settings;
        if (opts)
                m->opts = *opts;
        m->signal_fd = m->timer_fd = -1;
        m->bc = (struct broadcaster)BROADCASTER_NULL;
        stats_init(); /* before any thread records an event */
        pthread_mutex_init(&m->env_lock, NULL);
        snapshot_holder_init(&m->snapshots);
        snprintf(m->queue_path, sizeof(m->queue_path), "%s/queue", settings->run_dir);
        snprintf(m->control_path, sizeof(m->control_path), "%s/control", settings->run_dir);

        r = mkdir_p(settings->run_dir, 0755);
        if (r < 0) {
                log_error_errno(r, "Failed to create %s: %m", settings->run_dir);
                goto fail;
        }
        /* A queue flag, temporary files, records and link claims of vanished
         * devices left by a crashed instance (udevd/run-repair.h). Safe: main()
         * holds the single-instance lock, no other daemon runs
         * (udevd/instance-lock.h). */
        (void)run_repair(&roots, NULL);

        m->children_max = settings->children_max ?: udevd_default_children_max();
        struct event_queue_hooks hooks = {
                .on_busy_changed = on_queue_busy_changed,
                .on_need_worker = on_queue_need_worker,
                .userdata = m,
        };
        r = event_queue_new(&hooks, settings->queue_max_events, &m->queue);
        if (r < 0)
                goto fail;
        /* udevd(8) ERRORS AND OVERLOAD */
        event_queue_set_max_bytes(m->queue, (size_t)MIN(settings->queue_max_bytes,
                                                        (uint64_t)SIZE_MAX));
        log_debug("Queue budget: %u events, %" PRIu64 " bytes", settings->queue_max_events,
                  settings->queue_max_bytes);
        event_queue_set_max_running(m->queue, m->children_max);
        event_queue_set_coalesce(m->queue, true); /* udevd(8) STORM DAMPING */
        r = worker_pool_new(m->queue, settings, m->children_max, &m->pool);
        if (r < 0)
                goto fail;
        worker_pool_set_snapshots(m->pool, &m->snapshots);
        r = manager_load_rules(m, &m->rules);
        if (r < 0) {
                log_error_errno(r, "Failed to load the rules: %m");
                goto fail;
        }
        m->last_rules_check = now_usec(CLOCK_MONOTONIC);
        (void)rules_apply_static_nodes(m->rules, &roots); /* once, not on reload */
        r = manager_publish(m);
        if (r < 0)
                goto fail;
        log_debug("Rules published, generation %u", snapshot_generation(&m->snapshots));
        r = loop_new(&m->loop);
        if (r < 0)
                goto fail;
        r = setup_signals(m);
        if (r < 0)
                goto fail;
        r = setup_timer(m);
        if (r < 0)
                goto fail;
        if (settings->exec) {
                r = loop_add(m->loop, exec_client_get_fd(settings->exec), EPOLLIN, on_exec_helper,
                             m);
                if (r < 0)
                        goto fail;
        }
        r = broadcaster_open(&m->bc);
        if (r < 0) {
                log_error_errno(r, "Failed to open the broadcast socket: %m");
                goto fail;
        }
        r = known_devices_new(&m->known);
        if (r < 0)
                goto fail;
        const struct listener_options lo = {
                .accept_user_uevents = settings->accept_user_uevents,
                .rcvbuf = m->opts.netlink_rcvbuf,
                .known = m->known,
                .fd = m->opts.uevent_fd,
        };
        m->opts.uevent_fd = 0; /* the listener has it now, even on failure */
        r = listener_new(m->queue, &lo, &m->listener);
        if (r < 0)
                goto fail;
        r = loop_add(m->loop, listener_sync_fd(m->listener), EPOLLIN, on_listener_sync, m);
        if (r < 0)
                goto fail;
        if (settings->explain_events > 0) {
                r = explain_ring_new(settings->explain_events,
                                     settings->explain_events * EXPLAIN_BYTES_PER_EVENT,
                                     &m->explain);
                if (r < 0)
                        goto fail;
                explain_ring_set_global(m->explain);
        }
        r = manager_register_queries(m);
        if (r < 0)
                goto fail;
        struct ctrl_server_ops ops = {
                .handle = on_ctrl_msg,
                .request_sync = on_ctrl_request_sync,
                .synced = on_ctrl_synced,
                .query = on_ctrl_query,
                .userdata = m,
        };
        /* Last: the socket's existence tells clients that udev is running. */
        if (m->opts.control_fd > 0) {
                r = ctrl_server_adopt(m->loop, m->control_path, m->opts.control_fd, &ops,
                                      &m->ctrl);
                m->opts.control_fd = 0;
        } else {
                r = ctrl_server_new(m->loop, m->control_path, &ops, &m->ctrl);
        }
        if (r < 0)
                goto fail;
        *ret = m;
        return 0;
fail:
        manager_free(m);
        return r;
}

int manager_start(struct manager *m)
{
        int r = listener_start(m->listener);
        if (r < 0)
                return log_error_errno(r, "Failed to start the listener thread: %m");
        log_info("tudev udevd " VERSION " running with at most %u workers", m->children_max);
        return 0;
}

/* Exit: remove the control socket and the queue flag while they are still
 * ours, before the process is gone; the control connections stay open until
 * then (ctrl-server.h), so `udevadm control --exit` returns only after this
 * and after the process exited. If another daemon's socket is at the path
 * now, /run/udev is its business: the queue flag is left alone too. */
static void manager_release_run_files(struct manager *m)
{
        bool ours;

        if (m->run_files_released)
                return;
        m->run_files_released = true;
        ours = ctrl_server_free_at_exit(m->ctrl);
        m->ctrl = NULL;
        if (!ours) {
                log_warning("Another daemon serves %s now; leaving %s alone", m->control_path,
                            m->queue_path);
                return;
        }
        if (unlink(m->queue_path) < 0 && errno != ENOENT)
                log_warning_errno(errno, "Failed to remove %s: %m", m->queue_path);
}

static void log_stats(struct manager *m)
{
        struct listener_stats ls;
        struct worker_pool_stats ps;
        struct event_queue_stats qs;

        listener_get_stats(m->listener, &ls);
        worker_pool_get_stats(m->pool, &ps);
        event_queue_get_stats(m->queue, &qs);
        log_info("stats: received=%" PRIu64 " processed=%" PRIu64 " failed=%" PRIu64
                 " forged=%" PRIu64 " malformed=%" PRIu64 " enobufs=%" PRIu64 " lost=%" PRIu64
                 " resyncs=%u resync_added=%u resync_removed=%u resync_forgotten=%u"
                 " dropped_at_exit=%zu workers=%u generation=%u coalesced=%" PRIu64
                 " watch_limited=%" PRIu64 " queue_bytes_peak=%zu budget_pauses=%" PRIu64,
                 ls.received, ps.processed, ps.failed, ls.forged, ls.malformed, ls.enobufs,
                 ls.lost, m->resync.runs, m->resync.added, m->resync.removed,
                 m->resync.forgotten, m->dropped_at_exit + qs.queued, ps.workers,
                 snapshot_generation(&m->snapshots), qs.coalesced_total, ps.watch_limited,
                 qs.bytes_peak, ls.budget_pauses);
}

int manager_run(struct manager *m)
{
        while (!m->exiting) {
                int r = loop_run_once(m->loop, -1);
                if (r < 0) {
                        log_error_errno(r, "Event loop failed: %m");
                        m->exit_status = 1;
                        break;
                }
                if (m->env_dirty) {
                        m->env_dirty = false;
                        (void)manager_publish(m);
                }
        }

        /* Stop receiving, then drain (control exit) or drop the queued events
         * (SIGTERM); running events finish or time out. */
        listener_stop(m->listener);
        if (m->drain_on_exit)
                event_queue_set_paused(m->queue, false); /* "exit" processes what is queued */
        event_queue_shutdown(m->queue, !m->drain_on_exit);
        if (!m->drain_on_exit) {
                /* Everything pushed is done, running or dropped now (exact: one
                 * locked snapshot). */
                struct event_queue_stats qs;
                event_queue_get_stats(m->queue, &qs);
                m->dropped_at_exit = (size_t)(qs.pushed_total - qs.done_total) - qs.running -
                                     qs.queued;
                if (m->dropped_at_exit > 0)
                        log_info("Dropped %zu queued events (not processed, not broadcast)",
                                 m->dropped_at_exit);
        }
        /* Running events finish or reach their event timeout, which abandons
         * them (with a failure broadcast) exactly as while running. */
        while (event_queue_wait_empty(m->queue, now_usec(CLOCK_MONOTONIC) + MANAGER_TICK_USEC) < 0) {
                struct timeout_check tc = { .m = m, .now = now_usec(CLOCK_MONOTONIC) };
                event_queue_foreach_running(m->queue, check_event_timeout, &tc);
        }
        unsigned stuck = worker_pool_busy(m->pool);
        if (stuck > 0) {
                log_warning("%u worker(s) still busy with abandoned events; exiting without them",
                            stuck);
                log_stats(m);
                worker_pool_abandon(m->pool);
                manager_release_run_files(m);
                return -ETIMEDOUT;
        }
        log_stats(m);
        worker_pool_join(m->pool);
        manager_release_run_files(m);
        return m->exit_status;
}

void manager_free(struct manager *m)
{
        if (!m)
                return;
        /* passed sockets not taken over yet (manager_new() failed early) */
        if (m->opts.control_fd > 0)
                safe_close(m->opts.control_fd);
        if (m->opts.uevent_fd > 0)
                safe_close(m->opts.uevent_fd);
        ctrl_server_free(m->ctrl);
        if (m->listener) {
                loop_remove(m->loop, listener_sync_fd(m->listener));
                listener_free(m->listener);
        }
        known_devices_free(m->known);
        if (m->queue)
                event_queue_shutdown(m->queue, true);
        worker_pool_free(m->pool);
        event_queue_free(m->queue);
        /* after the workers: they push into it */
        if (m->explain) {
                explain_ring_set_global(NULL);
                explain_ring_free(m->explain);
        }
        broadcaster_close(&m->bc);
        safe_close(m->signal_fd);
        safe_close(m->timer_fd);
        loop_free(m->loop);
        strlist_clear(&m->global_env);
        pthread_mutex_destroy(&m->env_lock);
        snapshot_holder_done(&m->snapshots);
        rules_unref(m->rules);
        if (!m->run_files_released)
                (void)unlink(m->queue_path);
        free(m);
}
