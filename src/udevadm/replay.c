/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (udevadm is single-threaded) */
/* udevadm replay FILE [--rules-dir=DIR]...: the events of a recording
 * (record.c) run through the rules offline, over a private sysfs tree
 * rebuilt from the recording (replay-tree.h) and a private database, with
 * the event pipeline of `udevadm test` in dry-run mode: no program runs,
 * builtins that would touch the system do not run, nothing outside the
 * private tree is written. Prints per event the device node, links,
 * properties, the programs and builtins that would have run and the RUN
 * list, deterministically (udevadm(8) UDEVADM REPLAY). */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtins/builtin.h"
#include "device/db.h"
#include "device/device.h"
#include "device/node.h"
#include "event/udev-event.h"
#include "rules/event-exec.h"
#include "rules/rules.h"
#include "shared/compat.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "udevadm/record-file.h"
#include "udevadm/replay-tree.h"
#include "udevadm/udevadm.h"

#define REPLAY_LIST_MAX 65536

struct replay_args {
        const char *dirs[RULES_DIRS_MAX + 1];
        size_t n_dirs;
        const char *file;
};

static int help(void)
{
        printf("%s replay [OPTIONS] FILE\n\n"
               "Run the rules over the events of a recording, offline.\n\n"
               "  -h --help                 Show this help\n"
               "  -V --version              Show package version\n"
               "     --rules-dir=DIR        Read rules from DIR (repeatable)\n",
               program_invocation_short_name);
        return 0;
}

enum { ARG_RULES_DIR = 0x100 };

static int parse_argv(int argc, char *argv[], struct replay_args *a)
{
        static const struct option options[] = {
                { "rules-dir", required_argument, NULL, ARG_RULES_DIR },
                { "version", no_argument, NULL, 'V' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        int c;

        while ((c = getopt_long(argc, argv, "Vh", options, NULL)) >= 0) {
                switch (c) {
                case ARG_RULES_DIR:
                        if (a->n_dirs >= RULES_DIRS_MAX)
                                return log_error_errno(-E2BIG, "Too many --rules-dir= options");
                        a->dirs[a->n_dirs++] = optarg;
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
        a->file = argv[optind];
        if (!a->file)
                return log_error_errno(-EINVAL, "Recording file missing.");
        if (argv[optind + 1])
                return log_error_errno(-EINVAL, "Extraneous argument: %s", argv[optind + 1]);
        return 1;
}

/* The builtins that only read the device's sysfs view or the hwdb run; the
 * others would touch this machine (load modules, probe or lock the node,
 * ask or configure the interface, set ACLs). */
static bool builtin_offline_safe(int id)
{
        switch (id) {
        case BUILTIN_HWDB:
        case BUILTIN_INPUT_ID:
        case BUILTIN_NET_ID:
        case BUILTIN_PATH_ID:
        case BUILTIN_USB_ID:
                return true;
        default:
                return false;
        }
}

/* PROGRAM, IMPORT{program}: not run; the rules see exit status 1. */
static int replay_spawn(void *userdata, const char *cmd, char *const envp[], bool is_run,
                        uint64_t deadline_usec, char *out, size_t out_size, bool *truncated)
{
        printf("  program %s (not run)\n", cmd);
        return 1;
}

static int replay_builtin(void *userdata, int id, const char *cmd)
{
        if (builtin_offline_safe(id))
                return 1;
        printf("  builtin %s (not run)\n", cmd);
        return -EOPNOTSUPP;
}

static void print_property(const char *key, const char *value, void *userdata)
{
        /* the time of the replay, not of the recorded event */
        if (streq(key, "USEC_INITIALIZED"))
                return;
        printf("  property %s=%s\n", key, value);
}

static void print_result(struct udev_event *ev, char *list)
{
        char buf[NODE_PATH_MAX];
        const char *devnode = udev_event_devnode(ev, buf, sizeof(buf));
        unsigned major = 0, minor = 0;

        if (ev->name)
                printf("  name %s\n", ev->name);
        if (devnode && device_get_devnum(ev->dev, &major, &minor) >= 0 && major > 0) {
                printf("  node %s %u:%u", devnode, major, minor);
                if (ev->uid_set)
                        printf(" owner %u", (unsigned)ev->uid);
                if (ev->gid_set)
                        printf(" group %u", (unsigned)ev->gid);
                if (ev->mode_set)
                        printf(" mode %04o", (unsigned)ev->mode);
                printf("\n");
        }
        for (size_t i = 0; i < ev->devlinks.n; i++)
                printf("  link %s\n", ev->devlinks.items[i]);
        if (udev_event_foreach_property(ev, list, REPLAY_LIST_MAX, print_property, NULL) < 0)
                printf("  warning: a list property was too long to print\n");
        for (size_t i = 0; i < ev->n_run; i++)
                printf("  run %s%s\n", ev->run[i].builtin ? "builtin " : "", ev->run[i].cmd);
}

/* One event through the rules; its database record kept for later ones. */
static int replay_event(const struct replay_tree *t, const struct rules *rules,
                        const struct uevent *u, char *list)
{
        static const struct node_mac no_mac = {};
        struct device_ctx *ctx = NULL;
        struct db_record old = {}, rec = {};
        struct udev_event ev = {};
        struct device *dev;
        bool ev_ready = false;
        int r;

        printf("event %" PRIu64 " %s %s (%s)\n", u->seqnum, uevent_action_to_string(u->action),
               u->devpath, u->subsystem);
        r = device_ctx_new(&t->roots, &ctx);
        if (r >= 0)
                r = device_from_uevent(ctx, u, &dev);
        if (r >= 0)
                r = udev_event_init(&ev, ctx, dev, u, u->action);
        if (r < 0)
                goto out;
        ev_ready = true;
        r = db_read(t->run, u->id, &old);
        if (r < 0 && r != -ENOENT)
                log_warning_errno(r, "%s: ignoring unreadable database entry: %m", u->id);
        ev.old_db = &old;
        ev.spawner = (struct udev_spawner){ .spawn = replay_spawn, .builtin = replay_builtin };
        ev.dry_run = true;
        ev.offline = true;
        ev.mac = &no_mac;
        r = udev_event_execute(&ev, rules);
        if (r < 0)
                goto out;
        print_result(&ev, list);
        /* the database the next events of the device see */
        if (u->action == UEVENT_ACTION_REMOVE) {
                r = db_delete(t->run, u->id);
        } else {
                r = udev_event_db_record(&ev, &rec);
                if (r >= 0)
                        r = db_write(t->run, u->id, &rec, u->major > 0,
                                     u->ifindex > 0);
                if (r < 0)
                        log_warning_errno(r, "%s: failed to keep the database entry: %m", u->id);
                r = 0;
        }
out:
        if (r < 0)
                printf("  failed %s\n", errno_name(-r) ?: "error");
        printf("\n");
        db_record_clear(&rec);
        db_record_clear(&old);
        if (ev_ready)
                udev_event_done(&ev);
        device_ctx_free(ctx);
        return r;
}

static int replay(const struct replay_args *a, const struct rules *rules, FILE *f)
{
        _cleanup_free_ char *list = malloc(REPLAY_LIST_MAX);
        struct record_reader rd;
        struct replay_tree t;
        struct record_item it;
        uint64_t events = 0, failed = 0;
        int r;

        if (!list)
                return log_error_errno(-ENOMEM, "Out of memory.");
        r = replay_tree_new(&t);
        if (r < 0) {
                log_error_errno(r, "Failed to create the replay's directory: %m");
                goto out;
        }
        r = record_reader_begin(&rd, f, a->file);
        while (r >= 0 && (r = record_read_next(&rd, &it)) > 0) {
                int q = replay_tree_apply(&t, &it);
                if (q < 0) {
                        r = log_error_errno(q, "%s:%u: cannot rebuild this sysfs entry: %m",
                                            a->file, it.line);
                        break;
                }
                if (it.type != RECORD_ITEM_EVENT)
                        continue;
                events++;
                if (replay_event(&t, rules, it.uevent, list) < 0)
                        failed++;
        }
        if (r == -EBADMSG)
                log_error("%s", rd.error);
        else if (r < 0 && r != -ENOMEM)
                log_error_errno(r, "Failed to read %s: %m", a->file);
        record_reader_done(&rd);
        if (r >= 0)
                printf("%" PRIu64 " events replayed, %" PRIu64 " failed\n", events, failed);
out:
        replay_tree_remove(&t);
        return r;
}

int replay_main(int argc, char *argv[])
{
        struct replay_args a = {};
        _cleanup_(rules_unrefp) struct rules *rules = NULL;
        _cleanup_(fclosep) FILE *f = NULL;
        int r;

        r = parse_argv(argc, argv, &a);
        if (r <= 0)
                return r;
        f = fopen(a.file, "re");
        if (!f)
                return log_error_errno(errno, "Failed to open %s: %m", a.file);
        struct rules_load_options opts = { .dirs = a.n_dirs > 0 ? a.dirs : NULL };
        r = rules_load(&opts, &rules);
        if (r < 0)
                return log_error_errno(r, "Failed to read udev rules: %m");
        return replay(&a, rules, f);
}
