/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any */
#pragma once
/* Wire format between exec clients (worker threads) and the exec helper
 * process, and the socket helpers both sides use.
 *
 * Transport: one AF_UNIX SOCK_SEQPACKET socketpair, created by udevd when it
 * starts the helper (the helper's end is its fd 3). Both ends are the same
 * binary, so integers are in host byte order and there is no version field.
 *
 * Request (client -> helper), one datagram:
 *
 *     struct exec_msg_request              fixed 48-byte header
 *     argv[0] NUL argv[1] NUL ... env[0] NUL env[1] NUL ...
 *
 *   with SCM_RIGHTS carrying exactly EXEC_MSG_FDS (4) descriptors, in order:
 *     [0] reply channel: a SOCK_SEQPACKET socket created for this request only;
 *         the helper sends exactly one struct exec_msg_reply on it and closes it
 *     [1] the program's stdin  (normally /dev/null)
 *     [2] the program's stdout (a pipe's write end, or /dev/null)
 *     [3] the program's stderr (a pipe's write end, or /dev/null)
 *
 *   The header's `size` is the datagram's length; the string area holds exactly
 *   argc + envc NUL-terminated strings and nothing else. argv[0] is the
 *   absolute path that is executed (there is no $PATH search); every
 *   environment entry has the form KEY=VALUE with a non-empty KEY (VALUE may
 *   contain anything but NUL, including '=' and newlines).
 *
 * Reply (helper -> client) on the request's reply channel: one struct
 * exec_msg_reply (48 bytes), no descriptors.
 *
 * A request with the right number of descriptors but an invalid body is
 * answered with error = EBADMSG. Anything else that is malformed (wrong
 * descriptor count, MSG_CTRUNC, MSG_TRUNC) is dropped: every descriptor that
 * came with it is closed, so a waiting client sees its reply channel hang up. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define EXEC_MSG_REQUEST_MAGIC UINT32_C(0x71786574) /* "texq" */
#define EXEC_MSG_REPLY_MAGIC UINT32_C(0x72786574)   /* "texr" */

#define EXEC_MSG_FDS 4
enum {
        EXEC_FD_REPLY = 0,
        EXEC_FD_STDIN = 1,
        EXEC_FD_STDOUT = 2,
        EXEC_FD_STDERR = 3,
};

/* Limits of one request. The command line of a rule is at most 16 KiB and the
 * environment is the device's properties, so these are generous. */
#define EXEC_ARGC_MAX 4096
#define EXEC_ENVC_MAX 4096
#define EXEC_STRINGS_MAX (128 * 1024)
#define EXEC_KILL_GRACE_MAX_USEC (3600 * UINT64_C(1000000))

struct exec_msg_request {
        uint32_t magic;           /* EXEC_MSG_REQUEST_MAGIC */
        uint32_t size;            /* whole datagram, header included */
        uint64_t id;              /* echoed in the reply */
        uint64_t deadline_usec;   /* CLOCK_MONOTONIC: send timeout_signal then */
        uint64_t kill_grace_usec; /* then SIGKILL this much later (0: at once) */
        int32_t timeout_signal;   /* 1 .. NSIG-1 */
        uint32_t argc;            /* 1 .. EXEC_ARGC_MAX */
        uint32_t envc;            /* 0 .. EXEC_ENVC_MAX */
        uint32_t flags;           /* EXEC_REQ_*; other bits must be 0 */
};

/* exec_msg_request.flags: bits 0-3 are the sender's log level + 1, which the
 * helper adopts (0: keep its own), so that `udevadm control --log-level`
 * and OPTIONS+="log_level=" reach it. */
#define EXEC_REQ_LOG_LEVEL_MASK UINT32_C(0xf)

#define EXEC_MSG_MAX (sizeof(struct exec_msg_request) + EXEC_STRINGS_MAX)

/* exec_msg_reply.flags */
#define EXEC_REPLY_TIMED_OUT UINT32_C(0x1) /* the deadline passed; timeout_signal was sent */
#define EXEC_REPLY_KILLED UINT32_C(0x2)    /* SIGKILL was sent */

struct exec_msg_reply {
        uint32_t magic;  /* EXEC_MSG_REPLY_MAGIC */
        uint32_t flags;  /* EXEC_REPLY_* */
        uint64_t id;     /* the request's */
        int32_t pid;     /* 0 if the program was not started */
        int32_t code;    /* CLD_EXITED, CLD_KILLED or CLD_DUMPED; 0 if not started */
        int32_t status;  /* exit status (CLD_EXITED) or signal number */
        int32_t error;   /* positive errno if the program could not be started */
        uint64_t usec;   /* run time, spawn to reaping */
        uint64_t cpu_usec; /* CPU time (user + system) of the program and the
                            * children it waited for (rusage) */
};

/* A parsed request: the strings point into the datagram buffer. */
struct exec_msg_request_view {
        uint64_t id;
        uint64_t deadline_usec;
        uint64_t kill_grace_usec;
        int timeout_signal;
        bool set_log_level; /* false: the helper keeps its level */
        int log_level;      /* LOG_EMERG..LOG_DEBUG */
        size_t argc, envc;
        char **argv; /* NULL-terminated, in the caller's storage */
        char **envp; /* NULL-terminated, in the caller's storage */
};

/* Encode a request into a new buffer (*ret, freed by the caller). argv and
 * envp are NULL-terminated (envp may be NULL: empty environment). The other
 * fields of `view` (id, deadline, grace, signal, log level) are copied; argc/envc and the
 * arrays in `view` are ignored. Returns 0, -EINVAL (bad argv[0], environment
 * entry or signal) or -E2BIG (a limit above exceeded). */
int exec_msg_request_build(const struct exec_msg_request_view *view, char *const *argv,
                           char *const *envp, void **ret, size_t *ret_size);

/* Validate and parse a received request of `size` bytes in `buf` (borrowed;
 * the view points into it). argv_storage must hold EXEC_ARGC_MAX + 1 pointers,
 * env_storage EXEC_ENVC_MAX + 1. Returns 0 or -EBADMSG. */
int exec_msg_request_parse(char *buf, size_t size, char **argv_storage, char **env_storage,
                           struct exec_msg_request_view *ret);

/* Check a received reply: exact size, magic and id. 0 or -EBADMSG. */
int exec_msg_reply_check(const void *buf, size_t size, uint64_t id);

/* sendmsg() of one datagram with `n_fds` descriptors (borrowed) as SCM_RIGHTS.
 * flags are added to MSG_NOSIGNAL. Returns 0 or -errno (-EMSGSIZE if the
 * datagram was not sent whole). */
int exec_msg_send(int sock, const void *buf, size_t size, const int *fds, size_t n_fds,
                  int flags);

/* recvmsg() of one datagram into buf (MSG_DONTWAIT, MSG_CMSG_CLOEXEC). Up to
 * EXEC_MSG_FDS received descriptors are stored in fds[] (owned by the caller
 * afterwards) and counted in *ret_n_fds. A datagram that did not fit (MSG_TRUNC)
 * or came with more descriptors than fit (MSG_CTRUNC) is consumed, its
 * descriptors are closed, and -EBADMSG is returned. Otherwise returns the
 * datagram's length (0 may mean end of stream; see the caller). */
ssize_t exec_msg_recv(int sock, void *buf, size_t size, int fds[EXEC_MSG_FDS], size_t *ret_n_fds);

/* Close n descriptors of fds (fds may contain -1). */
void exec_close_fds(int *fds, size_t n);
