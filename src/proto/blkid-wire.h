/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (pure functions over caller buffers) */
#pragma once
/* What the blkid prober (tudev-probe blkid, src/probe/) prints on stdout and
 * the blkid builtin (src/builtins/blkid.c) reads back. Header-only, so the
 * probe binary links no tudev library and the daemon no probe object.
 *
 * Command line (built by the builtin, run through the exec helper):
 *
 *     tudev-probe blkid --devnum=MAJOR:MINOR --kind=block|char
 *                 [--diskseq=N] [--offset=BYTES] [--noraid]
 *                 [--hint=NAME=VALUE]... DEVNODE
 *
 * Output: lines "KEY=VALUE\n", at most BLKID_WIRE_LINES_MAX of them and
 * BLKID_WIRE_OUT_MAX bytes in all.
 *   - KEY "ID_" followed by [A-Za-z0-9_] (at most BLKID_WIRE_KEY_MAX bytes in
 *     all): a property, to be set in this order;
 *   - KEY starting with '.': a directive for the builtin:
 *       .GPT_BOOT=UUID   an ESP/XBOOTLDR partition of this GPT disk (any number)
 *       .GPT_ROOT=UUID   the root partition the disk would offer (at most one)
 *       .ERRNO=N         why it failed (1 .. 4095; only with exit status 1)
 *       .STAGE=WORD      where it failed: "hint", "open", "setup" or "probe"
 *       .HINT=I          with .STAGE=hint: the 0-based index of the bad --hint
 *     (unknown directives are ignored).
 * VALUE: any bytes but NUL; the bytes 0x01-0x1f, 0x7f and '\' are written as
 * "\xHH" (two lowercase hex digits), everything else as is. At most
 * BLKID_WIRE_VALUE_MAX bytes once decoded.
 *
 * Exit status: 0 success (a device that vanished, or a node that is no longer
 * the device's, is a success without properties); 1 failure described by
 * .ERRNO/.STAGE; 2 bad command line. Anything else -- a signal, another
 * status, output that breaks these rules -- is a prober failure the builtin
 * reports as such.
 *
 * Server mode (`tudev-probe --server --parent=PID`, what udevd uses):
 * long-lived probers in a small pool the worker threads share (about one
 * per CPU, builtins/blkid.c), each talking over an AF_UNIX
 * SOCK_SEQPACKET socket on its fd 3. A request is one datagram: the words of
 * the command line above from "blkid" on, each ending with a NUL (at most
 * BLKID_WIRE_REQ_MAX bytes and BLKID_WIRE_REQ_ARGS_MAX words). The answer is
 * one datagram: the exit status in decimal and '\n' (BLKID_EXIT_TRUNCATED if
 * the output did not fit), then the output as above (at most
 * BLKID_WIRE_REPLY_MAX bytes in all). Requests are served one at a time, in
 * order; the server exits at EOF. A crash or a hang costs the server (the
 * builtin kills it and starts another for the next request). */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define BLKID_WIRE_OUT_MAX (32 * 1024)
#define BLKID_WIRE_LINES_MAX 256
#define BLKID_WIRE_KEY_MAX 255
#define BLKID_WIRE_VALUE_MAX 4096
#define BLKID_WIRE_ERRNO_MAX 4095

#define BLKID_EXIT_OK 0
#define BLKID_EXIT_FAILED 1
#define BLKID_EXIT_USAGE 2
#define BLKID_EXIT_TRUNCATED 3 /* server mode: the output did not fit */

#define BLKID_WIRE_REQ_MAX 16384
#define BLKID_WIRE_REQ_ARGS_MAX 96 /* "blkid", 6 options, 64 hints, "--", the node */
#define BLKID_WIRE_REPLY_MAX (BLKID_WIRE_OUT_MAX + 16)

static inline int blkid_wire_hexval(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

static inline bool blkid_wire_needs_escape(unsigned char c)
{
        return c < 0x20 || c == 0x7f || c == '\\';
}

/* Escape `value` into buf (size >= 4 * strlen(value) + 1 always suffices).
 * Returns the length written, or -ENOBUFS. */
static inline int blkid_wire_escape(const char *value, char *buf, size_t size)
{
        static const char hex[] = "0123456789abcdef";
        size_t o = 0;

        for (const unsigned char *p = (const unsigned char *)value; *p; p++) {
                if (o + 5 > size)
                        return -ENOBUFS;
                if (blkid_wire_needs_escape(*p)) {
                        buf[o++] = '\\';
                        buf[o++] = 'x';
                        buf[o++] = hex[*p >> 4];
                        buf[o++] = hex[*p & 0xf];
                } else
                        buf[o++] = (char)*p;
        }
        if (o >= size)
                return -ENOBUFS;
        buf[o] = '\0';
        return (int)o;
}

/* "ID_" + [A-Za-z0-9_]+, or '.' + [A-Z_]+; len bytes at key. */
static inline bool blkid_wire_key_valid(const char *key, size_t len)
{
        size_t i;

        if (len == 0 || len > BLKID_WIRE_KEY_MAX)
                return false;
        if (key[0] == '.') {
                if (len < 2)
                        return false;
                for (i = 1; i < len; i++)
                        if (!((key[i] >= 'A' && key[i] <= 'Z') || key[i] == '_'))
                                return false;
                return true;
        }
        if (len < 4 || memcmp(key, "ID_", 3) != 0)
                return false;
        for (i = 3; i < len; i++) {
                char c = key[i];
                if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                      (c >= '0' && c <= '9') || c == '_'))
                        return false;
        }
        return true;
}

/* Split the next line of buf[*pos .. len) into NUL-terminated key and value,
 * decoding the value in place (buf is modified). Returns 1 with *key and *value
 * pointing into buf, 0 at the end, -EBADMSG if the line breaks the format
 * (no '\n' at its end, no '=', bad key, raw control byte, bad escape, an
 * escaped NUL, a value too long). */
static inline int blkid_wire_next(char *buf, size_t len, size_t *pos, char **key, char **value)
{
        char *line = buf + *pos, *nl, *eq, *r, *w;

        if (*pos >= len)
                return 0;
        nl = memchr(line, '\n', len - *pos);
        if (!nl)
                return -EBADMSG;
        *nl = '\0';
        *pos = (size_t)(nl - buf) + 1;
        eq = memchr(line, '=', (size_t)(nl - line));
        if (!eq || !blkid_wire_key_valid(line, (size_t)(eq - line)))
                return -EBADMSG;
        *eq = '\0';
        for (r = w = eq + 1; *r; w++) {
                unsigned char c = (unsigned char)*r;
                int hi, lo;

                if (c < 0x20 || c == 0x7f)
                        return -EBADMSG;
                if (c != '\\') {
                        *w = *r++;
                        continue;
                }
                if (r[1] != 'x' || (hi = blkid_wire_hexval(r[2])) < 0 ||
                    (lo = blkid_wire_hexval(r[3])) < 0 || (hi == 0 && lo == 0))
                        return -EBADMSG;
                *w = (char)(hi << 4 | lo);
                r += 4;
        }
        *w = '\0';
        if ((size_t)(w - (eq + 1)) > BLKID_WIRE_VALUE_MAX)
                return -EBADMSG;
        *key = line;
        *value = eq + 1;
        return 1;
}

/* 16 bytes from "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" or 32 plain hex
 * digits (either case). 0 or -EINVAL. */
static inline int blkid_wire_parse_id128(const char *s, uint8_t id[16])
{
        size_t n = 0, len;
        bool dashes;

        if (!s)
                return -EINVAL;
        len = strlen(s);
        dashes = len == 36;
        if (!dashes && len != 32)
                return -EINVAL;
        for (size_t i = 0; n < 16; i += 2) {
                int hi, lo;

                if (dashes && (i == 8 || i == 13 || i == 18 || i == 23)) {
                        if (s[i] != '-')
                                return -EINVAL;
                        i++;
                }
                hi = blkid_wire_hexval(s[i]);
                lo = blkid_wire_hexval(s[i + 1]);
                if (hi < 0 || lo < 0)
                        return -EINVAL;
                id[n++] = (uint8_t)(hi << 4 | lo);
        }
        return 0;
}
