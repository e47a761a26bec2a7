/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (no global state) */
/* Value clean-up, *_ENC encoding and bounded output for the helper programs
 * (helper-util.h). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "helpers/helper-util.h"

/* isspace() in the C locale (the programs never call setlocale()). */
static bool c_isspace(char c)
{
        return c == ' ' || (c >= '\t' && c <= '\r');
}

static size_t utf8_expected_len(unsigned char c)
{
        if (c < 0x80)
                return 1;
        if ((c & 0xe0) == 0xc0)
                return 2;
        if ((c & 0xf0) == 0xe0)
                return 3;
        if ((c & 0xf8) == 0xf0)
                return 4;
        if ((c & 0xfc) == 0xf8)
                return 5;
        if ((c & 0xfe) == 0xfc)
                return 6;
        return 0;
}

static size_t utf8_len_of_codepoint(uint32_t u)
{
        if (u < 0x80)
                return 1;
        if (u < 0x800)
                return 2;
        if (u < 0x10000)
                return 3;
        if (u < 0x200000)
                return 4;
        if (u < 0x4000000)
                return 5;
        return 6;
}

static bool codepoint_ok(uint32_t u)
{
        if (u >= 0x110000)
                return false;
        if ((u & 0xfffff800) == 0xd800) /* UTF-16 surrogates */
                return false;
        if (u >= 0xfdd0 && u <= 0xfdef)
                return false;
        if ((u & 0xfffe) == 0xfffe)
                return false;
        return true;
}

int helper_utf8_char_len(const char *s)
{
        const unsigned char *p = (const unsigned char *)s;
        size_t n = utf8_expected_len(p[0]);
        uint32_t u;

        if (n == 0)
                return -EINVAL;
        if (n == 1)
                return 1;
        /* every byte of the sequence must have the high bit (a NUL stops us) */
        for (size_t i = 0; i < n; i++)
                if (!(p[i] & 0x80))
                        return -EINVAL;
        u = p[0] & (0x7fu >> n);
        for (size_t i = 1; i < n; i++) {
                if ((p[i] & 0xc0) != 0x80)
                        return -EINVAL;
                u = (u << 6) | (p[i] & 0x3f);
        }
        if (utf8_len_of_codepoint(u) != n || !codepoint_ok(u))
                return -EINVAL;
        return (int)n;
}

bool helper_devnode_char_ok(char c, const char *extra)
{
        if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
                return true;
        if (c == '\0')
                return false;
        return strchr("#+-.:=@_", c) || (extra && strchr(extra, c));
}

int helper_encode_devnode_name(const char *s, char *out, size_t size)
{
        size_t j = 0;

        if (size == 0)
                return -ENOBUFS;
        for (size_t i = 0; s[i] != '\0'; i++) {
                int n = helper_utf8_char_len(s + i);

                if (n > 1) {
                        if (size - j < (size_t)n + 1)
                                goto full;
                        memcpy(out + j, s + i, (size_t)n);
                        j += (size_t)n;
                        i += (size_t)n - 1;
                } else if (s[i] == '\\' || !helper_devnode_char_ok(s[i], NULL)) {
                        static const char hex[] = "0123456789abcdef";
                        unsigned char c = (unsigned char)s[i];

                        if (size - j < 4 + 1)
                                goto full;
                        out[j++] = '\\';
                        out[j++] = 'x';
                        out[j++] = hex[c >> 4];
                        out[j++] = hex[c & 0xf];
                } else {
                        if (size - j < 1 + 1)
                                goto full;
                        out[j++] = s[i];
                }
        }
        out[j] = '\0';
        return 0;
full:
        out[j] = '\0';
        return -ENOBUFS;
}

size_t helper_replace_whitespace(const char *s, char *to, size_t len)
{
        bool space = false;
        size_t i = 0, j = 0;

        /* leading whitespace, as strspn(" \t\n\r") but never past len */
        while (i < len && s[i] && strchr(" \t\n\r", s[i]))
                i++;
        for (; j < len && i < len && s[i] != '\0'; i++) {
                if (c_isspace(s[i])) {
                        space = true;
                        continue;
                }
                if (space) {
                        if (j + 1 >= len)
                                break;
                        to[j++] = '_';
                        space = false;
                }
                to[j++] = s[i];
        }
        to[j] = '\0';
        return j;
}

size_t helper_replace_chars(char *s, const char *allow)
{
        size_t i = 0, replaced = 0;

        while (s[i] != '\0') {
                int n;

                if (helper_devnode_char_ok(s[i], allow)) {
                        i++;
                        continue;
                }
                if (s[i] == '\\' && s[i + 1] == 'x') {
                        i += 2;
                        continue;
                }
                n = helper_utf8_char_len(s + i);
                if (n > 1) {
                        i += (size_t)n;
                        continue;
                }
                s[i] = (c_isspace(s[i]) && allow && strchr(allow, ' ')) ? ' ' : '_';
                i++;
                replaced++;
        }
        return replaced;
}

bool helper_string_is_printable(const char *s)
{
        if (s[0] == '\0')
                return false;
        for (size_t i = 0; s[i] != '\0';) {
                int n = helper_utf8_char_len(s + i);

                if (n < 0 || (unsigned char)s[i] < 0x20 || s[i] == 0x7f)
                        return false;
                i += (size_t)n;
        }
        return true;
}

int helper_out_printf(struct helper_out *o, const char *fmt, ...)
{
        va_list ap;
        int n;

        if (o->truncated)
                return -ENOBUFS;
        va_start(ap, fmt);
        n = vsnprintf(o->buf + o->len, sizeof(o->buf) - o->len, fmt, ap);
        va_end(ap);
        if (n < 0 || (size_t)n >= sizeof(o->buf) - o->len) {
                o->buf[o->len] = '\0';
                o->truncated = true;
                return -ENOBUFS;
        }
        o->len += (size_t)n;
        return 0;
}

int helper_out_flush_stdout(const struct helper_out *o)
{
        size_t done = 0;

        while (done < o->len) {
                ssize_t n = write(STDOUT_FILENO, o->buf + done, o->len - done);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                done += (size_t)n;
        }
        return o->truncated ? -ENOBUFS : 0;
}
