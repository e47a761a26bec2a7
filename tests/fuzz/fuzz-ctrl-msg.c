/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (libFuzzer runs the target single-threaded) */
/* libFuzzer target for the control-socket message decoder
 * (src/proto/ctrl-msg.c): ctrl_msg_decode() on arbitrary bytes, as udevd's
 * control server calls it on every SOCK_SEQPACKET datagram.
 *
 * An accepted message is checked against the documented contract (exactly
 * CTRL_MSG_SIZE bytes, known type, SET_ENV a NUL-terminated "KEY=VALUE"
 * without control characters) and must survive ctrl_msg_encode() +
 * ctrl_msg_decode() unchanged.
 *
 * Seed corpus: tests/fuzz/corpus-ctrl-msg/ (one 280-byte message per request
 * type, as systemd's and our udevadm send them, and tudev's query); dictionary
 * tests/fuzz/fuzz-ctrl-msg.dict.
 * The code's log messages (all levels) go to stderr: -close_fd_mask=2, as
 * check-fuzz uses, discards them. */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/ctrl-msg.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        (void)argc;
        (void)argv;
        log_set_target(LOG_TARGET_CONSOLE, "fuzz-ctrl-msg");
        /* every message is formatted: its arguments are fuzzed data too */
        log_set_max_level(LOG_DEBUG);
        return 0;
}

static bool same_msg(const struct ctrl_msg *a, const struct ctrl_msg *b)
{
        if (a->type != b->type)
                return false;
        switch (a->type) {
        case CTRL_MSG_SET_LOG_LEVEL:
        case CTRL_MSG_SET_CHILDREN_MAX:
                return a->intval == b->intval;
        case CTRL_MSG_SET_ENV:
        case CTRL_MSG_TUDEV_QUERY:
                return streq(a->strval, b->strval);
        default:
                return true;
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        uint8_t out[CTRL_MSG_SIZE];
        struct ctrl_msg m, again;
        uint32_t magic;
        char *copy = malloc(size ? size : 1);
        int r;

        CHECK(copy);
        memcpy(copy, data, size);
        memset(&m, 0xa5, sizeof(m));
        r = ctrl_msg_decode(copy, size, &m);
        free(copy);
        if (r < 0) {
                CHECK(r == -EBADMSG);
                return 0;
        }
        CHECK(r == 0 && size == CTRL_MSG_SIZE);
        memcpy(&magic, data + 16, sizeof(magic));
        CHECK(magic == CTRL_MSG_MAGIC);
        CHECK(ctrl_msg_type_to_string(m.type) != NULL);
        if (m.type == CTRL_MSG_SET_ENV) {
                const char *eq;

                CHECK(memchr(m.strval, '\0', sizeof(m.strval)));
                eq = strchr(m.strval, '=');
                CHECK(eq && eq != m.strval);
                for (const char *p = m.strval; *p; p++)
                        CHECK((unsigned char)*p >= 0x20 && *p != 0x7f);
        }
        if (m.type == CTRL_MSG_TUDEV_QUERY) {
                CHECK(memchr(m.strval, '\0', sizeof(m.strval)) && m.strval[0]);
                for (const char *p = m.strval; *p; p++)
                        CHECK((unsigned char)*p >= 0x20 && *p != 0x7f);
        }
        if (m.type == CTRL_MSG_SET_LOG_LEVEL || m.type == CTRL_MSG_SET_CHILDREN_MAX) {
                int32_t v;

                memcpy(&v, data + 24, sizeof(v));
                CHECK(m.intval == v);
        }

        CHECK(ctrl_msg_encode(&m, out) == CTRL_MSG_SIZE);
        memset(&again, 0x5a, sizeof(again));
        CHECK(ctrl_msg_decode(out, sizeof(out), &again) == 0);
        CHECK(same_msg(&m, &again));
        return 0;
}
