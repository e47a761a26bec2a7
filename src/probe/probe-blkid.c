/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (single-threaded process) */
/* tudev-probe blkid: the libblkid half of the blkid builtin, moved out of the
 * daemon (why and how: builtins/blkid.c). The probe, the value conversions
 * and the choice of a GPT disk's root partition happen here, on the
 * untrusted on-disk data; the builtin imports the printed lines and reads the
 * boot loader's EFI variable itself (blkid-wire.h). Properties as systemd
 * 252's builtin: ID_FS_*, ID_PART_TABLE_*, ID_PART_ENTRY_*. */
#include <blkid/blkid.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "proto/blkid-wire.h"
#include "probe/probe.h"
#include "shared/macro.h"

/* libblkid 2.39 added the file system size and block size values
 * (FSSIZE, FSLASTBLOCK, FSBLOCKSIZE) behind this flag; older libraries
 * ignore the bit, so a prober built against older headers still asks a
 * newer library for them, as systemd 257 built on it does. */
#ifndef BLKID_SUBLKS_FSINFO
#define BLKID_SUBLKS_FSINFO (1 << 11)
#endif

#define BLKID_VALUE_MAX 256 /* systemd's buffer for converted values and keys */
#define SMALL_DISK_SIZE (1024 * 1440)
#define GPT_FLAG_NO_AUTO (UINT64_C(1) << 63)

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

static int emit_value(const char *name, const char *value)
{
        char s[BLKID_VALUE_MAX], key[BLKID_VALUE_MAX + 8];
        int r;

        for (size_t i = 0; i < ARRAY_SIZE(value_map); i++) {
                if (strcmp(name, value_map[i].name) != 0)
                        continue;
                switch (value_map[i].conv) {
                case 's':
                        blkid_safe_string(value, s, sizeof(s));
                        r = probe_emit(value_map[i].prop, s);
                        if (r < 0)
                                return r;
                        blkid_encode_string(value, s, sizeof(s));
                        snprintf(key, sizeof(key), "%s_ENC", value_map[i].prop);
                        return probe_emit(key, s);
                case 'e':
                        blkid_encode_string(value, s, sizeof(s));
                        return probe_emit(value_map[i].prop, s);
                default:
                        return probe_emit(value_map[i].prop, value);
                }
        }
        /* other partition entry values verbatim (SCHEME, UUID, FLAGS, NUMBER, ...) */
        if (strncmp(name, "PART_ENTRY_", strlen("PART_ENTRY_")) == 0) {
                /* systemd builds the key in a 256-byte buffer */
                snprintf(key, BLKID_VALUE_MAX, "ID_%s", name);
                return probe_emit(key, value);
        }
        return 0;
}

/* ---------------------------------------------------------------- GPT auto root */

static bool id128_is(const char *s, const char *ref)
{
        uint8_t a[16], b[16];

        return blkid_wire_parse_id128(s, a) >= 0 && blkid_wire_parse_id128(ref, b) >= 0 &&
               memcmp(a, b, 16) == 0;
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

/* A GPT disk: its ESP/XBOOTLDR partitions (.GPT_BOOT, in table order) and
 * the first (or newest by label) root partition of this architecture
 * without the no-auto flag (.GPT_ROOT). The builtin compares the former
 * with the partition the boot loader reported. */
static int emit_gpt_root(blkid_probe pr)
{
#ifdef GPT_ROOT_NATIVE
        _cleanup_free_ char *root_id = NULL, *root_label = NULL;
        blkid_partlist pl;
        int n, r;

        errno = 0;
        pl = blkid_probe_get_partitions(pr);
        if (!pl)
                return errno > 0 ? -errno : -ENOMEM;
        n = blkid_partlist_numof_partitions(pl);
        for (int i = 0; i < n; i++) {
                blkid_partition pp = blkid_partlist_get_partition(pl, i);
                const char *uuid, *type, *label;
                uint8_t id[16];

                if (!pp)
                        continue;
                uuid = blkid_partition_get_uuid(pp);
                type = blkid_partition_get_type_string(pp);
                label = blkid_partition_get_name(pp);
                if (!uuid || !type)
                        continue;
                if (id128_is(type, GPT_ESP) || id128_is(type, GPT_XBOOTLDR)) {
                        if (blkid_wire_parse_id128(uuid, id) < 0)
                                continue;
                        r = probe_emit(".GPT_BOOT", uuid);
                        if (r < 0)
                                return r;
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
        if (root_id)
                return probe_emit(".GPT_ROOT", root_id);
#else
        (void)pr;
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

static int emit_values(blkid_probe pr)
{
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
                r = emit_value(name, data);
                if (r < 0)
                        return r;
                if (strcmp(name, "PTTYPE") == 0 && strcmp(data, "gpt") == 0)
                        is_gpt = true;
        }
        if (is_gpt)
                (void)emit_gpt_root(pr);
        return 0;
}

static void free_probe(blkid_probe *pr)
{
        if (*pr)
                blkid_free_probe(*pr);
}

int probe_blkid(const struct probe_blkid_args *a, int fd)
{
        _cleanup_(free_probe) blkid_probe pr = NULL;
        int r;

        errno = 0;
        pr = blkid_new_probe();
        if (!pr)
                return probe_fail(errno > 0 ? -errno : -ENOMEM, "setup", -1);
        for (unsigned i = 0; i < a->n_hints; i++) {
                errno = 0;
                if (blkid_probe_set_hint(pr, a->hints[i], 0) < 0) {
                        r = errno > 0 ? -errno : -ENOMEM;
                        probe_log("failed to use '%s' probing hint", a->hints[i]);
                        return probe_fail(r, "hint", (int)i);
                }
        }
        blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_LABEL | BLKID_SUBLKS_UUID |
                                                  BLKID_SUBLKS_TYPE | BLKID_SUBLKS_SECTYPE |
                                                  BLKID_SUBLKS_FSINFO |
                                                  BLKID_SUBLKS_USAGE | BLKID_SUBLKS_VERSION);
        if (a->noraid)
                blkid_probe_filter_superblocks_usage(pr, BLKID_FLTR_NOTIN, BLKID_USAGE_RAID);
        errno = 0;
        if (blkid_probe_set_device(pr, fd, a->offset, 0) < 0)
                return probe_fail(errno > 0 ? -errno : -ENOMEM, "setup", -1);
        r = probe_superblocks(pr);
        if (r < 0) {
                probe_log("failed to probe superblocks of %s", a->devnode);
                return probe_fail(r, "probe", -1);
        }
        r = emit_values(pr);
        if (r < 0)
                return probe_fail(r, "probe", -1);
        return BLKID_EXIT_OK;
}
