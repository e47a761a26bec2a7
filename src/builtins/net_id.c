/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (no mutable global state; the naming scheme is fixed once) */
/* net_id: predictable network interface names for the naming schemes
 * v238 ... v257 (builtin-util.h; udevd(8) "Network interface naming
 * scheme"): ID_NET_NAMING_SCHEME, ID_NET_NAME_MAC
 * (+ ID_OUI_FROM_DATABASE via the hwdb builtin), ID_NET_NAME_ONBOARD,
 * ID_NET_LABEL_ONBOARD, ID_NET_NAME_SLOT and ID_NET_NAME_PATH for PCI, USB,
 * BCMA, CCW, VIO, Xen, ACPI platform, netdevsim and devicetree devices. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "builtins/builtin-util.h"
#include "builtins/builtins-internal.h"
#include "device/device.h"
#include "shared/fileio.h"
#include "event/udev-event.h"
#include "shared/log.h"
#include "shared/macro.h"

#define ALTIFNAMSIZ 128
#define ONBOARD_14BIT_INDEX_MAX ((1u << 14) - 1)
#define ONBOARD_16BIT_INDEX_MAX ((1u << 16) - 1)
#define ARPHRD_ETHER 1
#define ARPHRD_SLIP 256
#define ARPHRD_INFINIBAND 32
#define NET_ADDR_PERM 0
#define PCI_HEADER_TYPE 0x0e
#define PCI_HEADER_TYPE_MULTIFUNC 0x80

enum net_name_type {
        NET_UNDEF,
        NET_PCI,
        NET_USB,
        NET_BCMA,
        NET_CCW,
        NET_VIO,
        NET_XENVIF,
        NET_PLATFORM,
        NET_NETDEVSIM,
        NET_DEVICETREE,
};

struct net_names {
        enum net_name_type type;
        struct device *pcidev;
        char pci_slot[ALTIFNAMSIZ];
        char pci_path[ALTIFNAMSIZ];
        char pci_onboard[ALTIFNAMSIZ];
        const char *pci_onboard_label;
        char usb_ports[ALTIFNAMSIZ];
        char bcma_core[ALTIFNAMSIZ];
        char ccw_busid[ALTIFNAMSIZ];
        char vio_slot[ALTIFNAMSIZ];
        char xen_slot[ALTIFNAMSIZ];
        char platform_path[ALTIFNAMSIZ];
        char netdevsim_path[ALTIFNAMSIZ];
        char devicetree_onboard[ALTIFNAMSIZ];
};

struct link_info {
        int ifindex;
        int iflink;
        int iftype;
        const char *devtype;
        const char *phys_port_name;
        struct hw_addr hw_addr;
};

/* A bounded string being appended to; `left` = 0 once something did not fit
 * (systemd's strpcpyf()), and the caller then drops the whole string. */
struct sbuf {
        char *p;
        size_t left;
};

_printf_(2, 3) static void sbuf_add(struct sbuf *b, const char *fmt, ...)
{
        va_list ap;
        int n;

        if (b->left == 0)
                return;
        va_start(ap, fmt);
        n = vsnprintf(b->p, b->left, fmt, ap);
        va_end(ap);
        if (n < 0 || (size_t)n >= b->left) {
                b->p += b->left - 1;
                b->left = 0;
                return;
        }
        b->p += n;
        b->left -= (size_t)n;
}

static bool subsystem_is(struct device *d, const char *subsystem)
{
        const char *s;

        return device_get_subsystem(d, &s) >= 0 && streq(s, subsystem);
}

static struct device *parent_of(struct device *d)
{
        struct device *p;

        return device_get_parent(d, &p) >= 0 ? p : NULL;
}

/* systemd's "/sys" + devpath view of the syspath (patterns below match it). */
static void sd_syspath(struct device *d, char *buf, size_t size)
{
        snprintf(buf, size, "/sys%s", device_devpath(d));
}

static bool all_digits(const char *s)
{
        return s && *s && strspn(s, "0123456789") == strlen(s);
}

/* Intermediate virtio buses: one per parent at most. NULL if a virtio device
 * has no parent. */
static struct device *skip_virtio(struct device *d)
{
        while (d) {
                if (!subsystem_is(d, "virtio"))
                        break;
                d = parent_of(d);
        }
        return d;
}

/* SR-IOV: the physical function's PCI device and the "v<N>" suffix. */
static int get_virtfn_info(struct device_ctx *ctx, struct device *pcidev, struct device **ret_pf,
                           char *suffix, size_t size)
{
        char path[PATH_MAX];
        struct device *pf;
        struct dirent *de;
        DIR *dir;
        int r = -ENOENT;

        if ((size_t)snprintf(path, sizeof(path), "%s/physfn", device_syspath(pcidev)) >=
            sizeof(path))
                return -ENAMETOOLONG;
        if (device_from_syspath(ctx, path, &pf) < 0)
                return -ENOENT;
        dir = opendir(device_syspath(pf));
        if (!dir)
                return -errno;
        while ((de = readdir(dir))) {
                struct device *vf;

                if (!strneq(de->d_name, "virtfn", 6) || !all_digits(de->d_name + 6))
                        continue;
                if ((size_t)snprintf(path, sizeof(path), "%s/%s", device_syspath(pf),
                                     de->d_name) >= sizeof(path))
                        continue;
                if (device_from_syspath(ctx, path, &vf) < 0)
                        continue;
                if (!streq(device_syspath(vf), device_syspath(pcidev)))
                        continue;
                snprintf(suffix, size, "v%s", de->d_name + 6);
                *ret_pf = pf;
                r = 0;
                break;
        }
        closedir(dir);
        return r;
}

static bool is_valid_onboard_index(unsigned long long idx)
{
        /* firmware sometimes reports absurd values (VMware: 2^24-1) */
        return idx <= (naming_scheme_has(NAMING_16BIT_INDEX) ? ONBOARD_16BIT_INDEX_MAX
                                                              : ONBOARD_14BIT_INDEX_MAX);
}

/* "n<phys_port_name>" or "d<dev_port>" suffix; from v254 an SR-IOV
 * representor (phys_port_name "pf<P>vf<V>") gets "r<V>" instead. */
static void port_suffix(struct sbuf *b, const struct link_info *info, unsigned long long dev_port)
{
        if (info->phys_port_name && info->phys_port_name[0]) {
                int vf = -1;

                if (naming_scheme_has(NAMING_SR_IOV_R) &&
                    sscanf(info->phys_port_name, "pf%*uvf%d", &vf) == 1 && vf >= 0)
                        sbuf_add(b, "r%d", vf);
                else
                        sbuf_add(b, "n%s", info->phys_port_name);
        } else if (dev_port > 0)
                sbuf_add(b, "d%llu", dev_port);
}

static unsigned long long read_dev_port(struct device *dev)
{
        unsigned long long dev_port = 0;
        const char *attr;

        if (device_get_sysattr(dev, "dev_port", &attr) >= 0 &&
            parse_atollu_full(attr, 10, &dev_port) < 0)
                log_debug("%s: Failed to parse dev_port, ignoring", device_sysname(dev));
        return dev_port;
}

/* Firmware index (ACPI _DSM acpi_index, or SMBIOS type 41 index) and label. */
static int dev_pci_onboard(struct device *dev, const struct link_info *info, struct net_names *n)
{
        unsigned long long idx, dev_port;
        struct sbuf b = { n->pci_onboard, sizeof(n->pci_onboard) };
        const char *attr;
        int r;

        if (device_get_sysattr(n->pcidev, "acpi_index", &attr) < 0) {
                r = device_get_sysattr(n->pcidev, "index", &attr);
                if (r < 0)
                        return r;
        }
        r = parse_atollu_full(attr, 0, &idx);
        if (r < 0)
                return log_debug_errno(r, "Failed to parse onboard index \"%s\": %m", attr);
        if (idx == 0 && !naming_scheme_has(NAMING_ZERO_ACPI_INDEX))
                return -EINVAL;
        if (!is_valid_onboard_index(idx))
                return log_debug_errno(-ENOENT, "Not a valid onboard index: %llu", idx);
        dev_port = read_dev_port(dev);
        sbuf_add(&b, "o%llu", idx);
        port_suffix(&b, info, dev_port);
        if (b.left == 0)
                n->pci_onboard[0] = '\0';
        if (device_get_sysattr(n->pcidev, "label", &n->pci_onboard_label) < 0)
                n->pci_onboard_label = NULL;
        return 0;
}

/* The multi-function bit of the PCI header type (config space byte 0x0e). */
static int is_pci_multifunction(struct device *d)
{
        char path[PATH_MAX];
        unsigned char config[PCI_HEADER_TYPE + 1];
        ssize_t len;
        int fd;

        if ((size_t)snprintf(path, sizeof(path), "%s/config", device_syspath(d)) >= sizeof(path))
                return -ENAMETOOLONG;
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        len = read(fd, config, sizeof(config));
        safe_close(fd);
        if (len < 0)
                return -EIO;
        if ((size_t)len < sizeof(config))
                return -EINVAL;
        return (config[PCI_HEADER_TYPE] & PCI_HEADER_TYPE_MULTIFUNC) != 0;
}

static bool is_pci_ari_enabled(struct device *d)
{
        const char *a;

        return device_get_sysattr(d, "ari_enabled", &a) >= 0 && streq(a, "1");
}

/* PCI subclass 04 = bridge, from the modalias "...sc04i.." */
static bool is_pci_bridge(struct device *d)
{
        const char *v, *p;

        if (device_get_sysattr(d, "modalias", &v) < 0 || !strneq(v, "pci:", 4))
                return false;
        p = strrchr(v, 's');
        return p && p[1] == 'c' && strneq(p + 2, "04", 2);
}

/* s390: the slot directory is the 8-hex-digit function_id. 1 found, 0 not
 * applicable, <0 error (then no slot name at all). */
static int hotplug_slot_from_function_id(struct device *d, int slots_fd, uint32_t *ret)
{
        unsigned long long id;
        const char *attr;
        char name[16];

        if (!naming_scheme_has(NAMING_SLOT_FUNCTION_ID))
                return 0;
        if (device_get_sysattr(d, "function_id", &attr) < 0)
                return 0;
        if (parse_atollu_full(attr, 0, &id) < 0)
                return -EINVAL;
        if (id == 0 || id > UINT32_MAX)
                return -EINVAL;
        snprintf(name, sizeof(name), "%08llx", id);
        if (faccessat(slots_fd, name, F_OK, 0) < 0)
                return -errno;
        *ret = (uint32_t)id;
        return 1;
}

/* The slot number whose "address" matches `d` (a prefix of its sysname),
 * scanning the slots directory in its on-disk order; 0 if none. -1: use no
 * slot (the matching device is a bridge). */
static long slot_of_device(struct device_ctx *ctx, struct device *pci_bus, DIR *dir,
                           struct device *d, struct net_names *n)
{
        const char *sysname = device_sysname(d);
        struct dirent *de;

        (void)ctx;
        rewinddir(dir);
        while ((de = readdir(dir))) {
                char attr[NAME_MAX + 32];
                const char *address;
                uint32_t i;

                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                if (parse_atou32(de->d_name, &i) < 0 || i == 0)
                        continue;
                snprintf(attr, sizeof(attr), "slots/%s/address", de->d_name);
                if (device_get_sysattr(pci_bus, attr, &address) < 0)
                        continue;
                if (!strneq(sysname, address, strlen(address)))
                        continue;
                /* A bridge's slot would be claimed by every device behind it. */
                if (naming_scheme_has(NAMING_BRIDGE_NO_SLOT) && is_pci_bridge(d)) {
                        if (naming_scheme_has(NAMING_BRIDGE_MULTIFUNCTION_SLOT) &&
                            is_pci_multifunction(n->pcidev) <= 0)
                                return -1;
                        if (!naming_scheme_has(NAMING_BRIDGE_MULTIFUNCTION_SLOT))
                                return -1;
                }
                return i;
        }
        return 0;
}

/* firmware_node/sun (ACPI _SUN, "slot user number"): 0 and *ret, or -errno. */
static int firmware_node_sun(struct device *d, uint32_t *ret)
{
        const char *attr;
        int r;

        r = device_get_sysattr(d, "firmware_node/sun", &attr);
        if (r < 0)
                return r;
        r = parse_atou32(attr, ret);
        if (r < 0)
                log_warning_errno(r, "%s: Failed to parse firmware_node/sun '%s', ignoring: %m",
                                  device_sysname(d), attr);
        return r;
}

static void pci_slot_name(struct device *dev, const struct link_info *info, struct net_names *n,
                          unsigned domain, unsigned func, uint32_t slot,
                          unsigned long long dev_port)
{
        struct sbuf b = { n->pci_slot, sizeof(n->pci_slot) };

        (void)dev;
        if (domain > 0)
                sbuf_add(&b, "P%u", domain);
        sbuf_add(&b, "s%u", slot);
        if (func > 0 || is_pci_multifunction(n->pcidev) > 0)
                sbuf_add(&b, "f%u", func);
        port_suffix(&b, info, dev_port);
        if (b.left == 0)
                n->pci_slot[0] = '\0';
}

static unsigned long long pci_dev_port(struct device *dev, const struct link_info *info)
{
        unsigned long long dev_port = 0;
        const char *attr;

        if (device_get_sysattr(dev, "dev_port", &attr) < 0)
                return 0;
        if (parse_atollu_full(attr, 10, &dev_port) < 0)
                log_debug("%s: Failed to parse attribute dev_port, ignoring", device_sysname(dev));
        /* old IPoIB drivers put the port into dev_id */
        /* systemd 257 reads it as C does ("0x1"), systemd 252 as decimal */
        if (dev_port == 0 && info->iftype == ARPHRD_INFINIBAND &&
            device_get_sysattr(dev, "dev_id", &attr) >= 0 &&
            parse_atollu_full(attr, builtins_follow_systemd_257() ? 0 : 10, &dev_port) < 0)
                log_debug("%s: Failed to parse attribute dev_id, ignoring", device_sysname(dev));
        return dev_port;
}

static int dev_pci_slot(struct device_ctx *ctx, struct device *dev, const struct link_info *info,
                        struct net_names *n)
{
        unsigned domain, bus, slot, func;
        unsigned long long dev_port;
        struct device *pci_bus, *hp;
        struct sbuf b = { n->pci_path, sizeof(n->pci_path) };
        uint32_t hotplug_slot = 0;
        bool found = false;
        char path[PATH_MAX];
        DIR *dir;
        int r;

        if (sscanf(device_sysname(n->pcidev), "%x:%x:%x.%u", &domain, &bus, &slot, &func) != 4)
                return -ENOENT;
        /* ARI: slot and function form one 8-bit function number */
        if (naming_scheme_has(NAMING_NPAR_ARI) && is_pci_ari_enabled(n->pcidev))
                func += slot * 8;
        dev_port = pci_dev_port(dev, info);

        if (domain > 0)
                sbuf_add(&b, "P%u", domain);
        sbuf_add(&b, "p%us%u", bus, slot);
        if (func > 0 || is_pci_multifunction(n->pcidev) > 0)
                sbuf_add(&b, "f%u", func);
        port_suffix(&b, info, dev_port);
        if (b.left == 0)
                n->pci_path[0] = '\0';

        /* ACPI _SUN: the hotplug slot number */
        r = device_from_subsystem_sysname(ctx, "subsystem", "pci", &pci_bus);
        if (r < 0)
                return r;
        if ((size_t)snprintf(path, sizeof(path), "%s/slots", device_syspath(pci_bus)) >=
            sizeof(path))
                return -ENAMETOOLONG;
        dir = opendir(path);
        if (!dir)
                return -errno;
        for (hp = n->pcidev; hp;) {
                long s;

                /* v257: the firmware's _SUN of the device or of a bridge above it */
                if (naming_scheme_has(NAMING_FIRMWARE_NODE_SUN) &&
                    firmware_node_sun(hp, &hotplug_slot) >= 0) {
                        /* a bridge's slot would be claimed by every device behind it */
                        if (naming_scheme_has(NAMING_BRIDGE_NO_SLOT) && is_pci_bridge(hp) &&
                            (!naming_scheme_has(NAMING_BRIDGE_MULTIFUNCTION_SLOT) ||
                             is_pci_multifunction(n->pcidev) <= 0)) {
                                r = -1;
                                break;
                        }
                        found = true;
                        break;
                }
                r = hotplug_slot_from_function_id(hp, dirfd(dir), &hotplug_slot);
                if (r < 0)
                        break;
                if (r > 0) {
                        domain = 0; /* 1:1 between function and slot */
                        found = true;
                        break;
                }
                s = slot_of_device(ctx, pci_bus, dir, hp, n);
                if (s < 0) {
                        r = -1;
                        break;
                }
                if (s > 0) {
                        hotplug_slot = (uint32_t)s;
                        found = true;
                        break;
                }
                if (device_get_parent_with_subsystem_devtype(hp, "pci", NULL, &hp) < 0)
                        break;
        }
        closedir(dir);
        if (r >= 0 && found)
                pci_slot_name(dev, info, n, domain, func, hotplug_slot, dev_port);
        return 0;
}

static int names_vio(struct device *dev, struct net_names *n)
{
        unsigned busid, slotid, ethid;
        struct device *parent = parent_of(dev);
        char sp[PATH_MAX];

        if (!parent || !subsystem_is(parent, "vio"))
                return -ENOENT;
        /* the devpath number is tied to the (virtual) slot: "/devices/vio/30000002/net/eth1" */
        sd_syspath(dev, sp, sizeof(sp));
        if (sscanf(sp, "/sys/devices/vio/%4x%4x/net/eth%u", &busid, &slotid, &ethid) != 3)
                return -EINVAL;
        snprintf(n->vio_slot, sizeof(n->vio_slot), "v%u", slotid);
        n->type = NET_VIO;
        return 0;
}

#define PLATFORM_TEST "/sys/devices/platform/vvvvPPPP"
#define PLATFORM_PATTERN4 "/sys/devices/platform/%4s%4x:%2x/net/eth%u"
#define PLATFORM_PATTERN3 "/sys/devices/platform/%3s%4x:%2x/net/eth%u"
#define UPPER "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

static int names_platform(struct device *dev, struct net_names *n)
{
        struct device *parent = parent_of(dev);
        unsigned model, instance, ethid;
        const char *valid;
        char sp[PATH_MAX], vendor[5];
        int r;

        if (!parent || !subsystem_is(parent, "platform"))
                return -ENOENT;
        sd_syspath(dev, sp, sizeof(sp));
        if (strlen(sp) < STRLEN(PLATFORM_TEST) + 1)
                return -EINVAL;
        /* vendor: PNP id (3 letters) or ACPI id (4 letters/digits) */
        if (sp[STRLEN(PLATFORM_TEST)] == ':') {
                valid = UPPER "0123456789";
                r = sscanf(sp, PLATFORM_PATTERN4, vendor, &model, &instance, &ethid);
        } else {
                valid = UPPER;
                r = sscanf(sp, PLATFORM_PATTERN3, vendor, &model, &instance, &ethid);
        }
        if (r != 4)
                return -EINVAL;
        if (strspn(vendor, valid) != strlen(vendor))
                return -ENOENT;
        for (char *c = vendor; *c; c++)
                if (*c >= 'A' && *c <= 'Z')
                        *c = (char)(*c - 'A' + 'a');
        snprintf(n->platform_path, sizeof(n->platform_path), "a%s%xi%u", vendor, model, instance);
        n->type = NET_PLATFORM;
        return 0;
}

/* "a//b/" == "a/b" */
static bool path_equal(const char *a, const char *b)
{
        for (;;) {
                size_t la, lb;

                a += strspn(a, "/");
                b += strspn(b, "/");
                la = strcspn(a, "/");
                lb = strcspn(b, "/");
                if (la != lb || strncmp(a, b, la) != 0)
                        return false;
                if (la == 0)
                        return true;
                a += la;
                b += lb;
        }
}

/* /proc/device-tree resolved and mapped into the context's sysfs root. */
static int devicetree_base(struct device_ctx *ctx, char *buf, size_t size)
{
        const char *sys = device_ctx_roots(ctx)->sys;
        _cleanup_free_ char *real = realpath("/proc/device-tree", NULL);

        if (!real)
                return -errno;
        if (!strneq(real, "/sys/", 5))
                return -ENODEV;
        if ((size_t)snprintf(buf, size, "%s%s", sys, real + 4) >= size)
                return -ENAMETOOLONG;
        return 0;
}

/* The aliases entry "ethernet<N>" whose value is `node`. */
static int devicetree_alias(const char *aliases, const char *node, unsigned *ret)
{
        struct dirent *de;
        char path[PATH_MAX];
        DIR *dir = opendir(aliases);
        int r = -ENOENT;

        if (!dir)
                return -errno;
        while ((de = readdir(dir))) {
                _cleanup_free_ char *value = NULL;
                const char *idx = de->d_name + STRLEN("ethernet");
                size_t len;
                unsigned i = 0;

                if (!strneq(de->d_name, "ethernet", STRLEN("ethernet")) || de->d_type == DT_DIR)
                        continue;
                if ((size_t)snprintf(path, sizeof(path), "%s/%s", aliases, de->d_name) >=
                    sizeof(path))
                        continue;
                if (read_file_bounded(path, 4096, &value, &len) < 0)
                        continue;
                while (len > 0 && (value[len - 1] == '\n' || value[len - 1] == '\r'))
                        value[--len] = '\0';
                if (!path_equal(node, value))
                        continue;
                if (*idx && parse_atou(idx, &i) < 0) {
                        r = -EINVAL;
                        break;
                }
                /* "ethernet" and "ethernet0" both present: ambiguous */
                if ((size_t)snprintf(path, sizeof(path), "%s/%s", aliases,
                                     *idx ? "ethernet" : "ethernet0") >= sizeof(path))
                        continue;
                if (i == 0 && access(path, F_OK) >= 0) {
                        r = -EEXIST;
                        break;
                }
                *ret = i;
                r = 0;
                break;
        }
        closedir(dir);
        return r;
}

static int dev_devicetree_onboard(struct device_ctx *ctx, struct device *dev, struct net_names *n)
{
        struct device *parent = parent_of(dev);
        char base[PATH_MAX], path[PATH_MAX];
        _cleanup_free_ char *ofnode = NULL;
        size_t blen;
        unsigned i = 0;
        int r;

        if (!naming_scheme_has(NAMING_DEVICETREE_ALIASES))
                return 0;
        /* v257: a port of a multi-port controller has an of_node of its own */
        if (naming_scheme_has(NAMING_DEVICETREE_PORT_ALIASES) &&
            (size_t)snprintf(path, sizeof(path), "%s/of_node", device_syspath(dev)) <
                    sizeof(path))
                ofnode = realpath(path, NULL);
        if (!ofnode) {
                if (!parent)
                        return -ENOENT;
                if ((size_t)snprintf(path, sizeof(path), "%s/of_node", device_syspath(parent)) >=
                    sizeof(path))
                        return -ENAMETOOLONG;
                ofnode = realpath(path, NULL);
                if (!ofnode)
                        return -errno;
        }
        r = devicetree_base(ctx, base, sizeof(base));
        if (r < 0)
                return r;
        blen = strlen(base);
        if (!strneq(ofnode, base, blen) || (ofnode[blen] != '/' && ofnode[blen] != '\0'))
                return -ENOENT;
        if ((size_t)snprintf(path, sizeof(path), "%s/aliases", base) >= sizeof(path))
                return -ENAMETOOLONG;
        r = devicetree_alias(path, ofnode[blen] ? ofnode + blen : "/", &i);
        if (r < 0)
                return r;
        snprintf(n->devicetree_onboard, sizeof(n->devicetree_onboard), "d%u", i);
        n->type = NET_DEVICETREE;
        return 0;
}

/* "<physical function name><suffix>" if it fits, else left empty */
static void vf_name(char dst[static ALTIFNAMSIZ], const char *pf, const char *suffix)
{
        char tmp[ALTIFNAMSIZ];

        if (!pf[0] || strlen(pf) + strlen(suffix) >= ALTIFNAMSIZ)
                return;
        if ((size_t)snprintf(tmp, sizeof(tmp), "%s%s", pf, suffix) < sizeof(tmp))
                memcpy(dst, tmp, sizeof(tmp));
}

static int names_pci(struct device_ctx *ctx, struct device *dev, const struct link_info *info,
                     struct net_names *n)
{
        struct device *parent = parent_of(dev), *pf = NULL;
        char suffix[32];
        int r;

        if (!parent)
                return -ENOENT;
        parent = skip_virtio(parent);
        if (!parent)
                return -ENOENT;
        /* directly on a PCI device, no other bus in between */
        if (subsystem_is(parent, "pci")) {
                n->type = NET_PCI;
                n->pcidev = parent;
        } else {
                r = device_get_parent_with_subsystem_devtype(dev, "pci", NULL, &n->pcidev);
                if (r < 0)
                        return r;
        }
        if (naming_scheme_has(NAMING_SR_IOV_V) &&
            get_virtfn_info(ctx, n->pcidev, &pf, suffix, sizeof(suffix)) >= 0) {
                struct net_names vf = { .pcidev = pf };

                /* a virtual function: the physical function's names + "v<N>" */
                (void)dev_pci_onboard(dev, info, &vf);
                (void)dev_pci_slot(ctx, dev, info, &vf);
                vf_name(n->pci_onboard, vf.pci_onboard, suffix);
                vf_name(n->pci_slot, vf.pci_slot, suffix);
                vf_name(n->pci_path, vf.pci_path, suffix);
        } else {
                (void)dev_pci_onboard(dev, info, n);
                (void)dev_pci_slot(ctx, dev, info, n);
        }
        return 0;
}

static int names_usb(struct device *dev, struct net_names *n)
{
        char name[256], *ports, *config, *intf, *s;
        struct device *usb;
        struct sbuf b = { n->usb_ports, sizeof(n->usb_ports) };
        int r;

        r = device_get_parent_with_subsystem_devtype(dev, "usb", "usb_interface", &usb);
        if (r < 0)
                return r;
        /* "<bus>-<port>[.<port>...]:<config>.<interface>" */
        snprintf(name, sizeof(name), "%s", device_sysname(usb));
        s = strchr(name, '-');
        if (!s)
                return -EINVAL;
        ports = s + 1;
        s = strchr(ports, ':');
        if (!s)
                return -EINVAL;
        *s = '\0';
        config = s + 1;
        s = strchr(config, '.');
        if (!s)
                return -EINVAL;
        *s = '\0';
        intf = s + 1;
        /* every port number in the chain gets a "u" */
        for (s = ports; (s = strchr(s, '.'));)
                *s = 'u';
        sbuf_add(&b, "u%s", ports);
        /* config 1 and interface 0 are the common case, left out */
        if (!streq(config, "1"))
                sbuf_add(&b, "c%s", config);
        if (!streq(intf, "0"))
                sbuf_add(&b, "i%s", intf);
        if (b.left == 0)
                return -ENAMETOOLONG;
        n->type = NET_USB;
        return 0;
}

static int names_bcma(struct device *dev, struct net_names *n)
{
        struct device *bcma;
        unsigned core;

        if (device_get_parent_with_subsystem_devtype(dev, "bcma", NULL, &bcma) < 0)
                return -ENOENT;
        if (sscanf(device_sysname(bcma), "bcma%*u:%u", &core) != 1)
                return -EINVAL;
        /* core 0 is the common case, left out */
        if (core > 0)
                snprintf(n->bcma_core, sizeof(n->bcma_core), "b%u", core);
        n->type = NET_BCMA;
        return 0;
}

static int names_ccw(struct device *dev, struct net_names *n)
{
        struct device *cdev = parent_of(dev);
        const char *bus_id;
        size_t start, len;

        if (!cdev)
                return -ENOENT;
        cdev = skip_virtio(cdev);
        if (!cdev)
                return -ENOENT;
        /* single or grouped CCW devices */
        if (!subsystem_is(cdev, "ccwgroup") && !subsystem_is(cdev, "ccw"))
                return -ENOENT;
        bus_id = device_sysname(cdev);
        len = strlen(bus_id);
        if (len != 8 && len != 9)
                return -EINVAL;
        /* "0.0.0600" -> "600"; keep the last 0 of "0.0.0000" */
        start = strspn(bus_id, ".0");
        bus_id += start < len ? start : len - 1;
        if ((size_t)snprintf(n->ccw_busid, sizeof(n->ccw_busid), "c%s", bus_id) >=
            sizeof(n->ccw_busid))
                return -ENAMETOOLONG;
        n->type = NET_CCW;
        return 0;
}

static int names_mac(struct device *dev, const struct link_info *info)
{
        const char *s;
        unsigned t;
        int r;

        /* InfiniBand's 20-byte addresses do not fit in a name */
        if (info->iftype == ARPHRD_INFINIBAND || info->hw_addr.length != 6)
                return -EOPNOTSUPP;
        /* random MAC addresses are not stable */
        r = device_get_sysattr(dev, "addr_assign_type", &s);
        if (r < 0)
                return r;
        r = parse_atou(s, &t);
        if (r < 0)
                return r;
        return t == NET_ADDR_PERM ? 0 : -EINVAL;
}

static int names_netdevsim(struct device *dev, const struct link_info *info, struct net_names *n)
{
        struct device *sim;
        unsigned addr;

        if (!naming_scheme_has(NAMING_NETDEVSIM))
                return 0;
        if (!info->phys_port_name || !info->phys_port_name[0])
                return -EINVAL;
        if (device_get_parent_with_subsystem_devtype(dev, "netdevsim", NULL, &sim) < 0)
                return -ENOENT;
        if (sscanf(device_sysname(sim), "netdevsim%u", &addr) != 1)
                return -EINVAL;
        if ((size_t)snprintf(n->netdevsim_path, sizeof(n->netdevsim_path), "i%un%s", addr,
                             info->phys_port_name) >= sizeof(n->netdevsim_path))
                return -ENOBUFS;
        n->type = NET_NETDEVSIM;
        return 0;
}

static int names_xen(struct device *dev, struct net_names *n)
{
        struct device *parent;
        char sp[PATH_MAX], num[32];
        const char *p, *end;
        unsigned id;

        if (!naming_scheme_has(NAMING_XEN_VIF))
                return 0;
        parent = parent_of(dev);
        /* exactly "xen": the backend's (dom0) VIFs are named otherwise */
        if (!parent || !subsystem_is(parent, "xen"))
                return -ENOENT;
        sd_syspath(dev, sp, sizeof(sp));
        p = sp + STRLEN("/sys/devices/");
        if (!strneq(p, "vif-", 4))
                return -ENOENT;
        p += 4;
        end = strchr(p, '/');
        if (!end || (size_t)(end - p) >= sizeof(num))
                return -ENOENT;
        memcpy(num, p, (size_t)(end - p));
        num[end - p] = '\0';
        if (parse_atou_full(num, 10 | PARSE_REFUSE_PLUS_MINUS | PARSE_REFUSE_LEADING_ZERO |
                                         PARSE_REFUSE_LEADING_WHITESPACE, &id) < 0)
                return -EINVAL;
        snprintf(n->xen_slot, sizeof(n->xen_slot), "X%u", id);
        n->type = NET_XENVIF;
        return 0;
}

/* ID_OUI_FROM_DATABASE & co. through the hwdb builtin ("OUI:XXXXXXXXXXXX"). */
static void ieee_oui(struct udev_event *ev, const struct link_info *info, bool test)
{
        const uint8_t *b = info->hw_addr.bytes;
        char key[32];
        char *argv[] = { (char *)"hwdb", key, NULL };

        if (info->hw_addr.length != 6)
                return;
        /* 00:00:00 (Xerox) is commonly misused */
        if (b[0] == 0 && b[1] == 0 && b[2] == 0)
                return;
        snprintf(key, sizeof(key), "OUI:%02X%02X%02X%02X%02X%02X", b[0], b[1], b[2], b[3], b[4],
                 b[5]);
        (void)builtin_hwdb(ev, 2, argv, test);
}

static int sysattr_int(struct device *d, const char *name, int *ret)
{
        const char *v;
        int r;

        r = device_get_sysattr(d, name, &v);
        if (r < 0)
                return r;
        return parse_atoi(v, ret);
}

static int get_link_info(struct device *dev, struct link_info *info)
{
        const char *s;
        int r;

        r = device_get_ifindex(dev, &info->ifindex);
        if (r < 0)
                return r;
        r = sysattr_int(dev, "iflink", &info->iflink);
        if (r < 0)
                return r;
        r = sysattr_int(dev, "type", &info->iftype);
        if (r < 0)
                return r;
        r = device_get_devtype(dev, &info->devtype);
        if (r < 0 && r != -ENOENT)
                return r;
        if (device_get_sysattr(dev, "phys_port_name", &info->phys_port_name) < 0)
                info->phys_port_name = NULL;
        r = device_get_sysattr(dev, "address", &s);
        if (r < 0 && r != -ENOENT)
                return r;
        if (r >= 0 && parse_hw_addr_full(s, 0, &info->hw_addr) < 0)
                log_debug("%s: Failed to parse 'address' sysattr, ignoring", device_sysname(dev));
        return 0;
}

static int add_name(struct udev_event *ev, bool test, const char *key, const char *a,
                    const char *b, const char *c)
{
        char str[ALTIFNAMSIZ];

        if ((size_t)snprintf(str, sizeof(str), "%s%s%s", a, b, c) >= sizeof(str))
                return 0;
        return builtin_add_property(ev, test, key, str);
}

/* Names from the PCI device and the bus below it (USB, BCMA). */
static int pci_based_names(struct udev_event *ev, bool test, const char *prefix,
                           struct net_names *n)
{
        struct device *dev = ev->dev;
        int r = 0;

        if (n->type == NET_PCI) {
                const char *lp = naming_scheme_has(NAMING_LABEL_NOPREFIX) ? "" : prefix;
                bool label_first = builtins_follow_systemd_257(); /* systemd 257's order */

                if (label_first && n->pci_onboard_label)
                        r = add_name(ev, test, "ID_NET_LABEL_ONBOARD", lp, n->pci_onboard_label,
                                     "");
                if (r >= 0 && n->pci_onboard[0])
                        r = add_name(ev, test, "ID_NET_NAME_ONBOARD", prefix, n->pci_onboard, "");
                if (r >= 0 && !label_first && n->pci_onboard_label)
                        r = add_name(ev, test, "ID_NET_LABEL_ONBOARD", lp, n->pci_onboard_label,
                                     "");
                if (r >= 0 && n->pci_path[0])
                        r = add_name(ev, test, "ID_NET_NAME_PATH", prefix, n->pci_path, "");
                if (r >= 0 && n->pci_slot[0])
                        r = add_name(ev, test, "ID_NET_NAME_SLOT", prefix, n->pci_slot, "");
                return r;
        }
        if (names_usb(dev, n) >= 0 && n->type == NET_USB) {
                if (n->pci_path[0])
                        r = add_name(ev, test, "ID_NET_NAME_PATH", prefix, n->pci_path,
                                     n->usb_ports);
                if (r >= 0 && n->pci_slot[0])
                        r = add_name(ev, test, "ID_NET_NAME_SLOT", prefix, n->pci_slot,
                                     n->usb_ports);
                return r;
        }
        if (names_bcma(dev, n) >= 0 && n->type == NET_BCMA) {
                if (n->pci_path[0])
                        r = add_name(ev, test, "ID_NET_NAME_PATH", prefix, n->pci_path,
                                     n->bcma_core);
                if (r >= 0 && n->pci_slot[0])
                        r = add_name(ev, test, "ID_NET_NAME_SLOT", prefix, n->pci_slot,
                                     n->bcma_core);
        }
        return r;
}

static const char *name_prefix(const struct link_info *info)
{
        const char *prefix;

        switch (info->iftype) {
        case ARPHRD_ETHER:
                prefix = "en";
                break;
        case ARPHRD_INFINIBAND:
                if (!naming_scheme_has(NAMING_INFINIBAND))
                        return NULL;
                prefix = "ib";
                break;
        case ARPHRD_SLIP:
                prefix = "sl";
                break;
        default:
                return NULL;
        }
        if (info->devtype && streq(info->devtype, "wlan"))
                prefix = "wl";
        else if (info->devtype && streq(info->devtype, "wwan"))
                prefix = "ww";
        return prefix;
}

int builtin_net_id(struct udev_event *ev, int argc, char *argv[], bool test)
{
        struct net_names *n;
        struct link_info info = { 0 };
        struct device *dev = ev->dev;
        const char *prefix;
        int r;

        (void)argc, (void)argv;
        r = get_link_info(dev, &info);
        if (r < 0)
                return r;
        /* stacked devices (VLANs, ...) */
        if (info.ifindex != info.iflink)
                return 0;
        prefix = name_prefix(&info);
        if (!prefix)
                return 0;
        r = builtin_add_property(ev, test, "ID_NET_NAMING_SCHEME", naming_scheme()->name);
        if (r < 0)
                return r;
        if (names_mac(dev, &info) >= 0) {
                char mac[HW_ADDR_STR_MAX];

                r = add_name(ev, test, "ID_NET_NAME_MAC", prefix, "x",
                             hw_addr_to_string(&info.hw_addr, true, mac));
                if (r < 0)
                        return r;
                ieee_oui(ev, &info, test);
        }

        n = calloc(1, sizeof(*n));
        if (!n)
                return -ENOMEM;
        /* devicetree aliases, ethernet only */
        if (streq(prefix, "en") && dev_devicetree_onboard(ev->ctx, dev, n) >= 0 &&
            n->type == NET_DEVICETREE)
                r = add_name(ev, test, "ID_NET_NAME_ONBOARD", prefix, n->devicetree_onboard, "");
        if (r < 0)
                goto out;
        if (names_ccw(dev, n) >= 0 && n->type == NET_CCW)
                r = add_name(ev, test, "ID_NET_NAME_PATH", prefix, n->ccw_busid, "");
        else if (names_vio(dev, n) >= 0 && n->type == NET_VIO)
                r = add_name(ev, test, "ID_NET_NAME_SLOT", prefix, n->vio_slot, "");
        else if (names_platform(dev, n) >= 0 && n->type == NET_PLATFORM)
                r = add_name(ev, test, "ID_NET_NAME_PATH", prefix, n->platform_path, "");
        else if (names_netdevsim(dev, &info, n) >= 0 && n->type == NET_NETDEVSIM)
                r = add_name(ev, test, "ID_NET_NAME_PATH", prefix, n->netdevsim_path, "");
        else if (names_xen(dev, n) >= 0 && n->type == NET_XENVIF)
                r = add_name(ev, test, "ID_NET_NAME_SLOT", prefix, n->xen_slot, "");
        else if (names_pci(ev->ctx, dev, &info, n) >= 0)
                r = pci_based_names(ev, test, prefix, n);
        else if (naming_scheme_has(NAMING_USB_HOST) && names_usb(dev, n) >= 0)
                /* v253: a USB device on a host controller that is not on PCI */
                r = add_name(ev, test, "ID_NET_NAME_PATH", prefix, n->usb_ports, "");
out:
        free(n);
        return r < 0 ? r : 0;
}
