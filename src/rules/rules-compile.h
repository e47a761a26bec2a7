/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: manager (or any single thread: a compiler is not shared) */
#pragma once
/* The rules compiler (systemd 252's rules language, udev(7)): expressions ->
 * tokens, lines, GOTO targets and line masks, all allocated in the snapshot's
 * arena.
 * rules-load.c feeds it one file text after the other and then moves the
 * result into a struct rules. Private to src/rules/rules-*.c. */

#include <stdbool.h>
#include <stddef.h>

#include "rules/rules-arena.h"
#include "rules/rules-internal.h"
#include "rules/rules-parse.h"

struct rules_compiler;

/* arena: borrowed; every string and array of the result goes there.
 * verify: also run the udevadm-verify checks (style, duplicates, conflicts,
 * unused labels, RESULT before PROGRAM). */
int rules_compiler_new(struct arena *arena, enum resolve_names resolve, bool verify,
                       struct rules_compiler **ret);
void rules_compiler_free(struct rules_compiler *c);
static inline void rules_compiler_freep(struct rules_compiler **c) { rules_compiler_free(*c); }

/* The diagnostics counters (file name set by the caller for file-level
 * messages; rules_compiler_add_text sets it too). */
struct rules_diag *rules_compiler_diag(struct rules_compiler *c);

/* Compile the text of one rules file. `file` must live in the arena.
 * Problems are logged and counted; returns 0 or -ENOMEM. */
int rules_compiler_add_text(struct rules_compiler *c, const char *file, const char *text,
                            size_t len);

/* Move the compiled lines into r (lines, n_lines, stats except `files`). */
int rules_compiler_finish(struct rules_compiler *c, struct rules *r);
