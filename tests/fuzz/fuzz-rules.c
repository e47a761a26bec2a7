/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (libFuzzer runs the target single-threaded) */
/* libFuzzer target for the rules compiler: rules_load_string() on arbitrary
 * bytes, then a consistency check of the compiled snapshot (sorted tokens,
 * GOTO targets, masks, patterns) and rules_unref().
 *
 * Build and run (from the repository root, independent of the Makefile):
 *
 *   mkdir -p build-fuzz && clang -g -O1 -fsanitize=fuzzer,address,undefined \
 *       -fno-sanitize-recover=all -std=gnu11 -D_GNU_SOURCE -Isrc \
 *       tests/fuzz/fuzz-rules.c src/rules/rules-load.c src/rules/rules-parse.c \
 *       src/rules/rules-compile.c src/rules/rules-arena.c \
 *       src/shared/log.c src/shared/hashmap.c src/shared/time-util.c \
 *       -o build-fuzz/fuzz-rules
 *   mkdir -p build-fuzz/corpus-rules
 *   build-fuzz/fuzz-rules -max_total_time=60 -max_len=65536 -timeout=10 \
 *       build-fuzz/corpus-rules tests/fuzz/corpus-rules
 *
 * (the first corpus directory receives new inputs; tests/fuzz/corpus-rules
 * is the seed corpus kept in the repository). FUZZ_RULES_LOG=1 prints the
 * compiler's messages too. The options (verify checks, name resolution) are
 * derived from the input length so that every mode gets exercised.
 *
 * The compiler needs only the builtin *names* (builtins/builtin.h); builtin.c
 * also pulls in every builtin implementation, so this file carries weak
 * copies of the two name lookups (the real ones win when builtin.c is
 * linked in). */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "builtins/builtin.h"
#include "rules/rules-internal.h"
#include "shared/log.h"
#include "fuzz.h"

static const char *const fuzz_builtin_names[_BUILTIN_MAX] = {
        [BUILTIN_BLKID] = "blkid",       [BUILTIN_BTRFS] = "btrfs",
        [BUILTIN_HWDB] = "hwdb",         [BUILTIN_INPUT_ID] = "input_id",
        [BUILTIN_KEYBOARD] = "keyboard", [BUILTIN_KMOD] = "kmod",
        [BUILTIN_NET_ID] = "net_id",     [BUILTIN_NET_SETUP_LINK] = "net_setup_link",
        [BUILTIN_PATH_ID] = "path_id",   [BUILTIN_USB_ID] = "usb_id",
        [BUILTIN_UACCESS] = "uaccess",   [BUILTIN_NET_DRIVER] = "net_driver",
};

__attribute__((weak)) enum builtin_id builtin_lookup_prefix(const char *word, size_t len)
{
        if (len == 0)
                return _BUILTIN_INVALID;
        for (int i = 0; i < _BUILTIN_MAX; i++)
                if (strncmp(fuzz_builtin_names[i], word, len) == 0)
                        return (enum builtin_id)i;
        return _BUILTIN_INVALID;
}

__attribute__((weak)) const char *builtin_name(enum builtin_id id)
{
        return id >= 0 && id < _BUILTIN_MAX ? fuzz_builtin_names[id] : NULL;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        (void)argc;
        (void)argv;
        log_set_target(LOG_TARGET_CONSOLE, "fuzz-rules");
        log_set_max_level(getenv("FUZZ_RULES_LOG") ? LOG_DEBUG : LOG_CRIT);
        return 0;
}

static bool type_has_alternatives(enum token_type t)
{
        return t < TK_M_TEST || t == TK_M_RESULT;
}

static void check_token(const struct token *t)
{
        CHECK(t->type >= 0 && t->type < _TK_TYPE_MAX);
        CHECK(t->op >= OP_MATCH && t->op <= OP_ASSIGN_FINAL);
        CHECK(t->line > 0 && t->column > 0);
        if (TK_IS_MATCH(t->type)) {
                CHECK(t->op == OP_MATCH || t->op == OP_NOMATCH);
                CHECK(t->value);
        } else
                CHECK(t->op != OP_MATCH && t->op != OP_NOMATCH);
        if (t->pattern.n_alts > 0) {
                CHECK(type_has_alternatives(t->type));
                CHECK(t->pattern.kind == MATCH_PLAIN || t->pattern.kind == MATCH_GLOB);
                for (unsigned i = 0; i < t->pattern.n_alts; i++)
                        CHECK(t->pattern.alts[i] && !strchr(t->pattern.alts[i], '|'));
        }
        if (t->value)
                CHECK(t->value_needs_subst == (strpbrk(t->value, "$%") != NULL));
        if (t->attr.subsystem)
                CHECK(t->attr.raw && t->attr.raw[0] == '[' && t->attr.sysname && t->attr.name);
        if (t->attr.raw)
                CHECK(t->attr.name);
}

static void check_rules(const struct rules *r)
{
        for (size_t i = 0; i < r->n_lines; i++) {
                const struct rule_line *l = &r->lines[i];

                CHECK(l->mask != 0);
                CHECK(l->file && l->lineno > 0);
                CHECK(!!(l->mask & LINE_HAS_LABEL) == !!l->label);
                CHECK(!!(l->mask & LINE_HAS_GOTO) == !!l->goto_label);
                if (l->goto_label) {
                        CHECK(l->goto_line > (int)i && (size_t)l->goto_line < r->n_lines);
                        const struct rule_line *t = &r->lines[l->goto_line];
                        CHECK(t->label && strcmp(t->label, l->goto_label) == 0);
                        CHECK(t->file == l->file);
                } else
                        CHECK(l->goto_line == -1);
                for (unsigned k = 0; k < l->n_tokens; k++) {
                        check_token(&l->tokens[k]);
                        if (k > 0)
                                CHECK(l->tokens[k - 1].type <= l->tokens[k].type);
                }
        }
        CHECK(r->stats.lines == r->n_lines);
        CHECK(!rules_should_reload(r));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct rules_load_options opts = {
                .verify = size & 1,
                /* early resolution asks NSS about every name: keep it rare */
                .resolve_names = size % 16 == 0  ? RESOLVE_NAMES_EARLY
                                 : size % 5 == 1 ? RESOLVE_NAMES_NEVER
                                                 : RESOLVE_NAMES_LATE,
        };
        struct rules *r = NULL;

        /* the text is not NUL-terminated: a copy exactly `size` bytes long
         * lets ASan catch any read past the end */
        char *text = malloc(size ? size : 1);
        if (!text)
                return 0;
        memcpy(text, data, size);
        if (rules_load_string("fuzz.rules", text, size, &opts, &r) == 0) {
                check_rules(r);
                struct rules *r2 = rules_ref(r);
                rules_unref(r);
                rules_unref(r2);
        }
        free(text);
        return 0;
}
