/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (no state outside the call) */
/* The keyboard builtin, as systemd 252's
 * udev-builtin-keyboard.c. Applies the event's properties (normally imported
 * from hwdb by 60-evdev.rules), in property order:
 *
 *   KEYBOARD_KEY_<hex scan>=[!]<key>  EVIOCSKEYCODE scan -> key (a name from
 *                                     keyboard-keys.h or a number); '!' also
 *                                     adds the scan code to the serio
 *                                     parent's force_release list ("!" alone:
 *                                     only that)
 *   EVDEV_ABS_<hex axis>=min:max:res:fuzz:flat
 *                                     EVIOCGABS, override the given fields,
 *                                     EVIOCSABS (if the device has EV_ABS)
 *   POINTINGSTICK_SENSITIVITY=<0..255>  the serio parent's "sensitivity"
 *
 * The node is opened read-write on first need; if that fails the builtin
 * fails. Sets no properties. Sysfs writes add a newline, as sd-device's
 * sd_device_set_sysattr_value() does. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/input.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "builtins/builtins-internal.h"
#include "builtins/keyboard-keys.h"
#include "device/device.h"
#include "event/udev-event.h"
#include "shared/log.h"
#include "shared/macro.h"

#define RELEASE_MAX 1024         /* force-release scan codes kept (systemd's array) */
#define FORCE_RELEASE_MAX 4096   /* longest force_release value written */

struct kbd {
        struct udev_event *ev;
        const char *sysname;
        const char *node;
        int fd;           /* -1 until needed */
        int has_abs;      /* -1 = not asked yet */
        unsigned release[RELEASE_MAX];
        unsigned n_release;
};

static int key_cmp(const void *a, const void *b)
{
        return strcmp(a, ((const struct keyboard_key *)b)->name);
}

/* systemd's safe_atou_full(): leading blanks, no sign, the whole string. */
static int parse_uint(const char *s, int base, unsigned *ret)
{
        unsigned long v;
        char *end;

        s += strspn(s, " \t\n\r");
        if (*s == '-' || *s == '+' || *s == '\0')
                return -EINVAL;
        errno = 0;
        v = strtoul(s, &end, base);
        if (errno != 0)
                return -errno;
        if (*end != '\0' || end == s)
                return -EINVAL;
        if (v > UINT32_MAX)
                return -ERANGE;
        *ret = (unsigned)v;
        return 0;
}

/* systemd's safe_atoi() (base 0). */
static int parse_int(const char *s, int *ret)
{
        long v;
        char *end;

        errno = 0;
        v = strtol(s, &end, 0);
        if (errno != 0)
                return -errno;
        if (*end != '\0' || end == s)
                return -EINVAL;
        if (v < INT32_MIN || v > INT32_MAX)
                return -ERANGE;
        *ret = (int)v;
        return 0;
}

/* Like sd_device_open(): the node must be the device's own. */
static int open_node(struct kbd *k)
{
        unsigned major, minor;
        struct stat st;
        int fd;

        if (k->fd >= 0)
                return 0;
        if (device_get_devnum(k->ev->dev, &major, &minor) < 0)
                return log_error_errno(-ENOENT, "%s: Failed to open device '%s': %m",
                                       k->sysname, k->node);
        fd = open(k->node, O_RDWR | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        if (fd < 0)
                return log_error_errno(negative_errno(), "%s: Failed to open device '%s': %m",
                                       k->sysname, k->node);
        if (fstat(fd, &st) < 0 || !S_ISCHR(st.st_mode) || st.st_rdev != makedev(major, minor)) {
                safe_close(fd);
                return log_error_errno(-ENXIO, "%s: Failed to open device '%s': %m", k->sysname,
                                       k->node);
        }
        k->fd = fd;
        return 0;
}

static void map_keycode(struct kbd *k, unsigned scancode, const char *keycode)
{
        const struct keyboard_key *e = bsearch(keycode, keyboard_keys, ARRAY_SIZE(keyboard_keys),
                                               sizeof(keyboard_keys[0]), key_cmp);
        struct {
                unsigned scan;
                unsigned key;
        } map;
        int r;

        if (e)
                map.key = e->code;
        else {
                r = parse_uint(keycode, 0, &map.key);
                if (r < 0) {
                        log_error_errno(r, "%s: Failed to parse key identifier '%s': %m",
                                        k->sysname, keycode);
                        return;
                }
        }
        map.scan = scancode;
        log_debug("%s: keyboard: mapping scan code %u (0x%x) to key code %u (0x%x)", k->sysname,
                  map.scan, map.scan, map.key, map.key);
        if (ioctl(k->fd, EVIOCSKEYCODE, &map) < 0)
                log_error_errno(negative_errno(),
                                "%s: Failed to call EVIOCSKEYCODE with scan code 0x%x, and key "
                                "code %u: %m", k->sysname, map.scan, map.key);
}

/* One field of min:max:res:fuzz:flat; an empty field keeps the old value.
 * NULL if the text is malformed. */
static const char *parse_token(const char *cur, int32_t *val)
{
        char *next;
        long v;

        if (!cur)
                return NULL;
        v = strtol(cur, &next, 0);
        if (*next && *next != ':')
                return NULL;
        if (next != cur)
                *val = (int32_t)v;
        if (*next)
                next++;
        return next;
}

static void override_abs(struct kbd *k, unsigned code, const char *value)
{
        struct input_absinfo a;
        const char *next;

        if (ioctl(k->fd, EVIOCGABS(code), &a) < 0) {
                log_error_errno(negative_errno(), "%s: Failed to call EVIOCGABS", k->sysname);
                return;
        }
        next = parse_token(value, &a.minimum);
        next = parse_token(next, &a.maximum);
        next = parse_token(next, &a.resolution);
        next = parse_token(next, &a.fuzz);
        next = parse_token(next, &a.flat);
        if (!next) {
                log_error("%s: Failed to parse EV_ABS override '%s'", k->sysname, value);
                return;
        }
        log_debug("%s: keyboard: %x overridden with %" PRIi32 "/%" PRIi32 "/%" PRIi32 "/%" PRIi32
                  "/%" PRIi32, k->sysname, code, a.minimum, a.maximum, a.resolution, a.fuzz,
                  a.flat);
        if (ioctl(k->fd, EVIOCSABS(code), &a) < 0)
                log_error_errno(negative_errno(), "%s: Failed to call EVIOCSABS", k->sysname);
}

static int set_sysattr_nl(struct device *d, const char *attr, const char *value)
{
        char buf[FORCE_RELEASE_MAX + 2];

        snprintf(buf, sizeof(buf), "%s\n", value);
        return device_set_sysattr(d, attr, buf);
}

static void set_trackpoint_sensitivity(struct kbd *k, const char *value)
{
        struct device *serio;
        char buf[16];
        int r, v = 0;

        /* the attribute belongs to the serio parent */
        r = device_get_parent_with_subsystem_devtype(k->ev->dev, "serio", NULL, &serio);
        if (r < 0) {
                log_error_errno(r, "%s: Failed to get serio parent: %m", k->sysname);
                return;
        }
        r = parse_int(value, &v);
        if (r < 0) {
                log_error_errno(r, "%s: Failed to parse POINTINGSTICK_SENSITIVITY '%s': %m",
                                k->sysname, value);
                return;
        }
        if (v < 0 || v > 255) {
                log_error("%s: POINTINGSTICK_SENSITIVITY %d outside range [0..255]", k->sysname,
                          v);
                return;
        }
        snprintf(buf, sizeof(buf), "%d", v);
        r = set_sysattr_nl(serio, "sensitivity", buf);
        if (r < 0)
                log_error_errno(r, "%s: Failed to write 'sensitivity' attribute: %m",
                                k->sysname);
}

static void install_force_release(struct kbd *k)
{
        char codes[FORCE_RELEASE_MAX];
        struct device *atkbd;
        const char *cur;
        size_t len;
        int r;

        r = device_get_parent_with_subsystem_devtype(k->ev->dev, "serio", NULL, &atkbd);
        if (r < 0) {
                log_error_errno(r, "%s: Failed to get serio parent: %m", k->sysname);
                return;
        }
        r = device_get_sysattr(atkbd, "force_release", &cur);
        if (r < 0) {
                log_error_errno(r, "%s: Failed to get force-release attribute: %m",
                                device_sysname(atkbd));
                return;
        }
        /* the current list, then the new codes; cut at the buffer size */
        snprintf(codes, sizeof(codes), "%s", cur);
        len = strlen(codes);
        for (unsigned i = 0; i < k->n_release && len < sizeof(codes) - 1; i++) {
                int n = snprintf(codes + len, sizeof(codes) - len, ",%u", k->release[i]);

                len = n < 0 ? len : MIN(len + (size_t)n, sizeof(codes) - 1);
        }
        log_debug("%s: keyboard: updating force-release list with '%s'", device_sysname(atkbd),
                  codes);
        r = set_sysattr_nl(atkbd, "force_release", codes);
        if (r < 0)
                log_error_errno(r, "%s: Failed to set force-release attribute '%s': %m",
                                device_sysname(atkbd), codes);
}

static int handle_key(struct kbd *k, const char *key, const char *value)
{
        unsigned scancode;
        int r;

        r = parse_uint(key + STRLEN("KEYBOARD_KEY_"), 16, &scancode);
        if (r < 0) {
                log_warning_errno(r, "%s: Failed to parse scan code from \"%s\", ignoring: %m",
                                  k->sysname, key);
                return 0;
        }
        if (value[0] == '!') {
                value++;
                k->release[k->n_release] = scancode;
                if (k->n_release < RELEASE_MAX - 1)
                        k->n_release++;
                if (value[0] == '\0')
                        return 0;
        }
        r = open_node(k);
        if (r < 0)
                return r;
        map_keycode(k, scancode, value);
        return 0;
}

static int handle_abs(struct kbd *k, const char *key, const char *value)
{
        unsigned code;
        int r;

        r = parse_uint(key + STRLEN("EVDEV_ABS_"), 16, &code);
        if (r < 0) {
                log_warning_errno(r, "%s: Failed to parse EV_ABS code from \"%s\", ignoring: %m",
                                  k->sysname, key);
                return 0;
        }
        r = open_node(k);
        if (r < 0)
                return r;
        if (k->has_abs < 0) {
                unsigned long bits = 0;

                if (ioctl(k->fd, EVIOCGBIT(0, sizeof(bits)), &bits) < 0)
                        return log_error_errno(negative_errno(),
                                               "%s: Failed to set EVIOCGBIT on device '%s': %m",
                                               k->sysname, k->node);
                k->has_abs = !!(bits & (1UL << EV_ABS));
                if (!k->has_abs)
                        log_warning("%s: EVDEV_ABS override set but no EV_ABS present on device",
                                    k->sysname);
        }
        if (!k->has_abs)
                return 0;
        if (code > ABS_MAX) /* would be another ioctl number: never sent */
                log_debug("%s: EV_ABS code 0x%x out of range, ignoring", k->sysname, code);
        else
                override_abs(k, code, value);
        return 0;
}

int builtin_keyboard(struct udev_event *ev, int argc, char *argv[], bool test)
{
        struct kbd *k;
        int r = 0;

        (void)argc, (void)argv, (void)test;
        k = calloc(1, sizeof(*k));
        if (!k)
                return -ENOMEM;
        k->ev = ev;
        k->sysname = device_sysname(ev->dev);
        k->fd = -1;
        k->has_abs = -1;
        r = device_get_devnode(ev->dev, &k->node);
        if (r < 0) {
                log_error_errno(r, "%s: Failed to get device name: %m", k->sysname);
                goto out;
        }
        /* ev->props may not change while we iterate: we only read it */
        for (size_t i = 0; i < ev->props.n && r >= 0; i++) {
                const char *key = ev->props.items[i].key, *value = ev->props.items[i].value;

                if (strncmp(key, "KEYBOARD_KEY_", STRLEN("KEYBOARD_KEY_")) == 0)
                        r = handle_key(k, key, value);
                else if (strncmp(key, "EVDEV_ABS_", STRLEN("EVDEV_ABS_")) == 0)
                        r = handle_abs(k, key, value);
                else if (streq(key, "POINTINGSTICK_SENSITIVITY"))
                        set_trackpoint_sensitivity(k, value);
        }
        if (r >= 0 && k->n_release > 0)
                install_force_release(k);
out:
        safe_close(k->fd);
        free(k);
        return r < 0 ? r : 0;
}
