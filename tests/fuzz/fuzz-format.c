/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (libFuzzer runs the target single-threaded) */
/* libFuzzer target for the rules substitution formatter and the other text
 * functions of src/event/event-format.c: udev_format() ($kernel, %k,
 * $attr{...}, $attr{[subsystem/sysname]attr}, $env{...}, %c{N+}, ...) on a
 * real event over the fake sysfs tree of src/device/test-sysfs-fixture.h
 * (built once under /tmp/tudev-sysfs-XXXXXX, removed when the fuzzer ends), plus
 * udev_format_check*(), the sanitisers, udev_split_cmdline(),
 * udev_parse_subsys_kernel(), udev_next_line() and udev_property_line_parse().
 *
 * Input layout:
 *   byte 0      options: bits 0-2 event device (sda1, eth0, event3, ttyS0,
 *               cciss!c0d0, USB device 1-1, the "weird" sysfs-only device, lo);
 *               bits 3-4 matched parent (none, the sysfs parent, the device
 *               itself, the USB device); bit 5 UDEV_FORMAT_REPLACE_WHITESPACE;
 *               bit 6 set NAME from field 3; bit 7 a small output buffer
 *   then up to four NUL-separated fields:
 *     0 the format string, 1 the PROGRAM result (absent: none),
 *     2 the value of property ID_FUZZ, 3 the NAME= value.
 * Inputs containing ".." are skipped ($attr{} must stay inside the fixture).
 *
 * Checks: the output is NUL-terminated, fits, its length is returned; text
 * without '$'/'%' is copied unchanged; the sanitisers are idempotent and
 * leave only allowed characters; split words stay inside the buffer.
 *
 * Seed corpus: tests/fuzz/corpus-format/ (substitutions from real rules
 * files); dictionary tests/fuzz/fuzz-format.dict.
 * The code's log messages (all levels) go to stderr: -close_fd_mask=2, as
 * check-fuzz uses, discards them. */

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "device/test-sysfs-fixture.h"
#include "event/event-format.h"
#include "event/udev-event.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "fuzz.h"

#define FIELDS 4
#define ARGV_MAX 32

static struct sysfs_fixture fx;

/* The event devices: a kernel datagram each, or a sysfs path (no uevent). */
static const struct {
        const char *devpath;
        const char *datagram;
        size_t len;
} devices[8] = {
#define D(path, lit) { path, lit, sizeof(lit) }
        D(SDA1, "add@" SDA1 "\0ACTION=add\0DEVPATH=" SDA1 "\0SUBSYSTEM=block\0MAJOR=8\0MINOR=1\0"
                "DEVNAME=sda1\0DEVTYPE=partition\0PARTN=1\0SEQNUM=77"),
        D(ETH0, "move@" ETH0 "\0ACTION=move\0DEVPATH=" ETH0 "\0SUBSYSTEM=net\0DEVPATH_OLD="
                PCI_NET "/net/eth9\0INTERFACE=eth0\0IFINDEX=2\0SEQNUM=78"),
        D(EVENT3, "change@" EVENT3 "\0ACTION=change\0DEVPATH=" EVENT3 "\0SUBSYSTEM=input\0"
                  "MAJOR=13\0MINOR=67\0DEVNAME=input/event3\0SEQNUM=79"),
        D(TTYS0, "add@" TTYS0 "\0ACTION=add\0DEVPATH=" TTYS0 "\0SUBSYSTEM=tty\0MAJOR=4\0"
                 "MINOR=64\0DEVNAME=ttyS0\0SEQNUM=80"),
        D(CCISS, "add@" CCISS "\0ACTION=add\0DEVPATH=" CCISS "\0SUBSYSTEM=block\0MAJOR=104\0"
                 "MINOR=0\0DEVNAME=cciss/c0d0\0DEVTYPE=disk\0SEQNUM=81"),
        D(USB_DEV, "bind@" USB_DEV "\0ACTION=bind\0DEVPATH=" USB_DEV "\0SUBSYSTEM=usb\0"
                   "MAJOR=189\0MINOR=1\0DEVNAME=bus/usb/001/002\0DEVTYPE=usb_device\0"
                   "DRIVER=usb\0PRODUCT=781/5567/100\0SEQNUM=82"),
        { "/devices/virtual/test/weird", NULL, 0 },
        D(LO, "remove@" LO "\0ACTION=remove\0DEVPATH=" LO "\0SUBSYSTEM=net\0INTERFACE=lo\0"
              "IFINDEX=1\0SEQNUM=83"),
#undef D
};
static struct uevent *uevents[8];

/* libFuzzer leaves with _Exit() (no atexit handlers) or dies on a finding: a
 * child process removes the fixture once the fuzzer's end of a pipe closes. */
static void fixture_cleanup_on_exit(void)
{
        int p[2];
        pid_t pid;
        char c;

        CHECK(pipe2(p, O_CLOEXEC) == 0);
        pid = fork();
        CHECK(pid >= 0);
        if (pid > 0) {
                close(p[0]);
                return; /* p[1] stays open for the fuzzer's lifetime */
        }
        signal(SIGINT, SIG_IGN);
        signal(SIGTERM, SIG_IGN);
        close(p[1]);
        while (read(p[0], &c, 1) < 0 && errno == EINTR)
                ;
        (void)nftw(fx.root, fx_rm, 16, FTW_DEPTH | FTW_PHYS);
        _exit(0);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        (void)argc;
        (void)argv;
        log_set_target(LOG_TARGET_CONSOLE, "fuzz-format");
        /* every message is formatted: its arguments are fuzzed data too */
        log_set_max_level(LOG_DEBUG);
        fixture_setup(&fx);
        fixture_cleanup_on_exit();
        for (size_t i = 0; i < ARRAY_SIZE(devices); i++)
                if (devices[i].datagram)
                        uevents[i] = fx_uevent(devices[i].datagram, devices[i].len);
        return 0;
}

struct fuzz_event {
        struct device_ctx *ctx;
        struct udev_event ev;
        struct proplist global;
};

static int event_setup(struct fuzz_event *t, unsigned opts, char *const *field, bool *has)
{
        unsigned which = opts & 7, parent = (opts >> 3) & 3;
        struct device *dev = NULL;
        char path[PATH_MAX];
        int r;

        memset(t, 0, sizeof(*t));
        CHECK(device_ctx_new(&fx.roots, &t->ctx) == 0);
        if (uevents[which])
                r = device_from_uevent(t->ctx, uevents[which], &dev);
        else {
                snprintf(path, sizeof(path), "%s%s", fx.sys, devices[which].devpath);
                r = device_from_syspath(t->ctx, path, &dev);
        }
        CHECK(r == 0);
        CHECK(udev_event_init(&t->ev, t->ctx, dev, uevents[which],
                              uevents[which] ? uevents[which]->action : UEVENT_ACTION_ADD) == 0);
        CHECK(proplist_set(&t->global, "GLOBAL", "from control", false) == 0);
        t->ev.global_props = &t->global;
        CHECK(strlist_add(&t->ev.devlinks, "/dev/disk/by-id/usb-SanDisk_Cruzer-0:0") == 0);
        snprintf(path, sizeof(path), "%s/disk/by-label/BOOT PART", fx.dev);
        CHECK(strlist_add(&t->ev.devlinks, path) == 0);
        if (has[1])
                CHECK((t->ev.program_result = strdup(field[1])));
        if (has[2])
                CHECK(proplist_set(&t->ev.props, "ID_FUZZ", field[2], false) == 0);
        if ((opts & 0x40) && has[3])
                CHECK((t->ev.name = strdup(field[3])));
        switch (parent) {
        case 1:
                if (device_get_parent(dev, &t->ev.dev_parent) < 0)
                        t->ev.dev_parent = NULL;
                break;
        case 2:
                t->ev.dev_parent = dev;
                break;
        case 3:
                snprintf(path, sizeof(path), "%s%s", fx.sys, USB_DEV);
                CHECK(device_from_syspath(t->ctx, path, &t->ev.dev_parent) == 0);
                break;
        default:
                break;
        }
        return 0;
}

static void event_teardown(struct fuzz_event *t)
{
        udev_event_done(&t->ev);
        proplist_clear(&t->global);
        device_ctx_free(t->ctx);
}

static bool is_space(char c) { return strchr(" \t\n\r\v\f", c) && c; }

static void check_format(const struct udev_event *ev, const char *fmt, unsigned opts)
{
        size_t size = (opts & 0x80) ? 1 + strlen(fmt) % 40 : UDEV_PATH_SIZE, len;
        unsigned flags = (opts & 0x20) ? UDEV_FORMAT_REPLACE_WHITESPACE : 0;
        char *out = malloc(size); /* exact size: ASan sees any overflow */
        bool truncated = !(opts & 1);

        CHECK(out);
        len = udev_format(ev, fmt, out, size, flags, &truncated);
        CHECK(len < size && strlen(out) == len);
        if (!strpbrk(fmt, "$%")) {
                CHECK(strneq(out, fmt, len));
                CHECK(truncated == (strlen(fmt) >= size));
        }

        /* the formatted text as a RUN/PROGRAM command line */
        {
                char *argv[ARGV_MAX];
                size_t argc = 0;
                int r = udev_split_cmdline(out, argv, ARRAY_SIZE(argv), &argc);

                if (r == 0 || r == -EINVAL) {
                        CHECK(argc < ARGV_MAX && argv[argc] == NULL && (r == 0) == (argc > 0));
                        for (size_t i = 0; i < argc; i++)
                                CHECK(argv[i] >= out && argv[i] + strlen(argv[i]) <= out + len);
                } else
                        CHECK(r == -E2BIG);
        }
        free(out);
}

static void check_format_check(const char *fmt)
{
        char err[64];
        const char *hint = NULL;
        size_t off = (size_t)-1;
        int r = udev_format_check_full(fmt, &off, &hint);

        if (r == 0)
                CHECK(off == (size_t)-1 && !hint);
        else
                CHECK(r == -EINVAL && hint && off <= strlen(fmt));
        CHECK(udev_format_check(fmt, err, sizeof(err)) == r);
        CHECK(r == 0 ? err[0] == '\0' : strneq(err, "char ", 5));
}

static bool only_allowed(const char *s, const char *allow)
{
        for (size_t i = 0; s[i];) {
                char c = s[i];
                int n;

                if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    strchr("#+-.:=@_", c) || (allow && strchr(allow, c))) {
                        i++;
                        continue;
                }
                if (c == '\\' && s[i + 1] == 'x') {
                        i += 2;
                        continue;
                }
                n = udev_utf8_char_len(s + i);
                if (n <= 1)
                        return false;
                i += (size_t)n;
        }
        return true;
}

static void check_sanitisers(const char *s)
{
        size_t n = strlen(s), k;
        char *a = strdup(s), *b = strdup(s), *c = malloc(n + 1);

        CHECK(a && b && c);
        udev_replace_chars(a, NULL);
        CHECK(strlen(a) == n && only_allowed(a, NULL) && udev_replace_chars(a, NULL) == 0);
        udev_sanitize_program_result(b);
        CHECK(strlen(b) <= n && (!*b || b[strlen(b) - 1] != '\n'));
        CHECK(only_allowed(b, UDEV_ALLOWED_CHARS_INPUT));
        CHECK(udev_replace_chars(b, UDEV_ALLOWED_CHARS_INPUT) == 0);

        k = udev_replace_whitespace(s, c, n);
        CHECK(k <= n && strlen(c) == k);
        for (size_t i = 0; i < k; i++)
                CHECK(!is_space(c[i]));
        strcpy(a, s);
        CHECK(udev_replace_whitespace(a, a, n) == k && streq(a, c)); /* in place: the same */

        strcpy(a, s);
        udev_replace_ifname(a);
        for (size_t i = 0; a[i]; i++)
                CHECK(udev_ifname_valid_char(a[i]));
        CHECK(udev_replace_ifname(a) == 0);

        for (size_t i = 0; i < n; i++) {
                int l = udev_utf8_char_len(s + i);

                CHECK(l == -EINVAL || (l >= 1 && l <= 4 && (size_t)l <= n - i));
        }
        free(a);
        free(b);
        free(c);
}

static void check_subsys_kernel(const char *s)
{
        char subsys[16], sysname[32];
        const char *attr = (const char *)1;

        if (udev_parse_subsys_kernel(s, subsys, sizeof(subsys), sysname, sizeof(sysname), &attr) <
            0)
                return;
        CHECK(s[0] == '[' && strlen(subsys) < sizeof(subsys) && strlen(sysname) < sizeof(sysname));
        CHECK(!attr || (attr > s && attr < s + strlen(s) && *attr));
}

/* IMPORT{program} output: lines of KEY=VALUE. */
static void check_property_lines(const char *text)
{
        size_t n = strlen(text);
        char *buf = malloc(n + 1), *cursor, *line;

        CHECK(buf);
        memcpy(buf, text, n + 1);
        cursor = buf;
        while ((line = udev_next_line(&cursor, buf + n))) {
                char *key, *value;
                int r;

                CHECK(line >= buf && line < buf + n && *line && !strpbrk(line, "\r\n"));
                r = udev_property_line_parse(line, &key, &value);
                if (r == 1) {
                        /* stripped of WHITESPACE (" \t\n\r", as systemd's strstrip()) */
                        /* the value may be empty only as a quoted "" or '' */
                        CHECK(*key && value && !strchr(" \t\n\r", key[0]));
                        CHECK(*value || (value > line && strchr("'\"", value[-1])));
                        CHECK(!strchr(" \t\n\r", key[strlen(key) - 1]));
                } else
                        CHECK(r == 0 || r == -EINVAL);
        }
        CHECK(cursor == buf + n);
        free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *field[FIELDS] = { NULL };
        bool has[FIELDS] = { false };
        struct fuzz_event t;
        unsigned opts;
        char *text, *p, *end;

        if (size < 1 || memmem(data, size, "..", 2))
                return 0;
        opts = data[0];
        /* the fields: a copy of the rest with a NUL added, split at its NULs */
        text = malloc(size);
        CHECK(text);
        memcpy(text, data + 1, size - 1);
        text[size - 1] = '\0';
        end = text + size - 1;
        p = text;
        for (size_t i = 0; i < FIELDS && p <= end; i++) {
                field[i] = p;
                has[i] = true;
                p += strlen(p) + 1;
        }

        check_format_check(field[0]);
        check_sanitisers(field[0]);
        check_subsys_kernel(field[0]);
        if (has[1])
                check_property_lines(field[1]);

        event_setup(&t, opts, field, has);
        check_format(&t.ev, field[0], opts);
        event_teardown(&t);
        free(text);
        return 0;
}
