/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (one nlmon_event per thread; udevadm is single-threaded) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <linux/netlink.h>

#include "shared/log.h"
#include "shared/macro.h"
#include "shared/time-util.h"
#include "udevadm/netlink-monitor.h"
#include "udevadm/udevadm.h"

#define MOUNTINFO_LINE_MAX 4096

struct nlmon_event *nlmon_event_new(void)
{
        return calloc(1, sizeof(struct nlmon_event));
}

void nlmon_event_free(struct nlmon_event *ev)
{
        if (!ev)
                return;
        uevent_free(ev->kernel);
        free(ev);
}

/* Is the topmost mount on /dev a devtmpfs? (fields of /proc/self/mountinfo:
 * id parent maj:min root mountpoint options [optional...] - fstype ...) */
static bool dev_is_devtmpfs(void)
{
        _cleanup_(fclosep) FILE *f = fopen("/proc/self/mountinfo", "re");
        char line[MOUNTINFO_LINE_MAX];
        bool result = false;

        if (!f)
                return false;
        while (fgets(line, sizeof(line), f)) {
                char mnt[256], fstype[64];
                const char *sep;

                if (sscanf(line, "%*s %*s %*s %*s %255s", mnt) != 1 || !streq(mnt, "/dev"))
                        continue;
                sep = strstr(line, " - ");
                if (!sep || sscanf(sep + 3, "%63s", fstype) != 1)
                        continue;
                result = streq(fstype, "devtmpfs");
        }
        return result;
}

int nlmon_open(enum nlmon_group group, int *ret_fd)
{
        _cleanup_close_ int fd = -1;
        struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = group };
        int size = NLMON_RCVBUF_SIZE, one = 1;

        if (group == NLMON_GROUP_UDEV && access(CTRL_SOCKET_PATH, F_OK) < 0 &&
            !dev_is_devtmpfs()) {
                log_debug("The udev service seems not to be active, disabling the monitor.");
                sa.nl_groups = NLMON_GROUP_NONE;
        }

        fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_KOBJECT_UEVENT);
        if (fd < 0)
                return negative_errno();
        if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0 &&
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size)) < 0)
                log_debug_errno(errno, "Failed to increase receive buffer size, ignoring: %m");
        if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0)
                return negative_errno();
        if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
                return negative_errno();
        *ret_fd = TAKE_FD(fd);
        return 0;
}

const char *nlmon_event_get(const struct nlmon_event *ev, const char *key)
{
        for (size_t i = 0; i < ev->n_props; i++)
                if (streq(ev->props[i].key, key))
                        return ev->props[i].value;
        return NULL;
}

bool nlmon_event_has_tag(const struct nlmon_event *ev, const char *tag)
{
        size_t n = strlen(tag);

        if (!ev->tags || n == 0)
                return false;
        for (const char *p = ev->tags; (p = strstr(p, tag)); p++)
                if (p > ev->tags && p[-1] == ':' && p[n] == ':')
                        return true;
        return false;
}

/* ---------------------------------------------------------------- properties */

/* A set of words kept as "<sep>w1<sep>w2..." while collecting; duplicates
 * and empty words are skipped. */
struct word_set {
        char *buf;
        size_t size, len;
        char sep;
};

static bool word_set_contains(const struct word_set *s, const char *w, size_t n)
{
        for (const char *p = s->buf; p < s->buf + s->len;) {
                const char *e;

                p++; /* the separator */
                e = memchr(p, s->sep, (size_t)(s->buf + s->len - p));
                if (!e)
                        e = s->buf + s->len;
                if ((size_t)(e - p) == n && memcmp(p, w, n) == 0)
                        return true;
                p = e;
        }
        return false;
}

/* Add every word of `value` (split at any char of `seps`). -ENOBUFS if full. */
static int word_set_add_all(struct word_set *s, const char *value, const char *seps)
{
        for (const char *p = value; *p;) {
                size_t n;

                p += strspn(p, seps);
                n = strcspn(p, seps);
                if (n == 0)
                        break;
                if (!word_set_contains(s, p, n)) {
                        if (s->len + 1 + n + 2 > s->size)
                                return -ENOBUFS;
                        s->buf[s->len++] = s->sep;
                        memcpy(s->buf + s->len, p, n);
                        s->len += n;
                }
                p += n;
        }
        s->buf[s->len] = '\0';
        return 0;
}

/* "DEVLINKS": words joined by single spaces. TAGS: ":" + words + ":". */
static const char *word_set_finish(struct word_set *s, bool trailing_sep)
{
        if (s->len == 0)
                return NULL;
        if (trailing_sep) {
                s->buf[s->len++] = s->sep;
                s->buf[s->len] = '\0';
                return s->buf;
        }
        return s->buf + 1;
}

/* Scratch state while turning raw KEY=VALUE pairs into an event. */
struct amend {
        struct nlmon_event *ev;
        const char *major, *minor;
        struct word_set devlinks, all_tags, current_tags;
};

static int props_set(struct nlmon_event *ev, const char *key, const char *value)
{
        for (size_t i = 0; i < ev->n_props; i++)
                if (streq(ev->props[i].key, key)) {
                        ev->props[i].value = value;
                        return 0;
                }
        if (ev->n_props >= NLMON_PROPS_MAX)
                return -E2BIG;
        ev->props[ev->n_props++] = (struct nlmon_prop){ .key = key, .value = value };
        return 0;
}

static int amend_one(struct amend *a, const char *key, const char *value)
{
        struct nlmon_event *ev = a->ev;

        if (streq(key, "MAJOR"))
                a->major = value;
        else if (streq(key, "MINOR"))
                a->minor = value;
        else if (streq(key, "DEVLINKS"))
                return word_set_add_all(&a->devlinks, value, " \t\n\r");
        else if (streq(key, "TAGS"))
                return word_set_add_all(&a->all_tags, value, ":");
        else if (streq(key, "CURRENT_TAGS")) {
                /* current tags are tags too */
                int r = word_set_add_all(&a->all_tags, value, ":");
                return r < 0 ? r : word_set_add_all(&a->current_tags, value, ":");
        } else if (streq(key, "UDEV_DATABASE_VERSION"))
                return 0;
        else if (streq(key, "DEVNAME") && value[0] != '/') {
                int n = snprintf(ev->devname, sizeof(ev->devname), "/dev/%s", value);
                if (n < 0 || (size_t)n >= sizeof(ev->devname))
                        return -ENAMETOOLONG;
                return props_set(ev, key, ev->devname);
        } else
                return props_set(ev, key, value);
        return 0;
}

static bool parse_unsigned(const char *s, unsigned long long max, unsigned long long *ret)
{
        char *end;

        if (!s || !(*s >= '0' && *s <= '9'))
                return false;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (errno != 0 || *end != '\0' || v > max)
                return false;
        *ret = v;
        return true;
}

/* MAJOR/MINOR go behind the message's other properties, and only with a
 * valid, non-zero major; then the rebuilt DEVLINKS, TAGS, CURRENT_TAGS. */
static int amend_finish(struct amend *a)
{
        struct nlmon_event *ev = a->ev;
        unsigned long long maj, min, seqnum;
        const char *v;
        int r;

        if (a->major) {
                if (!parse_unsigned(a->major, 0xfff, &maj) ||
                    (a->minor && !parse_unsigned(a->minor, 0xfffff, &min)))
                        return -EBADMSG;
                if (maj > 0) {
                        r = props_set(ev, "MAJOR", a->major);
                        if (r == 0 && a->minor)
                                r = props_set(ev, "MINOR", a->minor);
                        if (r < 0)
                                return r;
                }
        }
        v = word_set_finish(&a->devlinks, false);
        if (v && (r = props_set(ev, "DEVLINKS", v)) < 0)
                return r;
        ev->tags = word_set_finish(&a->all_tags, true);
        if (ev->tags && (r = props_set(ev, "TAGS", ev->tags)) < 0)
                return r;
        v = word_set_finish(&a->current_tags, true);
        if (v && (r = props_set(ev, "CURRENT_TAGS", v)) < 0)
                return r;

        ev->action = nlmon_event_get(ev, "ACTION");
        ev->devpath = nlmon_event_get(ev, "DEVPATH");
        ev->subsystem = nlmon_event_get(ev, "SUBSYSTEM");
        ev->devtype = nlmon_event_get(ev, "DEVTYPE");
        ev->synth_uuid = nlmon_event_get(ev, "SYNTH_UUID");
        ev->interface_old = nlmon_event_get(ev, "INTERFACE_OLD");
        if (!ev->action || uevent_action_from_string(ev->action) < 0 || !ev->devpath ||
            ev->devpath[0] != '/' || !ev->subsystem ||
            !parse_unsigned(nlmon_event_get(ev, "SEQNUM"), UINT64_MAX, &seqnum) || seqnum == 0)
                return -EBADMSG;
        return 0;
}

static void amend_init(struct amend *a, struct nlmon_event *ev)
{
        *a = (struct amend){
                .ev = ev,
                .devlinks = { ev->devlinks, sizeof(ev->devlinks), 0, ' ' },
                .all_tags = { ev->all_tags, sizeof(ev->all_tags), 0, ':' },
                .current_tags = { ev->current_tags, sizeof(ev->current_tags), 0, ':' },
        };
        ev->n_props = 0;
        ev->tags = NULL;
}

/* "KEY=VALUE\0" entries in [p, p+len) (modified in place: '=' and the first
 * '\n' of each value become NUL). Every entry must be NUL-terminated and
 * contain '='. */
static int parse_udev_props(struct nlmon_event *ev, char *p, size_t len)
{
        struct amend a;
        int r;

        if (len == 0 || p[len - 1] != '\0')
                return -EBADMSG;
        amend_init(&a, ev);
        for (char *end = p + len; p < end;) {
                char *next = p + strlen(p) + 1;
                char *eq = strchr(p, '=');

                if (!eq)
                        return -EBADMSG;
                *eq = '\0';
                eq[1 + strcspn(eq + 1, "\n")] = '\0'; /* cut at the first newline */
                r = amend_one(&a, p, eq + 1);
                if (r < 0)
                        return r;
                p = next;
        }
        return amend_finish(&a);
}

static int parse_kernel(struct nlmon_event *ev, const char *buf, size_t len)
{
        struct amend a;
        int r;

        uevent_free(ev->kernel);
        ev->kernel = NULL;
        r = uevent_parse_kernel(buf, len, ev->recv_usec, &ev->kernel);
        if (r < 0)
                return r;
        amend_init(&a, ev);
        for (size_t i = 0; i < ev->kernel->n_props; i++) {
                r = amend_one(&a, ev->kernel->props[i].key, ev->kernel->props[i].value);
                if (r < 0)
                        return r;
        }
        return amend_finish(&a);
}

/* ---------------------------------------------------------------- receive */

static bool sender_uid_trusted(uid_t uid)
{
        return uid == 0 || uid == getuid() || uid == geteuid();
}

static int check_datagram(struct msghdr *msg, ssize_t n, const struct sockaddr_nl *sa)
{
        struct cmsghdr *cmsg;
        struct ucred cred;

        if (msg->msg_flags & (MSG_TRUNC | MSG_CTRUNC))
                return log_debug_errno(-EBADMSG, "Received truncated message, ignoring message.");
        if (n < 32)
                return log_debug_errno(-EBADMSG, "Invalid message length (%zi), ignoring message.",
                                       n);
        if (sa->nl_groups == NLMON_GROUP_NONE)
                return log_debug_errno(-EBADMSG, "Unicast netlink message ignored.");
        if (sa->nl_groups == NLMON_GROUP_KERNEL && sa->nl_pid != 0)
                return log_debug_errno(-EBADMSG,
                                       "Multicast kernel netlink message from PID %u ignored.",
                                       (unsigned)sa->nl_pid);
        cmsg = CMSG_FIRSTHDR(msg);
        if (!cmsg || cmsg->cmsg_level != SOL_SOCKET || cmsg->cmsg_type != SCM_CREDENTIALS ||
            cmsg->cmsg_len != CMSG_LEN(sizeof(struct ucred)))
                return log_debug_errno(-EBADMSG,
                                       "No sender credentials received, ignoring message.");
        memcpy(&cred, CMSG_DATA(cmsg), sizeof(cred));
        if (!sender_uid_trusted(cred.uid))
                return log_debug_errno(-EBADMSG, "Sender uid=%u, message ignored.",
                                       (unsigned)cred.uid);
        return 0;
}

int nlmon_receive(int fd, enum nlmon_group group, struct nlmon_event *ev)
{
        union {
                struct cmsghdr align;
                char buf[CMSG_SPACE(sizeof(struct ucred))];
        } control;
        struct sockaddr_nl sa = {};
        struct iovec iov = { .iov_base = ev->buf, .iov_len = sizeof(ev->buf) };
        struct msghdr msg = {
                .msg_name = &sa,
                .msg_namelen = sizeof(sa),
                .msg_iov = &iov,
                .msg_iovlen = 1,
                .msg_control = &control,
                .msg_controllen = sizeof(control),
        };
        ssize_t n;
        int r;

        n = recvmsg(fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        if (n < 0) {
                if (errno == EINTR || errno == EAGAIN)
                        return -EAGAIN;
                if (errno == ENOBUFS) {
                        log_warning("Receive buffer overflow, some events were lost.");
                        return 0;
                }
                return negative_errno();
        }
        ev->recv_usec = now_usec(CLOCK_MONOTONIC);
        ev->source = group;
        if (check_datagram(&msg, n, &sa) < 0)
                return 0;
        if (!memchr(ev->buf, '\0', (size_t)n)) {
                log_debug("Received message without NUL, ignoring message.");
                return 0;
        }

        if (streq(ev->buf, "libudev")) {
                const char *props;
                size_t props_len;

                r = monitor_msg_decode(ev->buf, (size_t)n, &props, &props_len);
                if (r < 0) {
                        log_debug_errno(r, "Invalid udev message header, ignoring message.");
                        return 0;
                }
                r = parse_udev_props(ev, ev->buf + (props - ev->buf), props_len);
        } else {
                if (!strstr(ev->buf, "@/")) {
                        log_debug("Invalid message header, ignoring message.");
                        return 0;
                }
                r = parse_kernel(ev, ev->buf, (size_t)n);
        }
        if (r < 0) {
                log_debug_errno(r, "Failed to parse received message, ignoring: %m");
                return 0;
        }
        return 1;
}
