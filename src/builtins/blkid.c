/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (prober servers are pooled under pool.lock; a borrowed one is the borrower's) */
/* blkid: filesystem, partition table and partition entry properties as
 * systemd 252's builtin: ID_FS_*, ID_PART_TABLE_*, ID_PART_ENTRY_*,
 * ID_PART_GPT_AUTO_ROOT[_UUID]; options --offset=BYTES (-o),
 * --hint=NAME=VALUE (-H), --noraid (-R).
 *
 * libblkid parses untrusted on-disk data, so it does not run in the daemon:
 * this builtin asks tudev-probe (src/probe/) and imports the KEY=VALUE lines
 * it answers after checking them (format and limits: probe/blkid-wire.h).
 * In udevd the worker threads share a small pool of persistent prober
 * servers (see "the prober server" below); udevadm, and a worker whose
 * servers keep dying, run one `tudev-probe blkid ...` per call through the event's
 * program spawner (the exec helper in udevd). A prober that crashes, hangs
 * past its deadline or answers something else fails this builtin call only
 * (logged as a warning with the device and the signal); the event goes on.
 * What stays here: the options, the device's identity for the prober to
 * check its node against (device number, kind, DISKSEQ), the boot loader's
 * EFI variable for ID_PART_GPT_AUTO_ROOT_UUID, and ID_PART_GPT_AUTO_ROOT.
 *
 * The prober: `tudev-probe` beside the running binary (udevd and udevadm in
 * the build directory), else TUDEV_PROBE_PATH ($(libexecdir)/tudev/). Its
 * deadline: half the event timeout (so the rest of the event still has time),
 * at most the event's deadline; BLKID_PROBE_TIMEOUT_USEC without one. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "builtins/builtin-util.h"
#include "builtins/builtins-internal.h"
#include "device/device.h"
#include "event/spawn-direct.h"
#include "event/udev-event.h"
#include "proto/blkid-wire.h"
#include "shared/compat.h"
#include "shared/cond.h"
#include "shared/fileio.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "shared/time-util.h"

#ifndef TUDEV_PROBE_PATH
#define TUDEV_PROBE_PATH "/usr/libexec/tudev/tudev-probe"
#endif
#define PROBE_NAME "tudev-probe"
#define BLKID_PROBE_TIMEOUT_USEC (90 * USEC_PER_SEC)
#define BLKID_CMD_MAX 16384 /* the spawner's command line limit */
#define BLKID_HINTS_MAX 64  /* as tudev-probe's */
#define EFI_LOADER_PART_UUID_VAR \
        "firmware/efi/efivars/LoaderDevicePartUUID-4a67b082-0a4c-41cf-b6c7-440b29bb8c4f"
#define EFIVAR_MAX 1024

/* ---------------------------------------------------------------- the prober */

/* Variables of udevd's environment the prober gets (its whole environment):
 * the test-only fault triggers, libblkid's debug switch, sanitizer options. */
static const char *const probe_env_keys[] = {
        "TUDEV_PROBE_CRASH_ON", "TUDEV_PROBE_HANG_ON", "LIBBLKID_DEBUG",
        "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", "TSAN_OPTIONS",
};

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static char probe_path[PATH_MAX];
static char *probe_env[ARRAY_SIZE(probe_env_keys) + 1];

static bool pool_ok;
static void pool_setup(void);

static void probe_setup(void)
{
        char exe[PATH_MAX];
        size_t n = 0;
        ssize_t len;
        char *slash;

        snprintf(probe_path, sizeof(probe_path), "%s", TUDEV_PROBE_PATH);
        len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        if (len > 0) {
                exe[len] = '\0';
                slash = strrchr(exe, '/');
                if (slash && (size_t)(slash - exe) + sizeof("/" PROBE_NAME) <= sizeof(exe)) {
                        strcpy(slash + 1, PROBE_NAME);
                        if (access(exe, X_OK) == 0)
                                snprintf(probe_path, sizeof(probe_path), "%s", exe);
                }
        }
        for (size_t i = 0; i < ARRAY_SIZE(probe_env_keys); i++) {
                const char *v = getenv(probe_env_keys[i]);

                if (v && asprintf(&probe_env[n], "%s=%s", probe_env_keys[i], v) >= 0)
                        n++;
        }
        probe_env[n] = NULL;
        pool_setup();
        log_debug("blkid: prober %s", probe_path);
}

/* Append `word` to cmd as one word for the spawner's splitting
 * (udev_split_cmdline(): quotes group, nothing is escaped). A word with
 * whitespace or quotes (or an empty one) is quoted: runs without a single quote
 * in single quotes, a single quote in double quotes. 0 or -E2BIG. */
static int cmd_append(char *cmd, size_t size, size_t *len, const char *word)
{
        const char *p = word;
        size_t o = *len;

        if (o > 0) {
                if (o + 1 >= size)
                        return -E2BIG;
                cmd[o++] = ' ';
        }
        if (*word && !strpbrk(word, " \t\n\r'\"")) {
                size_t l = strlen(word);

                if (o + l >= size)
                        return -E2BIG;
                memcpy(cmd + o, word, l + 1);
                *len = o + l;
                return 0;
        }
        do {
                size_t run = strcspn(p, "'");

                if (run > 0 || !*word) {
                        if (o + run + 2 >= size)
                                return -E2BIG;
                        cmd[o++] = '\'';
                        memcpy(cmd + o, p, run);
                        o += run;
                        cmd[o++] = '\'';
                        p += run;
                }
                if (*p == '\'') {
                        if (o + 3 >= size)
                                return -E2BIG;
                        memcpy(cmd + o, "\"'\"", 3);
                        o += 3;
                        p++;
                }
        } while (*p);
        cmd[o] = '\0';
        *len = o;
        return 0;
}

/* ---------------------------------------------------------------- options, command line */

struct blkid_opts {
        int64_t offset;
        bool noraid;
        const char *hints[BLKID_HINTS_MAX]; /* borrowed from argv */
        unsigned n_hints;
};

static int parse_options(int argc, char *argv[], struct blkid_opts *o)
{
        static const struct builtin_option options[] = {
                { "offset", true, 'o' },
                { "hint", true, 'H' },
                { "noraid", false, 'R' },
                { NULL, false, 0 },
        };
        struct builtin_getopt st = { 0 };
        long long v;
        int c, r;

        while ((c = builtin_getopt_long(&st, argc, argv, "o:H:R", options)) != -1) {
                switch (c) {
                case 'H': /* checked by libblkid in the prober */
                        if (o->n_hints >= BLKID_HINTS_MAX)
                                return log_error_errno(-E2BIG, "Too many probing hints");
                        o->hints[o->n_hints++] = st.optarg;
                        break;
                case 'o':
                        r = parse_atolli(st.optarg, &v);
                        if (r < 0)
                                return log_error_errno(r, "Failed to parse '%s' as an integer: %m",
                                                       st.optarg);
                        if (v < 0)
                                return log_error_errno(-EINVAL, "Invalid offset %lld", v);
                        o->offset = v;
                        break;
                case 'R':
                        o->noraid = true;
                        break;
                default: /* unknown options are ignored, as in systemd */
                        break;
                }
        }
        return 0;
}

/* One call: the command line, the prober's output and its parsed lines
 * (pointing into out). Too big for a worker's stack. */
struct blkid_call {
        char req[BLKID_WIRE_REQ_MAX]; /* words, each ending with NUL */
        size_t req_len;
        unsigned n_words;
        char cmd[BLKID_CMD_MAX];
        char out[BLKID_WIRE_REPLY_MAX + 1];
        struct {
                const char *key, *value;
        } rec[BLKID_WIRE_LINES_MAX];
        size_t n_rec;
};

/* --diskseq: like systemd's sd_device_open(), an initialized device's node
 * must still be the disk with the event's DISKSEQ (0: the property is
 * invalid, which fails once the node is open). 0: no check. */
static int want_diskseq(struct udev_event *ev, unsigned long long *ret)
{
        const char *seq, *ignore;
        unsigned long long want;

        if (!device_is_initialized(ev->dev))
                return 0;
        ignore = proplist_get(&ev->props, "ID_IGNORE_DISKSEQ");
        if (ignore && parse_boolean(ignore) > 0)
                return 0;
        seq = proplist_get(&ev->props, "DISKSEQ");
        if (!seq)
                return 0;
        *ret = parse_atollu_full(seq, 10, &want) < 0 ? 0 : want;
        return 1;
}

/* Append one word (with its NUL) to the request. 0 or -E2BIG. */
static int req_append(struct blkid_call *c, const char *word)
{
        size_t l = strlen(word) + 1;

        if (c->n_words >= BLKID_WIRE_REQ_ARGS_MAX || c->req_len + l > sizeof(c->req))
                return -E2BIG;
        memcpy(c->req + c->req_len, word, l);
        c->req_len += l;
        c->n_words++;
        return 0;
}

/* The prober's command line from "blkid" on (blkid-wire.h), as a request. */
static int build_request(struct udev_event *ev, const char *devnode, const struct blkid_opts *o,
                         struct blkid_call *c)
{
        const char *subsystem = NULL;
        unsigned major, minor;
        unsigned long long seq;
        char arg[64];
        int r;

        c->req_len = 0;
        c->n_words = 0;
        r = device_get_devnum(ev->dev, &major, &minor);
        if (r < 0)
                return r == -ENOENT ? -ENOEXEC : r;
        (void)device_get_subsystem(ev->dev, &subsystem);
        r = req_append(c, "blkid");
        snprintf(arg, sizeof(arg), "--devnum=%u:%u", major, minor);
        if (r >= 0)
                r = req_append(c, arg);
        if (r >= 0)
                r = req_append(c, subsystem && streq(subsystem, "block") ? "--kind=block"
                                                                          : "--kind=char");
        if (r >= 0 && want_diskseq(ev, &seq) > 0) {
                snprintf(arg, sizeof(arg), "--diskseq=%llu", seq);
                r = req_append(c, arg);
        }
        if (r >= 0 && o->offset != 0) {
                snprintf(arg, sizeof(arg), "--offset=%" PRIi64, o->offset);
                r = req_append(c, arg);
        }
        if (r >= 0 && o->noraid)
                r = req_append(c, "--noraid");
        for (unsigned i = 0; r >= 0 && i < o->n_hints; i++) {
                if (c->req_len + strlen("--hint=") + strlen(o->hints[i]) + 1 > sizeof(c->req))
                        return -E2BIG;
                memcpy(c->req + c->req_len, "--hint=", strlen("--hint="));
                c->req_len += strlen("--hint=");
                r = req_append(c, o->hints[i]);
        }
        if (r >= 0)
                r = req_append(c, "--");
        if (r >= 0)
                r = req_append(c, devnode);
        return r;
}

/* The one-shot command line for the spawner: the prober's path and the
 * request's words. */
static int build_cmd(struct blkid_call *c)
{
        size_t len = 0;
        int r;

        r = cmd_append(c->cmd, sizeof(c->cmd), &len, probe_path);
        for (size_t pos = 0; r >= 0 && pos < c->req_len; pos += strlen(c->req + pos) + 1)
                r = cmd_append(c->cmd, sizeof(c->cmd), &len, c->req + pos);
        return r;
}

/* Half the event's time from now, never past its deadline. */
static uint64_t probe_deadline(const struct udev_event *ev)
{
        uint64_t now = now_usec(CLOCK_MONOTONIC), end;

        if (ev->timeout_usec == 0 || ev->timeout_usec == UINT64_MAX)
                return now + BLKID_PROBE_TIMEOUT_USEC;
        end = ev->start_usec + ev->timeout_usec;
        return MIN(now + ev->timeout_usec / 2, end);
}

/* Check and split every line of the output (in place). 0 or -EBADMSG. */
static int parse_output(struct blkid_call *c, char *out)
{
        size_t len = strlen(out), pos = 0;
        char *key, *value;
        int r;

        c->n_rec = 0;
        while ((r = blkid_wire_next(out, len, &pos, &key, &value)) > 0) {
                if (c->n_rec >= ARRAY_SIZE(c->rec))
                        return -EBADMSG;
                c->rec[c->n_rec].key = key;
                c->rec[c->n_rec].value = value;
                c->n_rec++;
        }
        return r;
}

static const char *directive(const struct blkid_call *c, const char *key)
{
        for (size_t i = 0; i < c->n_rec; i++)
                if (streq(c->rec[i].key, key))
                        return c->rec[i].value;
        return NULL;
}

/* Exit status 1: the error the prober reported, logged as the builtin did
 * when libblkid ran in-process. */
static int prober_failed(const struct blkid_call *c, const struct blkid_opts *o,
                         const char *devnode)
{
        const char *v = directive(c, ".ERRNO"), *stage = directive(c, ".STAGE");
        unsigned err = 0, hint = UINT_MAX;

        if (!v || parse_atou(v, &err) < 0 || err == 0 || err > BLKID_WIRE_ERRNO_MAX)
                err = EIO;
        v = directive(c, ".HINT");
        if (stage && streq(stage, "hint") && v && parse_atou(v, &hint) >= 0 &&
            hint < o->n_hints)
                return log_error_errno(-(int)err, "Failed to use '%s' probing hint: %m",
                                       o->hints[hint]);
        if (stage && streq(stage, "probe"))
                return log_debug_errno(-(int)err, "Failed to probe superblocks: %m");
        if (stage && streq(stage, "open"))
                return log_debug_errno(-(int)err, "Failed to open block device %s: %m",
                                       devnode);
        return log_debug_errno(-(int)err, "%s: blkid prober failed: %m", devnode);
}

/* The exit status `r` and the output of a prober that answered (`who`: its
 * name for the messages); 0 with c->rec filled, or -errno after logging. */
static int prober_result(struct blkid_call *c, const struct blkid_opts *o, const char *devnode,
                         const char *who, int r, char *out, bool truncated)
{
        int q;

        if (r == BLKID_EXIT_USAGE)
                return log_error_errno(-EINVAL, "%s: blkid prober %s refused its command line",
                                       devnode, who);
        if (r != BLKID_EXIT_OK && r != BLKID_EXIT_FAILED && r != BLKID_EXIT_TRUNCATED) {
                log_warning("%s: blkid prober %s exited with status %d; no properties imported",
                            devnode, who, r);
                return -EIO;
        }
        q = truncated || r == BLKID_EXIT_TRUNCATED ? -EBADMSG : parse_output(c, out);
        if (q < 0)
                return log_warning_errno(q, "%s: blkid prober %s printed malformed output; no "
                                         "properties imported", devnode, who);
        return r == BLKID_EXIT_OK ? 0 : prober_failed(c, o, devnode);
}

static int prober_killed(const char *devnode, const char *who, int sig)
{
        log_warning("%s: blkid prober %s was killed by signal SIG%s; no properties imported",
                    devnode, who, signal_abbrev(sig) ?: "?");
        return -EIO;
}

static int prober_timed_out(const char *devnode, const char *who, uint64_t start)
{
        return log_warning_errno(-ETIME, "%s: blkid prober %s timed out after %.1f s and was "
                                 "killed; no properties imported", devnode, who,
                                 (double)(now_usec(CLOCK_MONOTONIC) - start) / 1e6);
}

/* One prober process for this call, through the event's spawner. */
static int run_oneshot(struct udev_event *ev, struct blkid_call *c, const struct blkid_opts *o,
                       const char *devnode)
{
        struct spawn_direct sd = { .timeout_signal = SIGKILL };
        /* udevadm test-builtin has no spawner: start the prober directly */
        struct udev_spawner sp = ev->spawner.spawn ? ev->spawner : spawn_direct_spawner(&sd);
        uint64_t start = now_usec(CLOCK_MONOTONIC);
        bool truncated = false;
        int r;

        r = build_cmd(c);
        if (r < 0)
                return log_debug_errno(r, "%s: Failed to prepare the blkid prober: %m", devnode);
        r = sp.spawn(sp.userdata, c->cmd, probe_env, false, probe_deadline(ev), c->out,
                     sizeof(c->out), &truncated);
        if (r == -ETIME)
                return prober_timed_out(devnode, probe_path, start);
        if (r < 0)
                return log_error_errno(r, "%s: Failed to run blkid prober %s: %m", devnode,
                                       probe_path);
        if (r > 128 && r < 128 + SIGRTMAX + 1)
                return prober_killed(devnode, probe_path, r - 128);
        return prober_result(c, o, devnode, probe_path, r, c->out, truncated);
}

/* ---------------------------------------------------------------- the prober server */

/* udevd keeps a pool of `tudev-probe --server` processes (blkid-wire.h); a
 * worker borrows one for a call and gives it back, so a probe costs a round
 * trip instead of a process start. Probing is short and mostly CPU or page
 * cache, so the pool holds about one server per CPU (POOL_CAP_MIN at least):
 * a worker that finds them all busy waits for one to come back. Only when
 * none has come back for POOL_STALL_USEC (servers stuck on slow devices) is
 * an extra one started, one per such period, so a slow device holds nobody
 * up for longer while a storm of quick probes keeps to the pool.
 * Extras idle for POOL_IDLE_USEC are stopped when a server is given back.
 * One server per worker thread, as before, made a storm of 20 workers keep
 * 20 probers (about 0.5 MiB of PSS each) for no gain on a 2-CPU machine.
 * Servers end with udevd (they exit when their socket closes or their parent
 * is gone). A server that crashes, hangs past the deadline or answers
 * garbage fails that call only; it is killed and reaped (by pid: udevd never
 * waits for any child) and the next call starts a new one. A server that
 * dies SERVER_DEATHS_MAX times within SERVER_WINDOW_USEC makes calls through
 * that pool slot fall back to one prober process per call for SERVER_WINDOW_USEC. */
#define SERVER_DEATHS_MAX 5
#define SERVER_WINDOW_USEC (10 * USEC_PER_SEC)
#define SERVER_REQUESTS_MAX 10000 /* then a fresh server: bounds what a leak could grow */
#define SERVER_REAP_USEC (2 * USEC_PER_SEC)
#define SERVER_STUCK_MAX 4 /* killed servers not reaped yet (blocked in the kernel) */

struct probe_server {
        int fd;                           /* our end of the socket; -1: no server */
        pid_t pid;
        unsigned requests;                /* served by this server */
        unsigned deaths;                  /* since window_start */
        uint64_t window_start;
        uint64_t oneshot_until;           /* crash loop: one-shot probers until then */
        pid_t stuck[SERVER_STUCK_MAX];    /* 0: free slot */
        uint64_t idle_since;              /* in the pool's idle list since */
};

#define POOL_CAP_MIN 2
#define POOL_MAX 256                    /* idle servers kept at most (the rest are stopped) */
#define POOL_STALL_USEC (50 * USEC_PER_MSEC)
#define POOL_IDLE_USEC (5 * USEC_PER_SEC)

static struct {
        pthread_mutex_t lock;
        pthread_cond_t returned;        /* CLOCK_MONOTONIC */
        struct probe_server *idle[POOL_MAX]; /* idle[n_idle - 1]: most recently returned */
        unsigned n_idle;
        unsigned n_total;               /* idle + borrowed */
        unsigned cap;
        uint64_t last_progress;         /* a server came back or a slot was added */
} pool = { .lock = PTHREAD_MUTEX_INITIALIZER };

static int pidfd_open_compat(pid_t pid)
{
#ifdef SYS_pidfd_open
        return (int)syscall(SYS_pidfd_open, pid, 0);
#else
        errno = ENOSYS;
        return -1;
#endif
}

/* Wait at most `usec` for our child `pid` to exit. 1 (status in *status), 0
 * still running, -errno (-ECHILD: not ours any more). */
static int wait_child(pid_t pid, uint64_t usec, int *status)
{
        _cleanup_close_ int pidfd = pidfd_open_compat(pid);
        uint64_t end = now_usec(CLOCK_MONOTONIC) + usec;

        for (;;) {
                pid_t w = waitpid(pid, status, WNOHANG);
                uint64_t now;

                if (w == pid)
                        return 1;
                if (w < 0 && errno != EINTR)
                        return -errno;
                now = now_usec(CLOCK_MONOTONIC);
                if (now >= end)
                        return 0;
                if (pidfd >= 0) {
                        struct pollfd p = { .fd = pidfd, .events = POLLIN };

                        (void)poll(&p, 1, (int)MIN((end - now + 999) / 1000, 1000u));
                } else {
                        struct timespec ts = { .tv_nsec = 1000 * 1000 };

                        (void)nanosleep(&ts, NULL);
                }
        }
}

/* Reap killed servers that were still in the kernel; `block`: wait for them. */
static void server_reap_stuck(struct probe_server *s, bool block)
{
        for (size_t i = 0; i < ARRAY_SIZE(s->stuck); i++) {
                int status;

                if (s->stuck[i] <= 0)
                        continue;
                if (block ? waitpid(s->stuck[i], &status, 0) != 0
                          : waitpid(s->stuck[i], &status, WNOHANG) != 0)
                        s->stuck[i] = 0;
        }
}

/* Stop the server: close our end, let it exit (kill it at once if `kill_it`,
 * else after SERVER_REAP_USEC), reap it. Returns its wait status (0 if it
 * could not be reaped). */
static int server_stop(struct probe_server *s, bool kill_it)
{
        pid_t pid = s->pid;
        int status = 0, r;

        s->fd = safe_close(s->fd);
        s->pid = 0;
        if (pid <= 0)
                return 0;
        if (kill_it)
                (void)kill(pid, SIGKILL);
        r = wait_child(pid, SERVER_REAP_USEC, &status);
        if (r == 0 && !kill_it) {
                (void)kill(pid, SIGKILL);
                r = wait_child(pid, SERVER_REAP_USEC, &status);
        }
        if (r != 0)
                return r > 0 ? status : 0;
        /* SIGKILLed but still in the kernel (a device stuck in I/O) */
        log_warning("blkid: prober server [%d] does not exit after SIGKILL", (int)pid);
        for (size_t i = 0;; i++) {
                if (i == ARRAY_SIZE(s->stuck)) {
                        server_reap_stuck(s, true);
                        i = 0;
                }
                if (s->stuck[i] <= 0) {
                        s->stuck[i] = pid;
                        return 0;
                }
        }
}

static void pool_setup(void)
{
        long n = sysconf(_SC_NPROCESSORS_ONLN);

        pool.cap = n < POOL_CAP_MIN ? POOL_CAP_MIN : n > POOL_MAX ? POOL_MAX : (unsigned)n;
        pool_ok = cond_init_monotonic(&pool.returned) == 0;
}

/* A server for the caller alone until pool_return(): an idle one (the most
 * recently used), a new slot while below the cap, else the first one given
 * back, else (none given back for POOL_STALL_USEC) a new slot anyway.
 * NULL: out of memory. */
static struct probe_server *pool_borrow(void)
{
        struct probe_server *s = NULL;
        uint64_t now;

        pthread_mutex_lock(&pool.lock);
        for (;;) {
                if (pool.n_idle > 0) {
                        s = pool.idle[--pool.n_idle];
                        break;
                }
                now = now_usec(CLOCK_MONOTONIC);
                /* (n_total is bounded by the workers: each holds one at most) */
                if (pool.n_total < pool.cap || now >= pool.last_progress + POOL_STALL_USEC) {
                        s = calloc(1, sizeof(*s));
                        if (s) {
                                s->fd = -1;
                                pool.n_total++;
                                pool.last_progress = now;
                        }
                        break;
                }
                (void)cond_wait_until(&pool.returned, &pool.lock,
                                      pool.last_progress + POOL_STALL_USEC);
        }
        pthread_mutex_unlock(&pool.lock);
        return s;
}

/* Give `s` back; stops it instead when the pool is full, and stops extras
 * (beyond the cap) that have been idle for POOL_IDLE_USEC. */
static void pool_return(struct probe_server *s)
{
        struct probe_server *drop[2] = { NULL, NULL };
        uint64_t now = now_usec(CLOCK_MONOTONIC);

        pthread_mutex_lock(&pool.lock);
        pool.last_progress = now;
        if (pool.n_idle < POOL_MAX) {
                s->idle_since = now;
                pool.idle[pool.n_idle++] = s;
                pthread_cond_signal(&pool.returned);
        } else {
                drop[0] = s;
                pool.n_total--;
        }
        /* the least recently used idle server, if it is an extra gone stale */
        if (pool.n_idle > 1 && pool.n_total > pool.cap &&
            now - pool.idle[0]->idle_since >= POOL_IDLE_USEC) {
                drop[1] = pool.idle[0];
                memmove(pool.idle, pool.idle + 1, --pool.n_idle * sizeof(pool.idle[0]));
                pool.n_total--;
        }
        pthread_mutex_unlock(&pool.lock);
        for (size_t i = 0; i < ARRAY_SIZE(drop); i++) {
                if (!drop[i])
                        continue;
                (void)server_stop(drop[i], false);
                /* one stuck in the kernel stays a zombie rather than block a worker */
                server_reap_stuck(drop[i], false);
                free(drop[i]);
        }
}

/* A server died with a request, or was killed: count it. */
static void server_death(struct probe_server *s)
{
        uint64_t now = now_usec(CLOCK_MONOTONIC);

        if (s->deaths == 0 || now - s->window_start > SERVER_WINDOW_USEC) {
                s->window_start = now;
                s->deaths = 0;
        }
        if (++s->deaths < SERVER_DEATHS_MAX)
                return;
        s->deaths = 0;
        s->oneshot_until = now + SERVER_WINDOW_USEC;
        log_warning("blkid: prober server died %u times within %u s; one prober process per "
                    "call for the next %u s", SERVER_DEATHS_MAX,
                    (unsigned)(SERVER_WINDOW_USEC / USEC_PER_SEC),
                    (unsigned)(SERVER_WINDOW_USEC / USEC_PER_SEC));
}

static int server_start(struct probe_server *s)
{
        _cleanup_close_ int ours = -1, theirs = -1;
        posix_spawn_file_actions_t fa;
        posix_spawnattr_t attr;
        char parent[32];
        char *argv[] = { probe_path, (char *)"--server", parent, NULL };
        sigset_t none, all;
        int sv[2], r;

        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                return -errno;
        ours = sv[0];
        theirs = sv[1];
        if (theirs <= 3) { /* not one of the fds the child's file actions set up */
                int fd = fcntl(theirs, F_DUPFD_CLOEXEC, 4);

                if (fd < 0)
                        return -errno;
                safe_close(theirs);
                theirs = fd;
        }
        snprintf(parent, sizeof(parent), "--parent=%d", (int)getpid());
        sigemptyset(&none);
        sigfillset(&all);
        posix_spawn_file_actions_init(&fa);
        posix_spawnattr_init(&attr);
        posix_spawn_file_actions_adddup2(&fa, theirs, 3);
        posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
        spawn_close_from(&fa, 4);
        posix_spawnattr_setsigmask(&attr, &none);
        posix_spawnattr_setsigdefault(&attr, &all);
        posix_spawnattr_setpgroup(&attr, 0);
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
                                                POSIX_SPAWN_SETPGROUP);
        r = -posix_spawn(&s->pid, probe_path, &fa, &attr, argv, probe_env);
        posix_spawn_file_actions_destroy(&fa);
        posix_spawnattr_destroy(&attr);
        if (r < 0) {
                s->pid = 0;
                return r;
        }
        s->fd = TAKE_FD(ours);
        s->requests = 0;
        log_debug("blkid: prober server %s [%d] started", probe_path, (int)s->pid);
        return 0;
}

/* Send the request, wait for the answer until `deadline`. 0 with the answer
 * in c->out (NUL-terminated, *ret_len bytes); -EPIPE the server was gone
 * before it got the request; -ECONNRESET it went away with it; -ETIME;
 * -EBADMSG an answer too long; other -errno. */
static int server_exchange(struct probe_server *s, struct blkid_call *c, uint64_t deadline,
                           size_t *ret_len)
{
        struct iovec iov = { .iov_base = c->out, .iov_len = sizeof(c->out) - 1 };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
        ssize_t n;

        if (send(s->fd, c->req, c->req_len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
                return errno == EPIPE || errno == ECONNRESET || errno == ENOTCONN ? -EPIPE
                                                                                 : -errno;
        for (;;) {
                uint64_t now = now_usec(CLOCK_MONOTONIC);
                struct pollfd p = { .fd = s->fd, .events = POLLIN };
                int r;

                if (now >= deadline)
                        return -ETIME;
                r = poll(&p, 1, (int)MIN((deadline - now + 999) / 1000, (uint64_t)INT_MAX));
                if (r < 0 && errno != EINTR)
                        return -errno;
                if (r <= 0)
                        continue;
                n = recvmsg(s->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
                if (n < 0 && (errno == EAGAIN || errno == EINTR))
                        continue;
                if (n < 0)
                        return errno == ECONNRESET ? -ECONNRESET : -errno;
                if (n == 0)
                        return -ECONNRESET;
                if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))
                        return -EBADMSG;
                c->out[n] = '\0';
                *ret_len = (size_t)n;
                return 0;
        }
}

/* The answer: "STATUS\n" then the output. The status, or -EBADMSG; *ret_out
 * points at the output. */
static int answer_split(char *buf, size_t len, char **ret_out)
{
        char *nl = memchr(buf, '\n', len);
        unsigned status;

        if (!nl || nl == buf || nl - buf > 3 || memchr(buf, '\0', len))
                return -EBADMSG;
        *nl = '\0';
        if (parse_atou(buf, &status) < 0 || status > BLKID_EXIT_TRUNCATED)
                return -EBADMSG;
        *ret_out = nl + 1;
        return (int)status;
}

/* Probe through a borrowed server; like run_oneshot(). */
static int run_server(struct udev_event *ev, struct probe_server *s, struct blkid_call *c,
                      const struct blkid_opts *o, const char *devnode)
{
        uint64_t start = now_usec(CLOCK_MONOTONIC), deadline = probe_deadline(ev);
        char who[PATH_MAX + 32], *out = NULL;
        size_t len = 0;
        int r, status;

        server_reap_stuck(s, false);
        for (unsigned attempt = 0;; attempt++) {
                if (s->fd < 0) {
                        r = server_start(s);
                        if (r < 0)
                                return log_error_errno(r, "%s: Failed to start blkid prober "
                                                       "server %s: %m", devnode, probe_path);
                }
                r = server_exchange(s, c, deadline, &len);
                if (r != -EPIPE || attempt > 0)
                        break;
                /* gone while idle (killed from outside): a new one for this call */
                status = server_stop(s, true);
                log_debug("blkid: prober server was gone (wait status 0x%x), restarting",
                          (unsigned)status);
        }
        snprintf(who, sizeof(who), "server %s [%d]", probe_path, (int)s->pid);
        if (r == -ETIME) {
                (void)server_stop(s, true);
                server_death(s);
                return prober_timed_out(devnode, who, start);
        }
        if (r == -ECONNRESET || r == -EPIPE) {
                status = server_stop(s, false);
                server_death(s);
                if (WIFSIGNALED(status))
                        return prober_killed(devnode, who, WTERMSIG(status));
                log_warning("%s: blkid prober %s exited with status %d without answering; no "
                            "properties imported", devnode, who,
                            WIFEXITED(status) ? WEXITSTATUS(status) : -1);
                return -EIO;
        }
        if (r < 0 || (status = answer_split(c->out, len, &out)) < 0) {
                (void)server_stop(s, true);
                server_death(s);
                if (r < 0 && r != -EBADMSG)
                        return log_error_errno(r, "%s: Failed to talk to blkid prober %s: %m",
                                               devnode, who);
                return log_warning_errno(-EBADMSG, "%s: blkid prober %s printed malformed "
                                         "output; no properties imported", devnode, who);
        }
        log_debug("%s: probed by blkid prober server [%d] in %.1f ms", devnode, (int)s->pid,
                  (double)(now_usec(CLOCK_MONOTONIC) - start) / 1e3);
        if (++s->requests >= SERVER_REQUESTS_MAX)
                (void)server_stop(s, false);
        return prober_result(c, o, devnode, who, status, out, false);
}

/* Run the prober; 0 with c->rec filled (exit status 0), or -errno after
 * logging why. The server in udevd (the exec helper is its spawner), one
 * process per call elsewhere (udevadm) and during a crash loop. */
static int run_prober(struct udev_event *ev, struct blkid_call *c, const struct blkid_opts *o,
                      const char *devnode)
{
        struct probe_server *s;
        int r;

        if (!ev->spawner.spawn || ev->spawner.spawn == spawn_direct || !pool_ok)
                return run_oneshot(ev, c, o, devnode);
        s = pool_borrow();
        if (!s)
                return log_error_errno(-ENOMEM, "%s: blkid: %m", devnode);
        if (s->oneshot_until != 0 && now_usec(CLOCK_MONOTONIC) < s->oneshot_until)
                r = run_oneshot(ev, c, o, devnode);
        else
                r = run_server(ev, s, c, o, devnode);
        pool_return(s);
        return r;
}

/* ---------------------------------------------------------------- import */

/* The ESP/XBOOTLDR partition UUID the boot loader reported (EFI variable
 * LoaderDevicePartUUID: 4 attribute bytes, then a UTF-16LE string). */
static int loader_part_uuid(struct udev_event *ev, uint8_t id[16])
{
        const char *sys = device_ctx_roots(ev->ctx)->sys;
        _cleanup_free_ char *buf = NULL;
        char path[512], str[64];
        size_t len, n = 0;
        int r;

        snprintf(path, sizeof(path), "%s/firmware/efi", sys);
        if (access(path, F_OK) < 0)
                return -EOPNOTSUPP; /* not booted with EFI */
        snprintf(path, sizeof(path), "%s/" EFI_LOADER_PART_UUID_VAR, sys);
        r = read_file_bounded(path, EFIVAR_MAX, &buf, &len);
        if (r < 0)
                return r;
        for (size_t i = 4; i + 1 < len && n + 1 < sizeof(str); i += 2) {
                if (buf[i] == 0 && buf[i + 1] == 0)
                        break;
                if (buf[i + 1] != 0)
                        return -EINVAL;
                str[n++] = buf[i];
        }
        str[n] = '\0';
        return blkid_wire_parse_id128(str, id);
}

/* ID_PART_GPT_AUTO_ROOT_UUID: the disk's root partition (.GPT_ROOT) if one of
 * its ESP/XBOOTLDR partitions (.GPT_BOOT) is the one we booted from. */
static int import_gpt_root(struct udev_event *ev, const struct blkid_call *c, bool test)
{
        const char *root = directive(c, ".GPT_ROOT");
        uint8_t booted[16];
        bool have_booted = false;

        if (!root)
                return 0;
        for (size_t i = 0; i < c->n_rec; i++) {
                uint8_t id[16];

                if (!streq(c->rec[i].key, ".GPT_BOOT") ||
                    blkid_wire_parse_id128(c->rec[i].value, id) < 0)
                        continue;
                if (!have_booted) {
                        if (loader_part_uuid(ev, booted) < 0)
                                return 0;
                        have_booted = true;
                }
                if (memcmp(id, booted, 16) == 0)
                        return builtin_add_property(ev, test, "ID_PART_GPT_AUTO_ROOT_UUID",
                                                    root);
        }
        return 0;
}

static int import_properties(struct udev_event *ev, const struct blkid_call *c, bool test)
{
        const char *p = proplist_get(&ev->props, "ID_PART_GPT_AUTO_ROOT_UUID");
        _cleanup_free_ char *root = p ? strdup(p) : NULL;
        bool is_gpt = false;
        int r;

        if (p && !root)
                return -ENOMEM;
        for (size_t i = 0; i < c->n_rec; i++) {
                const char *key = c->rec[i].key, *value = c->rec[i].value;

                if (key[0] == '.')
                        continue;
                r = builtin_add_property(ev, test, key, value);
                if (r < 0)
                        return r;
                if (streq(key, "ID_PART_TABLE_TYPE") && streq(value, "gpt"))
                        is_gpt = true;
                /* a partition that is the root partition its disk announced */
                if (root && streq(key, "ID_PART_ENTRY_UUID") && streq(value, root)) {
                        r = builtin_add_property(ev, test, "ID_PART_GPT_AUTO_ROOT", "1");
                        if (r < 0)
                                return r;
                }
        }
        if (is_gpt)
                (void)import_gpt_root(ev, c, test);
        return 0;
}

int builtin_blkid(struct udev_event *ev, int argc, char *argv[], bool test)
{
        _cleanup_free_ struct blkid_call *c = NULL;
        struct blkid_opts o = { 0 };
        const char *devnode;
        int r;

        r = parse_options(argc, argv, &o);
        if (r < 0)
                return r;
        r = device_get_devnode(ev->dev, &devnode);
        if (r < 0)
                return log_debug_errno(r, "%s: Failed to get device name: %m",
                                       device_sysname(ev->dev));
        (void)pthread_once(&probe_once, probe_setup);
        c = malloc(sizeof(*c));
        if (!c)
                return -ENOMEM;
        r = build_request(ev, devnode, &o, c);
        if (r < 0)
                return log_debug_errno(r, "%s: Failed to prepare the blkid prober: %m", devnode);
        log_debug("Probe %s with %sraid and offset=%" PRIi64, devnode, o.noraid ? "no" : "",
                  o.offset);
        r = run_prober(ev, c, &o, devnode);
        if (r < 0)
                return r;
        return import_properties(ev, c, test);
}
