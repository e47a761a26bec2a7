/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (libFuzzer runs the target single-threaded) */
/* libFuzzer target for the udev database reader (src/device/db.c):
 * db_parse() on the bytes of a /run/udev/data/<id> file, the parser db_read()
 * uses after reading the file.
 *
 * The record must obey the documented rules (lists bounded by
 * DB_ENTRIES_MAX, no empty devlinks, "KEY=VALUE" properties with a non-empty
 * key and value and each key once, tags without ':' or ' ' (the empty tag
 * counts), unique lists,
 * every current tag also a tag, no '\n' or '\r' anywhere). Then it is
 * rendered with db_render() (what db_write() would write, with
 * has_devnum = true) and parsed again: the result must be the same record
 * (minus the '.'-prefixed properties, which are never written; a record
 * with nothing to store renders as an empty file), and rendering that again
 * must give the same bytes.
 *
 * Seed corpus: tests/fuzz/corpus-db/ (files written by udevd, captured with
 * tests/fuzz/make-corpus.py, and files as systemd-udevd 252 writes them);
 * dictionary tests/fuzz/fuzz-db.dict.
 * The code's log messages (all levels) go to stderr: -close_fd_mask=2, as
 * check-fuzz uses, discards them. */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "device/db.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        (void)argc;
        (void)argv;
        log_set_target(LOG_TARGET_CONSOLE, "fuzz-db");
        /* every message is formatted: its arguments are fuzzed data too */
        log_set_max_level(LOG_DEBUG);
        return 0;
}

static void check_list(const struct strlist *l, bool unique)
{
        CHECK(l->n <= DB_ENTRIES_MAX && l->n <= l->cap);
        CHECK(l->n == 0 || l->items);
        for (size_t i = 0; i < l->n; i++) {
                CHECK(l->items[i] && !strpbrk(l->items[i], "\n\r"));
                if (unique)
                        for (size_t j = 0; j < i; j++)
                                CHECK(!streq(l->items[i], l->items[j]));
        }
}

static size_t key_len(const char *prop)
{
        const char *eq = strchr(prop, '=');

        CHECK(eq && eq != prop && eq[1]);
        return (size_t)(eq - prop);
}

static void check_record(const struct db_record *r)
{
        check_list(&r->devlinks, true);
        check_list(&r->properties, false);
        check_list(&r->tags, true);
        check_list(&r->current_tags, true);
        for (size_t i = 0; i < r->devlinks.n; i++)
                CHECK(r->devlinks.items[i][0]);
        for (size_t i = 0; i < r->properties.n; i++) {
                size_t k = key_len(r->properties.items[i]);

                for (size_t j = 0; j < i; j++)
                        CHECK(key_len(r->properties.items[j]) != k ||
                              !strneq(r->properties.items[j], r->properties.items[i], k));
        }
        /* the empty tag (TAG="") is a tag, as in systemd 252 */
        for (size_t i = 0; i < r->tags.n; i++)
                CHECK(!strpbrk(r->tags.items[i], ": "));
        for (size_t i = 0; i < r->current_tags.n; i++)
                CHECK(strlist_contains(&r->tags, r->current_tags.items[i]));
        CHECK(!r->persist);
}

static bool same_list(const struct strlist *a, const struct strlist *b, bool skip_dot)
{
        size_t j = 0;

        for (size_t i = 0; i < a->n; i++) {
                if (skip_dot && a->items[i][0] == '.')
                        continue;
                if (j >= b->n || !streq(a->items[i], b->items[j]))
                        return false;
                j++;
        }
        return j == b->n;
}

static bool has_info(const struct db_record *r)
{
        if (r->devlinks.n || r->link_priority || r->tags.n || r->current_tags.n)
                return true;
        for (size_t i = 0; i < r->properties.n; i++)
                if (r->properties.items[i][0] != '.')
                        return true;
        return false;
}

static void check_roundtrip(const struct db_record *r)
{
        _cleanup_(db_record_clear) struct db_record again = {};
        _cleanup_free_ char *text = NULL, *text2 = NULL;
        size_t len, len2;

        CHECK(db_render(r, true, &text, &len) == 0);
        CHECK(text && strlen(text) == len);
        CHECK(db_parse(text, len, &again) == 0);
        if (!has_info(r)) {
                CHECK(len == 0 && !has_info(&again) && again.usec_initialized == 0);
                return;
        }
        CHECK(same_list(&r->devlinks, &again.devlinks, false));
        CHECK(same_list(&r->properties, &again.properties, true));
        CHECK(same_list(&r->tags, &again.tags, false));
        CHECK(same_list(&r->current_tags, &again.current_tags, false));
        CHECK(r->link_priority == again.link_priority);
        CHECK(r->usec_initialized == again.usec_initialized);

        CHECK(db_render(&again, true, &text2, &len2) == 0);
        CHECK(len2 == len && memcmp(text, text2, len) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_(db_record_clear) struct db_record rec = {};
        /* an exact-size copy without a terminating NUL: ASan catches over-reads */
        char *copy = malloc(size ? size : 1);
        int r;

        CHECK(copy);
        memcpy(copy, data, size);
        r = db_parse(copy, size, &rec);
        CHECK(memcmp(copy, data, size) == 0); /* the buffer is borrowed, not modified */
        free(copy);
        if (r < 0) {
                CHECK(r == -ENOMEM || (r == -EFBIG && size > DB_FILE_MAX));
                return 0;
        }
        CHECK(r == 0);
        check_record(&rec);
        check_roundtrip(&rec);
        return 0;
}
