/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (exec_client_new/free: the owner; everything else: any thread) */
#pragma once
/* Running external programs (PROGRAM, IMPORT{program}, RUN{program}) from
 * worker threads, which never fork: the programs are started by the exec
 * helper process (exec-helper.h), and the calling worker reads their output.
 *
 *     struct exec_client *exec;          // one per daemon, created before threads
 *     exec_client_new(&(struct exec_client_config){ .timeout_signal = SIGTERM }, &exec);
 *
 *     // in a worker thread:
 *     char out[16384];
 *     struct exec_result res;
 *     struct exec_request req = {
 *             .argv = (char *[]){ "/lib/udev/foo", "--bar", NULL },
 *             .envp = device_env,               // exactly what the program sees
 *             .deadline_usec = event_start + event_timeout,
 *             .out = out, .out_size = sizeof(out),
 *     };
 *     r = exec_run(exec, &req, &res);
 *     if (r < 0)                 // no result: helper died (-ECONNRESET), bad request...
 *     else if (exec_result_ok(&res))   // exited with status 0; out holds stdout
 *
 * How a request travels, and how the reply finds its thread: exec_run() makes
 * a fresh SOCK_SEQPACKET socketpair for the request and sends one end to the
 * helper, together with the program's stdin (/dev/null), stdout and stderr
 * (pipe write ends or /dev/null), as SCM_RIGHTS on the single request socket
 * shared by all threads (one sendmsg() per request: datagrams never
 * interleave, so no lock is held while sending). The helper answers on that
 * per-request socket and closes it. So each worker waits only on descriptors
 * it owns, with poll(): no demultiplexer thread, no per-thread registration,
 * no state to clean up when threads exit; and if the helper dies, every
 * in-flight request's reply socket hangs up at once (the kernel closes the
 * helper's ends, including those still queued in the request socket), so every
 * waiting worker returns -ECONNRESET immediately.
 *
 * Deadlines: the helper sends the timeout signal at the deadline and SIGKILL a
 * grace period later, then reports. The worker's own wait ends at most
 * EXEC_CLIENT_SLACK_USEC after that, whatever the helper does, so no worker
 * ever hangs. Output beyond the caller's buffer is read and discarded (flagged
 * truncated) so the program never blocks on a full pipe; after
 * EXEC_DRAIN_MAX bytes the pipe is closed (the program gets EPIPE/SIGPIPE).
 *
 * Helper death: the client restarts the helper (posix_spawn of
 * /proc/self/exe --exec-helper=3) when the manager's loop sees
 * exec_client_get_fd() readable and calls exec_client_process() (a restart
 * held back after 5 within a second follows from the manager's 1 s timer),
 * or when a request finds the request socket dead; requests in flight fail with
 * -ECONNRESET ("exec helper died" is logged), later ones run normally. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define EXEC_TIMEOUT_DEFAULT_USEC (180 * UINT64_C(1000000))
#define EXEC_KILL_GRACE_DEFAULT_USEC (5 * UINT64_C(1000000))
#define EXEC_CLIENT_SLACK_USEC (2 * UINT64_C(1000000))
#define EXEC_DRAIN_MAX (4 * 1024 * 1024) /* bytes read per stream before closing it */
#define EXEC_HELPER_PATH_DEFAULT "/proc/self/exe"

struct exec_client;

struct exec_client_config {
        const char *helper_path;   /* binary handling --exec-helper=; NULL: /proc/self/exe */
        int timeout_signal;        /* default for requests; 0: SIGTERM */
        uint64_t timeout_usec;     /* default for requests; 0: EXEC_TIMEOUT_DEFAULT_USEC */
        uint64_t kill_grace_usec;  /* default for requests; 0: EXEC_KILL_GRACE_DEFAULT_USEC */
        uint64_t exec_delay_usec;  /* sleep before each request with .is_run (--exec-delay) */
        int helper_log_level;      /* the helper's log level; 0: LOG_INFO */
        unsigned program_limit;    /* runnable programs at once (exec-helper.h); 0: none */
};

struct exec_request {
        char *const *argv;        /* argv[0]: absolute path (no $PATH search); borrowed */
        char *const *envp;        /* the program's whole environment, "KEY=VALUE"; NULL: empty */
        uint64_t timeout_usec;    /* from the call; 0: the client's default */
        uint64_t deadline_usec;   /* absolute CLOCK_MONOTONIC, 0: none; the earlier one wins */
        int timeout_signal;       /* 0: the client's default */
        uint64_t kill_grace_usec; /* SIGKILL this long after the timeout signal; 0: default */
        bool is_run;              /* a RUN program: the --exec-delay sleep applies */
        char *out;                /* stdout buffer (borrowed), NUL-terminated on return; */
        size_t out_size;          /*   NULL: stdout is /dev/null */
        char *err;                /* stderr buffer, the same way; NULL: /dev/null */
        size_t err_size;
};

enum exec_outcome {
        EXEC_EXITED,       /* exit_status is valid */
        EXEC_SIGNALED,     /* signal is valid (not one the helper sent) */
        EXEC_TIMED_OUT,    /* the deadline passed and the timeout signal was sent; signal
                            * (or exit_status) says how it ended, killed whether SIGKILL
                            * was needed */
        EXEC_SPAWN_FAILED, /* spawn_errno is valid; the program never ran */
};

struct exec_result {
        enum exec_outcome outcome;
        pid_t pid;             /* 0 if it never ran */
        int exit_status;       /* -1 unless it exited */
        int signal;            /* 0 unless it was killed by a signal */
        bool killed;           /* EXEC_TIMED_OUT: SIGKILL was sent */
        int spawn_errno;       /* EXEC_SPAWN_FAILED: positive errno (ENOENT, EACCES, ...) */
        uint64_t usec;         /* run time as measured by the helper */
        uint64_t cpu_usec;     /* its CPU time, user + system (0 if it never ran) */
        size_t out_len;        /* bytes in req->out, excluding the NUL */
        bool out_truncated;    /* more was written than fitted (the rest was discarded) */
        size_t err_len;
        bool err_truncated;
};

/* Start the helper and return a client for it. Call before any thread exists
 * (the helper then starts from a single-threaded process); later restarts use
 * posix_spawn and are safe from any thread. cfg is copied (helper_path is
 * borrowed for the client's lifetime). 0 or -errno. */
int exec_client_new(const struct exec_client_config *cfg, struct exec_client **ret);
/* Close the request socket (the helper exits), reap the helper. No exec_run()
 * may be running. Accepts NULL. */
void exec_client_free(struct exec_client *c);

/* A descriptor (owned by the client, stable for its lifetime) that becomes
 * readable when the helper process has exited; the caller's event loop then
 * calls exec_client_process(). */
int exec_client_get_fd(struct exec_client *c);
/* If the helper has exited: reap it, log it, start a new one; if there is
 * none (a restart held back because it kept dying, at most 5 a second),
 * start one once that is allowed again. The manager calls this when the fd
 * above is readable and from its 1 s timer. Returns 1 if a new helper was
 * started, 0 if nothing was to be done, -errno if the restart failed (the
 * next exec_run() tries again). */
int exec_client_process(struct exec_client *c);
/* pid of the running helper, 0 if none (tests, logging). */
pid_t exec_client_helper_pid(struct exec_client *c);
/* Helpers started so far, the first one included. */
unsigned exec_client_helper_starts(struct exec_client *c);

/* Run one program and wait for it; blocks the calling thread (at most until
 * the deadline + grace + EXEC_CLIENT_SLACK_USEC, plus the --exec-delay sleep).
 * Returns 0 when *ret says how the program ended (including
 * EXEC_SPAWN_FAILED), or -errno when there is no outcome: -EINVAL (argv[0]
 * not absolute, an environment entry without '=', bad signal), -E2BIG (over
 * the exec-msg.h limits), -ECONNRESET (the helper died; logged), -ETIMEDOUT
 * (the helper did not answer in time; logged), -ENOMEM, -EMFILE... Output read
 * so far is in req->out / req->err in every case, and ret's output fields are
 * set. Thread-safe. */
int exec_run(struct exec_client *c, const struct exec_request *req, struct exec_result *ret);

/* Exited with status 0. */
bool exec_result_ok(const struct exec_result *r);
/* "exited with status 1", "killed by signal SIGSEGV", "timed out (SIGTERM)",
 * "timed out (SIGKILL after SIGTERM)", "failed to start: ENOENT". Returns buf. */
const char *exec_result_to_string(const struct exec_result *r, char *buf, size_t size);
