/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (a writer or reader belongs to one thread; udevadm is single-threaded) */
#pragma once
/* The recording file of `udevadm record` and `udevadm replay` (format in
 * docs/design.md "Record and replay" and udevadm(8)): a versioned text
 * framing with length-prefixed binary payloads.
 *
 *   TUDEV-RECORD 1                  first line: magic and version
 *   S <devpath>                     a device directory snapshot begins
 *   F <len> <name>                  a readable regular file: <len> bytes
 *                                   follow, then "\n"
 *   U <name>                        a file that could not be read
 *   L <name> <target>               a symlink, target as a path below /sys
 *   G <devpath>                     the device directory was gone
 *   E <seqnum> <len>                a kernel uevent datagram: <len> bytes
 *                                   follow, then "\n"
 *   END <events>                    last line: the number of E records
 *
 * The S/F/U/L/G records before an E are the sysfs state that event is to
 * see (a device's snapshot is written only when it changed since the last
 * one). Every count and size is capped (RECORD_*_MAX below); the writer
 * refuses what breaks a cap (-E2BIG, -EINVAL), the reader rejects it with
 * "FILE:LINE: reason". */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "proto/uevent.h"

#define RECORD_MAGIC "TUDEV-RECORD"
#define RECORD_VERSION 1
#define RECORD_LINE_MAX 2048          /* a header line, "\n" included */
#define RECORD_PATH_MAX 1024          /* devpath, attribute name, link target */
#define RECORD_FILE_DATA_MAX 4096     /* bytes of one file (= SYSATTR_VALUE_MAX) */
#define RECORD_ENTRIES_MAX 1024       /* F/U/L records of one device snapshot */
#define RECORD_DEVICES_MAX 64         /* S/G records before one E */
#define RECORD_EVENTS_MAX 10000000    /* E records of one file */
#define RECORD_SIZE_MAX (UINT64_C(1) << 30) /* bytes of one file */

/* ---- writing ---- */

struct record_writer {
        FILE *f;          /* borrowed */
        uint64_t bytes;   /* written so far */
        uint64_t events;  /* E records written */
        int error;        /* first write error (-errno), sticky */
};

/* Start a file: writes the magic line. 0 or -errno. */
int record_writer_begin(struct record_writer *w, FILE *f);
/* Each returns 0, -EINVAL (a name, path or target the format cannot hold:
 * see record_name_valid()), -E2BIG (over a size cap or RECORD_SIZE_MAX:
 * nothing written) or the sticky write error. */
int record_write_device(struct record_writer *w, const char *devpath);
int record_write_gone(struct record_writer *w, const char *devpath);
int record_write_file(struct record_writer *w, const char *name, const void *data, size_t len);
int record_write_unreadable(struct record_writer *w, const char *name);
int record_write_link(struct record_writer *w, const char *name, const char *target);
int record_write_event(struct record_writer *w, uint64_t seqnum, const void *data, size_t len);
/* The END line, then fflush(). 0 or the sticky write error. */
int record_writer_end(struct record_writer *w);

/* A devpath the format accepts: "/devices/..." with non-empty components,
 * none "." or "..", no control characters (spaces are fine), shorter than
 * RECORD_PATH_MAX. */
bool record_devpath_valid(const char *devpath);
/* An attribute name: one or two components ("size", "queue/rotational"),
 * each non-empty, not "." or "..", no control characters, total shorter
 * than RECORD_PATH_MAX. */
bool record_name_valid(const char *name);
/* A link target: "/..." as record_devpath_valid() but anywhere below /sys.
 * The name of a link (L) must not contain a space either. */
bool record_target_valid(const char *target);

/* ---- reading ---- */

enum record_item_type {
        RECORD_ITEM_DEVICE,     /* path */
        RECORD_ITEM_GONE,       /* path */
        RECORD_ITEM_FILE,       /* path = name, data/len */
        RECORD_ITEM_UNREADABLE, /* path = name */
        RECORD_ITEM_LINK,       /* path = name, target */
        RECORD_ITEM_EVENT,      /* seqnum, data/len, uevent */
        RECORD_ITEM_END,        /* seqnum = number of events */
};

struct record_item {
        enum record_item_type type;
        unsigned line;            /* line of the record in the file (1 = magic) */
        uint64_t seqnum;
        const char *path;
        const char *target;
        const char *data;         /* NUL-terminated after len bytes */
        size_t len;
        struct uevent *uevent;    /* EVENT: the parsed datagram */
};

struct record_reader {
        FILE *f;                  /* borrowed */
        const char *name;         /* for messages (borrowed) */
        unsigned line;            /* lines consumed */
        uint64_t bytes;
        uint64_t events;
        uint64_t last_seqnum;
        unsigned entries;         /* in the current device snapshot */
        unsigned devices;         /* S/G since the last E */
        bool in_device;
        bool ended;
        char linebuf[RECORD_LINE_MAX + 2];
        char data[UEVENT_BUFFER_MAX + 1];
        struct uevent *uevent;
        char error[RECORD_LINE_MAX + 128]; /* "FILE:LINE: reason" after a failure */
};

/* Reads the magic line. 0, or -EBADMSG with r->error set. */
int record_reader_begin(struct record_reader *r, FILE *f, const char *name);
/* The next record into *item (valid until the next call). 1: an item,
 * 0: after END (and end of file), -EBADMSG: malformed, over a cap or
 * truncated (r->error says where and why), -errno: a read error. */
int record_read_next(struct record_reader *r, struct record_item *item);
void record_reader_done(struct record_reader *r);

/* Append records another writer produced in memory (a device snapshot built
 * with open_memstream()) as one unit, under the same caps. 0, -E2BIG or the
 * sticky write error. */
int record_write_block(struct record_writer *w, const void *data, size_t len);
