/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (udevadm is single-threaded) */
/* udevadm info: query sysfs and the udev database (udevadm(8) UDEVADM
 * INFO), with the output of systemd 252's `udevadm info`:
 *
 *   -q name|symlink|path|property|all (default all), --property=, --value,
 *   -x/-P for property output, -r for name/symlink, -a attribute walk,
 *   -t tree, -e export-db, -c cleanup-db, -d device id of a file,
 *   -w wait for initialization, --no-pager (there is no pager anyway).
 *
 * Devices: /sys paths, /dev nodes or links, "-p devpath", "-n name", device
 * ids ("b8:0", "c1:3", "n3", "+pci:0000:00:01.0"; an addition: systemd 252
 * refuses those) and ".device" unit names (turned into paths; the service
 * manager is not asked for the unit's SysFSPath).
 *
 * Like systemd, -e and -c act as soon as they are parsed. Unlike systemd, a
 * database file that is malformed or unreadable is reported on stderr and
 * makes the exit status 1 (stdout is what systemd prints). */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <dirent.h>
#include <unistd.h>

#include "shared/log.h"
#include "shared/macro.h"
#include "shared/time-util.h"
#include "udevadm/info-output.h"
#include "udevadm/info-tree.h"
#include "udevadm/info.h"
#include "udevadm/netlink-monitor.h"
#include "udevadm/udevadm.h"
#include "udevadm/udevice.h"

enum info_action {
        ACTION_QUERY,
        ACTION_ATTRIBUTE_WALK,
        ACTION_DEVICE_ID_FILE,
        ACTION_TREE,
};

enum info_query {
        QUERY_NAME,
        QUERY_PATH,
        QUERY_SYMLINK,
        QUERY_PROPERTY,
        QUERY_ALL,
};

struct info_args {
        enum info_action action;
        enum info_query query;
        bool root, export, value;
        bool filter_properties;         /* --property= given (possibly empty) */
        struct strlist properties;      /* names to show */
        const char *export_prefix;      /* NULL: none given */
        const char *id_file;
        uint64_t wait_usec;             /* 0: do not wait */
        struct strlist devices;
};

static void info_args_done(struct info_args *a)
{
        strlist_clear(&a->properties);
        strlist_clear(&a->devices);
}

static int help(void)
{
        printf("%s info [OPTIONS] [DEVPATH|FILE]\n\n"
               "Show what sysfs and the udev database know about devices.\n\n"
               "  -h --help                   This text\n"
               "  -V --version                Print the version\n"
               "  -q --query=TYPE             What to print:\n"
               "       name                     the device node\n"
               "       symlink                  the links to the device node\n"
               "       path                     the sysfs path\n"
               "       property                 the properties\n"
               "       all                      everything (default)\n"
               "     --property=NAME[,NAME...]  Only these properties\n"
               "     --value                  Only the values of the properties\n"
               "  -p --path=SYSPATH           Device by its sysfs path\n"
               "  -n --name=NAME              Device by its node or a link to it\n"
               "  -r --root                   Show node and link names with /dev/\n"
               "  -a --attribute-walk         Print the attributes of the device and its\n"
               "                              parents as udev rule keys\n"
               "  -t --tree                   Show the device tree\n"
               "  -d --device-id-of-file=FILE Print MAJOR:MINOR of the device holding FILE\n"
               "  -x --export                 Print properties as KEY='value'\n"
               "  -P --export-prefix=PREFIX   Like -x, with PREFIX before each key\n"
               "  -e --export-db              Print the records of all devices\n"
               "  -c --cleanup-db             Remove the udev database\n"
               "  -w --wait-for-initialization[=SECONDS]\n"
               "                              Wait until the device is initialized\n"
               "     --no-pager               Accepted; output is never paged\n",
               program_invocation_short_name);
        return 0;
}

/* ---------------------------------------------------------------- simple modes */

/* -d: MAJOR:MINOR of the filesystem holding `name`. */
static int stat_device(const char *name, bool export, const char *prefix)
{
        struct stat st;

        if (stat(name, &st) < 0)
                return log_error_errno(negative_errno(), "Failed to access \"%s\": %m", name);
        if (export)
                printf("%sMAJOR=%u\n%sMINOR=%u\n", prefix ?: "INFO_", major(st.st_dev),
                       prefix ?: "INFO_", minor(st.st_dev));
        else
                printf("%u:%u\n", major(st.st_dev), minor(st.st_dev));
        return 0;
}

static inline void closedirp(DIR **d)
{
        if (*d)
                closedir(*d);
}

static DIR *open_run_subdir(const char *name)
{
        char path[PATH_MAX];

        snprintf(path, sizeof(path), "%s/%s", udevice_run_dir(), name);
        return opendir(path);
}

static DIR *open_subdir_nofollow(DIR *dir, const char *name)
{
        int fd = openat(dirfd(dir), name,
                        O_RDONLY | O_NONBLOCK | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        DIR *d;

        if (fd < 0) {
                log_debug_errno(negative_errno(), "Failed to open subdirectory '%s', ignoring: %m",
                                name);
                return NULL;
        }
        d = fdopendir(fd);
        if (!d)
                safe_close(fd);
        return d;
}

static bool dot_or_dot_dot(const char *s) { return streq(s, ".") || streq(s, ".."); }

/* Remove the entries of dir that have none of the `mask` mode bits, down to
 * `depth` levels (directories are removed once emptied). */
static void cleanup_dir(DIR *dir, mode_t mask, int depth)
{
        struct dirent *de;

        if (depth <= 0)
                return;
        while ((de = readdir(dir))) {
                struct stat st;

                if (dot_or_dot_dot(de->d_name))
                        continue;
                if (fstatat(dirfd(dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                if (st.st_mode & mask)
                        continue;
                if (S_ISDIR(st.st_mode)) {
                        _cleanup_(closedirp) DIR *sub = open_subdir_nofollow(dir, de->d_name);

                        if (sub)
                                cleanup_dir(sub, mask, depth - 1);
                        (void)unlinkat(dirfd(dir), de->d_name, AT_REMOVEDIR);
                } else
                        (void)unlinkat(dirfd(dir), de->d_name, 0);
        }
}

/* Entries of dir named by a device id whose database file is gone. */
static void cleanup_ids(DIR *dir, DIR *datadir)
{
        struct dirent *de;

        while ((de = readdir(dir))) {
                if (dot_or_dot_dot(de->d_name))
                        continue;
                if (datadir && faccessat(dirfd(datadir), de->d_name, F_OK,
                                         AT_SYMLINK_NOFOLLOW) >= 0)
                        continue; /* kept by db_persist */
                (void)unlinkat(dirfd(dir), de->d_name, 0);
        }
}

/* links/ and tags/: per-name directories of device ids. */
static void cleanup_id_dirs(DIR *dir, DIR *datadir)
{
        struct dirent *de;

        while ((de = readdir(dir))) {
                struct stat st;

                if (dot_or_dot_dot(de->d_name))
                        continue;
                if (fstatat(dirfd(dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                if (S_ISDIR(st.st_mode)) {
                        _cleanup_(closedirp) DIR *sub = open_subdir_nofollow(dir, de->d_name);

                        if (sub)
                                cleanup_ids(sub, datadir);
                        (void)unlinkat(dirfd(dir), de->d_name, AT_REMOVEDIR);
                } else
                        (void)unlinkat(dirfd(dir), de->d_name, 0);
        }
}

/* -c: everything but persistent records and the watch registry. */
static void cleanup_db(void)
{
        _cleanup_(closedirp) DIR *data = open_run_subdir("data");
        _cleanup_(closedirp) DIR *links = open_run_subdir("links");
        _cleanup_(closedirp) DIR *tags = open_run_subdir("tags");
        _cleanup_(closedirp) DIR *static_tags = open_run_subdir("static_node-tags");

        if (data) {
                cleanup_dir(data, S_ISVTX, 1);
                rewinddir(data);
        }
        if (links)
                cleanup_id_dirs(links, data);
        if (tags)
                cleanup_id_dirs(tags, data);
        if (static_tags)
                cleanup_dir(static_tags, 0, 2);
}

/* ---------------------------------------------------------------- queries */

static const char *node_name(const struct info_args *a, const char *path)
{
        return !a->root && strncmp(path, "/dev/", 5) == 0 ? path + 5 : path;
}

static bool property_wanted(const struct info_args *a, const char *key)
{
        return !a->filter_properties || strlist_contains(&a->properties, key);
}

static void print_properties(const struct info_args *a, struct udevice *d)
{
        if (udevice_properties_prepare(d) < 0)
                return;
        for (size_t i = 0; i < d->n_props; i++) {
                const struct udevice_prop *p = &d->props[i];

                if (!property_wanted(a, p->key))
                        continue;
                if (a->export)
                        printf("%s%s='%s'\n", a->export_prefix ?: "", p->key, p->value);
                else if (a->value)
                        printf("%s\n", p->value);
                else
                        printf("%s=%s\n", p->key, p->value);
        }
}

static int query_device(const struct info_args *a, struct udevice *d)
{
        const char *s;
        int r;

        switch (a->query) {
        case QUERY_NAME:
                r = udevice_get_devname(d, &s);
                if (r < 0)
                        return log_error_errno(r, "No device node found: %m");
                printf("%s\n", node_name(a, s));
                return 0;
        case QUERY_SYMLINK:
                (void)udevice_read_db(d);
                for (size_t i = 0; i < d->devlinks.n; i++)
                        printf("%s%s", i > 0 ? " " : "", node_name(a, d->devlinks.items[i]));
                putchar('\n');
                return 0;
        case QUERY_PATH:
                printf("%s\n", d->devpath);
                return 0;
        case QUERY_PROPERTY:
                print_properties(a, d);
                return 0;
        default:
                info_print_record(d, NULL);
                return 0;
        }
}

/* ---------------------------------------------------------------- waiting */

static bool event_is_for(const struct nlmon_event *ev, const char *sysname,
                         const char *subsystem)
{
        const char *last = strrchr(ev->devpath, '/');
        char name[NAME_MAX + 1];
        size_t i = 0;

        if (streq(ev->action, "remove"))
                return false; /* an earlier life of the device */
        if (subsystem && !streq(ev->subsystem, subsystem))
                return false;
        for (last = last ? last + 1 : ev->devpath; *last && i + 1 < sizeof(name); last++)
                name[i++] = *last == '!' ? '/' : *last;
        name[i] = '\0';
        return streq(name, sysname);
}

static int device_from_event(const struct nlmon_event *ev, struct udevice **ret)
{
        struct udevice_kv kv[NLMON_PROPS_MAX];

        for (size_t i = 0; i < ev->n_props; i++)
                kv[i] = (struct udevice_kv){ ev->props[i].key, ev->props[i].value };
        return udevice_new_from_event(ev->devpath, kv, ev->n_props, ret);
}

/* Wait for a processed event of the device; *ret is the device as the
 * event describes it. */
static int wait_for_event(int fd, const char *sysname, const char *subsystem, uint64_t usec,
                          struct udevice **ret)
{
        _cleanup_(nlmon_event_freep) struct nlmon_event *ev = nlmon_event_new();
        uint64_t deadline = usec == USEC_INFINITY ? USEC_INFINITY
                                                  : now_usec(CLOCK_MONOTONIC) + usec;

        if (!ev)
                return log_error_errno(-ENOMEM, "Out of memory.");
        for (;;) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                uint64_t now = now_usec(CLOCK_MONOTONIC);
                int timeout = deadline == USEC_INFINITY ? -1
                              : deadline <= now        ? 0
                                                       : (int)MIN((deadline - now + 999) / 1000,
                                                                  (uint64_t)INT32_MAX);
                int r = poll(&p, 1, timeout);

                if (r < 0 && errno != EINTR)
                        return log_error_errno(negative_errno(), "Failed to wait for events: %m");
                if (r == 0)
                        return log_error_errno(-ETIMEDOUT,
                                               "Failed to wait for device to be initialized: %m");
                while ((r = nlmon_receive(fd, NLMON_GROUP_UDEV, ev)) != -EAGAIN) {
                        if (r < 0)
                                return log_error_errno(r, "Failed to receive device event: %m");
                        if (r > 0 && event_is_for(ev, sysname, subsystem))
                                return device_from_event(ev, ret);
                }
        }
}

/* -w: replace *d by its initialized form. */
static int wait_initialized(struct udevice **d, uint64_t usec)
{
        _cleanup_close_ int fd = -1;
        const char *sysname, *subsystem = NULL;
        struct udevice *n = NULL;
        int r;

        if (udevice_is_initialized(*d) > 0)
                return 0;
        r = udevice_get_subsystem(*d, &subsystem);
        if (r < 0 && r != -ENOENT)
                return log_error_errno(r, "%s: Failed to get subsystem: %m", (*d)->devpath);
        if (r < 0)
                subsystem = NULL;
        r = nlmon_open(NLMON_GROUP_UDEV, &fd);
        if (r < 0)
                return log_error_errno(r, "Failed to acquire monitor: %m");
        /* Check again: it may have been initialized before the monitor started. */
        if (udevice_is_initialized(*d) > 0)
                return 0;
        r = udevice_get_sysname(*d, &sysname);
        if (r < 0)
                return log_error_errno(r, "Out of memory.");
        r = wait_for_event(fd, sysname, subsystem, usec, &n);
        if (r < 0)
                return r;
        udevice_free(*d);
        *d = n;
        return 0;
}

/* ---------------------------------------------------------------- options */

enum {
        ARG_PROPERTY = 0x100,
        ARG_VALUE,
        ARG_NO_PAGER,
};

static const struct option info_options[] = {
        { "attribute-walk", no_argument, NULL, 'a' },
        { "tree", no_argument, NULL, 't' },
        { "cleanup-db", no_argument, NULL, 'c' },
        { "device-id-of-file", required_argument, NULL, 'd' },
        { "export", no_argument, NULL, 'x' },
        { "export-db", no_argument, NULL, 'e' },
        { "export-prefix", required_argument, NULL, 'P' },
        { "help", no_argument, NULL, 'h' },
        { "name", required_argument, NULL, 'n' },
        { "path", required_argument, NULL, 'p' },
        { "property", required_argument, NULL, ARG_PROPERTY },
        { "query", required_argument, NULL, 'q' },
        { "root", no_argument, NULL, 'r' },
        { "value", no_argument, NULL, ARG_VALUE },
        { "version", no_argument, NULL, 'V' },
        { "wait-for-initialization", optional_argument, NULL, 'w' },
        { "no-pager", no_argument, NULL, ARG_NO_PAGER },
        {}
};

static int parse_query(const char *s, enum info_query *ret)
{
        if (streq(s, "property") || streq(s, "env"))
                *ret = QUERY_PROPERTY;
        else if (streq(s, "name"))
                *ret = QUERY_NAME;
        else if (streq(s, "symlink"))
                *ret = QUERY_SYMLINK;
        else if (streq(s, "path"))
                *ret = QUERY_PATH;
        else if (streq(s, "all"))
                *ret = QUERY_ALL;
        else
                return log_error_errno(-EINVAL, "unknown query type");
        return 0;
}

/* "a,b,,c" adds a b c. An empty argument turns the filter on with no
 * names (nothing is shown); "," alone changes nothing, as in systemd. */
static int add_property_names(struct info_args *a, const char *arg)
{
        _cleanup_free_ char *copy = strdup(arg);
        char *save = NULL;

        if (!copy)
                return log_error_errno(-ENOMEM, "Out of memory.");
        if (!*arg)
                a->filter_properties = true;
        for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
                if (strlist_add_unique(&a->properties, w) < 0)
                        return log_error_errno(-ENOMEM, "Out of memory.");
                a->filter_properties = true;
        }
        return 0;
}

/* -n NAME / -p PATH: the prefix is added unless the argument starts with it. */
static int add_prefixed_device(struct info_args *a, const char *prefix, const char *arg)
{
        _cleanup_free_ char *path = NULL;

        if (path_startswith(arg, prefix))
                path = strdup(arg);
        else if (asprintf(&path, "%s%s", prefix, arg) < 0)
                path = NULL;
        if (!path || strlist_add(&a->devices, path) < 0)
                return log_error_errno(-ENOMEM, "Out of memory.");
        return 0;
}

/* 1: go on, 0: done (help, version, -e, -c), <0: error. */
static int parse_option(struct info_args *a, int c)
{
        int r;

        switch (c) {
        case ARG_PROPERTY:
                return (r = add_property_names(a, optarg)) < 0 ? r : 1;
        case ARG_VALUE:
                a->value = true;
                return 1;
        case 'n':
        case 'p':
                r = add_prefixed_device(a, c == 'n' ? "/dev/" : "/sys/", optarg);
                return r < 0 ? r : 1;
        case 'q':
                a->action = ACTION_QUERY;
                return (r = parse_query(optarg, &a->query)) < 0 ? r : 1;
        case 'r':
                a->root = true;
                return 1;
        case 'd':
                a->action = ACTION_DEVICE_ID_FILE;
                a->id_file = optarg;
                return 1;
        case 'a':
                a->action = ACTION_ATTRIBUTE_WALK;
                return 1;
        case 't':
                a->action = ACTION_TREE;
                return 1;
        case 'e':
                r = info_export_db();
                return r < 0 ? r : 0;
        case 'c':
                cleanup_db();
                return 0;
        case 'x':
                a->export = true;
                return 1;
        case 'P':
                a->export = true;
                a->export_prefix = optarg;
                return 1;
        case 'w':
                a->wait_usec = USEC_INFINITY;
                if (optarg && (r = udevadm_parse_sec(optarg, &a->wait_usec)) < 0)
                        return log_error_errno(r, "Failed to parse timeout value: %m");
                return 1;
        case ARG_NO_PAGER:
                return 1;
        case 'V':
                return udevadm_print_version();
        case 'h':
                return help();
        default:
                return -EINVAL;
        }
}

static int parse_argv(int argc, char *argv[], struct info_args *a)
{
        int c, r;

        while ((c = getopt_long(argc, argv, "atced:n:p:q:rxP:w::Vh", info_options, NULL)) >= 0) {
                r = parse_option(a, c);
                if (r <= 0)
                        return r;
        }
        return 1;
}

/* ---------------------------------------------------------------- main */

static int find_device(const char *arg, struct udevice **ret)
{
        int r = udevice_find(arg, NULL, ret);

        if (r == -EINVAL)
                return log_error_errno(r, "Bad argument \"%s\", expected an absolute path in "
                                          "/dev/ or /sys/ or a unit name: %m", arg);
        if (r < 0)
                return log_error_errno(r, "Unknown device \"%s\": %m", arg);
        return 0;
}

static int run_one(const struct info_args *a, struct udevice **d)
{
        int r = 0, k;

        if (a->wait_usec > 0) {
                r = wait_initialized(d, a->wait_usec);
                if (r < 0)
                        return r;
        }
        if (a->action == ACTION_QUERY)
                r = query_device(a, *d);
        else if (a->action == ACTION_ATTRIBUTE_WALK)
                r = info_attribute_walk(*d);
        else
                r = info_print_tree(*d);
        if (r < 0)
                return r;
        k = info_check_db(*d);
        return k < 0 ? 1 : 0; /* reported; remembered by the caller */
}

static int check_args(const struct info_args *a)
{
        if (a->action != ACTION_TREE && a->devices.n == 0)
                return log_error_errno(-EINVAL, "A device name or path is required");
        if ((a->action == ACTION_ATTRIBUTE_WALK || a->action == ACTION_TREE) &&
            a->devices.n > 1)
                return log_error_errno(-EINVAL, "Only one device may be specified with "
                                                "-a/--attribute-walk and -t/--tree");
        if (a->export && a->value)
                return log_error_errno(-EINVAL, "-x/--export or -P/--export-prefix cannot be "
                                                "used with --value");
        return 0;
}

static int run(struct info_args *a, int argc, char *argv[])
{
        int r, ret = 0;

        if (a->action == ACTION_DEVICE_ID_FILE) {
                if (optind < argc)
                        return log_error_errno(-EINVAL, "Positional arguments are not allowed "
                                                        "with -d/--device-id-of-file.");
                return stat_device(a->id_file, a->export, a->export_prefix);
        }
        for (int i = optind; i < argc; i++)
                if (strlist_add(&a->devices, argv[i]) < 0)
                        return log_error_errno(-ENOMEM, "Out of memory.");
        r = check_args(a);
        if (r < 0)
                return r;
        if (a->devices.n == 0)
                return info_print_tree(NULL);
        for (size_t i = 0; i < a->devices.n; i++) {
                _cleanup_(udevice_freep) struct udevice *d = NULL;

                r = find_device(a->devices.items[i], &d);
                if (r >= 0)
                        r = run_one(a, &d);
                if (r < 0 && !d)
                        ret = ret ?: r; /* unknown device: go on with the others */
                else if (r < 0)
                        return r;
                else if (r > 0)
                        ret = ret ?: -EBADMSG;
        }
        return ret;
}

int info_main(int argc, char *argv[])
{
        struct info_args a = { .action = ACTION_QUERY, .query = QUERY_ALL };
        int r;

        r = parse_argv(argc, argv, &a);
        if (r > 0)
                r = run(&a, argc, argv);
        info_args_done(&a);
        return r < 0 ? r : 0;
}
