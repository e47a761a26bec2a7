/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: single-threaded benchmark client */
/*
 * bench-floor: the "floor" of tools/bench, the least work a udev daemon can do
 * per event. It receives kernel uevents on netlink group 1 and re-broadcasts
 * each one on group 2 in the libudev wire format (40-byte header with the
 * MurmurHash2 of SUBSYSTEM and DEVTYPE, no tags; properties
 * "UDEV_DATABASE_VERSION=1" followed by the kernel's KEY=VALUE list), batched
 * with recvmmsg()/sendmmsg(). No rules, no database, no queue ordering: a lower
 * bound for CPU time and latency per event, not a udev implementation.
 *
 *   bench-floor
 *
 * Prints "READY" on stdout once receiving. On SIGTERM or SIGINT it prints
 * "stats: received=N sent=N malformed=N enobufs=N" on stderr and exits 0.
 * Exit status 1 on setup or socket errors.
 */

#include <endian.h>
#include <errno.h>
#include <linux/netlink.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#define BATCH 32                        /* datagrams per recvmmsg()/sendmmsg() */
#define MSG_MAX 8192                    /* the kernel's uevents are at most 2 KiB + devpath */
#define RCVBUF (128 * 1024 * 1024)      /* as systemd-udevd's and tudev's */
#define UDEV_HDR_SIZE 40
#define UDEV_MAGIC 0xfeedcafeu
#define GROUP_KERNEL 1
#define GROUP_UDEV 2

static const char db_version[] = "UDEV_DATABASE_VERSION=1";

struct udev_hdr {
        char prefix[8];
        uint32_t magic_be;
        uint32_t header_size;
        uint32_t properties_off;
        uint32_t properties_len;
        uint32_t subsystem_hash_be;
        uint32_t devtype_hash_be;
        uint32_t bloom_hi_be;
        uint32_t bloom_lo_be;
};

_Static_assert(sizeof(struct udev_hdr) == UDEV_HDR_SIZE, "libudev header is 40 bytes");

struct stats {
        unsigned long long received, sent, malformed, enobufs;
};

static volatile sig_atomic_t stop_requested;

static char in_bufs[BATCH][MSG_MAX];
static struct udev_hdr hdrs[BATCH];

static void on_signal(int sig)
{
        (void)sig;
        stop_requested = 1;
}

/* Austin Appleby's 32-bit MurmurHash2, seed 0, host-endian block reads. */
static uint32_t murmur2(const char *s, size_t len)
{
        const uint32_t m = 0x5bd1e995;
        const unsigned char *p = (const unsigned char *)s;
        uint32_t h = (uint32_t)len;

        while (len >= 4) {
                uint32_t k;

                memcpy(&k, p, 4);
                k *= m;
                k ^= k >> 24;
                k *= m;
                h *= m;
                h ^= k;
                p += 4;
                len -= 4;
        }
        switch (len) {
        case 3:
                h ^= (uint32_t)p[2] << 16;
                /* fall through */
        case 2:
                h ^= (uint32_t)p[1] << 8;
                /* fall through */
        case 1:
                h ^= p[0];
                h *= m;
        }
        h ^= h >> 13;
        h *= m;
        h ^= h >> 15;
        return h;
}

/* MurmurHash2 of the value of KEY in a NUL-separated KEY=VALUE buffer; 0 if absent. */
static uint32_t prop_hash(const char *buf, size_t len, const char *key, size_t klen)
{
        const char *p = buf, *end = buf + len;

        while (p < end) {
                size_t l = strnlen(p, (size_t)(end - p));

                if (l > klen && p[klen] == '=' && memcmp(p, key, klen) == 0)
                        return murmur2(p + klen + 1, l - klen - 1);
                p += l + 1;
        }
        return 0;
}

static int open_socket(unsigned group)
{
        struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = group };
        int fd;

        fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_KOBJECT_UEVENT);
        if (fd < 0)
                return -errno;
        if (group) {
                int size = RCVBUF;

                if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
                        (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
        }
        if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
                int r = -errno;

                close(fd);
                return r;
        }
        return fd;
}

/*
 * Fill the header and the three iovecs of one outgoing datagram from a kernel
 * message (borrowed: iov points into msg). False if the message is malformed.
 */
static bool translate(char *msg, size_t len, struct udev_hdr *h, struct iovec iov[3])
{
        size_t hl = strnlen(msg, len);
        const char *props;
        size_t plen;

        if (hl == 0 || hl >= len || !memchr(msg, '@', hl) || msg[len - 1] != '\0')
                return false;
        props = msg + hl + 1;
        plen = len - hl - 1;
        *h = (struct udev_hdr){
                .prefix = "libudev",
                .magic_be = htobe32(UDEV_MAGIC),
                .header_size = UDEV_HDR_SIZE,
                .properties_off = UDEV_HDR_SIZE,
                .properties_len = (uint32_t)(sizeof(db_version) + plen),
                .subsystem_hash_be = htobe32(prop_hash(props, plen, "SUBSYSTEM", 9)),
                .devtype_hash_be = htobe32(prop_hash(props, plen, "DEVTYPE", 7)),
        };
        iov[0] = (struct iovec){ .iov_base = h, .iov_len = sizeof(*h) };
        iov[1] = (struct iovec){ .iov_base = (void *)db_version, .iov_len = sizeof(db_version) };
        iov[2] = (struct iovec){ .iov_base = (void *)props, .iov_len = plen };
        return true;
}

static int send_batch(int fd, struct mmsghdr *out, unsigned n, struct stats *st)
{
        unsigned done = 0;

        while (done < n) {
                int r = sendmmsg(fd, out + done, n - done, 0);

                if (r < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == ECONNREFUSED || errno == ESRCH) {
                                done++;         /* nobody listens: normal */
                                continue;
                        }
                        if (errno == EAGAIN || errno == ENOBUFS) {
                                struct pollfd p = { .fd = fd, .events = POLLOUT };

                                (void)poll(&p, 1, 10);
                                continue;
                        }
                        return -errno;
                }
                done += (unsigned)r;
                st->sent += (unsigned)r;
        }
        return 0;
}

static int relay_batch(int rfd, int sfd, struct stats *st)
{
        static struct mmsghdr in[BATCH], out[BATCH];
        static struct iovec in_iov[BATCH], out_iov[BATCH][3];
        static struct sockaddr_nl from[BATCH];
        static struct sockaddr_nl to = { .nl_family = AF_NETLINK, .nl_groups = GROUP_UDEV };
        unsigned nout = 0;
        int n;

        for (int i = 0; i < BATCH; i++) {
                in_iov[i] = (struct iovec){ .iov_base = in_bufs[i], .iov_len = MSG_MAX };
                in[i].msg_hdr = (struct msghdr){
                        .msg_name = &from[i], .msg_namelen = sizeof(from[i]),
                        .msg_iov = &in_iov[i], .msg_iovlen = 1,
                };
        }
        n = recvmmsg(rfd, in, BATCH, MSG_DONTWAIT, NULL);
        if (n < 0) {
                if (errno == ENOBUFS) {
                        st->enobufs++;
                        return 1;
                }
                return (errno == EAGAIN || errno == EINTR) ? 0 : -errno;
        }
        st->received += (unsigned)n;
        for (int i = 0; i < n; i++) {
                if ((in[i].msg_hdr.msg_flags & MSG_TRUNC) || from[i].nl_pid != 0 ||
                    !translate(in_bufs[i], in[i].msg_len, &hdrs[nout], out_iov[nout])) {
                        st->malformed++;
                        continue;
                }
                out[nout].msg_hdr = (struct msghdr){
                        .msg_name = &to, .msg_namelen = sizeof(to),
                        .msg_iov = out_iov[nout], .msg_iovlen = 3,
                };
                nout++;
        }
        if (nout > 0) {
                int r = send_batch(sfd, out, nout, st);

                if (r < 0)
                        return r;
        }
        return n == BATCH;      /* 1: there may be more */
}

int main(int argc, char **argv)
{
        struct sigaction sa = { .sa_handler = on_signal };
        struct stats st = {};
        int rfd, sfd;

        if (argc > 1) {
                fprintf(stderr, "usage: %s\n", argv[0]);
                return 2;
        }
        rfd = open_socket(GROUP_KERNEL);
        sfd = open_socket(0);
        if (rfd < 0 || sfd < 0) {
                errno = -(rfd < 0 ? rfd : sfd);
                fprintf(stderr, "bench-floor: netlink socket: %m\n");
                return 1;
        }
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGINT, &sa, NULL);
        /* never outlive the benchmark that started us */
        (void)prctl(PR_SET_PDEATHSIG, SIGTERM);
        printf("READY\n");
        fflush(stdout);

        while (!stop_requested) {
                struct pollfd p = { .fd = rfd, .events = POLLIN };
                int r;

                if (poll(&p, 1, 500) <= 0)
                        continue;
                do
                        r = relay_batch(rfd, sfd, &st);
                while (r > 0 && !stop_requested);
                if (r < 0) {
                        errno = -r;
                        fprintf(stderr, "bench-floor: %m\n");
                        return 1;
                }
        }
        fprintf(stderr, "stats: received=%llu sent=%llu malformed=%llu enobufs=%llu\n",
                st.received, st.sent, st.malformed, st.enobufs);
        return 0;
}
