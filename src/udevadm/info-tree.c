/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (udevadm is single-threaded) */
/* udevadm info --export-db, --tree and --attribute-walk. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/log.h"
#include "shared/macro.h"
#include "udevadm/device-enum.h"
#include "udevadm/info-output.h"
#include "udevadm/info-tree.h"

#define TREE_DEPTH_MAX 64 /* deeper levels are elided */

static inline void device_enum_donep(struct device_enum *e) { device_enum_done(e); }

/* A listed device as the enumerator hands it out: its subsystem has been
 * looked at (that fixes the position of SUBSYSTEM among the properties). */
static int open_listed(const struct sysdev *s, struct udevice **ret)
{
        int r = udevice_new_from_devpath(s->devpath, ret);

        if (r < 0)
                return log_error_errno(r, "Failed to allocate a device: %m");
        (void)udevice_get_subsystem(*ret, NULL);
        return 0;
}

/* ---------------------------------------------------------------- export-db */

int info_export_db(void)
{
        static const struct device_enum_filter no_filter;
        _cleanup_(device_enum_donep) struct device_enum e = { .root_fd = -1 };
        int r, ret = 0;

        r = device_enum_init(&e, udevice_sysfs_root(), &no_filter);
        if (r < 0)
                return log_error_errno(r, "Failed to open %s: %m", udevice_sysfs_root());
        e.v252_sound_order = true;
        r = device_enum_scan(&e, DEVICE_ENUM_DEVICES);
        if (r < 0)
                return log_error_errno(r, "Failed to scan devices: %m");
        r = device_enum_sort(&e, NULL, 0);
        if (r < 0)
                return log_error_errno(r, "Failed to sort devices: %m");
        for (size_t i = 0; i < e.n_devs; i++) {
                _cleanup_(udevice_freep) struct udevice *d = NULL;

                r = open_listed(e.devs[i], &d);
                if (r < 0)
                        return r;
                info_print_record(d, NULL);
                r = info_check_db(d);
                if (r < 0 && ret == 0)
                        ret = r;
        }
        return ret;
}

/* ---------------------------------------------------------------- tree */

struct tree {
        struct sysdev **devs;
        const char *vertical, *branch, *right, *space, *dotted;
        int ret; /* first database problem */
};

static int draw_level(struct tree *t, const char *parent_path, size_t from, size_t to,
                      const char *prefix, unsigned level);

static int draw_node(struct tree *t, size_t i, size_t end, const char *label, const char *prefix,
                     bool more, unsigned level)
{
        _cleanup_(udevice_freep) struct udevice *d = NULL;
        _cleanup_free_ char *sub = NULL, *rec = NULL;
        int r;

        printf("%s%s%s\n", prefix, more ? t->branch : t->right, label);
        if (asprintf(&sub, "%s%s", prefix, more ? t->vertical : t->space) < 0 ||
            asprintf(&rec, "%s%s ", sub, t->dotted) < 0) {
                sub = rec = NULL;
                return log_error_errno(-ENOMEM, "Out of memory.");
        }
        r = open_listed(t->devs[i], &d);
        if (r < 0)
                return r;
        info_print_record(d, rec);
        r = info_check_db(d);
        if (r < 0 && t->ret == 0)
                t->ret = r;
        return draw_level(t, t->devs[i]->devpath, i + 1, end, sub, level + 1);
}

/* Devices [from, to) sorted by path: each is followed by its descendants. */
static int draw_level(struct tree *t, const char *parent_path, size_t from, size_t to,
                      const char *prefix, unsigned level)
{
        if (from >= to)
                return 0;
        if (level > TREE_DEPTH_MAX) {
                log_warning("Eliding tree below '%s', too deep.", parent_path ?: "n/a");
                return 0;
        }
        for (size_t i = from; i < to;) {
                const char *path = t->devs[i]->devpath, *label;
                bool more = false;
                size_t j;
                int r;

                for (j = i + 1; j < to; j++) {
                        const char *next = t->devs[j]->devpath;

                        if (!path_startswith(next, path)) {
                                more = !parent_path || path_startswith(next, parent_path);
                                break;
                        }
                }
                label = parent_path ? path_startswith(path, parent_path) : path;
                r = draw_node(t, i, j, label ?: path, prefix, more, level);
                if (r < 0)
                        return r;
                i = j;
        }
        return 0;
}

int info_print_tree(struct udevice *below)
{
        const char *parents[] = { below ? below->devpath : NULL };
        const struct device_enum_filter filter = {
                .parents = parents,
                .n_parents = below ? 1 : 0,
        };
        _cleanup_(device_enum_donep) struct device_enum e = { .root_fd = -1 };
        bool utf8 = info_locale_is_utf8();
        struct tree t = {
                .vertical = utf8 ? "\u2502 " : "| ",
                .branch = utf8 ? "\u251c\u2500" : "|-",
                .right = utf8 ? "\u2514\u2500" : "`-",
                .space = "  ",
                .dotted = utf8 ? "\u2506" : ":",
        };
        int r;

        r = device_enum_init(&e, udevice_sysfs_root(), &filter);
        if (r < 0)
                return log_error_errno(r, "Failed to open %s: %m", udevice_sysfs_root());
        e.v252_sound_order = true;
        r = device_enum_scan(&e, DEVICE_ENUM_ALL);
        if (r < 0)
                return log_error_errno(r, "Failed to scan for devices and subsystems: %m");
        if (below) {
                r = device_enum_add_ancestors(&e, below->devpath);
                if (r < 0)
                        return log_error_errno(r, "Failed to add parent devices: %m");
        }
        r = device_enum_sort(&e, NULL, 0);
        if (r < 0)
                return log_error_errno(r, "Failed to sort devices: %m");
        if (e.n_devs == 0) {
                log_info("No items.");
                return 0;
        }
        t.devs = e.devs;
        r = draw_level(&t, NULL, 0, e.n_devs, "", 0);
        if (r < 0)
                return r;
        printf("\n%zu items shown.\n", e.n_devs);
        return t.ret;
}

/* ---------------------------------------------------------------- attribute walk */

/* Shown elsewhere or not at all. */
static bool skip_attribute(const char *name)
{
        static const char *const skip[] = { "uevent", "dev",       "modalias", "resource",
                                            "driver", "subsystem", "module" };

        for (size_t i = 0; i < ARRAY_SIZE(skip); i++)
                if (streq(name, skip[i]))
                        return true;
        return false;
}

/* Every byte printable ASCII (the C locale's isprint()). */
static bool printable(const char *s)
{
        for (; *s; s++)
                if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
                        return false;
        return true;
}

static void print_attribute(struct udevice *d, const char *name, bool parent)
{
        _cleanup_free_ char *value = NULL;
        int r = udevice_read_sysattr(d, name, &value);
        const char *shown = value;

        if (r == -EPERM || r == -EACCES)
                shown = "(not readable)";
        else if (r < 0)
                return; /* unreadable for another reason: skipped */
        else if (value[0] == '/' || !printable(value))
                return; /* paths and binary data are not shown */
        printf("    %s{%s}==\"%s\"\n", parent ? "ATTRS" : "ATTR", name, shown);
}

static void print_attributes(struct udevice *d, bool parent)
{
        const char *s;
        char **names = NULL;
        size_t n = 0;

        printf("  looking at %sdevice '%s':\n", parent ? "parent " : "", d->devpath);
        printf("    %s==\"%s\"\n", parent ? "KERNELS" : "KERNEL",
               udevice_get_sysname(d, &s) >= 0 ? s : "");
        printf("    %s==\"%s\"\n", parent ? "SUBSYSTEMS" : "SUBSYSTEM",
               udevice_get_subsystem(d, &s) >= 0 ? s : "");
        printf("    %s==\"%s\"\n", parent ? "DRIVERS" : "DRIVER",
               udevice_get_driver(d, &s) >= 0 ? s : "");
        if (udevice_list_sysattrs(d, &names, &n) < 0)
                n = 0; /* sd-device then lists none */
        for (size_t i = 0; i < n; i++)
                if (!skip_attribute(names[i]))
                        print_attribute(d, names[i], parent);
        udevice_strv_free(names, n);
        putchar('\n');
}

int info_attribute_walk(struct udevice *d)
{
        struct udevice *child, *parent;

        /* The banner is part of the format scripts see; it is systemd's. */
        printf("\n"
               "Udevadm info starts with the device specified by the devpath and then\n"
               "walks up the chain of parent devices. It prints for every device\n"
               "found, all possible attributes in the udev rules key format.\n"
               "A rule to match, can be composed by the attributes of the device\n"
               "and the attributes from one single parent device.\n"
               "\n");
        print_attributes(d, false);
        for (child = d; udevice_get_parent(child, &parent) >= 0; child = parent)
                print_attributes(parent, true);
        return 0;
}
