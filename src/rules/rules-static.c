/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: manager (once, right after the rules are loaded at daemon start) */
/* OPTIONS+="static_node=NAME": the line's load-time OWNER/
 * GROUP/MODE and its TAG values (unsubstituted) are applied to /dev/NAME,
 * ignoring the line's matches. Only numeric or load-time resolved owner and
 * group count; names needing per-event resolution are ignored. */

#include <errno.h>

#include "device/node.h"
#include "rules/rules-internal.h"
#include "rules/rules.h"
#include "shared/log.h"

#define STATIC_TAGS_MAX 64

static int apply_line(const struct rule_line *l, const struct device_roots *roots)
{
        struct node_perms p = {};
        const char *tags[STATIC_TAGS_MAX];
        size_t n_tags = 0;

        for (unsigned i = 0; i < l->n_tokens; i++) {
                const struct token *t = &l->tokens[i];

                switch (t->type) {
                case TK_A_OWNER_ID:
                        p.uid_set = t->data.id >= 0;
                        p.uid = t->data.id >= 0 ? (uid_t)t->data.id : 0;
                        break;
                case TK_A_GROUP_ID:
                        p.gid_set = t->data.id >= 0;
                        p.gid = t->data.id >= 0 ? (gid_t)t->data.id : 0;
                        break;
                case TK_A_MODE_ID:
                        p.mode = t->data.mode;
                        p.mode_set = true;
                        break;
                case TK_A_TAG:
                        if (n_tags < STATIC_TAGS_MAX)
                                tags[n_tags++] = t->value;
                        break;
                case TK_A_OPTIONS_STATIC_NODE: {
                        int r = node_apply_static(roots, t->value, &p, tags, n_tags);
                        if (r < 0)
                                return r;
                        break;
                }
                default:
                        break;
                }
        }
        return 0;
}

int rules_apply_static_nodes(const struct rules *r, const struct device_roots *roots)
{
        int ret = 0;

        if (!r || !roots)
                return -EINVAL;
        for (size_t i = 0; i < r->n_lines; i++) {
                const struct rule_line *l = &r->lines[i];
                int q;

                if (!(l->mask & LINE_HAS_STATIC_NODE))
                        continue;
                q = apply_line(l, roots);
                if (q < 0) {
                        log_warning_errno(q, "%s:%u: Failed to apply static node permissions: %m",
                                          l->file, l->lineno);
                        if (ret == 0)
                                ret = q;
                }
        }
        return ret;
}
