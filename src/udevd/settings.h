/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (immutable after start-up, except the fields marked _Atomic) */
#pragma once
/* Daemon settings: parsed once in main() before any thread exists. */

#include <stdbool.h>
#include <stdint.h>

#include "device/node.h"
#include "rules/rules.h"

struct exec_client;

#define UDEVD_RUN_DIR "/run/udev"
/* Queued+running events before the listener pauses; the rest wait in the
 * kernel socket buffer (128 MiB requested, doubled by the kernel: room for
 * roughly 200,000 uevents). 4000 keeps the whole queue around 4 MiB (about
 * 1 KiB per event with its blocking-rule index), far more than the workers
 * can have runnable; 20,000 gave the same drain speed at 10,000 devices
 * with about 10 MiB more peak PSS (tools/bench, an earlier round; the
 * figures are in git history: git log -S 20,000 -- README). */
#define UDEVD_QUEUE_CAPACITY 4000
#define UDEVD_RCVBUF_SIZE (128 * 1024 * 1024)
#define UDEVD_CHILDREN_MAX_LIMIT 2048
/* The admission policy (udevd/admission.h): at most children_max events run,
 * at most one per CPU computes (events waiting for a program or the exec
 * helper do not count); when none of the running events has
 * made progress (started, finished, begun or ended a wait) for
 * UDEVD_STALL_USEC, one more may start, and so on once per period. */
#define UDEVD_STALL_USEC 1000

struct udevd_settings {
        bool daemonize;
        int ready_fd;                   /* --ready-fd=N (s6 style), -1 = none */
        bool debug;
        unsigned children_max;          /* 0 = automatic */
        /* --program-limit=N: runnable programs at once (exec/exec-helper.h);
         * -1 = automatic (2 per CPU, main.c), 0 = no limit */
        int program_limit;
        uint64_t event_timeout_usec;    /* default 180 s */
        uint64_t exec_delay_usec;       /* sleep before each RUN program (exec-client.h) */
        int timeout_signal;             /* for timed-out programs; default SIGTERM, then
                                         * SIGKILL 5 s later */
        /* The exec helper's client: created in main() before any thread exists;
         * thread-safe (exec/exec-client.h). */
        struct exec_client *exec;
        /* Debugging/test knobs (documented in udevd(8) under DEBUGGING). */
        uint64_t debug_event_delay_usec;
        const char *debug_event_delay_match; /* DEVPATH glob or NULL */
        bool accept_user_uevents;
        const char *run_dir;            /* UDEVD_RUN_DIR */
        /* --rules-dir=DIR (repeatable): replaces the rules search path;
         * NULL-terminated, empty = the default path. */
        const char *rules_dirs[RULES_DIRS_MAX + 1];
        enum resolve_names resolve_names; /* -N/--resolve-names= */
        bool blockdev_read_only;        /* udev.blockdev_read_only: new disks read-only */
        bool kernel_broadcast;          /* --kernel-broadcast (udevd/broadcast.h) */
        struct node_mac mac;            /* security modules SECLABEL applies to (at start) */
};

/* The default worker limit: min(2*cpus + 16, max(RAM / 128 MiB, 10), 2048). */
unsigned udevd_default_children_max(void);
/* CPUs this process may run on (at least 1). */
unsigned udevd_cpus(void);
