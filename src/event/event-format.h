/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (pure string functions; udev_format() reads one worker's event) */
#pragma once
/* Text handling of the rules engine, as systemd 252 does it:
 *   - substitutions `$kernel`, `%k`, `$attr{…}` …: udev_format()
 *     at event time, udev_format_check() at load time;
 *   - character sanitising: udev_replace_chars(), udev_replace_whitespace(),
 *     udev_replace_ifname(), udev_sanitize_program_result();
 *   - `[SUBSYSTEM/SYSNAME]attr` references (ATTR{} matches and assignments,
 *     $attr{}, TEST);
 *   - program / builtin command-line splitting: udev_split_cmdline();
 *   - property lines of IMPORT{program} output and IMPORT{file}.
 *
 * Nothing here allocates except through the device view (udev_format() may
 * create devices in the event's device_ctx for `$parent` / `$attr{[s/n]a}`). */

#include <stdbool.h>
#include <stddef.h>

struct device_ctx;
struct udev_event;

/* Buffer sizes of the rules engine, systemd 252's. */
#define UDEV_LINE_SIZE 16384 /* PROGRAM, IMPORT{program,builtin}, RUN, SECLABEL */
#define UDEV_PATH_SIZE 1024  /* NAME, SYMLINK, TAG, TEST, IMPORT{file,parent}, SYSCTL key, {arg} */
#define UDEV_NAME_SIZE 512   /* ENV, OWNER, GROUP, MODE, ATTR value, SYSCTL value, $attr{} */

/* Allow list for PROGRAM results and $attr{} values. */
#define UDEV_ALLOWED_CHARS_INPUT "/ $%?,"

enum udev_format_flags {
        /* SYMLINK (string_escape unset or replace): every substituted part
         * except $result/%c gets udev_replace_whitespace(). */
        UDEV_FORMAT_REPLACE_WHITESPACE = 1u << 0,
};

/* Substitute `src` for event `ev` (borrowed; reads ev->dev, ev->dev_parent,
 * ev->props/global_props, ev->program_result, ev->name, ev->devlinks,
 * ev->ctx) into dest[0..size-1], always NUL-terminated (size > 0).
 *
 * Exactly systemd's udev_event_apply_format(): `$name` by prefix in table
 * order, `%x` short forms, optional `{arg}` (1..UDEV_PATH_SIZE-1 chars;
 * missing `}` or an empty/over-long argument drops the rest of the string),
 * unknown `$x`/`%x` copied literally, `$$`/`%%` -> `$`/`%`; a failing
 * substitution (e.g. `$attr`/`$env` without argument, `%c{bad}`) drops the
 * rest of the string. `$root`/`$sys` and devnode paths use the context's
 * roots ("/dev", "/sys" in the daemon).
 *
 * *ret_truncated (may be NULL) is set when the output did not fit (or an
 * `$attr{}` value was longer than UDEV_NAME_SIZE-1). Returns the length of
 * dest. */
size_t udev_format(const struct udev_event *ev, const char *src, char *dest, size_t size,
                   unsigned flags, bool *ret_truncated);

/* Load-time check of a value that will be substituted (strict mode: a `$` or
 * `%` that does not start a known substitution is an error, so is a missing
 * `}`, an empty `{}`, `$attr`/`$env` without an argument, `%c{…}` that is not
 * a number with optional '+'). Returns 0 or -EINVAL; on error *ret_offset is
 * the 0-based offset in `s` where the problem was found and *ret_hint a
 * message ("invalid substitution type", "attribute value missing",
 * "attribute value not a valid number"). Either pointer may be NULL. */
int udev_format_check_full(const char *s, size_t *ret_offset, const char **ret_hint);
/* Same, with the message "char N: hint" (N = offset + 1, as systemd prints
 * it) written to errbuf[0..n-1] (may be NULL / 0). */
int udev_format_check(const char *s, char *errbuf, size_t n);

/* ---- sanitising; all work in place ---- */

/* Keep ASCII letters, digits, "#+-.:=@_", chars in `allow` (may be NULL), a
 * backslash followed by 'x', and valid multi-byte UTF-8; if `allow` contains
 * ' ', other whitespace becomes ' '; everything else becomes '_'. Returns the
 * number of bytes replaced. */
size_t udev_replace_chars(char *s, const char *allow);
/* Copy at most `len` bytes of src to dst dropping leading/trailing whitespace
 * and turning each inner run of whitespace into one '_'; dst may equal src
 * and needs len + 1 bytes. Returns the new length (dst is NUL-terminated). */
size_t udev_replace_whitespace(const char *src, char *dst, size_t len);
/* Replace every character not valid in an interface name (ASCII 33..126
 * except ':', '/', '%') with '_'. Returns the number replaced. */
size_t udev_replace_ifname(char *s);
bool udev_ifname_valid_char(char c);
/* Length of the valid UTF-8 sequence at s (1 for ASCII), or -EINVAL for an
 * invalid/overlong/surrogate/non-character/truncated one (systemd's rules). */
int udev_utf8_char_len(const char *s);
/* PROGRAM result: trailing '\n's removed, then udev_replace_chars() with
 * UDEV_ALLOWED_CHARS_INPUT. Returns the number of bytes replaced. */
size_t udev_sanitize_program_result(char *s);

/* ---- `[SUBSYSTEM/SYSNAME]attr` ---- */

/* Split `s` = "[subsys/sysname]attr" ("/" after ']' optional; sysname may
 * contain '/'). *ret_attr points into s (NULL if there is no attribute).
 * Returns 0, or -EINVAL if s is not of that form or a part does not fit. */
int udev_parse_subsys_kernel(const char *s, char *subsys, size_t subsys_size, char *sysname,
                             size_t sysname_size, const char **ret_attr);
/* Resolve it in `ctx`: with read_value, the attribute's value (sysattr read
 * rules; a missing or unreadable attribute gives "", other read errors fail;
 * an attribute is required); else the path "<syspath>[/attr]". The result is
 * truncated to `size`. Returns 0, -EINVAL (syntax), -ENOENT (no device),
 * -errno. */
int udev_resolve_subsys_kernel(struct device_ctx *ctx, const char *s, bool read_value,
                               char *result, size_t size);

/* ---- command lines ---- */

/* Split `cmd` in place into argv[0..*ret_argc-1] + NULL: words separated by
 * whitespace (" \t\n\r"), '…' and "…" group and are removed, backslashes are
 * kept as they are (no escaping), an unterminated quote runs to the end, "" is
 * an empty word. argv entries point into cmd. Returns 0, -EINVAL (no word),
 * -E2BIG (more than argv_size - 1 words). */
int udev_split_cmdline(char *cmd, char **argv, size_t argv_size, size_t *ret_argc);

/* ---- property lines ---- */

/* Next line of buf[*cursor .. end): lines end at '\n', '\r' or NUL, empty
 * lines are skipped. The terminator is overwritten with NUL; *end itself must
 * be a NUL byte (pass buf + len of a NUL-terminated buffer). Returns the line
 * or NULL at the end. */
char *udev_next_line(char **cursor, char *end);
/* Parse "KEY=VALUE" in place (leading whitespace skipped; '#' comments and
 * empty lines ignored; key and value stripped of surrounding whitespace; a
 * value in matching '…' or "…" loses them, no unescaping: '' or "" gives an
 * empty value, as in systemd). Returns 1 with *ret_key and *ret_value
 * pointing into line, 0 for a comment/empty line, or -EINVAL (no '=', empty
 * key or value before unquoting, unbalanced quote). */
int udev_property_line_parse(char *line, char **ret_key, char **ret_value);
