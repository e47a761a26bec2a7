/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (libFuzzer runs the target single-threaded) */
/* libFuzzer target for the kernel uevent parser: uevent_parse_kernel() on
 * arbitrary bytes (src/proto/uevent.c), as the netlink listener calls it on
 * every datagram of NETLINK_KOBJECT_UEVENT group 1.
 *
 * A record that parses is checked against the documented contract (identity
 * fields, property index, id, devnode), then rebuilt into a canonical
 * datagram ("ACTION@DEVPATH", then the indexed KEY=VALUE pairs in order),
 * which must parse to the same record. libudev-format (group 2) messages are
 * not this parser's input: tests/fuzz/fuzz-monitor-msg.c covers them.
 *
 * Seed corpus: tests/fuzz/corpus-uevent/ (datagrams as the kernel sends them);
 * dictionary: tests/fuzz/fuzz-uevent.dict. Run through `make check-fuzz`
 * (FUZZ_TARGETS=uevent for this one only) or by hand:
 *   build/fuzz/fuzz-uevent -close_fd_mask=2 -dict=tests/fuzz/fuzz-uevent.dict DIR \
 *       tests/fuzz/corpus-uevent
 * (-close_fd_mask=2 discards the code's log messages, all levels enabled:
 * their arguments are fuzzed data too). */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/uevent.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        (void)argc;
        (void)argv;
        log_set_target(LOG_TARGET_CONSOLE, "fuzz-uevent");
        /* every message is formatted: its arguments are fuzzed data too */
        log_set_max_level(LOG_DEBUG);
        return 0;
}

static bool in_buf(const struct uevent *ev, const char *p)
{
        return p >= ev->buf && p < ev->buf + ev->buf_len;
}

static bool key_chars_ok(const char *k)
{
        if (!*k)
                return false;
        for (; *k; k++)
                if (!((*k >= 'A' && *k <= 'Z') || (*k >= 'a' && *k <= 'z') ||
                      (*k >= '0' && *k <= '9') || *k == '_' || *k == '.'))
                        return false;
        return true;
}

static bool no_ctrl(const char *s)
{
        for (; *s; s++)
                if ((unsigned char)*s < 0x20 || *s == 0x7f)
                        return false;
        return true;
}

static void check_record(const struct uevent *ev)
{
        char id[UEVENT_ID_MAX];
        const char *slash;

        CHECK(ev->seqnum > 0);
        CHECK(uevent_action_to_string(ev->action) != NULL);
        CHECK(ev->devpath && ev->devpath[0] == '/' && in_buf(ev, ev->devpath));
        CHECK(no_ctrl(ev->devpath) && !strstr(ev->devpath, "//") && !strstr(ev->devpath, "/./") &&
              !strstr(ev->devpath, "/../"));
        CHECK(ev->subsystem && *ev->subsystem && !strchr(ev->subsystem, '/') &&
              no_ctrl(ev->subsystem));
        CHECK(!ev->devtype || (*ev->devtype && no_ctrl(ev->devtype)));
        CHECK(!ev->driver || (*ev->driver && no_ctrl(ev->driver)));
        slash = strrchr(ev->devpath, '/');
        CHECK(ev->sysname == slash + 1 && *ev->sysname);
        CHECK(!streq(ev->sysname, ".") && !streq(ev->sysname, ".."));
        if (ev->major == 0)
                CHECK(ev->minor == 0);
        CHECK(ev->ifindex >= 0);

        CHECK(ev->n_props <= UEVENT_PROPS_MAX);
        for (size_t i = 0; i < ev->n_props; i++) {
                const struct uevent_prop *p = &ev->props[i];

                CHECK(in_buf(ev, p->key) && in_buf(ev, p->value));
                CHECK(key_chars_ok(p->key));
                CHECK(!strchr(p->value, '\n'));
                for (size_t j = 0; j < i; j++)
                        CHECK(!streq(ev->props[j].key, p->key));
                CHECK(uevent_get(ev, p->key) == p->value);
        }
        CHECK(uevent_get(ev, "DEVPATH") == ev->devpath);
        CHECK(uevent_get(ev, "SUBSYSTEM") == ev->subsystem);
        CHECK(uevent_get(ev, "DEVPATH_OLD") == ev->devpath_old);
        CHECK(streq(uevent_get(ev, "ACTION"), uevent_action_to_string(ev->action)));

        /* the derived strings follow the payload in the same block */
        CHECK(ev->id == ev->buf + ev->buf_len && strlen(ev->id) <= 255);
        CHECK(device_id_format(id, sizeof(id), ev->subsystem, ev->devpath, ev->major, ev->minor,
                               ev->ifindex) == 0);
        CHECK(streq(id, ev->id) && !strchr(id, '/'));

        CHECK(!ev->devnode[0] || ev->devnode == ev->id + strlen(ev->id) + 1);
        if (uevent_get(ev, "DEVNAME")) {
                CHECK(strneq(ev->devnode, "/dev/", 5) && ev->devnode[5]);
                CHECK(!strstr(ev->devnode, "/../") && !strstr(ev->devnode, "/./") &&
                      !strstr(ev->devnode, "//") && no_ctrl(ev->devnode));
                CHECK(ev->devnode[strlen(ev->devnode) - 1] != '/');
        } else
                CHECK(ev->devnode[0] == '\0');
}

static bool same_record(const struct uevent *a, const struct uevent *b)
{
        if (a->seqnum != b->seqnum || a->action != b->action || a->major != b->major ||
            a->minor != b->minor || a->ifindex != b->ifindex || a->n_props != b->n_props)
                return false;
        if (!streq(a->id, b->id) || !streq(a->devnode, b->devnode) ||
            !streq(a->devpath, b->devpath) || !streq(a->subsystem, b->subsystem))
                return false;
        for (size_t i = 0; i < a->n_props; i++)
                if (!streq(a->props[i].key, b->props[i].key) ||
                    !streq(a->props[i].value, b->props[i].value))
                        return false;
        return true;
}

/* "ACTION@DEVPATH\0" + "KEY=VALUE\0"... from the index: must give the same record. */
static void check_rebuilt(const struct uevent *ev)
{
        _cleanup_(uevent_freep) struct uevent *again = NULL;
        char *buf = malloc(ev->buf_len + 1), *p = buf;
        size_t n;
        int r;

        CHECK(buf);
        n = (size_t)snprintf(p, ev->buf_len + 1, "%s@%s", uevent_action_to_string(ev->action),
                             ev->devpath);
        p += n + 1;
        for (size_t i = 0; i < ev->n_props; i++) {
                size_t k = strlen(ev->props[i].key), v = strlen(ev->props[i].value);

                /* never longer than the original: repeats and cut values only shrink it */
                CHECK((size_t)(p - buf) + k + v + 2 <= ev->buf_len);
                memcpy(p, ev->props[i].key, k);
                p[k] = '=';
                memcpy(p + k + 1, ev->props[i].value, v + 1);
                p += k + v + 2;
        }
        r = uevent_parse_kernel(buf, (size_t)(p - buf), ev->recv_usec, &again);
        CHECK(r == 0);
        CHECK(same_record(ev, again));
        free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_(uevent_freep) struct uevent *ev = NULL;
        /* an exact-size copy: ASan catches any read past the datagram */
        char *copy = malloc(size ? size : 1);
        int r;

        CHECK(copy);
        memcpy(copy, data, size);
        r = uevent_parse_kernel(copy, size, 42, &ev);
        CHECK(memcmp(copy, data, size) == 0); /* the input buffer is never written */
        free(copy);
        if (r < 0) {
                CHECK(r == -EBADMSG || r == -E2BIG || r == -ENOMEM);
                CHECK(!ev);
                return 0;
        }
        CHECK(r == 0 && ev);
        CHECK(ev->buf_len == size && ev->recv_usec == 42);
        check_record(ev);
        check_rebuilt(ev);
        return 0;
}
