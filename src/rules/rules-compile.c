/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: manager (a compiler is used by one thread; NSS lookups happen here,
 * before or outside the workers) */
/* Expressions -> compiled lines, systemd 252 semantics:
 *
 *  - one logical line at a time: each expression is validated against the
 *    operators systemd allows for its key, with systemd's conversions and
 *    warnings (test-rules-compile.c checks the whole table), and becomes a
 *    draft token whose strings point into the parser's scratch buffer; the
 *    first error drops the whole line (exceptions: unknown OPTIONS value,
 *    extra GOTO, bad substitution syntax, unknown user/group);
 *  - a surviving line is sorted by token type (stable) and copied into the
 *    arena with its compiled patterns;
 *  - at the end of a file GOTOs are linked to the first later LABEL of the
 *    file, and in verify mode the udevadm-verify checks run. */

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtins/builtin.h"
#include "rules/rules-compile.h"
#include "rules/rules-perm.h"
#include "shared/hashmap.h"
#include "shared/log.h"

#define SUBST_ARG_MAX 1024 /* UDEV_PATH_SIZE: a {} argument of a substitution */

struct draft {
        struct token tk; /* strings point into the cursor's scratch buffer */
};

/* Per committed line: what GOTO resolution and the verify checks need. */
struct line_info {
        unsigned label_line, label_col;
        unsigned goto_line_no, goto_col;
        bool referenced; /* some GOTO jumps here */
        bool drop;
};

struct name_entry {
        char *name;
        int id; /* -1: unknown */
};

struct name_cache {
        struct name_entry *items;
        size_t n, cap;
};

struct rules_compiler {
        struct arena *arena;
        enum resolve_names resolve;
        bool verify;
        struct rules_diag diag;
        struct rules_reader reader;
        struct rules_cursor cursor;

        /* the line being compiled */
        struct draft *drafts;
        size_t n_drafts, cap_drafts;
        const char *label, *goto_label; /* scratch */
        size_t label_off, goto_off;

        /* compiled lines of all files so far */
        struct rule_line *lines;
        struct line_info *info;
        size_t n_lines, cap_lines;
        size_t n_tokens;

        struct name_cache users, groups;
};

/* ---------------------------------------------------------------- helpers */

static bool isempty(const char *s)
{
        return !s || !*s;
}

static bool startswith(const char *s, const char *prefix)
{
        return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool has_subst_chars(const char *s)
{
        return strpbrk(s, "$%") != NULL;
}

static bool is_match_op(enum token_op op)
{
        return op == OP_MATCH || op == OP_NOMATCH;
}

static const char *op_to_string(enum token_op op)
{
        static const char *const s[] = {
                [OP_MATCH] = "==", [OP_NOMATCH] = "!=", [OP_ADD] = "+=",
                [OP_REMOVE] = "-=", [OP_ASSIGN] = "=",  [OP_ASSIGN_FINAL] = ":=",
        };
        return s[op];
}

const char *token_type_to_string(enum token_type t)
{
        static const char *const names[_TK_TYPE_MAX] = {
                [TK_M_ACTION] = "ACTION",
                [TK_M_DEVPATH] = "DEVPATH",
                [TK_M_KERNEL] = "KERNEL",
                [TK_M_DEVLINK] = "SYMLINK",
                [TK_M_NAME] = "NAME",
                [TK_M_ENV] = "ENV",
                [TK_M_CONST] = "CONST",
                [TK_M_TAG] = "TAG",
                [TK_M_SUBSYSTEM] = "SUBSYSTEM",
                [TK_M_DRIVER] = "DRIVER",
                [TK_M_ATTR] = "ATTR",
                [TK_M_SYSCTL] = "SYSCTL",
                [TK_M_PARENTS_KERNEL] = "KERNELS",
                [TK_M_PARENTS_SUBSYSTEM] = "SUBSYSTEMS",
                [TK_M_PARENTS_DRIVER] = "DRIVERS",
                [TK_M_PARENTS_ATTR] = "ATTRS",
                [TK_M_PARENTS_TAG] = "TAGS",
                [TK_M_TEST] = "TEST",
                [TK_M_PROGRAM] = "PROGRAM",
                [TK_M_IMPORT_FILE] = "IMPORT{file}",
                [TK_M_IMPORT_PROGRAM] = "IMPORT{program}",
                [TK_M_IMPORT_BUILTIN] = "IMPORT{builtin}",
                [TK_M_IMPORT_DB] = "IMPORT{db}",
                [TK_M_IMPORT_CMDLINE] = "IMPORT{cmdline}",
                [TK_M_IMPORT_PARENT] = "IMPORT{parent}",
                [TK_M_RESULT] = "RESULT",
                [TK_A_OPTIONS_STRING_ESCAPE_NONE] = "OPTIONS string_escape=none",
                [TK_A_OPTIONS_STRING_ESCAPE_REPLACE] = "OPTIONS string_escape=replace",
                [TK_A_OPTIONS_DB_PERSIST] = "OPTIONS db_persist",
                [TK_A_OPTIONS_INOTIFY_WATCH] = "OPTIONS watch",
                [TK_A_OPTIONS_DEVLINK_PRIORITY] = "OPTIONS link_priority",
                [TK_A_OPTIONS_LOG_LEVEL] = "OPTIONS log_level",
                [TK_A_OWNER] = "OWNER",
                [TK_A_GROUP] = "GROUP",
                [TK_A_MODE] = "MODE",
                [TK_A_OWNER_ID] = "OWNER",
                [TK_A_GROUP_ID] = "GROUP",
                [TK_A_MODE_ID] = "MODE",
                [TK_A_TAG] = "TAG",
                [TK_A_OPTIONS_STATIC_NODE] = "OPTIONS static_node",
                [TK_A_SECLABEL] = "SECLABEL",
                [TK_A_ENV] = "ENV",
                [TK_A_NAME] = "NAME",
                [TK_A_DEVLINK] = "SYMLINK",
                [TK_A_ATTR] = "ATTR",
                [TK_A_SYSCTL] = "SYSCTL",
                [TK_A_RUN_BUILTIN] = "RUN{builtin}",
                [TK_A_RUN_PROGRAM] = "RUN{program}",
        };
        return (unsigned)t < _TK_TYPE_MAX && names[t] ? names[t] : "?";
}

/* Log at byte `off` of the current logical line. */
static void log_at(struct rules_compiler *c, int level, size_t off, const char *fmt, ...)
        _printf_(4, 5);
static void log_at(struct rules_compiler *c, int level, size_t off, const char *fmt, ...)
{
        char msg[LOG_LINE_MAX];
        unsigned line, col;
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        rules_reader_pos(&c->reader, off, &line, &col);
        rules_diag_log(&c->diag, level, line, col, "%s", msg);
}

#define err_at(c, off, ...) (log_at((c), LOG_ERR, (off), __VA_ARGS__), -EINVAL)

static int invalid_attr(struct rules_compiler *c, const struct rules_expr *e)
{
        return err_at(c, isempty(e->attr) ? e->key_off : e->attr_off,
                      "Invalid attribute for %s, ignoring line.", e->key);
}

static int invalid_op(struct rules_compiler *c, const struct rules_expr *e)
{
        return err_at(c, e->op_off, "Invalid operator '%s' for %s, ignoring line.",
                      op_to_string(e->op), e->key);
}

static void assuming_assign(struct rules_compiler *c, const struct rules_expr *e,
                            const char *ops)
{
        log_at(c, LOG_WARNING, e->op_off, "%s key takes %s operator, assuming '='.", e->key, ops);
}

/* ---------------------------------------------------------------- numbers */

/* systemd's safe_atou/safe_atoi base handling: leading blanks skipped,
 * "0b"/"0o" prefixes, otherwise strtol base 0 (so 0x.. and 0.. work). */
static const char *number_start(const char *s, int *base)
{
        while (rules_is_ws(*s))
                s++;
        *base = 0;
        if (s[0] == '0' && (s[1] == 'b' || s[1] == 'B')) {
                *base = 2;
                return s + 2;
        }
        if (s[0] == '0' && (s[1] == 'o' || s[1] == 'O')) {
                *base = 8;
                return s + 2;
        }
        return s;
}

static int parse_int(const char *s, long *ret)
{
        char *end;
        int base;
        long l;

        s = number_start(s, &base);
        errno = 0;
        l = strtol(s, &end, base);
        if (errno > 0 || end == s || *end != '\0' || l < INT_MIN || l > INT_MAX)
                return -EINVAL;
        *ret = l;
        return 0;
}

static int parse_unsigned(const char *s, unsigned long *ret)
{
        char *end;
        int base;
        unsigned long l;

        s = number_start(s, &base);
        errno = 0;
        l = strtoul(s, &end, base);
        if (errno > 0 || end == s || *end != '\0' || (l != 0 && s[0] == '-') || l > UINT_MAX)
                return -EINVAL;
        *ret = l;
        return 0;
}

static int parse_log_level(const char *s, long *ret)
{
        static const char *const names[] = { "emerg", "alert", "crit", "err",
                                             "warning", "notice", "info", "debug" };
        unsigned long u;

        for (size_t i = 0; i < ARRAY_SIZE(names); i++)
                if (streq(s, names[i])) {
                        *ret = (long)i;
                        return 0;
                }
        if (parse_unsigned(s, &u) < 0 || u > LOG_DEBUG)
                return -EINVAL;
        *ret = (long)u;
        return 0;
}

/* ---------------------------------------------------------------- substitutions */

static const struct {
        const char *name;
        char fmt;
        char kind; /* 'a' attr/env (argument required), 'c' result, 0 other */
} subst_types[] = {
        { "devnode", 'N', 0 }, { "tempnode", 'N', 0 }, { "attr", 's', 'a' },
        { "sysfs", 's', 'a' },  { "env", 'E', 'a' },     { "kernel", 'k', 0 },
        { "number", 'n', 0 },   { "driver", 'd', 0 },    { "devpath", 'p', 0 },
        { "id", 'b', 0 },       { "major", 'M', 0 },     { "minor", 'm', 0 },
        { "result", 'c', 'c' }, { "parent", 'P', 0 },    { "name", 'D', 0 },
        { "links", 'L', 0 },    { "root", 'r', 0 },      { "sys", 'S', 0 },
};

/* %c{N} / %c{N+} argument */
static bool result_arg_valid(const char *arg, size_t len)
{
        char buf[SUBST_ARG_MAX];
        unsigned long u;

        memcpy(buf, arg, len);
        buf[len] = '\0';
        if (len > 0 && buf[len - 1] == '+')
                buf[len - 1] = '\0';
        return parse_unsigned(buf, &u) == 0;
}

/* Substitution syntax, load-time check (systemd's udev_check_format): 0, or
 * -EINVAL with the offset of the offending '$'/'%' and a description. */
static int check_format(const char *v, size_t *ret_off, const char **ret_hint)
{
        for (size_t i = 0; v[i] != '\0'; i++) {
                size_t k = i + 1, j;

                if (v[i] != '$' && v[i] != '%')
                        continue;
                if (v[k] == v[i]) {
                        i = k;
                        continue;
                }
                for (j = 0; j < ARRAY_SIZE(subst_types); j++) {
                        if (v[i] == '$' && startswith(v + k, subst_types[j].name)) {
                                k += strlen(subst_types[j].name);
                                break;
                        }
                        if (v[i] == '%' && v[k] == subst_types[j].fmt) {
                                k++;
                                break;
                        }
                }
                *ret_off = i;
                *ret_hint = "invalid substitution type";
                if (j == ARRAY_SIZE(subst_types))
                        return -EINVAL;
                const char *arg = NULL;
                size_t len = 0;
                if (v[k] == '{') {
                        const char *close = strchr(v + k + 1, '}');

                        if (!close)
                                return -EINVAL;
                        arg = v + k + 1;
                        len = (size_t)(close - arg);
                        if (len == 0 || len >= SUBST_ARG_MAX)
                                return -EINVAL;
                        k = (size_t)(close - v) + 1;
                }
                if (subst_types[j].kind == 'a' && !arg) {
                        *ret_hint = "attribute value missing";
                        return -EINVAL;
                }
                if (subst_types[j].kind == 'c' && arg && !result_arg_valid(arg, len)) {
                        *ret_hint = "attribute value not a valid number";
                        return -EINVAL;
                }
                i = k - 1;
        }
        return 0;
}

/* Empty value or bad substitution syntax: logged as an error, but the token
 * is kept (as systemd does). */
static void check_value(struct rules_compiler *c, const struct rules_expr *e, bool nonempty)
{
        const char *hint;
        size_t off;

        if (nonempty && e->value[0] == '\0')
                log_at(c, LOG_ERR, e->value_off, "Invalid value \"\" for %s (empty value).",
                       e->key);
        else if (check_format(e->value, &off, &hint) < 0)
                log_at(c, LOG_ERR, rules_expr_value_src_off(c->cursor.line, e, off),
                       "Invalid value \"%s\" for %s (char %zu: %s).", e->value, e->key,
                       off + 1, hint);
}

/* Empty attribute: line dropped; bad substitution in it: logged, kept. */
static int check_attr(struct rules_compiler *c, const struct rules_expr *e)
{
        const char *hint;
        size_t off;

        if (isempty(e->attr))
                return invalid_attr(c, e);
        if (check_format(e->attr, &off, &hint) < 0)
                log_at(c, LOG_ERR, e->attr_off + off,
                       "Invalid attribute \"%s\" for %s (char %zu: %s).", e->attr, e->key,
                       off + 1, hint);
        return 0;
}

/* ---------------------------------------------------------------- users, groups */

/* rules_resolve_id() once per name and compiler: the id, or -1 if unknown. */
static int resolve_name(struct rules_compiler *c, bool group, const char *name, int *ret)
{
        struct name_cache *cache = group ? &c->groups : &c->users;
        uint32_t uid;
        int id, r;

        for (size_t i = 0; i < cache->n; i++)
                if (streq(cache->items[i].name, name)) {
                        *ret = cache->items[i].id;
                        return 0;
                }

        r = rules_resolve_id(group, name, &uid);
        if (r == -ENOMEM)
                return r;
        id = r < 0 ? -1 : (int)uid;

        if (cache->n == cache->cap) {
                size_t cap = cache->cap ? 2 * cache->cap : 16;
                struct name_entry *items = realloc(cache->items, cap * sizeof(*items));

                if (!items)
                        return -ENOMEM;
                cache->items = items;
                cache->cap = cap;
        }
        char *copy = strdup(name);
        if (!copy)
                return -ENOMEM;
        cache->items[cache->n++] = (struct name_entry){ .name = copy, .id = id };
        *ret = id;
        return 0;
}

static void name_cache_done(struct name_cache *cache)
{
        for (size_t i = 0; i < cache->n; i++)
                free(cache->items[i].name);
        free(cache->items);
}

/* ---------------------------------------------------------------- drafts */

static struct token *add_token(struct rules_compiler *c, const struct rules_expr *e,
                               enum token_type type, enum token_op op)
{
        unsigned line, col;

        if (c->n_drafts == c->cap_drafts) {
                size_t cap = c->cap_drafts ? 2 * c->cap_drafts : 16;
                struct draft *d = realloc(c->drafts, cap * sizeof(*d));

                if (!d)
                        return NULL;
                c->drafts = d;
                c->cap_drafts = cap;
        }
        rules_reader_pos(&c->reader, e->key_off, &line, &col);
        struct token *t = &c->drafts[c->n_drafts++].tk;
        *t = (struct token){
                .type = type,
                .op = op,
                .line = line,
                .column = col,
                .attr = { .raw = e->attr, .name = e->attr },
                .value = e->value,
        };
        return t;
}

#define ADD_TOKEN(c, e, type, op)                                                  \
        ({                                                                         \
                struct token *_t = add_token((c), (e), (type), (op));              \
                if (!_t)                                                           \
                        return -ENOMEM;                                            \
                _t;                                                                \
        })

/* IMPORT{builtin}, RUN{builtin}, IMPORT{program}: systemd looks the first
 * word up by prefix (udev_builtin_lookup). */
static enum builtin_id lookup_builtin(const char *cmd)
{
        cmd += strspn(cmd, " \t\n\r");
        return builtin_lookup_prefix(cmd, strcspn(cmd, " \t\n\r"));
}

/* ---------------------------------------------------------------- keys */

enum key_id {
        KEY_ACTION, KEY_DEVPATH, KEY_KERNEL, KEY_SYMLINK, KEY_NAME, KEY_ENV, KEY_CONST,
        KEY_TAG, KEY_SUBSYSTEM, KEY_DRIVER, KEY_ATTR, KEY_SYSCTL, KEY_KERNELS,
        KEY_SUBSYSTEMS, KEY_DRIVERS, KEY_ATTRS, KEY_TAGS, KEY_TEST, KEY_PROGRAM,
        KEY_IMPORT, KEY_RESULT, KEY_OPTIONS, KEY_OWNER, KEY_GROUP, KEY_MODE,
        KEY_SECLABEL, KEY_RUN, KEY_GOTO, KEY_LABEL, _KEY_MAX, KEY_INVALID = -1,
};

static const char *const key_names[_KEY_MAX] = {
        [KEY_ACTION] = "ACTION",     [KEY_DEVPATH] = "DEVPATH",
        [KEY_KERNEL] = "KERNEL",     [KEY_SYMLINK] = "SYMLINK",
        [KEY_NAME] = "NAME",         [KEY_ENV] = "ENV",
        [KEY_CONST] = "CONST",       [KEY_TAG] = "TAG",
        [KEY_SUBSYSTEM] = "SUBSYSTEM", [KEY_DRIVER] = "DRIVER",
        [KEY_ATTR] = "ATTR",         [KEY_SYSCTL] = "SYSCTL",
        [KEY_KERNELS] = "KERNELS",   [KEY_SUBSYSTEMS] = "SUBSYSTEMS",
        [KEY_DRIVERS] = "DRIVERS",   [KEY_ATTRS] = "ATTRS",
        [KEY_TAGS] = "TAGS",         [KEY_TEST] = "TEST",
        [KEY_PROGRAM] = "PROGRAM",   [KEY_IMPORT] = "IMPORT",
        [KEY_RESULT] = "RESULT",     [KEY_OPTIONS] = "OPTIONS",
        [KEY_OWNER] = "OWNER",       [KEY_GROUP] = "GROUP",
        [KEY_MODE] = "MODE",         [KEY_SECLABEL] = "SECLABEL",
        [KEY_RUN] = "RUN",           [KEY_GOTO] = "GOTO",
        [KEY_LABEL] = "LABEL",
};

/* Plain match keys: no attribute, only == and !=. */
static const enum token_type simple_match_type[_KEY_MAX] = {
        [KEY_ACTION] = TK_M_ACTION,
        [KEY_DEVPATH] = TK_M_DEVPATH,
        [KEY_KERNEL] = TK_M_KERNEL,
        [KEY_SUBSYSTEM] = TK_M_SUBSYSTEM,
        [KEY_DRIVER] = TK_M_DRIVER,
        [KEY_KERNELS] = TK_M_PARENTS_KERNEL,
        [KEY_SUBSYSTEMS] = TK_M_PARENTS_SUBSYSTEM,
        [KEY_DRIVERS] = TK_M_PARENTS_DRIVER,
        [KEY_TAGS] = TK_M_PARENTS_TAG,
        [KEY_RESULT] = TK_M_RESULT,
};

static enum key_id key_lookup(const char *key)
{
        for (int i = 0; i < _KEY_MAX; i++)
                if (streq(key_names[i], key))
                        return (enum key_id)i;
        return KEY_INVALID;
}

static int compile_simple_match(struct rules_compiler *c, const struct rules_expr *e,
                                enum key_id k)
{
        if (e->attr)
                return invalid_attr(c, e);
        if (!is_match_op(e->op))
                return invalid_op(c, e);
        if (k == KEY_SUBSYSTEM && (streq(e->value, "bus") || streq(e->value, "class")))
                log_at(c, LOG_WARNING, e->value_off, "\"%s\" must be specified as \"subsystem\".",
                       e->value);
        ADD_TOKEN(c, e, simple_match_type[k], e->op);
        return 0;
}

static int compile_symlink(struct rules_compiler *c, const struct rules_expr *e)
{
        if (e->attr)
                return invalid_attr(c, e);
        if (e->op == OP_REMOVE) /* v253+ only */
                return invalid_op(c, e);
        if (is_match_op(e->op)) {
                ADD_TOKEN(c, e, TK_M_DEVLINK, e->op);
                return 0;
        }
        check_value(c, e, false);
        ADD_TOKEN(c, e, TK_A_DEVLINK, e->op);
        return 0;
}

static int compile_name(struct rules_compiler *c, const struct rules_expr *e)
{
        enum token_op op = e->op;

        if (e->attr)
                return invalid_attr(c, e);
        if (op == OP_REMOVE)
                return invalid_op(c, e);
        if (op == OP_ADD) {
                assuming_assign(c, e, "'==', '!=', '=', or ':='");
                op = OP_ASSIGN;
        }
        if (is_match_op(op)) {
                ADD_TOKEN(c, e, TK_M_NAME, op);
                return 0;
        }
        if (streq(e->value, "%k"))
                return err_at(c, e->key_off,
                              "Ignoring NAME=\"%%k\", as it will take no effect.");
        if (isempty(e->value))
                return err_at(c, e->key_off, "Ignoring NAME=\"\", as udev will not delete "
                                             "any network interfaces.");
        check_value(c, e, false);
        ADD_TOKEN(c, e, TK_A_NAME, op);
        return 0;
}

static bool env_key_forbidden(const char *key)
{
        static const char *const forbidden[] = {
                "ACTION", "DEVLINKS", "DEVNAME", "DEVPATH", "DEVTYPE", "DRIVER",
                "IFINDEX", "MAJOR", "MINOR", "SEQNUM", "SUBSYSTEM", "TAGS",
        };

        for (size_t i = 0; i < ARRAY_SIZE(forbidden); i++)
                if (streq(key, forbidden[i]))
                        return true;
        return false;
}

static int compile_env(struct rules_compiler *c, const struct rules_expr *e)
{
        enum token_op op = e->op;

        if (isempty(e->attr))
                return invalid_attr(c, e);
        if (op == OP_REMOVE)
                return invalid_op(c, e);
        if (op == OP_ASSIGN_FINAL) {
                assuming_assign(c, e, "'==', '!=', '=', or '+='");
                op = OP_ASSIGN;
        }
        if (is_match_op(op)) {
                ADD_TOKEN(c, e, TK_M_ENV, op);
                return 0;
        }
        if (env_key_forbidden(e->attr))
                return err_at(c, e->attr_off,
                              "Invalid ENV attribute. '%s' cannot be set, ignoring line.",
                              e->attr);
        check_value(c, e, false);
        ADD_TOKEN(c, e, TK_A_ENV, op);
        return 0;
}

static int compile_const(struct rules_compiler *c, const struct rules_expr *e)
{
        if (isempty(e->attr) || !(streq(e->attr, "arch") || streq(e->attr, "virt")))
                return invalid_attr(c, e);
        if (!is_match_op(e->op))
                return invalid_op(c, e);
        struct token *t = ADD_TOKEN(c, e, TK_M_CONST, e->op);
        t->data.constant = streq(e->attr, "arch") ? CONST_ARCH : CONST_VIRT;
        return 0;
}

static int compile_tag(struct rules_compiler *c, const struct rules_expr *e)
{
        enum token_op op = e->op;

        if (e->attr)
                return invalid_attr(c, e);
        if (op == OP_ASSIGN_FINAL) {
                assuming_assign(c, e, "'==', '!=', '=', or '+='");
                op = OP_ASSIGN;
        }
        if (is_match_op(op)) {
                ADD_TOKEN(c, e, TK_M_TAG, op);
                return 0;
        }
        check_value(c, e, true);
        ADD_TOKEN(c, e, TK_A_TAG, op);
        return 0;
}

/* "[subsys/sysname]attr" (udev_resolve_subsys_kernel): split once here. A
 * malformed bracket form stays a plain name, which never reads anything. */
static void split_subsys_attr(struct token *t)
{
        const char *raw = t->attr.raw, *slash, *close;

        if (raw[0] != '[')
                return;
        slash = strchr(raw + 1, '/');
        if (!slash)
                return;
        close = strchr(slash + 1, ']');
        if (!close)
                return;
        /* marks: the copy into the arena cuts the parts out (see commit) */
        t->attr.subsystem = raw + 1;
        t->attr.sysname = slash + 1;
        t->attr.name = close + 1 + (close[1] == '/');
}

static int compile_attr(struct rules_compiler *c, const struct rules_expr *e, enum key_id k)
{
        enum token_op op = e->op;
        int r;

        r = check_attr(c, e);
        if (r < 0)
                return r;
        if (op == OP_REMOVE)
                return invalid_op(c, e);
        if (op == OP_ADD || op == OP_ASSIGN_FINAL) {
                assuming_assign(c, e, "'==', '!=', or '='");
                op = OP_ASSIGN;
        }
        bool match = is_match_op(op);
        if (!match)
                check_value(c, e, false);
        struct token *t = ADD_TOKEN(c, e,
                                    k == KEY_ATTR ? (match ? TK_M_ATTR : TK_A_ATTR)
                                                  : (match ? TK_M_SYSCTL : TK_A_SYSCTL),
                                    op);
        if (k == KEY_ATTR) {
                split_subsys_attr(t);
                t->attr.needs_subst = match && !t->attr.subsystem && e->attr[0] != '[' &&
                                      has_subst_chars(e->attr);
        } else
                t->attr.needs_subst = has_subst_chars(e->attr);
        return 0;
}

static int compile_attrs(struct rules_compiler *c, const struct rules_expr *e)
{
        int r = check_attr(c, e);

        if (r < 0)
                return r;
        if (!is_match_op(e->op))
                return invalid_op(c, e);
        if (startswith(e->attr, "device/"))
                log_at(c, LOG_WARNING, e->attr_off,
                       "'device' link may not be available in future kernels.");
        if (strstr(e->attr, "../"))
                log_at(c, LOG_WARNING, e->attr_off,
                       "Direct reference to parent sysfs directory, may break in future "
                       "kernels.");
        struct token *t = ADD_TOKEN(c, e, TK_M_PARENTS_ATTR, e->op);
        split_subsys_attr(t);
        t->attr.needs_subst = !t->attr.subsystem && e->attr[0] != '[' && has_subst_chars(e->attr);
        return 0;
}

static int compile_test(struct rules_compiler *c, const struct rules_expr *e)
{
        mode_t mode = 0;

        if (!isempty(e->attr) && rules_parse_mode(e->attr, &mode) < 0)
                return err_at(c, e->attr_off, "Failed to parse mode '%s' of TEST, ignoring line.",
                              e->attr);
        check_value(c, e, true);
        if (!is_match_op(e->op))
                return invalid_op(c, e);
        struct token *t = ADD_TOKEN(c, e, TK_M_TEST, e->op);
        t->data.test_mode = mode;
        return 0;
}

static int compile_program(struct rules_compiler *c, const struct rules_expr *e)
{
        if (e->attr)
                return invalid_attr(c, e);
        check_value(c, e, true);
        if (e->op == OP_REMOVE)
                return invalid_op(c, e);
        ADD_TOKEN(c, e, TK_M_PROGRAM, is_match_op(e->op) ? e->op : OP_MATCH);
        return 0;
}

static int compile_import(struct rules_compiler *c, const struct rules_expr *e)
{
        static const struct {
                const char *kind;
                enum token_type type;
        } kinds[] = {
                { "file", TK_M_IMPORT_FILE },     { "program", TK_M_IMPORT_PROGRAM },
                { "builtin", TK_M_IMPORT_BUILTIN }, { "db", TK_M_IMPORT_DB },
                { "cmdline", TK_M_IMPORT_CMDLINE }, { "parent", TK_M_IMPORT_PARENT },
        };
        enum token_op op = is_match_op(e->op) ? e->op : OP_MATCH;
        enum builtin_id b = _BUILTIN_INVALID;
        size_t i;

        if (isempty(e->attr))
                return invalid_attr(c, e);
        check_value(c, e, true);
        if (e->op == OP_REMOVE)
                return invalid_op(c, e);
        for (i = 0; i < ARRAY_SIZE(kinds); i++)
                if (streq(e->attr, kinds[i].kind))
                        break;
        if (i == ARRAY_SIZE(kinds))
                return invalid_attr(c, e);
        enum token_type type = kinds[i].type;
        if (type == TK_M_IMPORT_PROGRAM || type == TK_M_IMPORT_BUILTIN)
                b = lookup_builtin(e->value);
        if (type == TK_M_IMPORT_BUILTIN && b == _BUILTIN_INVALID)
                return err_at(c, e->value_off, "Unknown builtin command: %s, ignoring line.",
                              e->value);
        if (type == TK_M_IMPORT_PROGRAM && b != _BUILTIN_INVALID) {
                log_at(c, LOG_DEBUG, e->key_off,
                       "Found builtin command '%s' for IMPORT, replacing attribute.",
                       e->value);
                type = TK_M_IMPORT_BUILTIN;
        }
        struct token *t = ADD_TOKEN(c, e, type, op);
        if (type == TK_M_IMPORT_BUILTIN)
                t->data.builtin = (unsigned)b;
        return 0;
}

static int compile_options(struct rules_compiler *c, const struct rules_expr *e)
{
        static const struct {
                const char *option;
                enum token_type type;
        } flags[] = {
                { "string_escape=none", TK_A_OPTIONS_STRING_ESCAPE_NONE },
                { "string_escape=replace", TK_A_OPTIONS_STRING_ESCAPE_REPLACE },
                { "db_persist", TK_A_OPTIONS_DB_PERSIST },
                { "watch", TK_A_OPTIONS_INOTIFY_WATCH },
                { "nowatch", TK_A_OPTIONS_INOTIFY_WATCH },
        };
        enum token_op op = e->op == OP_ADD ? OP_ASSIGN : e->op;
        const char *v = e->value;
        struct token *t;
        long n;

        if (e->attr)
                return invalid_attr(c, e);
        if (is_match_op(e->op) || e->op == OP_REMOVE)
                return invalid_op(c, e);

        for (size_t i = 0; i < ARRAY_SIZE(flags); i++)
                if (streq(v, flags[i].option)) {
                        t = ADD_TOKEN(c, e, flags[i].type, op);
                        t->data.boolean = streq(v, "watch");
                        return 0;
                }
        if (startswith(v, "static_node=")) {
                t = ADD_TOKEN(c, e, TK_A_OPTIONS_STATIC_NODE, op);
                t->value = v + STRLEN("static_node=");
                return 0;
        }
        if (startswith(v, "link_priority=")) {
                if (parse_int(v + STRLEN("link_priority="), &n) < 0)
                        return err_at(c, e->value_off,
                                      "Failed to parse link priority '%s', ignoring line.",
                                      v + STRLEN("link_priority="));
                t = ADD_TOKEN(c, e, TK_A_OPTIONS_DEVLINK_PRIORITY, op);
                t->data.number = n;
                return 0;
        }
        if (startswith(v, "log_level=")) {
                const char *lvl = v + STRLEN("log_level=");

                if (streq(lvl, "reset"))
                        n = -1;
                else if (parse_log_level(lvl, &n) < 0)
                        return err_at(c, e->value_off,
                                      "Failed to parse log level '%s', ignoring line.", lvl);
                t = ADD_TOKEN(c, e, TK_A_OPTIONS_LOG_LEVEL, op);
                t->data.number = n;
                return 0;
        }
        log_at(c, LOG_WARNING, e->value_off, "Invalid value for OPTIONS key, ignoring: '%s'", v);
        return 0;
}

static int compile_owner_group(struct rules_compiler *c, const struct rules_expr *e, bool group)
{
        enum token_op op = e->op;
        const char *v = e->value;
        struct token *t;
        uint32_t num;
        int id = -1, r;

        if (e->attr)
                return invalid_attr(c, e);
        if (is_match_op(op) || op == OP_REMOVE)
                return invalid_op(c, e);
        if (op == OP_ADD) {
                assuming_assign(c, e, "'=' or ':='");
                op = OP_ASSIGN;
        }
        if (rules_parse_id(v, &num) == 0) {
                t = ADD_TOKEN(c, e, group ? TK_A_GROUP_ID : TK_A_OWNER_ID, op);
                t->data.id = (int)num;
                return 0;
        }
        if (c->resolve == RESOLVE_NAMES_EARLY && v[0] != '[' && !has_subst_chars(v)) {
                r = resolve_name(c, group, v, &id);
                if (r < 0)
                        return r;
                if (id == -1)
                        log_at(c, LOG_ERR, e->value_off, "Unknown %s '%s', ignoring.",
                               group ? "group" : "user", v);
                t = ADD_TOKEN(c, e, group ? TK_A_GROUP_ID : TK_A_OWNER_ID, op);
                t->data.id = id;
                return 0;
        }
        if (c->resolve == RESOLVE_NAMES_NEVER) {
                log_at(c, LOG_DEBUG, e->key_off,
                       "%s name resolution is disabled, ignoring %s=\"%s\".",
                       group ? "Group" : "User", e->key, v);
                return 0;
        }
        check_value(c, e, true);
        ADD_TOKEN(c, e, group ? TK_A_GROUP : TK_A_OWNER, op);
        return 0;
}

static int compile_mode(struct rules_compiler *c, const struct rules_expr *e)
{
        enum token_op op = e->op;
        mode_t mode;

        if (e->attr)
                return invalid_attr(c, e);
        if (is_match_op(op) || op == OP_REMOVE)
                return invalid_op(c, e);
        if (op == OP_ADD) {
                assuming_assign(c, e, "'=' or ':='");
                op = OP_ASSIGN;
        }
        if (rules_parse_mode(e->value, &mode) == 0) {
                struct token *t = ADD_TOKEN(c, e, TK_A_MODE_ID, op);
                t->data.mode = mode;
                return 0;
        }
        check_value(c, e, true);
        ADD_TOKEN(c, e, TK_A_MODE, op);
        return 0;
}

static int compile_seclabel(struct rules_compiler *c, const struct rules_expr *e)
{
        enum token_op op = e->op;

        if (isempty(e->attr))
                return invalid_attr(c, e);
        check_value(c, e, true);
        if (is_match_op(op) || op == OP_REMOVE)
                return invalid_op(c, e);
        if (op == OP_ASSIGN_FINAL) {
                assuming_assign(c, e, "'=' or '+='");
                op = OP_ASSIGN;
        }
        ADD_TOKEN(c, e, TK_A_SECLABEL, op);
        return 0;
}

static int compile_run(struct rules_compiler *c, const struct rules_expr *e)
{
        if (is_match_op(e->op) || e->op == OP_REMOVE)
                return invalid_op(c, e);
        check_value(c, e, true);
        if (!e->attr || streq(e->attr, "program")) {
                ADD_TOKEN(c, e, TK_A_RUN_PROGRAM, e->op);
                return 0;
        }
        if (!streq(e->attr, "builtin"))
                return invalid_attr(c, e);
        enum builtin_id b = lookup_builtin(e->value);
        if (b == _BUILTIN_INVALID)
                return err_at(c, e->value_off, "Unknown builtin command '%s', ignoring line.",
                              e->value);
        struct token *t = ADD_TOKEN(c, e, TK_A_RUN_BUILTIN, e->op);
        t->data.builtin = (unsigned)b;
        return 0;
}

static int compile_goto_label(struct rules_compiler *c, const struct rules_expr *e, bool label)
{
        if (e->attr)
                return invalid_attr(c, e);
        if (e->op != OP_ASSIGN)
                return invalid_op(c, e);
        if (label) {
                if (c->label)
                        log_at(c, LOG_WARNING, e->key_off,
                               "Contains multiple LABEL keys, ignoring LABEL=\"%s\".", c->label);
                c->label = e->value;
                c->label_off = e->key_off;
                return 0;
        }
        if (c->goto_label) {
                log_at(c, LOG_WARNING, e->key_off,
                       "Contains multiple GOTO keys, ignoring GOTO=\"%s\".", e->value);
                return 0;
        }
        c->goto_label = e->value;
        c->goto_off = e->key_off;
        return 0;
}

/* 0: accepted or ignored; -EINVAL: line dropped (logged); -ENOMEM. */
static int compile_expr(struct rules_compiler *c, const struct rules_expr *e)
{
        enum key_id k = key_lookup(e->key);

        switch (k) {
        case KEY_ACTION: case KEY_DEVPATH: case KEY_KERNEL: case KEY_SUBSYSTEM:
        case KEY_DRIVER: case KEY_KERNELS: case KEY_SUBSYSTEMS: case KEY_DRIVERS:
        case KEY_TAGS: case KEY_RESULT:
                return compile_simple_match(c, e, k);
        case KEY_SYMLINK:
                return compile_symlink(c, e);
        case KEY_NAME:
                return compile_name(c, e);
        case KEY_ENV:
                return compile_env(c, e);
        case KEY_CONST:
                return compile_const(c, e);
        case KEY_TAG:
                return compile_tag(c, e);
        case KEY_ATTR: case KEY_SYSCTL:
                return compile_attr(c, e, k);
        case KEY_ATTRS:
                return compile_attrs(c, e);
        case KEY_TEST:
                return compile_test(c, e);
        case KEY_PROGRAM:
                return compile_program(c, e);
        case KEY_IMPORT:
                return compile_import(c, e);
        case KEY_OPTIONS:
                return compile_options(c, e);
        case KEY_OWNER: case KEY_GROUP:
                return compile_owner_group(c, e, k == KEY_GROUP);
        case KEY_MODE:
                return compile_mode(c, e);
        case KEY_SECLABEL:
                return compile_seclabel(c, e);
        case KEY_RUN:
                return compile_run(c, e);
        case KEY_GOTO: case KEY_LABEL:
                return compile_goto_label(c, e, k == KEY_LABEL);
        default:
                return err_at(c, e->key_off, "Invalid key '%s', ignoring line.", e->key);
        }
}

/* ---------------------------------------------------------------- commit */

static unsigned token_mask(enum token_type t)
{
        switch (t) {
        case TK_A_NAME:
                return LINE_HAS_NAME;
        case TK_A_DEVLINK:
                return LINE_HAS_DEVLINK;
        case TK_A_OWNER: case TK_A_GROUP: case TK_A_MODE:
        case TK_A_OWNER_ID: case TK_A_GROUP_ID: case TK_A_MODE_ID:
                return LINE_HAS_OWNER_GROUP_MODE;
        case TK_A_OPTIONS_STATIC_NODE:
                return LINE_HAS_STATIC_NODE;
        case TK_M_PROGRAM: case TK_M_IMPORT_FILE: case TK_M_IMPORT_PROGRAM:
        case TK_M_IMPORT_BUILTIN: case TK_M_IMPORT_DB: case TK_M_IMPORT_CMDLINE:
        case TK_M_IMPORT_PARENT:
                return LINE_UPDATE_SOMETHING;
        default:
                return TK_IS_MATCH(t) ? 0 : LINE_UPDATE_SOMETHING;
        }
}

/* What fnmatch() treats specially in a pattern (flags 0). */
#define GLOB_SPECIAL "*?[\\"

static bool type_has_alternatives(enum token_type t)
{
        return t < TK_M_TEST || t == TK_M_RESULT;
}

/* Mark the glob alternatives of the form "literal*": fnmatch(alt, s, 0) is
 * then strncmp(s, literal) == 0 ('*' matches any rest, '/' included; a
 * literal without *?[ or a backslash matches itself only). The common
 * KERNEL=="sd*". */
static int compile_prefixes(struct rules_compiler *c, struct token_pattern *p)
{
        unsigned short *prefix = NULL;

        for (unsigned i = 0; i < p->n_alts; i++) {
                const char *a = p->alts[i];
                size_t n = strlen(a);

                if (n == 0 || n > USHRT_MAX || a[n - 1] != '*' || strcspn(a, GLOB_SPECIAL) != n - 1)
                        continue;
                if (!prefix) {
                        prefix = arena_alloc_array(c->arena, p->n_alts, sizeof(*prefix));
                        if (!prefix)
                                return -ENOMEM;
                        memset(prefix, 0, p->n_alts * sizeof(*prefix));
                }
                prefix[i] = (unsigned short)n; /* 1 + the literal's length */
        }
        p->prefix = prefix;
        return 0;
}

/* Classify a match value: kind (empty, plain, glob, SUBSYSTEM's
 * "subsystem"/"bus"/"class"), "?*" turned into "" with the operator
 * inverted, '|' alternatives. `value` is already in the arena. */
static int compile_pattern(struct rules_compiler *c, struct token *t)
{
        const char *v = t->value;
        struct token_pattern *p = &t->pattern;

        if (t->type == TK_M_SUBSYSTEM &&
            (streq(v, "subsystem") || streq(v, "bus") || streq(v, "class"))) {
                p->kind = MATCH_SUBSYSTEM;
                return 0;
        }
        if (v[0] == '\0') {
                p->kind = MATCH_EMPTY;
                return 0;
        }
        if (streq(v, "?*")) {
                p->kind = MATCH_EMPTY;
                t->op = t->op == OP_MATCH ? OP_NOMATCH : OP_MATCH;
                return 0;
        }
        p->kind = strpbrk(v, "*?[") ? MATCH_GLOB : MATCH_PLAIN;
        if (!type_has_alternatives(t->type))
                return 0;

        size_t len = strlen(v), n = 1;
        for (size_t i = 0; i < len; i++)
                n += v[i] == '|';
        const char **alts = arena_alloc_array(c->arena, n, sizeof(char *));
        char *copy = arena_strndup(c->arena, v, len);
        if (!alts || !copy)
                return -ENOMEM;

        bool empty = false;
        unsigned k = 0;
        for (char *s = copy;;) {
                char *bar = strchr(s, '|');

                if (bar)
                        *bar = '\0';
                if (*s == '\0') {
                        if (!empty)
                                alts[k++] = s; /* one "" alternative: "or empty" */
                        empty = true;
                } else
                        alts[k++] = s;
                if (!bar)
                        break;
                s = bar + 1;
        }
        p->n_alts = k;
        p->alts = alts;
        return p->kind == MATCH_GLOB ? compile_prefixes(c, p) : 0;
}

static const char *arena_dup_or_null(struct rules_compiler *c, const char *s, bool *oom)
{
        const char *r;

        if (!s)
                return NULL;
        r = arena_strdup(c->arena, s);
        if (!r)
                *oom = true;
        return r;
}

/* Copy one draft token into the arena (strings and pattern). */
static int token_to_arena(struct rules_compiler *c, struct token *dst, const struct token *src)
{
        bool oom = false;

        *dst = *src;
        dst->value = arena_dup_or_null(c, src->value, &oom);
        dst->value_needs_subst = src->value && has_subst_chars(src->value);
        dst->attr.raw = arena_dup_or_null(c, src->attr.raw, &oom);
        dst->attr.name = dst->attr.raw;
        if (src->attr.subsystem) {
                size_t sub_len = (size_t)(src->attr.sysname - 1 - src->attr.subsystem);
                const char *close = strchr(src->attr.sysname, ']');

                dst->attr.subsystem = arena_strndup(c->arena, src->attr.subsystem, sub_len);
                dst->attr.sysname = arena_strndup(c->arena, src->attr.sysname,
                                                  (size_t)(close - src->attr.sysname));
                dst->attr.name = arena_dup_or_null(c, src->attr.name, &oom);
                if (!dst->attr.subsystem || !dst->attr.sysname)
                        oom = true;
        }
        if (oom)
                return -ENOMEM;
        if (TK_IS_MATCH(dst->type))
                return compile_pattern(c, dst);
        return 0;
}

static void sort_drafts(struct draft *d, size_t n)
{
        /* stable insertion sort: lines have a handful of tokens */
        for (size_t i = 1; i < n; i++) {
                struct draft x = d[i];
                size_t j = i;

                while (j > 0 && d[j - 1].tk.type > x.tk.type) {
                        d[j] = d[j - 1];
                        j--;
                }
                d[j] = x;
        }
}

static int lines_reserve(struct rules_compiler *c)
{
        if (c->n_lines < c->cap_lines)
                return 0;
        size_t cap = c->cap_lines ? 2 * c->cap_lines : 256;
        struct rule_line *l = realloc(c->lines, cap * sizeof(*l));
        if (!l)
                return -ENOMEM;
        c->lines = l;
        struct line_info *info = realloc(c->info, cap * sizeof(*info));
        if (!info)
                return -ENOMEM;
        c->info = info;
        c->cap_lines = cap;
        return 0;
}

/* The line was parsed without error: check, sort, copy into the arena. */
static int commit_line(struct rules_compiler *c, const char *file)
{
        unsigned mask = 0, line0, col0;
        int r;

        for (size_t i = 0; i < c->n_drafts; i++)
                mask |= token_mask(c->drafts[i].tk.type);
        if (c->label)
                mask |= LINE_HAS_LABEL;
        if (c->goto_label)
                mask |= LINE_HAS_GOTO;
        rules_reader_pos(&c->reader, 0, &line0, &col0);
        if (mask == 0) {
                rules_diag_log(&c->diag, LOG_WARNING, line0, col0,
                               "The line has no effect, ignoring.");
                return 0;
        }

        if (c->verify) {
                bool has_result = false;

                for (size_t i = 0; i < c->n_drafts; i++) {
                        const struct token *t = &c->drafts[i].tk;

                        if (t->type == TK_M_RESULT)
                                has_result = true;
                        else if (has_result && t->type == TK_M_PROGRAM) {
                                rules_diag_log(&c->diag, LOG_WARNING, t->line, t->column,
                                               "Reordering RESULT check after PROGRAM "
                                               "assignment.");
                                break;
                        }
                }
        }

        sort_drafts(c->drafts, c->n_drafts);
        r = lines_reserve(c);
        if (r < 0)
                return r;
        struct token *tokens = arena_alloc_array(c->arena, c->n_drafts, sizeof(struct token));
        if (!tokens)
                return -ENOMEM;
        for (size_t i = 0; i < c->n_drafts; i++) {
                r = token_to_arena(c, &tokens[i], &c->drafts[i].tk);
                if (r < 0)
                        return r;
        }

        bool oom = false;
        struct rule_line *l = &c->lines[c->n_lines];
        struct line_info *info = &c->info[c->n_lines];
        *l = (struct rule_line){
                .file = file,
                .lineno = c->reader.line_number,
                .mask = mask,
                .label = arena_dup_or_null(c, c->label, &oom),
                .goto_label = arena_dup_or_null(c, c->goto_label, &oom),
                .goto_line = -1,
                .n_tokens = (unsigned)c->n_drafts,
                .tokens = tokens,
        };
        if (oom)
                return -ENOMEM;
        *info = (struct line_info){ 0 };
        if (c->label)
                rules_reader_pos(&c->reader, c->label_off, &info->label_line, &info->label_col);
        if (c->goto_label)
                rules_reader_pos(&c->reader, c->goto_off, &info->goto_line_no, &info->goto_col);
        c->n_lines++;
        c->n_tokens += c->n_drafts;
        return 0;
}

/* v255 `udevadm verify`: stray/missing commas and whitespace before the
 * expression that starts at or after `pos`. */
static void check_delimiters(struct rules_compiler *c, size_t pos)
{
        const char *l = c->cursor.line;
        bool ws_before = false, ws_after = false;
        unsigned n_comma = 0;
        size_t i;

        for (i = pos; l[i] != '\0'; i++) {
                if (l[i] == ',')
                        n_comma++;
                else if (rules_is_ws(l[i])) {
                        if (n_comma > 0)
                                ws_after = true;
                        else
                                ws_before = true;
                } else
                        break;
        }
        if (pos == 0) {
                if (n_comma > 0)
                        log_at(c, LOG_NOTICE, pos, "style: stray leading comma.");
                return;
        }
        if (l[i] == '\0') {
                if (n_comma > 0)
                        log_at(c, LOG_NOTICE, pos, "style: stray trailing comma.");
                return;
        }
        if (n_comma == 0)
                log_at(c, LOG_NOTICE, i, "style: a comma between tokens is expected.");
        else if (n_comma > 1)
                log_at(c, LOG_NOTICE, pos, "style: more than one comma between tokens.");
        if (n_comma > 0) {
                if (ws_before)
                        log_at(c, LOG_NOTICE, pos, "style: stray whitespace before comma.");
                if (!ws_after)
                        log_at(c, LOG_NOTICE, i, "style: whitespace after comma is expected.");
        } else if (!ws_before && !ws_after)
                log_at(c, LOG_NOTICE, i, "style: whitespace between tokens is expected.");
}

/* One logical line (in c->reader.buf). */
static int compile_line(struct rules_compiler *c, const char *file)
{
        struct rules_expr e;
        const char *msg;
        size_t err_off;
        int r;

        r = rules_cursor_reset(&c->cursor, c->reader.buf, c->reader.buf_len);
        if (r < 0)
                return r;
        c->n_drafts = 0;
        c->label = c->goto_label = NULL;

        for (;;) {
                if (c->verify && c->cursor.line[c->cursor.pos] != '\0')
                        check_delimiters(c, c->cursor.pos);
                r = rules_cursor_next(&c->cursor, &e, &err_off, &msg);
                if (r == 0)
                        break;
                if (r < 0) {
                        log_at(c, LOG_ERR, err_off, "Invalid key/value pair (%s), ignoring line.",
                               msg);
                        return 0;
                }
                r = compile_expr(c, &e);
                if (r == -EINVAL)
                        return 0;
                if (r < 0)
                        return r;
        }
        return commit_line(c, file);
}

/* ---------------------------------------------------------------- per file */

static int resolve_gotos(struct rules_compiler *c, size_t first)
{
        struct hashmap labels;
        size_t n = c->n_lines;
        int r = 0;

        hashmap_init(&labels);
        /* backwards: the map holds the nearest later line of each label */
        for (size_t i = n; i-- > first;) {
                struct rule_line *l = &c->lines[i];

                if (l->goto_label) {
                        void *v = hashmap_get(&labels, l->goto_label, strlen(l->goto_label));

                        if (v) {
                                l->goto_line = (int)((uintptr_t)v - 1);
                                c->info[l->goto_line].referenced = true;
                        }
                }
                if (l->label) {
                        r = hashmap_put(&labels, l->label, strlen(l->label),
                                        (void *)(uintptr_t)(i + 1));
                        if (r < 0)
                                break;
                }
        }
        hashmap_deinit(&labels);
        if (r < 0)
                return r;

        /* forwards: report and drop in file order */
        bool any_drop = false;
        for (size_t i = first; i < n; i++) {
                struct rule_line *l = &c->lines[i];
                struct line_info *info = &c->info[i];

                if (!l->goto_label || l->goto_line >= 0)
                        continue;
                rules_diag_log(&c->diag, LOG_ERR, info->goto_line_no, info->goto_col,
                               "GOTO=\"%s\" has no matching label, ignoring.", l->goto_label);
                l->goto_label = NULL;
                l->mask &= ~LINE_HAS_GOTO;
                if ((l->mask & ~LINE_HAS_LABEL) != 0)
                        continue;
                rules_diag_log(&c->diag, LOG_WARNING, info->goto_line_no, info->goto_col,
                               "The line has no effect any more, dropping.");
                c->n_tokens -= l->n_tokens;
                l->n_tokens = 0;
                if (!l->label) {
                        info->drop = true;
                        any_drop = true;
                }
        }
        if (!any_drop)
                return 0;

        /* compact; targets are never dropped (they have a label) */
        _cleanup_free_ size_t *map = malloc((n - first) * sizeof(size_t));
        if (!map)
                return -ENOMEM;
        size_t k = first;
        for (size_t i = first; i < n; i++) {
                map[i - first] = k;
                if (c->info[i].drop)
                        continue;
                c->lines[k] = c->lines[i];
                c->info[k] = c->info[i];
                k++;
        }
        c->n_lines = k;
        for (size_t i = first; i < k; i++)
                if (c->lines[i].goto_line >= 0)
                        c->lines[i].goto_line = (int)map[(size_t)c->lines[i].goto_line - first];
        return 0;
}

/* ----- verify: duplicates and conflicts (v255 udev_check_conflicts_duplicates) */

static bool data_is_string(enum token_type t)
{
        return t == TK_M_ENV || t == TK_M_CONST || t == TK_M_ATTR || t == TK_M_SYSCTL ||
               t == TK_M_PARENTS_ATTR || t == TK_A_SECLABEL || t == TK_A_ENV ||
               t == TK_A_ATTR || t == TK_A_SYSCTL;
}

static bool same_data(const struct token *a, const struct token *b)
{
        if (data_is_string(a->type))
                return a->attr.raw && b->attr.raw ? streq(a->attr.raw, b->attr.raw)
                                                  : a->attr.raw == b->attr.raw;
        switch (a->type) {
        case TK_M_TEST:
                return a->data.test_mode == b->data.test_mode;
        case TK_M_IMPORT_BUILTIN: case TK_A_RUN_BUILTIN:
                return a->data.builtin == b->data.builtin;
        case TK_A_OWNER_ID: case TK_A_GROUP_ID:
                return a->data.id == b->data.id;
        case TK_A_MODE_ID:
                return a->data.mode == b->data.mode;
        case TK_A_OPTIONS_INOTIFY_WATCH:
                return a->data.boolean == b->data.boolean;
        case TK_A_OPTIONS_DEVLINK_PRIORITY: case TK_A_OPTIONS_LOG_LEVEL:
                return a->data.number == b->data.number;
        default:
                return true;
        }
}

/* The value systemd keeps for the token (NULL where it keeps only data). */
static const char *sd_value(const struct token *t)
{
        switch (t->type) {
        case TK_A_OPTIONS_STRING_ESCAPE_NONE: case TK_A_OPTIONS_STRING_ESCAPE_REPLACE:
        case TK_A_OPTIONS_DB_PERSIST: case TK_A_OPTIONS_INOTIFY_WATCH:
        case TK_A_OPTIONS_DEVLINK_PRIORITY: case TK_A_OPTIONS_LOG_LEVEL:
        case TK_A_OWNER_ID: case TK_A_GROUP_ID: case TK_A_MODE_ID:
                return NULL;
        default:
                return t->value;
        }
}

static bool has_empty_alt(const struct token *t)
{
        for (unsigned i = 0; i < t->pattern.n_alts; i++)
                if (t->pattern.alts[i][0] == '\0')
                        return true;
        return false;
}

/* systemd's match type: kind plus "with empty"; -1 for assignments. */
static int sd_match_type(const struct token *t)
{
        if (!TK_IS_MATCH(t->type))
                return -1;
        return (int)t->pattern.kind * 2 + has_empty_alt(t);
}

static bool trailing_ws_flag(const struct token *t)
{
        size_t n;

        if (t->type != TK_M_ATTR && t->type != TK_M_PARENTS_ATTR)
                return false;
        n = strlen(t->value);
        return n > 0 && !strchr(" \t\n\r\v\f", t->value[n - 1]);
}

static bool alt_in(const struct token *t, const char *s)
{
        for (unsigned i = 0; i < t->pattern.n_alts; i++)
                if (streq(t->pattern.alts[i], s))
                        return true;
        return false;
}

static bool alts_equal(const struct token *a, const struct token *b)
{
        for (unsigned i = 0; i < a->pattern.n_alts; i++)
                if (!alt_in(b, a->pattern.alts[i]))
                        return false;
        for (unsigned i = 0; i < b->pattern.n_alts; i++)
                if (!alt_in(a, b->pattern.alts[i]))
                        return false;
        return true;
}

static bool tokens_eq(const struct token *a, const struct token *b)
{
        if (a->type != b->type || sd_match_type(a) != sd_match_type(b) ||
            trailing_ws_flag(a) != trailing_ws_flag(b) || !same_data(a, b))
                return false;
        if (TK_IS_MATCH(a->type) &&
            (a->pattern.kind == MATCH_EMPTY || a->pattern.kind == MATCH_SUBSYSTEM))
                return true;
        if (TK_IS_MATCH(a->type) && type_has_alternatives(a->type))
                return alts_equal(a, b);
        const char *va = sd_value(a), *vb = sd_value(b);
        return va && vb ? streq(va, vb) : va == vb;
}

static bool tokens_conflict(const struct token *a, const struct token *b)
{
        if (a->type != b->type || !TK_IS_MATCH(a->type) || !type_has_alternatives(a->type) ||
            a->op != OP_MATCH || b->op != OP_MATCH || sd_match_type(a) != sd_match_type(b) ||
            trailing_ws_flag(a) != trailing_ws_flag(b) || !same_data(a, b) ||
            has_empty_alt(a))
                return false;
        if (a->pattern.kind == MATCH_PLAIN) {
                for (unsigned i = 0; i < a->pattern.n_alts; i++)
                        if (alt_in(b, a->pattern.alts[i]))
                                return false;
                return true;
        }
        if (a->pattern.kind == MATCH_GLOB) {
                for (unsigned i = 0; i < a->pattern.n_alts; i++) {
                        const char *x = a->pattern.alts[i];
                        size_t xn = strcspn(x, "*?[");

                        if (xn == 0)
                                return false;
                        for (unsigned j = 0; j < b->pattern.n_alts; j++) {
                                const char *y = b->pattern.alts[j];
                                size_t yn = strcspn(y, "*?[");

                                if (yn == 0 || strncmp(x, y, MIN(xn, yn)) == 0)
                                        return false;
                        }
                }
                return true;
        }
        return false;
}

static void check_line_tokens(struct rules_compiler *c, const struct rule_line *l)
{
        bool dup = false, conflict = false;

        for (unsigned i = 0; i < l->n_tokens; i++)
                for (unsigned j = i + 1; j < l->n_tokens; j++) {
                        const struct token *a = &l->tokens[i], *b = &l->tokens[j];
                        bool new_dup = false, new_conflict = false;

                        if (tokens_eq(a, b)) {
                                new_dup = !dup && a->op == b->op;
                                new_conflict = !conflict && ((a->op == OP_MATCH &&
                                                              b->op == OP_NOMATCH) ||
                                                             (a->op == OP_NOMATCH &&
                                                              b->op == OP_MATCH));
                        } else if (!conflict && tokens_conflict(a, b))
                                new_conflict = true;
                        else
                                continue;
                        if (new_dup) {
                                dup = true;
                                rules_diag_log(&c->diag, LOG_WARNING, b->line, b->column,
                                               "duplicate expressions.");
                        }
                        if (new_conflict) {
                                conflict = true;
                                rules_diag_log(&c->diag, LOG_ERR, b->line, b->column,
                                               "conflicting match expressions, the line has "
                                               "no effect.");
                        }
                        if (dup && conflict)
                                return;
                }
}

static void verify_file_lines(struct rules_compiler *c, size_t first)
{
        for (size_t i = first; i < c->n_lines; i++) {
                const struct rule_line *l = &c->lines[i];
                const struct line_info *info = &c->info[i];

                if (l->label && !info->referenced)
                        rules_diag_log(&c->diag, LOG_NOTICE, info->label_line, info->label_col,
                                       "style: LABEL=\"%s\" is unused.", l->label);
                check_line_tokens(c, l);
        }
}

int rules_compiler_add_text(struct rules_compiler *c, const char *file, const char *text,
                            size_t len)
{
        size_t first = c->n_lines;
        int r;

        c->diag.file = file;
        r = rules_reader_init(&c->reader, &c->diag, text, len);
        if (r < 0)
                return r;
        while ((r = rules_reader_next(&c->reader)) > 0) {
                r = compile_line(c, file);
                if (r < 0)
                        break;
        }
        if (r == 0)
                r = resolve_gotos(c, first);
        if (r == 0 && c->verify)
                verify_file_lines(c, first);
        rules_reader_done(&c->reader);
        return r;
}

/* ---------------------------------------------------------------- object */

int rules_compiler_new(struct arena *arena, enum resolve_names resolve, bool verify,
                       struct rules_compiler **ret)
{
        struct rules_compiler *c = calloc(1, sizeof(*c));

        if (!c)
                return -ENOMEM;
        c->arena = arena;
        c->resolve = resolve;
        c->verify = verify;
        rules_cursor_init(&c->cursor);
        *ret = c;
        return 0;
}

void rules_compiler_free(struct rules_compiler *c)
{
        if (!c)
                return;
        rules_cursor_done(&c->cursor);
        free(c->drafts);
        free(c->lines);
        free(c->info);
        name_cache_done(&c->users);
        name_cache_done(&c->groups);
        free(c);
}

struct rules_diag *rules_compiler_diag(struct rules_compiler *c)
{
        return &c->diag;
}

int rules_compiler_finish(struct rules_compiler *c, struct rules *r)
{
        r->lines = arena_memdup(c->arena, c->lines, c->n_lines * sizeof(struct rule_line));
        if (!r->lines)
                return -ENOMEM;
        r->n_lines = c->n_lines;
        r->stats.lines = (unsigned)c->n_lines;
        r->stats.tokens = (unsigned)c->n_tokens;
        r->stats.errors = c->diag.errors;
        r->stats.warnings = c->diag.warnings;
        r->stats.notices = c->diag.notices;
        return 0;
}
