/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (the probe is a single-threaded process) */
#pragma once
/* Internals of tudev-probe (tudev-probe.c: command line, device checks,
 * test-only fault triggers; probe-blkid.c: libblkid). The output format is
 * in blkid-wire.h. */

#include <stdbool.h>
#include <stdint.h>

#define PROBE_HINTS_MAX 64

struct probe_blkid_args {
        const char *devnode;
        unsigned major, minor;
        bool block;            /* --kind=block: a block node, else a char node */
        bool check_diskseq;    /* --diskseq given */
        uint64_t diskseq;      /* 0: the event's DISKSEQ was invalid (fails with EINVAL) */
        int64_t offset;
        bool noraid;
        const char *hints[PROBE_HINTS_MAX];
        unsigned n_hints;
};

/* Print "tudev-probe: ..." on stderr. */
void probe_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Report a failure on stdout (.ERRNO/.STAGE[/.HINT]) and return
 * BLKID_EXIT_FAILED. err: negative errno. hint: index or -1. */
int probe_fail(int err, const char *stage, int hint);

/* Print one property / directive line (value escaped). 0 or -errno. */
int probe_emit(const char *key, const char *value);

/* Probe the open device `fd` (owned by the caller) as systemd's blkid
 * builtin does and print the result. Returns the exit status. */
int probe_blkid(const struct probe_blkid_args *a, int fd);
