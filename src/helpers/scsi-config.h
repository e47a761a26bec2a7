/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (no global state) */
#pragma once
/* scsi_id's configuration file (/etc/scsi_id.config, or --config=FILE), read
 * as systemd 252 reads it. Lines, at most 255 characters:
 *
 *     # comment
 *     OPTIONS=<options for every device>
 *     VENDOR="vendor"[,MODEL="model"],OPTIONS="<options>"
 *
 * Words are split at '=', '"', ',' and newline (a backslash takes the next
 * character literally); keys are case-insensitive; VENDOR and MODEL match as
 * prefixes of the device's cleaned-up vendor and model. The first matching
 * line wins; a malformed line before it is an error. */

/* The options of the first line that applies: with vendor NULL, the first
 * line without VENDOR; else the first VENDOR(/MODEL) line matching.
 * 0 and *ret_argv (argv[0] is "", NULL-terminated; free with
 * scsi_config_free()) and *ret_argc; 1 if the file does not exist or no line
 * applies; -errno (-EINVAL for a malformed line, -ENOBUFS for a line too
 * long, -ENOMEM). */
int scsi_config_lookup(const char *path, const char *vendor, const char *model, char ***ret_argv,
                       int *ret_argc);
void scsi_config_free(char **argv);

/* One word of `*p` as systemd's extract_first_word(p, ret, separators, 0)
 * splits it: leading separators skipped, a backslash escapes the next
 * character. 1 and *ret (caller frees), 0 at the end (*p set to NULL),
 * -EINVAL (a trailing backslash), -ENOMEM. */
int scsi_config_word(const char **p, const char *separators, char **ret);
