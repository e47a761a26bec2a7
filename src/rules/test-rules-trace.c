/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (single-threaded test) */
/* Golden-text tests of the rules trace (rules-trace.c and the tracing in
 * rules-exec.c): rules compiled with rules_load_string() run against events
 * of the fake sysfs tree with a trace, and the trace's text (times left out)
 * is compared with the expected text, the format udevadm(8) documents under
 * EXPLAIN OUTPUT. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "device/db.h"
#include "device/device.h"
#include "device/test-sysfs-fixture.h"
#include "event/udev-event.h"
#include "rules/event-exec.h"
#include "rules/rules-exec.h"
#include "rules/rules-trace.h"
#include "rules/rules.h"
#include "shared/log.h"
#include "shared/tests.h"
#include "shared/time-util.h"

static struct sysfs_fixture fx;

/* udevd's per-thread trace buffer (udevd/explain-ring.h) */
#define EXPLAIN_SIZE ((size_t)16 * 1024)

/* "echo WORDS" prints them, "print A=1" prints its argument, "fail" exits 1 */
static int fake_spawn(void *userdata, const char *cmd, char *const envp[], bool is_run,
                      uint64_t deadline_usec, char *out, size_t out_size, bool *truncated)
{
        const char *o = "";

        if (strncmp(cmd, "echo ", 5) == 0)
                o = cmd + 5;
        else if (strncmp(cmd, "print ", 6) == 0)
                o = cmd + 6;
        else if (strcmp(cmd, "fail") == 0)
                return 1;
        if (out && out_size) {
                snprintf(out, out_size, "%s\n", o);
                if (truncated)
                        *truncated = false;
        }
        return 0;
}

#define DG(lit) (lit), sizeof(lit)
#define SDA_ADD                                                                            \
        DG("add@" SDA "\0ACTION=add\0DEVPATH=" SDA "\0SUBSYSTEM=block\0MAJOR=8\0MINOR=0\0" \
           "DEVNAME=sda\0DEVTYPE=disk\0DISKSEQ=9\0SEQNUM=10")

struct run {
        struct rules *rules;
        struct rules_trace *trace;
        char *text; /* the formatted trace */
        int r;
};

/* Run `rules` (compiled from text, or `compiled` when not NULL: a reference
 * is taken) over `dgram` with a trace of `size` bytes and RULES_TRACE_*
 * `tflags`, then the RUN list; format the trace with `flags`. */
static void run_traced_with(struct run *out, const char *rules, struct rules *compiled,
                            size_t size, unsigned tflags, const char *dgram, size_t len,
                            unsigned flags)
{
        struct uevent *uevent = fx_uevent(dgram, len);
        struct device_ctx *ctx = NULL;
        struct device *dev = NULL;
        struct udev_event ev;
        struct db_record old = {};
        size_t tlen = 0;
        FILE *f;

        memset(out, 0, sizeof(*out));
        if (compiled)
                out->rules = rules_ref(compiled);
        else
                ASSERT_EQ(rules_load_string("/test/10-test.rules", rules, strlen(rules), NULL,
                                            &out->rules), 0);
        ASSERT_EQ(rules_trace_new(size, tflags, &out->trace), 0);
        ASSERT_EQ(device_ctx_new(&fx.roots, &ctx), 0);
        ASSERT_EQ(device_from_uevent(ctx, uevent, &dev), 0);
        ASSERT_EQ(udev_event_init(&ev, ctx, dev, uevent, uevent->action), 0);
        (void)db_read(fx.run, uevent->id, &old);
        ev.old_db = &old;
        ev.spawner = (struct udev_spawner){ .spawn = fake_spawn };
        ev.start_usec = now_usec(CLOCK_MONOTONIC);
        ev.timeout_usec = 10 * USEC_PER_SEC;
        ev.dry_run = true;
        ev.trace = out->trace;
        out->r = rules_apply(out->rules, &ev);
        if (out->r >= 0)
                rules_execute_run(&ev);
        f = open_memstream(&out->text, &tlen);
        ASSERT_TRUE(f != NULL);
        ASSERT_EQ(rules_trace_format(out->trace, out->rules, flags, f), 0);
        ASSERT_EQ(fclose(f), 0);
        udev_event_done(&ev);
        db_record_clear(&old);
        device_ctx_free(ctx);
        uevent_free(uevent);
}

static void run_traced(struct run *out, const char *rules, size_t size, const char *dgram,
                       size_t len, unsigned flags)
{
        run_traced_with(out, rules, NULL, size, RULES_TRACE_LINE_TIMES, dgram, len, flags);
}

static void run_free(struct run *r)
{
        free(r->text);
        rules_trace_free(r->trace);
        rules_unref(r->rules);
}

static void check_text(const char *got, const char *expected, const char *where)
{
        if (strcmp(got, expected) != 0) {
                fprintf(stderr, "\n%s: trace:\n%s\nexpected:\n%s\n", where, got, expected);
                abort();
        }
}

#define F "/test/10-test.rules:"

static void test_golden_add(void)
{
        static const char rules[] =
                "ACTION==\"remove\", GOTO=\"end\"\n"
                "SUBSYSTEM==\"block\", KERNEL==\"sd*\", ENV{ID_DISK}=\"1\", SYMLINK+=\"disk/%k\"\n"
                "ENV{ID_DISK}==\"0\", ENV{NEVER}=\"1\"\n"
                "ENV{UNSET}==\"x\", ENV{NEVER}=\"1\"\n"
                "KERNELS==\"1-1\", ATTRS{idVendor}==\"1234\", ENV{VENDOR}=\"x\"\n"
                "SUBSYSTEMS==\"usb\", ATTRS{idVendor}==\"0781\", ENV{VENDOR}=\"sandisk\"\n"
                "KERNELS==\"1-1\", ATTRS{product}==\"x\", ENV{NEVER}=\"1\"\n"
                "ATTR{size}==\"1\", ENV{NEVER}=\"1\"\n"
                "ATTR{nosuchattr}==\"1\", ENV{NEVER}=\"1\"\n"
                "PROGRAM==\"fail\", ENV{NEVER}=\"1\"\n"
                "PROGRAM==\"echo hello world\", RESULT==\"bye*\", ENV{NEVER}=\"1\"\n"
                "TAG==\"other\", ENV{NEVER}=\"1\"\n"
                "DRIVER==\"foo\", ENV{NEVER}=\"1\"\n"
                "TEST==\"/nonexistent\", ENV{NEVER}=\"1\"\n"
                "SYMLINK==\"disk/sdb\", ENV{NEVER}=\"1\"\n"
                "IMPORT{program}=\"print A=1\", GOTO=\"end\"\n"
                "ENV{SKIPPED}=\"1\"\n"
                "LABEL=\"end\"\n"
                "ENV{A}==\"1\", RUN+=\"echo run %k\"\n";
        static const char expected[] =
                "event seqnum=10 action=add devpath=" SDA " subsystem=block\n"
                F "1 failed - ACTION==\"remove\" got \"add\"\n"
                F "2 applied - ENV{ID_DISK}=\"1\" SYMLINK+=\"disk/%k\"\n"
                F "3 failed - ENV{ID_DISK}==\"0\" got \"1\"\n"
                F "4 failed - ENV{UNSET}==\"x\" got nothing\n"
                F "5 failed - ATTRS{idVendor}==\"1234\" got \"0781\" at 1-1\n"
                F "6 applied - ENV{VENDOR}=\"sandisk\"\n"
                F "7 failed - ATTRS{product}==\"x\" got \"Cruzer\\x09Blade\" at 1-1\n"
                F "8 failed - ATTR{size}==\"1\" got \"30031872\"\n"
                F "9 failed - ATTR{nosuchattr}==\"1\" got nothing\n"
                F "10 failed - PROGRAM==\"fail\" got exit status 1\n"
                "  program \"fail\" exit 1 -\n"
                F "11 failed - RESULT==\"bye*\" got \"hello world\"\n"
                "  program \"echo hello world\" ok -\n"
                F "12 failed - TAG==\"other\" got nothing\n"
                F "13 failed - DRIVER==\"foo\" got nothing\n"
                F "14 failed - TEST==\"/nonexistent\" got failure\n"
                F "15 failed - SYMLINK==\"disk/sdb\" got \"disk/sda\"\n"
                F "16 applied - GOTO=\"end\"\n"
                "  import{program} \"print A=1\" ok -\n"
                F "19 applied - RUN{program}+=\"echo run %k\"\n"
                "run{program} \"echo run sda\" ok -\n"
                "summary lines=17 applied=4 time=- result=0\n";
        struct run r;

        run_traced(&r, rules, RULES_TRACE_SIZE_DEFAULT, SDA_ADD, RULES_TRACE_FORMAT_NO_TIME);
        ASSERT_EQ(r.r, 0);
        check_text(r.text, expected, __func__);
        ASSERT_EQ(rules_trace_lines(r.trace), 17u);
        ASSERT_EQ(rules_trace_applied(r.trace), 4u);
        ASSERT_TRUE(!rules_trace_truncated(r.trace));
        ASSERT_EQ(rules_trace_seqnum(r.trace), 10u);
        ASSERT_STREQ(rules_trace_devpath(r.trace), SDA);
        run_free(&r);

        /* the compact trace (no line times, as udevd keeps) reads the same */
        run_traced_with(&r, rules, NULL, RULES_TRACE_SIZE_DEFAULT, 0, SDA_ADD,
                        RULES_TRACE_FORMAT_NO_TIME);
        check_text(r.text, expected, __func__);
        run_free(&r);
}

/* Times are printed as microseconds with three decimals; the generation
 * when the daemon set one. */
static void test_times_and_generation(void)
{
        struct run r;
        char *copy_text = NULL;
        size_t len = 0;
        struct rules_trace *copy;
        FILE *f;

        run_traced(&r, "KERNEL==\"sda\", ENV{X}=\"1\"\n", 4096, SDA_ADD, 0);
        ASSERT_TRUE(strstr(r.text, F "1 applied ") != NULL);
        ASSERT_TRUE(strstr(r.text, "us ENV{X}=\"1\"\n") != NULL);
        ASSERT_TRUE(strstr(r.text, "summary lines=1 applied=1 time=") != NULL);
        ASSERT_TRUE(strstr(r.text, "generation=") == NULL);

        /* a copy formats the same, is smaller, and carries the generation */
        rules_trace_set_generation(r.trace, 7);
        ASSERT_EQ(rules_trace_dup(r.trace, &copy), 0);
        ASSERT_TRUE(rules_trace_footprint(copy) < 4096);
        ASSERT_EQ(rules_trace_generation(copy), 7u);
        f = open_memstream(&copy_text, &len);
        ASSERT_EQ(rules_trace_format(copy, r.rules, RULES_TRACE_FORMAT_NO_TIME, f), 0);
        fclose(f);
        check_text(copy_text,
                   "event seqnum=10 action=add devpath=" SDA " subsystem=block generation=7\n"
                   F "1 applied - ENV{X}=\"1\"\n"
                   "summary lines=1 applied=1 time=- result=0\n",
                   __func__);
        free(copy_text);
        rules_trace_free(copy);
        run_free(&r);
}

/* A small trace keeps the first records, counts the rest and says so; the
 * summary still counts every line. */
static void test_truncation(void)
{
        enum { N = 200 };
        char *rules = malloc(N * 48);
        size_t o = 0;
        unsigned shown = 0;
        struct run r;

        ASSERT_TRUE(rules);
        for (unsigned i = 0; i < N; i++)
                o += (size_t)sprintf(rules + o, "KERNEL==\"sdb%u\", ENV{X}=\"%u\"\n", i, i);
        run_traced(&r, rules, RULES_TRACE_SIZE_MIN, SDA_ADD, RULES_TRACE_FORMAT_NO_TIME);
        ASSERT_EQ(r.r, 0);
        ASSERT_TRUE(rules_trace_truncated(r.trace));
        for (const char *p = r.text; (p = strstr(p, F)); p++)
                shown++;
        ASSERT_TRUE(shown > 0 && shown < N);
        ASSERT_EQ(shown + rules_trace_dropped(r.trace), (unsigned)N);
        /* the first lines are the ones kept, in order */
        ASSERT_TRUE(strstr(r.text, F "1 failed - KERNEL==\"sdb0\" got \"sda\"\n" F
                                   "2 failed - KERNEL==\"sdb1\" got \"sda\"\n") != NULL);
        char tail[128];
        snprintf(tail, sizeof(tail), "summary lines=%u applied=0 time=- result=0\n"
                 "truncated dropped=%u\n", N, rules_trace_dropped(r.trace));
        ASSERT_TRUE(strlen(r.text) > strlen(tail));
        ASSERT_STREQ(r.text + strlen(r.text) - strlen(tail), tail);
        /* the record space was respected */
        ASSERT_TRUE(rules_trace_footprint(r.trace) < RULES_TRACE_SIZE_MIN + 256);
        run_free(&r);
        free(rules);
}

/* A long value is cut at RULES_TRACE_VALUE_MAX and marked with "...". */
static void test_long_value(void)
{
        char rules[1024];
        struct run r;
        char want[512];

        snprintf(rules, sizeof(rules), "ENV{LONG}=\"%0300d\"\nENV{LONG}==\"x\", ENV{Y}=\"1\"\n",
                 0);
        run_traced(&r, rules, RULES_TRACE_SIZE_DEFAULT, SDA_ADD, RULES_TRACE_FORMAT_NO_TIME);
        snprintf(want, sizeof(want), F "2 failed - ENV{LONG}==\"x\" got \"%0*d\"...\n",
                 RULES_TRACE_VALUE_MAX - 1, 0);
        ASSERT_TRUE(strstr(r.text, want) != NULL);
        run_free(&r);
}

/* A compact trace costs a few bytes per evaluated line: a line that fails on
 * an event key stores no value, an applied line no key. */
static void test_record_size(void)
{
        enum { N = 300 };
        char *rules = malloc(N * 48);
        size_t o = 0, base;
        struct run r;

        ASSERT_TRUE(rules);
        run_traced_with(&r, "", NULL, RULES_TRACE_SIZE_DEFAULT, 0, SDA_ADD, 0);
        base = rules_trace_footprint(r.trace); /* the event alone */
        run_free(&r);
        for (unsigned i = 0; i < N; i++)
                o += (size_t)sprintf(rules + o, i % 3 ? "KERNEL==\"sdb%u\", ENV{X}=\"%u\"\n"
                                                      : "SUBSYSTEM==\"block\", ENV{X}=\"%u%u\"\n",
                                     i, i);
        run_traced_with(&r, rules, NULL, RULES_TRACE_SIZE_DEFAULT, 0, SDA_ADD, 0);
        ASSERT_EQ(rules_trace_lines(r.trace), (unsigned)N);
        ASSERT_EQ(rules_trace_applied(r.trace), (unsigned)N / 3);
        ASSERT_TRUE(!rules_trace_truncated(r.trace));
        /* failed: tag, line delta, key index; applied: tag, line delta */
        ASSERT_EQ(rules_trace_footprint(r.trace) - base, (size_t)(N / 3 * 2 + (N - N / 3) * 3));
        run_free(&r);
        free(rules);
}

static const char *debian_rules_dir(char *buf)
{
        const char *root = getenv("SD_UDEV_ROOT");

        snprintf(buf, PATH_MAX, "%s/lib/udev/rules.d", root ? root : "build-ref/sd-udev");
        return access(buf, R_OK) == 0 ? buf : NULL;
}

#define VETH "/devices/virtual/net/veth0"
#define VETH_ADD                                                                           \
        DG("add@" VETH "\0ACTION=add\0DEVPATH=" VETH "\0SUBSYSTEM=net\0INTERFACE=veth0\0" \
           "IFINDEX=5\0SEQNUM=13")

/* Debian 12's rules on the "add" of a veth interface (the net storm): the
 * compact trace udevd keeps is well under a kilobyte, and reads as the
 * timed one does. The size is printed: it is the figure udevd(8) gives. */
static void test_debian_net_size(void)
{
        char dir[PATH_MAX];
        const char *dirs[] = { debian_rules_dir(dir), NULL };
        struct rules_load_options o = { .dirs = dirs, .resolve_names = RESOLVE_NAMES_LATE };
        struct rules *rules;
        struct run compact, timed;

        if (!dirs[0]) {
                fprintf(stderr, "(Debian rules not found, skipped) ");
                return;
        }
        fx_device(&fx, VETH, "class/net", NULL, "INTERFACE=veth0\nIFINDEX=5\n", NULL);
        fx_attr(&fx, VETH, "ifindex", "5\n");
        fx_attr(&fx, VETH, "address", "aa:bb:cc:dd:ee:01\n");
        fx_attr(&fx, VETH, "type", "1\n");
        fx_attr(&fx, VETH, "addr_assign_type", "3\n");
        ASSERT_EQ(rules_load(&o, &rules), 0);
        run_traced_with(&compact, NULL, rules, EXPLAIN_SIZE, 0, VETH_ADD,
                        RULES_TRACE_FORMAT_NO_TIME);
        run_traced_with(&timed, NULL, rules, EXPLAIN_SIZE, RULES_TRACE_LINE_TIMES, VETH_ADD,
                        RULES_TRACE_FORMAT_NO_TIME);
        fprintf(stderr, "(veth add: %u lines, %zu bytes) ", rules_trace_lines(compact.trace),
                rules_trace_footprint(compact.trace));
        ASSERT_TRUE(rules_trace_lines(compact.trace) > 100);
        ASSERT_TRUE(!rules_trace_truncated(compact.trace));
        ASSERT_TRUE(rules_trace_footprint(compact.trace) < 1024);
        ASSERT_TRUE(strstr(compact.text, "run{program} \"/lib/systemd/systemd-sysctl ") != NULL);
        check_text(compact.text, timed.text, __func__);
        run_free(&compact);
        run_free(&timed);
        rules_unref(rules);
}

int main(void)
{
        log_set_max_level(getenv("TEST_DEBUG") ? LOG_DEBUG : LOG_WARNING);
        fixture_setup(&fx);
        TEST_RUN(test_golden_add);
        TEST_RUN(test_times_and_generation);
        TEST_RUN(test_truncation);
        TEST_RUN(test_long_value);
        TEST_RUN(test_record_size);
        TEST_RUN(test_debian_net_size);
        fixture_teardown(&fx);
        return 0;
}
