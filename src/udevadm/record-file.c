/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (a writer or reader belongs to one thread; udevadm is single-threaded) */
/* The recording file format (record-file.h). */

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/macro.h"
#include "udevadm/record-file.h"

/* ---- validation shared by writer and reader ---- */

static bool component_valid(const char *s, size_t n)
{
        if (n == 0 || n > 255 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
                return false;
        for (size_t i = 0; i < n; i++)
                if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f || s[i] == '/')
                        return false;
        return true;
}

/* "/a/b/c": each component valid; at most max_components of them (0: any). */
static bool path_valid(const char *p, bool absolute, unsigned max_components)
{
        unsigned n = 0;

        if (!p || strlen(p) >= RECORD_PATH_MAX)
                return false;
        if (absolute) {
                if (p[0] != '/')
                        return false;
                p++;
        }
        for (;;) {
                size_t len = strcspn(p, "/");
                if (!component_valid(p, len))
                        return false;
                n++;
                if (max_components && n > max_components)
                        return false;
                if (!p[len])
                        return true;
                p += len + 1;
        }
}

bool record_devpath_valid(const char *devpath)
{
        return devpath && strneq(devpath, "/devices/", 9) && path_valid(devpath, true, 0);
}

bool record_name_valid(const char *name)
{
        return path_valid(name, false, 2);
}

bool record_target_valid(const char *target)
{
        return path_valid(target, true, 0);
}

/* ---- writing ---- */

static int w_check(struct record_writer *w, size_t more)
{
        if (w->error)
                return w->error;
        if (w->bytes + more > RECORD_SIZE_MAX)
                return -E2BIG;
        return 0;
}

static int w_account(struct record_writer *w, int n, size_t expect)
{
        if (n < 0 || (size_t)n != expect) {
                w->error = ferror(w->f) ? -EIO : -ENOSPC;
                return w->error;
        }
        w->bytes += expect;
        return 0;
}

static int _printf_(2, 3) w_line(struct record_writer *w, const char *fmt, ...)
{
        char buf[RECORD_LINE_MAX + 1];
        va_list ap;
        int n, r;

        va_start(ap, fmt);
        n = vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        if (n < 0 || n >= RECORD_LINE_MAX)
                return -EINVAL;
        r = w_check(w, (size_t)n);
        if (r < 0)
                return r;
        return w_account(w, (int)fwrite(buf, 1, (size_t)n, w->f), (size_t)n);
}

/* A header line and its payload, all or nothing against the size cap. */
static int w_payload(struct record_writer *w, const char *head, const void *data, size_t len)
{
        size_t hl = strlen(head);
        int r = w_check(w, hl + len + 1);

        if (r < 0)
                return r;
        r = w_account(w, (int)fwrite(head, 1, hl, w->f), hl);
        if (r >= 0 && len > 0)
                r = w_account(w, (int)fwrite(data, 1, len, w->f), len);
        if (r >= 0)
                r = w_account(w, fputc('\n', w->f) == EOF ? -1 : 1, 1);
        return r;
}

int record_writer_begin(struct record_writer *w, FILE *f)
{
        *w = (struct record_writer){ .f = f };
        return w_line(w, "%s %d\n", RECORD_MAGIC, RECORD_VERSION);
}

int record_write_device(struct record_writer *w, const char *devpath)
{
        if (!record_devpath_valid(devpath))
                return -EINVAL;
        return w_line(w, "S %s\n", devpath);
}

int record_write_gone(struct record_writer *w, const char *devpath)
{
        if (!record_devpath_valid(devpath))
                return -EINVAL;
        return w_line(w, "G %s\n", devpath);
}

int record_write_file(struct record_writer *w, const char *name, const void *data, size_t len)
{
        char head[RECORD_LINE_MAX];

        if (!record_name_valid(name))
                return -EINVAL;
        if (len > RECORD_FILE_DATA_MAX)
                return -E2BIG;
        snprintf(head, sizeof(head), "F %zu %s\n", len, name);
        return w_payload(w, head, data, len);
}

int record_write_unreadable(struct record_writer *w, const char *name)
{
        if (!record_name_valid(name))
                return -EINVAL;
        return w_line(w, "U %s\n", name);
}

int record_write_link(struct record_writer *w, const char *name, const char *target)
{
        if (!record_name_valid(name) || strchr(name, '/') || strchr(name, ' ') ||
            !record_target_valid(target))
                return -EINVAL;
        return w_line(w, "L %s %s\n", name, target);
}

int record_write_event(struct record_writer *w, uint64_t seqnum, const void *data, size_t len)
{
        char head[64];
        int r;

        if (seqnum == 0 || len == 0)
                return -EINVAL;
        if (len > UEVENT_BUFFER_MAX || w->events >= RECORD_EVENTS_MAX)
                return -E2BIG;
        snprintf(head, sizeof(head), "E %" PRIu64 " %zu\n", seqnum, len);
        r = w_payload(w, head, data, len);
        if (r >= 0)
                w->events++;
        return r;
}

int record_write_block(struct record_writer *w, const void *data, size_t len)
{
        int r = w_check(w, len);

        if (r < 0 || len == 0)
                return r;
        return w_account(w, (int)fwrite(data, 1, len, w->f), len);
}

int record_writer_end(struct record_writer *w)
{
        char buf[64];
        int n;

        if (w->error)
                return w->error;
        /* the trailer may pass the size cap: it is what makes the file complete */
        n = snprintf(buf, sizeof(buf), "END %" PRIu64 "\n", w->events);
        if (w_account(w, (int)fwrite(buf, 1, (size_t)n, w->f), (size_t)n) < 0)
                return w->error;
        if (fflush(w->f) != 0)
                w->error = -errno ?: -EIO;
        return w->error;
}

/* ---- reading ---- */

static int _printf_(3, 4) r_fail(struct record_reader *r, unsigned line, const char *fmt, ...)
{
        char msg[RECORD_LINE_MAX];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        snprintf(r->error, sizeof(r->error), "%s:%u: %s", r->name, line, msg);
        return -EBADMSG;
}

/* One header line without its "\n" into r->linebuf. 1, 0 at end of file,
 * -EBADMSG. */
static int r_line(struct record_reader *r)
{
        size_t n = 0;
        int c;

        while ((c = getc(r->f)) != EOF && c != '\n') {
                if (c == '\0')
                        return r_fail(r, r->line + 1, "NUL byte in a header line");
                if (n + 1 >= RECORD_LINE_MAX)
                        return r_fail(r, r->line + 1, "line longer than %d bytes",
                                      RECORD_LINE_MAX);
                r->linebuf[n++] = (char)c;
        }
        r->linebuf[n] = '\0';
        if (c == EOF) {
                if (ferror(r->f))
                        return r_fail(r, r->line + 1, "read error");
                if (n == 0)
                        return 0;
                return r_fail(r, r->line + 1, "truncated: the last line has no newline");
        }
        r->line++;
        r->bytes += n + 1;
        if (r->bytes > RECORD_SIZE_MAX + 64)
                return r_fail(r, r->line, "file larger than %" PRIu64 " bytes", RECORD_SIZE_MAX);
        return 1;
}

/* A decimal number without sign or leading zeros, <= max; *end after it. */
static bool parse_u64(const char *s, uint64_t max, uint64_t *ret, const char **end)
{
        uint64_t v = 0;
        size_t i = 0;

        if (s[0] < '0' || s[0] > '9' || (s[0] == '0' && s[1] >= '0' && s[1] <= '9'))
                return false;
        for (; s[i] >= '0' && s[i] <= '9'; i++) {
                unsigned d = (unsigned)(s[i] - '0');
                if (v > (max - d) / 10)
                        return false;
                v = v * 10 + d;
        }
        *ret = v;
        *end = s + i;
        return true;
}

/* `len` payload bytes into r->data, then the "\n" that ends them. */
static int r_payload(struct record_reader *r, size_t len, unsigned line)
{
        int c;

        if (len > 0 && fread(r->data, 1, len, r->f) != len)
                return ferror(r->f) ? r_fail(r, line, "read error")
                                    : r_fail(r, line, "truncated: %zu bytes of data expected", len);
        r->data[len] = '\0';
        for (size_t i = 0; i < len; i++)
                r->line += r->data[i] == '\n';
        c = fgetc(r->f);
        if (c == EOF)
                return r_fail(r, line, "truncated: no newline after %zu bytes of data", len);
        if (c != '\n')
                return r_fail(r, line, "data longer than the %zu bytes announced", len);
        r->line++;
        r->bytes += len + 1;
        if (r->bytes > RECORD_SIZE_MAX + 64)
                return r_fail(r, line, "file larger than %" PRIu64 " bytes", RECORD_SIZE_MAX);
        return 0;
}

int record_reader_begin(struct record_reader *r, FILE *f, const char *name)
{
        char want[32];
        int k;

        memset(r, 0, sizeof(*r));
        r->f = f;
        r->name = name;
        k = r_line(r);
        if (k < 0)
                return k;
        if (k == 0)
                return r_fail(r, 1, "empty file, not a recording");
        snprintf(want, sizeof(want), "%s %d", RECORD_MAGIC, RECORD_VERSION);
        if (streq(r->linebuf, want))
                return 0;
        if (strneq(r->linebuf, RECORD_MAGIC " ", STRLEN(RECORD_MAGIC " ")))
                return r_fail(r, 1, "unsupported version '%s' (this udevadm reads %d)",
                              r->linebuf + STRLEN(RECORD_MAGIC " "), RECORD_VERSION);
        return r_fail(r, 1, "not a recording (no '%s' line)", want);
}

static int r_entry(struct record_reader *r, unsigned line, const char *what)
{
        if (!r->in_device)
                return r_fail(r, line, "%s record outside a device snapshot (no S before it)",
                              what);
        if (++r->entries > RECORD_ENTRIES_MAX)
                return r_fail(r, line, "more than %d entries in one device snapshot",
                              RECORD_ENTRIES_MAX);
        return 0;
}

static int r_device(struct record_reader *r, unsigned line, const char *path, bool gone)
{
        if (!record_devpath_valid(path))
                return r_fail(r, line, "invalid devpath '%s'", path);
        if (++r->devices > RECORD_DEVICES_MAX)
                return r_fail(r, line, "more than %d device records before one event",
                              RECORD_DEVICES_MAX);
        r->in_device = !gone;
        r->entries = 0;
        return 0;
}

static int r_event(struct record_reader *r, struct record_item *it, const char *args)
{
        uint64_t seqnum, len;
        const char *end;
        int k;

        if (!parse_u64(args, UINT64_MAX, &seqnum, &end) || seqnum == 0 || *end != ' ' ||
            !parse_u64(end + 1, UINT64_MAX, &len, &end) || *end)
                return r_fail(r, it->line, "malformed event line, expected 'E SEQNUM LENGTH'");
        if (len == 0 || len > UEVENT_BUFFER_MAX)
                return r_fail(r, it->line, "event length %" PRIu64 " out of range 1..%d", len,
                              UEVENT_BUFFER_MAX);
        if (seqnum <= r->last_seqnum)
                return r_fail(r, it->line, "SEQNUM %" PRIu64 " not above the previous event's "
                              "%" PRIu64, seqnum, r->last_seqnum);
        if (r->events >= RECORD_EVENTS_MAX)
                return r_fail(r, it->line, "more than %d events", RECORD_EVENTS_MAX);
        k = r_payload(r, (size_t)len, it->line);
        if (k < 0)
                return k;
        uevent_free(r->uevent);
        r->uevent = NULL;
        k = uevent_parse_kernel(r->data, (size_t)len, 0, &r->uevent);
        if (k == -ENOMEM)
                return k;
        if (k < 0)
                return r_fail(r, it->line, "invalid kernel uevent (%s)",
                              k == -E2BIG ? "too large" : "malformed");
        if (r->uevent->seqnum != seqnum)
                return r_fail(r, it->line, "SEQNUM=%" PRIu64 " in the uevent, %" PRIu64
                              " in the event line", r->uevent->seqnum, seqnum);
        r->last_seqnum = seqnum;
        r->events++;
        r->devices = 0;
        r->in_device = false;
        it->type = RECORD_ITEM_EVENT;
        it->seqnum = seqnum;
        it->data = r->data;
        it->len = (size_t)len;
        it->uevent = r->uevent;
        return 1;
}

static int r_file(struct record_reader *r, struct record_item *it, const char *args)
{
        uint64_t len;
        const char *end;
        int k;

        if (!parse_u64(args, UINT64_MAX, &len, &end) || *end != ' ')
                return r_fail(r, it->line, "malformed file line, expected 'F LENGTH NAME'");
        if (len > RECORD_FILE_DATA_MAX)
                return r_fail(r, it->line, "file length %" PRIu64 " above the cap of %d", len,
                              RECORD_FILE_DATA_MAX);
        if (!record_name_valid(end + 1))
                return r_fail(r, it->line, "invalid attribute name '%s'", end + 1);
        k = r_entry(r, it->line, "F");
        if (k < 0)
                return k;
        it->type = RECORD_ITEM_FILE;
        it->path = end + 1;
        k = r_payload(r, (size_t)len, it->line);
        if (k < 0)
                return k;
        it->data = r->data;
        it->len = (size_t)len;
        return 1;
}

static int r_link(struct record_reader *r, struct record_item *it, char *args)
{
        char *sp = strchr(args, ' ');
        int k;

        if (!sp)
                return r_fail(r, it->line, "malformed link line, expected 'L NAME TARGET'");
        *sp = '\0';
        if (!record_name_valid(args) || strchr(args, '/'))
                return r_fail(r, it->line, "invalid link name '%s'", args);
        if (!record_target_valid(sp + 1))
                return r_fail(r, it->line, "invalid link target '%s'", sp + 1);
        k = r_entry(r, it->line, "L");
        if (k < 0)
                return k;
        it->type = RECORD_ITEM_LINK;
        it->path = args;
        it->target = sp + 1;
        return 1;
}

int record_read_next(struct record_reader *r, struct record_item *it)
{
        char *l, *args;
        int k;

        memset(it, 0, sizeof(*it));
        if (r->ended) {
                /* nothing may follow the END line */
                k = fgetc(r->f);
                if (k != EOF)
                        return r_fail(r, r->line + 1, "data after the END line");
                return 0;
        }
        k = r_line(r);
        if (k < 0)
                return k;
        if (k == 0)
                return r_fail(r, r->line + 1, "truncated: no END line (the recording was cut "
                              "short)");
        l = r->linebuf;
        it->line = r->line;
        if (!l[0] || !l[1] || l[1] != ' ') {
                if (strneq(l, "END ", 4)) {
                        uint64_t n;
                        const char *end;

                        if (!parse_u64(l + 4, UINT64_MAX, &n, &end) || *end)
                                return r_fail(r, it->line, "malformed END line");
                        if (n != r->events)
                                return r_fail(r, it->line, "END says %" PRIu64 " events, the file "
                                              "has %" PRIu64, n, r->events);
                        r->ended = true;
                        it->type = RECORD_ITEM_END;
                        it->seqnum = n;
                        return 1;
                }
                return r_fail(r, it->line, "unknown record '%.40s'", l);
        }
        args = l + 2;
        switch (l[0]) {
        case 'E':
                return r_event(r, it, args);
        case 'S':
        case 'G':
                k = r_device(r, it->line, args, l[0] == 'G');
                if (k < 0)
                        return k;
                it->type = l[0] == 'S' ? RECORD_ITEM_DEVICE : RECORD_ITEM_GONE;
                it->path = args;
                return 1;
        case 'F':
                return r_file(r, it, args);
        case 'U':
                if (!record_name_valid(args))
                        return r_fail(r, it->line, "invalid attribute name '%s'", args);
                k = r_entry(r, it->line, "U");
                if (k < 0)
                        return k;
                it->type = RECORD_ITEM_UNREADABLE;
                it->path = args;
                return 1;
        case 'L':
                return r_link(r, it, args);
        default:
                return r_fail(r, it->line, "unknown record '%.40s'", l);
        }
}

void record_reader_done(struct record_reader *r)
{
        uevent_free(r->uevent);
        r->uevent = NULL;
}
