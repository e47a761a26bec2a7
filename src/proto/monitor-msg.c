/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (pure functions) */
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "proto/monitor-msg.h"
#include "shared/macro.h"

#define MONITOR_MSG_PREFIX "libudev"  /* plus its NUL: 8 bytes */
#define MONITOR_MSG_MARKER "UDEV_DATABASE_VERSION=1"
#define MONITOR_MSG_PROPS_MIN 32      /* sd-device refuses shorter property buffers */

uint32_t murmur_hash2(const void *key, size_t len, uint32_t seed)
{
        const uint32_t m = 0x5bd1e995;
        const unsigned char *data = key;
        uint32_t h = seed ^ (uint32_t)len;

        while (len >= 4) {
                uint32_t k;

                memcpy(&k, data, 4); /* host byte order, like the reference */
                k *= m;
                k ^= k >> 24;
                k *= m;
                h *= m;
                h ^= k;
                data += 4;
                len -= 4;
        }

        switch (len) {
        case 3:
                h ^= (uint32_t)data[2] << 16;
                /* fall through */
        case 2:
                h ^= (uint32_t)data[1] << 8;
                /* fall through */
        case 1:
                h ^= data[0];
                h *= m;
                break;
        default:
                break;
        }

        h ^= h >> 13;
        h *= m;
        h ^= h >> 15;
        return h;
}

static uint32_t string_hash(const char *s) { return murmur_hash2(s, strlen(s), 0); }

uint64_t monitor_tag_bloom(const char *tag)
{
        uint32_t h;
        uint64_t bits = 0;

        if (!tag)
                return 0;
        h = string_hash(tag);
        for (unsigned shift = 0; shift <= 18; shift += 6)
                bits |= UINT64_C(1) << ((h >> shift) & 63);
        return bits;
}

/* Each entry non-empty, "KEY=..." with a non-empty key, NUL-terminated. */
static bool props_are_valid(const char *props, size_t len)
{
        size_t pos = 0;

        if (len == 0)
                return true;
        if (!props || props[len - 1] != '\0')
                return false;
        while (pos < len) {
                const char *s = props + pos;
                size_t slen = strlen(s);

                if (slen == 0 || s[0] == '=' || !memchr(s, '=', slen))
                        return false;
                pos += slen + 1;
        }
        return true;
}

int monitor_msg_encode(void *out, size_t size, const char *subsystem, const char *devtype,
                       const char *const *tags, const char *props, size_t props_len)
{
        struct monitor_msg_header h = {};
        uint64_t bloom = 0;
        size_t plen, total;

        if (!out || !subsystem || !props_are_valid(props, props_len))
                return -EINVAL;
        if (props_len > MONITOR_MSG_MAX)
                return -ENOBUFS;

        plen = sizeof(MONITOR_MSG_MARKER) + props_len;
        if (plen < MONITOR_MSG_PROPS_MIN)
                return -EINVAL;
        total = MONITOR_MSG_HEADER_SIZE + plen;
        if (total > size || total > MONITOR_MSG_MAX)
                return -ENOBUFS;

        for (size_t i = 0; tags && tags[i]; i++)
                bloom |= monitor_tag_bloom(tags[i]);

        memcpy(h.prefix, MONITOR_MSG_PREFIX, sizeof(MONITOR_MSG_PREFIX));
        h.magic_be = htobe32(MONITOR_MSG_MAGIC);
        h.header_size = MONITOR_MSG_HEADER_SIZE;
        h.properties_off = MONITOR_MSG_HEADER_SIZE;
        h.properties_len = (uint32_t)plen;
        h.subsystem_hash_be = htobe32(string_hash(subsystem));
        h.devtype_hash_be = devtype ? htobe32(string_hash(devtype)) : 0;
        h.tag_bloom_hi_be = htobe32((uint32_t)(bloom >> 32));
        h.tag_bloom_lo_be = htobe32((uint32_t)(bloom & 0xffffffffU));

        memcpy(out, &h, sizeof(h));
        memcpy((char *)out + sizeof(h), MONITOR_MSG_MARKER, sizeof(MONITOR_MSG_MARKER));
        if (props_len > 0)
                memcpy((char *)out + sizeof(h) + sizeof(MONITOR_MSG_MARKER), props, props_len);
        return (int)total;
}

int monitor_msg_decode(const void *msg, size_t len, const char **props, size_t *props_len)
{
        struct monitor_msg_header h;
        const char *p = msg;

        if (!msg || len < sizeof(h) || len > MONITOR_MSG_MAX)
                return -EBADMSG;
        memcpy(&h, msg, sizeof(h));
        if (memcmp(h.prefix, MONITOR_MSG_PREFIX, sizeof(MONITOR_MSG_PREFIX)) != 0)
                return -EBADMSG;
        if (be32toh(h.magic_be) != MONITOR_MSG_MAGIC)
                return -EBADMSG;
        /* libudev only needs off + 32 <= len; we also refuse offsets into the header. */
        if (h.properties_off < MONITOR_MSG_HEADER_SIZE ||
            (size_t)h.properties_off + MONITOR_MSG_PROPS_MIN > len)
                return -EBADMSG;
        if (p[len - 1] != '\0')
                return -EBADMSG;

        if (props)
                *props = p + h.properties_off;
        if (props_len)
                *props_len = len - h.properties_off;
        return 0;
}
