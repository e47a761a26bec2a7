/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (the tables are constant; builtins run on worker threads) */
/* Builtin name table, lookup, dispatch and the
 * property helper shared by every builtin. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "builtins/builtin.h"
#include "builtins/builtins-internal.h"
#include "event/udev-event.h"
#include "shared/log.h"

typedef int (*builtin_fn)(struct udev_event *ev, int argc, char *argv[], bool test);

static const struct {
        const char *name;
        builtin_fn run;
} builtins[_BUILTIN_MAX] = {
        [BUILTIN_BLKID] = { "blkid", builtin_blkid },
        [BUILTIN_BTRFS] = { "btrfs", builtin_btrfs },
        [BUILTIN_HWDB] = { "hwdb", builtin_hwdb },
        [BUILTIN_INPUT_ID] = { "input_id", builtin_input_id },
        [BUILTIN_KEYBOARD] = { "keyboard", builtin_keyboard },
        [BUILTIN_KMOD] = { "kmod", builtin_kmod },
        [BUILTIN_NET_ID] = { "net_id", builtin_net_id },
        [BUILTIN_NET_SETUP_LINK] = { "net_setup_link", builtin_net_setup_link },
        [BUILTIN_PATH_ID] = { "path_id", builtin_path_id },
        [BUILTIN_USB_ID] = { "usb_id", builtin_usb_id },
        [BUILTIN_UACCESS] = { "uaccess", builtin_uaccess },
        [BUILTIN_NET_DRIVER] = { "net_driver", builtin_net_driver },
};

enum builtin_id builtin_lookup(const char *name)
{
        for (int i = 0; i < _BUILTIN_MAX; i++)
                if (strcmp(builtins[i].name, name) == 0)
                        return (enum builtin_id)i;
        return _BUILTIN_INVALID;
}

enum builtin_id builtin_lookup_prefix(const char *word, size_t len)
{
        if (len == 0)
                return _BUILTIN_INVALID;
        for (int i = 0; i < _BUILTIN_MAX; i++)
                if (strncmp(builtins[i].name, word, len) == 0)
                        return (enum builtin_id)i;
        return _BUILTIN_INVALID;
}

const char *builtin_name(enum builtin_id id)
{
        return id >= 0 && id < _BUILTIN_MAX ? builtins[id].name : NULL;
}

bool builtin_run_once(enum builtin_id id)
{
        return id == BUILTIN_BLKID || id == BUILTIN_PATH_ID || id == BUILTIN_USB_ID;
}

int builtin_run(enum builtin_id id, struct udev_event *ev, int argc, char *argv[], bool test)
{
        if (id < 0 || id >= _BUILTIN_MAX || !ev || argc < 1 || !argv || !argv[0])
                return -EINVAL;
        return builtins[id].run(ev, argc, argv, test);
}

int builtin_add_property(struct udev_event *ev, bool test, const char *key, const char *value)
{
        int r;

        if (value)
                r = proplist_set(&ev->props, key, value, false);
        else {
                r = proplist_unset(&ev->props, key);
                if (r == -ENOENT)
                        r = 0;
        }
        if (r < 0)
                return log_debug_errno(r, "Failed to add property '%s%s%s': %m", key,
                                       value ? "=" : "", value ? value : "");
        if (test)
                printf("%s=%s\n", key, value ? value : "");
        return 0;
}

void builtins_thread_exit(void)
{
        builtin_hwdb_thread_exit();
        builtin_kmod_thread_exit();
        builtin_net_setup_link_thread_exit();
}

bool builtins_should_reload(void)
{
        /* Evaluate all: each takes its own snapshot of the data only on reload. */
        bool hwdb = builtin_hwdb_should_reload();
        bool kmod = builtin_kmod_should_reload();
        bool link = builtin_net_setup_link_should_reload();

        return hwdb || kmod || link;
}

void builtins_reload(void)
{
        builtin_hwdb_reload();
        builtin_kmod_reload();
        builtin_net_setup_link_reload();
}
