/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (single-threaded process) */
/* tudev-probe: parsers of untrusted on-disk data, run in their own process.
 *
 * The blkid builtin used to run libblkid inside a udevd worker thread, where a
 * crash on a crafted filesystem image would take the whole daemon down. It
 * now asks this program and imports what it answers (format: blkid-wire.h).
 * Two modes:
 *   - server (`tudev-probe --server --parent=PID`, what udevd uses): a
 *     process of the pool udevd's worker threads share (about one per CPU,
 *     builtins/blkid.c), started when a blkid call finds none free,
 *     serving requests on fd 3 (SOCK_SEQPACKET) until EOF. It dies with the
 *     thread that started it (PR_SET_PDEATHSIG) and refuses to start if its
 *     parent is not PID any more;
 *   - one-shot (`tudev-probe blkid ...`, udevadm test-builtin, and udevd
 *     after repeated server deaths): one probe, the lines on stdout.
 * A crash or a hang here fails one builtin call of one event; udevd keeps
 * serving. This binary links only libc and libblkid.
 *
 * Test-only fault triggers (for tests/integration/test_probe_isolation.py;
 * they only act when udevd itself was started with the variable, which the
 * builtin passes down): if TUDEV_PROBE_CRASH_ON is set to a non-empty string
 * and the device's bytes at the probing offset start with exactly that
 * string, the probe kills itself with SIGSEGV before probing; likewise
 * TUDEV_PROBE_HANG_ON makes it sleep until it is killed (at most 300 s, and
 * not past its parent). Nothing else reads them, and they are never set in
 * production. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "proto/blkid-wire.h"
#include "probe/probe.h"
#include "shared/compat.h"
#include "shared/macro.h"

#define FAULT_MAGIC_MAX 64
#define FAULT_HANG_MAX_SEC 300

static unsigned n_lines;
static FILE *probe_out; /* stdout, or a request's answer buffer (server mode) */

void probe_log(const char *fmt, ...)
{
        va_list ap;

        fputs("tudev-probe: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
}

static int emit_line(const char *key, const char *value)
{
        _cleanup_free_ char *buf = NULL;
        size_t len = strlen(value), size = 4 * len + 1;

        if (len > BLKID_WIRE_VALUE_MAX) {
                probe_log("value of %s too long (%zu bytes), skipped", key, len);
                return 0;
        }
        buf = malloc(size);
        if (!buf)
                return -ENOMEM;
        if (blkid_wire_escape(value, buf, size) < 0)
                return -ENOBUFS;
        if (fprintf(probe_out, "%s=%s\n", key, buf) < 0)
                return -EIO;
        n_lines++;
        return 0;
}

int probe_emit(const char *key, const char *value)
{
        if (!blkid_wire_key_valid(key, strlen(key))) {
                probe_log("invalid key %s, skipped", key);
                return 0;
        }
        /* keep room for the three lines of a failure report */
        if (n_lines + 3 >= BLKID_WIRE_LINES_MAX)
                return -E2BIG;
        return emit_line(key, value);
}

int probe_fail(int err, const char *stage, int hint)
{
        char num[16];

        if (err >= 0 || -err > BLKID_WIRE_ERRNO_MAX)
                err = -EIO;
        snprintf(num, sizeof(num), "%d", -err);
        (void)emit_line(".ERRNO", num);
        (void)emit_line(".STAGE", stage);
        if (hint >= 0) {
                snprintf(num, sizeof(num), "%d", hint);
                (void)emit_line(".HINT", num);
        }
        return BLKID_EXIT_FAILED;
}

/* ---------------------------------------------------------------- the device */

/* systemd's sd_device_open(): the node must be the device's (type and
 * number), then it is reopened for reading; with --diskseq the disk's
 * sequence number must match. Returns the fd or -errno. */
static int open_device(const struct probe_blkid_args *a)
{
        _cleanup_close_ int path_fd = -1, fd = -1;
        char proc[64];
        struct stat st;

        path_fd = open(a->devnode, O_CLOEXEC | O_NOFOLLOW | O_PATH);
        if (path_fd < 0)
                return -errno;
        if (fstat(path_fd, &st) < 0)
                return -errno;
        if (st.st_rdev != makedev(a->major, a->minor))
                return -ENXIO;
        if (a->block ? !S_ISBLK(st.st_mode) : !S_ISCHR(st.st_mode))
                return -ENXIO;
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", path_fd);
        fd = open(proc, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        if (fd < 0)
                return -errno;
        if (a->check_diskseq) {
                unsigned long long have = 0;

                if (a->diskseq == 0)
                        return -EINVAL;
                if (ioctl(fd, BLKGETDISKSEQ, &have) < 0)
                        return -errno;
                if (have != a->diskseq)
                        return -ENXIO;
        }
        return TAKE_FD(fd);
}

/* The test-only triggers described at the top of this file. */
static void fault_triggers(const struct probe_blkid_args *a, int fd)
{
        const char *crash = getenv("TUDEV_PROBE_CRASH_ON");
        const char *hang = getenv("TUDEV_PROBE_HANG_ON");
        char head[FAULT_MAGIC_MAX];
        ssize_t n;

        if ((!crash || !*crash) && (!hang || !*hang))
                return;
        n = pread(fd, head, sizeof(head), a->offset);
        if (n <= 0)
                return;
        if (crash && *crash && strlen(crash) <= (size_t)n &&
            memcmp(head, crash, strlen(crash)) == 0) {
                probe_log("%s: TUDEV_PROBE_CRASH_ON matched, crashing (test only)", a->devnode);
                fflush(stderr);
                signal(SIGSEGV, SIG_DFL); /* past any sanitizer's handler */
                raise(SIGSEGV);
                abort();
        }
        if (hang && *hang && strlen(hang) <= (size_t)n &&
            memcmp(head, hang, strlen(hang)) == 0) {
                probe_log("%s: TUDEV_PROBE_HANG_ON matched, hanging (test only)", a->devnode);
                fflush(stderr);
                /* never outlive the caller, and give up after a while */
                (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
                for (unsigned i = 0; i < FAULT_HANG_MAX_SEC && getppid() != 1; i++)
                        sleep(1);
                exit(BLKID_EXIT_FAILED);
        }
}

/* ---------------------------------------------------------------- command line */

static int parse_u64(const char *s, uint64_t *ret)
{
        char *end;
        unsigned long long v;

        if (!s || *s < '0' || *s > '9')
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno || *end)
                return -EINVAL;
        *ret = v;
        return 0;
}

static int parse_devnum(const char *s, unsigned *major_, unsigned *minor_)
{
        uint64_t ma, mi;
        char buf[32], *colon;

        if (strlen(s) >= sizeof(buf))
                return -EINVAL;
        strcpy(buf, s);
        colon = strchr(buf, ':');
        if (!colon)
                return -EINVAL;
        *colon = '\0';
        if (parse_u64(buf, &ma) < 0 || parse_u64(colon + 1, &mi) < 0 || ma > UINT32_MAX ||
            mi > UINT32_MAX)
                return -EINVAL;
        *major_ = (unsigned)ma;
        *minor_ = (unsigned)mi;
        return 0;
}

static void usage(FILE *f)
{
        fputs("Usage: tudev-probe blkid --devnum=MAJOR:MINOR --kind=block|char [--diskseq=N]\n"
              "                         [--offset=BYTES] [--noraid] [--hint=NAME=VALUE]...\n"
              "                         DEVNODE\n"
              "       tudev-probe --server --parent=PID\n\n"
              "Probe DEVNODE with libblkid for udevd's blkid builtin and print the\n"
              "properties as KEY=VALUE lines. With --server, serve such requests on fd 3\n"
              "(a SOCK_SEQPACKET socket) until EOF. Not meant to be run by hand.\n\n"
              "Test only: TUDEV_PROBE_CRASH_ON=MAGIC / TUDEV_PROBE_HANG_ON=MAGIC make it\n"
              "crash (SIGSEGV) / hang on a device whose first bytes are MAGIC.\n", f);
}

enum { ARG_DEVNUM = 0x100, ARG_KIND, ARG_DISKSEQ, ARG_OFFSET, ARG_NORAID, ARG_HINT };

/* 0, or -EINVAL after a message */
static int parse_option(int c, const char *arg, struct probe_blkid_args *a, bool *have_kind)
{
        uint64_t v;

        switch (c) {
        case ARG_DEVNUM:
                return parse_devnum(arg, &a->major, &a->minor);
        case ARG_KIND:
                if (!streq(arg, "block") && !streq(arg, "char"))
                        return -EINVAL;
                a->block = streq(arg, "block");
                *have_kind = true;
                return 0;
        case ARG_DISKSEQ:
                if (parse_u64(arg, &a->diskseq) < 0)
                        return -EINVAL;
                a->check_diskseq = true;
                return 0;
        case ARG_OFFSET:
                if (parse_u64(arg, &v) < 0 || v > INT64_MAX)
                        return -EINVAL;
                a->offset = (int64_t)v;
                return 0;
        case ARG_NORAID:
                a->noraid = true;
                return 0;
        case ARG_HINT:
                if (a->n_hints >= PROBE_HINTS_MAX)
                        return -E2BIG;
                a->hints[a->n_hints++] = arg;
                return 0;
        default:
                return -EINVAL;
        }
}

static int parse_blkid_argv(int argc, char *argv[], struct probe_blkid_args *a)
{
        static const struct option options[] = {
                { "devnum", required_argument, NULL, ARG_DEVNUM },
                { "kind", required_argument, NULL, ARG_KIND },
                { "diskseq", required_argument, NULL, ARG_DISKSEQ },
                { "offset", required_argument, NULL, ARG_OFFSET },
                { "noraid", no_argument, NULL, ARG_NORAID },
                { "hint", required_argument, NULL, ARG_HINT },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        bool have_devnum = false, have_kind = false;
        int c;

        optind = 0; /* full reinitialisation: the server parses many command lines */
        while ((c = getopt_long(argc, argv, "+h", options, NULL)) != -1) {
                if (c == 'h') {
                        usage(probe_out);
                        return 0;
                }
                if (c == ARG_DEVNUM)
                        have_devnum = true;
                if (c == '?' || parse_option(c, optarg, a, &have_kind) < 0) {
                        if (c != '?')
                                probe_log("invalid argument: --%s=%s",
                                          options[c - ARG_DEVNUM].name, optarg);
                        return -EINVAL;
                }
        }
        if (optind != argc - 1 || !have_devnum || !have_kind) {
                probe_log("expected --devnum, --kind and one device node");
                return -EINVAL;
        }
        a->devnode = argv[optind];
        return 1;
}

static int blkid_main(int argc, char *argv[])
{
        struct probe_blkid_args a = {};
        _cleanup_close_ int fd = -1;
        int r;

        n_lines = 0;
        r = parse_blkid_argv(argc, argv, &a);
        if (r <= 0)
                return r < 0 ? BLKID_EXIT_USAGE : BLKID_EXIT_OK;
        fd = open_device(&a);
        if (fd < 0) {
                /* the device went away or the node is not its: nothing to report */
                if (fd == -ENODEV || fd == -ENXIO || fd == -ENOENT) {
                        probe_log("cannot open %s (%s), ignoring", a.devnode,
                                  errno_name(-fd) ?: "?");
                        return BLKID_EXIT_OK;
                }
                probe_log("cannot open %s (%s)", a.devnode, errno_name(-fd) ?: "?");
                return probe_fail(fd, "open", -1);
        }
        fault_triggers(&a, fd);
        return probe_blkid(&a, fd);
}

/* ---------------------------------------------------------------- server mode */

#define SERVER_FD 3

/* Split a request (words each ending with NUL, the first "blkid") in place.
 * words[] has room for BLKID_WIRE_REQ_ARGS_MAX + 1. Returns the number of
 * words or -EINVAL. */
static int split_request(char *req, size_t len, char *words[])
{
        size_t pos = 0;
        int n = 0;

        if (len == 0 || req[len - 1] != '\0')
                return -EINVAL;
        while (pos < len) {
                if (n >= BLKID_WIRE_REQ_ARGS_MAX)
                        return -EINVAL;
                words[n++] = req + pos;
                pos += strlen(req + pos) + 1;
        }
        words[n] = NULL;
        return streq(words[0], "blkid") ? n : -EINVAL;
}

/* Probe for one request; the answer (status line + output) in reply.
 * Returns its length. */
static size_t serve(char *req, size_t len, char *reply, size_t size)
{
        static char out[BLKID_WIRE_OUT_MAX + 1];
        char *words[BLKID_WIRE_REQ_ARGS_MAX + 1];
        long olen = 0;
        int n, status, hl;
        FILE *f;

        f = fmemopen(out, sizeof(out), "w");
        if (!f) {
                probe_log("cannot buffer the answer: %s", errno_name(errno) ?: "?");
                return (size_t)snprintf(reply, size, "%d\n", BLKID_EXIT_FAILED);
        }
        setvbuf(f, NULL, _IONBF, 0); /* a write that does not fit fails right away */
        probe_out = f;
        n = split_request(req, len, words);
        if (n < 0) {
                probe_log("malformed request (%zu bytes)", len);
                status = BLKID_EXIT_USAGE;
        } else
                status = blkid_main(n, words);
        if (fflush(f) != 0 || ferror(f))
                status = BLKID_EXIT_TRUNCATED;
        else
                olen = ftell(f);
        fclose(f);
        probe_out = NULL;
        if (olen < 0 || (size_t)olen >= sizeof(out) - 1) {
                status = BLKID_EXIT_TRUNCATED;
                olen = 0;
        }
        hl = snprintf(reply, size, "%d\n", status);
        if (status == BLKID_EXIT_TRUNCATED || (size_t)hl + (size_t)olen > size)
                return (size_t)snprintf(reply, size, "%d\n", BLKID_EXIT_TRUNCATED);
        memcpy(reply + hl, out, (size_t)olen);
        return (size_t)hl + (size_t)olen;
}

/* Never outlive the thread that started us: SIGKILL when it exits, and
 * refuse to start if `want_parent` is already gone. 0 or -1. */
static int server_check_parent(const char *arg)
{
        uint64_t parent;

        if (!arg || strncmp(arg, "--parent=", 9) != 0 || parse_u64(arg + 9, &parent) < 0 ||
            parent == 0 || parent > INT32_MAX) {
                probe_log("--server needs --parent=PID");
                return -1;
        }
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0) {
                probe_log("PR_SET_PDEATHSIG: %s", errno_name(errno) ?: "?");
                return -1;
        }
        if (getppid() != (pid_t)parent) {
                probe_log("parent %" PRIu64 " is gone", parent);
                return -1;
        }
        return 0;
}

static int server_main(int argc, char *argv[])
{
        static char req[BLKID_WIRE_REQ_MAX], reply[BLKID_WIRE_REPLY_MAX];
        socklen_t sl = sizeof(int);
        int type = 0;

        if (argc != 3 || server_check_parent(argv[2]) < 0)
                return BLKID_EXIT_USAGE;
        if (getsockopt(SERVER_FD, SOL_SOCKET, SO_TYPE, &type, &sl) < 0 ||
            type != SOCK_SEQPACKET) {
                probe_log("fd %d is not a SOCK_SEQPACKET socket", SERVER_FD);
                return BLKID_EXIT_USAGE;
        }
        (void)fcntl(SERVER_FD, F_SETFD, FD_CLOEXEC);
        for (;;) {
                struct iovec iov = { .iov_base = req, .iov_len = sizeof(req) };
                struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
                ssize_t n = recvmsg(SERVER_FD, &mh, MSG_CMSG_CLOEXEC);
                size_t len;

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return errno == ECONNRESET ? BLKID_EXIT_OK : BLKID_EXIT_FAILED;
                if (n == 0)
                        return BLKID_EXIT_OK; /* udevd's worker closed its end */
                if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
                        probe_log("request too long, refused");
                        len = (size_t)snprintf(reply, sizeof(reply), "%d\n", BLKID_EXIT_USAGE);
                } else
                        len = serve(req, (size_t)n, reply, sizeof(reply));
                while (send(SERVER_FD, reply, len, MSG_NOSIGNAL) < 0) {
                        if (errno != EINTR)
                                return errno == EPIPE || errno == ECONNRESET ? BLKID_EXIT_OK
                                                                             : BLKID_EXIT_FAILED;
                }
        }
}

int main(int argc, char *argv[])
{
        static char outbuf[BLKID_WIRE_OUT_MAX];
        int r;

        if (argc >= 2 && streq(argv[1], "--server"))
                return server_main(argc, argv);
        /* one write at the end (the reader sees all or, after a crash, nothing) */
        setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
        probe_out = stdout;
        if (argc >= 2 && streq(argv[1], "blkid"))
                r = blkid_main(argc - 1, argv + 1);
        else if (argc >= 2 && (streq(argv[1], "--help") || streq(argv[1], "-h"))) {
                usage(stdout);
                r = 0;
        } else if (argc >= 2 && streq(argv[1], "--version")) {
                puts(VERSION);
                r = 0;
        } else {
                usage(stderr);
                r = BLKID_EXIT_USAGE;
        }
        if (fflush(stdout) != 0 || ferror(stdout))
                return BLKID_EXIT_FAILED;
        return r;
}
