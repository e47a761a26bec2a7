/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (no shared state; NSS lookups use the reentrant calls) */
#pragma once
/* The values of MODE=, OWNER= and GROUP= (and TEST{mode}), as systemd 252
 * reads them. One parser for both places that read them: the compiler
 * (rules-compile.c), for literal values it can turn into numbers once, and
 * the evaluator (rules-exec.c), for values known only after substitution.
 * A literal the compiler cannot parse stays a string and meets the same
 * parser again at run time, so both see the same forms accepted.
 *
 *   MODE   octal, 0..07777: "0660", "660", " 0660" (leading blanks " \t\n\r"
 *          skipped), "07777"; refused: "", "+660", "-0", "0o660", "0x1b6",
 *          "660 ", "8", "12345" and "010000" (over 07777).
 *   OWNER  a user name or a number: decimal uid without sign, blank or
 *   GROUP  leading zero ("0", "1000", "4294967294"); "0123", "65535",
 *          "4294967295", "+1" or " 1" are no number and so are looked up as
 *          names (and are unknown on any sane system). */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define RULES_ID_NOBODY 65534

/* systemd's parse_mode(): 0, -EINVAL (not octal, sign, trailing bytes,
 * empty) or -ERANGE (over 07777). */
int rules_parse_mode(const char *s, mode_t *ret);

/* systemd's parse_uid()/parse_gid(): 0, -EINVAL (no strict decimal),
 * -ERANGE (over 32 bits) or -ENXIO ((uid_t)-1 and 65535, which are no ids). */
int rules_parse_id(const char *s, uint32_t *ret);

/* The uid (group false) or gid (group true) a rule's OWNER/GROUP value
 * names, as systemd's get_user_creds()/get_group_creds() with
 * USER_CREDS_ALLOW_MISSING give it: "root" is 0 without asking NSS; a
 * number (rules_parse_id()) is that id, known to NSS or not; anything else
 * is looked up by name in NSS; "nobody" (user) and "nogroup" (group) are
 * 65534 when NSS does not know them.
 * 0, -ESRCH (unknown name), -ENOMEM, or the -errno of a failed NSS lookup. */
int rules_resolve_id(bool group, const char *name, uint32_t *ret);
