/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (no shared state: each call builds and frees its own trie) */
#pragma once
/* Compiler of the hardware database sources (the *.hwdb files of the hwdb.d
 * directories) into hwdb.bin, the file hwdb-reader.c and systemd's
 * sd-hwdb/libudev read (format in hwdb-format.h). Lookups in the result
 * equal those in the file systemd 252's `systemd-hwdb update` writes from
 * the same sources: the same radix trie, value entries of format version 3
 * (source file priority and line number, so that on a key matched by several
 * patterns the later file, then the later line, wins), values of one node
 * sorted by key, children by character.
 *
 * Sources: the files named *.hwdb (not hidden) in the directories, sorted by
 * file name across all directories; a name in an earlier directory masks the
 * same name in later ones, and an empty file or a link to /dev/null masks
 * without contributing. Within a file:
 *
 *   # comment (only at the start of a line; elsewhere '#' ends the line)
 *   MATCH-PATTERN            one or more lines starting a record
 *    KEY=VALUE               properties (first character a space)
 *                            an empty line ends the record
 *
 * Lines end at "\n", "\r", "\r\n", "\n\r" or NUL; trailing whitespace is
 * dropped.
 * A malformed line (a property outside a record, a pattern after the
 * properties, a property without '=' or with an empty key, a record without
 * properties, a line longer than HWDB_SOURCE_LINE_MAX) is logged as a
 * warning "FILE:LINE: ..." and counted; the rest of the file is compiled as
 * systemd-hwdb does (the offending line, or the rest of its record, is
 * ignored). */

#include <stddef.h>

#define HWDB_SOURCE_LINE_MAX 8192   /* longest source line (bytes, without the end of line) */
#define HWDB_SOURCE_FILES_MAX 4096  /* most source files compiled at once */

/* The source directories, highest precedence first. NULL-terminated. */
extern const char *const hwdb_source_dirs[];

struct hwdb_compile_options {
        /* Prefix of every source directory; NULL or "/" for the host. Borrowed. */
        const char *root;
        /* Source directories (absolute, below root), NULL-terminated, highest
         * precedence first; NULL: hwdb_source_dirs. Borrowed. */
        const char *const *dirs;
        /* The hwdb.bin to write (full path, root not added). Its missing parent
         * directories are created (0755); the file is replaced atomically
         * (temporary file in the same directory, fsync, rename), mode 0444.
         * Borrowed. */
        const char *output;
};

struct hwdb_compile_stats {
        unsigned files;         /* source files read */
        unsigned errors;        /* malformed lines and unreadable files (logged) */
        size_t nodes, values;   /* trie nodes and value entries written */
        size_t size;            /* bytes written */
};

/* Compile the sources into o->output. Returns
 *   0 when the file was written (parse errors, if any, are logged and counted
 *     in ret_stats->errors: the caller decides whether they fail);
 *   1 when no source file exists: o->output is then removed if present, as
 *     systemd-hwdb does (logged at info level);
 *   -EINVAL (bad options), -E2BIG (more than HWDB_SOURCE_FILES_MAX files, or
 *   a database larger than the format can address), -ENOMEM, or the -errno of
 *   a directory listing or of writing the output (logged; the old output, if
 *   any, is left in place).
 * A directory entry that cannot be examined (e.g. a link loop) and a source
 * file that cannot be opened or read are logged and counted in errors; the
 * others are still compiled. ret_stats may be NULL; it is filled
 * on every return >= 0. */
int hwdb_compile(const struct hwdb_compile_options *o, struct hwdb_compile_stats *ret_stats);
