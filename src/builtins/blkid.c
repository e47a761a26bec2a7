/* threads: any (one prober process per call; the lookup of the prober is done once) */
/* blkid: filesystem, partition table and partition entry properties
 * (../shared/docs/builtins.md §6), as systemd 252's builtin: ID_FS_*,
 * ID_PART_TABLE_*, ID_PART_ENTRY_*, ID_PART_GPT_AUTO_ROOT[_UUID]; options
 * --offset=BYTES (-o), --hint=NAME=VALUE (-H), --noraid (-R).
 *
 * libblkid parses untrusted on-disk data, so it does not run in the daemon:
 * this builtin runs `tudev-probe blkid ...` (src/probe/) through the event's
 * program spawner -- in udevd the exec helper, as for PROGRAM= -- and
 * imports the KEY=VALUE lines it prints after checking them (format and
 * limits: probe/blkid-wire.h). A prober that crashes, hangs past its
 * deadline or prints something else fails this builtin call only (logged as
 * a warning with the device and the signal); the event goes on. What stays
 * here: the options, the device's identity for the prober to check its node
 * against (device number, kind, DISKSEQ), the boot loader's EFI variable
 * for ID_PART_GPT_AUTO_ROOT_UUID, and ID_PART_GPT_AUTO_ROOT.
 *
 * The prober: `tudev-probe` beside the running binary (udevd and udevadm in
 * the build directory), else TUDEV_PROBE_PATH ($(libexecdir)/tudev/). Its
 * deadline: half the event timeout (so the rest of the event still has time),
 * at most the event's deadline; BLKID_PROBE_TIMEOUT_USEC without one. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "builtins/builtin-util.h"
#include "builtins/builtins-internal.h"
#include "device/device.h"
#include "probe/blkid-wire.h"
#include "rules/rules-exec.h"
#include "rules/udev-event.h"
#include "shared/fileio.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "shared/time-util.h"

#ifndef TUDEV_PROBE_PATH
#define TUDEV_PROBE_PATH "/usr/libexec/tudev/tudev-probe"
#endif
#define PROBE_NAME "tudev-probe"
#define BLKID_PROBE_TIMEOUT_USEC (90 * USEC_PER_SEC)
#define BLKID_CMD_MAX 16384 /* the spawner's command line limit */
#define BLKID_HINTS_MAX 64  /* as tudev-probe's */
#define EFI_LOADER_PART_UUID_VAR \
        "firmware/efi/efivars/LoaderDevicePartUUID-4a67b082-0a4c-41cf-b6c7-440b29bb8c4f"
#define EFIVAR_MAX 1024

/* ---------------------------------------------------------------- the prober */

/* Variables of udevd's environment the prober gets (its whole environment):
 * the test-only fault triggers, libblkid's debug switch, sanitizer options. */
static const char *const probe_env_keys[] = {
        "TUDEV_PROBE_CRASH_ON", "TUDEV_PROBE_HANG_ON", "LIBBLKID_DEBUG",
        "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", "TSAN_OPTIONS",
};

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static char probe_path[PATH_MAX];
static char *probe_env[ARRAY_SIZE(probe_env_keys) + 1];

static void probe_setup(void)
{
        char exe[PATH_MAX];
        size_t n = 0;
        ssize_t len;
        char *slash;

        snprintf(probe_path, sizeof(probe_path), "%s", TUDEV_PROBE_PATH);
        len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        if (len > 0) {
                exe[len] = '\0';
                slash = strrchr(exe, '/');
                if (slash && (size_t)(slash - exe) + sizeof("/" PROBE_NAME) <= sizeof(exe)) {
                        strcpy(slash + 1, PROBE_NAME);
                        if (access(exe, X_OK) == 0)
                                snprintf(probe_path, sizeof(probe_path), "%s", exe);
                }
        }
        for (size_t i = 0; i < ARRAY_SIZE(probe_env_keys); i++) {
                const char *v = getenv(probe_env_keys[i]);

                if (v && asprintf(&probe_env[n], "%s=%s", probe_env_keys[i], v) >= 0)
                        n++;
        }
        probe_env[n] = NULL;
        log_debug("blkid: prober %s", probe_path);
}

/* Append `word` to cmd as one word for the spawner's splitting (rules.md
 * §12.3: quotes group, nothing is escaped). A word with whitespace or quotes
 * (or an empty one) is quoted: runs without a single quote in single quotes,
 * a single quote in double quotes. 0 or -E2BIG. */
static int cmd_append(char *cmd, size_t size, size_t *len, const char *word)
{
        const char *p = word;
        size_t o = *len;

        if (o > 0) {
                if (o + 1 >= size)
                        return -E2BIG;
                cmd[o++] = ' ';
        }
        if (*word && !strpbrk(word, " \t\n\r'\"")) {
                size_t l = strlen(word);

                if (o + l >= size)
                        return -E2BIG;
                memcpy(cmd + o, word, l + 1);
                *len = o + l;
                return 0;
        }
        do {
                size_t run = strcspn(p, "'");

                if (run > 0 || !*word) {
                        if (o + run + 2 >= size)
                                return -E2BIG;
                        cmd[o++] = '\'';
                        memcpy(cmd + o, p, run);
                        o += run;
                        cmd[o++] = '\'';
                        p += run;
                }
                if (*p == '\'') {
                        if (o + 3 >= size)
                                return -E2BIG;
                        memcpy(cmd + o, "\"'\"", 3);
                        o += 3;
                        p++;
                }
        } while (*p);
        cmd[o] = '\0';
        *len = o;
        return 0;
}

/* ---------------------------------------------------------------- options, command line */

struct blkid_opts {
        int64_t offset;
        bool noraid;
        const char *hints[BLKID_HINTS_MAX]; /* borrowed from argv */
        unsigned n_hints;
};

static int parse_options(int argc, char *argv[], struct blkid_opts *o)
{
        static const struct builtin_option options[] = {
                { "offset", true, 'o' },
                { "hint", true, 'H' },
                { "noraid", false, 'R' },
                { NULL, false, 0 },
        };
        struct builtin_getopt st = { 0 };
        long long v;
        int c, r;

        while ((c = builtin_getopt_long(&st, argc, argv, "o:H:R", options)) != -1) {
                switch (c) {
                case 'H': /* checked by libblkid in the prober */
                        if (o->n_hints >= BLKID_HINTS_MAX)
                                return log_error_errno(-E2BIG, "Too many probing hints");
                        o->hints[o->n_hints++] = st.optarg;
                        break;
                case 'o':
                        r = parse_atolli(st.optarg, &v);
                        if (r < 0)
                                return log_error_errno(r, "Failed to parse '%s' as an integer: %m",
                                                       st.optarg);
                        if (v < 0)
                                return log_error_errno(-EINVAL, "Invalid offset %lld", v);
                        o->offset = v;
                        break;
                case 'R':
                        o->noraid = true;
                        break;
                default: /* unknown options are ignored, as in systemd */
                        break;
                }
        }
        return 0;
}

/* One call: the command line, the prober's output and its parsed lines
 * (pointing into out). Too big for a worker's stack. */
struct blkid_call {
        char cmd[BLKID_CMD_MAX];
        char out[BLKID_WIRE_OUT_MAX + 1];
        struct {
                const char *key, *value;
        } rec[BLKID_WIRE_LINES_MAX];
        size_t n_rec;
};

/* --diskseq: like systemd's sd_device_open(), an initialized device's node
 * must still be the disk with the event's DISKSEQ (0: the property is
 * invalid, which fails once the node is open). 0: no check. */
static int want_diskseq(struct udev_event *ev, unsigned long long *ret)
{
        const char *seq, *ignore;
        unsigned long long want;

        if (!device_is_initialized(ev->dev))
                return 0;
        ignore = proplist_get(&ev->props, "ID_IGNORE_DISKSEQ");
        if (ignore && parse_boolean(ignore) > 0)
                return 0;
        seq = proplist_get(&ev->props, "DISKSEQ");
        if (!seq)
                return 0;
        *ret = parse_atollu_full(seq, 10, &want) < 0 ? 0 : want;
        return 1;
}

static int build_cmd(struct udev_event *ev, const char *devnode, const struct blkid_opts *o,
                     char *cmd, size_t size)
{
        const char *subsystem = NULL;
        unsigned major, minor;
        unsigned long long seq;
        size_t len = 0;
        char arg[64];
        int r;

        r = device_get_devnum(ev->dev, &major, &minor);
        if (r < 0)
                return r == -ENOENT ? -ENOEXEC : r;
        (void)device_get_subsystem(ev->dev, &subsystem);
        r = cmd_append(cmd, size, &len, probe_path);
        if (r >= 0)
                r = cmd_append(cmd, size, &len, "blkid");
        snprintf(arg, sizeof(arg), "--devnum=%u:%u", major, minor);
        if (r >= 0)
                r = cmd_append(cmd, size, &len, arg);
        if (r >= 0)
                r = cmd_append(cmd, size, &len, subsystem && streq(subsystem, "block") ?
                                                        "--kind=block" : "--kind=char");
        if (r >= 0 && want_diskseq(ev, &seq) > 0) {
                snprintf(arg, sizeof(arg), "--diskseq=%llu", seq);
                r = cmd_append(cmd, size, &len, arg);
        }
        if (r >= 0 && o->offset != 0) {
                snprintf(arg, sizeof(arg), "--offset=%" PRIi64, o->offset);
                r = cmd_append(cmd, size, &len, arg);
        }
        if (r >= 0 && o->noraid)
                r = cmd_append(cmd, size, &len, "--noraid");
        for (unsigned i = 0; r >= 0 && i < o->n_hints; i++) {
                char h[BLKID_CMD_MAX];

                if (snprintf(h, sizeof(h), "--hint=%s", o->hints[i]) >= (int)sizeof(h))
                        return -E2BIG;
                r = cmd_append(cmd, size, &len, h);
        }
        if (r >= 0)
                r = cmd_append(cmd, size, &len, "--");
        if (r >= 0)
                r = cmd_append(cmd, size, &len, devnode);
        return r;
}

/* Half the event's time from now, never past its deadline. */
static uint64_t probe_deadline(const struct udev_event *ev)
{
        uint64_t now = now_usec(CLOCK_MONOTONIC), end;

        if (ev->timeout_usec == 0 || ev->timeout_usec == UINT64_MAX)
                return now + BLKID_PROBE_TIMEOUT_USEC;
        end = ev->start_usec + ev->timeout_usec;
        return MIN(now + ev->timeout_usec / 2, end);
}

/* Check and split every line of the output (in place). 0 or -EBADMSG. */
static int parse_output(struct blkid_call *c)
{
        size_t len = strlen(c->out), pos = 0;
        char *key, *value;
        int r;

        c->n_rec = 0;
        while ((r = blkid_wire_next(c->out, len, &pos, &key, &value)) > 0) {
                if (c->n_rec >= ARRAY_SIZE(c->rec))
                        return -EBADMSG;
                c->rec[c->n_rec].key = key;
                c->rec[c->n_rec].value = value;
                c->n_rec++;
        }
        return r;
}

static const char *directive(const struct blkid_call *c, const char *key)
{
        for (size_t i = 0; i < c->n_rec; i++)
                if (streq(c->rec[i].key, key))
                        return c->rec[i].value;
        return NULL;
}

/* Exit status 1: the error the prober reported, logged as the builtin did
 * when libblkid ran in-process. */
static int prober_failed(const struct blkid_call *c, const struct blkid_opts *o,
                         const char *devnode)
{
        const char *v = directive(c, ".ERRNO"), *stage = directive(c, ".STAGE");
        unsigned err = 0, hint = UINT_MAX;

        if (!v || parse_atou(v, &err) < 0 || err == 0 || err > BLKID_WIRE_ERRNO_MAX)
                err = EIO;
        v = directive(c, ".HINT");
        if (stage && streq(stage, "hint") && v && parse_atou(v, &hint) >= 0 &&
            hint < o->n_hints)
                return log_error_errno(-(int)err, "Failed to use '%s' probing hint: %m",
                                       o->hints[hint]);
        if (stage && streq(stage, "probe"))
                return log_debug_errno(-(int)err, "Failed to probe superblocks: %m");
        if (stage && streq(stage, "open"))
                return log_debug_errno(-(int)err, "Failed to open block device %s: %m",
                                       devnode);
        return log_debug_errno(-(int)err, "%s: blkid prober failed: %m", devnode);
}

/* Run the prober; 0 with c->rec filled (exit status 0), or -errno after
 * logging why. */
static int run_prober(struct udev_event *ev, struct blkid_call *c, const struct blkid_opts *o,
                      const char *devnode)
{
        struct spawn_direct sd = { .timeout_signal = SIGKILL };
        /* udevadm test-builtin has no spawner: start the prober directly */
        struct udev_spawner sp = ev->spawner.spawn ? ev->spawner : spawn_direct_spawner(&sd);
        uint64_t start = now_usec(CLOCK_MONOTONIC);
        bool truncated = false;
        int r, q;

        r = sp.spawn(sp.userdata, c->cmd, probe_env, false, probe_deadline(ev), c->out,
                     sizeof(c->out), &truncated);
        if (r == -ETIME)
                return log_warning_errno(r, "%s: blkid prober %s did not finish in %.1f s and "
                                         "was killed; no properties imported", devnode,
                                         probe_path,
                                         (double)(now_usec(CLOCK_MONOTONIC) - start) / 1e6);
        if (r < 0)
                return log_error_errno(r, "%s: Failed to run blkid prober %s: %m", devnode,
                                       probe_path);
        if (r > 128 && r < 128 + SIGRTMAX + 1) {
                log_warning("%s: blkid prober %s was killed by signal SIG%s; no properties "
                            "imported", devnode, probe_path, sigabbrev_np(r - 128) ?: "?");
                return -EIO;
        }
        if (r == BLKID_EXIT_USAGE)
                return log_error_errno(-EINVAL, "%s: blkid prober %s refused its command line",
                                       devnode, probe_path);
        if (r != BLKID_EXIT_OK && r != BLKID_EXIT_FAILED) {
                log_warning("%s: blkid prober %s exited with status %d; no properties imported",
                            devnode, probe_path, r);
                return -EIO;
        }
        q = truncated ? -EBADMSG : parse_output(c);
        if (q < 0)
                return log_warning_errno(q, "%s: blkid prober %s printed malformed output; no "
                                         "properties imported", devnode, probe_path);
        return r == BLKID_EXIT_OK ? 0 : prober_failed(c, o, devnode);
}

/* ---------------------------------------------------------------- import */

/* The ESP/XBOOTLDR partition UUID the boot loader reported (EFI variable
 * LoaderDevicePartUUID: 4 attribute bytes, then a UTF-16LE string). */
static int loader_part_uuid(struct udev_event *ev, uint8_t id[16])
{
        const char *sys = device_ctx_roots(ev->ctx)->sys;
        _cleanup_free_ char *buf = NULL;
        char path[512], str[64];
        size_t len, n = 0;
        int r;

        snprintf(path, sizeof(path), "%s/firmware/efi", sys);
        if (access(path, F_OK) < 0)
                return -EOPNOTSUPP; /* not booted with EFI */
        snprintf(path, sizeof(path), "%s/" EFI_LOADER_PART_UUID_VAR, sys);
        r = read_file_bounded(path, EFIVAR_MAX, &buf, &len);
        if (r < 0)
                return r;
        for (size_t i = 4; i + 1 < len && n + 1 < sizeof(str); i += 2) {
                if (buf[i] == 0 && buf[i + 1] == 0)
                        break;
                if (buf[i + 1] != 0)
                        return -EINVAL;
                str[n++] = buf[i];
        }
        str[n] = '\0';
        return blkid_wire_parse_id128(str, id);
}

/* ID_PART_GPT_AUTO_ROOT_UUID: the disk's root partition (.GPT_ROOT) if one of
 * its ESP/XBOOTLDR partitions (.GPT_BOOT) is the one we booted from. */
static int import_gpt_root(struct udev_event *ev, const struct blkid_call *c, bool test)
{
        const char *root = directive(c, ".GPT_ROOT");
        uint8_t booted[16];
        bool have_booted = false;

        if (!root)
                return 0;
        for (size_t i = 0; i < c->n_rec; i++) {
                uint8_t id[16];

                if (!streq(c->rec[i].key, ".GPT_BOOT") ||
                    blkid_wire_parse_id128(c->rec[i].value, id) < 0)
                        continue;
                if (!have_booted) {
                        if (loader_part_uuid(ev, booted) < 0)
                                return 0;
                        have_booted = true;
                }
                if (memcmp(id, booted, 16) == 0)
                        return builtin_add_property(ev, test, "ID_PART_GPT_AUTO_ROOT_UUID",
                                                    root);
        }
        return 0;
}

static int import_properties(struct udev_event *ev, const struct blkid_call *c, bool test)
{
        const char *p = proplist_get(&ev->props, "ID_PART_GPT_AUTO_ROOT_UUID");
        _cleanup_free_ char *root = p ? strdup(p) : NULL;
        bool is_gpt = false;
        int r;

        if (p && !root)
                return -ENOMEM;
        for (size_t i = 0; i < c->n_rec; i++) {
                const char *key = c->rec[i].key, *value = c->rec[i].value;

                if (key[0] == '.')
                        continue;
                r = builtin_add_property(ev, test, key, value);
                if (r < 0)
                        return r;
                if (streq(key, "ID_PART_TABLE_TYPE") && streq(value, "gpt"))
                        is_gpt = true;
                /* a partition that is the root partition its disk announced */
                if (root && streq(key, "ID_PART_ENTRY_UUID") && streq(value, root)) {
                        r = builtin_add_property(ev, test, "ID_PART_GPT_AUTO_ROOT", "1");
                        if (r < 0)
                                return r;
                }
        }
        if (is_gpt)
                (void)import_gpt_root(ev, c, test);
        return 0;
}

int builtin_blkid(struct udev_event *ev, int argc, char *argv[], bool test)
{
        _cleanup_free_ struct blkid_call *c = NULL;
        struct blkid_opts o = { 0 };
        const char *devnode;
        int r;

        r = parse_options(argc, argv, &o);
        if (r < 0)
                return r;
        r = device_get_devnode(ev->dev, &devnode);
        if (r < 0)
                return log_debug_errno(r, "%s: Failed to get device name: %m",
                                       device_sysname(ev->dev));
        (void)pthread_once(&probe_once, probe_setup);
        c = malloc(sizeof(*c));
        if (!c)
                return -ENOMEM;
        r = build_cmd(ev, devnode, &o, c->cmd, sizeof(c->cmd));
        if (r < 0)
                return log_debug_errno(r, "%s: Failed to prepare the blkid prober: %m", devnode);
        log_debug("Probe %s with %sraid and offset=%" PRIi64, devnode, o.noraid ? "no" : "",
                  o.offset);
        r = run_prober(ev, c, &o, devnode);
        if (r < 0)
                return r;
        return import_properties(ev, c, test);
}
