/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (udevadm is single-threaded) */
/* udevadm test: see test.h. Output follows systemd 252's udevadm test
 * (udevadm(8) UDEVADM TEST). */

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/sysmacros.h>

#include "device/db.h"
#include "device/device.h"
#include "device/node.h"
#include "rules/event-exec.h"
#include "rules/rules-exec.h"
#include "rules/rules-trace.h"
#include "rules/rules.h"
#include "event/udev-event.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "shared/time-util.h"
#include "udevadm/test.h"
#include "udevadm/udevadm.h"

#define TEST_TIMEOUT_USEC (60 * USEC_PER_SEC) /* as systemd's udevadm test */
#define TEST_LIST_MAX 65536

struct test_args {
        enum uevent_action action;
        const char *dirs[RULES_DIRS_MAX + 1];
        size_t n_dirs;
        enum resolve_names resolve_names;
        bool apply;
        bool explain;
        const char *device;
};

static int help(void)
{
        printf("%s test [OPTIONS] DEVPATH|SYSPATH\n\n"
               "Test an event run.\n\n"
               "  -h --help                            Show this help\n"
               "  -V --version                         Show package version\n"
               "  -a --action=ACTION|help              Set action string\n"
               "  -N --resolve-names=early|late|never  When to resolve names\n"
               "     --rules-dir=DIR                   Read rules from DIR (repeatable)\n"
               "     --apply                           Perform the event for real: device\n"
               "                                       node, permissions, links, database, RUN\n"
               "     --explain                         Print what every rule line did instead\n"
               "                                       of the properties\n",
               program_invocation_short_name);
        return 0;
}

enum {
        ARG_RULES_DIR = 0x100,
        ARG_APPLY,
        ARG_EXPLAIN,
};

/* 1 = go on, 0 = done (help), <0 error */
static int parse_argv(int argc, char *argv[], struct test_args *a)
{
        static const struct option options[] = {
                { "action", required_argument, NULL, 'a' },
                { "resolve-names", required_argument, NULL, 'N' },
                { "rules-dir", required_argument, NULL, ARG_RULES_DIR },
                { "apply", no_argument, NULL, ARG_APPLY },
                { "explain", no_argument, NULL, ARG_EXPLAIN },
                { "version", no_argument, NULL, 'V' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        int c;

        while ((c = getopt_long(argc, argv, "a:N:Vh", options, NULL)) >= 0) {
                switch (c) {
                case 'a': {
                        int r = udevadm_parse_action(optarg, &a->action);
                        if (r <= 0)
                                return r < 0 ? log_error_errno(r, "Invalid action '%s'", optarg)
                                             : 0;
                        break;
                }
                case 'N':
                        if (resolve_names_from_string(optarg, &a->resolve_names) < 0)
                                return log_error_errno(-EINVAL, "--resolve-names= must be early, "
                                                       "late or never");
                        break;
                case ARG_RULES_DIR:
                        if (a->n_dirs >= RULES_DIRS_MAX)
                                return log_error_errno(-E2BIG, "Too many --rules-dir= options");
                        a->dirs[a->n_dirs++] = optarg;
                        break;
                case ARG_APPLY:
                        a->apply = true;
                        break;
                case ARG_EXPLAIN:
                        a->explain = true;
                        break;
                case 'V':
                        udevadm_print_version();
                        return 0;
                case 'h':
                        return help();
                default:
                        return -EINVAL;
                }
        }
        a->device = argv[optind];
        if (!a->device)
                return log_error_errno(-EINVAL, "syspath parameter missing.");
        if (argv[optind + 1])
                return log_error_errno(-EINVAL, "Extraneous argument: %s", argv[optind + 1]);
        return 1;
}

/* DEVPATH ("/devices/..."), SYSPATH ("/sys/..."), or a device node. */
static int find_device(struct device_ctx *ctx, const char *arg, struct device **ret)
{
        char path[PATH_MAX];
        struct stat st;

        if (strncmp(arg, "/dev/", 5) == 0) {
                if (stat(arg, &st) < 0)
                        return -errno;
                if (!S_ISBLK(st.st_mode) && !S_ISCHR(st.st_mode))
                        return -ENODEV;
                return device_from_devnum(ctx, S_ISBLK(st.st_mode) ? 'b' : 'c',
                                          major(st.st_rdev), minor(st.st_rdev), ret);
        }
        if (strncmp(arg, "/sys/", 5) == 0 || streq(arg, "/sys"))
                return device_from_syspath(ctx, arg, ret);
        if (arg[0] != '/')
                return -EINVAL;
        if (snprintf(path, sizeof(path), "/sys%s", arg) >= (int)sizeof(path))
                return -ENAMETOOLONG;
        return device_from_syspath(ctx, path, ret);
}

static void print_property(const char *key, const char *value, void *userdata)
{
        printf("%s=%s\n", key, value);
}

static void format_id(char *buf, size_t size, bool set, unsigned v)
{
        if (set)
                snprintf(buf, size, "%u", v);
        else
                snprintf(buf, size, "(default)");
}

/* What the node handling did or would do (stderr, like the rule log). */
static void log_summary(struct udev_event *ev, bool apply)
{
        char buf[NODE_PATH_MAX], u[32], g[32], m[32];
        const char *devnode = udev_event_devnode(ev, buf, sizeof(buf));
        const char *name = device_sysname(ev->dev);
        const char *verb = apply ? "" : " (not applied)";

        if (ev->name)
                log_info("%s: NAME '%s'%s", name, ev->name, verb);
        if (!devnode)
                return;
        format_id(u, sizeof(u), ev->uid_set, ev->uid);
        format_id(g, sizeof(g), ev->gid_set, ev->gid);
        if (ev->mode_set)
                snprintf(m, sizeof(m), "%04o", (unsigned)ev->mode);
        else
                snprintf(m, sizeof(m), "(default)");
        log_info("%s: node %s: OWNER %s, GROUP %s, MODE %s%s", name, devnode, u, g, m, verb);
        for (size_t i = 0; i < ev->devlinks.n; i++)
                log_info("%s: link %s -> %s%s", name, ev->devlinks.items[i], devnode, verb);
        for (size_t i = 0; i < ev->seclabels.n; i++)
                log_info("%s: SECLABEL %s%s", name, ev->seclabels.items[i], verb);
}

/* As devtmpfs: the node exists before udev sees an add event. */
static int create_node(struct udev_event *ev)
{
        const struct device_roots *roots = device_ctx_roots(ev->ctx);
        char buf[NODE_PATH_MAX];
        struct node_device nd = {};
        const char *v;
        mode_t mode = 0600;
        uid_t uid = 0;
        gid_t gid = 0;
        int r;

        if (device_get_devnum(ev->dev, &nd.major, &nd.minor) < 0 || nd.major == 0)
                return 0;
        nd.devnode = udev_event_devnode(ev, buf, sizeof(buf));
        if (!nd.devnode)
                return 0;
        (void)device_get_subsystem(ev->dev, &nd.subsystem);
        if ((v = proplist_get(&ev->props, "DEVMODE")))
                mode = (mode_t)strtoul(v, NULL, 8) & 07777;
        if ((v = proplist_get(&ev->props, "DEVUID")))
                uid = (uid_t)strtoul(v, NULL, 10);
        if ((v = proplist_get(&ev->props, "DEVGID")))
                gid = (gid_t)strtoul(v, NULL, 10);
        r = node_create_devnode(roots, &nd, mode, uid, gid);
        if (r < 0)
                return log_error_errno(r, "Failed to create device node %s: %m", nd.devnode);
        if (r == 0)
                log_debug("Created device node %s (%u:%u, mode %04o)", nd.devnode, nd.major,
                          nd.minor, (unsigned)mode);
        return 0;
}

static int remove_node(struct udev_event *ev)
{
        const struct device_roots *roots = device_ctx_roots(ev->ctx);
        char buf[NODE_PATH_MAX];
        struct node_device nd = {};
        int r;

        if (device_get_devnum(ev->dev, &nd.major, &nd.minor) < 0 || nd.major == 0)
                return 0;
        nd.devnode = udev_event_devnode(ev, buf, sizeof(buf));
        if (!nd.devnode)
                return 0;
        (void)device_get_subsystem(ev->dev, &nd.subsystem);
        r = node_remove_devnode(roots, &nd);
        if (r < 0)
                return log_error_errno(r, "Failed to remove device node %s: %m", nd.devnode);
        return 0;
}

static int run_test(const struct test_args *a, struct rules *rules)
{
        _cleanup_(rules_trace_freep) struct rules_trace *trace = NULL;
        static const struct device_roots roots = { .sys = "/sys", .dev = "/dev",
                                                   .run = UDEV_RUN_DIR };
        _cleanup_free_ char *list = NULL;
        struct spawn_direct sd = { .timeout_signal = SIGKILL };
        struct device_ctx *ctx = NULL;
        struct db_record old = {};
        struct udev_event ev = {};
        struct node_mac mac;
        struct device *dev;
        const char *id;
        bool ev_ready = false;
        int r;

        r = device_ctx_new(&roots, &ctx);
        if (r < 0)
                goto out;
        r = find_device(ctx, a->device, &dev);
        if (r < 0) {
                log_error_errno(r, "Failed to open device '%s': %m", a->device);
                goto out;
        }
        r = udev_event_init(&ev, ctx, dev, NULL, a->action);
        if (r < 0)
                goto out;
        ev_ready = true;
        if (device_get_id(dev, &id) >= 0) {
                r = db_read(roots.run, id, &old);
                if (r < 0 && r != -ENOENT)
                        log_warning_errno(r, "%s: ignoring unreadable database entry: %m", id);
        }
        ev.old_db = &old;
        ev.spawner = spawn_direct_spawner(&sd);
        ev.start_usec = now_usec(CLOCK_MONOTONIC);
        ev.timeout_usec = TEST_TIMEOUT_USEC;
        ev.dry_run = !a->apply;
        node_mac_detect(roots.sys, &mac);
        ev.mac = &mac;
        if (a->explain) {
                r = rules_trace_new(RULES_TRACE_SIZE_DEFAULT, RULES_TRACE_LINE_TIMES, &trace);
                if (r < 0)
                        goto out;
                ev.trace = trace;
        }

        if (a->apply && a->action != UEVENT_ACTION_REMOVE) {
                r = create_node(&ev);
                if (r < 0)
                        goto out;
        }
        r = udev_event_execute(&ev, rules);
        if (r < 0)
                log_error_errno(r, "%s: processing the event failed: %m", device_sysname(dev));
        log_summary(&ev, a->apply);
        if (r >= 0 && a->apply)
                rules_execute_run(&ev);
        if (a->apply && a->action == UEVENT_ACTION_REMOVE) {
                int q = remove_node(&ev);
                if (r >= 0)
                        r = q;
        }

        if (trace) {
                int q = rules_trace_format(trace, rules, 0, stdout);
                if (q < 0 && r >= 0)
                        r = q;
                goto out;
        }
        list = malloc(TEST_LIST_MAX);
        if (!list) {
                r = -ENOMEM;
                goto out;
        }
        if (udev_event_foreach_property(&ev, list, TEST_LIST_MAX, print_property, NULL) < 0)
                log_warning("Some list properties were too long to print");
        for (size_t i = 0; i < ev.n_run; i++)
                printf("run: '%s'\n", ev.run[i].cmd);
out:
        if (ev_ready)
                udev_event_done(&ev);
        db_record_clear(&old);
        device_ctx_free(ctx);
        return r;
}

int test_main(int argc, char *argv[])
{
        struct test_args a = { .action = UEVENT_ACTION_ADD };
        _cleanup_(rules_unrefp) struct rules *rules = NULL;
        int r;

        r = parse_argv(argc, argv, &a);
        if (r <= 0)
                return r;
        /* Like systemd: debug logging unless $SYSTEMD_LOG_LEVEL says otherwise
         * (with --explain the trace says it all). */
        if (!getenv("SYSTEMD_LOG_LEVEL"))
                log_set_max_level(a.explain ? LOG_INFO : LOG_DEBUG);
        if (!a.apply && !a.explain)
                printf("This program is for debugging only, it does not run any program\n"
                       "specified by a RUN key. It may show incorrect results, because\n"
                       "some values may be different, or not available at a simulation run.\n"
                       "\n");
        struct rules_load_options opts = {
                .dirs = a.n_dirs > 0 ? a.dirs : NULL,
                .resolve_names = a.resolve_names,
        };
        r = rules_load(&opts, &rules);
        if (r < 0)
                return log_error_errno(r, "Failed to read udev rules: %m");
        return run_test(&a, rules);
}
