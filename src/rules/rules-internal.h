/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (read-only after compilation) */
#pragma once
/* Compiled rules: the contract between the compiler (rules-load.c,
 * rules-parse.c, rules-compile.c) and the evaluator (rules-exec.c).
 *
 * A snapshot is a flat array of lines; each line a flat array of tokens
 * already sorted in evaluation order (a stable sort by token type, as
 * systemd does: the token type order below IS that order). Everything is
 * decided at compile time: operator normalisation, match kind (empty /
 * plain / glob / subsystem-special), alternatives split on '|', whether a
 * value needs substitution, numeric OWNER/GROUP/MODE, builtin ids, GOTO
 * targets, the line mask. Evaluation does no string parsing it can avoid.
 * All strings live in one arena owned by the snapshot. */

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rules/rules.h"

enum token_type {
        /* matches, in evaluation order */
        TK_M_ACTION,
        TK_M_DEVPATH,
        TK_M_KERNEL,
        TK_M_DEVLINK,      /* SYMLINK== */
        TK_M_NAME,
        TK_M_ENV,
        TK_M_CONST,
        TK_M_TAG,
        TK_M_SUBSYSTEM,
        TK_M_DRIVER,
        TK_M_ATTR,
        TK_M_SYSCTL,
        /* parent matches (evaluated as one group: one device, the event's or
         * an ancestor, must satisfy them all) */
        TK_M_PARENTS_KERNEL,
        TK_M_PARENTS_SUBSYSTEM,
        TK_M_PARENTS_DRIVER,
        TK_M_PARENTS_ATTR,
        TK_M_PARENTS_TAG,
        TK_M_TEST,
        TK_M_PROGRAM,
        TK_M_IMPORT_FILE,
        TK_M_IMPORT_PROGRAM,
        TK_M_IMPORT_BUILTIN,
        TK_M_IMPORT_DB,
        TK_M_IMPORT_CMDLINE,
        TK_M_IMPORT_PARENT,
        TK_M_RESULT,
        /* assignments, in evaluation order */
        TK_A_OPTIONS_STRING_ESCAPE_NONE,
        TK_A_OPTIONS_STRING_ESCAPE_REPLACE,
        TK_A_OPTIONS_DB_PERSIST,
        TK_A_OPTIONS_INOTIFY_WATCH,   /* value.boolean: watch (true) / nowatch (false) */
        TK_A_OPTIONS_DEVLINK_PRIORITY, /* value.number */
        TK_A_OPTIONS_LOG_LEVEL,       /* value.number, -1 = reset */
        TK_A_OWNER,                   /* name with substitutions, resolved per event */
        TK_A_GROUP,
        TK_A_MODE,                    /* needs substitution */
        TK_A_OWNER_ID,                /* value.id: resolved at load (or numeric); -1 = "unset" */
        TK_A_GROUP_ID,
        TK_A_MODE_ID,                 /* value.mode */
        TK_A_TAG,
        TK_A_OPTIONS_STATIC_NODE,     /* no-op at event time */
        TK_A_SECLABEL,
        TK_A_ENV,
        TK_A_NAME,
        TK_A_DEVLINK,                 /* SYMLINK= */
        TK_A_ATTR,
        TK_A_SYSCTL,
        TK_A_RUN_BUILTIN,
        TK_A_RUN_PROGRAM,
        _TK_TYPE_MAX,
};

#define TK_IS_MATCH(t) ((t) <= TK_M_RESULT)
#define TK_IS_PARENT_MATCH(t) ((t) >= TK_M_PARENTS_KERNEL && (t) <= TK_M_PARENTS_TAG)

enum token_op {
        OP_MATCH,      /* == */
        OP_NOMATCH,    /* != */
        OP_ADD,        /* += */
        OP_REMOVE,     /* -= */
        OP_ASSIGN,     /* = */
        OP_ASSIGN_FINAL, /* := */
};

enum match_kind {
        MATCH_EMPTY,     /* "" (also "?*" with the operator inverted) */
        MATCH_PLAIN,     /* strcmp against each alternative */
        MATCH_GLOB,      /* fnmatch(alt, s, 0) against each alternative */
        MATCH_SUBSYSTEM, /* "subsystem", "bus" or "class" */
};

/* A value split on '|' into alternatives; an empty alternative means "or empty". */
struct token_pattern {
        enum match_kind kind;
        unsigned n_alts;
        const char *const *alts; /* arena */
        /* MATCH_GLOB: per alternative, 1 + the length of its literal part when
         * it is "literal*" (fnmatch() of it is a prefix test), else 0 (use
         * fnmatch()); NULL when no alternative is one (arena). */
        const unsigned short *prefix;
};

/* Attribute of ATTR{}/ATTRS{}/TEST{}: `[SUBSYSTEM/SYSNAME]attr` split at compile time. */
struct token_attr {
        const char *raw;        /* as written (arena), NULL if the key has none */
        bool needs_subst;       /* the name is substituted at event time: ATTR{}/ATTRS{}
                                 * matches (not the [..] form) and SYSCTL{} (match and
                                 * assignment) whose name contains $ or % */
        const char *subsystem;  /* "[subsys/sysname]" form, else NULL */
        const char *sysname;
        const char *name;       /* the attribute part ("" for "[subsys/sysname]"); for
                                 * every other key with {attr}: == raw */
};

struct token {
        enum token_type type;
        enum token_op op;
        unsigned line;            /* physical line of the key (differs from the rule
                                   * line's lineno inside a continued line) */
        unsigned column;          /* 1-based column of the key in that line, for messages */
        struct token_attr attr;   /* ENV{key}, CONST{arch|virt}, ATTR{f}, TEST{mode}, IMPORT{kind}, RUN{type}, SECLABEL{module}, SYSCTL{k} */
        const char *value;        /* raw (unescaped, unsubstituted) value (arena); for
                                   * OPTIONS static_node= the node name, for the other
                                   * OPTIONS the whole option ("link_priority=10") */
        bool value_needs_subst;   /* value contains $ or % */
        struct token_pattern pattern; /* matches: the compiled value (kind for every
                                       * match; alts only for the types before TK_M_TEST
                                       * and TK_M_RESULT, as systemd) */
        union {
                long number;       /* link_priority, log_level */
                bool boolean;      /* watch / nowatch */
                int id;            /* uid / gid; -1 = unset */
                mode_t mode;
                unsigned builtin;  /* IMPORT{builtin}, RUN{builtin}: builtin id (builtins/builtin.h) */
                mode_t test_mode;  /* TEST{mode} mask, 0 = none */
                enum { CONST_ARCH, CONST_VIRT } constant;
        } data;
};

/* Line mask bits: what a line does. As in systemd, rules_apply() looks at a
 * line only if its bits meet the event's mask: GOTO and "update" lines
 * always; SYMLINK/OWNER/GROUP/MODE only for a device with a devnum and NAME
 * only for one with an ifindex, neither on remove. Other lines (only matches
 * and a LABEL, say) are skipped without evaluating their matches. */
#define LINE_HAS_NAME (1u << 0)             /* NAME= */
#define LINE_HAS_DEVLINK (1u << 1)          /* SYMLINK= */
#define LINE_HAS_STATIC_NODE (1u << 2)
#define LINE_HAS_GOTO (1u << 3)
#define LINE_HAS_LABEL (1u << 4)
#define LINE_UPDATE_SOMETHING (1u << 5)     /* any other assignment, PROGRAM, IMPORT */
#define LINE_HAS_OWNER_GROUP_MODE (1u << 6)

struct rule_line {
        const char *file;        /* arena: path of the rules file */
        unsigned lineno;         /* the number systemd gives the logical line: that of its
                                  * LAST physical line (a continued line is numbered where
                                  * it ends); tokens carry their own line/column */
        unsigned mask;
        const char *label;       /* LABEL="..." or NULL */
        const char *goto_label;  /* GOTO="..." as written, or NULL */
        int goto_line;           /* index into rules.lines of the target, -1 = none */
        unsigned n_tokens;
        const struct token *tokens; /* sorted by type (stable) */
};

struct rules_file_stat {
        const char *path;
        dev_t dev;
        ino_t ino;
        struct timespec mtime;
        off_t size;
};

struct rules {
        atomic_uint refcount;
        struct rule_line *lines;
        size_t n_lines;
        struct rules_file_stat *files; /* for rules_should_reload() */
        size_t n_files;
        const char *const *dirs;       /* the directories that were scanned (arena), NULL-terminated */
        struct rules_stats stats;
        enum resolve_names resolve_names;
        void *arena;                   /* owned: every string above */
};

const char *token_type_to_string(enum token_type t);
