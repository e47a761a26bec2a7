/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any */
#pragma once
/* Entry points of every builtin, dispatched by builtin_run() in builtin.c.
 * Each lives in src/builtins/<name>.c.
 *
 * Contract (all of them): argv[0] is the builtin's name, argv[1..argc-1] its
 * arguments (argv[argc] == NULL). Properties are added with
 * builtin_add_property(). Returns >= 0 on success, -errno on failure. Runs on
 * any worker thread concurrently: no global mutable state; per-thread library
 * handles live in _Thread_local state created lazily, released by
 * builtins_thread_exit() and refreshed by builtins_reload().
 *
 * Ownership of the files while the builtins team works in parallel:
 *   engineer 1: builtin.c (dispatcher), hwdb.c, kmod.c, input_id.c,
 *               keyboard.c, btrfs.c, uaccess.c
 *   engineer 2: path_id.c, usb_id.c, net_id.c, net_setup_link.c, blkid.c
 * Until engineer 2's functions land, link-time stubs for them live in
 * src/builtins/stubs-pending.c (each returns -EOPNOTSUPP). Engineer 2 deletes
 * the stub of each function as its real implementation lands, and deletes
 * stubs-pending.c when it is empty. The dispatch table in builtin.c already
 * references all eleven functions declared here, so nobody needs to edit
 * builtin.c to add one. */

#include <stdbool.h>

#include "builtins/builtin.h" /* builtin_add_property() */

struct udev_event;

int builtin_blkid(struct udev_event *ev, int argc, char *argv[], bool test);
int builtin_btrfs(struct udev_event *ev, int argc, char *argv[], bool test);
int builtin_hwdb(struct udev_event *ev, int argc, char *argv[], bool test);
int builtin_input_id(struct udev_event *ev, int argc, char *argv[], bool test);
int builtin_keyboard(struct udev_event *ev, int argc, char *argv[], bool test);
int builtin_kmod(struct udev_event *ev, int argc, char *argv[], bool test);
int builtin_net_driver(struct udev_event *ev, int argc, char *argv[], bool test);
int builtin_net_id(struct udev_event *ev, int argc, char *argv[], bool test);
int builtin_net_setup_link(struct udev_event *ev, int argc, char *argv[], bool test);
int builtin_path_id(struct udev_event *ev, int argc, char *argv[], bool test);
int builtin_usb_id(struct udev_event *ev, int argc, char *argv[], bool test);
int builtin_uaccess(struct udev_event *ev, int argc, char *argv[], bool test);

/* hwdb lookup for other builtins (net_id's "OUI:XXXXXX", as systemd's
 * udev_builtin_hwdb_lookup()): look up prefix + modalias (prefix may be NULL)
 * in this thread's hwdb and add every matching property, only those whose
 * name matches the fnmatch glob `filter` if not NULL, in hwdb order. Returns
 * the number of properties added (0 = no match), -ENOENT if there is no
 * hwdb.bin, or -errno. Implemented in hwdb.c. */
int builtin_hwdb_lookup(struct udev_event *ev, bool test, const char *prefix,
                        const char *modalias, const char *filter);

/* Per-builtin hooks, called by builtins_thread_exit() /
 * builtins_should_reload() / builtins_reload() in builtin.c (same semantics
 * as those, for one builtin). Only builtins with per-thread library state
 * have them. */
void builtin_hwdb_thread_exit(void);
bool builtin_hwdb_should_reload(void);
void builtin_hwdb_reload(void);
void builtin_kmod_thread_exit(void);
bool builtin_kmod_should_reload(void);
void builtin_kmod_reload(void);
/* net_setup_link: .link configuration (engineer 2). */
void builtin_net_setup_link_thread_exit(void);
bool builtin_net_setup_link_should_reload(void);
void builtin_net_setup_link_reload(void);

/* Reentrant getopt_long for builtins (getopt_long() itself uses the global
 * optind/optarg and is not thread-safe). Semantics as glibc's getopt_long
 * with its default permuting mode, which is what systemd's builtins get:
 * short options may be clustered ("-abc"), a required argument may be
 * attached ("-fX", "--filter=X") or the next word ("-f X", "--filter X");
 * long options may be abbreviated to a unique prefix; "--" ends the options;
 * non-option words may appear anywhere. Returns the option's value, '?' for
 * an unknown option, an ambiguous abbreviation or a missing argument (logged
 * at debug level), or -1 at the end: then argv has been permuted so that
 * argv[st->optind..argc-1] are the non-option words in their original order.
 * st->optarg points into argv (borrowed). Zero-initialise the state
 * (struct builtin_getopt st = {};) before the first call. */
struct builtin_option {
        const char *name;
        bool has_arg; /* required argument */
        int val;
};
struct builtin_getopt {
        int optind;    /* next word to scan (0 = not started) */
        char *optarg;  /* argument of the option just returned, or NULL */
        int nonopt_first, nonopt_end; /* skipped non-option words [first, end) */
        int cluster;   /* offset inside a short-option cluster, 0 = none */
};
/* `shortopts` like getopt's ("f:d:"; no leading '+'/'-'/':'), `longopts`
 * terminated by an entry with name == NULL; either may be NULL. */
int builtin_getopt_long(struct builtin_getopt *st, int argc, char *argv[], const char *shortopts,
                        const struct builtin_option *longopts);
