/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: single-threaded program (getopt's state is process-wide) */
/* scsi_id [OPTION...] DEVICE: the identity of a SCSI device from INQUIRY and
 * its VPD pages, as systemd 252's scsi_id prints it (rules:
 * 60-persistent-storage.rules, 60-persistent-storage-tape.rules).
 * Options come from the configuration file's generic OPTIONS= line first,
 * then the command line, then the file's VENDOR/MODEL line for the device
 * (scsi-config.h). Exit status: 0 printed; 1 no device, INQUIRY failed,
 * blacklisted, or no serial to print (without --export); 2 bad options in
 * the configuration file. A device that cannot be opened still gets the
 * --export lines, with empty values, as with systemd. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "helpers/helper-util.h"
#include "helpers/scsi-config.h"
#include "helpers/scsi-inquiry.h"
#include "shared/log.h"
#include "shared/macro.h"

#define PATH_MAX_LEN 512
#define OPEN_BUSY_TRIES 20

static const struct option options[] = {
        { "device", required_argument, NULL, 'd' },
        { "config", required_argument, NULL, 'f' },
        { "page", required_argument, NULL, 'p' },
        { "blacklisted", no_argument, NULL, 'b' },
        { "whitelisted", no_argument, NULL, 'g' },
        { "replace-whitespace", no_argument, NULL, 'u' },
        { "sg-version", required_argument, NULL, 's' },
        { "verbose", no_argument, NULL, 'v' },
        { "version", no_argument, NULL, 'V' },
        { "export", no_argument, NULL, 'x' },
        { "help", no_argument, NULL, 'h' },
        {}
};

struct settings {
        bool all_good;           /* --whitelisted */
        bool dev_specified;
        char device[PATH_MAX_LEN];
        char config[PATH_MAX_LEN];
        int page;                /* enum scsi_page */
        int sg_version;
        bool reformat_serial;    /* --replace-whitespace */
        bool export;
};

static void help(void)
{
        printf("Usage: %s [OPTION...] DEVICE\n\n"
               "SCSI device identification.\n\n"
               "  -h --help                        Print this message\n"
               "     --version                     Print version of the program\n\n"
               "  -d --device=                     Device node for SG_IO commands\n"
               "  -f --config=                     Location of config file\n"
               "  -p --page=0x80|0x83|pre-spc3-83  SCSI page (0x80, 0x83, pre-spc3-83)\n"
               "  -s --sg-version=3|4              Use SGv3 or SGv4\n"
               "  -b --blacklisted                 Treat device as blacklisted\n"
               "  -g --whitelisted                 Treat device as whitelisted\n"
               "  -u --replace-whitespace          Replace all whitespace by underscores\n"
               "  -v --verbose                     Verbose logging\n"
               "  -x --export                      Print values as environment keys\n",
               program_invocation_short_name);
}

static int parse_page(const char *s)
{
        if (streq(s, "0x80"))
                return SCSI_PAGE_80;
        if (streq(s, "0x83"))
                return SCSI_PAGE_83;
        if (streq(s, "pre-spc3-83"))
                return SCSI_PAGE_83_PRE_SPC3;
        return -EINVAL;
}

static void copy_path(char dst[PATH_MAX_LEN], const char *src)
{
        snprintf(dst, PATH_MAX_LEN, "%s", src);
}

/* The generic options (configuration file, then command line). 0, or < 0 for
 * a bad option. --help and --version exit. */
static int set_options(struct settings *s, int argc, char **argv)
{
        int c;

        optind = 1;
        while ((c = getopt_long(argc, argv, "d:f:gp:uvVxhbs:", options, NULL)) >= 0) {
                switch (c) {
                case 'b':
                        s->all_good = false;
                        break;
                case 'd':
                        s->dev_specified = true;
                        copy_path(s->device, optarg);
                        break;
                case 'f':
                        copy_path(s->config, optarg);
                        break;
                case 'g':
                        s->all_good = true;
                        break;
                case 'h':
                        help();
                        exit(EXIT_SUCCESS);
                case 'p': {
                        int p = parse_page(optarg);

                        if (p == -EINVAL)
                                return log_error_errno(-EINVAL, "Unknown page code '%s'", optarg);
                        s->page = p;
                        break;
                }
                case 's':
                        s->sg_version = atoi(optarg);
                        if (s->sg_version < 3 || s->sg_version > 4)
                                return log_error_errno(-EINVAL, "Unknown SG version '%s'", optarg);
                        break;
                case 'u':
                        s->reformat_serial = true;
                        break;
                case 'v':
                        log_set_max_level(LOG_DEBUG);
                        break;
                case 'V':
                        printf("%s\n", VERSION);
                        exit(EXIT_SUCCESS);
                case 'x':
                        s->export = true;
                        break;
                default: /* '?': getopt reported it */
                        return -EINVAL;
                }
        }
        if (optind < argc && !s->dev_specified) {
                s->dev_specified = true;
                copy_path(s->device, argv[optind]);
        }
        return 0;
}

/* The configuration file's line for this vendor/model: whitelisting and page. */
static void per_device_options(const struct settings *s, const struct scsi_values *v, bool *good,
                               int *page)
{
        char **argv = NULL;
        int argc = 0, r, c;

        *good = s->all_good;
        *page = s->page;
        r = scsi_config_lookup(s->config, v->vendor, v->model, &argv, &argc);
        optind = 1;
        while (r == 0 && (c = getopt_long(argc, argv, "bgp:", options, NULL)) >= 0) {
                switch (c) {
                case 'b':
                        *good = false;
                        break;
                case 'g':
                        *good = true;
                        break;
                case 'p': {
                        int p = parse_page(optarg);

                        if (p == -EINVAL) {
                                log_error("Unknown page code '%s'", optarg);
                                r = -EINVAL;
                        } else
                                *page = p;
                        break;
                }
                default:
                        log_error("Unknown or bad option '%c' (0x%x)", c, (unsigned)c);
                        r = -EINVAL;
                        break;
                }
        }
        scsi_config_free(argv);
}

static int open_device(const char *path)
{
        return open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
}

/* Open for the VPD pages; an EBUSY device (e.g. a tape in use) is retried
 * for a few seconds. fd or -errno. */
static int open_device_busy_retry(const char *path)
{
        for (int i = 0; i < OPEN_BUSY_TRIES; i++) {
                struct timespec pause = { 0, 200 * 1000 * 1000 };
                int fd = open_device(path);

                if (fd >= 0 || errno != EBUSY)
                        return fd >= 0 ? fd : negative_errno();
                pause.tv_nsec += (long)(rand() % 100) * 1000 * 1000;
                nanosleep(&pause, NULL);
        }
        return -EBUSY;
}

static int scsi_id(const struct settings *s)
{
        static struct helper_out out = HELPER_OUT_INIT;
        static struct scsi_ident id;
        struct scsi_values v = { .type = "" };
        struct scsi_sg sg = { .fd = -1, .sg_version = s->sg_version, .name = s->device };
        struct scsi_io io = { .inquiry = scsi_sg_inquiry, .userdata = &sg, .name = s->device };
        char name[64] = "";
        bool good;
        int page, fd, r;

        /* the standard INQUIRY; a device that cannot be opened goes on with
         * empty values (systemd's behaviour) */
        fd = open_device(s->device);
        if (fd < 0)
                log_debug_errno(negative_errno(), "scsi_id: cannot open %s: %m", s->device);
        else {
                struct stat st;

                if (fstat(fd, &st) < 0)
                        log_debug_errno(negative_errno(), "scsi_id: cannot stat %s: %m", s->device);
                else {
                        snprintf(name, sizeof(name), "%u:%u", major(st.st_rdev), minor(st.st_rdev));
                        sg.fd = fd;
                        sg.name = io.name = name;
                        r = scsi_std_inquiry(&io, &id);
                        if (r < 0) {
                                safe_close(fd);
                                return 1;
                        }
                        scsi_values_from_ident(&v, &id);
                }
                fd = safe_close(fd);
        }

        per_device_options(s, &v, &good, &page);
        if (!good)
                return 1;

        /* the serial (no values for optical drives) */
        fd = open_device_busy_retry(s->device);
        if (fd >= 0) {
                sg.fd = fd;
                (void)scsi_get_serial(&io, &id, page);
                safe_close(fd);
        }

        if (s->export) {
                (void)scsi_id_format_export(&v, &id, &out);
        } else {
                if (id.serial[0] == '\0')
                        return 1;
                if (s->reformat_serial) {
                        char clean[SCSI_SERIAL_MAX];

                        helper_replace_whitespace(id.serial, clean, sizeof(clean) - 1);
                        helper_replace_chars(clean, NULL);
                        helper_out_printf(&out, "%s\n", clean);
                } else
                        helper_out_printf(&out, "%s\n", id.serial);
        }
        r = helper_out_flush_stdout(&out);
        if (r < 0)
                log_error_errno(r, "cannot write the output: %m");
        return 0;
}

int main(int argc, char *argv[])
{
        /* the file's options stay allocated: getopt keeps pointers into them */
        static char **config_argv = NULL;
        static struct settings s = {
                .config = "/etc/scsi_id.config",
                .page = SCSI_PAGE_UNSPECIFIED,
                .sg_version = 4,
        };
        int config_argc = 0, r;

        log_set_target(LOG_TARGET_CONSOLE, program_invocation_short_name);
        log_set_console_plain(true);
        log_set_max_level(LOG_INFO);
        srand((unsigned)getpid());

        /* the file's generic OPTIONS= line, then the command line over it */
        r = scsi_config_lookup(s.config, NULL, NULL, &config_argv, &config_argc);
        if (r < 0)
                return 1;
        if (r == 0) {
                if (set_options(&s, config_argc, config_argv) < 0)
                        return 2;
        }
        if (set_options(&s, argc, argv) < 0)
                return 1;
        if (!s.dev_specified) {
                log_error("No device specified.");
                return 1;
        }
        r = scsi_id(&s);
        scsi_config_free(config_argv);
        return r;
}
