/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: one; with --handoff two: the receiver (main) and the writer (queue: mutex) */
/*
 * bench-floor: the "floor" of tools/bench, the least work a udev daemon can do
 * per event. It receives kernel uevents on netlink group 1 and re-broadcasts
 * each one on group 2 in the libudev wire format (40-byte header with the
 * MurmurHash2 of SUBSYSTEM and DEVTYPE, no tags; properties
 * "UDEV_DATABASE_VERSION=1" followed by the kernel's KEY=VALUE list), batched
 * with recvmmsg()/sendmmsg(). No rules, no database, no queue ordering: a lower
 * bound for CPU time and latency per event, not a udev implementation.
 *
 * --handoff ("floor-handoff"): the mandatory work of tudev's design and no
 * more. The main thread receives (recvmmsg) and parses each event minimally
 * (KEY=VALUE; the database id from SUBSYSTEM, DEVPATH, MAJOR/MINOR, IFINDEX as
 * udev makes it: "b8:0", "c13:64", "n3", "+SUBSYSTEM:SYSNAME"), then hands it
 * to a writer thread through a mutex+condition-variable queue, one hand-off
 * per event. The writer stores the record /run/udev/data/<id> as tudev's
 * db_write() does (a temporary file in the same directory, then rename; "I:",
 * "E:KEY=VALUE" for every property, "V:1"), unlinks it on "remove", then
 * broadcasts the event alone (sendmsg), encoded as above.
 *
 *   bench-floor [--handoff]
 *
 * Prints "READY" on stdout once receiving. On SIGTERM or SIGINT it prints
 * "stats: received=N sent=N malformed=N enobufs=N" (--handoff: and
 * " db_errors=N") on stderr and exits 0. Exit status 1 on setup or socket
 * errors.
 */

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BATCH 32                        /* datagrams per recvmmsg()/sendmmsg() */
#define MSG_MAX 8192                    /* the kernel's uevents are at most 2 KiB + devpath */
#define RCVBUF (128 * 1024 * 1024)      /* as systemd-udevd's and tudev's */
#define UDEV_HDR_SIZE 40
#define UDEV_MAGIC 0xfeedcafeu
#define GROUP_KERNEL 1
#define GROUP_UDEV 2
#define DB_DIR "/run/udev/data"
#define ID_MAX 256                      /* "+SUBSYSTEM:SYSNAME" and its NUL */

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
        unsigned long long received, sent, malformed, enobufs, db_errors;
};

/* --handoff: one kernel event, from the receiver to the writer. */
struct event {
        struct event *next;
        bool gone;                      /* ACTION=remove: unlink the record */
        char id[ID_MAX];                /* database id */
        size_t len;
        char msg[];                     /* the kernel message, len bytes */
};

/* The receiver appends, the writer takes from the head. */
static struct {
        pthread_mutex_t lock;
        pthread_cond_t nonempty;
        struct event *head, **tail;
        bool done;                      /* no more events: the writer drains and exits */
} queue = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, &queue.head, false };

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

static struct mmsghdr in[BATCH];
static struct sockaddr_nl from[BATCH];

/*
 * Receive up to BATCH datagrams into in_bufs: their number, 0 if none,
 * -ENOBUFS (counted) after an overrun, -errno on other errors.
 */
static int recv_batch(int rfd, struct stats *st)
{
        static struct iovec in_iov[BATCH];
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
                if (errno == ENOBUFS)
                        st->enobufs++;
                return (errno == EAGAIN || errno == EINTR) ? 0 : -errno;
        }
        st->received += (unsigned)n;
        return n;
}

/* Whether datagram i of the batch is a whole message from the kernel. */
static bool from_kernel(int i)
{
        return !(in[i].msg_hdr.msg_flags & MSG_TRUNC) && from[i].nl_pid == 0;
}

static int relay_batch(int rfd, int sfd, struct stats *st)
{
        static struct mmsghdr out[BATCH];
        static struct iovec out_iov[BATCH][3];
        static struct sockaddr_nl to = { .nl_family = AF_NETLINK, .nl_groups = GROUP_UDEV };
        unsigned nout = 0;
        int n;

        n = recv_batch(rfd, st);
        if (n <= 0)
                return n == -ENOBUFS ? 1 : n;
        for (int i = 0; i < n; i++) {
                if (!from_kernel(i) ||
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

/* ---- --handoff ---- */

static bool key_is(const char *p, size_t klen, const char *key)
{
        return strlen(key) == klen && memcmp(p, key, klen) == 0;
}

/*
 * Parse a kernel message minimally: split its KEY=VALUE list, find the keys
 * the database id and the action need, make the id as udev does. False if
 * the message is malformed or the device has no id.
 */
static bool parse(const char *msg, size_t len, bool *gone, char id[ID_MAX])
{
        const char *seqnum = NULL, *devpath = NULL, *subsystem = NULL, *action = NULL;
        const char *major = NULL, *minor = NULL, *ifindex = NULL, *sysname;
        size_t hl = strnlen(msg, len);
        const char *p, *end = msg + len;
        int n;

        if (hl == 0 || hl >= len || !memchr(msg, '@', hl) || msg[len - 1] != '\0')
                return false;
        for (p = msg + hl + 1; p < end; p += strlen(p) + 1) {
                const char *eq = strchr(p, '=');
                size_t k;

                if (!eq || eq == p)
                        return false;
                k = (size_t)(eq - p);
                if (key_is(p, k, "SEQNUM"))
                        seqnum = eq + 1;
                else if (key_is(p, k, "DEVPATH"))
                        devpath = eq + 1;
                else if (key_is(p, k, "SUBSYSTEM"))
                        subsystem = eq + 1;
                else if (key_is(p, k, "ACTION"))
                        action = eq + 1;
                else if (key_is(p, k, "MAJOR"))
                        major = eq + 1;
                else if (key_is(p, k, "MINOR"))
                        minor = eq + 1;
                else if (key_is(p, k, "IFINDEX"))
                        ifindex = eq + 1;
        }
        if (!seqnum || !devpath || !subsystem || !*subsystem || !action)
                return false;
        *gone = strcmp(action, "remove") == 0;
        if (major && minor && strtoul(major, NULL, 10) > 0)
                n = snprintf(id, ID_MAX, "%c%lu:%lu", strcmp(subsystem, "block") == 0 ? 'b' : 'c',
                             strtoul(major, NULL, 10), strtoul(minor, NULL, 10));
        else if (ifindex && atoi(ifindex) > 0)
                n = snprintf(id, ID_MAX, "n%d", atoi(ifindex));
        else {
                sysname = strrchr(devpath, '/');
                sysname = sysname ? sysname + 1 : devpath;
                if (!*sysname || strchr(subsystem, '/'))
                        return false;
                n = snprintf(id, ID_MAX, "+%s:%s", subsystem, sysname);
        }
        return n > 0 && n < ID_MAX;
}

static int handoff_batch(int rfd, struct stats *st)
{
        int n;

        n = recv_batch(rfd, st);
        if (n <= 0)
                return n == -ENOBUFS ? 1 : n;
        for (int i = 0; i < n; i++) {
                size_t len = in[i].msg_len;
                struct event *ev;
                bool gone;
                char id[ID_MAX];

                if (!from_kernel(i) || !parse(in_bufs[i], len, &gone, id)) {
                        st->malformed++;
                        continue;
                }
                ev = malloc(sizeof(*ev) + len);
                if (!ev)
                        return -ENOMEM;
                *ev = (struct event){ .gone = gone, .len = len };
                memcpy(ev->id, id, sizeof(id));
                memcpy(ev->msg, in_bufs[i], len);

                pthread_mutex_lock(&queue.lock);
                *queue.tail = ev;
                queue.tail = &ev->next;
                pthread_cond_signal(&queue.nonempty);
                pthread_mutex_unlock(&queue.lock);
        }
        return n == BATCH;
}

/* The names of temporary files, as tudev's: xorshift from one getrandom(). */
static uint64_t random_u64(void)
{
        static uint64_t x;

        if (x == 0 && (getrandom(&x, sizeof(x), GRND_NONBLOCK) != sizeof(x) || x == 0))
                x = 0x9e3779b97f4a7c15ULL ^ (uint64_t)getpid();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        return x * 0x2545f4914f6cdd1dULL;
}

/* Write or remove the database record of ev as tudev's db_write() does. */
static int store(const struct event *ev)
{
        static char rec[2 * MSG_MAX + 64];
        char path[sizeof(DB_DIR) + ID_MAX], tmp[sizeof(path) + 24];
        const char *p, *end = ev->msg + ev->len;
        struct timespec ts;
        size_t o;
        int fd, r = 0;

        snprintf(path, sizeof(path), DB_DIR "/%s", ev->id);
        if (ev->gone)
                return unlink(path) < 0 && errno != ENOENT ? -errno : 0;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        o = (size_t)snprintf(rec, sizeof(rec), "I:%llu\n",
                             (unsigned long long)ts.tv_sec * 1000000ULL +
                             (unsigned long long)ts.tv_nsec / 1000);
        for (p = ev->msg + strlen(ev->msg) + 1; p < end; p += strlen(p) + 1)
                o += (size_t)snprintf(rec + o, sizeof(rec) - o, "E:%s\n", p);
        o += (size_t)snprintf(rec + o, sizeof(rec) - o, "V:1\n");

        snprintf(tmp, sizeof(tmp), DB_DIR "/.#%s%016llx", ev->id,
                 (unsigned long long)random_u64());
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW, 0644);
        if (fd < 0)
                return -errno;
        if (write(fd, rec, o) != (ssize_t)o)
                r = -EIO;
        if (close(fd) < 0 && r == 0)
                r = -errno;
        if (r == 0 && rename(tmp, path) < 0)
                r = -errno;
        if (r < 0)
                (void)unlink(tmp);
        return r;
}

struct writer {
        int sfd;
        struct stats *st;
        int error;                      /* a socket error ended the writer */
};

/* Take one event at a time: store its record, broadcast it. */
static void *writer_main(void *arg)
{
        static struct sockaddr_nl to = { .nl_family = AF_NETLINK, .nl_groups = GROUP_UDEV };
        struct writer *w = arg;

        for (;;) {
                struct udev_hdr h;
                struct iovec iov[3];
                struct mmsghdr out;
                struct event *ev;

                pthread_mutex_lock(&queue.lock);
                while (!queue.head && !queue.done)
                        pthread_cond_wait(&queue.nonempty, &queue.lock);
                ev = queue.head;
                if (ev) {
                        queue.head = ev->next;
                        if (!queue.head)
                                queue.tail = &queue.head;
                }
                pthread_mutex_unlock(&queue.lock);
                if (!ev)
                        return NULL;

                if (store(ev) < 0)
                        w->st->db_errors++;
                if (translate(ev->msg, ev->len, &h, iov)) {
                        out = (struct mmsghdr){ .msg_hdr = {
                                .msg_name = &to, .msg_namelen = sizeof(to),
                                .msg_iov = iov, .msg_iovlen = 3,
                        } };
                        w->error = send_batch(w->sfd, &out, 1, w->st);
                }
                free(ev);
                if (w->error < 0)
                        return NULL;
        }
}

int main(int argc, char **argv)
{
        struct sigaction sa = { .sa_handler = on_signal };
        struct stats st = {}, wst = {};
        struct writer w = { .st = &wst };
        pthread_t writer;
        bool handoff = argc == 2 && strcmp(argv[1], "--handoff") == 0;
        int rfd, sfd;

        if (argc > 1 && !handoff) {
                fprintf(stderr, "usage: %s [--handoff]\n", argv[0]);
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
        if (handoff) {
                sigset_t block, old;
                int r;

                umask(022);             /* as udevd's: the records get 0644 as created */
                (void)mkdir("/run/udev", 0755);
                if (mkdir(DB_DIR, 0755) < 0 && errno != EEXIST) {
                        fprintf(stderr, "bench-floor: %s: %m\n", DB_DIR);
                        return 1;
                }
                /* the signals wake the receiver's poll(), not the writer */
                sigemptyset(&block);
                sigaddset(&block, SIGTERM);
                sigaddset(&block, SIGINT);
                pthread_sigmask(SIG_BLOCK, &block, &old);
                w.sfd = sfd;
                r = pthread_create(&writer, NULL, writer_main, &w);
                pthread_sigmask(SIG_SETMASK, &old, NULL);
                if (r != 0) {
                        errno = r;
                        fprintf(stderr, "bench-floor: thread: %m\n");
                        return 1;
                }
        }
        printf("READY\n");
        fflush(stdout);

        while (!stop_requested) {
                struct pollfd p = { .fd = rfd, .events = POLLIN };
                int r;

                if (poll(&p, 1, 500) <= 0)
                        continue;
                do
                        r = handoff ? handoff_batch(rfd, &st) : relay_batch(rfd, sfd, &st);
                while (r > 0 && !stop_requested);
                if (r < 0) {
                        errno = -r;
                        fprintf(stderr, "bench-floor: %m\n");
                        return 1;
                }
        }
        if (handoff) {
                pthread_mutex_lock(&queue.lock);
                queue.done = true;
                pthread_cond_signal(&queue.nonempty);
                pthread_mutex_unlock(&queue.lock);
                pthread_join(writer, NULL);
                if (w.error < 0) {
                        errno = -w.error;
                        fprintf(stderr, "bench-floor: %m\n");
                        return 1;
                }
                fprintf(stderr, "stats: received=%llu sent=%llu malformed=%llu enobufs=%llu "
                        "db_errors=%llu\n", st.received, wst.sent, st.malformed, st.enobufs,
                        wst.db_errors);
                return 0;
        }
        fprintf(stderr, "stats: received=%llu sent=%llu malformed=%llu enobufs=%llu\n",
                st.received, st.sent, st.malformed, st.enobufs);
        return 0;
}
