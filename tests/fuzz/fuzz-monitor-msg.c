/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (libFuzzer runs the target single-threaded) */
/* libFuzzer target for the udev-monitor wire format (libudev netlink
 * messages, group 2; src/proto/monitor-msg.c) and for what `udevadm monitor`
 * makes of a received datagram (src/udevadm/netlink-monitor.c).
 *
 * Each input is one datagram:
 *  1. monitor_msg_decode() on an exact-size copy; when it accepts, the
 *     property area must lie inside the message and end in NUL, and the
 *     properties (without the UDEV_DATABASE_VERSION marker) re-encoded with
 *     monitor_msg_encode() must decode to the same bytes, with the subsystem,
 *     devtype and tag-bloom words computed from them;
 *  2. the steps of nlmon_receive() after the socket checks: a "libudev"
 *     message goes through the decoder and the property parser, anything
 *     else with "@/" through the kernel parser (uevent_parse_kernel()) and
 *     the same property post-processing (DEVLINKS/TAGS rebuilt, MAJOR/MINOR
 *     moved, DEVNAME made absolute). An accepted event is checked: ACTION,
 *     DEVPATH, SUBSYSTEM set, every property pointer inside the event's own
 *     storage, keys unique, TAGS in ":a:b:" form.
 * The static parsers of netlink-monitor.c are reached by including that file
 * (it has no main(); its socket functions are simply not called here).
 *
 * Seed corpus: tests/fuzz/corpus-monitor-msg/ (udevd broadcasts and kernel
 * datagrams captured with tests/fuzz/make-corpus.py); dictionary
 * tests/fuzz/fuzz-monitor-msg.dict.
 * The code's log messages (all levels) go to stderr: -close_fd_mask=2, as
 * check-fuzz uses, discards them. */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/monitor-msg.h"
#include "proto/uevent.h"
#include "shared/log.h"
#include "shared/macro.h"

#include "udevadm/netlink-monitor.c"
#include "fuzz.h"

#define MARKER "UDEV_DATABASE_VERSION=1"

static struct nlmon_event *event;
static char *encode_buf;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        (void)argc;
        (void)argv;
        log_set_target(LOG_TARGET_CONSOLE, "fuzz-monitor-msg");
        /* every message is formatted: its arguments are fuzzed data too */
        log_set_max_level(LOG_DEBUG);
        event = nlmon_event_new();
        encode_buf = malloc(MONITOR_MSG_MAX);
        CHECK(event && encode_buf);
        return 0;
}

/* First "KEY=" value in a property area, or NULL. */
static const char *find_prop(const char *props, size_t len, const char *key)
{
        size_t klen = strlen(key);

        for (size_t pos = 0; pos < len;) {
                const char *s = props + pos;

                if (strneq(s, key, klen) && s[klen] == '=')
                        return s + klen + 1;
                pos += strlen(s) + 1;
        }
        return NULL;
}

/* Same check as the encoder's: "KEY=..." entries with a non-empty key. */
static bool props_encodable(const char *props, size_t len)
{
        if (len == 0)
                return true;
        if (props[len - 1] != '\0')
                return false;
        for (size_t pos = 0; pos < len;) {
                const char *s = props + pos;
                size_t n = strlen(s);

                if (n == 0 || s[0] == '=' || !memchr(s, '=', n))
                        return false;
                pos += n + 1;
        }
        return true;
}

/* Tags of a ":a:b:" value into a NULL-terminated array (pointers into buf). */
static void split_tags(const char *value, char *buf, size_t size, const char **tags, size_t max)
{
        size_t n = 0;
        char *save = NULL;

        snprintf(buf, size, "%s", value ? value : "");
        for (char *t = strtok_r(buf, ":", &save); t && n + 1 < max; t = strtok_r(NULL, ":", &save))
                tags[n++] = t;
        tags[n] = NULL;
}

static void check_reencode(const char *props, size_t len)
{
        static char tagbuf[MONITOR_MSG_MAX];
        const char *tags[64], *subsystem, *devtype, *p2;
        struct monitor_msg_header h;
        uint64_t bloom = 0;
        size_t len2;
        int n;

        /* what udevd broadcasts: the marker first, then the properties */
        if (len < sizeof(MARKER) || memcmp(props, MARKER, sizeof(MARKER)) != 0)
                return;
        props += sizeof(MARKER);
        len -= sizeof(MARKER);
        if (!props_encodable(props, len))
                return;
        subsystem = find_prop(props, len, "SUBSYSTEM");
        devtype = find_prop(props, len, "DEVTYPE");
        split_tags(find_prop(props, len, "TAGS"), tagbuf, sizeof(tagbuf), tags, ARRAY_SIZE(tags));

        n = monitor_msg_encode(encode_buf, MONITOR_MSG_MAX, subsystem ? subsystem : "fuzz",
                               devtype, tags, props, len);
        if (n == -EINVAL && len + sizeof(MARKER) < 32)
                return; /* too short for libudev */
        CHECK(n == (int)(MONITOR_MSG_HEADER_SIZE + sizeof(MARKER) + len));
        CHECK(monitor_msg_decode(encode_buf, (size_t)n, &p2, &len2) == 0);
        CHECK(p2 == encode_buf + MONITOR_MSG_HEADER_SIZE);
        CHECK(len2 == sizeof(MARKER) + len);
        CHECK(memcmp(p2, MARKER, sizeof(MARKER)) == 0);
        CHECK(memcmp(p2 + sizeof(MARKER), props, len) == 0);

        memcpy(&h, encode_buf, sizeof(h));
        CHECK(be32toh(h.magic_be) == MONITOR_MSG_MAGIC);
        CHECK(h.header_size == MONITOR_MSG_HEADER_SIZE);
        CHECK(h.properties_off == MONITOR_MSG_HEADER_SIZE && h.properties_len == len2);
        CHECK(be32toh(h.subsystem_hash_be) ==
              murmur_hash2(subsystem ? subsystem : "fuzz", strlen(subsystem ? subsystem : "fuzz"),
                           0));
        CHECK(be32toh(h.devtype_hash_be) == (devtype ? murmur_hash2(devtype, strlen(devtype), 0) : 0));
        for (size_t i = 0; tags[i]; i++) {
                uint64_t b = monitor_tag_bloom(tags[i]);

                CHECK(b != 0 && __builtin_popcountll(b) <= 4);
                bloom |= b;
        }
        CHECK(be32toh(h.tag_bloom_hi_be) == (uint32_t)(bloom >> 32));
        CHECK(be32toh(h.tag_bloom_lo_be) == (uint32_t)bloom);
}

static void check_decoder(const uint8_t *data, size_t size)
{
        char *copy = malloc(size ? size : 1);
        const char *props = NULL;
        size_t len = 0;
        int r;

        CHECK(copy);
        memcpy(copy, data, size);
        r = monitor_msg_decode(copy, size, &props, &len);
        if (r < 0) {
                CHECK(r == -EBADMSG);
        } else {
                CHECK(r == 0);
                CHECK(props >= copy + MONITOR_MSG_HEADER_SIZE && len >= 32);
                CHECK(props + len == copy + size && props[len - 1] == '\0');
                check_reencode(props, len);
        }
        free(copy);
}

/* A pointer into one of the event's own buffers (or the kernel record's). */
static bool owned(const struct nlmon_event *ev, const char *p)
{
#define IN(b, n) (p >= (const char *)(b) && p < (const char *)(b) + (n))
        return IN(ev->buf, sizeof(ev->buf)) || IN(ev->devname, sizeof(ev->devname)) ||
               IN(ev->devlinks, sizeof(ev->devlinks)) || IN(ev->all_tags, sizeof(ev->all_tags)) ||
               IN(ev->current_tags, sizeof(ev->current_tags)) ||
               (ev->kernel && IN(ev->kernel->buf, ev->kernel->buf_len));
#undef IN
}

static void check_tags_value(const char *v)
{
        size_t n;

        if (!v)
                return;
        n = strlen(v);
        CHECK(n >= 3 && v[0] == ':' && v[n - 1] == ':' && !strstr(v, "::"));
}

static void check_event(const struct nlmon_event *ev)
{
        CHECK(ev->action && uevent_action_from_string(ev->action) >= 0);
        CHECK(ev->devpath && ev->devpath[0] == '/');
        CHECK(ev->subsystem);
        CHECK(ev->n_props <= NLMON_PROPS_MAX);
        for (size_t i = 0; i < ev->n_props; i++) {
                const struct nlmon_prop *p = &ev->props[i];

                /* the rebuilt keys are string literals */
                CHECK(owned(ev, p->key) || streq(p->key, "MAJOR") || streq(p->key, "MINOR") ||
                      streq(p->key, "DEVLINKS") || streq(p->key, "TAGS") ||
                      streq(p->key, "CURRENT_TAGS"));
                CHECK(owned(ev, p->value));
                CHECK(!strchr(p->value, '\n'));
                CHECK(!streq(p->key, "UDEV_DATABASE_VERSION"));
                for (size_t j = 0; j < i; j++)
                        CHECK(!streq(ev->props[j].key, p->key));
                CHECK(nlmon_event_get(ev, p->key) == p->value);
                if (streq(p->key, "DEVNAME"))
                        CHECK(p->value[0] == '/');
        }
        CHECK(ev->tags == nlmon_event_get(ev, "TAGS"));
        check_tags_value(ev->tags);
        check_tags_value(nlmon_event_get(ev, "CURRENT_TAGS"));
        if (ev->tags)
                CHECK(!nlmon_event_has_tag(ev, "") && ev->tags[1] != ':');
}

/* nlmon_receive() from the point where the datagram is in ev->buf. */
static void check_receive(const uint8_t *data, size_t size)
{
        struct nlmon_event *ev = event;
        int r;

        if (size < 32 || size > sizeof(ev->buf))
                return; /* refused before parsing (length check / truncation) */
        memcpy(ev->buf, data, size);
        if (!memchr(ev->buf, '\0', size))
                return;
        if (streq(ev->buf, "libudev")) {
                const char *props;
                size_t props_len;

                if (monitor_msg_decode(ev->buf, size, &props, &props_len) < 0)
                        return;
                r = parse_udev_props(ev, ev->buf + (props - ev->buf), props_len);
        } else {
                if (!strstr(ev->buf, "@/"))
                        return;
                r = parse_kernel(ev, ev->buf, size);
        }
        if (r < 0) {
                CHECK(r == -EBADMSG || r == -E2BIG || r == -ENOBUFS || r == -ENAMETOOLONG ||
                      r == -ENOMEM);
                return;
        }
        check_event(ev);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        check_decoder(data, size);
        check_receive(data, size);
        return 0;
}
