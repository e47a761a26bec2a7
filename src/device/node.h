/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (stack directories are serialised by a flock per link) */
#pragma once
/* Device nodes after the rules (udevd(8) DESCRIPTION):
 * permissions of the node, devlinks arbitrated through the stack
 * directories in <run>/links, /dev/{block,char}/MAJ:MIN, and the idle
 * cleanup of the stack directories.
 *
 * Paths: devnodes and links are given as the "logical" paths that appear in
 * properties and the database ("/dev/sda1", "/dev/disk/by-id/x"); every file
 * operation maps them into roots->dev and roots->run, so tests run over a
 * temporary directory. Stack entries record logical paths ("0:/dev/sda1"),
 * byte-compatible with systemd's. */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "device/db.h"
#include "device/device.h"

#define NODE_PATH_MAX 1024      /* logical link or devnode path (UDEV_PATH_SIZE) */
#define NODE_STACK_NAME_MAX 255 /* escaped stack directory name (NAME_MAX) */

/* The device a node operation is about. All strings borrowed. */
struct node_device {
        const char *id;        /* database id, "b8:1" (the stack entry name) */
        const char *devnode;   /* logical "/dev/sda1" */
        const char *subsystem; /* "block" selects S_IFBLK and /dev/block */
        const char *devtype;   /* "disk", "partition" or NULL */
        const char *sysnum;    /* trailing digits of the sysname or NULL */
        const char *diskseq;   /* DISKSEQ property or NULL */
        unsigned major, minor;
        int priority;          /* link_priority */
};

/* The Linux security modules that label device nodes, as systemd-udevd 252
 * finds them: SELinux when <sys>/fs/selinux is a mounted selinuxfs, SMACK
 * when <sys>/fs/smackfs exists. Found once per process (node_mac_detect())
 * and then only read. */
struct node_mac {
        bool selinux;
        bool smack;
};

void node_mac_detect(const char *sys_root, struct node_mac *ret);

/* Owner/group/mode as collected by the rules, with the uevent's DEVUID/
 * DEVGID/DEVMODE already folded in by the caller for what the rules did not
 * set. */
struct node_perms {
        uid_t uid;
        gid_t gid;
        mode_t mode;
        bool uid_set, gid_set, mode_set;
        const struct strlist *seclabels; /* "module=label", may be NULL */
        const struct node_mac *mac;      /* NULL: label nothing */
};

/* Apply owner/group/mode to the node if it is the device's node (type and
 * devnum checked on an O_PATH fd); with `apply_always` (action add) also when
 * nothing differs. Whenever owner/group/mode are applied, SECLABEL{selinux}
 * sets the node's security.selinux attribute and SECLABEL{smack} its
 * security.SMACK64, each only when p->mac says the module is active; with
 * SMACK active and no smack label the attribute is removed (SELinux's
 * default context, restorecon's job, is not looked up: no policy library).
 * Other modules are logged as unknown. Always touches the timestamps. A
 * missing or foreign node is skipped silently. 0 or -errno (only for
 * unexpected failures; logged). */
int node_apply_permissions(const struct device_roots *roots, const struct node_device *d,
                           const struct node_perms *p, bool apply_always);

/* Non-remove event: release every link of `old_links` not in `new_links`,
 * claim every link of `new_links`, then (re)create /dev/{block,char}/M:m.
 * Links may be logical absolute ("/dev/x") or relative to /dev ("x", as in
 * the DB); invalid ones are skipped with a debug message. Errors are logged
 * per link and do not stop the others. Returns 0, or -errno of the M:m link. */
int node_update(const struct device_roots *roots, const struct node_device *d,
                const struct strlist *old_links, const struct strlist *new_links);

/* Remove event: release every link of `links`, unlink /dev/{block,char}/M:m. */
int node_remove(const struct device_roots *roots, const struct node_device *d,
                const struct strlist *links);

/* Claim (add) or release one link; exposed for tests. 0 or -errno. */
int node_link_update(const struct device_roots *roots, const struct node_device *d,
                     const char *link, bool add);

/* Remove the .lock file of every stack directory and the directories that
 * are then empty. Only call when no event is being processed (an event may
 * be creating a lock file). */
int node_cleanup_stack_dirs(const struct device_roots *roots);

/* Normalise a SYMLINK= name: a relative name is put under
 * "/dev/"; an absolute one must start with "/dev/" (and not be "/dev/"
 * itself); ".." components are refused; "//", "/./" and a trailing '/' are
 * collapsed. Writes the logical path to out. 0, -EINVAL, -ENAMETOOLONG. */
int node_link_normalize(const char *link, char *out, size_t size);

/* The stack directory name of a logical link (escaping '/' and '\', hashed
 * suffix when longer than 255 bytes). out needs NODE_STACK_NAME_MAX + 1. */
int node_stack_dir_name(const char *link, char *out, size_t size);

/* udevadm test --apply: create the node like devtmpfs would (mknod with
 * mode/uid/gid) if nothing exists at its path; 0 if created, 1 if something
 * exists already, -errno. And remove it again on a remove event (only if it
 * is a node of that type and devnum). */
int node_create_devnode(const struct device_roots *roots, const struct node_device *d,
                        mode_t mode, uid_t uid, gid_t gid);
int node_remove_devnode(const struct device_roots *roots, const struct node_device *d);

/* OPTIONS+="static_node=NAME": for <dev>/NAME, if it exists
 * and is a block/char node, create <run>/static_node-tags/<tag>/<NAME with
 * '/', '.', '\' and control characters escaped as \xNN> -> "/dev/NAME" for
 * every tag, then apply uid/gid/mode (GROUP without MODE: 0660). Nothing if
 * none of them is set and there is no tag. A missing node is skipped. */
int node_apply_static(const struct device_roots *roots, const char *name, const struct node_perms *p,
                      const char *const *tags, size_t n_tags);
