/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (a struct hwdb is immutable after hwdb_open(); lookups only read it) */
#pragma once
/* Reader of systemd's compiled hardware database, hwdb.bin (format in
 * hwdb-format.h), with the lookup semantics of sd-hwdb in
 * systemd 252: the same matches, the same precedence between duplicate keys
 * and the same order of the resulting properties (the order in which each
 * key was first matched during the trie walk), which is what
 * `udevadm test-builtin hwdb` prints and the order properties are stored in.
 * (libudev's udev_hwdb_get_properties_list_entry() returns the same set
 * sorted by name, so it cannot reproduce that order.)
 *
 * The file is mapped read-only; every offset read from it is bounds-checked,
 * so a corrupt or truncated file makes lookups fail or find less, never read
 * outside the mapping. */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#define HWDB_LINE_MAX 2048    /* longest pattern rebuilt during a lookup (sd-hwdb: LINE_MAX) */
#define HWDB_RESULT_MAX 4096  /* most distinct properties one lookup returns */

struct hwdb;

/* Search order of Debian 12's systemd 252 (split /usr): the first existing
 * file is used. NULL-terminated. */
extern const char *const hwdb_bin_paths[];

/* Map `path`. 0, -ENOENT, -EINVAL (not a hwdb.bin: signature, size or header
 * mismatch), -errno. *ret owned by the caller (hwdb_close()). */
int hwdb_open(const char *path, struct hwdb **ret);
/* hwdb_open() of the first existing file of hwdb_bin_paths; -ENOENT if none
 * exists (logged at info level, naming `udevadm hwdb --update`, once per
 * process until a file is found again). */
int hwdb_open_default(struct hwdb **ret);
void hwdb_close(struct hwdb *h);
const char *hwdb_path(const struct hwdb *h);

/* Identity of the hwdb.bin in use, to notice replacement (systemd compares
 * the mtime of the first existing file in the search path). */
struct hwdb_stamp {
        bool exists;
        dev_t dev;
        ino_t ino;
        off_t size;
        struct timespec mtime;
};
/* Stamp of the first existing file of hwdb_bin_paths (exists = false if none). */
void hwdb_stamp_current(struct hwdb_stamp *ret);
bool hwdb_stamp_equal(const struct hwdb_stamp *a, const struct hwdb_stamp *b);
/* The stamp the mapping was opened with. */
const struct hwdb_stamp *hwdb_stamp(const struct hwdb *h);

struct hwdb_property {
        const char *key;   /* without the leading ' '; points into the mapping */
        const char *value; /* points into the mapping */
        const void *entry; /* the value entry that won (private) */
};
struct hwdb_result {
        struct hwdb_property *items; /* owned array; strings borrowed from the hwdb */
        size_t n, cap;
};

/* Look up `modalias`; on success res holds the matching properties in sd-hwdb
 * order (any previous content is discarded). 0 (also when nothing matched),
 * -ENOMEM, -E2BIG (more than HWDB_RESULT_MAX properties). The strings stay
 * valid until the hwdb is closed. */
int hwdb_lookup(const struct hwdb *h, const char *modalias, struct hwdb_result *res);
void hwdb_result_done(struct hwdb_result *res);
