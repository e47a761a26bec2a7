/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (no global state; everything lives in the event's device_ctx) */
/* path_id: a persistent path of a device from the chain of its parents, as
 * systemd 252 composes it: ID_PATH, ID_PATH_TAG and ID_PATH_ATA_COMPAT; when
 * builtins_follow_systemd_257() (a naming scheme of v253 or later) also
 * systemd 257's ID_PATH_WITH_USB_REVISION (USB devices: the root hub's
 * revision in the path, "...-usbv2-0:1:1.0"; ID_PATH and its tag keep the
 * plain "-usb-0:..."). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtins/builtin-util.h"
#include "builtins/builtins-internal.h"
#include "device/device.h"
#include "event/event-format.h"
#include "event/udev-event.h"
#include "shared/log.h"
#include "shared/macro.h"

#define PATH_ID_MAX 4096 /* longest ID_PATH we compose (real ones are < 200) */

/* The walk state: the path built so far (components are prepended), the old
 * ATA path, and what kinds of parents were seen. */
struct path_walk {
        struct device_ctx *ctx;
        struct device *dev; /* the event device */
        char *path;         /* owned, NULL until the first component */
        char *compat;       /* owned, ID_PATH_ATA_COMPAT; set by the ATA handler */
        bool supported_parent;
        bool supported_transport;
        bool usb_revision;  /* compose "usbv<N>" (builtins_follow_systemd_257()) */
        int error;          /* first allocation failure */
};

/* Prepend "<component>-" to *p (or set it to the component). */
_printf_(3, 4) static void prepend(struct path_walk *w, char **p, const char *fmt, ...)
{
        char pre[PATH_ID_MAX], *n;
        va_list ap;
        int len;

        va_start(ap, fmt);
        len = vsnprintf(pre, sizeof(pre), fmt, ap);
        va_end(ap);
        if (len < 0 || (size_t)len >= sizeof(pre)) {
                w->error = w->error ?: -ENAMETOOLONG;
                return;
        }
        if (*p) {
                if ((size_t)len + 1 + strlen(*p) >= PATH_ID_MAX) {
                        w->error = w->error ?: -ENAMETOOLONG;
                        return;
                }
                if (asprintf(&n, "%s-%s", pre, *p) < 0)
                        n = NULL;
        } else {
                n = strdup(pre);
        }
        if (!n) {
                w->error = w->error ?: -ENOMEM;
                return;
        }
        free(*p);
        *p = n;
}

static bool subsystem_is(struct device *d, const char *subsystem)
{
        const char *s;

        return device_get_subsystem(d, &s) >= 0 && streq(s, subsystem);
}

static bool devtype_is(struct device *d, const char *devtype)
{
        const char *t;

        return device_get_devtype(d, &t) >= 0 && streq(t, devtype);
}

/* "lun-N" for the LUN in the device's sysnum (Linux LUNs are 32 bit);
 * NULL if there is none (systemd then prints "(null)"). Returns `buf`. */
static const char *lun_string(struct device *d, char *buf, size_t size)
{
        unsigned long long lun;

        if (!device_sysnum(d) || parse_atollu_full(device_sysnum(d), 10, &lun) < 0)
                return NULL;
        if (lun < 256)
                snprintf(buf, size, "lun-%llu", lun);
        else
                snprintf(buf, size, "lun-0x%04llx%04llx00000000", lun & 0xffff,
                         (lun >> 16) & 0xffff);
        return buf;
}

#define LUN_MAX 64
#define NULLSTR(s) ((s) ? (s) : "(null)")

/* Walk up while the parents are in `subsystem`; the last one of that run.
 * The caller continues with its parent. */
static struct device *skip_subsystem(struct device *d, const char *subsystem)
{
        struct device *p = d;

        for (;;) {
                if (!subsystem_is(p, subsystem))
                        break;
                d = p;
                if (device_get_parent(d, &p) < 0)
                        break;
        }
        return d;
}

static struct device *parent_of(struct device *d)
{
        struct device *p;

        return device_get_parent(d, &p) >= 0 ? p : NULL;
}

static struct device *scsi_target_parent(struct device *d)
{
        struct device *t;

        if (device_get_parent_with_subsystem_devtype(d, "scsi", "scsi_target", &t) < 0)
                return NULL;
        return parent_of(t);
}

static struct device *handle_scsi_fibre_channel(struct path_walk *w, struct device *d)
{
        struct device *target, *fc;
        const char *port;
        char lun[LUN_MAX];

        if (device_get_parent_with_subsystem_devtype(d, "scsi", "scsi_target", &target) < 0)
                return NULL;
        if (device_from_subsystem_sysname(w->ctx, "fc_transport", device_sysname(target), &fc) < 0)
                return NULL;
        if (device_get_sysattr(fc, "port_name", &port) < 0)
                return NULL;
        prepend(w, &w->path, "fc-%s-%s", port, NULLSTR(lun_string(d, lun, sizeof(lun))));
        return d;
}

static struct device *handle_scsi_sas_wide_port(struct path_walk *w, struct device *d)
{
        struct device *tp, *sas;
        const char *addr;
        char lun[LUN_MAX];

        tp = scsi_target_parent(d);
        if (!tp)
                return NULL;
        if (device_from_subsystem_sysname(w->ctx, "sas_device", device_sysname(tp), &sas) < 0)
                return NULL;
        if (device_get_sysattr(sas, "sas_address", &addr) < 0)
                return NULL;
        prepend(w, &w->path, "sas-%s-%s", addr, NULLSTR(lun_string(d, lun, sizeof(lun))));
        return d;
}

static struct device *handle_scsi_sas(struct path_walk *w, struct device *d)
{
        struct device *tp, *port, *expander, *target_sas, *port_sas, *exp_sas;
        const char *phys, *phy_id, *addr = NULL;
        char lun[LUN_MAX];

        tp = scsi_target_parent(d);
        if (!tp)
                return NULL;
        if (device_from_subsystem_sysname(w->ctx, "sas_device", device_sysname(tp),
                                          &target_sas) < 0)
                return NULL;
        /* the next parent is the SAS port */
        port = parent_of(tp);
        if (!port)
                return NULL;
        if (device_from_subsystem_sysname(w->ctx, "sas_port", device_sysname(port), &port_sas) < 0)
                return NULL;
        if (device_get_sysattr(port_sas, "num_phys", &phys) < 0)
                return NULL;
        /* more than one phy: a wide port */
        if (!streq(phys, "1"))
                return handle_scsi_sas_wide_port(w, d);
        if (device_get_sysattr(target_sas, "phy_identifier", &phy_id) < 0)
                return NULL;
        /* the port's parent is the HBA or an expander */
        expander = parent_of(port);
        if (!expander)
                return NULL;
        if (device_from_subsystem_sysname(w->ctx, "sas_device", device_sysname(expander),
                                          &exp_sas) >= 0 &&
            device_get_sysattr(exp_sas, "sas_address", &addr) < 0)
                return NULL;
        if (addr)
                prepend(w, &w->path, "sas-exp%s-phy%s-%s", addr, phy_id,
                        NULLSTR(lun_string(d, lun, sizeof(lun))));
        else
                prepend(w, &w->path, "sas-phy%s-%s", phy_id,
                        NULLSTR(lun_string(d, lun, sizeof(lun))));
        return d;
}

static struct device *handle_scsi_iscsi(struct path_walk *w, struct device *d)
{
        struct device *t = d, *session, *conn;
        const char *target, *addr, *port, *sysnum;
        char name[64], lun[LUN_MAX];

        /* the iSCSI session above the device */
        for (;;) {
                t = parent_of(t);
                if (!t)
                        return NULL;
                if (strneq(device_sysname(t), "session", STRLEN("session")))
                        break;
        }
        if (device_from_subsystem_sysname(w->ctx, "iscsi_session", device_sysname(t), &session) < 0)
                return NULL;
        if (device_get_sysattr(session, "targetname", &target) < 0)
                return NULL;
        sysnum = device_sysnum(t);
        if (!sysnum)
                return NULL;
        if ((size_t)snprintf(name, sizeof(name), "connection%s:0", sysnum) >= sizeof(name))
                return NULL;
        if (device_from_subsystem_sysname(w->ctx, "iscsi_connection", name, &conn) < 0)
                return NULL;
        if (device_get_sysattr(conn, "persistent_address", &addr) < 0 ||
            device_get_sysattr(conn, "persistent_port", &port) < 0)
                return NULL;
        prepend(w, &w->path, "ip-%s:%s-iscsi-%s-%s", addr, port, target,
                NULLSTR(lun_string(d, lun, sizeof(lun))));
        return d;
}

static struct device *handle_scsi_ata(struct path_walk *w, struct device *d)
{
        struct device *host, *hp, *ata;
        unsigned h, bus, target, lun;
        const char *port_no;

        if (sscanf(device_sysname(d), "%u:%u:%u:%u", &h, &bus, &target, &lun) != 4)
                return NULL;
        if (device_get_parent_with_subsystem_devtype(d, "scsi", "scsi_host", &host) < 0)
                return NULL;
        hp = parent_of(host);
        if (!hp)
                return NULL;
        if (device_from_subsystem_sysname(w->ctx, "ata_port", device_sysname(hp), &ata) < 0)
                return NULL;
        if (device_get_sysattr(ata, "port_no", &port_no) < 0)
                return NULL;
        if (bus != 0) /* behind a port multiplier */
                prepend(w, &w->path, "ata-%s.%u.0", port_no, bus);
        else /* master/slave by target id */
                prepend(w, &w->path, "ata-%s.%u", port_no, target);
        prepend(w, &w->compat, "ata-%s", port_no);
        return d;
}

/* The lowest N of the "hostN" entries in `dir`, or -1. */
static int lowest_host_number(const char *dir)
{
        DIR *dp = opendir(dir);
        struct dirent *de;
        int base = -1;

        if (!dp)
                return -2;
        while ((de = readdir(dp))) {
                unsigned i;

                if (de->d_name[0] == '.')
                        continue;
                if (de->d_type != DT_DIR && de->d_type != DT_LNK)
                        continue;
                if (!strneq(de->d_name, "host", 4) || parse_atou_full(de->d_name + 4, 10, &i) < 0)
                        continue;
                if (base == -1 || (int)i < base)
                        base = (int)i;
        }
        closedir(dp);
        return base;
}

static struct device *handle_scsi_default(struct path_walk *w, struct device *d)
{
        struct device *host;
        int h, bus, target, lun, base;
        char dir[PATH_MAX];
        const char *sp, *slash;

        if (device_get_parent_with_subsystem_devtype(d, "scsi", "scsi_host", &host) < 0)
                return NULL;
        if (sscanf(device_sysname(d), "%d:%d:%d:%d", &h, &bus, &target, &lun) != 4)
                return NULL;
        /* Rebase the host number on the lowest hostN beside the host (as
         * systemd does; racy by nature). */
        sp = device_syspath(host);
        slash = strrchr(sp, '/');
        if (!slash || (size_t)(slash - sp) >= sizeof(dir))
                return NULL;
        memcpy(dir, sp, (size_t)(slash - sp));
        dir[slash - sp] = '\0';
        base = lowest_host_number(dir);
        if (base == -2)
                return NULL;
        if (base == -1)
                return host;
        prepend(w, &w->path, "scsi-%i:%i:%i:%i", h - base, bus, target, lun);
        return host;
}

static struct device *handle_scsi_hyperv(struct path_walk *w, struct device *d, size_t guid_len)
{
        struct device *host, *vmbus;
        const char *guid_str;
        char guid[39], lun[LUN_MAX];
        size_t k = 0;

        if (device_get_parent_with_subsystem_devtype(d, "scsi", "scsi_host", &host) < 0)
                return NULL;
        vmbus = parent_of(host);
        if (!vmbus)
                return NULL;
        if (device_get_sysattr(vmbus, "device_id", &guid_str) < 0)
                return NULL;
        if (strlen(guid_str) < guid_len || guid_str[0] != '{' || guid_str[guid_len - 1] != '}')
                return NULL;
        for (size_t i = 1; i < guid_len - 1; i++)
                if (guid_str[i] != '-')
                        guid[k++] = guid_str[i];
        guid[k] = '\0';
        prepend(w, &w->path, "vmbus-%s-%s", guid, NULLSTR(lun_string(d, lun, sizeof(lun))));
        return d;
}

static struct device *handle_scsi(struct path_walk *w, struct device *d)
{
        const char *id, *sp;

        if (!devtype_is(d, "scsi_device"))
                return d;
        /* firewire */
        if (device_get_sysattr(d, "ieee1394_id", &id) >= 0) {
                prepend(w, &w->path, "ieee1394-0x%s", id);
                w->supported_parent = true;
                return skip_subsystem(d, "scsi");
        }
        /* the transport shows only in the device path */
        sp = device_devpath(d);
        if (strstr(sp, "/rport-")) {
                w->supported_parent = true;
                return handle_scsi_fibre_channel(w, d);
        }
        if (strstr(sp, "/end_device-")) {
                w->supported_parent = true;
                return handle_scsi_sas(w, d);
        }
        if (strstr(sp, "/session")) {
                w->supported_parent = true;
                return handle_scsi_iscsi(w, d);
        }
        if (strstr(sp, "/ata"))
                return handle_scsi_ata(w, d);
        if (strstr(sp, "/vmbus_"))
                return handle_scsi_hyperv(w, d, 37);
        if (strstr(sp, "/VMBUS"))
                return handle_scsi_hyperv(w, d, 38);
        return handle_scsi_default(w, d);
}

static struct device *handle_cciss(struct path_walk *w, struct device *d)
{
        unsigned controller, disk;

        if (sscanf(device_sysname(d), "c%ud%u%*s", &controller, &disk) != 2)
                return NULL;
        prepend(w, &w->path, "cciss-disk%u", disk);
        return skip_subsystem(d, "cciss");
}

static void handle_scsi_tape(struct path_walk *w, struct device *d)
{
        const char *name = device_sysname(d);

        /* only as the last element of the path */
        if (w->path)
                return;
        if (strneq(name, "nst", 3) && name[3] && strchr("lma", name[3]))
                prepend(w, &w->path, "nst%c", name[3]);
        else if (strneq(name, "st", 2) && name[2] && strchr("lma", name[2]))
                prepend(w, &w->path, "st%c", name[2]);
}

/* The USB revision (1, 2 or 3) of a root hub, from its hub protocol
 * (bDeviceProtocol, hex): 1 or 2 (high speed with one or several TTs) -> 2,
 * 3 (super speed) -> 3, 0 (no TT) -> 2 at "480" Mbit/s, else 1; -errno if
 * unknown. (Checked against systemd 257's udevadm over fake trees.) */
static int usb_revision(struct device *hub)
{
        const char *s;
        unsigned long long proto;
        int r;

        r = device_get_sysattr(hub, "bDeviceProtocol", &s);
        if (r < 0)
                return r;
        r = parse_atollu_full(s, 16, &proto);
        if (r < 0)
                return r;
        switch (proto) {
        case 0:
                r = device_get_sysattr(hub, "speed", &s);
                if (r < 0)
                        return r;
                return streq(s, "480") ? 2 : 1;
        case 1:
        case 2:
                return 2;
        case 3:
                return 3;
        default:
                return -EPROTONOSUPPORT;
        }
}

static struct device *handle_usb(struct path_walk *w, struct device *d)
{
        struct device *root;
        const char *port;
        int rev;

        if (!devtype_is(d, "usb_interface") && !devtype_is(d, "usb_device"))
                return d;
        port = strchr(device_sysname(d), '-');
        if (!port)
                return d;
        root = skip_subsystem(d, "usb");
        /* the bus number may change; the rest is topology. From systemd 255 the
         * root hub's USB revision is part of the path ("usbv2-0:1:1.0"); it is
         * cut out again for ID_PATH (path_split_usb_revision()). */
        rev = w->usb_revision ? usb_revision(root) : -EOPNOTSUPP;
        if (rev > 0)
                prepend(w, &w->path, "usbv%i-0:%s", rev, port + 1);
        else
                prepend(w, &w->path, "usb-0:%s", port + 1);
        return root;
}

/* If `path` holds "-usbv<digit>-": a copy with it (ID_PATH_WITH_USB_REVISION)
 * in *with, and the revision removed from `path` ("-usb-"). */
static int path_split_usb_revision(char *path, char **with)
{
        char *p = strstr(path, "-usbv");

        *with = NULL;
        if (!p || !(p[5] >= '0' && p[5] <= '9') || p[6] != '-')
                return 0;
        *with = strdup(path);
        if (!*with)
                return -ENOMEM;
        memmove(p + 4, p + 6, strlen(p + 6) + 1);
        return 1;
}

static struct device *handle_bcma(struct path_walk *w, struct device *d)
{
        unsigned core;

        if (sscanf(device_sysname(d), "bcma%*u:%u", &core) != 1)
                return NULL;
        prepend(w, &w->path, "bcma-%u", core);
        return d;
}

/* AP bus of System z */
static struct device *handle_ap(struct path_walk *w, struct device *d)
{
        const char *type, *func;

        if (device_get_sysattr(d, "type", &type) >= 0 &&
            device_get_sysattr(d, "ap_functions", &func) >= 0)
                prepend(w, &w->path, "ap-%s-%s", type, func);
        else
                prepend(w, &w->path, "ap-%s", device_sysname(d));
        return skip_subsystem(d, "ap");
}

/* With NVMe multipath the namespace sits below a virtual nvme-subsystem
 * device; continue from the controller "nvmeN" named by the namespace. */
static int find_real_nvme_parent(struct path_walk *w, struct device **ret)
{
        const char *sysname = device_sysname(w->dev), *end;
        char name[64];
        struct device *nvme;
        int r;

        if (!strneq(sysname, "nvme", 4))
                return -ENXIO;
        end = sysname + 4;
        end += strspn(end, "0123456789");
        if ((size_t)(end - sysname) >= sizeof(name))
                return -ENXIO;
        memcpy(name, sysname, (size_t)(end - sysname));
        name[end - sysname] = '\0';
        r = device_from_subsystem_sysname(w->ctx, "nvme", name, &nvme);
        if (r < 0)
                return r;
        /* still virtual (NVMe over fabrics): no path */
        if (strneq(device_devpath(nvme), "/devices/virtual/", STRLEN("/devices/virtual/")))
                return -ENXIO;
        *ret = nvme;
        return 0;
}

/* Subsystems that add "<subsystem>-<sysname>" and skip their run of parents. */
static const struct {
        const char *name;
        bool transport;
} named_buses[] = {
        { "pci", false },     { "platform", true }, { "acpi", false },  { "xen", false },
        { "scm", true },      { "ccw", true },      { "ccwgroup", true }, { "iucv", true },
};

/* One step of the walk; returns the device to continue from (its parent is
 * examined next), NULL to stop, or ERR via w->error. */
static struct device *walk_step(struct path_walk *w, struct device *d)
{
        const char *subsys, *sysnum;
        int r;

        if (device_get_subsystem(d, &subsys) < 0)
                return d;
        if (streq(subsys, "scsi_tape")) {
                handle_scsi_tape(w, d);
                return d;
        }
        if (streq(subsys, "scsi")) {
                w->supported_transport = true;
                return handle_scsi(w, d);
        }
        if (streq(subsys, "cciss")) {
                w->supported_transport = true;
                return handle_cciss(w, d);
        }
        if (streq(subsys, "usb")) {
                w->supported_transport = true;
                return handle_usb(w, d);
        }
        if (streq(subsys, "bcma")) {
                w->supported_transport = true;
                return handle_bcma(w, d);
        }
        if (streq(subsys, "serio")) {
                sysnum = device_sysnum(d);
                if (!sysnum)
                        return d;
                prepend(w, &w->path, "serio-%s", sysnum);
                return skip_subsystem(d, "serio");
        }
        for (size_t i = 0; i < ARRAY_SIZE(named_buses); i++) {
                if (!streq(subsys, named_buses[i].name))
                        continue;
                prepend(w, &w->path, "%s-%s", subsys, device_sysname(d));
                if (w->compat)
                        prepend(w, &w->compat, "%s-%s", subsys, device_sysname(d));
                w->supported_parent = true;
                if (named_buses[i].transport)
                        w->supported_transport = true;
                return skip_subsystem(d, subsys);
        }
        if (streq(subsys, "virtio")) {
                w->supported_transport = true;
                return skip_subsystem(d, "virtio");
        }
        if (streq(subsys, "ap")) {
                w->supported_transport = true;
                w->supported_parent = true;
                return handle_ap(w, d);
        }
        if (streq(subsys, "nvme") || streq(subsys, "nvme-subsystem")) {
                const char *nsid;

                /* the namespace id of the event device */
                if (device_get_sysattr(w->dev, "nsid", &nsid) < 0)
                        return d;
                prepend(w, &w->path, "nvme-%s", nsid);
                if (w->compat)
                        prepend(w, &w->compat, "nvme-%s", nsid);
                if (streq(subsys, "nvme-subsystem")) {
                        r = find_real_nvme_parent(w, &d);
                        if (r < 0) {
                                w->error = w->error ?: r;
                                return NULL;
                        }
                }
                w->supported_parent = true;
                w->supported_transport = true;
                return skip_subsystem(d, "nvme");
        }
        if (streq(subsys, "spi")) {
                sysnum = device_sysnum(d);
                if (!sysnum)
                        return d;
                prepend(w, &w->path, "cs-%s", sysnum);
                return skip_subsystem(d, "spi");
        }
        return d;
}

/* ID_PATH_TAG: runs of characters other than [A-Za-z0-9-] become one '_',
 * none leading or trailing. */
static void path_tag(const char *path, char *tag, size_t size)
{
        size_t i = 0;

        for (const char *p = path; *p && i + 1 < size; p++) {
                if ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
                    (*p >= 'A' && *p <= 'Z') || *p == '-') {
                        tag[i++] = *p;
                        continue;
                }
                if (i == 0 || tag[i - 1] == '_')
                        continue;
                tag[i++] = '_';
        }
        while (i > 0 && tag[i - 1] == '_')
                i--;
        tag[i] = '\0';
}

static void path_walk_done(struct path_walk *w)
{
        free(w->path);
        free(w->compat);
}

int builtin_path_id(struct udev_event *ev, int argc, char *argv[], bool test)
{
        _cleanup_(path_walk_done) struct path_walk w = {
                .ctx = ev->ctx,
                .dev = ev->dev,
                .usb_revision = builtins_follow_systemd_257(),
        };
        _cleanup_free_ char *with_rev = NULL;
        const char *subsys;
        char tag[UDEV_NAME_SIZE];
        int r;

        (void)argc, (void)argv;
        /* systemd 257 wants a subsystem on the device itself (every uevent has
         * one; only udevadm test-builtin can name a device without) */
        if (w.usb_revision && device_get_subsystem(ev->dev, &subsys) < 0)
                return -ENOENT;
        for (struct device *d = ev->dev; d;) {
                d = walk_step(&w, d);
                if (w.error)
                        return w.error;
                if (!d || device_get_parent(d, &d) < 0)
                        break;
        }
        if (!w.path)
                return -ENOENT;
        /* an unknown parent type might not give a unique, stable name */
        if (!w.supported_parent)
                return -ENOENT;
        /* block devices need a known transport */
        if (subsystem_is(ev->dev, "block") && !w.supported_transport)
                return -ENOENT;

        r = path_split_usb_revision(w.path, &with_rev);
        if (r < 0)
                return r;
        if (with_rev) {
                r = builtin_add_property(ev, test, "ID_PATH_WITH_USB_REVISION", with_rev);
                if (r < 0)
                        return r;
        }
        path_tag(w.path, tag, sizeof(tag));
        r = builtin_add_property(ev, test, "ID_PATH", w.path);
        if (r >= 0)
                r = builtin_add_property(ev, test, "ID_PATH_TAG", tag);
        if (r >= 0 && w.compat)
                r = builtin_add_property(ev, test, "ID_PATH_ATA_COMPAT", w.compat);
        return r;
}
