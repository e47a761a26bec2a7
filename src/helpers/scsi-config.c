/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (no global state) */
/* scsi_id's configuration file (scsi-config.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "helpers/scsi-config.h"
#include "shared/log.h"
#include "shared/macro.h"

#define CONFIG_LINE_MAX 256 /* a line of this many characters is an error */
#define CONFIG_WORDS_MAX 1024
#define KV_SEPARATORS "=\",\n"

int scsi_config_word(const char **p, const char *separators, char **ret)
{
        const char *s = *p;
        char *word;
        size_t n = 0;

        if (!s)
                return 0;
        s += strspn(s, separators);
        if (*s == '\0') {
                *p = NULL;
                return 0;
        }
        word = malloc(strlen(s) + 1);
        if (!word)
                return -ENOMEM;
        for (; *s; s++) {
                if (*s == '\\') {
                        if (s[1] == '\0') {
                                free(word);
                                return -EINVAL;
                        }
                        word[n++] = *++s;
                        continue;
                }
                if (strchr(separators, *s)) {
                        s += strspn(s, separators);
                        break;
                }
                word[n++] = *s;
        }
        word[n] = '\0';
        *p = *s ? s : NULL;
        *ret = word;
        return 1;
}

/* Up to `n` words (each *words[i] set or NULL); the number found, or < 0. */
static int words(const char **p, char **out[], size_t n)
{
        size_t got = 0;

        for (size_t i = 0; i < n; i++)
                *out[i] = NULL;
        for (; got < n; got++) {
                int r = scsi_config_word(p, KV_SEPARATORS, out[got]);

                if (r < 0) {
                        for (size_t i = 0; i < got; i++) {
                                free(*out[i]);
                                *out[i] = NULL;
                        }
                        return r;
                }
                if (r == 0)
                        break;
        }
        return (int)got;
}

static int key_value(const char **p, char **key, char **value)
{
        char **out[] = { key, value };

        return words(p, out, ARRAY_SIZE(out));
}

/* One line without its end (\n, \r or NUL end a line). 1 and the line, 0 at
 * EOF, -ENOBUFS when CONFIG_LINE_MAX characters come without an end. */
static int read_config_line(FILE *f, char line[CONFIG_LINE_MAX + 1])
{
        size_t n = 0;
        bool any = false;

        for (;;) {
                int c;

                if (n >= CONFIG_LINE_MAX)
                        return -ENOBUFS;
                c = getc(f);
                if (c == EOF)
                        break;
                any = true;
                if (c == '\n' || c == '\r' || c == '\0')
                        break;
                line[n++] = (char)c;
        }
        line[n] = '\0';
        if (!any && ferror(f))
                return -EIO;
        return any ? 1 : 0;
}

void scsi_config_free(char **argv)
{
        if (!argv)
                return;
        for (char **a = argv; *a; a++)
                free(*a);
        free(argv);
}

/* "" followed by the words of `options` (split at blanks). */
static int split_options(const char *options, char ***ret_argv, int *ret_argc)
{
        char **argv;
        size_t n = 1;
        const char *p = options;

        argv = calloc(CONFIG_WORDS_MAX + 2, sizeof(char *));
        if (!argv)
                return -ENOMEM;
        argv[0] = strdup("");
        if (!argv[0]) {
                free(argv);
                return -ENOMEM;
        }
        for (;;) {
                char *w;
                int r = scsi_config_word(&p, " \t", &w);

                if (r < 0) {
                        scsi_config_free(argv);
                        return r;
                }
                if (r == 0)
                        break;
                if (n >= CONFIG_WORDS_MAX) {
                        free(w);
                        scsi_config_free(argv);
                        return -E2BIG;
                }
                argv[n++] = w;
        }
        *ret_argv = argv;
        *ret_argc = (int)n;
        return 0;
}

static bool has_prefix(const char *s, const char *prefix)
{
        return strncmp(s, prefix, strlen(prefix)) == 0;
}

int scsi_config_lookup(const char *path, const char *vendor, const char *model, char ***ret_argv,
                       int *ret_argc)
{
        char line[CONFIG_LINE_MAX + 1];
        char *vendor_in = NULL, *model_in = NULL, *options_in = NULL;
        unsigned lineno = 0;
        FILE *f;
        int r;

        f = fopen(path, "re");
        if (!f) {
                if (errno == ENOENT)
                        return 1;
                r = negative_errno();
                log_error_errno(r, "can't open %s: %m", path);
                return r;
        }

        for (;;) {
                _cleanup_free_ char *key = NULL, *value = NULL;
                const char *p = line;

                vendor_in = model_in = options_in = NULL;
                r = read_config_line(f, line);
                if (r < 0) {
                        log_error_errno(r, "read_line() on line %u of %s failed: %m", lineno, path);
                        goto out;
                }
                if (r == 0)
                        break;
                lineno++;
                while (*p == ' ' || (*p >= '\t' && *p <= '\r'))
                        p++;
                if (*p == '\0' || *p == '#')
                        continue;

                r = -EINVAL;
                if (key_value(&p, &key, &value) < 2)
                        goto bad;
                if (strcasecmp(key, "VENDOR") == 0) {
                        vendor_in = TAKE_PTR(value);
                        free(TAKE_PTR(key));
                        if (key_value(&p, &key, &value) < 2)
                                goto bad;
                        if (strcasecmp(key, "MODEL") == 0) {
                                model_in = TAKE_PTR(value);
                                free(TAKE_PTR(key));
                                if (key_value(&p, &key, &value) < 2)
                                        goto bad;
                        }
                }
                if (strcasecmp(key, "OPTIONS") == 0)
                        options_in = TAKE_PTR(value);
                /* only [VENDOR=..[,MODEL=..],]OPTIONS=.. */
                if (!options_in || (!vendor_in && model_in))
                        goto bad;
                if (!vendor ? !vendor_in
                            : vendor_in && has_prefix(vendor, vendor_in) &&
                                      (!model_in || has_prefix(model, model_in)))
                        break;
                free(vendor_in);
                free(model_in);
                free(options_in);
        }

        r = 1;
        if (vendor_in || model_in || options_in)
                r = split_options(options_in, ret_argv, ret_argc);
        goto out;
bad:
        log_error("Error parsing config file line %u '%s'", lineno, line);
out:
        free(vendor_in);
        free(model_in);
        free(options_in);
        fclose(f);
        return r;
}
