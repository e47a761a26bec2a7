/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: single-threaded benchmark client */
/*
 * bench-listen: the measuring listener of tools/bench. It subscribes to both
 * uevent netlink groups of its network namespace (1: the kernel's, 2: udev's)
 * and writes one line per event of the benchmark's own devices, stamped with
 * CLOCK_MONOTONIC at reception:
 *
 *   bench-listen --out FILE --net-prefix PREFIX --loop-base B --loop-count N [--rt PRIO]
 *
 *   K|U SEQNUM T_NS ACTION SUBSYSTEM DEVPATH
 *
 * Kept: devpaths under /devices/virtual/net/PREFIX (veths and their queues, only
 * visible in this network namespace anyway) and the loop devices B .. B+N-1
 * (/devices/virtual/block/loopI, /devices/virtual/bdi/7:I), because block events
 * reach every namespace and other activity on the machine must not be counted.
 * Kernel messages are accepted only from the kernel (sender port 0).
 *
 * Prints "READY" on stdout once both sockets are bound. On SIGTERM or SIGINT it
 * appends "X K_ENOBUFS U_ENOBUFS K_KEPT U_KEPT K_OTHER U_OTHER" and exits 0.
 * With --rt it runs at SCHED_FIFO priority PRIO so that its reception stamps
 * are taken as soon as the messages arrive (the kernel gives netlink datagrams
 * no timestamp of their own). Exit status 1 on setup errors, 2 on usage errors.
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/netlink.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BATCH 64                        /* datagrams per recvmmsg() */
#define MSG_MAX (16 * 1024)             /* larger datagrams are counted, not parsed */
#define RCVBUF (256 * 1024 * 1024)
#define BATCHES_PER_TURN 4              /* then give the other socket its turn */
#define PREFIX_MAX 64
#define UDEV_HDR_SIZE 40

struct sock_state {
        int fd;
        char kind;                      /* 'K' or 'U' */
        unsigned long long enobufs;
        unsigned long long kept;
        unsigned long long other;
};

struct filter {
        char net_prefix[PREFIX_MAX + 32];
        size_t net_prefix_len;
        unsigned long loop_base;
        unsigned long loop_count;
};

static volatile sig_atomic_t stop_requested;

static char bufs[BATCH][MSG_MAX];

static void on_signal(int sig)
{
        (void)sig;
        stop_requested = 1;
}

static uint64_t now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int open_group(unsigned group)
{
        struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = group };
        int size = RCVBUF;
        int fd;

        fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_KOBJECT_UEVENT);
        if (fd < 0)
                return -errno;
        if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
                (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
        if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
                int r = -errno;

                close(fd);
                return r;
        }
        return fd;
}

/* Value of KEY in a NUL-separated KEY=VALUE buffer, or NULL. Borrowed pointer. */
static const char *prop(const char *buf, size_t len, const char *key)
{
        size_t klen = strlen(key);
        const char *p = buf, *end = buf + len;

        while (p < end) {
                size_t l = strnlen(p, (size_t)(end - p));

                if (l > klen && p[klen] == '=' && memcmp(p, key, klen) == 0)
                        return p + klen + 1;
                p += l + 1;
        }
        return NULL;
}

/* Is the decimal number at s (up to end of string) within the loop range? */
static bool loop_index_ok(const struct filter *f, const char *s)
{
        char *end;
        unsigned long v;

        if (*s < '0' || *s > '9')
                return false;
        errno = 0;
        v = strtoul(s, &end, 10);
        if (errno || *end != '\0')
                return false;
        return v >= f->loop_base && v - f->loop_base < f->loop_count;
}

static bool wanted(const struct filter *f, const char *devpath)
{
        static const char block[] = "/devices/virtual/block/loop";
        static const char bdi[] = "/devices/virtual/bdi/7:";

        if (strncmp(devpath, f->net_prefix, f->net_prefix_len) == 0)
                return true;
        if (strncmp(devpath, block, sizeof(block) - 1) == 0)
                return loop_index_ok(f, devpath + sizeof(block) - 1);
        if (strncmp(devpath, bdi, sizeof(bdi) - 1) == 0)
                return loop_index_ok(f, devpath + sizeof(bdi) - 1);
        return false;
}

/* Property buffer of one datagram (kernel or libudev format); false if malformed. */
static bool props_of(char kind, char *msg, size_t len, const char **props, size_t *plen)
{
        if (kind == 'U') {
                uint32_t off, plen32;

                if (len < UDEV_HDR_SIZE || memcmp(msg, "libudev", 8) != 0)
                        return false;
                memcpy(&off, msg + 16, sizeof(off));
                memcpy(&plen32, msg + 20, sizeof(plen32));
                if (off < UDEV_HDR_SIZE || off > len || plen32 > len - off)
                        return false;
                *props = msg + off;
                *plen = plen32;
                return true;
        }
        {
                size_t hl = strnlen(msg, len);

                if (hl >= len || !memchr(msg, '@', hl))
                        return false;
                *props = msg + hl + 1;
                *plen = len - hl - 1;
                return true;
        }
}

static void handle(struct sock_state *s, const struct filter *f, FILE *out,
                   char *msg, size_t len, uint64_t t)
{
        const char *props, *action, *devpath, *subsystem, *seqnum;
        size_t plen;

        if (!props_of(s->kind, msg, len, &props, &plen)) {
                s->other++;
                return;
        }
        action = prop(props, plen, "ACTION");
        devpath = prop(props, plen, "DEVPATH");
        subsystem = prop(props, plen, "SUBSYSTEM");
        seqnum = prop(props, plen, "SEQNUM");
        if (!action || !devpath || !subsystem || !seqnum || !wanted(f, devpath)) {
                s->other++;
                return;
        }
        s->kept++;
        fprintf(out, "%c %s %" PRIu64 " %s %s %s\n", s->kind, seqnum, t, action, subsystem,
                devpath);
}

/* Read up to BATCHES_PER_TURN batches; returns <0 on a fatal socket error. */
static int drain(struct sock_state *s, const struct filter *f, FILE *out)
{
        static struct mmsghdr msgs[BATCH];
        static struct iovec iov[BATCH];
        static struct sockaddr_nl addrs[BATCH];

        for (int turn = 0; turn < BATCHES_PER_TURN; turn++) {
                uint64_t t;
                int n;

                for (int i = 0; i < BATCH; i++) {
                        iov[i].iov_base = bufs[i];
                        iov[i].iov_len = MSG_MAX - 1;
                        msgs[i].msg_hdr = (struct msghdr){
                                .msg_name = &addrs[i], .msg_namelen = sizeof(addrs[i]),
                                .msg_iov = &iov[i], .msg_iovlen = 1,
                        };
                }
                n = recvmmsg(s->fd, msgs, BATCH, MSG_DONTWAIT, NULL);
                t = now_ns();
                if (n < 0) {
                        if (errno == EAGAIN || errno == EINTR)
                                return 0;
                        if (errno == ENOBUFS) {
                                s->enobufs++;
                                continue;
                        }
                        return -errno;
                }
                for (int i = 0; i < n; i++) {
                        size_t len = msgs[i].msg_len;

                        if ((msgs[i].msg_hdr.msg_flags & MSG_TRUNC) || len >= MSG_MAX ||
                            (s->kind == 'K' && addrs[i].nl_pid != 0)) {
                                s->other++;
                                continue;
                        }
                        bufs[i][len] = '\0';
                        handle(s, f, out, bufs[i], len, t);
                }
                if (n < BATCH)
                        return 0;
        }
        return 0;
}

static int parse_args(int argc, char **argv, struct filter *f, const char **out, int *rt)
{
        static const struct option opts[] = {
                { "out", required_argument, NULL, 'o' },
                { "net-prefix", required_argument, NULL, 'n' },
                { "loop-base", required_argument, NULL, 'b' },
                { "loop-count", required_argument, NULL, 'c' },
                { "rt", required_argument, NULL, 'r' },
                {}
        };
        const char *prefix = NULL;
        int c;

        while ((c = getopt_long(argc, argv, "", opts, NULL)) >= 0) {
                switch (c) {
                case 'o':
                        *out = optarg;
                        break;
                case 'n':
                        prefix = optarg;
                        break;
                case 'b':
                        f->loop_base = strtoul(optarg, NULL, 10);
                        break;
                case 'c':
                        f->loop_count = strtoul(optarg, NULL, 10);
                        break;
                case 'r':
                        *rt = atoi(optarg);
                        break;
                default:
                        return -EINVAL;
                }
        }
        if (!*out || !prefix || strlen(prefix) > PREFIX_MAX || optind != argc)
                return -EINVAL;
        snprintf(f->net_prefix, sizeof(f->net_prefix), "/devices/virtual/net/%s", prefix);
        f->net_prefix_len = strlen(f->net_prefix);
        return 0;
}

int main(int argc, char **argv)
{
        struct filter f = {};
        struct sock_state socks[2] = { { .kind = 'K' }, { .kind = 'U' } };
        struct pollfd pfd[2];
        const char *out_path = NULL;
        struct sigaction sa = { .sa_handler = on_signal };
        FILE *out;
        int rt = 0;

        if (parse_args(argc, argv, &f, &out_path, &rt) < 0) {
                fprintf(stderr, "usage: bench-listen --out FILE --net-prefix PREFIX "
                        "--loop-base B --loop-count N [--rt PRIO]\n");
                return 2;
        }
        out = fopen(out_path, "we");
        if (!out) {
                fprintf(stderr, "bench-listen: cannot open %s: %m\n", out_path);
                return 1;
        }
        setvbuf(out, NULL, _IOFBF, 1 << 20);
        for (int i = 0; i < 2; i++) {
                socks[i].fd = open_group(i + 1);
                if (socks[i].fd < 0) {
                        errno = -socks[i].fd;
                        fprintf(stderr, "bench-listen: netlink group %d: %m\n", i + 1);
                        return 1;
                }
                pfd[i] = (struct pollfd){ .fd = socks[i].fd, .events = POLLIN };
        }
        if (rt > 0) {
                struct sched_param sp = { .sched_priority = rt };

                if (sched_setscheduler(0, SCHED_FIFO, &sp) < 0)
                        fprintf(stderr, "bench-listen: SCHED_FIFO not available: %m\n");
        }
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGINT, &sa, NULL);
        /* never outlive the benchmark that started us */
        (void)prctl(PR_SET_PDEATHSIG, SIGTERM);
        printf("READY\n");
        fflush(stdout);

        while (!stop_requested) {
                int n = poll(pfd, 2, 200);

                if (n < 0 && errno != EINTR) {
                        fprintf(stderr, "bench-listen: poll: %m\n");
                        return 1;
                }
                for (int i = 0; i < 2 && n > 0; i++) {
                        if (!pfd[i].revents)
                                continue;
                        if (drain(&socks[i], &f, out) < 0) {
                                fprintf(stderr, "bench-listen: recvmmsg: %m\n");
                                return 1;
                        }
                }
                fflush(out);
        }
        /* what arrived before the stop request */
        for (int i = 0; i < 2; i++)
                (void)drain(&socks[i], &f, out);
        fprintf(out, "X %llu %llu %llu %llu %llu %llu\n", socks[0].enobufs, socks[1].enobufs,
                socks[0].kept, socks[1].kept, socks[0].other, socks[1].other);
        if (fclose(out) != 0) {
                fprintf(stderr, "bench-listen: write %s: %m\n", out_path);
                return 1;
        }
        return 0;
}
