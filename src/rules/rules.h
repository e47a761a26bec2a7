/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (a compiled snapshot is immutable and shared by all workers) */
#pragma once
/* The udev rules engine: public API.
 *
 *   rules_load()   reads the rules directories and compiles every file into an
 *                  immutable snapshot (struct rules). Errors are logged as
 *                  "file:line:column: message" and drop only the line; a
 *                  snapshot is always produced unless out of memory.
 *   rules_ref/unref  atomic refcount: workers hold a ref for one event; the
 *                  manager swaps in a new snapshot on reload; the last unref frees.
 *   rules_apply()  (rules-exec.c) evaluates a snapshot against one event
 *                  (struct udev_event, event/udev-event.h).
 *
 * Compile-time data layout (tokens, lines) is in rules/rules-internal.h. */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#define RULES_DIRS_MAX 16

enum resolve_names {
        RESOLVE_NAMES_EARLY, /* default: names without substitutions resolved at load */
        RESOLVE_NAMES_LATE,
        RESOLVE_NAMES_NEVER,
};

/* "early", "late", "never" (udev.conf resolve_names=, --resolve-names=) -> *ret;
 * -EINVAL. */
static inline int resolve_names_from_string(const char *s, enum resolve_names *ret)
{
        static const char *const names[] = { "early", "late", "never" };

        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                if (strcmp(s, names[i]) == 0) {
                        *ret = (enum resolve_names)i;
                        return 0;
                }
        return -EINVAL;
}

struct rules_load_options {
        /* Directories in priority order; NULL-terminated. NULL = the default
         * search path (/etc/udev/rules.d, /run/udev/rules.d,
         * /usr/local/lib/udev/rules.d, /usr/lib/udev/rules.d, /lib/udev/rules.d
         * when /lib is not a symlink to /usr/lib, and the install prefix's). */
        const char *const *dirs;
        /* Only these files (paths), ignoring `dirs` (udevadm verify FILE...). */
        const char *const *files;
        enum resolve_names resolve_names;
        /* udevadm verify: also report style/semantic notices (conflicting or
         * duplicate matches, unused LABEL, commas and whitespace, RESULT
         * before PROGRAM). */
        bool verify;
};

struct rules;

struct rules_stats {
        unsigned files;
        unsigned lines;     /* rule lines kept */
        unsigned tokens;
        unsigned errors;    /* error-level problems (most dropped a line or expression) */
        unsigned warnings;  /* accepted with a warning/notice */
        unsigned notices;   /* of `warnings`: style notices (verify only) */
};

/* Load and compile. Returns 0 with *ret = new snapshot (ref 1), or -ENOMEM.
 * Per-line problems are logged and counted, never fatal. */
int rules_load(const struct rules_load_options *opts, struct rules **ret);
/* Compile one in-memory text as file `name` (tests, fuzzing). */
int rules_load_string(const char *name, const char *text, size_t len,
                      const struct rules_load_options *opts, struct rules **ret);

/* The default search path, highest priority first (/etc, /run,
 * /usr/local/lib, /usr/lib, /lib; udevd(8) DESCRIPTION): fills
 * dirs[] with static strings, NULL-terminated; returns the count. /lib is
 * listed only when it is not the same directory as /usr/lib; a build may add
 * its install prefix's rules dir with -DTUDEV_RULES_DIR="...". */
size_t rules_default_dirs(const char *dirs[RULES_DIRS_MAX + 1]);
/* The files rules_load() reads for `dirs` (NULL: the default path): the
 * union by basename (first directory wins), sorted by basename, masked and
 * empty files included. *ret: NULL-terminated array of malloc'ed paths, free
 * with rules_file_list_free(). 0 or -ENOMEM. */
int rules_list_files(const char *const *dirs, char ***ret);
void rules_file_list_free(char **list);

struct rules *rules_ref(struct rules *r);
void rules_unref(struct rules *r);
static inline void rules_unrefp(struct rules **r) { rules_unref(*r); }

void rules_get_stats(const struct rules *r, struct rules_stats *ret);

/* true if any rules file was added, removed or changed (path, device, inode,
 * mtime incl. ns, size) since `r` was loaded. There is no inotify on the
 * rules directories: the daemon calls this at most every 3 s, and on reload. */
bool rules_should_reload(const struct rules *r);

/* Evaluate the snapshot against one event (rules-exec.c): matches, PROGRAM and
 * IMPORT run inline, ENV/TAG/ATTR/SYSCTL/OPTIONS take effect,
 * NAME/SYMLINK/OWNER/GROUP/MODE/SECLABEL/RUN are collected in `ev`. Borrows
 * both. Returns 0, or -errno when rule processing had to be aborted (the event
 * then fails: broadcast with UDEV_WORKER_FAILED=1, no DB written, no RUN). */
struct udev_event;
int rules_apply(const struct rules *r, struct udev_event *ev);

/* Apply OPTIONS+="static_node=" lines once, right after the first load at
 * daemon start (not on reloads): permissions of <dev>/NAME and
 * <run>/static_node-tags/<tag>/<escaped NAME> links. */
struct device_roots;
int rules_apply_static_nodes(const struct rules *r, const struct device_roots *roots);
