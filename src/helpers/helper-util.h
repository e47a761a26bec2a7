/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (no global state) */
#pragma once
/* Text helpers shared by the udev helper programs (ata_id, scsi_id, ...):
 * the value clean-up and "*_ENC" encoding systemd 252 applies to device
 * strings, and a bounded output buffer for the KEY=value lines a program
 * prints. Depends on libc only, so the helpers link no daemon code. */

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "shared/macro.h"

/* Length of the valid UTF-8 sequence at s (2..6 bytes: systemd's
 * utf8_encoded_valid_unichar() rules: no overlong forms, no surrogates, no
 * non-characters, below 0x110000), 1 for a plain ASCII byte, or -EINVAL.
 * Reads at most up to the first NUL. */
int helper_utf8_char_len(const char *s);

/* Characters a device name may hold unencoded: [0-9A-Za-z#+-.:=@_], plus
 * those in `extra` (may be NULL). */
bool helper_devnode_char_ok(char c, const char *extra);

/* systemd's encode_devnode_name(): copy `s` to `out` (size `size`), valid
 * multi-byte UTF-8 and allowed characters as they are, everything else
 * (and '\\') as "\xNN". 0, or -ENOBUFS if it does not fit (then `out` holds
 * the part that fitted, NUL-terminated, unless size is 0). */
int helper_encode_devnode_name(const char *s, char *out, size_t size);

/* systemd's udev_replace_whitespace(): read at most `len` bytes of `s` (it
 * stops earlier at a NUL), drop leading and trailing whitespace, turn each
 * inner run of whitespace into one '_'; at most `len` bytes are written,
 * then a NUL, so `to` needs len + 1 bytes. `s` and `to` may be the same
 * buffer. Returns the length written. */
size_t helper_replace_whitespace(const char *s, char *to, size_t len);

/* systemd's udev_replace_chars(s, NULL) with `allow` as extra characters:
 * in place, keeps allowed characters, "\x" escapes and valid multi-byte
 * UTF-8, turns whitespace into ' ' if `allow` holds ' ', anything else into
 * '_'. Returns how many bytes were replaced. */
size_t helper_replace_chars(char *s, const char *allow);

/* Non-empty, valid UTF-8 throughout and free of control characters (below
 * 0x20, and 0x7f): fit to be printed as a property value as it is. */
bool helper_string_is_printable(const char *s);

/* ---- bounded output of KEY=value lines ---- */

#define HELPER_OUT_MAX 8192

struct helper_out {
        char buf[HELPER_OUT_MAX];
        size_t len;
        bool truncated; /* a line did not fit: it and everything after is lost */
};

#define HELPER_OUT_INIT { .len = 0, .truncated = false }

/* Append formatted text. 0, or -ENOBUFS once the buffer is full (the text
 * that did not fit is dropped whole and `truncated` stays set). */
int helper_out_printf(struct helper_out *o, const char *fmt, ...) _printf_(2, 3);
/* Write the buffer to fd 1 in full. 0 or -errno (-ENOBUFS if it was
 * truncated; what fitted is written first). */
int helper_out_flush_stdout(const struct helper_out *o);
