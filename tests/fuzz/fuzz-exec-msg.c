/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (libFuzzer runs the target single-threaded) */
/* libFuzzer target for the exec-helper wire decoders (src/exec/exec-msg.c):
 * exec_msg_request_parse() on arbitrary bytes, as the helper process calls it
 * on every datagram from a worker, and exec_msg_reply_check() on the same
 * bytes, as a worker calls it on the helper's answer.
 *
 * An accepted request is checked against the contract of exec-msg.h (size,
 * limits, argv[0] absolute, KEY=VALUE environment, strings inside the datagram
 * and covering it exactly) and exec_msg_request_build() of the view must give
 * back the very same bytes. An accepted reply must be exactly one struct
 * exec_msg_reply with the right magic and id and no negative pid/error.
 *
 * Seed corpus: tests/fuzz/corpus-exec-msg/ (requests and replies as udevd and
 * tudev-exec exchange them, written by tests/fuzz/make-corpus-exec-msg.py).
 * exec-msg.c is compiled into this target (the fuzz library holds only
 * shared/, proto/, device/ and rules/). */

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec-msg.c" /* NOLINT: the unit under test */
#include "exec/exec-msg.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "fuzz.h"

static char *argv_storage[EXEC_ARGC_MAX + 1];
static char *env_storage[EXEC_ENVC_MAX + 1];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        (void)argc;
        (void)argv;
        log_set_target(LOG_TARGET_CONSOLE, "fuzz-exec-msg");
        log_set_max_level(LOG_DEBUG);
        return 0;
}

static bool in_msg(const char *buf, size_t size, const char *p)
{
        return p >= buf && p < buf + size;
}

static void check_strings(const char *buf, size_t size, char *const *v, size_t n,
                          const char **next)
{
        for (size_t i = 0; i < n; i++) {
                size_t l;

                CHECK(v[i] == *next && in_msg(buf, size, v[i]));
                l = strnlen(v[i], (size_t)(buf + size - v[i]));
                CHECK(v[i] + l < buf + size); /* NUL inside the datagram */
                *next = v[i] + l + 1;
        }
        CHECK(v[n] == NULL);
}

static void check_request(const char *buf, size_t size, const struct exec_msg_request_view *v)
{
        struct exec_msg_request h;
        const char *next = buf + sizeof(h);
        void *again = NULL;
        size_t again_size = 0;

        CHECK(size >= sizeof(h) && size <= EXEC_MSG_MAX);
        memcpy(&h, buf, sizeof(h));
        CHECK(h.magic == EXEC_MSG_REQUEST_MAGIC && h.size == size);
        CHECK((h.flags & ~EXEC_REQ_LOG_LEVEL_MASK) == 0);
        CHECK(v->set_log_level == (h.flags != 0));
        CHECK(!v->set_log_level ||
              (v->log_level == (int)h.flags - 1 && v->log_level >= 0 && v->log_level <= 7));
        CHECK(v->id == h.id && v->deadline_usec == h.deadline_usec);
        CHECK(v->kill_grace_usec == h.kill_grace_usec &&
              v->kill_grace_usec <= EXEC_KILL_GRACE_MAX_USEC);
        CHECK(v->timeout_signal == h.timeout_signal && v->timeout_signal > 0 &&
              v->timeout_signal < NSIG);
        CHECK(v->argc == h.argc && v->argc >= 1 && v->argc <= EXEC_ARGC_MAX);
        CHECK(v->envc == h.envc && v->envc <= EXEC_ENVC_MAX);
        CHECK(v->argv == argv_storage && v->envp == env_storage);

        check_strings(buf, size, v->argv, v->argc, &next);
        check_strings(buf, size, v->envp, v->envc, &next);
        CHECK(next == buf + size); /* nothing after the last string */
        CHECK(v->argv[0][0] == '/');
        for (size_t i = 0; i < v->envc; i++) {
                const char *eq = strchr(v->envp[i], '=');

                CHECK(eq && eq != v->envp[i]);
        }

        /* the encoder gives back the same datagram */
        CHECK(exec_msg_request_build(v, v->argv, v->envp, &again, &again_size) == 0);
        CHECK(again_size == size && memcmp(again, buf, size) == 0);
        free(again);
}

static void check_reply(const uint8_t *data, size_t size)
{
        struct exec_msg_reply r;
        uint64_t id = 0;

        if (size >= offsetof(struct exec_msg_reply, id) + sizeof(id))
                memcpy(&id, data + offsetof(struct exec_msg_reply, id), sizeof(id));
        if (exec_msg_reply_check(data, size, id) < 0) {
                CHECK(exec_msg_reply_check(data, size, id ^ 1) < 0); /* not the id's fault */
                return;
        }
        CHECK(size == sizeof(r));
        memcpy(&r, data, sizeof(r));
        CHECK(r.magic == EXEC_MSG_REPLY_MAGIC && r.id == id && r.pid >= 0 && r.error >= 0);
        CHECK(exec_msg_reply_check(data, size, id + 1) == -EBADMSG);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct exec_msg_request_view v;
        char *copy = malloc(size ? size : 1); /* exact size: ASan sees any over-read */
        int r;

        CHECK(copy);
        if (size)
                memcpy(copy, data, size);
        memset(&v, 0xa5, sizeof(v));
        r = exec_msg_request_parse(copy, size, argv_storage, env_storage, &v);
        if (r < 0)
                CHECK(r == -EBADMSG);
        else {
                CHECK(r == 0);
                check_request(copy, size, &v);
        }
        CHECK(size == 0 || memcmp(copy, data, size) == 0); /* the parser only reads */
        free(copy);

        check_reply(data, size);
        return 0;
}
