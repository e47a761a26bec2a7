/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: worker-local */
#pragma once
/* The state of one event while the rules run: the device's properties, tags,
 * links, the collected assignments (owner/group/mode, RUN list, NAME, ...)
 * and evaluation state (RESULT, matched parent, finality of := keys).
 *
 * Built by the worker pipeline (udevd/event-process.c) and by `udevadm test`;
 * read and modified by rules-exec.c, rules-format.c and the builtins; turned
 * into node permissions/symlinks (device/node.c), the DB record and the
 * broadcast afterwards. Everything here is owned by the udev_event and freed by
 * udev_event_done(). */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "device/db.h"
#include "device/device.h"
#include "proto/uevent.h"

struct node_mac;
struct rules_trace;

/* Property list: ordered "KEY=VALUE" entries with a flag per entry. */
struct prop {
        char *key;
        char *value;
        bool from_kernel; /* came from the uevent and was not changed by a rule: not stored in the DB */
        uint32_t key_hash; /* of key (proplist_*() keep it): lookups compare it first */
};
struct proplist {
        struct prop *items;
        size_t n, cap;
};
/* Set (replace in place, keeping the position, or append). Copies key and value. */
int proplist_set(struct proplist *l, const char *key, const char *value, bool from_kernel);
/* 0, or -ENOENT if the key was not there. Entries are removed in place
 * (order kept). An entry's key and value share one allocation owned through
 * `key`: change entries only through proplist_*(). At most 4096 entries
 * (-E2BIG). */
int proplist_unset(struct proplist *l, const char *key);
const char *proplist_get(const struct proplist *l, const char *key);
/* The hash lookups compare before the key itself (FNV-1a folded to 32 bits;
 * exposed for the tests, which need two keys that collide). */
uint32_t proplist_key_hash(const char *key);
void proplist_clear(struct proplist *l);

struct run_entry {
        bool builtin;
        char *cmd; /* substituted command line */
};

/* How a program is spawned (PROGRAM, IMPORT{program}, RUN{program}); the daemon
 * plugs in the exec helper, udevadm test a direct spawn or a dry run. `cmd` is
 * the substituted command line (split into argv by the callee, as
 * udev_split_cmdline() does); `envp` the device's properties. Captured stdout
 * goes to out[0..out_size-1] (NUL-terminated, *truncated set if it did not
 * fit); out may be NULL (RUN). Returns 0 if the program ran and exited 0, >0
 * its exit status or 128+signal, -ETIME on timeout, -errno if it could not
 * run. */
struct udev_spawner {
        int (*spawn)(void *userdata, const char *cmd, char *const envp[], bool is_run,
                     uint64_t deadline_usec, char *out, size_t out_size, bool *truncated);
        /* Optional gate for IMPORT{builtin} (NULL: every builtin runs): called
         * with the builtin's id (enum builtin_id) and its substituted command
         * line before it runs; returns 1 to run it, else the result the rules
         * see instead (>= 0 success, -errno failure). udevadm replay uses it
         * to keep builtins that touch the system from running. */
        int (*builtin)(void *userdata, int id, const char *cmd);
        void *userdata;
};

enum {
        FINAL_NAME = 1u << 0,
        FINAL_DEVLINK = 1u << 1,
        FINAL_OWNER = 1u << 2,
        FINAL_GROUP = 1u << 3,
        FINAL_MODE = 1u << 4,
        FINAL_RUN = 1u << 5,
        FINAL_WATCH = 1u << 6,
};

struct udev_event {
        /* ---- inputs (borrowed) ---- */
        const struct uevent *uevent;     /* kernel record (NULL in udevadm test without one) */
        enum uevent_action action;
        struct device_ctx *ctx;
        struct device *dev;              /* the event device */
        const struct db_record *old_db;  /* previous record of this device (may be empty) */
        const struct proplist *global_props; /* udevadm control --property, or NULL */
        struct udev_spawner spawner;
        uint64_t start_usec;             /* CLOCK_MONOTONIC when processing started */
        uint64_t timeout_usec;           /* event timeout: deadline for programs */
        bool dry_run;                    /* udevadm test without --apply: no writes, no RUN */
        bool offline;                    /* udevadm replay (with dry_run): a NAME rename is
                                          * taken as done, without asking the kernel */
        const struct node_mac *mac;      /* active security modules for SECLABEL, NULL = none */
        struct rules_trace *trace;       /* record what the rules do (rules/rules-trace.h),
                                          * NULL = no tracing; owned by the caller */

        /* ---- device state (owned) ---- */
        struct proplist props;           /* kernel properties (DEVNAME absolute) + rule-set ones */
        struct strlist devlinks;         /* absolute paths "/dev/..." */
        struct strlist tags;             /* all (sticky) tags */
        struct strlist current_tags;
        int link_priority;
        bool db_persist;
        bool inotify_watch;
        int log_level;                   /* -1 = daemon default */
        uint64_t usec_initialized;
        uint64_t rules_done_usec;        /* CLOCK_MONOTONIC when the rules were applied
                                          * (udev_event_execute(); for udevd's stats) */

        /* ---- collected assignments (owned) ---- */
        char *name;                      /* NAME= (netif rename), NULL = none */
        uid_t uid; bool uid_set;
        gid_t gid; bool gid_set;
        mode_t mode; bool mode_set;
        struct strlist seclabels;        /* "module=label" */
        struct run_entry *run; size_t n_run, cap_run;
        unsigned final;                  /* FINAL_* bits */

        /* ---- evaluation state ---- */
        char *program_result;            /* RESULT, NULL = none */
        struct device *dev_parent;       /* last KERNELS/ATTRS/... match, NULL = none */
        uint64_t builtin_ran;            /* bit per run-once builtin that ran */
        uint64_t builtin_ok;             /* bit per run-once builtin that succeeded */
};

/* Fill the inputs and the kernel properties of `dev` into `ev`. */
/* Details (rules-engine B): *ev is zeroed first, so set spawner, global_props,
 * old_db, start_usec, timeout_usec, dry_run, mac and trace after this call. props = the
 * device's properties in order (device_property_at(): for the event device
 * the uevent record with DEVNAME absolute under roots.dev), from_kernel=true,
 * plus ACTION=<action> if the device had none (udevadm test on a sysfs
 * device); usec_initialized = uevent->recv_usec (0 without a record);
 * log_level = -1; uid/gid/mode unset. The uevent record must outlive ev and
 * the device_ctx. On error ev is left as after udev_event_done(). */
int udev_event_init(struct udev_event *ev, struct device_ctx *ctx, struct device *dev,
                    const struct uevent *uevent, enum uevent_action action);
void udev_event_done(struct udev_event *ev);

/* Property lookup as rules see it: the device's, else the global one. */
const char *udev_event_get_property(const struct udev_event *ev, const char *key);

/* Build the NULL-terminated environment for a spawned program:
 * "UDEV_DATABASE_VERSION=1" first, then every property. Caller frees with
 * udev_event_free_env(). */
/* Like systemd's device properties the environment also has DEVLINKS
 * (devlinks joined by ' '), TAGS and CURRENT_TAGS (":a:b:") when not empty,
 * and USEC_INITIALIZED when usec_initialized > 0 — unless props already has
 * that key. One allocation; NULL on ENOMEM. */
char **udev_event_build_env(const struct udev_event *ev);
void udev_event_free_env(char **envp);
