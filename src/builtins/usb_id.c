/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (no global state) */
/* usb_id: vendor, model, serial, type and interface list of a USB device,
 * as systemd 252 composes them, including its buffer sizes (values are cut
 * where systemd cuts them). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "builtins/builtin-util.h"
#include "builtins/builtins-internal.h"
#include "device/device.h"
#include "event/event-format.h"
#include "event/udev-event.h"
#include "shared/log.h"
#include "shared/macro.h"

#define USB_STR_MAX 64            /* vendor/model/revision/type/instance buffers */
#define USB_ENC_MAX 256           /* *_ENC buffers */
#define USB_DESCRIPTORS_MAX (18 + 65535)
#define USB_DT_INTERFACE 0x04
#define USB_IF_DESC_SIZE 9        /* struct usb_interface_descriptor */

struct usb_info {
        char vendor[USB_STR_MAX];
        char vendor_enc[USB_ENC_MAX];
        char model[USB_STR_MAX];
        char model_enc[USB_ENC_MAX];
        char revision[USB_STR_MAX];
        char serial_short[UDEV_NAME_SIZE];
        char type[USB_STR_MAX];
        char instance[USB_STR_MAX];
        char interfaces[UDEV_NAME_SIZE];
        char serial[256];
        const char *vendor_id, *product_id;
        const char *ifnum, *driver;
};

static bool devnode_char_ok(char c)
{
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
               (c && strchr("#+-.:=@_", c));
}

/* systemd's encode_devnode_name(): valid multi-byte UTF-8 and allowed
 * characters are copied, everything else (and '\\') becomes "\xNN". Output
 * that does not fit ends where it stopped (systemd leaves it unterminated). */
static void encode_devnode_name(const char *s, char *out, size_t size)
{
        size_t j = 0;

        for (size_t i = 0; s[i]; i++) {
                int len = udev_utf8_char_len(s + i);

                if (len > 1) {
                        if (size - j < (size_t)len + 1)
                                break;
                        memcpy(out + j, s + i, (size_t)len);
                        j += (size_t)len;
                        i += (size_t)len - 1;
                } else if (s[i] == '\\' || !devnode_char_ok(s[i])) {
                        if (size - j < 4 + 1)
                                break;
                        snprintf(out + j, 5, "\\x%02x", (unsigned char)s[i]);
                        j += 4;
                } else {
                        if (size - j < 1 + 1)
                                break;
                        out[j++] = s[i];
                }
        }
        out[j] = '\0';
}

/* Plain value: whitespace folded to '_' (at most size - 1 bytes read, as
 * systemd passes sizeof - 1), then sanitised. */
static void clean_value(const char *s, char *out, size_t size)
{
        udev_replace_whitespace(s, out, size - 1);
        udev_replace_chars(out, NULL);
}

static const char *usb_iftype(unsigned cls)
{
        switch (cls) {
        case 1: return "audio";
        case 3: return "hid";
        case 6: return "media";
        case 7: return "printer";
        case 8: return "storage";
        case 9: return "hub";
        case 0x0e: return "video";
        default: return "generic";
        }
}

/* Mass storage protocol from bInterfaceSubClass; sets the type name. */
static int mass_storage_protocol(const char *subclass, char *type, size_t size)
{
        const char *t = "generic";
        int n = 0;

        if (parse_atoi(subclass, &n) >= 0) {
                switch (n) {
                case 1: t = "rbc"; break;
                case 2: t = "atapi"; break;
                case 3: t = "tape"; break;
                case 4: t = "floppy"; break;
                case 6: t = "scsi"; break;
                default: break;
                }
        }
        snprintf(type, size, "%s", t);
        return n;
}

static void scsi_type(const char *from, char *type, size_t size)
{
        const char *t = "generic";
        unsigned n;

        if (parse_atou(from, &n) >= 0) {
                switch (n) {
                case 0: case 0xe: t = "disk"; break;
                case 1: t = "tape"; break;
                case 4: case 7: case 0xf: t = "optical"; break;
                case 5: t = "cd"; break;
                default: break;
                }
        }
        snprintf(type, size, "%s", t);
}

/* ":CCSSPP:CCSSPP:" of the distinct interface descriptors in the usb_device's
 * "descriptors" file. Leaves `out` alone if the file is short; on corrupt data
 * the list stops where it was (without the closing ':'), as in systemd. */
static void packed_interfaces(struct device *usb, char *out, size_t size)
{
        _cleanup_free_ uint8_t *buf = NULL;
        _cleanup_close_ int fd = -1;
        char path[PATH_MAX];
        size_t pos = 0, n = 0;
        ssize_t len;

        if ((size_t)snprintf(path, sizeof(path), "%s/descriptors", device_syspath(usb)) >=
            sizeof(path))
                return;
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return;
        buf = malloc(USB_DESCRIPTORS_MAX);
        if (!buf)
                return;
        len = read(fd, buf, USB_DESCRIPTORS_MAX);
        if (len < 18) {
                log_debug("Short read from \"%s\"", path);
                return;
        }
        out[0] = '\0';
        while (pos + USB_IF_DESC_SIZE < (size_t)len && n + 7 < size - 2) {
                const uint8_t *d = buf + pos;
                char one[8];

                if (d[0] < 3) /* bLength */
                        break;
                if (d[0] > (size_t)len - USB_IF_DESC_SIZE) {
                        log_debug("Corrupt data read from \"%s\"", path);
                        return;
                }
                pos += d[0];
                if (d[1] != USB_DT_INTERFACE)
                        continue;
                snprintf(one, sizeof(one), ":%02x%02x%02x", d[5], d[6], d[7]);
                if (strstr(out, one))
                        continue;
                memcpy(out + n, one, sizeof(one));
                n += 7;
        }
        if (n > 0) {
                out[n++] = ':';
                out[n] = '\0';
        }
}

/* Vendor/model/revision/type/instance from the SCSI device of a mass storage
 * interface. false: fall back to the USB strings (partial values stay). */
static bool scsi_strings(struct udev_event *ev, struct usb_info *u)
{
        struct device *scsi;
        const char *v;
        int host, bus, target, lun;

        if (device_get_parent_with_subsystem_devtype(ev->dev, "scsi", "scsi_device", &scsi) < 0)
                return false;
        if (sscanf(device_sysname(scsi), "%d:%d:%d:%d", &host, &bus, &target, &lun) != 4)
                return false;
        if (device_get_sysattr(scsi, "vendor", &v) < 0)
                return false;
        encode_devnode_name(v, u->vendor_enc, sizeof(u->vendor_enc));
        clean_value(v, u->vendor, sizeof(u->vendor));
        if (device_get_sysattr(scsi, "model", &v) < 0)
                return false;
        encode_devnode_name(v, u->model_enc, sizeof(u->model_enc));
        clean_value(v, u->model, sizeof(u->model));
        if (device_get_sysattr(scsi, "type", &v) < 0)
                return false;
        scsi_type(v, u->type, sizeof(u->type));
        if (device_get_sysattr(scsi, "rev", &v) < 0)
                return false;
        clean_value(v, u->revision, sizeof(u->revision));
        /* some devices have the same ids on every LUN */
        snprintf(u->instance, sizeof(u->instance), "%d:%d", target, lun);
        return true;
}

/* The interface data; fills u and returns the usb_device in *ret_usb. */
static int interface_info(struct udev_event *ev, struct usb_info *u, struct device **ret_usb)
{
        struct device *intf;
        const char *cls, *subclass;
        unsigned cls_num;
        int protocol = 0;
        int r;

        r = device_get_parent_with_subsystem_devtype(ev->dev, "usb", "usb_interface", &intf);
        if (r < 0)
                return log_debug_errno(r, "%s: Failed to access usb_interface: %m",
                                       device_sysname(ev->dev));
        (void)device_get_sysattr(intf, "bInterfaceNumber", &u->ifnum);
        (void)device_get_sysattr(intf, "driver", &u->driver);
        r = device_get_sysattr(intf, "bInterfaceClass", &cls);
        if (r < 0)
                return log_debug_errno(r, "Failed to get bInterfaceClass attribute: %m");
        r = parse_atou_full(cls, 16, &cls_num);
        if (r < 0)
                return log_debug_errno(r, "Failed to parse if_class '%s': %m", cls);
        if (cls_num == 8) {
                if (device_get_sysattr(intf, "bInterfaceSubClass", &subclass) >= 0)
                        protocol = mass_storage_protocol(subclass, u->type, sizeof(u->type) - 1);
        } else {
                snprintf(u->type, sizeof(u->type) - 1, "%s", usb_iftype(cls_num));
        }
        r = device_get_parent_with_subsystem_devtype(intf, "usb", "usb_device", ret_usb);
        if (r < 0)
                return log_debug_errno(r, "Failed to find parent 'usb' device: %m");
        packed_interfaces(*ret_usb, u->interfaces, sizeof(u->interfaces));
        /* mass storage: SCSI or ATAPI */
        if (protocol == 6 || protocol == 2)
                (void)scsi_strings(ev, u);
        return 0;
}

/* append to serial with strpcpyl() semantics: stop (truncate) when full */
static void serial_append(char *buf, size_t size, const char *s)
{
        size_t n = strlen(buf), len = strlen(s);

        if (n + 1 >= size)
                return;
        if (len > size - n - 1)
                len = size - n - 1;
        memcpy(buf + n, s, len);
        buf[n + len] = '\0';
}

/* The serial attribute, only if every byte is 0x20..0x7f and not ','. */
static void usb_serial(struct device *usb, struct usb_info *u)
{
        const char *s;

        if (device_get_sysattr(usb, "serial", &s) < 0)
                return;
        for (const unsigned char *p = (const unsigned char *)s; *p; p++)
                if (*p < 0x20 || *p > 0x7f || *p == ',')
                        return;
        clean_value(s, u->serial_short, sizeof(u->serial_short));
}

static int usb_strings(struct device *usb, struct usb_info *u)
{
        const char *s;
        int r;

        r = device_get_sysattr(usb, "idVendor", &u->vendor_id);
        if (r < 0)
                return log_debug_errno(r, "Failed to get idVendor attribute: %m");
        r = device_get_sysattr(usb, "idProduct", &u->product_id);
        if (r < 0)
                return log_debug_errno(r, "Failed to get idProduct attribute: %m");
        if (!u->vendor[0]) {
                if (device_get_sysattr(usb, "manufacturer", &s) < 0)
                        s = u->vendor_id;
                encode_devnode_name(s, u->vendor_enc, sizeof(u->vendor_enc));
                clean_value(s, u->vendor, sizeof(u->vendor));
        }
        if (!u->model[0]) {
                if (device_get_sysattr(usb, "product", &s) < 0)
                        s = u->product_id;
                encode_devnode_name(s, u->model_enc, sizeof(u->model_enc));
                clean_value(s, u->model, sizeof(u->model));
        }
        if (!u->revision[0] && device_get_sysattr(usb, "bcdDevice", &s) >= 0)
                clean_value(s, u->revision, sizeof(u->revision));
        if (!u->serial_short[0])
                usb_serial(usb, u);

        serial_append(u->serial, sizeof(u->serial), u->vendor);
        serial_append(u->serial, sizeof(u->serial), "_");
        serial_append(u->serial, sizeof(u->serial), u->model);
        if (u->serial_short[0]) {
                serial_append(u->serial, sizeof(u->serial), "_");
                serial_append(u->serial, sizeof(u->serial), u->serial_short);
        }
        if (u->instance[0]) {
                serial_append(u->serial, sizeof(u->serial), "-");
                serial_append(u->serial, sizeof(u->serial), u->instance);
        }
        return 0;
}

struct prop_item {
        const char *key;
        const char *value;
        bool set; /* false: skipped (empty optional value) */
};

static int add_all(struct udev_event *ev, bool test, const struct prop_item *items, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                int r;

                if (!items[i].set)
                        continue;
                r = builtin_add_property(ev, test, items[i].key, items[i].value);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int export_properties(struct udev_event *ev, bool test, const struct usb_info *u)
{
        bool serial = u->serial_short[0], type = u->type[0], inst = u->instance[0];
        const struct prop_item generic[] = {
                { "ID_BUS", "usb", true },
                { "ID_MODEL", u->model, true },
                { "ID_MODEL_ENC", u->model_enc, true },
                { "ID_MODEL_ID", u->product_id, true },
                { "ID_SERIAL", u->serial, true },
                { "ID_SERIAL_SHORT", u->serial_short, serial },
                { "ID_VENDOR", u->vendor, true },
                { "ID_VENDOR_ENC", u->vendor_enc, true },
                { "ID_VENDOR_ID", u->vendor_id, true },
                { "ID_REVISION", u->revision, true },
                { "ID_TYPE", u->type, type },
                { "ID_INSTANCE", u->instance, inst },
        };
        const struct prop_item usb[] = {
                { "ID_USB_MODEL", u->model, true },
                { "ID_USB_MODEL_ENC", u->model_enc, true },
                { "ID_USB_MODEL_ID", u->product_id, true },
                { "ID_USB_SERIAL", u->serial, true },
                { "ID_USB_SERIAL_SHORT", u->serial_short, serial },
                { "ID_USB_VENDOR", u->vendor, true },
                { "ID_USB_VENDOR_ENC", u->vendor_enc, true },
                { "ID_USB_VENDOR_ID", u->vendor_id, true },
                { "ID_USB_REVISION", u->revision, true },
                { "ID_USB_TYPE", u->type, type },
                { "ID_USB_INSTANCE", u->instance, inst },
                { "ID_USB_INTERFACES", u->interfaces, u->interfaces[0] != '\0' },
                { "ID_USB_INTERFACE_NUM", u->ifnum, u->ifnum != NULL },
                { "ID_USB_DRIVER", u->driver, u->driver != NULL },
        };
        int r;

        if (proplist_get(&ev->props, "ID_BUS"))
                log_debug("%s: ID_BUS property is already set, setting only properties "
                          "prefixed with \"ID_USB_\".", device_sysname(ev->dev));
        else {
                r = add_all(ev, test, generic, ARRAY_SIZE(generic));
                if (r < 0)
                        return r;
        }
        return add_all(ev, test, usb, ARRAY_SIZE(usb));
}

int builtin_usb_id(struct udev_event *ev, int argc, char *argv[], bool test)
{
        _cleanup_free_ struct usb_info *u = calloc(1, sizeof(*u));
        struct device *usb;
        const char *devtype;
        int r;

        (void)argc, (void)argv;
        if (!u)
                return -ENOMEM;
        if (device_get_devtype(ev->dev, &devtype) >= 0 && streq(devtype, "usb_device")) {
                /* called on the usb_device itself */
                usb = ev->dev;
                packed_interfaces(usb, u->interfaces, sizeof(u->interfaces));
        } else {
                r = interface_info(ev, u, &usb);
                if (r < 0)
                        return r;
        }
        r = usb_strings(usb, u);
        if (r < 0)
                return r;
        return export_properties(ev, test, u);
}
