/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (udevadm is single-threaded) */
/* udevadm trigger: ask the kernel to re-emit uevents by writing an action to
 * the "uevent" file of every selected device (udevadm(8) UDEVADM TRIGGER).
 *
 * Options as in systemd 252: --type, --action, every filter (subsystem,
 * sysname, attribute, property, tag, parent, name, initialized; device
 * arguments act like --parent-match), --prioritized-subsystem, --dry-run,
 * --verbose, --quiet, --settle, --uuid, --wait-daemon. Devices are selected
 * and ordered as systemd's enumerator does (device-enum.h, trigger-match.h).
 * A write that fails is reported for that device and the run goes on (only
 * EROFS stops it); the exit status is 1 if any write failed for a reason
 * other than the device being gone.
 *
 * --settle: a udev-group monitor is opened before the first write; each write
 * carries a random UUID ("change <uuid>", the kernel adds SYNTH_UUID=<uuid>)
 * and we wait until udev has broadcast an event with every UUID (devices on
 * kernels without UUID support: matched by devpath, or by INTERFACE_OLD for a
 * renamed network interface). --settle-timeout=SEC bounds the wait; on
 * timeout the daemon's pending events of the devices still waited for are
 * printed (pending-report.h) and the exit status is 1. */

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "proto/uevent.h"
#include "shared/fileio.h"
#include "shared/hashmap.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "shared/time-util.h"
#include "udevadm/device-enum.h"
#include "udevadm/netlink-monitor.h"
#include "udevadm/pending-report.h"
#include "udevadm/trigger-match.h"
#include "udevadm/udevadm.h"
#include "udevadm/udevice.h"

#define TRIGGER_PING_DEFAULT_TIMEOUT_USEC (5 * USEC_PER_SEC)
#define TRIGGER_REPORT_TIMEOUT_USEC (5 * USEC_PER_SEC)
#define TRIGGER_SYSFS_ROOT_ENV "TUDEV_SYSFS_ROOT" /* for tests: a sysfs tree elsewhere */
#define UUID_STRING_LEN 36
#define UEVENT_WRITE_MAX 64 /* "<action> <uuid>\n" */

struct trigger_args {
        bool verbose, dry_run, quiet, uuid, settle, ping;
        uint64_t ping_timeout_usec;
        uint64_t settle_timeout_usec; /* USEC_INFINITY: none (the default) */
        enum device_enum_type type;
        enum uevent_action action;
        struct arg_list subsystem_match, subsystem_nomatch, sysname_match, prioritized;
        struct trigger_match match;
        struct strlist parents; /* devpaths of --parent-match, --name-match, arguments */
        const char *root;
};

/* State of one run: the enumeration and, with --settle, the pending events. */
struct trigger {
        const struct trigger_args *args;
        struct device_enum e;
        int monitor_fd;         /* udev group, with --settle; else -1 */
        bool skip_uuid;         /* the kernel refused "<action> <uuid>" */
        struct hashmap pending; /* uuid or devpath -> struct sysdev (borrowed) */
        uint64_t seqnum_before; /* the kernel's last SEQNUM before the first write */
};

static void trigger_args_done(struct trigger_args *a)
{
        arg_list_done(&a->subsystem_match);
        arg_list_done(&a->subsystem_nomatch);
        arg_list_done(&a->sysname_match);
        arg_list_done(&a->prioritized);
        trigger_match_done(&a->match);
        strlist_clear(&a->parents);
}

static int help(void)
{
        printf("%s trigger [OPTIONS] [DEVICE...]\n\n"
               "Make the kernel send events for existing devices again.\n\n"
               "  -h --help                         This text\n"
               "  -V --version                      Print the version\n"
               "  -v --verbose                      Print each device path before triggering it\n"
               "  -n --dry-run                      Select devices but write nothing\n"
               "  -q --quiet                        Log write failures at debug level only\n"
               "  -t --type=TYPE                    What to trigger:\n"
               "          devices                     devices (default)\n"
               "          subsystems                  buses, drivers and modules\n"
               "          all                         both\n"
               "  -c --action=ACTION|help           Action to send (default: change)\n"
               "  -s --subsystem-match=GLOB         Only devices of matching subsystems\n"
               "  -S --subsystem-nomatch=GLOB       Skip devices of matching subsystems\n"
               "  -a --attr-match=FILE[=GLOB]       Only devices with this attribute (value)\n"
               "  -A --attr-nomatch=FILE[=GLOB]     Skip devices with this attribute (value)\n"
               "  -p --property-match=KEY=GLOB      Only devices with a matching property\n"
               "  -g --tag-match=TAG                Only devices with this tag\n"
               "  -y --sysname-match=GLOB           Only devices with a matching name\n"
               "     --name-match=NAME              The device with this /dev name and those\n"
               "                                    below it\n"
               "  -b --parent-match=SYSPATH         This device and those below it\n"
               "     --initialized-match            Only devices in the udev database\n"
               "     --initialized-nomatch          Only devices not in the udev database\n"
               "     --prioritized-subsystem=SUBSYSTEM[,SUBSYSTEM...]\n"
               "                                    Trigger these subsystems first, in order\n"
               "  -w --settle                       Wait until the events have been processed\n"
               "     --settle-timeout=SECONDS       Give up waiting after SECONDS (implies\n"
               "                                    --settle; default: no limit)\n"
               "     --wait-daemon[=SECONDS]        First check that the daemon answers\n"
               "     --uuid                         Print the UUID sent with each event\n"
               "\nDevice arguments (/sys or /dev paths) act like --parent-match.\n",
               program_invocation_short_name);
        return 0;
}

/* "a,b,,c" -> a b c (the argument string is split in place). */
static int add_prioritized(struct trigger_args *a, char *arg)
{
        for (char *p = strtok(arg, ","); p; p = strtok(NULL, ",")) {
                int r = arg_list_add(&a->prioritized, p);
                if (r < 0)
                        return r;
        }
        return 0;
}

enum {
        ARG_NAME = 0x100,
        ARG_PING,
        ARG_UUID,
        ARG_PRIORITIZED_SUBSYSTEM,
        ARG_INITIALIZED_MATCH,
        ARG_INITIALIZED_NOMATCH,
        ARG_SETTLE_TIMEOUT,
};

static const struct option trigger_options[] = {
        { "verbose", no_argument, NULL, 'v' },
        { "dry-run", no_argument, NULL, 'n' },
        { "quiet", no_argument, NULL, 'q' },
        { "type", required_argument, NULL, 't' },
        { "action", required_argument, NULL, 'c' },
        { "subsystem-match", required_argument, NULL, 's' },
        { "subsystem-nomatch", required_argument, NULL, 'S' },
        { "attr-match", required_argument, NULL, 'a' },
        { "attr-nomatch", required_argument, NULL, 'A' },
        { "property-match", required_argument, NULL, 'p' },
        { "tag-match", required_argument, NULL, 'g' },
        { "sysname-match", required_argument, NULL, 'y' },
        { "name-match", required_argument, NULL, ARG_NAME },
        { "parent-match", required_argument, NULL, 'b' },
        { "initialized-match", no_argument, NULL, ARG_INITIALIZED_MATCH },
        { "initialized-nomatch", no_argument, NULL, ARG_INITIALIZED_NOMATCH },
        { "settle", no_argument, NULL, 'w' },
        { "settle-timeout", required_argument, NULL, ARG_SETTLE_TIMEOUT },
        { "wait-daemon", optional_argument, NULL, ARG_PING },
        { "version", no_argument, NULL, 'V' },
        { "help", no_argument, NULL, 'h' },
        { "uuid", no_argument, NULL, ARG_UUID },
        { "prioritized-subsystem", required_argument, NULL, ARG_PRIORITIZED_SUBSYSTEM },
        {}
};

/* --parent-match (prefix "/sys"), --name-match ("/dev"), device arguments
 * (NULL): the device's devpath becomes a parent filter. */
static int add_parent(struct trigger_args *a, const char *arg, const char *prefix)
{
        _cleanup_(udevice_freep) struct udevice *d = NULL;
        int r = udevice_find(arg, prefix, &d);

        if (r < 0)
                return log_error_errno(r, "Failed to open the device '%s': %m", arg);
        if (strlist_add_unique(&a->parents, d->devpath) < 0)
                return log_error_errno(-ENOMEM, "Out of memory.");
        return 0;
}

static int parse_type(const char *s, enum device_enum_type *ret)
{
        if (streq(s, "devices"))
                *ret = DEVICE_ENUM_DEVICES;
        else if (streq(s, "subsystems"))
                *ret = DEVICE_ENUM_SUBSYSTEMS;
        else if (streq(s, "all"))
                *ret = DEVICE_ENUM_ALL;
        else
                return log_error_errno(-EINVAL, "Unknown type --type=%s", s);
        return 0;
}

/* One option; 1: go on, 0: done (help/version/action list), <0: error. */
static int parse_option(struct trigger_args *a, int c)
{
        int r = 0;

        switch (c) {
        case 'v':
                a->verbose = true;
                break;
        case 'n':
                a->dry_run = true;
                break;
        case 'q':
                a->quiet = true;
                break;
        case 't':
                r = parse_type(optarg, &a->type);
                break;
        case 'c':
                r = udevadm_parse_action(optarg, &a->action);
                if (r <= 0)
                        return r < 0 ? log_error_errno(r, "Unknown action '%s'", optarg) : 0;
                r = 0;
                break;
        case 's':
                r = arg_list_add(&a->subsystem_match, optarg);
                break;
        case 'S':
                r = arg_list_add(&a->subsystem_nomatch, optarg);
                break;
        case 'y':
                r = arg_list_add(&a->sysname_match, optarg);
                break;
        case 'w':
                a->settle = true;
                break;
        case ARG_SETTLE_TIMEOUT:
                r = udevadm_parse_sec(optarg, &a->settle_timeout_usec);
                if (r < 0)
                        return log_error_errno(r, "Failed to parse timeout value '%s': %m",
                                               optarg);
                a->settle = true;
                break;
        case ARG_PING:
                a->ping = true;
                if (optarg && (r = udevadm_parse_sec(optarg, &a->ping_timeout_usec)) < 0) {
                        log_error_errno(r, "Failed to parse timeout value '%s', ignoring: %m",
                                        optarg);
                        r = 0;
                }
                break;
        case ARG_UUID:
                a->uuid = true;
                break;
        case ARG_PRIORITIZED_SUBSYSTEM:
                r = add_prioritized(a, optarg);
                break;
        case 'a':
        case 'A':
                r = trigger_match_add_attr(&a->match, optarg, c == 'a');
                break;
        case 'p':
                r = trigger_match_add_property(&a->match, optarg);
                break;
        case 'g':
                r = arg_list_add(&a->match.tags, optarg);
                break;
        case 'b':
                r = add_parent(a, optarg, "/sys");
                break;
        case ARG_NAME:
                r = add_parent(a, optarg, "/dev");
                break;
        case ARG_INITIALIZED_MATCH:
                a->match.initialized = MATCH_INITIALIZED_YES;
                break;
        case ARG_INITIALIZED_NOMATCH:
                a->match.initialized = MATCH_INITIALIZED_NO;
                break;
        case 'V':
                return udevadm_print_version();
        case 'h':
                return help();
        default:
                return -EINVAL;
        }
        return r < 0 ? r : 1;
}

/* Options; the device arguments are left at argv[optind...] (they are
 * looked up after --wait-daemon, as systemd does). */
static int parse_argv(int argc, char *argv[], struct trigger_args *a)
{
        int c, r;

        while ((c = getopt_long(argc, argv, "vnqt:c:s:S:a:A:p:g:y:b:wVh", trigger_options,
                                NULL)) >= 0) {
                r = parse_option(a, c);
                if (r <= 0)
                        return r;
        }
        return 1;
}

/* ---------------------------------------------------------------- writing */

/* 16 random bytes without ever blocking (early boot: the pool may not be
 * initialised yet; these UUIDs need to be unique, not secret). */
static int random_bytes(uint8_t *b, size_t n)
{
        _cleanup_close_ int fd = -1;

        if (getrandom(b, n, GRND_NONBLOCK) == (ssize_t)n)
                return 0;
        fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return negative_errno();
        return read(fd, b, n) == (ssize_t)n ? 0 : -EIO;
}

/* A random (version 4) UUID as 8-4-4-4-12 lowercase hex. */
static int random_uuid(char out[DEVICE_ENUM_UUID_MAX])
{
        uint8_t b[16];
        int r = random_bytes(b, sizeof(b));

        if (r < 0)
                return r;
        b[6] = (b[6] & 0x0f) | 0x40;
        b[8] = (b[8] & 0x3f) | 0x80;
        snprintf(out, DEVICE_ENUM_UUID_MAX,
                 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                 b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                 b[14], b[15]);
        return 0;
}

/* Write "<action>[ <uuid>]\n" to <devpath>/uevent. 0 or -errno. */
static int write_uevent(int root_fd, const struct sysdev *d, const char *action,
                        const char *uuid)
{
        char path[PATH_MAX], buf[UEVENT_WRITE_MAX];
        _cleanup_close_ int fd = -1;
        int n;
        ssize_t w;

        n = snprintf(path, sizeof(path), "%s/uevent", d->devpath + 1);
        if (n < 0 || (size_t)n >= sizeof(path))
                return -ENAMETOOLONG;
        fd = openat(root_fd, path, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
        if (fd < 0)
                return negative_errno();
        n = snprintf(buf, sizeof(buf), "%s%s%s\n", action, uuid ? " " : "", uuid ?: "");
        if (n < 0 || (size_t)n >= sizeof(buf))
                return -EINVAL;
        w = write(fd, buf, (size_t)n);
        if (w < 0)
                return negative_errno();
        return w == n ? 0 : -EIO;
}

/* Trigger one device (UUID in d->uuid when used). 0 or -errno. */
static int trigger_one(struct trigger *t, struct sysdev *d, const char *action, bool *used_uuid)
{
        const struct trigger_args *a = t->args;
        bool want_uuid = (a->uuid || a->settle) && !t->skip_uuid;
        int r;

        *used_uuid = false;
        if (!want_uuid)
                return write_uevent(t->e.root_fd, d, action, NULL);
        r = random_uuid(d->uuid);
        if (r < 0)
                return r;
        r = write_uevent(t->e.root_fd, d, action, d->uuid);
        if (r == -EINVAL && !a->uuid && a->settle) {
                /* A kernel before 4.13 does not know the UUID form: settle by devpath. */
                r = write_uevent(t->e.root_fd, d, action, NULL);
                if (r != -EINVAL)
                        t->skip_uuid = true;
                return r;
        }
        *used_uuid = r == 0;
        return r;
}

static const char *sysname_of(const struct sysdev *d)
{
        const char *s = strrchr(d->devpath, '/');

        return s ? s + 1 : d->devpath;
}

/* Log a failed write; returns the error to remember (0 if ignored), or the
 * error itself for EROFS, which ends the run (*fatal). */
static int write_failed(const struct trigger *t, const struct sysdev *d, const char *action,
                        int r, bool *fatal)
{
        bool ignore = r == -ENOENT || r == -ENODEV;
        int level = t->args->quiet ? LOG_DEBUG
                    : r == -ENOENT ? LOG_DEBUG
                    : r == -ENODEV ? LOG_WARNING
                                   : LOG_ERR;

        log_full_errno(level, r, "%s: Failed to write '%s' to '%s%s/uevent'%s: %m", sysname_of(d),
                       action, t->args->root, d->devpath, ignore ? ", ignoring" : "");
        *fatal = r == -EROFS;
        return ignore ? 0 : r;
}

static int exec_list(struct trigger *t)
{
        const struct trigger_args *a = t->args;
        const char *action = uevent_action_to_string(a->action);
        int ret = 0;

        for (size_t i = 0; i < t->e.n_devs; i++) {
                struct sysdev *d = t->e.devs[i];
                bool used_uuid, fatal;
                int r;

                if (a->verbose)
                        printf("%s%s\n", a->root, d->devpath);
                if (a->dry_run)
                        continue;
                r = trigger_one(t, d, action, &used_uuid);
                if (r < 0) {
                        r = write_failed(t, d, action, r, &fatal);
                        if (fatal)
                                return r;
                        if (ret == 0)
                                ret = r;
                        continue;
                }
                if (a->uuid)
                        printf("%s\n", d->uuid);
                if (!a->settle)
                        continue;
                if (used_uuid)
                        r = hashmap_put(&t->pending, d->uuid, UUID_STRING_LEN, d);
                else
                        r = hashmap_put(&t->pending, d->devpath, d->devpath_len, d);
                if (r < 0)
                        return log_error_errno(r, "Out of memory.");
        }
        return ret;
}

/* ---------------------------------------------------------------- settling */

static bool is_uuid(const char *s)
{
        if (!s || strlen(s) != UUID_STRING_LEN)
                return false;
        for (size_t i = 0; i < UUID_STRING_LEN; i++) {
                bool dash = i == 8 || i == 13 || i == 18 || i == 23;

                if (dash ? s[i] != '-' : !isxdigit((unsigned char)s[i]))
                        return false;
        }
        return true;
}

/* The pending entry an event answers, removed from the map, or NULL. */
static struct sysdev *settle_match(struct trigger *t, const struct nlmon_event *ev)
{
        char old[PATH_MAX];
        const char *slash;
        struct sysdev *d;

        if (is_uuid(ev->synth_uuid))
                return hashmap_remove(&t->pending, ev->synth_uuid, UUID_STRING_LEN);
        d = hashmap_remove(&t->pending, ev->devpath, strlen(ev->devpath));
        if (d || !ev->interface_old)
                return d;
        /* A renamed network interface is broadcast under its new name. */
        slash = strrchr(ev->devpath, '/');
        if (!slash)
                return NULL;
        int n = snprintf(old, sizeof(old), "%.*s/%s", (int)(slash - ev->devpath), ev->devpath,
                         ev->interface_old);
        if (n < 0 || (size_t)n >= sizeof(old))
                return NULL;
        return hashmap_remove(&t->pending, old, (size_t)n);
}

static void settle_event(struct trigger *t, const struct nlmon_event *ev)
{
        struct sysdev *d = settle_match(t, ev);

        if (!d) {
                log_debug("%s: Got uevent not matching any triggered device, ignoring.",
                          ev->devpath);
                return;
        }
        if (t->args->verbose)
                printf("settle %s%s\n", t->args->root, ev->devpath);
        if (t->args->uuid)
                printf("settle %s\n", d->uuid);
}

struct report_filter {
        struct hashmap devpaths; /* devpath -> struct sysdev (borrowed) */
        uint64_t seqnum_before;
};

/* Our events: later than the first write, of a device still waited for. */
static bool report_keep(const struct pending_line *l, void *userdata)
{
        struct report_filter *f = userdata;

        return l->seqnum > f->seqnum_before &&
               hashmap_get(&f->devpaths, l->devpath, strlen(l->devpath)) != NULL;
}

/* On timeout: the daemon's pending events of the devices still waited for. */
static void settle_report(struct trigger *t)
{
        struct report_filter f = { .seqnum_before = t->seqnum_before };
        size_t state = 0;
        void *v;

        hashmap_init(&f.devpaths);
        while (hashmap_iterate(&t->pending, &state, NULL, NULL, &v)) {
                struct sysdev *d = v;

                if (hashmap_put(&f.devpaths, d->devpath, d->devpath_len, d) == -ENOMEM)
                        break;
        }
        (void)pending_report(NULL, report_keep, &f, TRIGGER_REPORT_TIMEOUT_USEC);
        hashmap_deinit(&f.devpaths);
}

static int settle_wait(struct trigger *t)
{
        _cleanup_(nlmon_event_freep) struct nlmon_event *ev = nlmon_event_new();
        uint64_t timeout = t->args->settle_timeout_usec;
        uint64_t deadline =
                timeout == USEC_INFINITY ? USEC_INFINITY : now_usec(CLOCK_BOOTTIME) + timeout;

        if (!ev)
                return log_error_errno(-ENOMEM, "Out of memory.");
        while (hashmap_size(&t->pending) > 0) {
                struct pollfd p = { .fd = t->monitor_fd, .events = POLLIN };
                int ms = -1;
                int r;

                if (deadline != USEC_INFINITY) {
                        uint64_t now = now_usec(CLOCK_BOOTTIME);

                        if (now >= deadline) {
                                log_error("Timed out waiting for %zu of the triggered events.",
                                          hashmap_size(&t->pending));
                                settle_report(t);
                                return -ETIMEDOUT;
                        }
                        ms = (int)MIN((deadline - now + USEC_PER_MSEC - 1) / USEC_PER_MSEC,
                                      (uint64_t)INT_MAX);
                }
                r = poll(&p, 1, ms);
                if (r < 0) {
                        if (errno == EINTR)
                                continue;
                        return log_error_errno(errno, "Event loop failed: %m");
                }
                if (r == 0)
                        continue;
                while (hashmap_size(&t->pending) > 0 &&
                       (r = nlmon_receive(t->monitor_fd, NLMON_GROUP_UDEV, ev)) != -EAGAIN) {
                        if (r < 0)
                                return log_error_errno(r, "Failed to receive device event: %m");
                        if (r > 0)
                                settle_event(t, ev);
                }
        }
        return 0;
}

/* ---------------------------------------------------------------- main */

/* The last SEQNUM the kernel sent (<root>/kernel/uevent_seqnum), 0 if unknown. */
static uint64_t kernel_seqnum(const char *root)
{
        char path[PATH_MAX];
        uint64_t v;

        if (snprintf(path, sizeof(path), "%s/kernel/uevent_seqnum", root) >= (int)sizeof(path))
                return 0;
        return read_uint64_file(path, &v) < 0 ? 0 : v;
}

static int wait_daemon(const struct trigger_args *a)
{
        struct ctrl_conn conn = CTRL_CONN_INIT;
        int r;

        r = ctrl_conn_send(&conn, CTRL_MSG_PING, 0, NULL);
        if (r < 0) {
                ctrl_conn_close(&conn);
                return log_error_errno(r, "Failed to connect to udev daemon: %m");
        }
        r = ctrl_conn_finish(&conn, a->ping_timeout_usec);
        ctrl_conn_close(&conn);
        if (r < 0)
                return log_error_errno(r, "Failed to wait for daemon to reply: %m");
        return 0;
}

static const char *type_name(enum device_enum_type type)
{
        switch (type) {
        case DEVICE_ENUM_DEVICES:
                return "devices";
        case DEVICE_ENUM_SUBSYSTEMS:
                return "subsystems";
        default:
                return "devices and subsystems";
        }
}

static int run(struct trigger *t, struct trigger_args *a, int argc, char *argv[])
{
        char tags_dir[PATH_MAX];
        struct device_enum_filter filter = {
                .subsystem_match = a->subsystem_match.items,
                .n_subsystem_match = a->subsystem_match.n,
                .subsystem_nomatch = a->subsystem_nomatch.items,
                .n_subsystem_nomatch = a->subsystem_nomatch.n,
                .sysname_match = a->sysname_match.items,
                .n_sysname_match = a->sysname_match.n,
                .tags = a->match.tags.items,
                .n_tags = a->match.tags.n,
                .tags_dir = tags_dir,
                .resolve_id = trigger_match_resolve_id,
                .match = trigger_match_needed(&a->match) ? trigger_match_device : NULL,
                .userdata = &a->match,
        };
        int r;

        if (a->ping && (r = wait_daemon(a)) < 0)
                return r;
        for (int i = optind; i < argc; i++)
                if ((r = add_parent(a, argv[i], NULL)) < 0)
                        return r;
        filter.parents = (const char *const *)a->parents.items;
        filter.n_parents = a->parents.n;
        snprintf(tags_dir, sizeof(tags_dir), "%s/tags", udevice_run_dir());
        if (a->settle) {
                r = nlmon_open(NLMON_GROUP_UDEV, &t->monitor_fd);
                if (r < 0)
                        return log_error_errno(r, "Failed to create device monitor object: %m");
        }
        r = device_enum_init(&t->e, a->root, &filter);
        if (r < 0)
                return log_error_errno(r, "Failed to open %s: %m", a->root);
        r = device_enum_scan(&t->e, a->type);
        if (r < 0)
                return log_error_errno(r, "Failed to scan %s: %m", type_name(a->type));
        r = device_enum_sort(&t->e, a->prioritized.items, a->prioritized.n);
        if (r < 0)
                return log_error_errno(r, "Failed to sort devices: %m");
        if (a->settle)
                t->seqnum_before = kernel_seqnum(a->root);
        r = exec_list(t);
        if (r < 0)
                return r;
        if (a->settle)
                return settle_wait(t);
        return 0;
}

int trigger_main(int argc, char *argv[])
{
        struct trigger_args a = {
                .ping_timeout_usec = TRIGGER_PING_DEFAULT_TIMEOUT_USEC,
                .settle_timeout_usec = USEC_INFINITY,
                .type = DEVICE_ENUM_DEVICES,
                .action = UEVENT_ACTION_CHANGE,
                .root = getenv(TRIGGER_SYSFS_ROOT_ENV) ?: SYSFS_DEFAULT_ROOT,
        };
        struct trigger t = { .args = &a, .monitor_fd = -1, .e = { .root_fd = -1 } };
        int r;

        hashmap_init(&t.pending);
        udevice_set_roots(a.root, NULL);
        if (udevadm_running_in_chroot()) {
                log_info("Running in chroot, ignoring request.");
                r = 0;
        } else {
                r = parse_argv(argc, argv, &a);
                if (r > 0)
                        r = run(&t, &a, argc, argv);
        }
        hashmap_deinit(&t.pending);
        device_enum_done(&t.e);
        safe_close(t.monitor_fd);
        trigger_args_done(&a);
        return r < 0 ? r : 0;
}
