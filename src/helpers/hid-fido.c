/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (no state outside the call) */
/* fido_id's report descriptor walk and parent lookup (hid-fido.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "helpers/hid-fido.h"
#include "shared/log.h"
#include "shared/macro.h"

#define ITEM_LONG 0xfe /* first byte of a long item */
#define TYPE_GLOBAL 1
#define TYPE_LOCAL 2
#define TAG_USAGE_PAGE 0 /* global */
#define TAG_USAGE 0      /* local */
#define USAGE_FIDO_CTAPHID 0xf1d00001u
#define SYSFS_MAGIC 0x62656572

int hid_fido_is_token(const uint8_t *desc, size_t len)
{
        uint32_t usage = 0;

        for (size_t pos = 0; pos < len;) {
                unsigned tag, type;
                size_t size;
                uint32_t value = 0;

                if (desc[pos] == ITEM_LONG) {
                        /* tag byte, data size, long tag, data: nothing in it for us */
                        if (pos + 1 >= len)
                                return -EINVAL;
                        pos += (size_t)desc[pos + 1] + 3;
                        continue;
                }

                /* short item: tag (bits 7-4), type (3-2), size code (1-0: 0, 1, 2, 4 bytes) */
                tag = desc[pos] >> 4;
                type = (desc[pos] >> 2) & 3;
                size = (desc[pos] & 3) == 3 ? 4 : desc[pos] & 3;
                pos++;
                if (size > len - pos)
                        return -EINVAL;
                for (size_t i = 0; i < size; i++)
                        value |= (uint32_t)desc[pos + i] << (8 * i);
                pos += size;

                if (type == TYPE_GLOBAL && tag == TAG_USAGE_PAGE) {
                        if (size > 2)
                                return -EINVAL;
                        usage = (value & 0xffff) << 16;
                }
                if (type == TYPE_LOCAL && tag == TAG_USAGE) {
                        /* a 4-byte usage carries its own page */
                        usage = size == 4 ? value : (usage & 0xffff0000u) | (value & 0xffff);
                        if (usage == USAGE_FIDO_CTAPHID)
                                return 1;
                }
        }
        return 0;
}

int hid_device_syspath(const char *root, const char *candidate, char **ret)
{
        _cleanup_free_ char *real = NULL, *devices = NULL;
        _cleanup_close_ int fd = -1;
        const char *env = getenv("SYSTEMD_DEVICE_VERIFY_SYSFS");
        size_t rl = strlen(root);
        struct stat st;

        real = realpath(candidate, NULL);
        if (!real)
                return errno == ENOENT ? -ENODEV : negative_errno();
        if (strncmp(real, root, rl) != 0 || (real[rl] != '/' && real[rl] != '\0'))
                return -ENODEV;
        fd = open(real, O_PATH | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? -ENODEV : negative_errno();
        if (asprintf(&devices, "%s/devices", root) < 0)
                return -ENOMEM;
        /* <root>/devices and below (path components, as sd-device compares) */
        if (strncmp(real, devices, strlen(devices)) == 0 &&
            (real[strlen(devices)] == '/' || real[strlen(devices)] == '\0')) {
                /* a proper device has a uevent file */
                if (faccessat(fd, "uevent", F_OK, 0) < 0)
                        return errno == ENOENT ? -ENODEV : negative_errno();
        } else {
                if (fstat(fd, &st) < 0)
                        return negative_errno();
                if (!S_ISDIR(st.st_mode))
                        return -ENODEV;
        }
        /* only sysfs, unless told otherwise (as sd-device, for test trees) */
        if (!env || !(streq(env, "0") || streq(env, "no") || streq(env, "n") ||
                      streq(env, "false") || streq(env, "f") || streq(env, "off"))) {
                struct statfs sf;

                if (fstatfs(fd, &sf) < 0)
                        return negative_errno();
                if ((unsigned long)sf.f_type != SYSFS_MAGIC)
                        return -ENODEV;
        }
        *ret = TAKE_PTR(real);
        return 0;
}

int hid_parent_syspath(const char *root, const char *syspath, char **ret)
{
        _cleanup_free_ char *path = strdup(syspath);

        if (!path)
                return -ENOMEM;
        for (;;) {
                char *slash = strrchr(path, '/');
                int r;

                /* drop the last component (and trailing slashes) */
                while (slash && slash > path && slash[1] == '\0') {
                        *slash = '\0';
                        slash = strrchr(path, '/');
                }
                if (!slash || slash == path)
                        return -ENODEV;
                *slash = '\0';
                if (streq(path, root))
                        return -ENODEV;
                r = hid_device_syspath(root, path, ret);
                if (r != -ENODEV)
                        return r;
        }
}
