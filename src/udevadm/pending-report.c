/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (udevadm is single-threaded) */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "shared/log.h"
#include "udevadm/pending-report.h"
#include "udevadm/udevadm.h"

static int parse_u64(const char *s, uint64_t *ret)
{
        char *end;

        if (*s < '0' || *s > '9')
                return -EBADMSG;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (errno != 0 || *end)
                return -EBADMSG;
        *ret = v;
        return 0;
}

int pending_line_parse(char *line, struct pending_line *ret)
{
        char *f[8];
        size_t n = 0;
        char *p = line;

        for (;;) {
                char *tab = strchr(p, '\t');

                if (n == 8)
                        return -EBADMSG;
                f[n++] = p;
                if (!tab)
                        break;
                *tab = '\0';
                p = tab + 1;
        }
        if (n < 7)
                return -EBADMSG;
        *ret = (struct pending_line){
                .action = f[1], .devpath = f[2], .subsystem = f[3], .state = f[5],
                .detail = f[6],
        };
        if (parse_u64(f[0], &ret->seqnum) < 0 || parse_u64(f[4], &ret->age_usec) < 0)
                return -EBADMSG;
        ret->first_seqnum = ret->seqnum;
        if (n == 8 && parse_u64(f[7], &ret->first_seqnum) < 0)
                return -EBADMSG;
        return 0;
}

static void print_secs(FILE *out, uint64_t usec)
{
        fprintf(out, "%" PRIu64 ".%03" PRIu64 "s", usec / 1000000, usec / 1000 % 1000);
}

/* "NAME:PID:USEC"; the name may hold ':' itself, so split from the right. */
static void print_program(FILE *out, const char *detail)
{
        const char *c2 = strrchr(detail, ':');
        const char *c1 = NULL;
        uint64_t run = 0, pid = 0;
        char num[32];

        for (const char *p = detail; c2 && p < c2; p++)
                if (*p == ':')
                        c1 = p;
        if (!c1 || (size_t)(c2 - c1 - 1) >= sizeof(num) || parse_u64(c2 + 1, &run) < 0) {
                fprintf(out, "program %s", detail);
                return;
        }
        memcpy(num, c1 + 1, (size_t)(c2 - c1 - 1));
        num[c2 - c1 - 1] = '\0';
        if (parse_u64(num, &pid) < 0) {
                fprintf(out, "program %s", detail);
                return;
        }
        fprintf(out, "program %.*s (pid %" PRIu64 ", running ", (int)(c1 - detail), detail, pid);
        print_secs(out, run);
        fputc(')', out);
}

static void print_line(FILE *out, const struct pending_line *l)
{
        if (l->first_seqnum < l->seqnum)
                fprintf(out, "  %" PRIu64 "..%" PRIu64, l->first_seqnum, l->seqnum);
        else
                fprintf(out, "  %" PRIu64, l->seqnum);
        fprintf(out, " %s %s (%s) for ", l->action, l->devpath, l->subsystem);
        print_secs(out, l->age_usec);
        fputs(": ", out);
        if (strcmp(l->state, "program") == 0)
                print_program(out, l->detail);
        else if (strcmp(l->state, "running") == 0)
                fputs("running rules", out);
        else if (strcmp(l->state, "disk-lock") == 0)
                fputs("a locked disk", out);
        else if (strcmp(l->state, "waiting") == 0 && strcmp(l->detail, "-") != 0)
                fprintf(out, "event %s", l->detail);
        else if (strcmp(l->state, "waiting") == 0)
                fputs("an earlier event", out);
        else if (strcmp(l->state, "queued") == 0)
                fputs("a free worker", out);
        else
                fprintf(out, "%s %s", l->state, l->detail);
        fputc('\n', out);
}

int pending_report_print(char *text, pending_keep_fn keep, void *userdata, FILE *out)
{
        size_t kept = 0, shown = 0, more_unknown = 0;
        char *line = text;

        fputs("Events still pending (SEQNUM ACTION DEVPATH (SUBSYSTEM) for AGE: WAITS ON):\n",
              out);
        while (line && *line) {
                char *nl = strchr(line, '\n');
                struct pending_line l;

                if (nl)
                        *nl = '\0';
                if (line[0] == '#') {
                        /* "# N more": the daemon stopped listing; they are unfiltered */
                        more_unknown = (size_t)strtoull(line + 1, NULL, 10);
                } else {
                        if (pending_line_parse(line, &l) < 0)
                                return -EBADMSG;
                        if (!keep || keep(&l, userdata)) {
                                kept++;
                                if (shown < PENDING_REPORT_LINES) {
                                        print_line(out, &l);
                                        shown++;
                                }
                        }
                }
                line = nl ? nl + 1 : NULL;
        }
        if (kept > shown)
                fprintf(out, "  ... and %zu more\n", kept - shown);
        if (more_unknown > 0)
                fprintf(out, "  ... and %zu more events the daemon did not list\n",
                        more_unknown);
        if (kept == 0 && more_unknown == 0)
                fputs("  (none any more)\n", out);
        return (int)kept;
}

int pending_report(const struct event_scope *scope, pending_keep_fn keep, void *userdata,
                   uint64_t timeout_usec)
{
        const struct event_scope all = {};
        char query[CTRL_MSG_VALUE_MAX];
        struct ctrl_reply rep;
        int r;

        r = event_scope_format(scope ? scope : &all, "pending", query, sizeof(query));
        if (r < 0)
                return r;
        r = udevadm_query(query, timeout_usec, &rep);
        if (r < 0) {
                log_debug_errno(r, "Failed to ask the daemon for its pending events: %m");
                return r;
        }
        if (rep.status < 0) {
                log_debug("The daemon refused the query: %.*s",
                          (int)strcspn(rep.text ?: "", "\n"), rep.text ?: "");
                r = rep.status;
        } else {
                r = pending_report_print(rep.text ?: (char[]){ "" }, keep, userdata, stderr);
                if (r < 0)
                        log_debug("Malformed answer to the pending query.");
        }
        free(rep.text);
        return r;
}
