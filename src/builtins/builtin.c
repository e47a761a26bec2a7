/* threads: any */
#include <errno.h>
#include <string.h>

#include "builtins/builtin.h"
#include "shared/log.h"

static const char *const names[_BUILTIN_MAX] = {
        [BUILTIN_BLKID] = "blkid",       [BUILTIN_BTRFS] = "btrfs",
        [BUILTIN_HWDB] = "hwdb",         [BUILTIN_INPUT_ID] = "input_id",
        [BUILTIN_KEYBOARD] = "keyboard", [BUILTIN_KMOD] = "kmod",
        [BUILTIN_NET_ID] = "net_id",     [BUILTIN_NET_SETUP_LINK] = "net_setup_link",
        [BUILTIN_PATH_ID] = "path_id",   [BUILTIN_USB_ID] = "usb_id",
        [BUILTIN_UACCESS] = "uaccess",
};

enum builtin_id builtin_lookup(const char *name)
{
        for (int i = 0; i < _BUILTIN_MAX; i++)
                if (strcmp(names[i], name) == 0)
                        return (enum builtin_id)i;
        return _BUILTIN_INVALID;
}

enum builtin_id builtin_lookup_prefix(const char *word, size_t len)
{
        if (len == 0)
                return _BUILTIN_INVALID;
        for (int i = 0; i < _BUILTIN_MAX; i++)
                if (strncmp(names[i], word, len) == 0)
                        return (enum builtin_id)i;
        return _BUILTIN_INVALID;
}

const char *builtin_name(enum builtin_id id)
{
        return id >= 0 && id < _BUILTIN_MAX ? names[id] : NULL;
}

bool builtin_run_once(enum builtin_id id)
{
        return id == BUILTIN_BLKID || id == BUILTIN_PATH_ID || id == BUILTIN_USB_ID;
}

int builtin_run(enum builtin_id id, struct udev_event *ev, int argc, char *argv[], bool test)
{
        (void)ev;
        (void)argc;
        (void)argv;
        (void)test;
        log_ratelimited(LOG_NOTICE, "builtin %s is not implemented yet", builtin_name(id));
        return -EOPNOTSUPP;
}
