/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (udevadm is single-threaded) */
/* udevadm test-builtin: see udevadm-test-builtin.h. Behaviour of systemd
 * 252's udevadm-test-builtin.c: debug logging always on; COMMAND is looked
 * up by the prefix of its first word, as rules do; the device is the sysfs
 * device (DEVPATH gets "/sys" prepended) with the properties of its uevent
 * file, ACTION, and those of its database record (sd-device reads both
 * lazily); the builtin runs in test mode and prints what it sets; exit
 * status 1 if anything, the builtin included, failed. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtins/builtin.h"
#include "device/db.h"
#include "device/device.h"
#include "event/event-format.h"
#include "event/udev-event.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "udevadm/udevadm-test-builtin.h"
#include "udevadm/udevadm.h"

#define TB_ARGV_MAX 128        /* words of a builtin command line */
#define TB_COMMAND_MAX 8192    /* longest command line accepted */

static const char *const builtin_help[_BUILTIN_MAX] = {
        [BUILTIN_BLKID] = "Filesystem and partition probing",
        [BUILTIN_BTRFS] = "btrfs volume management",
        [BUILTIN_HWDB] = "Hardware database",
        [BUILTIN_INPUT_ID] = "Input device properties",
        [BUILTIN_KEYBOARD] = "Keyboard scan code to key mapping",
        [BUILTIN_KMOD] = "Kernel module loader",
        [BUILTIN_NET_ID] = "Network device properties",
        [BUILTIN_NET_SETUP_LINK] = "Configure network link",
        [BUILTIN_PATH_ID] = "Compose persistent device path",
        [BUILTIN_USB_ID] = "USB device properties",
        [BUILTIN_UACCESS] = "Manage device node user ACL",
        [BUILTIN_NET_DRIVER] = "Set driver for network device",
};

static int help(void)
{
        printf("%s test-builtin [OPTIONS] COMMAND DEVPATH\n\n"
               "Test a built-in command.\n\n"
               "  -h --help               Print this message\n"
               "  -V --version            Print version of the program\n\n"
               "  -a --action=ACTION|help Set action string\n"
               "Commands:\n",
               program_invocation_short_name);
        fflush(stdout);
        /* systemd lists the builtins on stderr */
        for (int i = 0; i < _BUILTIN_MAX; i++) {
                int b = i;

                /* listed where systemd 257 lists it, though last in the table */
                if (i == BUILTIN_NET_DRIVER)
                        continue;
                if (i == BUILTIN_NET_ID)
                        fprintf(stderr, "  %-14s  %s\n", builtin_name(BUILTIN_NET_DRIVER),
                                builtin_help[BUILTIN_NET_DRIVER]);
                fprintf(stderr, "  %-14s  %s\n", builtin_name((enum builtin_id)b),
                        builtin_help[b]);
        }
        return 0;
}

struct tb_args {
        enum uevent_action action;
        const char *command;
        const char *device;
};

/* 1 = go on, 0 = done (help, version), <0 error */
static int parse_argv(int argc, char *argv[], struct tb_args *a)
{
        static const struct option options[] = {
                { "action", required_argument, NULL, 'a' },
                { "version", no_argument, NULL, 'V' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        int c;

        while ((c = getopt_long(argc, argv, "a:Vh", options, NULL)) >= 0) {
                switch (c) {
                case 'a': {
                        int r = udevadm_parse_action(optarg, &a->action);
                        if (r <= 0)
                                return r < 0 ? log_error_errno(r, "Invalid action '%s'", optarg)
                                             : 0;
                        break;
                }
                case 'V':
                        udevadm_print_version();
                        return 0;
                case 'h':
                        return help();
                default:
                        return -EINVAL;
                }
        }
        if (argc != optind + 2)
                return log_error_errno(-EINVAL, "Expected two arguments: command string and "
                                       "device path.");
        a->command = argv[optind];
        a->device = argv[optind + 1];
        return 1;
}

/* The device's database record, if any, adds its properties, as sd-device
 * reads it when the properties are first asked for. */
static void merge_db(struct udev_event *ev, const struct device_roots *roots)
{
        struct db_record rec = {};
        const char *id;

        if (device_get_id(ev->dev, &id) < 0 || db_read(roots->run, id, &rec) < 0)
                return;
        for (size_t i = 0; i < rec.properties.n; i++) {
                const char *e = rec.properties.items[i];
                const char *eq = strchr(e, '=');
                char key[LINE_MAX];

                if (!eq || (size_t)(eq - e) >= sizeof(key))
                        continue;
                memcpy(key, e, (size_t)(eq - e));
                key[eq - e] = '\0';
                (void)proplist_set(&ev->props, key, eq + 1, false);
        }
        db_record_clear(&rec);
}

static int run_builtin(const struct tb_args *a, enum builtin_id id)
{
        static const struct device_roots roots = { .sys = "/sys", .dev = "/dev",
                                                   .run = UDEV_RUN_DIR };
        char path[PATH_MAX], cmd[TB_COMMAND_MAX];
        char *argv[TB_ARGV_MAX + 1];
        struct device_ctx *ctx = NULL;
        struct udev_event ev = {};
        struct device *dev;
        size_t argc;
        int r;

        if (strncmp(a->device, "/sys", 4) == 0 && (a->device[4] == '/' || !a->device[4]))
                r = snprintf(path, sizeof(path), "%s", a->device);
        else
                r = snprintf(path, sizeof(path), "/sys/%s", a->device);
        if (r < 0 || (size_t)r >= sizeof(path))
                return log_error_errno(-ENAMETOOLONG, "Failed to open device '%s': %m",
                                       a->device);
        if (strlen(a->command) >= sizeof(cmd))
                return log_error_errno(-E2BIG, "Command too long: %s", a->command);
        strcpy(cmd, a->command);
        r = udev_split_cmdline(cmd, argv, ARRAY_SIZE(argv), &argc);
        if (r < 0)
                return log_error_errno(r, "Failed to split command '%s': %m", a->command);

        r = device_ctx_new(&roots, &ctx);
        if (r < 0)
                return log_error_errno(r, "Failed to create device context: %m");
        r = device_from_syspath(ctx, path, &dev);
        if (r < 0) {
                log_error_errno(r == -ENOENT ? -ENODEV : r, "Failed to open device '%s': %m",
                                a->device);
                goto out;
        }
        r = udev_event_init(&ev, ctx, dev, NULL, a->action);
        if (r < 0) {
                log_error_errno(r, "Failed to set up the event: %m");
                goto out;
        }
        merge_db(&ev, &roots);
        r = builtin_run(id, &ev, (int)argc, argv, true);
        if (r < 0)
                log_debug_errno(r, "Builtin command '%s' fails: %m", a->command);
        udev_event_done(&ev);
out:
        device_ctx_free(ctx);
        return r;
}

int test_builtin_main(int argc, char *argv[])
{
        struct tb_args a = { .action = UEVENT_ACTION_ADD };
        enum builtin_id id;
        int r;

        log_set_max_level(LOG_DEBUG);
        r = parse_argv(argc, argv, &a);
        if (r <= 0)
                return r;
        id = builtin_lookup_prefix(a.command + strspn(a.command, " \t\n\r"),
                                   strcspn(a.command + strspn(a.command, " \t\n\r"),
                                           " \t\n\r"));
        if ((int)id < 0) {
                log_error("Unknown command '%s'", a.command);
                r = -EINVAL;
        } else
                r = run_builtin(&a, id);
        builtins_thread_exit();
        return r;
}
