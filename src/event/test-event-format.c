/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (single-threaded test) */
/* Table-driven tests of rules-format.c (substitutions, sanitising, command
 * lines, property lines) and udev-event.c (proplist, init, environment) over
 * the fake sysfs tree of device/test-sysfs-fixture.h.
 *
 * Expected strings may contain "@DEV@" / "@SYS@" for the fixture's roots. */

#include <errno.h>
#include <string.h>

#include "device/test-sysfs-fixture.h"
#include "event/event-format.h"
#include "event/udev-event.h"
#include "shared/log.h"
#include "shared/tests.h"

static struct sysfs_fixture fx;

/* ------------------------------------------------------------ event setup */

enum parent_kind { PARENT_USB, PARENT_NONE, PARENT_SCSI, PARENT_WEIRD, PARENT_SELF };

struct test_event {
        struct device_ctx *ctx;
        struct uevent *uevent;
        struct udev_event ev;
        struct proplist global;
};

static struct device *dev_at(struct device_ctx *ctx, const char *devpath)
{
        char p[PATH_MAX];
        struct device *d = NULL;

        snprintf(p, sizeof(p), "%s%s", fx.sys, devpath);
        ASSERT_EQ(device_from_syspath(ctx, p, &d), 0);
        return d;
}

/* The event: "add" of sda1 with a few extra properties, a RESULT, two links. */
static void event_setup(struct test_event *t, enum parent_kind parent)
{
        struct device *dev = NULL;
        char link[PATH_MAX];

        memset(t, 0, sizeof(*t));
        ASSERT_EQ(device_ctx_new(&fx.roots, &t->ctx), 0);
        t->uevent = FX_UEVENT("add@" SDA1 "\0ACTION=add\0DEVPATH=" SDA1
                              "\0SUBSYSTEM=block\0MAJOR=8\0MINOR=1\0DEVNAME=sda1\0"
                              "DEVTYPE=partition\0PARTN=1\0SEQNUM=77");
        ASSERT_EQ(device_from_uevent(t->ctx, t->uevent, &dev), 0);
        ASSERT_EQ(udev_event_init(&t->ev, t->ctx, dev, t->uevent, UEVENT_ACTION_ADD), 0);
        ASSERT_EQ(proplist_set(&t->ev.props, "ID_FOO", "foo value", false), 0);
        ASSERT_EQ(proplist_set(&t->ev.props, "SPACEY", "  a  b  ", false), 0);
        ASSERT_EQ(proplist_set(&t->ev.props, "RECUR", "$kernel%k", false), 0);
        ASSERT_EQ(proplist_set(&t->ev.props, "EMPTY", "", false), 0);
        ASSERT_EQ(proplist_set(&t->global, "GLOBAL", "from control", false), 0);
        ASSERT_EQ(proplist_set(&t->global, "ID_FOO", "shadowed", false), 0);
        t->ev.global_props = &t->global;
        t->ev.program_result = strdup("  one  two three ");
        ASSERT_TRUE(t->ev.program_result != NULL);
        snprintf(link, sizeof(link), "%s/disk/by-id/usb-SanDisk-part1", fx.dev);
        ASSERT_EQ(strlist_add(&t->ev.devlinks, link), 0);
        ASSERT_EQ(strlist_add(&t->ev.devlinks, "/dev/disk/by-label/BOOT"), 0);
        switch (parent) {
        case PARENT_USB:
                t->ev.dev_parent = dev_at(t->ctx, USB_DEV);
                break;
        case PARENT_SCSI:
                t->ev.dev_parent = dev_at(t->ctx, SCSI_DEV);
                break;
        case PARENT_WEIRD:
                t->ev.dev_parent = dev_at(t->ctx, "/devices/virtual/test/weird");
                break;
        case PARENT_SELF:
                t->ev.dev_parent = dev;
                break;
        case PARENT_NONE:
                break;
        }
}

static void event_teardown(struct test_event *t)
{
        udev_event_done(&t->ev);
        proplist_clear(&t->global);
        device_ctx_free(t->ctx);
        uevent_free(t->uevent);
}

/* Replace @DEV@ / @SYS@ in `in`. */
static const char *expand(const char *in, char *buf, size_t size)
{
        size_t n = 0;

        buf[0] = '\0';
        for (const char *p = in; *p;) {
                const char *rep = NULL;

                if (strneq(p, "@DEV@", 5))
                        rep = fx.dev;
                else if (strneq(p, "@SYS@", 5))
                        rep = fx.sys;
                if (rep) {
                        n += (size_t)snprintf(buf + n, size - n, "%s", rep);
                        p += 5;
                } else {
                        if (n + 1 < size) {
                                buf[n++] = *p;
                                buf[n] = '\0';
                        }
                        p++;
                }
                ASSERT_TRUE(n < size);
        }
        return buf;
}

/* ------------------------------------------------------------ substitutions */

struct fmt_case {
        const char *src;
        const char *expect;
        enum parent_kind parent;
        unsigned flags;
        size_t size;    /* 0: UDEV_NAME_SIZE */
        bool truncated;
        const char *name; /* ev->name, or NULL */
};

#define T(s, e) { .src = (s), .expect = (e) }
#define TP(s, e, p) { .src = (s), .expect = (e), .parent = (p) }
#define TW(s, e, p) { .src = (s), .expect = (e), .parent = (p), .flags = WS }
#define TS(s, e, f, sz, tr)                                                        \
        { .src = (s), .expect = (e), .flags = (f), .size = (sz), .truncated = (tr) }
#define TN(s, e, n) { .src = (s), .expect = (e), .name = (n) }
#define WS UDEV_FORMAT_REPLACE_WHITESPACE

static const struct fmt_case fmt_cases[] = {
        /* plain text and literals */
        T("", ""),
        T("plain text", "plain text"),
        T("back\\slash \\x2f", "back\\slash \\x2f"),
        T("$$", "$"),
        T("%%", "%"),
        T("$$kernel", "$kernel"),
        T("%%k", "%k"),
        T("100%", "100%"),
        T("$", "$"),
        T("a$xyz", "a$xyz"),
        T("%q%", "%q%"),
        T("$KERNEL", "$KERNEL"),
        /* every type, long and short form */
        T("$kernel", "sda1"),
        T("%k", "sda1"),
        T("$number", "1"),
        T("%n", "1"),
        T("$devpath", SDA1),
        T("%p", SDA1),
        T("$id", "1-1"),
        T("%b", "1-1"),
        TP("$id", "", PARENT_NONE),
        T("$driver", "usb"),
        T("%d", "usb"),
        TP("$driver", "", PARENT_NONE),
        TP("$driver", "", PARENT_SELF),
        TP("$id", "sda1", PARENT_SELF),
        T("$major:$minor", "8:1"),
        T("%M:%m", "8:1"),
        T("$devnode", "@DEV@/sda1"),
        T("$tempnode", "@DEV@/sda1"),
        T("%N", "@DEV@/sda1"),
        T("$name", "sda1"),
        T("%D", "sda1"),
        TN("$name", "eth9", "eth9"),
        T("$links", "disk/by-id/usb-SanDisk-part1 disk/by-label/BOOT"),
        T("%L", "disk/by-id/usb-SanDisk-part1 disk/by-label/BOOT"),
        T("$root", "@DEV@"),
        T("%r", "@DEV@"),
        T("$sys", "@SYS@"),
        T("%S", "@SYS@"),
        T("$parent", "sda"),
        T("%P", "sda"),
        T("$env{ID_FOO}", "foo value"),
        T("%E{ID_FOO}", "foo value"),
        T("$env{GLOBAL}", "from control"),
        T("$env{NOPE}x", "x"),
        T("$env{EMPTY}x", "x"),
        T("$env{DEVNAME}", "@DEV@/sda1"),
        T("$env{RECUR}", "$kernel%k"), /* no recursion */
        /* prefix matching and arguments */
        T("$kernelX", "sda1X"),
        T("$kernel{ignored}X", "sda1X"),
        T("$names", "sda1s"),
        T("$sysX", "@SYS@X"),
        T("$sysfs{size}", "2048000"),
        T("$idVendor", "1-1Vendor"),
        T("%kX%n", "sda1X1"),
        /* malformed: the rest of the string is dropped */
        T("a-$kernel{b", "a-"),
        T("x$env{}y", "x"),
        T("x$env y", "x"),
        T("x%E y", "x"),
        T("x$attr y", "x"),
        T("x%s{}y", "x"),
        /* $attr: event device, then matched parent; trailing whitespace, sanitising */
        T("$attr{size}", "2048000"),
        T("%s{size}", "2048000"),
        T("$attr{partition}", "1"),
        T("$attr{idVendor}", "0781"),
        TP("$attr{idVendor}", "", PARENT_NONE),
        T("$attr{serial}", "4C530001"),
        T("$attr{product}", "Cruzer Blade"),
        T("$attr{manufacturer}", "  San Disk"),
        T("$attr{nope}x", "x"),
        T("$attr{[block/sda]size}", "30031872"),
        T("$attr{[block/sda]/size}", "30031872"),
        T("$attr{[dmi/id]product_name}", "Standard PC _Q35 + ICH9, 2009_"),
        T("$attr{[block/nope]size}x", "x"),
        T("$attr{[block/sda]nope}x", "x"),
        T("$attr{[block/sda]}x", "x"),
        T("$attr{[test/weird]utf8}", "caf\xc3\xa9 ___x"),
        T("$attr{[net/eth0]address}", "52:54:00:12:34:56"),
        TP("$attr{model}", "Cruzer Blade", PARENT_SCSI),
        /* $result and %c{N} */
        T("$result", "  one  two three "),
        T("%c", "  one  two three "),
        T("%c{0}", "  one  two three "),
        T("%c{1}", "one"),
        T("%c{2}", "two"),
        T("%c{3}", "three"),
        T("%c{4}x", "x"),
        T("%c{2+}", "two three "),
        T("%c{1+}", "one  two three "),
        T("%c{0+}", "  one  two three "),
        T("%c{ 2}", "two"),
        T("%c{0x2}", "two"),
        T("%c{0b11}", "three"),
        T("%c{03}", "three"),
        T("$result{2}", "two"),
        T("x%c{2++}y", "x"),
        T("x%c{-1}y", "x"),
        T("x%c{abc}y", "x"),
        T("x%c{+}y", "x"),
        /* SYMLINK mode: whitespace in substituted parts (not %c) */
        TW("disk/$env{SPACEY}", "disk/a_b", PARENT_USB),
        TW("a b $env{SPACEY} c", "a b a_b c", PARENT_USB),
        TW("$attr{model}", "Cruzer_Blade", PARENT_SCSI),
        TW("$attr{manufacturer}", "San_Disk", PARENT_USB),
        TW("%c", "  one  two three ", PARENT_USB),
        TW("%c{2+}", "two three ", PARENT_USB),
        TW("$links", "disk/by-id/usb-SanDisk-part1_disk/by-label/BOOT", PARENT_USB),
        TW("x$env{EMPTY}y", "xy", PARENT_USB),
        /* truncation */
        TS("abcdef", "abcd", 0, 5, true),
        TS("abcd", "abcd", 0, 5, false),
        TS("ab$kernel", "absd", 0, 5, true),
        TS("abc$number", "abc1", 0, 5, false),
        TS("abcd$number", "abcd", 0, 5, true),
        TS("abcd$env{NOPE}", "abcd", 0, 5, false),
        TS("abcd$env{EMPTY}", "abcd", 0, 5, false),
        TS("", "", 0, 1, false),
        TS("a", "", 0, 1, true),
        TS("$kernel", "", 0, 1, true),
        TS("$links", "disk/by-id/usb", 0, 15, true),
        TS("%c{2+}xyz", "two t", 0, 6, true),
        TS("$env{SPACEY}", "a", WS, 6, true),
        TS("$env{SPACEY}", "a_b", WS, 9, false),
};

static void test_format_table(void)
{
        for (size_t i = 0; i < ARRAY_SIZE(fmt_cases); i++) {
                const struct fmt_case *c = &fmt_cases[i];
                char out[UDEV_LINE_SIZE], exp[PATH_MAX];
                size_t size = c->size ? c->size : UDEV_NAME_SIZE, len;
                struct test_event t;
                bool truncated = !c->truncated;

                event_setup(&t, c->parent);
                if (c->name)
                        t.ev.name = strdup(c->name);
                len = udev_format(&t.ev, c->src, out, size, c->flags, &truncated);
                expand(c->expect, exp, sizeof(exp));
                if (!streq(out, exp) || truncated != c->truncated || len != strlen(out))
                        fprintf(stderr, "case %zu: '%s' -> '%s' (truncated %d), "
                                "expected '%s' (%d)\n",
                                i, c->src, out, truncated, exp, c->truncated);
                ASSERT_STREQ(out, exp);
                ASSERT_EQ(truncated, c->truncated);
                ASSERT_EQ(len, strlen(out));
                event_teardown(&t);
        }
}

/* An $attr{} value longer than UDEV_NAME_SIZE - 1 marks the result truncated. */
static void test_format_long_attr(void)
{
        char out[UDEV_LINE_SIZE];
        struct test_event t;
        bool truncated = false;

        event_setup(&t, PARENT_WEIRD);
        ASSERT_EQ(udev_format(&t.ev, "$attr{big}", out, sizeof(out), 0, &truncated),
                  UDEV_NAME_SIZE - 1);
        ASSERT_TRUE(truncated);
        for (size_t i = 0; i < UDEV_NAME_SIZE - 1; i++)
                ASSERT_EQ(out[i], 'x');
        /* Through [subsys/sysname] the value is cut silently (as systemd). */
        truncated = true;
        ASSERT_EQ(udev_format(&t.ev, "$attr{[test/weird]big}", out, sizeof(out), 0, &truncated),
                  UDEV_NAME_SIZE - 1);
        ASSERT_TRUE(!truncated);
        /* A long {argument}: 1023 chars is fine, 1024 drops the rest. */
        {
                char src[UDEV_PATH_SIZE + 32];

                memcpy(src, "$env{", 5);
                memset(src + 5, 'K', UDEV_PATH_SIZE - 1);
                strcpy(src + 5 + UDEV_PATH_SIZE - 1, "}x");
                ASSERT_EQ(udev_format(&t.ev, src, out, sizeof(out), 0, &truncated), 1);
                ASSERT_STREQ(out, "x");
                memcpy(src, "$env{", 5);
                memset(src + 5, 'K', UDEV_PATH_SIZE);
                strcpy(src + 5 + UDEV_PATH_SIZE, "}x");
                ASSERT_EQ(udev_format(&t.ev, src, out, sizeof(out), 0, &truncated), 0);
                ASSERT_STREQ(out, "");
        }
        /* Degenerate arguments. */
        ASSERT_EQ(udev_format(&t.ev, "x", out, 0, 0, &truncated), 0);
        ASSERT_TRUE(truncated);
        ASSERT_EQ(udev_format(NULL, "x", out, sizeof(out), 0, NULL), 0);
        ASSERT_STREQ(out, "");
        event_teardown(&t);
}

/* RESULT unset: every %c form is empty. */
static void test_format_no_result(void)
{
        char out[64];
        struct test_event t;

        event_setup(&t, PARENT_USB);
        free(t.ev.program_result);
        t.ev.program_result = NULL;
        udev_format(&t.ev, "[%c][%c{2}][$result{1+}]", out, sizeof(out), 0, NULL);
        ASSERT_STREQ(out, "[][][]");
        /* Values that need the parent, without devnode / links. */
        strlist_clear(&t.ev.devlinks);
        udev_format(&t.ev, "[$links]", out, sizeof(out), 0, NULL);
        ASSERT_STREQ(out, "[]");
        event_teardown(&t);
}

/* Other event devices: no devnode ($name falls back to the sysname, $major 0),
 * no parent with a devnode, a device without parent. */
static void test_format_other_devices(void)
{
        char out[256], exp[PATH_MAX];
        struct device_ctx *ctx = NULL;
        struct udev_event ev;

        ASSERT_EQ(device_ctx_new(&fx.roots, &ctx), 0);
        ASSERT_EQ(udev_event_init(&ev, ctx, dev_at(ctx, ETH0), NULL, UEVENT_ACTION_ADD), 0);
        udev_format(&ev, "$name|$major|$minor|$number|$devnode|$parent|$kernel", out, sizeof(out),
                    0, NULL);
        ASSERT_STREQ(out, "eth0|0|0|0|||eth0");
        udev_event_done(&ev);

        ASSERT_EQ(udev_event_init(&ev, ctx, dev_at(ctx, EVENT3), NULL, UEVENT_ACTION_ADD), 0);
        udev_format(&ev, "$name|$parent|$devnode|%M:%m", out, sizeof(out), 0, NULL);
        ASSERT_STREQ(out, expand("input/event3||@DEV@/input/event3|13:67", exp, sizeof(exp)));
        udev_event_done(&ev);

        ASSERT_EQ(udev_event_init(&ev, ctx, dev_at(ctx, LO), NULL, UEVENT_ACTION_ADD), 0);
        udev_format(&ev, "[$parent][$id][$driver][$attr{address}]", out, sizeof(out), 0, NULL);
        ASSERT_STREQ(out, "[][][][00:00:00:00:00:00]");
        udev_event_done(&ev);

        ASSERT_EQ(udev_event_init(&ev, ctx, dev_at(ctx, CCISS), NULL, UEVENT_ACTION_ADD), 0);
        udev_format(&ev, "$kernel|$name|$number", out, sizeof(out), 0, NULL);
        ASSERT_STREQ(out, "cciss/c0d0|cciss/c0d0|0");
        udev_event_done(&ev);
        device_ctx_free(ctx);
}

/* ------------------------------------------------------------ load-time check */

static void test_format_check(void)
{
        static const struct {
                const char *s;
                int r;
                size_t offset;
                const char *hint;
        } cases[] = {
                { "plain", 0, 0, NULL },
                { "", 0, 0, NULL },
                { "$kernel %k $$ %% $attr{x} %s{y} $env{Z} %E{Z}", 0, 0, NULL },
                { "%c %c{1} %c{2+} $result{0x3}", 0, 0, NULL },
                { "$kernel{abc}", 0, 0, NULL },
                { "$sysfs{a}$tempnode$number$id$major$minor$parent$name$links$root$sys", 0, 0,
                  NULL },
                { "a$x", -EINVAL, 1, "invalid substitution type" },
                { "100%", -EINVAL, 3, "invalid substitution type" },
                { "$", -EINVAL, 0, "invalid substitution type" },
                { "%q", -EINVAL, 0, "invalid substitution type" },
                { "$env{}", -EINVAL, 0, "invalid substitution type" },
                { "ab$kernel{", -EINVAL, 2, "invalid substitution type" },
                { "$attr", -EINVAL, 5, "attribute value missing" },
                { "x%s y", -EINVAL, 3, "attribute value missing" },
                { "$env x", -EINVAL, 4, "attribute value missing" },
                { "%c{x}", -EINVAL, 5, "attribute value not a valid number" },
                { "%c{2++}", -EINVAL, 7, "attribute value not a valid number" },
                { "%c{-1}", -EINVAL, 6, "attribute value not a valid number" },
        };
        char err[128];

        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                const char *hint = NULL;
                size_t offset = 0;
                int r = udev_format_check_full(cases[i].s, &offset, &hint);

                if (r != cases[i].r || (r < 0 && (offset != cases[i].offset ||
                                                  !streq(hint, cases[i].hint))))
                        fprintf(stderr, "check case %zu '%s': %d %zu %s\n", i, cases[i].s, r,
                                offset, hint ? hint : "-");
                ASSERT_EQ(r, cases[i].r);
                if (r < 0) {
                        ASSERT_EQ(offset, cases[i].offset);
                        ASSERT_STREQ(hint, cases[i].hint);
                }
        }
        ASSERT_EQ(udev_format_check("a$x", err, sizeof(err)), -EINVAL);
        ASSERT_STREQ(err, "char 2: invalid substitution type");
        ASSERT_EQ(udev_format_check("ok", err, sizeof(err)), 0);
        ASSERT_STREQ(err, "");
        ASSERT_EQ(udev_format_check("$attr", NULL, 0), -EINVAL);
}

/* ------------------------------------------------------------ sanitising */

static void test_replace_chars(void)
{
        static const struct {
                const char *in, *allow, *out;
                size_t count;
        } cases[] = {
                { "abcXYZ019", NULL, "abcXYZ019", 0 },
                { "#+-.:=@_", NULL, "#+-.:=@_", 0 },
                { "a b", NULL, "a_b", 1 },
                { "a b", "", "a_b", 1 },
                { "a b", " ", "a b", 0 },
                { "a\tb\nc\rd\ve\ff", " ", "a b c d e f", 5 },
                { "a\tb", "/", "a_b", 1 },
                { "a/b", NULL, "a_b", 1 },
                { "a/b", "/", "a/b", 0 },
                { "$%?,()*", UDEV_ALLOWED_CHARS_INPUT, "$%?,___", 3 },
                { "a\\x2fb", NULL, "a\\x2fb", 0 },
                { "a\\y", NULL, "a_y", 1 },
                { "\\", NULL, "_", 1 },
                { "\\x", NULL, "\\x", 0 },
                { "caf\xc3\xa9", NULL, "caf\xc3\xa9", 0 },
                { "\xf0\x9f\x98\x80!", NULL, "\xf0\x9f\x98\x80_", 1 },
                { "\xe2\x82\xac", NULL, "\xe2\x82\xac", 0 },
                { "\xc3", NULL, "_", 1 },
                { "\xc3(", NULL, "__", 2 },
                { "\xc0\xaf", NULL, "__", 2 },         /* overlong '/' */
                { "\xe0\x80\xaf", NULL, "___", 3 },    /* overlong */
                { "\xed\xa0\x80", NULL, "___", 3 },    /* surrogate */
                { "\xef\xbf\xbe", NULL, "___", 3 },    /* U+FFFE */
                { "\xef\xb7\x90", NULL, "___", 3 },    /* U+FDD0 */
                { "\xf4\x90\x80\x80", NULL, "____", 4 }, /* > U+10FFFF */
                { "\xf8\x88\x80\x80\x80", NULL, "_____", 5 },
                { "\x7f\x01", NULL, "__", 2 },
                { "\x80", " ", "_", 1 },
                { "", NULL, "", 0 },
        };

        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                char buf[64];
                size_t n;

                snprintf(buf, sizeof(buf), "%s", cases[i].in);
                n = udev_replace_chars(buf, cases[i].allow);
                if (!streq(buf, cases[i].out) || n != cases[i].count)
                        fprintf(stderr, "replace_chars case %zu\n", i);
                ASSERT_STREQ(buf, cases[i].out);
                ASSERT_EQ(n, cases[i].count);
        }
        ASSERT_EQ(udev_replace_chars(NULL, NULL), 0);
}

static void test_utf8(void)
{
        ASSERT_EQ(udev_utf8_char_len("a"), 1);
        ASSERT_EQ(udev_utf8_char_len("\xc3\xa9"), 2);
        ASSERT_EQ(udev_utf8_char_len("\xe2\x82\xac"), 3);
        ASSERT_EQ(udev_utf8_char_len("\xf0\x9f\x98\x80"), 4);
        ASSERT_EQ(udev_utf8_char_len("\xf4\x8f\xbf\xbd"), 4); /* U+10FFFD */
        ASSERT_EQ(udev_utf8_char_len(""), -EINVAL);
        ASSERT_EQ(udev_utf8_char_len("\x80"), -EINVAL);
        ASSERT_EQ(udev_utf8_char_len("\xc3"), -EINVAL);
        ASSERT_EQ(udev_utf8_char_len("\xc1\xbf"), -EINVAL);
        ASSERT_EQ(udev_utf8_char_len("\xf0\x8f\xbf\xbf"), -EINVAL);
        ASSERT_EQ(udev_utf8_char_len("\xef\xbf\xbf"), -EINVAL); /* U+FFFF */
        ASSERT_EQ(udev_utf8_char_len("\xf0\x9f\xbf\xbe"), -EINVAL); /* U+1FFFE */
        ASSERT_EQ(udev_utf8_char_len("\xee\x80\x80"), 3); /* private use is fine */
        ASSERT_EQ(udev_utf8_char_len(NULL), -EINVAL);
}

static void test_replace_whitespace(void)
{
        static const struct {
                const char *in;
                size_t len; /* 0: strlen */
                const char *out;
        } cases[] = {
                { "  a  b  ", 0, "a_b" },   { "a", 0, "a" },           { "", 0, "" },
                { "   ", 0, "" },           { "a\tb\nc", 0, "a_b_c" }, { "\va", 0, "_a" },
                { "abc def", 3, "abc" },    { "abc def", 5, "abc_d" }, { "a b", 2, "a" },
                { "a  b", 3, "a" },         { " \t\r\n x y", 0, "x_y" },
        };

        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                char src[64], dst[64];
                size_t len = cases[i].len ? cases[i].len : strlen(cases[i].in), n;

                snprintf(src, sizeof(src), "%s", cases[i].in);
                n = udev_replace_whitespace(src, dst, len);
                ASSERT_STREQ(dst, cases[i].out);
                ASSERT_EQ(n, strlen(cases[i].out));
                /* in place */
                n = udev_replace_whitespace(src, src, len);
                ASSERT_STREQ(src, cases[i].out);
                ASSERT_EQ(n, strlen(cases[i].out));
        }
}

static void test_ifname_and_result(void)
{
        char buf[64];

        snprintf(buf, sizeof(buf), "eth0");
        ASSERT_EQ(udev_replace_ifname(buf), 0);
        ASSERT_STREQ(buf, "eth0");
        snprintf(buf, sizeof(buf), "a b:c/d%%e\x7f!~");
        ASSERT_EQ(udev_replace_ifname(buf), 5);
        ASSERT_STREQ(buf, "a_b_c_d_e_!~");
        snprintf(buf, sizeof(buf), "caf\xc3\xa9");
        ASSERT_EQ(udev_replace_ifname(buf), 2);
        ASSERT_STREQ(buf, "caf__");
        ASSERT_TRUE(udev_ifname_valid_char('!'));
        ASSERT_TRUE(!udev_ifname_valid_char(' '));
        ASSERT_TRUE(!udev_ifname_valid_char('%'));

        snprintf(buf, sizeof(buf), "a b\n\n");
        ASSERT_EQ(udev_sanitize_program_result(buf), 0);
        ASSERT_STREQ(buf, "a b");
        snprintf(buf, sizeof(buf), "a\tb\nc\n");
        ASSERT_EQ(udev_sanitize_program_result(buf), 2);
        ASSERT_STREQ(buf, "a b c");
        snprintf(buf, sizeof(buf), "x(y)/$%%?,\n");
        ASSERT_EQ(udev_sanitize_program_result(buf), 2);
        ASSERT_STREQ(buf, "x_y_/$%?,");
        snprintf(buf, sizeof(buf), "trail \n");
        ASSERT_EQ(udev_sanitize_program_result(buf), 0);
        ASSERT_STREQ(buf, "trail ");
}

/* ------------------------------------------------------------ [subsys/sysname] */

static void test_subsys_kernel(void)
{
        char subsys[32], sysname[32], out[PATH_MAX], exp[PATH_MAX];
        struct device_ctx *ctx = NULL;
        const char *attr = NULL;

        ASSERT_EQ(udev_parse_subsys_kernel("[block/sda]size", subsys, sizeof(subsys), sysname,
                                           sizeof(sysname), &attr), 0);
        ASSERT_STREQ(subsys, "block");
        ASSERT_STREQ(sysname, "sda");
        ASSERT_STREQ(attr, "size");
        ASSERT_EQ(udev_parse_subsys_kernel("[block/cciss/c0d0]/device/model", subsys,
                                           sizeof(subsys), sysname, sizeof(sysname), &attr), 0);
        ASSERT_STREQ(sysname, "cciss/c0d0");
        ASSERT_STREQ(attr, "device/model");
        ASSERT_EQ(udev_parse_subsys_kernel("[net/eth0]", subsys, sizeof(subsys), sysname,
                                           sizeof(sysname), &attr), 0);
        ASSERT_TRUE(attr == NULL);
        ASSERT_EQ(udev_parse_subsys_kernel("[a]b/c]d", subsys, sizeof(subsys), sysname,
                                           sizeof(sysname), &attr), 0);
        ASSERT_STREQ(subsys, "a]b");
        ASSERT_STREQ(sysname, "c");
        ASSERT_EQ(udev_parse_subsys_kernel("block/sda]size", subsys, sizeof(subsys), sysname,
                                           sizeof(sysname), &attr), -EINVAL);
        ASSERT_EQ(udev_parse_subsys_kernel("[blocksda]size", subsys, sizeof(subsys), sysname,
                                           sizeof(sysname), &attr), -EINVAL);
        ASSERT_EQ(udev_parse_subsys_kernel("[block/sda", subsys, sizeof(subsys), sysname,
                                           sizeof(sysname), &attr), -EINVAL);
        ASSERT_EQ(udev_parse_subsys_kernel("[block/sda]x", subsys, 3, sysname, sizeof(sysname),
                                           &attr), -EINVAL);

        ASSERT_EQ(device_ctx_new(&fx.roots, &ctx), 0);
        ASSERT_EQ(udev_resolve_subsys_kernel(ctx, "[block/sda]size", true, out, sizeof(out)), 0);
        ASSERT_STREQ(out, "30031872");
        ASSERT_EQ(udev_resolve_subsys_kernel(ctx, "[block/sda]nope", true, out, sizeof(out)), 0);
        ASSERT_STREQ(out, "");
        ASSERT_EQ(udev_resolve_subsys_kernel(ctx, "[pci/0000:00:1d.0]remove", true, out,
                                             sizeof(out)), 0);
        ASSERT_STREQ(out, "");
        ASSERT_EQ(udev_resolve_subsys_kernel(ctx, "[pci/0000:00:1d.0]power", true, out,
                                             sizeof(out)), -EISDIR);
        ASSERT_EQ(udev_resolve_subsys_kernel(ctx, "[block/sda]", true, out, sizeof(out)), -EINVAL);
        ASSERT_EQ(udev_resolve_subsys_kernel(ctx, "[block/nope]size", true, out, sizeof(out)),
                  -ENOENT);
        ASSERT_EQ(udev_resolve_subsys_kernel(ctx, "[block/sda]size", true, out, 4), 0);
        ASSERT_STREQ(out, "300");
        ASSERT_EQ(udev_resolve_subsys_kernel(ctx, "[block/sda]queue/x", false, out, sizeof(out)),
                  0);
        ASSERT_STREQ(out, expand("@SYS@" SDA "/queue/x", exp, sizeof(exp)));
        ASSERT_EQ(udev_resolve_subsys_kernel(ctx, "[net/eth0]", false, out, sizeof(out)), 0);
        ASSERT_STREQ(out, expand("@SYS@" ETH0, exp, sizeof(exp)));
        ASSERT_EQ(udev_resolve_subsys_kernel(ctx, "[block/cciss!c0d0]", false, out, sizeof(out)),
                  0);
        ASSERT_STREQ(out, expand("@SYS@" CCISS, exp, sizeof(exp)));
        device_ctx_free(ctx);
}

/* ------------------------------------------------------------ command lines */

static void test_split_cmdline(void)
{
        static const struct {
                const char *in;
                int r;
                const char *words; /* joined with '|' */
        } cases[] = {
                { "prog a b", 0, "prog|a|b" },
                { "  prog   a\tb \r\n ", 0, "prog|a|b" },
                { "prog 'a b' \"c d\"", 0, "prog|a b|c d" },
                { "prog a'b c'd", 0, "prog|ab cd" },
                { "prog \"\" x", 0, "prog||x" },
                { "prog ''", 0, "prog|" },
                { "prog 'unterminated arg", 0, "prog|unterminated arg" },
                { "prog \"unterminated", 0, "prog|unterminated" },
                { "prog a\\ b", 0, "prog|a\\|b" },
                { "prog \"a\\\"b\"", 0, "prog|a\\b" },
                { "prog 'a\"b'", 0, "prog|a\"b" },
                { "'it''s'", 0, "its" },
                { "/lib/udev/x --opt=\"v w\" $x", 0, "/lib/udev/x|--opt=v w|$x" },
                { "", -EINVAL, "" },
                { "   \t", -EINVAL, "" },
        };

        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                char buf[128], joined[128] = "";
                char *argv[16];
                size_t argc = 99;
                int r;

                snprintf(buf, sizeof(buf), "%s", cases[i].in);
                r = udev_split_cmdline(buf, argv, ARRAY_SIZE(argv), &argc);
                ASSERT_EQ(r, cases[i].r);
                if (r < 0) {
                        ASSERT_EQ(argc, 0);
                        continue;
                }
                ASSERT_TRUE(argv[argc] == NULL);
                for (size_t k = 0; k < argc; k++) {
                        if (k > 0)
                                strcat(joined, "|");
                        strcat(joined, argv[k]);
                }
                if (!streq(joined, cases[i].words))
                        fprintf(stderr, "split case %zu: '%s'\n", i, joined);
                ASSERT_STREQ(joined, cases[i].words);
        }
        {
                char buf[32] = "a b c", buf2[32] = "a b";
                char *argv[3];
                size_t argc;

                ASSERT_EQ(udev_split_cmdline(buf, argv, 3, &argc), -E2BIG);
                ASSERT_EQ(udev_split_cmdline(buf2, argv, 3, &argc), 0);
                ASSERT_EQ(argc, 2);
                ASSERT_TRUE(argv[2] == NULL);
        }
}

/* ------------------------------------------------------------ property lines */

static void test_property_lines(void)
{
        static const struct {
                const char *in;
                int r;
                const char *key, *value;
        } cases[] = {
                { "KEY=value", 1, "KEY", "value" },
                { "  KEY = value  ", 1, "KEY", "value" },
                { "\tKEY=\tvalue with spaces\r", 1, "KEY", "value with spaces" },
                { "KEY=\"quoted value\"", 1, "KEY", "quoted value" },
                { "KEY='x'", 1, "KEY", "x" },
                { "KEY=\"\"", 1, "KEY", "" },
                { "KEY=\"a\\\"b\"", 1, "KEY", "a\\\"b" },
                { "KEY=a=b", 1, "KEY", "a=b" },
                { "A B=c", 1, "A B", "c" },
                { ".HIDDEN=1", 1, ".HIDDEN", "1" },
                { "KEY=\"", -EINVAL, NULL, NULL },
                { "KEY=\"abc'", -EINVAL, NULL, NULL },
                { "KEY='abc", -EINVAL, NULL, NULL },
                { "novalue", -EINVAL, NULL, NULL },
                { "=value", -EINVAL, NULL, NULL },
                { "  =value", -EINVAL, NULL, NULL },
                { "KEY=", -EINVAL, NULL, NULL },
                { "KEY=   ", -EINVAL, NULL, NULL },
                { "# comment=x", 0, NULL, NULL },
                { "   # comment", 0, NULL, NULL },
                { "", 0, NULL, NULL },
                { "   ", 0, NULL, NULL },
        };

        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                char buf[128], *k = (char *)"unset", *v = (char *)"unset";
                int r;

                snprintf(buf, sizeof(buf), "%s", cases[i].in);
                r = udev_property_line_parse(buf, &k, &v);
                if (r != cases[i].r)
                        fprintf(stderr, "property case %zu: %d\n", i, r);
                ASSERT_EQ(r, cases[i].r);
                if (r > 0) {
                        ASSERT_STREQ(k, cases[i].key);
                        ASSERT_STREQ(v, cases[i].value);
                } else if (r == 0)
                        ASSERT_TRUE(k == NULL && v == NULL);
        }
}

static void test_next_line(void)
{
        static const char text[] = "A=1\n\nB=2\r\nC=3\0D=4\rE=5";
        char buf[sizeof(text)], *cursor = buf, *line;
        const char *expect[] = { "A=1", "B=2", "C=3", "D=4", "E=5" };
        size_t n = 0;

        memcpy(buf, text, sizeof(text));
        while ((line = udev_next_line(&cursor, buf + sizeof(text) - 1))) {
                ASSERT_TRUE(n < ARRAY_SIZE(expect));
                ASSERT_STREQ(line, expect[n++]);
        }
        ASSERT_EQ(n, ARRAY_SIZE(expect));
        ASSERT_TRUE(udev_next_line(&cursor, buf + sizeof(text) - 1) == NULL);
        {
                char empty[] = "\n\r\n";

                cursor = empty;
                ASSERT_TRUE(udev_next_line(&cursor, empty + 3) == NULL);
        }
}

/* ------------------------------------------------------------ udev_event */

struct hashed_key {
        uint32_t hash;
        uint32_t i;
};

static int cmp_hashed_key(const void *a, const void *b)
{
        const struct hashed_key *x = a, *y = b;

        return x->hash < y->hash ? -1 : x->hash > y->hash;
}

/* Two different keys with the same hash: each is found, replaced and
 * removed as itself (the lookup compares the strings after the hashes). */
static void test_proplist_hash_collision(void)
{
        const uint32_t n = 300000; /* about 10 collisions expected in 32 bits */
        struct hashed_key *hk = calloc(n, sizeof(*hk));
        struct proplist l = {};
        char a[16], b[16];
        bool found = false;

        ASSERT_TRUE(hk != NULL);
        for (uint32_t i = 0; i < n; i++) {
                snprintf(a, sizeof(a), "K%u", i);
                hk[i] = (struct hashed_key){ .hash = proplist_key_hash(a), .i = i };
        }
        qsort(hk, n, sizeof(*hk), cmp_hashed_key);
        for (uint32_t i = 1; i < n && !found; i++)
                if (hk[i].hash == hk[i - 1].hash) {
                        snprintf(a, sizeof(a), "K%u", hk[i - 1].i);
                        snprintf(b, sizeof(b), "K%u", hk[i].i);
                        found = true;
                }
        free(hk);
        ASSERT_TRUE(found);
        ASSERT_TRUE(!streq(a, b));
        ASSERT_EQ(proplist_key_hash(a), proplist_key_hash(b));

        ASSERT_EQ(proplist_set(&l, "OTHER", "0", false), 0);
        ASSERT_EQ(proplist_set(&l, a, "1", false), 0);
        ASSERT_TRUE(proplist_get(&l, b) == NULL);
        ASSERT_EQ(proplist_unset(&l, b), -ENOENT);
        ASSERT_EQ(proplist_set(&l, b, "2", false), 0);
        ASSERT_EQ(l.n, 3);
        ASSERT_STREQ(proplist_get(&l, a), "1");
        ASSERT_STREQ(proplist_get(&l, b), "2");
        ASSERT_EQ(proplist_set(&l, b, "3", false), 0); /* replaces b, not a */
        ASSERT_STREQ(proplist_get(&l, a), "1");
        ASSERT_STREQ(proplist_get(&l, b), "3");
        ASSERT_EQ(proplist_unset(&l, a), 0);
        ASSERT_TRUE(proplist_get(&l, a) == NULL);
        ASSERT_STREQ(proplist_get(&l, b), "3");
        ASSERT_EQ(l.n, 2);
        proplist_clear(&l);
}

static void test_proplist(void)
{
        struct proplist l = {};
        char key[16];

        ASSERT_EQ(proplist_set(&l, "A", "1", true), 0);
        ASSERT_EQ(proplist_set(&l, "B", "2", false), 0);
        ASSERT_EQ(proplist_set(&l, "C", "3", false), 0);
        ASSERT_EQ(proplist_set(&l, "A", "changed", false), 0); /* keeps its position */
        ASSERT_EQ(l.n, 3);
        ASSERT_STREQ(l.items[0].key, "A");
        ASSERT_STREQ(l.items[0].value, "changed");
        ASSERT_TRUE(!l.items[0].from_kernel);
        ASSERT_EQ(proplist_set(&l, "B", proplist_get(&l, "B"), true), 0); /* aliasing */
        ASSERT_STREQ(proplist_get(&l, "B"), "2");
        ASSERT_EQ(proplist_set(&l, "E", "", false), 0);
        ASSERT_STREQ(proplist_get(&l, "E"), "");
        ASSERT_EQ(proplist_unset(&l, "B"), 0);
        ASSERT_EQ(proplist_unset(&l, "B"), -ENOENT);
        ASSERT_EQ(l.n, 3);
        ASSERT_STREQ(l.items[1].key, "C");
        ASSERT_TRUE(proplist_get(&l, "B") == NULL);
        ASSERT_EQ(proplist_set(&l, "", "x", false), -EINVAL);
        ASSERT_EQ(proplist_set(&l, "X", NULL, false), -EINVAL);
        for (int i = 0; i < 5000; i++) {
                int r;

                snprintf(key, sizeof(key), "K%d", i);
                r = proplist_set(&l, key, "v", false);
                ASSERT_TRUE(r == 0 || (r == -E2BIG && l.n == 4096));
        }
        ASSERT_EQ(l.n, 4096);
        proplist_clear(&l);
        ASSERT_EQ(l.n, 0);
        ASSERT_TRUE(proplist_get(&l, "A") == NULL);
        proplist_clear(&l);
}

static void test_event_init_env(void)
{
        static const char *const keys[] = { "ACTION", "DEVPATH", "SUBSYSTEM", "MAJOR",  "MINOR",
                                            "DEVNAME", "DEVTYPE", "PARTN",     "SEQNUM" };
        struct test_event t;
        char exp[PATH_MAX], **env;
        size_t i;

        event_setup(&t, PARENT_USB);
        ASSERT_EQ(t.ev.log_level, -1);
        ASSERT_TRUE(!t.ev.uid_set && !t.ev.gid_set && !t.ev.mode_set);
        ASSERT_EQ(t.ev.action, UEVENT_ACTION_ADD);
        ASSERT_EQ(t.ev.usec_initialized, 1);
        for (i = 0; i < ARRAY_SIZE(keys); i++) {
                ASSERT_STREQ(t.ev.props.items[i].key, keys[i]);
                ASSERT_TRUE(t.ev.props.items[i].from_kernel);
        }
        ASSERT_STREQ(proplist_get(&t.ev.props, "DEVNAME"), expand("@DEV@/sda1", exp, sizeof(exp)));
        ASSERT_STREQ(udev_event_get_property(&t.ev, "ID_FOO"), "foo value");
        ASSERT_STREQ(udev_event_get_property(&t.ev, "GLOBAL"), "from control");
        ASSERT_TRUE(udev_event_get_property(&t.ev, "NOPE") == NULL);

        ASSERT_EQ(strlist_add(&t.ev.tags, "systemd"), 0);
        ASSERT_EQ(strlist_add(&t.ev.tags, "uaccess"), 0);
        ASSERT_EQ(strlist_add(&t.ev.current_tags, "uaccess"), 0);
        t.ev.usec_initialized = 123456;
        env = udev_event_build_env(&t.ev);
        ASSERT_TRUE(env != NULL);
        ASSERT_STREQ(env[0], "UDEV_DATABASE_VERSION=1");
        ASSERT_STREQ(env[1], "ACTION=add");
        ASSERT_STREQ(env[6], expand("DEVNAME=@DEV@/sda1", exp, sizeof(exp)));
        for (i = 0; env[i]; i++)
                ;
        ASSERT_EQ(i, 1 + t.ev.props.n + 4);
        ASSERT_STREQ(env[i - 4], expand("DEVLINKS=@DEV@/disk/by-id/usb-SanDisk-part1 "
                                        "/dev/disk/by-label/BOOT",
                                        exp, sizeof(exp)));
        ASSERT_STREQ(env[i - 3], "TAGS=:systemd:uaccess:");
        ASSERT_STREQ(env[i - 2], "CURRENT_TAGS=:uaccess:");
        ASSERT_STREQ(env[i - 1], "USEC_INITIALIZED=123456");
        ASSERT_STREQ(env[t.ev.props.n], "EMPTY=");
        udev_event_free_env(env);

        /* Nothing extra when the lists are empty / the key is a property. */
        strlist_clear(&t.ev.devlinks);
        strlist_clear(&t.ev.current_tags);
        ASSERT_EQ(proplist_set(&t.ev.props, "TAGS", "mine", false), 0);
        t.ev.usec_initialized = 0;
        env = udev_event_build_env(&t.ev);
        for (i = 0; env[i]; i++)
                ASSERT_TRUE(!strneq(env[i], "DEVLINKS=", 9) &&
                            !streq(env[i], "TAGS=:systemd:uaccess:") &&
                            !strneq(env[i], "CURRENT_TAGS=", 13) &&
                            !strneq(env[i], "USEC_INITIALIZED=", 17));
        ASSERT_EQ(i, 1 + t.ev.props.n);
        udev_event_free_env(env);
        udev_event_free_env(NULL);

        t.ev.name = strdup("x");
        ASSERT_EQ(strlist_add(&t.ev.seclabels, "selinux=x"), 0);
        t.ev.run = calloc(2, sizeof(*t.ev.run));
        t.ev.run[0].cmd = strdup("a");
        t.ev.run[1].cmd = strdup("b");
        t.ev.n_run = t.ev.cap_run = 2;
        udev_event_done(&t.ev);
        ASSERT_EQ(t.ev.props.n, 0);
        ASSERT_TRUE(t.ev.name == NULL && t.ev.run == NULL && t.ev.program_result == NULL);
        udev_event_done(&t.ev); /* twice is fine */
        event_teardown(&t);
}

/* An event without a kernel record (udevadm test on a sysfs device). */
static void test_event_init_sysfs(void)
{
        static const char *const keys[] = { "DEVPATH", "DEVNAME", "DEVTYPE", "DISKSEQ", "PARTN",
                                            "MAJOR",   "MINOR",   "ACTION",  "SUBSYSTEM" };
        struct device_ctx *ctx = NULL;
        struct udev_event ev;
        char exp[PATH_MAX];

        ASSERT_EQ(device_ctx_new(&fx.roots, &ctx), 0);
        ASSERT_EQ(udev_event_init(&ev, ctx, dev_at(ctx, SDA1), NULL, UEVENT_ACTION_CHANGE), 0);
        ASSERT_EQ(ev.props.n, ARRAY_SIZE(keys));
        for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
                ASSERT_STREQ(ev.props.items[i].key, keys[i]);
        ASSERT_STREQ(proplist_get(&ev.props, "ACTION"), "change");
        ASSERT_STREQ(proplist_get(&ev.props, "DEVNAME"), expand("@DEV@/sda1", exp, sizeof(exp)));
        ASSERT_EQ(ev.usec_initialized, 0);
        udev_event_done(&ev);
        ASSERT_EQ(udev_event_init(&ev, ctx, NULL, NULL, UEVENT_ACTION_ADD), -EINVAL);
        udev_event_done(&ev);
        device_ctx_free(ctx);
}

/* ------------------------------------------------------------ random inputs */

static unsigned rnd_state = 12345;

static unsigned rnd(unsigned n)
{
        rnd_state = rnd_state * 1103515245u + 12345u;
        return (rnd_state >> 16) % n;
}

/* Random strings of substitution-heavy characters: every function keeps its
 * bounds and NUL-terminates (checked under ASan/UBSan). */
static void test_random_inputs(void)
{
        static const char alphabet[] = "$%{}[]/ \t\n'\"+-0123kKcEsNnbpPmMdDLrSeinvattrsy"
                                       "\xc3\xa9\xff";
        static const char *const words[] = { "$attr{", "$env{", "%c{", "$kernel", "%s{", "}",
                                             "[block/sda]", "$result", "$links", "$parent",
                                             "size", "ID_FOO", "2+", "%%", "$$" };
        struct test_event t;

        event_setup(&t, PARENT_USB);
        for (int iter = 0; iter < 20000; iter++) {
                char src[96], out[64], copy[96], *argv[8], *k, *v, *cursor;
                size_t n = rnd(40), len, size = 1 + rnd(sizeof(out) - 1), argc;
                bool truncated;

                src[0] = '\0';
                for (size_t i = 0; i < n && strlen(src) < sizeof(src) - 16; i++) {
                        size_t l = strlen(src);

                        if (rnd(3) == 0) {
                                const char *w = words[rnd(ARRAY_SIZE(words))];

                                snprintf(src + l, sizeof(src) - l, "%s", w);
                        } else {
                                src[l] = alphabet[rnd(sizeof(alphabet) - 1)];
                                src[l + 1] = '\0';
                        }
                }
                memset(out, 'Z', sizeof(out));
                len = udev_format(&t.ev, src, out, size, rnd(2) ? WS : 0, &truncated);
                ASSERT_TRUE(len < size);
                ASSERT_EQ(strlen(out), len);
                (void)udev_format_check(src, NULL, 0);

                memcpy(copy, src, sizeof(copy));
                (void)udev_replace_chars(copy, rnd(2) ? NULL : "/ ");
                ASSERT_EQ(strlen(copy), strlen(src));
                memcpy(copy, src, sizeof(copy));
                ASSERT_TRUE(udev_replace_whitespace(copy, copy, strlen(copy)) <= strlen(src));
                memcpy(copy, src, sizeof(copy));
                if (udev_split_cmdline(copy, argv, ARRAY_SIZE(argv), &argc) == 0)
                        ASSERT_TRUE(argc > 0 && argc < ARRAY_SIZE(argv) && argv[argc] == NULL);
                memcpy(copy, src, sizeof(copy));
                cursor = copy;
                while ((k = udev_next_line(&cursor, copy + strlen(src))))
                        (void)udev_property_line_parse(k, &k, &v);
        }
        event_teardown(&t);
}

int main(void)
{
        log_set_max_level(LOG_ERR); /* the malformed cases log warnings */
        fixture_setup(&fx);
        TEST_RUN(test_format_table);
        TEST_RUN(test_format_long_attr);
        TEST_RUN(test_format_no_result);
        TEST_RUN(test_format_other_devices);
        TEST_RUN(test_format_check);
        TEST_RUN(test_replace_chars);
        TEST_RUN(test_utf8);
        TEST_RUN(test_replace_whitespace);
        TEST_RUN(test_ifname_and_result);
        TEST_RUN(test_subsys_kernel);
        TEST_RUN(test_split_cmdline);
        TEST_RUN(test_property_lines);
        TEST_RUN(test_next_line);
        TEST_RUN(test_proplist);
        TEST_RUN(test_proplist_hash_collision);
        TEST_RUN(test_event_init_env);
        TEST_RUN(test_event_init_sysfs);
        TEST_RUN(test_random_inputs);
        fixture_teardown(&fx);
        return 0;
}
