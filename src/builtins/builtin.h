/* threads: any (the table is constant; builtins run on worker threads) */
#pragma once
/* The builtin commands (IMPORT{builtin}, RUN{builtin}), ../shared/docs/builtins.md.
 * This table is what the rules compiler validates names against; the
 * implementations arrive with the builtins issue. */

#include <stdbool.h>

enum builtin_id {
        BUILTIN_BLKID,
        BUILTIN_BTRFS,
        BUILTIN_HWDB,
        BUILTIN_INPUT_ID,
        BUILTIN_KEYBOARD,
        BUILTIN_KMOD,
        BUILTIN_NET_ID,
        BUILTIN_NET_SETUP_LINK,
        BUILTIN_PATH_ID,
        BUILTIN_USB_ID,
        BUILTIN_UACCESS,
        _BUILTIN_MAX,
        _BUILTIN_INVALID = -1,
};

/* Exact name lookup; -1 if unknown. */
enum builtin_id builtin_lookup(const char *name);
/* rules.md §7.3: IMPORT{program}="word ..." becomes IMPORT{builtin} if a
 * builtin name starts with `word` (first in table order); -1 otherwise. */
enum builtin_id builtin_lookup_prefix(const char *word, size_t len);
const char *builtin_name(enum builtin_id id);
/* blkid, path_id, usb_id run at most once per event. */
bool builtin_run_once(enum builtin_id id);

struct udev_event;
/* Run a builtin with argv[0] = its name. Returns >= 0 on success, -errno on
 * failure. Not yet implemented builtins return -EOPNOTSUPP (logged once). */
int builtin_run(enum builtin_id id, struct udev_event *ev, int argc, char *argv[], bool test);
