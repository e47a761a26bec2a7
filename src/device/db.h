/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (no shared state; the queue guarantees one event per device at a time) */
#pragma once
/* The udev database: /run/udev/data/<id> and the tag index
 * /run/udev/tags/<tag>/<id>, byte-compatible with systemd's sd-device, which
 * libudev clients read directly.
 *
 * `run_dir` is "/run/udev" in the daemon; tests pass a temporary directory. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bounds of one record, for reading and writing alike (what tudev writes it
 * can read back, so a device's links and tags are always removed later).
 * systemd 252 has none when writing and reads up to 64 MiB. A record's lists
 * grow only by rule tokens, each of which runs at most once per event (GOTO
 * jumps forward), and by the previous record; real devices carry a few
 * dozen entries. The bounds make room for far more than any rules set
 * gives: 65,536 entries per list (10,000 TAG+= rules are 10,000 tags),
 * and 8 MiB of text, which holds 10,000 tags of 255 bytes (the longest
 * name the tag index can hold) in both their G: and Q: lines (5.2 MB) with
 * room for links and properties. A reader holds the file about three times
 * (bytes, copy, lists) for the length of one event: 24 MiB at worst, only
 * for a record that large; a file beyond the bound, which only something
 * other than udev can write, is refused whole. */
#define DB_FILE_MAX (8 * 1024 * 1024)
#define DB_ENTRIES_MAX 65536 /* per list */

/* A string list with an owned array of owned strings. */
struct strlist {
        char **items;
        size_t n, cap;
};
int strlist_add(struct strlist *l, const char *s);      /* copies s; 0 or -ENOMEM */
int strlist_add_unique(struct strlist *l, const char *s); /* 0 also if already there */
bool strlist_contains(const struct strlist *l, const char *s);
void strlist_remove(struct strlist *l, const char *s);   /* every occurrence */
void strlist_clear(struct strlist *l);

/* One DB record. All members owned by the record. */
struct db_record {
        struct strlist devlinks;     /* S: paths relative to /dev ("disk/by-id/x") */
        int link_priority;           /* L: */
        uint64_t usec_initialized;   /* I: (0 = none) */
        struct strlist properties;   /* E: "KEY=VALUE" */
        struct strlist tags;         /* G: all (sticky) tags */
        struct strlist current_tags; /* Q: tags set by the latest event */
        bool persist;                /* file mode 01644 (db_persist) */
        char *raw;                   /* db_read(): the file's bytes (NUL-terminated) */
        size_t raw_len;              /* and permission bits, for db_write_changed(); */
        unsigned raw_mode;           /* raw is NULL otherwise */
        bool absent;                 /* db_read() found no file (-ENOENT) */
};
void db_record_clear(struct db_record *r);

/* Read /run/udev/data/<id>. Lines with an unknown type or malformed syntax are
 * skipped (debug log), never fatal; `persist` reflects the sticky bit.
 * Returns 0, -ENOENT (no record: *r empty with `absent` set), -EFBIG, -errno.
 * On error *r is left empty.
 * *r must be initialized (zeroed or used before): its old content is freed.
 * Parsing follows sd-device: lines end at '\n' or '\r', an unterminated last
 * line is ignored, "E:KEY=" unsets KEY, a later E: line of the same key
 * replaces the earlier one, Q: implies G:, tags with ':' or ' ' and empty S:
 * values are skipped, each list stops growing at DB_ENTRIES_MAX. */
int db_read(const char *run_dir, const char *id, struct db_record *r);
/* The parser of db_read() on a buffer (borrowed, need not be NUL-terminated),
 * for tools and fuzzing; `persist` is left false. 0, -EFBIG, -ENOMEM. */
int db_parse(const char *data, size_t len, struct db_record *r);

/* Write the record atomically (temp + rename, mode 0644 or 01644).
 * If the record holds nothing (no devlinks, priority 0, no properties, no tags):
 * with has_devnum_or_ifindex an empty file is written (marks "initialized"),
 * otherwise the file is deleted. Line order: S, L, I, E, G, Q, V:1 — S:/L: only
 * if has_devnum (major > 0). Values containing '\n' are refused (-EINVAL).
 * Also -EINVAL: '\r' anywhere, empty devlink, property without "KEY=", tag
 * with ':' or ' ', id not a plain file name. '.'-prefixed properties
 * are never written (and do not count as content). -E2BIG: a list longer than
 * DB_ENTRIES_MAX; -EFBIG: content larger than DB_FILE_MAX. When the write
 * fails, the old file is unlinked too (a stale record is worse than none). */
int db_write(const char *run_dir, const char *id, const struct db_record *r, bool has_devnum,
             bool has_ifindex);
/* db_write(), except that nothing is written when the file would not change:
 * `old` (may be NULL) is the record db_read() gave at the start of the event
 * and the new content and mode are exactly those bytes and that mode. The
 * queue runs one event per device at a time, so the file is still what was
 * read. A "change" event or a coldplug "add" of a known device mostly
 * rewrites its record unchanged: this saves a temporary file, fchmod, write
 * and rename. Likewise a record to delete that `old` found absent is not
 * unlinked again (most events of devices without a node or interface). */
int db_write_changed(const char *run_dir, const char *id, const struct db_record *r,
                     bool has_devnum, bool has_ifindex, const struct db_record *old);
/* The content db_write() would write for `r` (same checks, same line order),
 * into a new NUL-terminated buffer *ret (caller frees) of *ret_len bytes; ""
 * for a record that holds nothing. For tools and fuzzing (a parsed record
 * rendered and parsed again is unchanged). 0, -EINVAL, -E2BIG, -EFBIG, -ENOMEM. */
int db_render(const struct db_record *r, bool has_devnum, char **ret, size_t *ret_len);
/* Unlink /run/udev/data/<id>; a missing file is not an error. */
int db_delete(const char *run_dir, const char *id);

/* Tag index: touch /run/udev/tags/<tag>/<id> (0444, dirs 0755) for each tag in
 * `tags`; unlink it for each tag in `old_tags` that is not in `tags`.
 * Tag names containing '/' or starting with '.' are refused (-EINVAL) and skipped. */
int tags_index_update(const char *run_dir, const char *id, const struct strlist *old_tags,
                      const struct strlist *tags);
/* Unlink /run/udev/tags/<tag>/<id> for every tag in `tags`. */
int tags_index_remove(const char *run_dir, const char *id, const struct strlist *tags);
