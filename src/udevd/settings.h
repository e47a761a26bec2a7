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
/* The default event budget (--queue-max-events=, queue_max_events=):
 * queued+running events before the listener pauses; the rest wait in the
 * kernel socket buffer (128 MiB requested, doubled by the kernel: room for
 * roughly 200,000 uevents). Each queued event costs about 1 KiB of udevd's
 * memory (record and dependency index), all of it touched, so the capacity
 * is most of udevd's peak PSS in a storm. 1000 is still far more than the
 * workers can have runnable: against 4000, the drain of 1,000-device burst
 * storms was the same (0.98-0.97x) and peak PSS 0.80x (loop) and 0.82x
 * (net) (tools/bench --b-build, 2026-12-02; docs/performance.md). */
#define UDEVD_QUEUE_CAPACITY 1000
/* The queue's byte budget (udevd/event-queue.h says what is counted) by
 * default: 8 MiB, 8 KiB per event at the default event limit. A kernel
 * uevent carries at most 2 KiB of properties (UEVENT_BUFFER_SIZE) plus its
 * "ACTION@DEVPATH" header, and is charged about twice its size (the record
 * with its property index, the queue entry, the dependency node): ordinary
 * uevents cost 0.5-1.5 KiB (a veth "change" 780 bytes), the largest
 * possible about 7 KiB. So the byte limit never binds before the event
 * limit unless that is raised. */
#define UDEVD_QUEUE_MAX_BYTES (8 * 1024 * 1024)
/* Accepted limits of --queue-max-events=, queue_max_events= and
 * --queue-max-bytes=, queue_max_bytes= (both at least one event's worth). */
#define UDEVD_QUEUE_MAX_EVENTS_LIMIT 1000000
#define UDEVD_QUEUE_MAX_BYTES_MIN (16 * 1024)
#define UDEVD_QUEUE_MAX_BYTES_LIMIT (UINT64_C(64) * 1024 * 1024 * 1024)
#define UDEVD_RCVBUF_SIZE (128 * 1024 * 1024)
#define UDEVD_CHILDREN_MAX_LIMIT 2048

struct udevd_settings {
        bool daemonize;
        int ready_fd;                   /* --ready-fd=N (s6 style), -1 = none */
        bool debug;
        unsigned children_max;          /* 0 = automatic */
        /* The queue's budget (udevd(8) ERRORS AND OVERLOAD): --queue-max-events=,
         * --queue-max-bytes=, queue_max_events=, queue_max_bytes=. */
        unsigned queue_max_events;      /* default UDEVD_QUEUE_CAPACITY */
        uint64_t queue_max_bytes;       /* default UDEVD_QUEUE_MAX_BYTES */
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
        /* --explain-events=N, explain_events=N: rules traces of the newest N
         * events kept for `udevadm explain` (udevd/explain-ring.h); 0 = no
         * event is traced. Default EXPLAIN_EVENTS_DEFAULT (main.c). */
        unsigned explain_events;
        struct node_mac mac;            /* security modules SECLABEL applies to (at start) */
};

/* The default worker limit: min(8 + 2*cpus, max(RAM / 128 MiB, 10), 2048),
 * systemd-udevd's formula. It was 2*cpus + 16: against that, on 2 CPUs
 * with Debian's rules, 12 gave the same drain and latency and 1.2-2.2 MiB
 * less peak PSS in the bench's net and loop storms (fewer worker stacks
 * touched; tools/bench --daemons tudev,tudev-b --b-arg=--children-max=12,
 * 2026-12-02, docs/performance.md). */
unsigned udevd_default_children_max(void);
/* CPUs this process may run on (at least 1). */
unsigned udevd_cpus(void);
