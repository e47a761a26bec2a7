/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: worker-local (a device_ctx and its devices belong to one thread) */
#pragma once
/* A read-only view of sysfs devices for one event: the event device (built
 * from its kernel uevent record), its parents and any other device a rule
 * names. Every value is read lazily and cached for the lifetime of the
 * context (one event), as systemd's sd-device caches per device object.
 *
 * Ownership: a `struct device` belongs to the device_ctx that created it and
 * is freed with it; strings returned by accessors belong to the device.
 * All paths go through the context's roots, so tests can point them at a fake
 * tree (roots.sys = "/tmp/x/sys", ...). */

#include <stdbool.h>
#include <stddef.h>

#include "device/db.h"
#include "proto/uevent.h"

#define SYSATTR_VALUE_MAX 4096 /* longest attribute value kept (rules use 512) */

struct device_roots {
        const char *sys; /* "/sys" */
        const char *dev; /* "/dev" */
        const char *run; /* "/run/udev" */
};

struct device_ctx;
struct device;

int device_ctx_new(const struct device_roots *roots, struct device_ctx **ret);
/* Frees the context and every device it created. NULL is fine. */
void device_ctx_free(struct device_ctx *ctx);
const struct device_roots *device_ctx_roots(const struct device_ctx *ctx);

/* Constructors. Return 0, -ENOENT (no such device), -EINVAL (path outside the
 * sys root, not a device directory), -ENOMEM. A second request for the same
 * syspath returns the same object. */
int device_from_uevent(struct device_ctx *ctx, const struct uevent *ev, struct device **ret);
int device_from_syspath(struct device_ctx *ctx, const char *syspath, struct device **ret);
int device_from_subsystem_sysname(struct device_ctx *ctx, const char *subsystem,
                                  const char *sysname, struct device **ret);
/* type 'b' or 'c' */
int device_from_devnum(struct device_ctx *ctx, char type, unsigned major, unsigned minor,
                       struct device **ret);
int device_from_ifindex(struct device_ctx *ctx, int ifindex, struct device **ret);
/* "b8:0", "c1:3", "n3", "+pci:0000:00:1f.2" */
int device_from_id(struct device_ctx *ctx, const char *id, struct device **ret);

/* Always present. */
const char *device_syspath(const struct device *d);  /* "<sys>/devices/..." */
const char *device_devpath(const struct device *d);  /* "/devices/..." */
const char *device_sysname(const struct device *d);  /* last component, '!' -> '/' */
const char *device_sysnum(const struct device *d);   /* trailing digits or NULL */

/* Lazy accessors: 0 and *ret set, -ENOENT if the device has none, -errno. */
int device_get_subsystem(struct device *d, const char **ret);
int device_get_devtype(struct device *d, const char **ret);
int device_get_driver(struct device *d, const char **ret);
int device_get_devnode(struct device *d, const char **ret);     /* absolute, under roots.dev */
int device_get_devnum(struct device *d, unsigned *major, unsigned *minor);
int device_get_ifindex(struct device *d, int *ret);
int device_get_id(struct device *d, const char **ret);           /* database id */
/* Kernel properties: of the uevent record for the event device, of the
 * "uevent" file for others. */
int device_get_property(struct device *d, const char *key, const char **ret);
/* Iterate the kernel properties in order; false past the end. */
bool device_property_at(struct device *d, size_t i, const char **key, const char **value);

/* Sysfs attribute, read as sd-device reads it: regular file ->
 * content without trailing '\n'/'\r' (cut at NUL, at most SYSATTR_VALUE_MAX);
 * symlink -> basename for "driver", "subsystem", "module", else -EINVAL;
 * directory -> -EISDIR; unreadable -> -EACCES/-EPERM; missing -> -ENOENT.
 * Results (also failures) are cached per device for the context's lifetime. */
int device_get_sysattr(struct device *d, const char *name, const char **ret);
/* Write `value` (no newline added) with one write(). Does not refresh the cache. */
int device_set_sysattr(struct device *d, const char *name, const char *value);

/* The parent device: the nearest ancestor directory that is a device
 * (contains "uevent"), stopping at <sys>/devices. -ENOENT at the top. */
int device_get_parent(struct device *d, struct device **ret);
int device_get_parent_with_subsystem_devtype(struct device *d, const char *subsystem,
                                             const char *devtype, struct device **ret);

/* The device's record in <run>/data/<id>, read once (-ENOENT: none). */
int device_get_db(struct device *d, const struct db_record **ret);

/* true if the device has a database file (it is "initialized"). */
bool device_is_initialized(struct device *d);
