/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (the table is constant; builtins run on worker threads) */
#pragma once
/* The builtin commands (IMPORT{builtin}, RUN{builtin}; udevd(8) Builtins).
 * This table is what the rules compiler validates names against; the
 * implementations are in src/builtins/<name>.c (builtins-internal.h). */

#include <stdbool.h>
#include <stddef.h>

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
        /* last: a word "net" still finds net_id first (systemd 252's order) */
        BUILTIN_NET_DRIVER,
        _BUILTIN_MAX,
        _BUILTIN_INVALID = -1,
};

/* Exact name lookup; -1 if unknown. */
enum builtin_id builtin_lookup(const char *name);
/* As in systemd, at load time IMPORT{program}="word ..." silently becomes
 * IMPORT{builtin} if a builtin name starts with `word` (first in table
 * order); -1 otherwise. */
enum builtin_id builtin_lookup_prefix(const char *word, size_t len);
const char *builtin_name(enum builtin_id id);
/* blkid, path_id, usb_id run at most once per event. */
bool builtin_run_once(enum builtin_id id);

struct udev_event;
/* Run a builtin with argv[0] = its name (argv[argc] == NULL; the builtin may
 * permute argv[1..argc-1] while parsing options). Returns >= 0 on success,
 * -errno on failure. `test`: udevadm test-builtin — print each property set
 * as "KEY=VALUE" on stdout. */
int builtin_run(enum builtin_id id, struct udev_event *ev, int argc, char *argv[], bool test);

/* Set KEY=VALUE on the event (proplist_set(&ev->props, ..., from_kernel=false));
 * with `test` also print "KEY=VALUE\n" to stdout like systemd's
 * udev_builtin_add_property(). value NULL removes the key (prints "KEY=").
 * 0 or -errno (-ENOMEM, -E2BIG). */
int builtin_add_property(struct udev_event *ev, bool test, const char *key, const char *value);

/* Per-thread library state of the builtins (libkmod context, hwdb handle,
 * .link configuration) is created lazily on first use in each thread.
 * Release the calling thread's state; every worker thread calls this before
 * it exits. Safe to call when nothing was created. */
void builtins_thread_exit(void);
/* True if the data behind some builtin changed since the last
 * builtins_reload() (or since first use in this process): hwdb.bin replaced,
 * module index or modprobe.d changed, .link files changed. Any thread. */
bool builtins_should_reload(void);
/* Take the current data as the new baseline and make every thread recreate
 * its state on its next use (a generation counter each thread's state is
 * compared with). Any thread. (Each thread also notices a replaced hwdb.bin
 * or module index by itself, looking at most every 3 seconds; the manager's
 * reload makes it immediate and consistent.) */
void builtins_reload(void);
