/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (no state outside the call) */
/* The input_id builtin, as systemd 252's
 * udev-builtin-input_id.c: classify an input device from the capability
 * bitmaps the kernel exports in sysfs (capabilities/{ev,abs,rel,key},
 * properties, id/bustype) and, for event* nodes, add the size in mm of
 * absolute devices from EVIOCGABS on the device node.
 *
 * Bitmap attributes are space-separated hex words, most significant first,
 * each the width of the kernel's unsigned long; we read them with the same
 * word width as the kernel of this machine (unsigned long of a native
 * build), as systemd does. Always succeeds. */
#include <errno.h>
#include <fcntl.h>
#include <linux/input.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "builtins/builtins-internal.h"
#include "device/device.h"
#include "event/udev-event.h"
#include "shared/log.h"
#include "shared/macro.h"

#define BITS_PER_LONG (sizeof(unsigned long) * 8)
#define NBITS(x) ((((x) - 1) / BITS_PER_LONG) + 1)
#define CAP_TEXT_MAX 4096 /* longest capability attribute parsed */

static bool test_bit(unsigned bit, const unsigned long *a)
{
        return (a[bit / BITS_PER_LONG] >> (bit % BITS_PER_LONG)) & 1;
}

struct caps {
        unsigned long ev[NBITS(EV_MAX)];
        unsigned long abs[NBITS(ABS_MAX)];
        unsigned long rel[NBITS(REL_MAX)];
        unsigned long key[NBITS(KEY_MAX)];
        unsigned long props[NBITS(INPUT_PROP_MAX)];
        unsigned bustype;
};

struct input_ctx {
        struct udev_event *ev;
        bool test;
        const char *sysname;
};

static void add(const struct input_ctx *c, const char *key)
{
        (void)builtin_add_property(c->ev, c->test, key, "1");
}

/* systemd's safe_atolu_full(s, 16): the whole word is a hex number. */
static int parse_word(const char *s, unsigned long *ret)
{
        char *end;

        if (*s == '-' || *s == '+' || *s == '\0' || *s == ' ')
                return -EINVAL;
        errno = 0;
        *ret = strtoul(s, &end, 16);
        if (errno != 0 || *end != '\0')
                return -EINVAL;
        return 0;
}

static void store_word(const char *sysname, const char *attr, const char *word, size_t i,
                       unsigned long *bitmask, size_t words)
{
        unsigned long val;

        if (parse_word(word, &val) < 0)
                log_debug("%s: Ignoring %s block which failed to parse: %s", sysname, attr,
                          word);
        else if (i < words)
                bitmask[i] = val;
        else
                log_debug("%s: Ignoring %s block %lX which is larger than maximum size",
                          sysname, attr, val);
}

/* Read a bitmap attribute of `pdev` into bitmask[0..words-1] (word 0 = bits
 * 0..BITS_PER_LONG-1, i.e. the last word of the text). */
static void get_cap_mask(struct device *pdev, const char *attr, unsigned long *bitmask,
                         size_t words, bool test)
{
        const char *sysname = device_sysname(pdev);
        char text[CAP_TEXT_MAX];
        const char *v;
        char *word;
        size_t i = 0;

        if (device_get_sysattr(pdev, attr, &v) < 0)
                v = "";
        snprintf(text, sizeof(text), "%s", v);
        log_debug("%s: %s raw kernel attribute: %s", sysname, attr, text);

        memset(bitmask, 0, words * sizeof(unsigned long));
        while ((word = strrchr(text, ' '))) {
                store_word(sysname, attr, word + 1, i++, bitmask, words);
                *word = '\0';
        }
        store_word(sysname, attr, text, i, bitmask, words);

        if (test && log_get_max_level() >= LOG_DEBUG) {
                size_t n = words;

                log_debug("%s: %s decoded bit map:", sysname, attr);
                while (n > 0 && bitmask[n - 1] == 0)
                        n--;
                for (size_t j = 0; j < n; j++)
                        log_debug("%s:   bit %4zu: %0*lX", sysname, j * BITS_PER_LONG,
                                  (int)(2 * sizeof(unsigned long)), bitmask[j]);
        }
}

static unsigned read_bustype(struct device *pdev)
{
        const char *v;
        unsigned long val;

        if (device_get_sysattr(pdev, "id/bustype", &v) < 0 || parse_word(v, &val) < 0 ||
            val > 0xffff)
                return 0;
        return (unsigned)val;
}

static bool any_bit(const unsigned long *a, unsigned from, unsigned to) /* [from, to) */
{
        for (unsigned b = from; b < to; b++)
                if (test_bit(b, a))
                        return true;
        return false;
}

static size_t count_bits(const unsigned long *a, unsigned from, unsigned to) /* [from, to) */
{
        size_t n = 0;

        for (unsigned b = from; b < to; b++)
                n += test_bit(b, a);
        return n;
}

struct pointer_class {
        bool mouse, touchpad, touchscreen, tablet, tablet_pad, joystick, pointing_stick;
};

/* Joysticks don't need buttons (rudders, pedals) and buttons-only ones have
 * no axes. Mice with more than 16 buttons run into the joystick range: then
 * no joystick buttons are counted. */
static void count_joystick(const struct caps *k, size_t *buttons, size_t *axes)
{
        *buttons = 0;
        if (!test_bit(BTN_JOYSTICK - 1, k->key))
                *buttons = count_bits(k->key, BTN_JOYSTICK, BTN_DIGI) +
                           count_bits(k->key, BTN_TRIGGER_HAPPY1, BTN_TRIGGER_HAPPY40 + 1) +
                           count_bits(k->key, BTN_DPAD_UP, BTN_DPAD_RIGHT + 1);
        *axes = count_bits(k->abs, ABS_RX, ABS_PRESSURE);
}

/* Some keyboards report joystick buttons: a device with several well-known
 * keyboard keys, or fewer than two joystick buttons and axes, is no joystick. */
static bool joystick_plausible(const struct input_ctx *c, const struct caps *k, size_t buttons,
                               size_t axes)
{
        static const unsigned keyboard_keys[] = {
                KEY_LEFTCTRL, KEY_CAPSLOCK, KEY_NUMLOCK, KEY_INSERT, KEY_MUTE,
                KEY_CALC,     KEY_FILE,     KEY_MAIL,    KEY_PLAYPAUSE, KEY_BRIGHTNESSDOWN,
        };
        size_t known = 0;

        if (test_bit(EV_KEY, k->ev))
                for (size_t i = 0; i < ARRAY_SIZE(keyboard_keys); i++)
                        known += test_bit(keyboard_keys[i], k->key);
        if (known >= 4 || buttons + axes < 2) {
                log_debug("%s: Input device has %zu joystick buttons and %zu axes but also %zu "
                          "keyboard key sets, assuming this is a keyboard, not a joystick.",
                          c->sysname, buttons, axes, known);
                return false;
        }
        return true;
}

static void classify_pointer(const struct input_ctx *c, const struct caps *k,
                             struct pointer_class *p)
{
        bool has_abs = test_bit(ABS_X, k->abs) && test_bit(ABS_Y, k->abs);
        bool has_rel = test_bit(EV_REL, k->ev) && test_bit(REL_X, k->rel) &&
                       test_bit(REL_Y, k->rel);
        bool has_mt = test_bit(ABS_MT_POSITION_X, k->abs) && test_bit(ABS_MT_POSITION_Y, k->abs);
        bool has_stylus = test_bit(BTN_STYLUS, k->key);
        bool has_pen = test_bit(BTN_TOOL_PEN, k->key);
        bool finger_no_pen = test_bit(BTN_TOOL_FINGER, k->key) && !has_pen;
        bool has_mouse_button = any_bit(k->key, BTN_MOUSE, BTN_JOYSTICK);
        bool is_direct = test_bit(INPUT_PROP_DIRECT, k->props);
        bool has_touch = test_bit(BTN_TOUCH, k->key);
        bool has_pad_buttons = test_bit(BTN_0, k->key) && has_stylus && !has_pen;
        bool abs_mouse = false;
        size_t buttons, axes;

        p->pointing_stick = test_bit(INPUT_PROP_POINTING_STICK, k->props);
        /* a device claiming every abs axis is not multitouch */
        if (has_mt && test_bit(ABS_MT_SLOT, k->abs) && test_bit(ABS_MT_SLOT - 1, k->abs))
                has_mt = false;
        count_joystick(k, &buttons, &axes);

        if (has_abs) {
                if (has_stylus || has_pen)
                        p->tablet = true;
                else if (finger_no_pen && !is_direct)
                        p->touchpad = true;
                else if (has_mouse_button)
                        abs_mouse = true; /* VMware's USB mouse: abs axes, no touch */
                else if (has_touch || is_direct)
                        p->touchscreen = true;
                else if (buttons > 0 || axes > 0)
                        p->joystick = true;
        } else if (buttons > 0 || axes > 0)
                p->joystick = true;

        if (has_mt) {
                if (has_stylus || has_pen)
                        p->tablet = true;
                else if (finger_no_pen && !is_direct)
                        p->touchpad = true;
                else if (has_touch || is_direct)
                        p->touchscreen = true;
        }
        if (p->tablet && has_pad_buttons)
                p->tablet_pad = true;
        if (!p->tablet && !p->touchpad && !p->joystick && has_mouse_button &&
            (has_rel || !has_abs))
                p->mouse = true;
        if (abs_mouse)
                p->mouse = true;
        /* there is no such thing as an i2c mouse */
        if (p->mouse && !abs_mouse && k->bustype == BUS_I2C)
                p->pointing_stick = true;
        if (p->joystick && !joystick_plausible(c, k, buttons, axes))
                p->joystick = false;
}

/* Returns true if the device is some kind of pointer. */
static bool test_pointers(const struct input_ctx *c, const struct caps *k)
{
        bool has_keys = test_bit(EV_KEY, k->ev);
        bool has_3d = test_bit(ABS_X, k->abs) && test_bit(ABS_Y, k->abs) &&
                      test_bit(ABS_Z, k->abs);
        struct pointer_class p = {};

        if (test_bit(INPUT_PROP_ACCELEROMETER, k->props) || (!has_keys && has_3d)) {
                add(c, "ID_INPUT_ACCELEROMETER");
                return true;
        }
        classify_pointer(c, k, &p);
        if (p.pointing_stick)
                add(c, "ID_INPUT_POINTINGSTICK");
        if (p.mouse)
                add(c, "ID_INPUT_MOUSE");
        if (p.touchpad)
                add(c, "ID_INPUT_TOUCHPAD");
        if (p.touchscreen)
                add(c, "ID_INPUT_TOUCHSCREEN");
        if (p.joystick)
                add(c, "ID_INPUT_JOYSTICK");
        if (p.tablet)
                add(c, "ID_INPUT_TABLET");
        if (p.tablet_pad)
                add(c, "ID_INPUT_TABLET_PAD");
        return p.tablet || p.mouse || p.touchpad || p.touchscreen || p.joystick ||
               p.pointing_stick;
}

/* Key-like devices. Returns true if ID_INPUT_KEY or ID_INPUT_KEYBOARD was set. */
static bool test_key(const struct input_ctx *c, const struct caps *k)
{
        bool found = false;

        if (!test_bit(EV_KEY, k->ev)) {
                log_debug("%s: test_key: no EV_KEY capability", c->sysname);
                return false;
        }
        /* KEY_* only, not BTN_*: the words below BTN_MISC, then the high blocks */
        for (size_t i = 0; i < BTN_MISC / BITS_PER_LONG; i++) {
                if (k->key[i])
                        found = true;
                log_debug("%s: test_key: checking bit block %zu for any keys; found=%s",
                          c->sysname, i * BITS_PER_LONG, found ? "yes" : "no");
        }
        if (!found)
                found = any_bit(k->key, KEY_OK, BTN_DPAD_UP) ||
                        any_bit(k->key, KEY_ALS_TOGGLE, BTN_TRIGGER_HAPPY);
        if (found)
                add(c, "ID_INPUT_KEY");
        /* ESC, digits and Q..D: a full keyboard (KEY_RESERVED not required) */
        if ((k->key[0] & 0xFFFFFFFEUL) == 0xFFFFFFFEUL) {
                add(c, "ID_INPUT_KEYBOARD");
                return true;
        }
        return found;
}

/* Like sd_device_open(): the node must be the device's (same type and devnum). */
static int open_devnode(struct device *dev, int flags)
{
        const char *node;
        unsigned major, minor;
        struct stat st;
        int fd;

        if (device_get_devnode(dev, &node) < 0 || device_get_devnum(dev, &major, &minor) < 0)
                return -ENOENT;
        fd = open(node, flags | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0 || !S_ISCHR(st.st_mode) ||
            st.st_rdev != makedev(major, minor)) {
                safe_close(fd);
                return -ENXIO;
        }
        return fd;
}

static void extract_size(const struct input_ctx *c)
{
        struct input_absinfo x = {}, y = {};
        char width[16], height[16];
        int fd = open_devnode(c->ev->dev, O_RDONLY);

        if (fd < 0)
                return;
        if (ioctl(fd, EVIOCGABS(ABS_X), &x) < 0 || ioctl(fd, EVIOCGABS(ABS_Y), &y) < 0 ||
            x.resolution <= 0 || y.resolution <= 0) {
                safe_close(fd);
                return;
        }
        safe_close(fd);
        /* resolution is in units/mm for ABS_X/Y */
        snprintf(width, sizeof(width), "%d", (x.maximum - x.minimum) / x.resolution);
        snprintf(height, sizeof(height), "%d", (y.maximum - y.minimum) / y.resolution);
        (void)builtin_add_property(c->ev, c->test, "ID_INPUT_WIDTH_MM", width);
        (void)builtin_add_property(c->ev, c->test, "ID_INPUT_HEIGHT_MM", height);
}

/* The input device: the event device or its nearest "input" ancestor that
 * has capabilities/ev (the event device is usually an eventN child). */
static struct device *find_input_device(struct device *dev)
{
        for (struct device *d = dev; d;) {
                const char *v;

                if (device_get_sysattr(d, "capabilities/ev", &v) >= 0)
                        return d;
                if (device_get_parent_with_subsystem_devtype(d, "input", NULL, &d) < 0)
                        return NULL;
        }
        return NULL;
}

int builtin_input_id(struct udev_event *ev, int argc, char *argv[], bool test)
{
        struct input_ctx c = { .ev = ev, .test = test, .sysname = device_sysname(ev->dev) };
        struct device *pdev = find_input_device(ev->dev);
        const char *sysname = device_sysname(ev->dev);

        (void)argc, (void)argv;
        if (pdev) {
                struct caps *k = calloc(1, sizeof(*k));
                bool is_pointer, is_key;

                if (!k)
                        return -ENOMEM;
                /* the flag that input devices were detected */
                add(&c, "ID_INPUT");
                get_cap_mask(pdev, "capabilities/ev", k->ev, ARRAY_SIZE(k->ev), test);
                get_cap_mask(pdev, "capabilities/abs", k->abs, ARRAY_SIZE(k->abs), test);
                get_cap_mask(pdev, "capabilities/rel", k->rel, ARRAY_SIZE(k->rel), test);
                get_cap_mask(pdev, "capabilities/key", k->key, ARRAY_SIZE(k->key), test);
                get_cap_mask(pdev, "properties", k->props, ARRAY_SIZE(k->props), test);
                k->bustype = read_bustype(pdev);
                is_pointer = test_pointers(&c, k);
                is_key = test_key(&c, k);
                /* some evdev nodes have only a scroll wheel */
                if (!is_pointer && !is_key && test_bit(EV_REL, k->ev) &&
                    (test_bit(REL_WHEEL, k->rel) || test_bit(REL_HWHEEL, k->rel)))
                        add(&c, "ID_INPUT_KEY");
                if (test_bit(EV_SW, k->ev))
                        add(&c, "ID_INPUT_SWITCH");
                free(k);
        }
        if (strncmp(sysname, "event", 5) == 0)
                extract_size(&c);
        return 0;
}
