/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: worker-local (one udev_event per thread; the snapshot is read-only) */
/* The rules evaluator (systemd 252 semantics): walks the compiled lines of
 * a snapshot against one event, executes matches, PROGRAM and IMPORT inline,
 * applies ENV/TAG/ATTR/SYSCTL/OPTIONS and collects NAME/SYMLINK/OWNER/GROUP/
 * MODE/SECLABEL/RUN into the struct udev_event.
 *
 * No allocation per token except where the result is kept (properties, list
 * entries); substitution buffers live on the stack with systemd's sizes. */

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "builtins/builtin.h"
#include "device/node.h"
#include "rules/event-exec.h"
#include "rules/rules-exec.h"
#include "event/event-format.h"
#include "rules/rules-internal.h"
#include "rules/rules-perm.h"
#include "rules/rules-trace.h"
#include "event/udev-event.h"
#include "shared/fileio.h"
#include "shared/log.h"
#include "shared/macro.h"

/* Buffer sizes: UDEV_LINE_SIZE etc. in rules-format.h. */
#define IMPORT_FILE_LINE_MAX (1024 * 1024)
#define IMPORT_FILE_MAX (16 * 1024 * 1024)
#define PROC_CMDLINE_MAX (64 * 1024)
#define ARGV_MAX 256

enum escape_mode {
        ESCAPE_UNSET,
        ESCAPE_NONE,
        ESCAPE_REPLACE,
};

struct exec_state {
        const struct rules *rules;
        struct udev_event *ev;
        const struct rule_line *line; /* for messages */
        enum escape_mode esc;
        bool has_devnum;
        bool has_ifindex;
        /* DEVLINKS / TAGS+CURRENT_TAGS properties not yet refreshed */
        bool links_outdated;
        bool tags_outdated;
        /* index in the line of the token that failed or aborted (written by
         * apply_line() on every failure; read only when tracing) */
        unsigned fail_tok;
        /* tracing only (ev->trace != NULL): the line being evaluated and the
         * result of the last program or builtin it ran */
        size_t trace_line;
        int trace_status;
};

/* "<sysname>: <file>:<line> message", like systemd's log_rule_*(). */
#define rlog(x, level, ...) rlog_errno(x, level, 0, __VA_ARGS__)
#define rlog_errno(x, level, error, fmt, ...)                                       \
        log_full_errno(level, error, "%s: %s:%u " fmt, device_sysname((x)->ev->dev), \
                       (x)->line->file, (x)->line->lineno, ##__VA_ARGS__)
#define dlog(x, level, fmt, ...)                                                    \
        log_full(level, "%s: " fmt, device_sysname((x)->ev->dev), ##__VA_ARGS__)

/* ------------------------------------------------------------------ helpers */

static size_t subst(struct exec_state *x, const char *src, char *buf, size_t size,
                    bool replace_ws, bool *truncated)
{
        return udev_format(x->ev, src, buf, size, replace_ws ? UDEV_FORMAT_REPLACE_WHITESPACE : 0,
                           truncated);
}

static bool is_ws(char c)
{
        return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static void strip_trailing_ws(char *s)
{
        size_t n = strlen(s);

        while (n > 0 && is_ws(s[n - 1]))
                s[--n] = '\0';
}

static char *strip_ws(char *s)
{
        while (is_ws(*s))
                s++;
        strip_trailing_ws(s);
        return s;
}

static bool copy_str(char *dst, size_t size, const char *src)
{
        size_t n = strlen(src);

        if (n >= size) {
                memcpy(dst, src, size - 1);
                dst[size - 1] = '\0';
                return false;
        }
        memcpy(dst, src, n + 1);
        return true;
}

/* Match one string against a compiled pattern (compile_pattern() in
 * rules-compile.c); absent = "". */
static bool pattern_match(const struct token_pattern *p, const char *s)
{
        if (!s)
                s = "";
        switch (p->kind) {
        case MATCH_EMPTY:
                return s[0] == '\0';
        case MATCH_SUBSYSTEM:
                return streq(s, "subsystem") || streq(s, "bus") || streq(s, "class");
        case MATCH_PLAIN:
                for (unsigned i = 0; i < p->n_alts; i++)
                        if (p->alts[i][0] == '\0' ? s[0] == '\0' : streq(p->alts[i], s))
                                return true;
                return false;
        case MATCH_GLOB:
                for (unsigned i = 0; i < p->n_alts; i++) {
                        const char *a = p->alts[i];

                        if (a[0] == '\0' ? s[0] == '\0'
                            : p->prefix && p->prefix[i] ? strncmp(s, a, p->prefix[i] - 1u) == 0
                            : fnmatch(a, s, 0) == 0)
                                return true;
                }
                return false;
        }
        return false;
}

/* == / != of a single value. */
static bool token_match_string(const struct token *t, const char *s)
{
        bool m = pattern_match(&t->pattern, s);
        return t->op == OP_NOMATCH ? !m : m;
}

/* List semantics (SYMLINK==, TAG==, TAGS==): == true if any element
 * matches, != true if none does. `strip` is a prefix removed first. */
static bool token_match_list(const struct token *t, const struct strlist *l, const char *strip)
{
        size_t sl = strip ? strlen(strip) : 0;

        for (size_t i = 0; l && i < l->n; i++) {
                const char *s = l->items[i];
                if (sl && strncmp(s, strip, sl) == 0)
                        s += sl;
                if (pattern_match(&t->pattern, s))
                        return t->op != OP_NOMATCH;
        }
        return t->op == OP_NOMATCH;
}

/* A token that "succeeds" for IMPORT/PROGRAM: == true on success. */
static bool op_result(const struct token *t, bool success)
{
        return t->op == OP_NOMATCH ? !success : success;
}

static int join_path(char *buf, size_t size, const char *a, const char *b)
{
        int w = snprintf(buf, size, "%s/%s", a, b);
        return w < 0 || (size_t)w >= size ? -ENAMETOOLONG : 0;
}

/* Replace one "<slash><star><slash>" wildcard component of path by the first directory entry (not
 * starting with '.') for which the rest of the path exists. */
static int attr_subst_subdir(char *path, size_t size)
{
        char buf[PATH_MAX];
        const char *tail = strstr(path, "/*/");
        DIR *dir;
        struct dirent *de;
        size_t len;
        int r = -ENOENT;

        if (!tail)
                return 0;
        len = (size_t)(tail - path) + 1; /* keep the slash */
        if (len >= sizeof(buf))
                return -ENOENT;
        memcpy(buf, path, len);
        buf[len] = '\0';
        tail += 2; /* "/rest" */
        dir = opendir(buf);
        if (!dir)
                return -errno;
        while ((de = readdir(dir))) {
                char cand[PATH_MAX];
                int w;

                if (de->d_name[0] == '.')
                        continue;
                w = snprintf(cand, sizeof(cand), "%s%s%s", buf, de->d_name, tail);
                if (w < 0 || (size_t)w >= sizeof(cand) || (size_t)w >= size)
                        continue;
                if (access(cand, F_OK) < 0)
                        continue;
                memcpy(path, cand, (size_t)w + 1);
                r = 0;
                break;
        }
        closedir(dir);
        return r;
}

/* Property set by a rule (stored in the DB unless '.'-prefixed). */
static int set_property(struct exec_state *x, const char *key, const char *value)
{
        int r = proplist_set(&x->ev->props, key, value, false);
        if (r < 0)
                return rlog_errno(x, LOG_ERR, r, "Failed to add property %s=%s: %m", key, value);
        return 0;
}

/* sd-device keeps DEVLINKS, TAGS and CURRENT_TAGS as properties that are
 * refreshed lazily, whenever a property is read: that decides where they
 * appear in the property list (udevadm test output, broadcast order, the
 * environment of programs). Rebuild them when they are outdated, keeping
 * their place; an empty list removes the property. They are never stored in
 * the DB (flagged like kernel properties). */
static int sync_synthesized(struct exec_state *x)
{
        char buf[UDEV_LINE_SIZE];
        int r = 0;

        if (x->links_outdated) {
                x->links_outdated = false;
                if (udev_event_join_list(&x->ev->devlinks, " ", false, buf, sizeof(buf)) < 0)
                        rlog(x, LOG_WARNING, "DEVLINKS too long, not updated");
                else if (buf[0])
                        r = proplist_set(&x->ev->props, "DEVLINKS", buf, true);
                else
                        (void)proplist_unset(&x->ev->props, "DEVLINKS");
        }
        if (r >= 0 && x->tags_outdated) {
                x->tags_outdated = false;
                for (int i = 0; i < 2 && r >= 0; i++) {
                        const struct strlist *l = i == 0 ? &x->ev->tags : &x->ev->current_tags;
                        const char *key = i == 0 ? "TAGS" : "CURRENT_TAGS";

                        if (udev_event_join_list(l, NULL, true, buf, sizeof(buf)) < 0)
                                rlog(x, LOG_WARNING, "%s too long, not updated", key);
                        else if (buf[0])
                                r = proplist_set(&x->ev->props, key, buf, true);
                        else
                                (void)proplist_unset(&x->ev->props, key);
                }
        }
        return r;
}

/* Does evaluating this token read the device's properties? */
static bool token_reads_properties(const struct token *t)
{
        switch (t->type) {
        case TK_M_ENV:
        case TK_M_PROGRAM:
        case TK_M_IMPORT_PROGRAM:
        case TK_M_IMPORT_BUILTIN:
                return true;
        case TK_A_ENV:
                if (t->op == OP_ADD)
                        return true;
                break;
        default:
                break;
        }
        return (t->value_needs_subst && t->value &&
                (strstr(t->value, "env{") || strstr(t->value, "%E"))) ||
               (t->attr.needs_subst && t->attr.raw &&
                (strstr(t->attr.raw, "env{") || strstr(t->attr.raw, "%E")));
}

/* The driver of the event device: DRIVER from the uevent, else read lazily,
 * and then kept as a (non-DB) property, as sd-device does. */
static int event_driver(struct exec_state *x, const char **ret)
{
        const char *v = proplist_get(&x->ev->props, "DRIVER");
        int r;

        if (v) {
                *ret = v;
                return 0;
        }
        r = device_get_driver(x->ev->dev, &v);
        if (r == -ENOENT) {
                *ret = NULL;
                return 0;
        }
        if (r < 0)
                return rlog_errno(x, LOG_ERR, r, "Failed to get driver: %m");
        r = proplist_set(&x->ev->props, "DRIVER", v, true);
        if (r < 0)
                return r;
        *ret = proplist_get(&x->ev->props, "DRIVER");
        return 0;
}

static int device_driver(struct exec_state *x, struct device *d, const char **ret)
{
        int r;

        if (d == x->ev->dev)
                return event_driver(x, ret);
        r = device_get_driver(d, ret);
        if (r == -ENOENT) {
                *ret = NULL;
                return 0;
        }
        if (r < 0)
                return rlog_errno(x, LOG_ERR, r, "Failed to get driver: %m");
        return 0;
}

static int device_subsystem(struct exec_state *x, struct device *d, const char **ret)
{
        int r = device_get_subsystem(d, ret);

        if (r == -ENOENT) {
                *ret = NULL;
                return 0;
        }
        if (r < 0)
                return rlog_errno(x, LOG_ERR, r, "Failed to get subsystem: %m");
        return 0;
}

/* ------------------------------------------------------------------ matches */

/* The value ATTR{}/ATTRS{} compares, in *ret (possibly in vbuf); false when
 * there is none (which matches neither == nor !=). */
static bool attr_value(struct exec_state *x, const struct token *t, struct device *d,
                       char vbuf[UDEV_NAME_SIZE], const char **ret)
{
        char nbuf[UDEV_NAME_SIZE];
        const char *name = t->attr.raw, *value = NULL;
        bool truncated;
        int r;

        if (t->attr.subsystem) {
                /* "[SUBSYSTEM/SYSNAME]attr": not substituted; missing device =
                 * no match, missing/unreadable attribute = "" */
                r = udev_resolve_subsys_kernel(x->ev->ctx, t->attr.raw, true, vbuf,
                                               UDEV_NAME_SIZE);
                if (r < 0)
                        return false;
                value = vbuf;
        } else {
                if (t->attr.needs_subst) {
                        subst(x, name, nbuf, sizeof(nbuf), false, &truncated);
                        if (truncated) {
                                rlog(x, LOG_DEBUG, "The sysfs attribute name '%s' is truncated "
                                     "while substituting into '%s', assuming the %s key does "
                                     "not match.", nbuf, name,
                                     t->type == TK_M_ATTR ? "ATTR" : "ATTRS");
                                return false;
                        }
                        name = nbuf;
                }
                if (device_get_sysattr(d, name, &value) < 0)
                        return false;
        }

        /* Strip trailing whitespace unless the pattern asks for it. */
        size_t vl = strlen(t->value);
        if (vl > 0 && !is_ws(t->value[vl - 1])) {
                if (value != vbuf)
                        copy_str(vbuf, UDEV_NAME_SIZE, value);
                strip_trailing_ws(vbuf);
                value = vbuf;
        }
        *ret = value;
        return true;
}

/* ATTR{}/ATTRS{}: read failure = false for == and !=. */
static bool match_attr(struct exec_state *x, const struct token *t, struct device *d)
{
        char vbuf[UDEV_NAME_SIZE];
        const char *value;

        return attr_value(x, t, d, vbuf, &value) && token_match_string(t, value);
}

/* sysctl name: if the first separator is '.', swap '.' and '/'; drop a
 * leading '/'. So net.ipv4.conf.eth0/1.rp_filter becomes
 * net/ipv4/conf/eth0.1/rp_filter. */
static void sysctl_normalize(char *s)
{
        char *sep = strpbrk(s, "./");

        if (sep && *sep == '.')
                for (char *p = sep; *p; p++)
                        *p = *p == '.' ? '/' : *p == '/' ? '.' : *p;
        if (s[0] == '/')
                memmove(s, s + 1, strlen(s));
}

static int sysctl_path(const char *key, char *buf, size_t size)
{
        if (strstr(key, "..") || !*key)
                return -EINVAL;
        return join_path(buf, size, "/proc/sys", key);
}

static int match_sysctl(struct exec_state *x, const struct token *t)
{
        char key[UDEV_PATH_SIZE], path[PATH_MAX];
        _cleanup_free_ char *value = NULL;
        const char *keysrc = t->attr.raw ? t->attr.raw : "";
        bool truncated;
        size_t len;
        int r;

        subst(x, keysrc, key, sizeof(key), false, &truncated);
        if (truncated) {
                rlog(x, LOG_DEBUG, "The sysctl entry name '%s' is truncated while substituting "
                     "into '%s', assuming the SYSCTL key does not match.", key, keysrc);
                return 0;
        }
        sysctl_normalize(key);
        r = sysctl_path(key, path, sizeof(path));
        if (r >= 0)
                r = read_file_bounded(path, UDEV_LINE_SIZE, &value, &len);
        if (r == -ENOENT)
                return token_match_string(t, "");
        if (r < 0)
                return rlog_errno(x, LOG_ERR, r, "Failed to read sysctl '%s': %m", key);
        return token_match_string(t, strip_ws(value));
}

static int match_test(struct exec_state *x, const struct token *t)
{
        char buf[UDEV_PATH_SIZE], path[PATH_MAX];
        struct stat st;
        bool truncated;
        int r;

        subst(x, t->value, buf, sizeof(buf), false, &truncated);
        if (truncated) {
                rlog(x, LOG_DEBUG, "The file name '%s' is truncated while substituting into "
                     "'%s', assuming the TEST key does not match", buf, t->value);
                return 0;
        }
        if (buf[0] == '/') {
                if (!copy_str(path, sizeof(path), buf))
                        return 0;
        } else if (buf[0] != '[' ||
                   udev_resolve_subsys_kernel(x->ev->ctx, buf, false, path, sizeof(path)) < 0) {
                if (join_path(path, sizeof(path), device_syspath(x->ev->dev), buf) < 0)
                        return 0;
        }
        r = attr_subst_subdir(path, sizeof(path));
        if (r == -ENOENT)
                return t->op == OP_NOMATCH;
        if (r < 0)
                return rlog_errno(x, LOG_ERR, r, "Failed to test for the existence of '%s': %m",
                                  path);
        if (stat(path, &st) < 0)
                return t->op == OP_NOMATCH;
        if (t->data.test_mode == 0)
                return t->op == OP_MATCH;
        return op_result(t, (st.st_mode & t->data.test_mode) != 0);
}

/* ------------------------------------------------------------ PROGRAM, IMPORT */

static uint64_t event_deadline(const struct udev_event *ev)
{
        if (ev->timeout_usec == 0 || ev->timeout_usec == UINT64_MAX)
                return UINT64_MAX;
        return ev->start_usec + ev->timeout_usec;
}

/* Spawn cmd with the event's properties as environment. Returns the
 * spawner's result: 0 success, >0 exit status, <0 could not run. */
static int spawn_program(struct udev_event *ev, const char *cmd, bool is_run, char *out,
                         size_t out_size, bool *truncated)
{
        char **envp;
        int r;

        if (truncated)
                *truncated = false;
        if (out && out_size)
                out[0] = '\0';
        if (!ev->spawner.spawn)
                return -EOPNOTSUPP;
        envp = udev_event_build_env(ev);
        if (!envp)
                return -ENOMEM;
        r = ev->spawner.spawn(ev->spawner.userdata, cmd, envp, is_run, event_deadline(ev), out,
                              out_size, truncated);
        udev_event_free_env(envp);
        return r;
}

/* spawn_program() for PROGRAM and IMPORT{program}, recorded when tracing. */
static int spawn_traced(struct exec_state *x, enum rules_trace_exec_kind kind, const char *cmd,
                        char *out, size_t out_size, bool *truncated)
{
        uint64_t t0;
        int r;

        if (_likely_(!x->ev->trace))
                return spawn_program(x->ev, cmd, false, out, out_size, truncated);
        t0 = rules_trace_now();
        r = spawn_program(x->ev, cmd, false, out, out_size, truncated);
        rules_trace_exec(x->ev->trace, x->trace_line, kind, cmd, r, rules_trace_now() - t0);
        x->trace_status = r;
        return r;
}

static int match_program(struct exec_state *x, const struct token *t)
{
        char cmd[UDEV_LINE_SIZE], result[UDEV_LINE_SIZE];
        bool truncated;
        size_t count;
        int r;

        free(x->ev->program_result);
        x->ev->program_result = NULL;
        subst(x, t->value, cmd, sizeof(cmd), false, &truncated);
        if (truncated) {
                rlog(x, LOG_DEBUG, "The command '%s' is truncated while substituting into '%s', "
                     "assuming the PROGRAM key does not match.", cmd, t->value);
                return 0;
        }
        rlog(x, LOG_DEBUG, "Running PROGRAM '%s'", cmd);
        r = spawn_traced(x, RULES_TRACE_PROGRAM, cmd, result, sizeof(result), &truncated);
        if (r != 0) {
                if (r < 0)
                        rlog_errno(x, LOG_WARNING, r, "Failed to execute \"%s\": %m", cmd);
                else
                        rlog(x, LOG_DEBUG, "Command \"%s\" returned %d (error)", cmd, r);
                return t->op == OP_NOMATCH;
        }
        if (truncated)
                rlog(x, LOG_WARNING, "Output of \"%s\" truncated to %zu bytes", cmd,
                     sizeof(result) - 1);
        count = udev_sanitize_program_result(result);
        if (count > 0)
                rlog(x, LOG_DEBUG, "Replaced %zu character(s) in result of \"%s\"", count, cmd);
        x->ev->program_result = strdup(result);
        if (!x->ev->program_result)
                return -ENOMEM;
        return t->op == OP_MATCH;
}

/* Import "KEY=VALUE" lines (udev_property_line_parse()) from a buffer,
 * modified in place. */
static int import_lines(struct exec_state *x, char *text)
{
        char *save = NULL;

        for (char *line = strtok_r(text, "\n\r", &save); line; line = strtok_r(NULL, "\n\r", &save)) {
                char *key, *value;
                int r = udev_property_line_parse(line, &key, &value);

                if (r < 0) {
                        rlog(x, LOG_DEBUG, "Failed to parse key and value from '%s', ignoring",
                             line);
                        continue;
                }
                if (r == 0)
                        continue;
                r = set_property(x, key, value);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Import the property lines of an open file: lines end at '\n', '\r' or NUL
 * (as systemd's read_line()); at most IMPORT_FILE_MAX bytes are read and a
 * line may hold at most IMPORT_FILE_LINE_MAX. Returns 0 or the error of
 * adding a property; a read error or a limit reached stops the import with
 * *ret_read_error set (-ENOBUFS for the limits; earlier lines stay imported). */
static int import_fd(struct exec_state *x, int fd, int *ret_read_error)
{
        _cleanup_free_ char *buf = malloc(IMPORT_FILE_LINE_MAX + 2);
        size_t len = 0, total = 0;
        bool eof = false;
        int r;

        *ret_read_error = 0;
        if (!buf)
                return -ENOMEM;
        while (!eof) {
                ssize_t n = read(fd, buf + len, IMPORT_FILE_LINE_MAX + 1 - len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        *ret_read_error = -errno;
                        return 0;
                }
                eof = n == 0;
                len += (size_t)n;
                total += (size_t)n;
                if (total > IMPORT_FILE_MAX) {
                        *ret_read_error = -ENOBUFS;
                        return 0;
                }
                /* everything up to the last line end is complete */
                size_t done = 0;
                for (size_t i = len; i > 0; i--)
                        if (buf[i - 1] == '\n' || buf[i - 1] == '\r' || buf[i - 1] == '\0') {
                                done = i;
                                break;
                        }
                if (eof)
                        done = len;
                for (size_t i = 0; i < done; i++)
                        if (buf[i] == '\0')
                                buf[i] = '\n';
                char keep = buf[done];
                buf[done] = '\0';
                r = import_lines(x, buf);
                if (r < 0)
                        return r;
                buf[done] = keep;
                memmove(buf, buf + done, len - done);
                len -= done;
                if (len > IMPORT_FILE_LINE_MAX) {
                        *ret_read_error = -ENOBUFS;
                        return 0;
                }
        }
        return 0;
}

/* IMPORT{file}: opened without blocking (a FIFO never holds the event) and
 * read only if it is a regular file (never /dev/zero and the like). */
static int match_import_file(struct exec_state *x, const struct token *t)
{
        char path[UDEV_PATH_SIZE];
        _cleanup_close_ int fd = -1;
        struct stat st;
        bool truncated;
        int r, read_error;

        subst(x, t->value, path, sizeof(path), false, &truncated);
        if (truncated) {
                rlog(x, LOG_DEBUG, "The file name '%s' to be imported is truncated while "
                     "substituting into '%s', assuming the IMPORT key does not match.", path,
                     t->value);
                return 0;
        }
        rlog(x, LOG_DEBUG, "Importing properties from '%s'", path);
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0) {
                if (errno != ENOENT)
                        return rlog_errno(x, LOG_ERR, errno, "Failed to open '%s': %m", path);
                return t->op == OP_NOMATCH;
        }
        if (fstat(fd, &st) < 0)
                return rlog_errno(x, LOG_ERR, errno, "Failed to open '%s': %m", path);
        if (!S_ISREG(st.st_mode)) {
                rlog(x, LOG_WARNING, "'%s' is not a regular file, not importing it.", path);
                return t->op == OP_NOMATCH;
        }
        r = import_fd(x, fd, &read_error);
        if (r < 0)
                return r;
        if (read_error < 0) {
                rlog_errno(x, LOG_DEBUG, read_error, "Failed to read '%s', ignoring: %m", path);
                return t->op == OP_NOMATCH;
        }
        return t->op == OP_MATCH;
}

static int match_import_program(struct exec_state *x, const struct token *t)
{
        char cmd[UDEV_LINE_SIZE], result[UDEV_LINE_SIZE];
        bool truncated;
        int r;

        subst(x, t->value, cmd, sizeof(cmd), false, &truncated);
        if (truncated) {
                rlog(x, LOG_DEBUG, "The command '%s' is truncated while substituting into '%s', "
                     "assuming the IMPORT key does not match.", cmd, t->value);
                return 0;
        }
        rlog(x, LOG_DEBUG, "Importing properties from results of '%s'", cmd);
        r = spawn_traced(x, RULES_TRACE_IMPORT_PROGRAM, cmd, result, sizeof(result),
                         &truncated);
        if (r != 0) {
                if (r < 0)
                        rlog_errno(x, LOG_WARNING, r, "Failed to execute '%s', ignoring: %m", cmd);
                else
                        rlog(x, LOG_DEBUG, "Command \"%s\" returned %d (error), ignoring", cmd, r);
                return t->op == OP_NOMATCH;
        }
        /* Like systemd 252, a truncated output is imported as is, including its
         * incomplete last line (systemd means to drop that line, but its code
         * trims the wrong buffer). */
        if (truncated)
                rlog(x, LOG_WARNING, "Output of '%s' truncated to %zu bytes", cmd,
                     sizeof(result) - 1);
        r = import_lines(x, result);
        if (r < 0)
                return r;
        return t->op == OP_MATCH;
}

/* Split a substituted command line into argv in place, as for programs
 * (udev_split_cmdline()), and run the builtin. */
static int run_builtin(struct udev_event *ev, enum builtin_id id, char *cmd)
{
        char *argv[ARGV_MAX + 1];
        size_t argc;
        int r;

        if (ev->spawner.builtin) {
                r = ev->spawner.builtin(ev->spawner.userdata, (int)id, cmd);
                if (r != 1)
                        return r;
        }
        r = udev_split_cmdline(cmd, argv, ARGV_MAX + 1, &argc);
        if (r < 0)
                return r;
        /* `test` is for udevadm test-builtin only: builtins then print */
        return builtin_run(id, ev, (int)argc, argv, false);
}

static int match_import_builtin(struct exec_state *x, const struct token *t)
{
        enum builtin_id id = (enum builtin_id)t->data.builtin;
        uint64_t mask = UINT64_C(1) << (unsigned)id;
        char cmd[UDEV_LINE_SIZE];
        bool truncated;
        int r;

        if (builtin_run_once(id)) {
                if (x->ev->builtin_ran & mask) {
                        rlog(x, LOG_DEBUG, "Skipping builtin '%s' in IMPORT key",
                             builtin_name(id));
                        x->trace_status = (x->ev->builtin_ok & mask) ? 0 : -EALREADY;
                        return op_result(t, (x->ev->builtin_ok & mask) != 0);
                }
                x->ev->builtin_ran |= mask;
        }
        subst(x, t->value, cmd, sizeof(cmd), false, &truncated);
        if (truncated) {
                rlog(x, LOG_DEBUG, "The builtin command '%s' is truncated while substituting "
                     "into '%s', assuming the IMPORT key does not match", cmd, t->value);
                return 0;
        }
        rlog(x, LOG_DEBUG, "Importing properties from results of builtin command '%s'", cmd);
        if (_unlikely_(x->ev->trace)) {
                char shown[UDEV_LINE_SIZE];
                uint64_t t0 = rules_trace_now();

                copy_str(shown, sizeof(shown), cmd); /* run_builtin() splits cmd */
                r = run_builtin(x->ev, id, cmd);
                rules_trace_exec(x->ev->trace, x->trace_line, RULES_TRACE_IMPORT_BUILTIN, shown,
                                 r, rules_trace_now() - t0);
                x->trace_status = r;
        } else
                r = run_builtin(x->ev, id, cmd);
        if (r < 0)
                rlog_errno(x, LOG_DEBUG, r, "Failed to run builtin '%s': %m", cmd);
        else
                x->ev->builtin_ok |= mask;
        return op_result(t, r >= 0);
}

static int match_import_db(struct exec_state *x, const struct token *t)
{
        const struct db_record *db = x->ev->old_db;
        size_t kl = strlen(t->value);

        for (size_t i = 0; db && i < db->properties.n; i++) {
                const char *e = db->properties.items[i];
                if (strncmp(e, t->value, kl) != 0 || e[kl] != '=')
                        continue;
                int r = set_property(x, t->value, e + kl + 1);
                if (r < 0)
                        return r;
                return t->op == OP_MATCH;
        }
        return t->op == OP_NOMATCH;
}

/* Next word of a kernel command line: whitespace separated, quotes group and
 * are removed. NULL at the end. */
static char *cmdline_next_word(char **p)
{
        char *s = *p, *w, *o;
        char quote = 0;

        while (is_ws(*s))
                s++;
        if (!*s)
                return NULL;
        w = o = s;
        for (; *s; s++) {
                if (quote) {
                        if (*s == quote)
                                quote = 0;
                        else
                                *o++ = *s;
                } else if (*s == '"' || *s == '\'') {
                        quote = *s;
                } else if (is_ws(*s)) {
                        s++;
                        break;
                } else {
                        *o++ = *s;
                }
        }
        *o = '\0';
        *p = s;
        return w;
}

/* "-" and "_" are the same in kernel command line keys. */
static bool cmdline_key_eq(const char *a, size_t alen, const char *b)
{
        size_t bl = strlen(b);

        if (alen != bl)
                return false;
        for (size_t i = 0; i < alen; i++) {
                char ca = a[i] == '-' ? '_' : a[i], cb = b[i] == '-' ? '_' : b[i];
                if (ca != cb)
                        return false;
        }
        return true;
}

static int match_import_cmdline(struct exec_state *x, const struct token *t)
{
        _cleanup_free_ char *cmdline = NULL, *value = NULL;
        bool found = false;
        size_t len;
        char *p, *w;
        int r;

        r = read_file_bounded("/proc/cmdline", PROC_CMDLINE_MAX, &cmdline, &len);
        if (r < 0)
                return rlog_errno(x, LOG_ERR, r, "Failed to read '%s' option from /proc/cmdline: "
                                  "%m", t->value);
        p = cmdline;
        while ((w = cmdline_next_word(&p))) {
                const char *eq = strchr(w, '=');
                size_t kl = eq ? (size_t)(eq - w) : strlen(w);

                if (!cmdline_key_eq(w, kl, t->value))
                        continue;
                found = true;
                if (eq) {
                        free(value);
                        value = strdup(eq + 1);
                        if (!value)
                                return -ENOMEM;
                }
        }
        if (!found)
                return t->op == OP_NOMATCH;
        r = set_property(x, t->value, value ? value : "1");
        if (r < 0)
                return r;
        return t->op == OP_MATCH;
}

static int match_import_parent(struct exec_state *x, const struct token *t)
{
        char glob[UDEV_PATH_SIZE];
        struct device *parent;
        const struct db_record *db;
        const char *key, *value;
        bool truncated;
        int r;

        subst(x, t->value, glob, sizeof(glob), false, &truncated);
        if (truncated) {
                rlog(x, LOG_DEBUG, "The property name '%s' is truncated while substituting into "
                     "'%s', assuming the IMPORT key does not match.", glob, t->value);
                return 0;
        }
        r = device_get_parent(x->ev->dev, &parent);
        if (r == -ENOENT)
                return t->op == OP_NOMATCH;
        if (r < 0)
                return rlog_errno(x, LOG_ERR, r, "Failed to import properties '%s' from parent: "
                                  "%m", glob);
        for (size_t i = 0; device_property_at(parent, i, &key, &value); i++) {
                if (fnmatch(glob, key, 0) != 0)
                        continue;
                r = set_property(x, key, value);
                if (r < 0)
                        return r;
        }
        if (device_get_db(parent, &db) >= 0)
                for (size_t i = 0; i < db->properties.n; i++) {
                        char buf[UDEV_LINE_SIZE];
                        char *eq;

                        if (!copy_str(buf, sizeof(buf), db->properties.items[i]))
                                continue;
                        eq = strchr(buf, '=');
                        if (!eq)
                                continue;
                        *eq = '\0';
                        if (fnmatch(glob, buf, 0) != 0)
                                continue;
                        r = set_property(x, buf, eq + 1);
                        if (r < 0)
                                return r;
                }
        return t->op == OP_MATCH;
}

/* ------------------------------------------------------------ parent group */

static int match_parent_token(struct exec_state *x, const struct token *t, struct device *d)
{
        const char *v;
        int r;

        switch (t->type) {
        case TK_M_PARENTS_KERNEL:
                return token_match_string(t, device_sysname(d));
        case TK_M_PARENTS_SUBSYSTEM:
                r = device_subsystem(x, d, &v);
                return r < 0 ? r : token_match_string(t, v);
        case TK_M_PARENTS_DRIVER:
                r = device_driver(x, d, &v);
                return r < 0 ? r : token_match_string(t, v);
        case TK_M_PARENTS_ATTR:
                return match_attr(x, t, d);
        case TK_M_PARENTS_TAG: {
                const struct db_record *db;

                if (d == x->ev->dev)
                        return token_match_list(t, &x->ev->current_tags, NULL);
                if (device_get_db(d, &db) < 0)
                        return token_match_list(t, NULL, NULL);
                return token_match_list(t, &db->current_tags, NULL);
        }
        default:
                return 0;
        }
}

/* Test the n parent tokens at t against the event device, then each
 * ancestor, until one device satisfies all; that device becomes the matched
 * parent (ev->dev_parent; NULL when none does). */
static int match_parents(struct exec_state *x, const struct token *t, size_t n)
{
        struct device *d = x->ev->dev;

        for (;;) {
                size_t i;

                /* as systemd: substitutions see the candidate as the parent */
                x->ev->dev_parent = d;
                for (i = 0; i < n; i++) {
                        int r = match_parent_token(x, &t[i], d);
                        if (r < 0)
                                return r;
                        if (r == 0)
                                break;
                }
                if (i == n) {
                        x->ev->dev_parent = d;
                        return 1;
                }
                if (device_get_parent(d, &d) < 0) {
                        x->ev->dev_parent = NULL;
                        return 0;
                }
        }
}

/* One plain (non-parent) match token: 1 match, 0 no match, <0 abort. */
static int apply_match(struct exec_state *x, const struct token *t)
{
        struct udev_event *ev = x->ev;
        const char *v;
        int r;

        switch (t->type) {
        case TK_M_ACTION:
                return token_match_string(t, uevent_action_to_string(ev->action));
        case TK_M_DEVPATH:
                return token_match_string(t, device_devpath(ev->dev));
        case TK_M_KERNEL:
                return token_match_string(t, device_sysname(ev->dev));
        case TK_M_DEVLINK:
                return token_match_list(t, &ev->devlinks, "/dev/");
        case TK_M_NAME:
                return token_match_string(t, ev->name);
        case TK_M_ENV:
                return token_match_string(t, udev_event_get_property(ev, t->attr.raw));
        case TK_M_CONST:
                return token_match_string(t, t->data.constant == CONST_ARCH ? rules_const_arch()
                                                                            : rules_const_virt());
        case TK_M_TAG:
                return token_match_list(t, &ev->current_tags, NULL);
        case TK_M_SUBSYSTEM:
                r = device_subsystem(x, ev->dev, &v);
                return r < 0 ? r : token_match_string(t, v);
        case TK_M_DRIVER:
                r = event_driver(x, &v);
                return r < 0 ? r : token_match_string(t, v);
        case TK_M_ATTR:
                return match_attr(x, t, ev->dev);
        case TK_M_SYSCTL:
                return match_sysctl(x, t);
        case TK_M_TEST:
                return match_test(x, t);
        case TK_M_PROGRAM:
                return match_program(x, t);
        case TK_M_IMPORT_FILE:
                return match_import_file(x, t);
        case TK_M_IMPORT_PROGRAM:
                return match_import_program(x, t);
        case TK_M_IMPORT_BUILTIN:
                return match_import_builtin(x, t);
        case TK_M_IMPORT_DB:
                return match_import_db(x, t);
        case TK_M_IMPORT_CMDLINE:
                return match_import_cmdline(x, t);
        case TK_M_IMPORT_PARENT:
                return match_import_parent(x, t);
        case TK_M_RESULT:
                return token_match_string(t, ev->program_result);
        default:
                return 0;
        }
}

/* ------------------------------------------------------------ assignments */

/* := handling shared by the final-able keys: false = ignore this token. */
static bool take_final(struct exec_state *x, const struct token *t, unsigned bit)
{
        if (x->ev->final & bit)
                return false;
        if (t->op == OP_ASSIGN_FINAL)
                x->ev->final |= bit;
        return true;
}

static void assign_owner_group(struct exec_state *x, const struct token *t)
{
        struct udev_event *ev = x->ev;
        bool owner = t->type == TK_A_OWNER;
        char name[UDEV_NAME_SIZE];
        bool truncated;
        uint32_t id;
        int r;

        if (!take_final(x, t, owner ? FINAL_OWNER : FINAL_GROUP))
                return;
        subst(x, t->value, name, sizeof(name), false, &truncated);
        if (truncated) {
                rlog(x, LOG_WARNING, "The %s name '%s' is truncated while substituting into '%s', "
                     "refusing to apply the %s key.", owner ? "user" : "group", name, t->value,
                     owner ? "OWNER" : "GROUP");
                return;
        }
        /* systemd: get_user_creds()/get_group_creds(), USER_CREDS_ALLOW_MISSING */
        r = rules_resolve_id(!owner, name, &id);
        if (r == -ESRCH) {
                rlog(x, LOG_ERR, "Unknown %s '%s', ignoring", owner ? "user" : "group", name);
                return;
        }
        if (r < 0) {
                rlog_errno(x, LOG_ERR, r, "Failed to resolve %s '%s', ignoring: %m",
                           owner ? "user" : "group", name);
                return;
        }
        if (owner) {
                ev->uid = id;
                ev->uid_set = true;
        } else {
                ev->gid = id;
                ev->gid_set = true;
        }
        rlog(x, LOG_DEBUG, "%s %s(%u)", owner ? "OWNER" : "GROUP", name, (unsigned)id);
}

static void assign_mode(struct exec_state *x, const struct token *t)
{
        char buf[UDEV_NAME_SIZE];
        bool truncated;
        mode_t mode;
        int r;

        if (!take_final(x, t, FINAL_MODE))
                return;
        subst(x, t->value, buf, sizeof(buf), false, &truncated);
        if (truncated) {
                rlog(x, LOG_WARNING, "The mode '%s' is truncated while substituting into %s, "
                     "refusing to apply the MODE key.", buf, t->value);
                return;
        }
        r = rules_parse_mode(buf, &mode);
        if (r < 0) {
                rlog_errno(x, LOG_ERR, r, "Failed to parse mode '%s', ignoring: %m", buf);
                return;
        }
        x->ev->mode = mode;
        x->ev->mode_set = true;
        rlog(x, LOG_DEBUG, "MODE %#o", (unsigned)mode);
}

static void assign_ids(struct exec_state *x, const struct token *t)
{
        struct udev_event *ev = x->ev;

        switch (t->type) {
        case TK_A_OWNER_ID:
                if (!take_final(x, t, FINAL_OWNER))
                        return;
                ev->uid_set = t->data.id >= 0;
                ev->uid = t->data.id >= 0 ? (uid_t)t->data.id : 0;
                if (ev->uid_set)
                        rlog(x, LOG_DEBUG, "OWNER %u", (unsigned)ev->uid);
                return;
        case TK_A_GROUP_ID:
                if (!take_final(x, t, FINAL_GROUP))
                        return;
                ev->gid_set = t->data.id >= 0;
                ev->gid = t->data.id >= 0 ? (gid_t)t->data.id : 0;
                if (ev->gid_set)
                        rlog(x, LOG_DEBUG, "GROUP %u", (unsigned)ev->gid);
                return;
        default: /* TK_A_MODE_ID */
                if (!take_final(x, t, FINAL_MODE))
                        return;
                ev->mode = t->data.mode;
                ev->mode_set = true;
                rlog(x, LOG_DEBUG, "MODE %#o", (unsigned)ev->mode);
                return;
        }
}

/* v252 checks only the characters, so the empty string is a tag: TAG+=""
 * adds it, TAGS=="a||b", "|a" and "a|" then match it, and it is stored as
 * "G:"/"Q:" lines and indexed (see device/db.c). */
static bool tag_valid(const char *s)
{
        for (; *s; s++)
                if (!isalnum((unsigned char)*s) && *s != '-' && *s != '_')
                        return false;
        return true;
}

static int assign_tag(struct exec_state *x, const struct token *t)
{
        struct udev_event *ev = x->ev;
        char buf[UDEV_PATH_SIZE];
        bool truncated;
        int r;

        subst(x, t->value, buf, sizeof(buf), false, &truncated);
        if (truncated) {
                rlog(x, LOG_WARNING, "The tag name '%s' is truncated while substituting into '%s',"
                     "refusing to %s the tag.", buf, t->value,
                     t->op == OP_REMOVE ? "remove" : "add");
                return 0;
        }
        if (t->op == OP_ASSIGN || t->op == OP_ASSIGN_FINAL) {
                strlist_clear(&ev->tags);
                strlist_clear(&ev->current_tags);
                x->tags_outdated = true;
        }
        if (!tag_valid(buf)) {
                rlog(x, LOG_ERR, "Invalid tag name '%s', ignoring", buf);
                return 0;
        }
        x->tags_outdated = true;
        if (t->op == OP_REMOVE) {
                strlist_remove(&ev->current_tags, buf);
                return 0;
        }
        r = strlist_add_unique(&ev->tags, buf);
        if (r >= 0)
                r = strlist_add_unique(&ev->current_tags, buf);
        if (r < 0)
                return rlog_errno(x, LOG_ERR, r, "Failed to add tag '%s': %m", buf);
        return 0;
}

static int assign_seclabel(struct exec_state *x, const struct token *t)
{
        struct udev_event *ev = x->ev;
        const char *module = t->attr.raw ? t->attr.raw : "";
        char label[UDEV_LINE_SIZE], entry[UDEV_LINE_SIZE + 64];
        bool truncated;
        size_t ml = strlen(module);
        int r;

        subst(x, t->value, label, sizeof(label), false, &truncated);
        if (truncated) {
                rlog(x, LOG_WARNING, "The security label '%s' is truncated while substituting "
                     "into '%s', refusing to apply the SECLABEL key.", label, t->value);
                return 0;
        }
        if (label[0] == '\0')
                copy_str(label, sizeof(label), t->value);
        if (t->op == OP_ASSIGN || t->op == OP_ASSIGN_FINAL)
                strlist_clear(&ev->seclabels);
        /* one label per module: a later one replaces it */
        for (size_t i = 0; i < ev->seclabels.n; i++)
                if (strncmp(ev->seclabels.items[i], module, ml) == 0 &&
                    ev->seclabels.items[i][ml] == '=') {
                        strlist_remove(&ev->seclabels, ev->seclabels.items[i]);
                        break;
                }
        snprintf(entry, sizeof(entry), "%s=%s", module, label);
        r = strlist_add(&ev->seclabels, entry);
        if (r < 0)
                return r;
        rlog(x, LOG_DEBUG, "SECLABEL{%s}='%s'", module, label);
        return 0;
}

static int assign_env(struct exec_state *x, const struct token *t)
{
        struct udev_event *ev = x->ev;
        const char *key = t->attr.raw, *old;
        char buf[UDEV_NAME_SIZE], *p = buf;
        size_t left = sizeof(buf), count;
        bool truncated;
        int r;

        if (!key)
                return 0;
        if (t->value[0] == '\0') {
                if (t->op == OP_ADD)
                        return 0;
                r = proplist_unset(&ev->props, key);
                if (r < 0 && r != -ENOENT)
                        return rlog_errno(x, LOG_ERR, r, "Failed to remove property '%s': %m", key);
                return 0;
        }
        if (t->op == OP_ADD && (old = proplist_get(&ev->props, key))) {
                int w = snprintf(buf, sizeof(buf), "%s ", old);
                if (w < 0 || (size_t)w >= sizeof(buf)) {
                        rlog(x, LOG_WARNING, "The buffer for the property '%s' is full, refusing "
                             "to append the new value '%s'.", key, t->value);
                        return 0;
                }
                p += w;
                left -= (size_t)w;
        }
        subst(x, t->value, p, left, false, &truncated);
        if (truncated) {
                rlog(x, LOG_WARNING, "The property value '%s' is truncated while substituting into "
                     "'%s', refusing to add property '%s'.", p, t->value, key);
                return 0;
        }
        if (x->esc == ESCAPE_REPLACE) {
                count = udev_replace_chars(p, "");
                if (count > 0)
                        rlog(x, LOG_DEBUG, "Replaced %zu slash(es) from result of ENV{%s}%s=\"%s\"",
                             count, key, t->op == OP_ADD ? "+" : "", t->value);
        }
        return set_property(x, key, buf);
}

static int assign_name(struct exec_state *x, const struct token *t)
{
        struct udev_event *ev = x->ev;
        char buf[UDEV_PATH_SIZE];
        bool truncated;
        size_t count;

        if (!take_final(x, t, FINAL_NAME))
                return 0;
        if (!x->has_ifindex) {
                rlog(x, LOG_ERR, "Only network interfaces can be renamed, ignoring NAME=\"%s\".",
                     t->value);
                return 0;
        }
        subst(x, t->value, buf, sizeof(buf), false, &truncated);
        if (truncated) {
                rlog(x, LOG_WARNING, "The network interface name '%s' is truncated while "
                     "substituting into '%s', refusing to set the name.", buf, t->value);
                return 0;
        }
        if (x->esc != ESCAPE_NONE) {
                count = udev_replace_ifname(buf);
                if (count > 0)
                        rlog(x, LOG_DEBUG, "Replaced %zu character(s) from result of NAME=\"%s\"",
                             count, t->value);
        }
        char *n = strdup(buf);
        if (!n)
                return -ENOMEM;
        free(ev->name);
        ev->name = n;
        rlog(x, LOG_DEBUG, "NAME '%s'", ev->name);
        return 0;
}

/* Next whitespace-separated word; a backslash keeps the next character
 * (and itself) in the word. NULL at the end. Modifies the buffer. */
static char *next_link_word(char **p)
{
        char *s = *p, *w;

        while (is_ws(*s))
                s++;
        if (!*s)
                return NULL;
        w = s;
        while (*s && !is_ws(*s)) {
                if (*s == '\\' && s[1])
                        s++;
                s++;
        }
        if (*s)
                *s++ = '\0';
        *p = s;
        return w;
}

static int assign_devlink(struct exec_state *x, const struct token *t)
{
        struct udev_event *ev = x->ev;
        char buf[UDEV_PATH_SIZE], norm[NODE_PATH_MAX];
        bool truncated;
        size_t count = 0;
        char *p, *w;
        int r;

        if (ev->final & FINAL_DEVLINK)
                return 0;
        if (!x->has_devnum)
                return 0;
        if (t->op == OP_ASSIGN_FINAL)
                ev->final |= FINAL_DEVLINK;
        if (t->op == OP_ASSIGN || t->op == OP_ASSIGN_FINAL) {
                strlist_clear(&ev->devlinks);
                x->links_outdated = true;
        }

        subst(x, t->value, buf, sizeof(buf), x->esc != ESCAPE_NONE, &truncated);
        if (truncated) {
                rlog(x, LOG_WARNING, "The symbolic link path '%s' is truncated while substituting "
                     "into '%s', refusing to add the device symbolic link.", buf, t->value);
                return 0;
        }
        if (x->esc == ESCAPE_UNSET)
                count = udev_replace_chars(buf, "/ ");
        else if (x->esc == ESCAPE_REPLACE)
                count = udev_replace_chars(buf, "/");
        if (count > 0)
                rlog(x, LOG_DEBUG, "Replaced %zu character(s) from result of SYMLINK=\"%s\"",
                     count, t->value);

        p = buf;
        while ((w = next_link_word(&p))) {
                r = node_link_normalize(w, norm, sizeof(norm));
                if (r < 0) {
                        rlog_errno(x, LOG_WARNING, r, "Failed to %s devlink '%s', ignoring: %m",
                                   t->op == OP_REMOVE ? "remove" : "add", w);
                        continue;
                }
                x->links_outdated = true;
                if (t->op == OP_REMOVE) {
                        if (strlist_contains(&ev->devlinks, norm)) {
                                strlist_remove(&ev->devlinks, norm);
                                rlog(x, LOG_DEBUG, "Dropped SYMLINK '%s'", w);
                        }
                        continue;
                }
                r = strlist_add_unique(&ev->devlinks, norm);
                if (r < 0)
                        return rlog_errno(x, LOG_ERR, r, "Failed to add devlink '%s': %m", norm);
                rlog(x, LOG_DEBUG, "LINK '%s'", w);
        }
        return 0;
}

/* Write value with one write(); if that fails but the file already holds
 * the value (ignoring a trailing newline) it counts as success. */
static int write_attr_file(const char *path, const char *value)
{
        size_t len = strlen(value);
        _cleanup_close_ int fd = -1;
        int r = 0;

        fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
        if (fd < 0)
                return -errno;
        ssize_t n = write(fd, value, len);
        if (n == (ssize_t)len)
                return 0;
        r = n < 0 ? -errno : -EIO;
        fd = safe_close(fd);

        _cleanup_free_ char *cur = NULL;
        size_t cl;
        if (read_file_bounded(path, len + 2, &cur, &cl) >= 0) {
                if (cl > 0 && cur[cl - 1] == '\n')
                        cur[--cl] = '\0';
                if (cl == len && memcmp(cur, value, len) == 0)
                        return 0;
        }
        return r;
}

static void assign_attr(struct exec_state *x, const struct token *t)
{
        char path[PATH_MAX], value[UDEV_NAME_SIZE];
        const char *key = t->attr.raw ? t->attr.raw : "";
        bool truncated;
        int r;

        if (key[0] != '[' ||
            udev_resolve_subsys_kernel(x->ev->ctx, key, false, path, sizeof(path)) < 0)
                r = join_path(path, sizeof(path), device_syspath(x->ev->dev), key);
        else
                r = 0;
        if (r < 0) {
                rlog(x, LOG_WARNING, "The path to the attribute '%s' is too long, refusing to set "
                     "the attribute.", key);
                return;
        }
        r = attr_subst_subdir(path, sizeof(path));
        if (r < 0) {
                rlog_errno(x, LOG_ERR, r, "Could not find file matches '%s', ignoring: %m", path);
                return;
        }
        subst(x, t->value, value, sizeof(value), false, &truncated);
        if (truncated) {
                rlog(x, LOG_WARNING, "The attribute value '%s' is truncated while substituting "
                     "into '%s', refusing to set the attribute '%s'", value, t->value, path);
                return;
        }
        if (x->ev->dry_run) {
                rlog(x, LOG_DEBUG, "ATTR '%s' would write '%s' (not applied)", path, value);
                return;
        }
        rlog(x, LOG_DEBUG, "ATTR '%s' writing '%s'", path, value);
        r = write_attr_file(path, value);
        if (r < 0)
                rlog_errno(x, LOG_ERR, r, "Failed to write ATTR{%s}, ignoring: %m", path);
}

static void assign_sysctl(struct exec_state *x, const struct token *t)
{
        char key[UDEV_PATH_SIZE], value[UDEV_NAME_SIZE], path[PATH_MAX];
        const char *keysrc = t->attr.raw ? t->attr.raw : "";
        bool truncated;
        int r;

        subst(x, keysrc, key, sizeof(key), false, &truncated);
        if (truncated) {
                rlog(x, LOG_WARNING, "The sysctl entry name '%s' is truncated while substituting "
                     "into '%s', refusing to set the sysctl entry.", key, keysrc);
                return;
        }
        subst(x, t->value, value, sizeof(value), false, &truncated);
        if (truncated) {
                rlog(x, LOG_WARNING, "The sysctl value '%s' is truncated while substituting into "
                     "'%s', refusing to set the sysctl entry '%s'", value, t->value, key);
                return;
        }
        sysctl_normalize(key);
        if (x->ev->dry_run) {
                rlog(x, LOG_DEBUG, "SYSCTL '%s' would write '%s' (not applied)", key, value);
                return;
        }
        rlog(x, LOG_DEBUG, "SYSCTL '%s' writing '%s'", key, value);
        r = sysctl_path(key, path, sizeof(path));
        if (r >= 0)
                r = write_attr_file(path, value);
        if (r < 0)
                rlog_errno(x, LOG_ERR, r, "Failed to write SYSCTL{%s}='%s', ignoring: %m", key,
                           value);
}

static void run_list_clear(struct udev_event *ev)
{
        for (size_t i = 0; i < ev->n_run; i++)
                free(ev->run[i].cmd);
        ev->n_run = 0;
}

static int assign_run(struct exec_state *x, const struct token *t)
{
        struct udev_event *ev = x->ev;
        char buf[UDEV_LINE_SIZE];
        bool truncated;

        if (!take_final(x, t, FINAL_RUN))
                return 0;
        if (t->op == OP_ASSIGN || t->op == OP_ASSIGN_FINAL)
                run_list_clear(ev);
        subst(x, t->value, buf, sizeof(buf), false, &truncated);
        if (truncated) {
                rlog(x, LOG_WARNING, "The command '%s' is truncated while substituting into '%s', "
                     "refusing to invoke the command.", buf, t->value);
                return 0;
        }
        if (ev->n_run == ev->cap_run) {
                size_t cap = ev->cap_run ? ev->cap_run * 2 : 8;
                struct run_entry *n = realloc(ev->run, cap * sizeof(*n));
                if (!n)
                        return -ENOMEM;
                ev->run = n;
                ev->cap_run = cap;
        }
        char *cmd = strdup(buf);
        if (!cmd)
                return -ENOMEM;
        ev->run[ev->n_run++] = (struct run_entry){ .builtin = t->type == TK_A_RUN_BUILTIN,
                                                   .cmd = cmd };
        rlog(x, LOG_DEBUG, "RUN '%s'", t->value);
        return 0;
}

/* OPTIONS+="log_level=": the level of this thread from here on, for the rest
 * of the event (-1 = the daemon's level); the worker resets it afterwards. */
static void apply_log_level(struct exec_state *x, int level)
{
        bool was_debug = log_get_max_level() >= LOG_DEBUG;
        struct udev_event *ev = x->ev;

        ev->log_level = level;
        log_set_thread_max_level(level);
        if (!was_debug && log_get_max_level() >= LOG_DEBUG)
                dlog(x, LOG_DEBUG, "The log level is changed to 'debug' while processing device "
                     "(SEQNUM=%" PRIu64 ", ACTION=%s)", ev->uevent ? ev->uevent->seqnum : 0,
                     uevent_action_to_string(ev->action));
}

/* One assignment token: 0, or <0 to abort (out of memory). */
static int apply_assign(struct exec_state *x, const struct token *t)
{
        struct udev_event *ev = x->ev;

        switch (t->type) {
        case TK_A_OPTIONS_STRING_ESCAPE_NONE:
                x->esc = ESCAPE_NONE;
                return 0;
        case TK_A_OPTIONS_STRING_ESCAPE_REPLACE:
                x->esc = ESCAPE_REPLACE;
                return 0;
        case TK_A_OPTIONS_DB_PERSIST:
                ev->db_persist = true;
                return 0;
        case TK_A_OPTIONS_INOTIFY_WATCH:
                if (take_final(x, t, FINAL_WATCH))
                        ev->inotify_watch = t->data.boolean;
                return 0;
        case TK_A_OPTIONS_DEVLINK_PRIORITY:
                ev->link_priority = (int)t->data.number;
                return 0;
        case TK_A_OPTIONS_LOG_LEVEL:
                apply_log_level(x, (int)t->data.number);
                return 0;
        case TK_A_OWNER:
        case TK_A_GROUP:
                assign_owner_group(x, t);
                return 0;
        case TK_A_MODE:
                assign_mode(x, t);
                return 0;
        case TK_A_OWNER_ID:
        case TK_A_GROUP_ID:
        case TK_A_MODE_ID:
                assign_ids(x, t);
                return 0;
        case TK_A_TAG:
                return assign_tag(x, t);
        case TK_A_OPTIONS_STATIC_NODE:
                return 0;
        case TK_A_SECLABEL:
                return assign_seclabel(x, t);
        case TK_A_ENV:
                return assign_env(x, t);
        case TK_A_NAME:
                return assign_name(x, t);
        case TK_A_DEVLINK:
                return assign_devlink(x, t);
        case TK_A_ATTR:
                assign_attr(x, t);
                return 0;
        case TK_A_SYSCTL:
                assign_sysctl(x, t);
                return 0;
        case TK_A_RUN_BUILTIN:
        case TK_A_RUN_PROGRAM:
                return assign_run(x, t);
        default:
                return 0;
        }
}

/* ------------------------------------------------------------ lines */

/* 1 = every token passed (GOTO applies), 0 = a match failed, <0 abort. */
static int apply_line(struct exec_state *x, const struct rule_line *l)
{
        x->line = l;
        x->esc = ESCAPE_UNSET;
        for (unsigned i = 0; i < l->n_tokens;) {
                const struct token *t = &l->tokens[i];
                int r;

                if (TK_IS_PARENT_MATCH(t->type)) {
                        unsigned n = 0;
                        while (i + n < l->n_tokens && TK_IS_PARENT_MATCH(l->tokens[i + n].type))
                                n++;
                        r = match_parents(x, t, n);
                        if (r <= 0) {
                                x->fail_tok = i;
                                return r;
                        }
                        i += n;
                        continue;
                }
                if ((x->links_outdated || x->tags_outdated) && token_reads_properties(t)) {
                        r = sync_synthesized(x);
                        if (r < 0) {
                                x->fail_tok = i;
                                return r;
                        }
                }
                if (TK_IS_MATCH(t->type)) {
                        r = apply_match(x, t);
                        if (r <= 0) {
                                x->fail_tok = i;
                                return r;
                        }
                } else {
                        r = apply_assign(x, t);
                        if (r < 0) {
                                x->fail_tok = i;
                                return r;
                        }
                }
                i++;
        }
        return 1;
}

/* ------------------------------------------------------------ tracing */

/* Join a list into buf separated by spaces, `strip` removed from each
 * element (as the list match sees them). */
static void trace_join(const struct strlist *l, const char *strip, char *buf, size_t size)
{
        size_t sl = strip ? strlen(strip) : 0, o = 0;

        buf[0] = '\0';
        for (size_t i = 0; i < l->n && o + 1 < size; i++) {
                const char *s = l->items[i];
                int w;

                if (sl && strncmp(s, strip, sl) == 0)
                        s += sl;
                w = snprintf(buf + o, size - o, "%s%s", o ? " " : "", s);
                if (w < 0)
                        break;
                o += (size_t)w;
        }
}

/* What a program, builtin or import that did not give the wanted result
 * did, as text. */
static const char *trace_outcome(const struct exec_state *x, const struct token *t, char *buf,
                                 size_t size)
{
        switch (t->type) {
        case TK_M_PROGRAM:
        case TK_M_IMPORT_PROGRAM:
        case TK_M_IMPORT_BUILTIN:
                if (x->trace_status == -EALREADY)
                        snprintf(buf, size, "failed earlier (runs once)");
                else if (x->trace_status > 0)
                        snprintf(buf, size, "exit status %d", x->trace_status);
                else if (x->trace_status < 0)
                        snprintf(buf, size, "errno %d", -x->trace_status);
                else if (t->op == OP_NOMATCH)
                        snprintf(buf, size, "success");
                else
                        snprintf(buf, size, "no result");
                break;
        default:
                snprintf(buf, size, "%s", t->op == OP_NOMATCH ? "success" : "failure");
                break;
        }
        return buf;
}

/* The value a failed key compared, re-read (each read the rules make is
 * cached or has no side effect). */
static enum rules_trace_value trace_value(struct exec_state *x, const struct token *t,
                                          char *buf, size_t size, const char **ret)
{
        struct udev_event *ev = x->ev;
        const char *v = NULL;

        switch (t->type) {
        case TK_M_ACTION:
        case TK_M_DEVPATH:
        case TK_M_KERNEL:
        case TK_M_SUBSYSTEM:
        case TK_M_DRIVER:
        case TK_M_CONST:
                return RULES_TRACE_VALUE_EVENT;
        case TK_M_DEVLINK:
                trace_join(&ev->devlinks, "/dev/", buf, size);
                v = buf[0] ? buf : NULL;
                break;
        case TK_M_TAG:
                trace_join(&ev->current_tags, NULL, buf, size);
                v = buf[0] ? buf : NULL;
                break;
        case TK_M_NAME:
                v = ev->name;
                break;
        case TK_M_ENV:
                v = udev_event_get_property(ev, t->attr.raw);
                break;
        case TK_M_RESULT:
                v = ev->program_result;
                break;
        case TK_M_ATTR: {
                char vbuf[UDEV_NAME_SIZE];
                if (!attr_value(x, t, ev->dev, vbuf, &v))
                        return RULES_TRACE_VALUE_ABSENT;
                copy_str(buf, size, v);
                v = buf;
                break;
        }
        case TK_M_SYSCTL:
        case TK_M_TEST:
        case TK_M_IMPORT_FILE:
        case TK_M_IMPORT_DB:
        case TK_M_IMPORT_CMDLINE:
        case TK_M_IMPORT_PARENT:
        case TK_M_PROGRAM:
        case TK_M_IMPORT_PROGRAM:
        case TK_M_IMPORT_BUILTIN:
                *ret = trace_outcome(x, t, buf, size);
                return RULES_TRACE_VALUE_OUTCOME;
        default:
                return RULES_TRACE_VALUE_NONE;
        }
        if (!v)
                return RULES_TRACE_VALUE_ABSENT;
        *ret = v;
        return RULES_TRACE_VALUE_STRING;
}

/* The value of one parent key on device d, as the match sees it. */
static enum rules_trace_value trace_parent_value(struct exec_state *x, const struct token *t,
                                                 struct device *d, char *buf, size_t size,
                                                 const char **ret)
{
        const char *v = NULL;

        switch (t->type) {
        case TK_M_PARENTS_KERNEL:
                v = device_sysname(d);
                break;
        case TK_M_PARENTS_SUBSYSTEM:
                if (device_get_subsystem(d, &v) < 0)
                        v = NULL;
                break;
        case TK_M_PARENTS_DRIVER:
                if (device_get_driver(d, &v) < 0)
                        v = NULL;
                break;
        case TK_M_PARENTS_ATTR: {
                char vbuf[UDEV_NAME_SIZE];
                if (!attr_value(x, t, d, vbuf, &v))
                        return RULES_TRACE_VALUE_ABSENT;
                /* v may point into vbuf: copy it while vbuf lives */
                copy_str(buf, size, v);
                *ret = buf;
                return RULES_TRACE_VALUE_STRING;
        }
        case TK_M_PARENTS_TAG: {
                const struct db_record *db;
                if (d == x->ev->dev)
                        trace_join(&x->ev->current_tags, NULL, buf, size);
                else if (device_get_db(d, &db) >= 0)
                        trace_join(&db->current_tags, NULL, buf, size);
                else
                        buf[0] = '\0';
                *ret = buf;
                return buf[0] ? RULES_TRACE_VALUE_STRING : RULES_TRACE_VALUE_ABSENT;
        }
        default:
                return RULES_TRACE_VALUE_NONE;
        }
        if (!v)
                return RULES_TRACE_VALUE_ABSENT;
        copy_str(buf, size, v);
        *ret = buf;
        return RULES_TRACE_VALUE_STRING;
}

/* A failed parent group at tokens[first..]: the nearest miss, the device
 * (the event's or an ancestor) on which the most keys of the group matched
 * in order, and the first key that failed there. */
static void trace_parent_miss(struct exec_state *x, const struct rule_line *l, unsigned first,
                              unsigned *ret_tok, struct device **ret_dev)
{
        struct device *saved = x->ev->dev_parent, *d = x->ev->dev;
        unsigned n = 0;
        int best = -1;

        while (first + n < l->n_tokens && TK_IS_PARENT_MATCH(l->tokens[first + n].type))
                n++;
        *ret_tok = first;
        *ret_dev = d;
        for (;;) {
                unsigned i;

                x->ev->dev_parent = d;
                for (i = 0; i < n; i++)
                        if (match_parent_token(x, &l->tokens[first + i], d) <= 0)
                                break;
                /* ties: the nearest device */
                if (i < n && (int)i > best) {
                        best = (int)i;
                        *ret_tok = first + i;
                        *ret_dev = d;
                }
                if (device_get_parent(d, &d) < 0)
                        break;
        }
        x->ev->dev_parent = saved;
}

/* Record one evaluated line. */
static void trace_record_line(struct exec_state *x, size_t idx, int verdict, uint64_t nsec)
{
        const struct rule_line *l = &x->rules->lines[idx];
        char buf[RULES_TRACE_VALUE_MAX];
        const char *value = NULL, *device = NULL;
        enum rules_trace_value vkind = RULES_TRACE_VALUE_NONE;
        unsigned tok = x->fail_tok;

        if (verdict == 0 && tok < l->n_tokens) {
                const struct token *t = &l->tokens[tok];

                if (TK_IS_PARENT_MATCH(t->type)) {
                        struct device *d;

                        trace_parent_miss(x, l, tok, &tok, &d);
                        vkind = trace_parent_value(x, &l->tokens[tok], d, buf, sizeof(buf),
                                                   &value);
                        device = device_sysname(d);
                } else
                        vkind = trace_value(x, t, buf, sizeof(buf), &value);
        }
        rules_trace_line(x->ev->trace, idx, verdict, tok, nsec, vkind, value, device);
}

/* rules_apply() with a trace: the same walk, timed and recorded line by
 * line. */
static int apply_traced(struct exec_state *x, unsigned mask)
{
        const struct rules *rules = x->rules;
        struct udev_event *ev = x->ev;
        struct rules_trace *trace = ev->trace;
        const char *subsystem = NULL, *driver;
        uint64_t start = rules_trace_now();
        bool timed = rules_trace_line_times(trace);
        int r = 0;

        (void)device_get_subsystem(ev->dev, &subsystem);
        rules_trace_begin(trace, ev->uevent ? ev->uevent->seqnum : 0,
                          uevent_action_to_string(ev->action), device_devpath(ev->dev),
                          device_sysname(ev->dev), subsystem);
        for (size_t i = 0; i < rules->n_lines;) {
                const struct rule_line *l = &rules->lines[i];
                size_t next = i + 1;

                if (l->mask & mask) {
                        uint64_t t0 = timed ? rules_trace_now() : 0;

                        x->trace_line = i;
                        x->trace_status = 0;
                        r = apply_line(x, l);
                        trace_record_line(x, i, r, timed ? rules_trace_now() - t0 : 0);
                        if (r < 0) {
                                log_debug_errno(r, "%s: Failed to apply udev rules: %m",
                                                device_sysname(ev->dev));
                                break;
                        }
                        if (r > 0 && l->goto_line >= 0 && (size_t)l->goto_line > i)
                                next = (size_t)l->goto_line;
                }
                i = next;
        }
        driver = proplist_get(&ev->props, "DRIVER");
        rules_trace_end(trace, driver, r < 0 ? r : 0, rules_trace_now() - start);
        return r < 0 ? r : 0;
}

int rules_apply(const struct rules *rules, struct udev_event *ev)
{
        struct exec_state x = { .rules = rules, .ev = ev };
        unsigned mask = LINE_HAS_GOTO | LINE_UPDATE_SOMETHING;
        unsigned major = 0, minor = 0;
        int ifindex = 0;

        if (!rules || !ev || !ev->dev)
                return -EINVAL;
        x.has_devnum = device_get_devnum(ev->dev, &major, &minor) >= 0 && major > 0;
        /* tags inherited from the DB (or, on remove, the whole record) */
        x.links_outdated = ev->devlinks.n > 0;
        x.tags_outdated = ev->tags.n > 0 || ev->current_tags.n > 0;
        x.has_ifindex = device_get_ifindex(ev->dev, &ifindex) >= 0 && ifindex > 0;
        if (ev->action != UEVENT_ACTION_REMOVE) {
                if (x.has_devnum)
                        mask |= LINE_HAS_DEVLINK | LINE_HAS_OWNER_GROUP_MODE;
                if (x.has_ifindex)
                        mask |= LINE_HAS_NAME;
        }

        if (_unlikely_(ev->trace))
                return apply_traced(&x, mask);
        for (size_t i = 0; i < rules->n_lines;) {
                const struct rule_line *l = &rules->lines[i];
                size_t next = i + 1;

                if (l->mask & mask) {
                        int r = apply_line(&x, l);
                        if (r < 0)
                                return log_debug_errno(r, "%s: Failed to apply udev rules: %m",
                                                       device_sysname(ev->dev));
                        if (r > 0 && l->goto_line >= 0 && (size_t)l->goto_line > i)
                                next = (size_t)l->goto_line;
                }
                i = next;
        }
        return 0;
}

/* ------------------------------------------------------------ RUN */

void rules_execute_run(struct udev_event *ev)
{
        for (size_t i = 0; i < ev->n_run; i++) {
                const struct run_entry *e = &ev->run[i];
                char cmd[UDEV_LINE_SIZE];
                int r;

                if (e->builtin) {
                        size_t wl = strcspn(e->cmd, " \t\n");
                        char word[64];
                        enum builtin_id id = _BUILTIN_INVALID;

                        if (wl < sizeof(word)) {
                                memcpy(word, e->cmd, wl);
                                word[wl] = '\0';
                                id = builtin_lookup(word);
                        }
                        if (id == _BUILTIN_INVALID || !copy_str(cmd, sizeof(cmd), e->cmd)) {
                                log_debug("%s: Unknown built-in command \"%s\", ignoring",
                                          device_sysname(ev->dev), e->cmd);
                                continue;
                        }
                        log_debug("%s: Running built-in command \"%s\"", device_sysname(ev->dev),
                                  e->cmd);
                        uint64_t t0 = ev->trace ? rules_trace_now() : 0;
                        r = run_builtin(ev, id, cmd);
                        if (ev->trace)
                                rules_trace_exec(ev->trace, SIZE_MAX, RULES_TRACE_RUN_BUILTIN,
                                                 e->cmd, r, rules_trace_now() - t0);
                        if (r < 0)
                                log_debug_errno(r, "%s: Failed to run built-in command \"%s\", "
                                                "ignoring: %m", device_sysname(ev->dev), e->cmd);
                        continue;
                }
                log_debug("%s: Running command \"%s\"", device_sysname(ev->dev), e->cmd);
                uint64_t t0 = ev->trace ? rules_trace_now() : 0;
                r = spawn_program(ev, e->cmd, true, NULL, 0, NULL);
                if (ev->trace)
                        rules_trace_exec(ev->trace, SIZE_MAX, RULES_TRACE_RUN_PROGRAM, e->cmd, r,
                                         rules_trace_now() - t0);
                if (r < 0)
                        log_warning_errno(r, "%s: Failed to execute '%s', ignoring: %m",
                                          device_sysname(ev->dev), e->cmd);
                else if (r > 0)
                        log_debug("%s: Command \"%s\" returned %d (error), ignoring.",
                                  device_sysname(ev->dev), e->cmd, r);
        }
}
