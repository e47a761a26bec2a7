/* threads: any (one libblkid probe per call, nothing shared) */
/* blkid: filesystem, partition table and partition entry properties through
 * libblkid (../shared/docs/builtins.md §6), as systemd 252's builtin:
 * ID_FS_*, ID_PART_TABLE_*, ID_PART_ENTRY_*, ID_PART_GPT_AUTO_ROOT[_UUID];
 * options --offset=BYTES (-o), --hint=NAME=VALUE (-H), --noraid (-R). */
#include <blkid/blkid.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "builtins/builtin-util.h"
#include "builtins/builtins-internal.h"
#include "device/device.h"
#include "rules/udev-event.h"
#include "shared/fileio.h"
#include "shared/log.h"
#include "shared/macro.h"

#define BLKID_VALUE_MAX 256 /* systemd's buffer for converted values */
#define SMALL_DISK_SIZE (1024 * 1440)
#define GPT_FLAG_NO_AUTO (UINT64_C(1) << 63)
#define EFI_LOADER_PART_UUID_VAR \
        "firmware/efi/efivars/LoaderDevicePartUUID-4a67b082-0a4c-41cf-b6c7-440b29bb8c4f"
#define EFIVAR_MAX 1024

#define GPT_ESP "c12a7328-f81f-11d2-ba4b-00a0c93ec93b"
#define GPT_XBOOTLDR "bc13c2ff-59e6-4262-a352-b275fd6f7172"
#if defined(__x86_64__)
#define GPT_ROOT_NATIVE "4f68bce3-e8cd-4db1-96e7-fbcaf984b709"
#elif defined(__i386__)
#define GPT_ROOT_NATIVE "44479540-f297-41b2-9af7-d131d5f0458a"
#elif defined(__aarch64__) && !defined(__AARCH64EB__)
#define GPT_ROOT_NATIVE "b921b045-1df0-41c3-af44-4c6f280d3fae"
#elif defined(__arm__) && !defined(__ARMEB__)
#define GPT_ROOT_NATIVE "69dad710-2ce4-4e3c-b16c-21a1d49abed3"
#elif defined(__loongarch64)
#define GPT_ROOT_NATIVE "77055800-792c-4f94-b39a-98c91b762bb6"
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define GPT_ROOT_NATIVE "c31c45e6-3f39-412e-80fb-4809c4980599"
#elif defined(__riscv) && __riscv_xlen == 64
#define GPT_ROOT_NATIVE "72ec70a6-cf74-40e6-bd49-4bda08e8f224"
#elif defined(__s390x__)
#define GPT_ROOT_NATIVE "5eead9a9-fe09-4a1e-a1d7-520d00531306"
#endif

/* libblkid value name -> property; `conv`: 0 verbatim, 'e' encoded, 's' safe + _ENC */
static const struct {
        const char *name;
        const char *prop;
        char conv;
} value_map[] = {
        { "TYPE", "ID_FS_TYPE", 0 },
        { "USAGE", "ID_FS_USAGE", 0 },
        { "VERSION", "ID_FS_VERSION", 0 },
        { "UUID", "ID_FS_UUID", 's' },
        { "UUID_SUB", "ID_FS_UUID_SUB", 's' },
        { "LABEL", "ID_FS_LABEL", 's' },
        { "FSSIZE", "ID_FS_SIZE", 0 },
        { "FSLASTBLOCK", "ID_FS_LASTBLOCK", 0 },
        { "FSBLOCKSIZE", "ID_FS_BLOCKSIZE", 0 },
        { "PTTYPE", "ID_PART_TABLE_TYPE", 0 },
        { "PTUUID", "ID_PART_TABLE_UUID", 0 },
        { "PART_ENTRY_NAME", "ID_PART_ENTRY_NAME", 'e' },
        { "PART_ENTRY_TYPE", "ID_PART_ENTRY_TYPE", 'e' },
        { "SYSTEM_ID", "ID_FS_SYSTEM_ID", 'e' },
        { "PUBLISHER_ID", "ID_FS_PUBLISHER_ID", 'e' },
        { "APPLICATION_ID", "ID_FS_APPLICATION_ID", 'e' },
        { "BOOT_SYSTEM_ID", "ID_FS_BOOT_SYSTEM_ID", 'e' },
        { "VOLUME_ID", "ID_FS_VOLUME_ID", 'e' },
        { "LOGICAL_VOLUME_ID", "ID_FS_LOGICAL_VOLUME_ID", 'e' },
        { "VOLUME_SET_ID", "ID_FS_VOLUME_SET_ID", 'e' },
        { "DATA_PREPARER_ID", "ID_FS_DATA_PREPARER_ID", 'e' },
};

static int add_value(struct udev_event *ev, bool test, const char *name, const char *value)
{
        char s[BLKID_VALUE_MAX], key[BLKID_VALUE_MAX + 8];
        int r;

        for (size_t i = 0; i < ARRAY_SIZE(value_map); i++) {
                if (!streq(name, value_map[i].name))
                        continue;
                switch (value_map[i].conv) {
                case 's':
                        blkid_safe_string(value, s, sizeof(s));
                        r = builtin_add_property(ev, test, value_map[i].prop, s);
                        if (r < 0)
                                return r;
                        blkid_encode_string(value, s, sizeof(s));
                        snprintf(key, sizeof(key), "%s_ENC", value_map[i].prop);
                        return builtin_add_property(ev, test, key, s);
                case 'e':
                        blkid_encode_string(value, s, sizeof(s));
                        return builtin_add_property(ev, test, value_map[i].prop, s);
                default:
                        return builtin_add_property(ev, test, value_map[i].prop, value);
                }
        }
        /* other partition entry values verbatim (SCHEME, UUID, FLAGS, NUMBER, ...) */
        if (strneq(name, "PART_ENTRY_", STRLEN("PART_ENTRY_"))) {
                /* systemd builds the key in a 256-byte buffer */
                snprintf(key, BLKID_VALUE_MAX, "ID_%s", name);
                return builtin_add_property(ev, test, key, value);
        }
        return 0;
}

/* ---------------------------------------------------------------- GPT auto root */

/* 16 bytes from "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" or 32 plain hex digits. */
static int parse_id128(const char *s, uint8_t id[16])
{
        size_t n = 0;
        bool dashes;

        if (!s)
                return -EINVAL;
        dashes = strlen(s) == 36;
        if (!dashes && strlen(s) != 32)
                return -EINVAL;
        for (size_t i = 0; n < 16; i += 2) {
                int hi, lo;

                if (dashes && (i == 8 || i == 13 || i == 18 || i == 23)) {
                        if (s[i] != '-')
                                return -EINVAL;
                        i++;
                }
                hi = s[i] >= '0' && s[i] <= '9' ? s[i] - '0' :
                     (s[i] | 0x20) >= 'a' && (s[i] | 0x20) <= 'f' ? (s[i] | 0x20) - 'a' + 10 : -1;
                lo = s[i + 1] >= '0' && s[i + 1] <= '9' ? s[i + 1] - '0' :
                     (s[i + 1] | 0x20) >= 'a' && (s[i + 1] | 0x20) <= 'f' ?
                     (s[i + 1] | 0x20) - 'a' + 10 : -1;
                if (hi < 0 || lo < 0)
                        return -EINVAL;
                id[n++] = (uint8_t)(hi << 4 | lo);
        }
        return 0;
}

static bool id128_is(const char *s, const char *ref)
{
        uint8_t a[16], b[16];

        return parse_id128(s, a) >= 0 && parse_id128(ref, b) >= 0 && memcmp(a, b, 16) == 0;
}

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
        return parse_id128(str, id);
}

static bool version_char(char c)
{
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
               c == '~' || c == '-' || c == '^' || c == '.';
}

static int cmp_int(int a, int b)
{
        return (a > b) - (a < b);
}

/* Version order of partition labels (the "UAPI version format" systemd uses:
 * '~' pre-release < end < '-' release < '^' patch < '.' point < segment;
 * numeric segments compare by value and beat alphabetic ones). >0: a newer. */
static int version_cmp(const char *a, const char *b)
{
        static const char prefixes[] = "-^.";

        a = a ? a : "";
        b = b ? b : "";
        for (;;) {
                const char *ea, *eb;
                int r;

                while (*a && !version_char(*a))
                        a++;
                while (*b && !version_char(*b))
                        b++;
                if (*a == '~' || *b == '~') {
                        r = cmp_int(*a != '~', *b != '~');
                        if (r)
                                return r;
                        a++, b++;
                }
                if (!*a || !*b)
                        return cmp_int((unsigned char)*a, (unsigned char)*b);
                for (const char *p = prefixes; *p; p++) {
                        if (*a != *p && *b != *p)
                                continue;
                        r = cmp_int(*a != *p, *b != *p);
                        if (r)
                                return r;
                        a++, b++;
                }
                if ((*a >= '0' && *a <= '9') || (*b >= '0' && *b <= '9')) {
                        for (ea = a; *ea >= '0' && *ea <= '9'; ea++)
                                ;
                        for (eb = b; *eb >= '0' && *eb <= '9'; eb++)
                                ;
                        r = cmp_int(a != ea, b != eb);
                        if (r)
                                return r;
                        while (*a == '0')
                                a++;
                        while (*b == '0')
                                b++;
                        r = cmp_int((int)(ea - a), (int)(eb - b));
                        if (r)
                                return r;
                        r = cmp_int(strncmp(a, b, (size_t)(ea - a)), 0);
                } else {
                        for (ea = a; (*ea | 0x20) >= 'a' && (*ea | 0x20) <= 'z'; ea++)
                                ;
                        for (eb = b; (*eb | 0x20) >= 'a' && (*eb | 0x20) <= 'z'; eb++)
                                ;
                        r = cmp_int(strncmp(a, b, (size_t)MIN(ea - a, eb - b)), 0);
                        if (!r)
                                r = cmp_int((int)(ea - a), (int)(eb - b));
                }
                if (r)
                        return r;
                a = ea;
                b = eb;
        }
}

/* On a GPT disk holding the ESP/XBOOTLDR we booted from: the UUID of the
 * first (or newest by label) root partition of this architecture. */
static int find_gpt_root(struct udev_event *ev, blkid_probe pr, bool test)
{
#ifdef GPT_ROOT_NATIVE
        _cleanup_free_ char *root_id = NULL, *root_label = NULL;
        bool found_boot = false;
        blkid_partlist pl;
        int n;

        errno = 0;
        pl = blkid_probe_get_partitions(pr);
        if (!pl)
                return errno > 0 ? -errno : -ENOMEM;
        n = blkid_partlist_numof_partitions(pl);
        for (int i = 0; i < n; i++) {
                blkid_partition pp = blkid_partlist_get_partition(pl, i);
                const char *uuid, *type, *label;

                if (!pp)
                        continue;
                uuid = blkid_partition_get_uuid(pp);
                type = blkid_partition_get_type_string(pp);
                label = blkid_partition_get_name(pp);
                if (!uuid || !type)
                        continue;
                if (id128_is(type, GPT_ESP) || id128_is(type, GPT_XBOOTLDR)) {
                        uint8_t id[16], booted[16];
                        int r;

                        if (parse_id128(uuid, id) < 0)
                                continue;
                        r = loader_part_uuid(ev, booted);
                        if (r < 0)
                                return r;
                        if (memcmp(id, booted, 16) == 0)
                                found_boot = true;
                } else if (id128_is(type, GPT_ROOT_NATIVE)) {
                        if (blkid_partition_get_flags(pp) & GPT_FLAG_NO_AUTO)
                                continue;
                        if (root_id && version_cmp(label, root_label) <= 0)
                                continue;
                        free(root_id);
                        free(root_label);
                        root_id = strdup(uuid);
                        root_label = label ? strdup(label) : NULL;
                        if (!root_id || (label && !root_label))
                                return -ENOMEM;
                }
        }
        if (found_boot && root_id)
                return builtin_add_property(ev, test, "ID_PART_GPT_AUTO_ROOT_UUID", root_id);
#else
        (void)ev, (void)pr, (void)test;
#endif
        return 0;
}

/* ---------------------------------------------------------------- probing */

/* Small whole disks (floppies) with a partition table: no filesystem probe.
 * Then partitions with entry details + superblocks, safe probe:
 * 0 found, 1 nothing, <0 error or ambiguous. */
static int probe_superblocks(blkid_probe pr)
{
        struct stat st;
        int r;

        if (fstat(blkid_probe_get_fd(pr), &st) < 0)
                return -errno;
        blkid_probe_enable_partitions(pr, 1);
        if (!S_ISCHR(st.st_mode) && blkid_probe_get_size(pr) <= SMALL_DISK_SIZE &&
            blkid_probe_is_wholedisk(pr)) {
                blkid_probe_enable_superblocks(pr, 0);
                r = blkid_do_fullprobe(pr);
                if (r < 0)
                        return r;
                if (blkid_probe_lookup_value(pr, "PTTYPE", NULL, NULL) == 0)
                        return 0;
        }
        blkid_probe_set_partitions_flags(pr, BLKID_PARTS_ENTRY_DETAILS);
        blkid_probe_enable_superblocks(pr, 1);
        return blkid_do_safeprobe(pr);
}

/* systemd's sd_device_open(): the node must be the device's (type and
 * number), then reopened with `flags`; an initialized device's DISKSEQ must
 * match the node's. */
static int open_device(struct udev_event *ev, const char *devnode, int flags)
{
        _cleanup_close_ int fd = -1;
        const char *subsystem = NULL, *seq, *ignore;
        unsigned major, minor;
        char proc[64];
        struct stat st;
        int fd2, r;

        r = device_get_devnum(ev->dev, &major, &minor);
        if (r < 0)
                return r == -ENOENT ? -ENOEXEC : r;
        (void)device_get_subsystem(ev->dev, &subsystem);
        fd = open(devnode, O_CLOEXEC | O_NOFOLLOW | O_PATH);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (st.st_rdev != makedev(major, minor))
                return -ENXIO;
        if (subsystem && streq(subsystem, "block") ? !S_ISBLK(st.st_mode) : !S_ISCHR(st.st_mode))
                return -ENXIO;
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        fd2 = open(proc, flags);
        if (fd2 < 0)
                return -errno;
        if (!device_is_initialized(ev->dev))
                return fd2;
        ignore = proplist_get(&ev->props, "ID_IGNORE_DISKSEQ");
        if (ignore && parse_boolean(ignore) > 0)
                return fd2;
        seq = proplist_get(&ev->props, "DISKSEQ");
        if (seq) {
                unsigned long long want, have = 0;

                if (parse_atollu_full(seq, 10, &want) < 0 || want == 0) {
                        safe_close(fd2);
                        return -EINVAL;
                }
                if (ioctl(fd2, BLKGETDISKSEQ, &have) < 0) {
                        r = -errno;
                        safe_close(fd2);
                        return r;
                }
                if (have != want) {
                        safe_close(fd2);
                        return -ENXIO;
                }
        }
        return fd2;
}

struct blkid_opts {
        int64_t offset;
        bool noraid;
};

static int parse_options(blkid_probe pr, int argc, char *argv[], struct blkid_opts *o)
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
                case 'H':
                        errno = 0;
                        if (blkid_probe_set_hint(pr, st.optarg, 0) < 0) {
                                r = errno > 0 ? -errno : -ENOMEM;
                                return log_error_errno(r, "Failed to use '%s' probing hint: %m",
                                                       st.optarg);
                        }
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

static void free_probe(blkid_probe *pr)
{
        if (*pr)
                blkid_free_probe(*pr);
}

static int report_values(struct udev_event *ev, blkid_probe pr, bool test)
{
        const char *root = proplist_get(&ev->props, "ID_PART_GPT_AUTO_ROOT_UUID");
        bool is_gpt = false;
        int n, r;

        errno = 0;
        n = blkid_probe_numof_values(pr);
        if (n < 0)
                return errno > 0 ? -errno : -ENOMEM;
        for (int i = 0; i < n; i++) {
                const char *name, *data;

                if (blkid_probe_get_value(pr, i, &name, &data, NULL) < 0)
                        continue;
                r = add_value(ev, test, name, data);
                if (r < 0)
                        return r;
                if (streq(name, "PTTYPE") && streq(data, "gpt"))
                        is_gpt = true;
                /* a partition that is the root partition its disk announced */
                if (root && streq(name, "PART_ENTRY_UUID") && streq(data, root)) {
                        r = builtin_add_property(ev, test, "ID_PART_GPT_AUTO_ROOT", "1");
                        if (r < 0)
                                return r;
                }
        }
        if (is_gpt)
                (void)find_gpt_root(ev, pr, test);
        return 0;
}

int builtin_blkid(struct udev_event *ev, int argc, char *argv[], bool test)
{
        _cleanup_(free_probe) blkid_probe pr = NULL;
        struct blkid_opts o = { 0 };
        _cleanup_close_ int fd = -1;
        const char *devnode;
        int r;

        errno = 0;
        pr = blkid_new_probe();
        if (!pr)
                return errno > 0 ? -errno : -ENOMEM;
        r = parse_options(pr, argc, argv, &o);
        if (r < 0)
                return r;
        blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_LABEL | BLKID_SUBLKS_UUID |
                                                  BLKID_SUBLKS_TYPE | BLKID_SUBLKS_SECTYPE |
#ifdef BLKID_SUBLKS_FSINFO
                                                  BLKID_SUBLKS_FSINFO |
#endif
                                                  BLKID_SUBLKS_USAGE | BLKID_SUBLKS_VERSION);
        if (o.noraid)
                blkid_probe_filter_superblocks_usage(pr, BLKID_FLTR_NOTIN, BLKID_USAGE_RAID);

        r = device_get_devnode(ev->dev, &devnode);
        if (r < 0)
                return log_debug_errno(r, "%s: Failed to get device name: %m",
                                       device_sysname(ev->dev));
        fd = open_device(ev, devnode, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        if (fd < 0) {
                /* the device went away: not an error */
                bool absent = fd == -ENODEV || fd == -ENXIO || fd == -ENOENT;

                log_debug_errno(fd, "Failed to open block device %s%s: %m", devnode,
                                absent ? ", ignoring" : "");
                return absent ? 0 : fd;
        }
        errno = 0;
        if (blkid_probe_set_device(pr, fd, o.offset, 0) < 0)
                return errno > 0 ? -errno : -ENOMEM;
        log_debug("Probe %s with %sraid and offset=%" PRIi64, devnode, o.noraid ? "no" : "",
                  o.offset);
        r = probe_superblocks(pr);
        if (r < 0)
                return log_debug_errno(r, "Failed to probe superblocks: %m");
        return report_values(ev, pr, test);
}
