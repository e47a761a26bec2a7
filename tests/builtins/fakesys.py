# SPDX-License-Identifier: GPL-2.0-or-later
"""Fake sysfs trees for the builtin tests (input devices, sound cards, USB).

    python3 tests/builtins/fakesys.py DIR      build DIR/sys (and DIR/devices.txt)

A tree mirrors a real machine's layout closely enough for systemd 252's
sd-device (run with SYSTEMD_DEVICE_VERIFY_SYSFS=0 so it accepts a tree that is
not on a sysfs mount) and for tudev's device view: canonical device
directories under sys/devices with a "uevent" file, relative "subsystem" and
"driver" symlinks into sys/bus/<s> or sys/class/<s>, sys/dev/char/M:m links,
and plain files for attributes (no trailing newline handling is needed: both
readers strip it).

DEVICES maps a short name to the devpath a test runs builtins on; the
capability bitmaps are those of real devices (64-bit words).
"""

import os
import sys

BUS_SUBSYSTEMS = {"pci", "usb", "hid", "serio", "i2c", "platform", "acpi", "pnp"}


class FakeSys:
    def __init__(self, root):
        self.root = root
        self.sys = os.path.join(root, "sys")
        os.makedirs(os.path.join(self.sys, "devices"), exist_ok=True)
        os.makedirs(os.path.join(self.sys, "dev", "char"), exist_ok=True)
        os.makedirs(os.path.join(self.sys, "dev", "block"), exist_ok=True)

    def _path(self, devpath):
        return os.path.join(self.sys, devpath.lstrip("/"))

    def _link(self, target, linkpath):
        os.makedirs(os.path.dirname(linkpath), exist_ok=True)
        if os.path.lexists(linkpath):
            os.unlink(linkpath)
        os.symlink(os.path.relpath(target, os.path.dirname(linkpath)), linkpath)

    def write(self, devpath, attr, value):
        p = os.path.join(self._path(devpath), attr)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(value if value.endswith("\n") or value == "" else value + "\n")

    def plain(self, devpath):
        """A directory that is a device only by its uevent file (bus roots)."""
        os.makedirs(self._path(devpath), exist_ok=True)
        u = os.path.join(self._path(devpath), "uevent")
        if not os.path.exists(u):
            open(u, "w").close()

    def device(self, devpath, subsystem, uevent=(), attrs=None, driver=None):
        """uevent: ordered (key, value) pairs; DEVNAME/MAJOR/MINOR as the kernel
        writes them. attrs: name -> value (may contain '/')."""
        d = self._path(devpath)
        os.makedirs(d, exist_ok=True)
        kind = "bus" if subsystem in BUS_SUBSYSTEMS else "class"
        subsys_dir = os.path.join(self.sys, kind, subsystem)
        os.makedirs(subsys_dir, exist_ok=True)
        self._link(subsys_dir, os.path.join(d, "subsystem"))
        name = os.path.basename(devpath)
        if kind == "bus":
            self._link(d, os.path.join(subsys_dir, "devices", name))
        else:
            self._link(d, os.path.join(subsys_dir, name))
        lines = []
        if driver:
            drv = os.path.join(self.sys, "bus" if kind == "bus" else "bus/" + subsystem,
                               "drivers", driver) if kind == "bus" else None
            if drv:
                drv = os.path.join(self.sys, "bus", subsystem, "drivers", driver)
                os.makedirs(drv, exist_ok=True)
                self._link(drv, os.path.join(d, "driver"))
        uev = list(uevent)
        for k, v in uev:
            lines.append("%s=%s\n" % (k, v))
        with open(os.path.join(d, "uevent"), "w") as f:
            f.write("".join(lines))
        kv = dict(uev)
        if "MAJOR" in kv:
            devnum = "%s:%s" % (kv["MAJOR"], kv["MINOR"])
            with open(os.path.join(d, "dev"), "w") as f:
                f.write(devnum + "\n")
            self._link(d, os.path.join(self.sys, "dev", "char", devnum))
        for k, v in (attrs or {}).items():
            self.write(devpath, k, v)
        return devpath


# ---------------------------------------------------------------- devices

PCI_XHCI = "/devices/pci0000:00/0000:00:14.0"
PCI_AUDIO = "/devices/pci0000:00/0000:00:1f.3"
USB1 = PCI_XHCI + "/usb1"
I8042 = "/devices/platform/i8042"


def input_dev(fs, parent, num, name, bus, vendor, product, version, caps, phys="",
              props="0", modalias=None, event=True, extra=()):
    """An input device input<num> below `parent` with an event<num> child.
    caps: dict ev/key/rel/abs/msc/sw/led -> bitmap text (as in sysfs)."""
    base = parent + "/input/input%d" % num
    full = {k: caps.get(k, "0") for k in ("ev", "key", "rel", "abs", "msc", "sw", "led", "ff",
                                           "snd")}
    if modalias is None:
        modalias = "input:b%04Xv%04Xp%04Xe%04X-e0,1" % (bus, vendor, product, version)
    uevent = [("PRODUCT", "%x/%x/%x/%x" % (bus, vendor, product, version)),
              ("NAME", '"%s"' % name), ("PHYS", '"%s"' % phys), ("UNIQ", '""'),
              ("PROP", props)]
    for k in ("ev", "key", "rel", "abs", "msc", "sw", "led"):
        if full[k] != "0":
            uevent.append((k.upper(), full[k]))
    uevent.append(("MODALIAS", modalias))
    attrs = {"name": name, "phys": phys, "uniq": "", "properties": props,
             "id/bustype": "%04x" % bus, "id/vendor": "%04x" % vendor,
             "id/product": "%04x" % product, "id/version": "%04x" % version,
             "modalias": modalias}
    for k, v in full.items():
        attrs["capabilities/" + k] = v
    fs.device(base, "input", uevent, attrs)
    if not event:
        return base
    return fs.device(base + "/event%d" % num, "input",
                     [("MAJOR", "13"), ("MINOR", str(64 + num)),
                      ("DEVNAME", "input/event%d" % num)] + list(extra))


def usb_device(fs, path, busnum, devnum, vid, pid, bcd, product, manufacturer=None,
               ifaces=()):
    """A usb_device with interfaces: ifaces = [(name, class, subclass, proto, driver)]."""
    dev = fs.device(path, "usb",
                    [("MAJOR", "189"), ("MINOR", str((busnum - 1) * 128 + devnum - 1)),
                     ("DEVNAME", "bus/usb/%03d/%03d" % (busnum, devnum)),
                     ("DEVTYPE", "usb_device"), ("DRIVER", "usb"),
                     ("PRODUCT", "%x/%x/%x" % (vid, pid, bcd)), ("TYPE", "0/0/0"),
                     ("BUSNUM", "%03d" % busnum), ("DEVNUM", "%03d" % devnum)],
                    dict({"idVendor": "%04x" % vid, "idProduct": "%04x" % pid,
                          "bcdDevice": "%04x" % bcd},
                         **({"product": product} if product is not None else {}),
                         **({"manufacturer": manufacturer} if manufacturer else {})),
                    driver="usb")
    out = []
    for name, cls, sub, proto, driver in ifaces:
        num = int(name.rsplit(".", 1)[1])
        modalias = ("usb:v%04Xp%04Xd%04Xdc00dsc00dp00ic%02Xisc%02Xip%02Xin%02X"
                    % (vid, pid, bcd, cls, sub, proto, num))
        out.append(fs.device(path + "/" + name, "usb",
                             [("DEVTYPE", "usb_interface"), ("DRIVER", driver),
                              ("PRODUCT", "%x/%x/%x" % (vid, pid, bcd)), ("TYPE", "0/0/0"),
                              ("INTERFACE", "%d/%d/%d" % (cls, sub, proto)),
                              ("MODALIAS", modalias)],
                             {"bInterfaceClass": "%02x" % cls,
                              "bInterfaceSubClass": "%02x" % sub,
                              "bInterfaceProtocol": "%02x" % proto,
                              "bInterfaceNumber": "%02x" % num, "modalias": modalias},
                             driver=driver))
    return dev, out


def hid_dev(fs, parent, bus, vid, pid, seq, name, driver="hid-generic"):
    path = parent + "/%04X:%04X:%04X.%04X" % (bus, vid, pid, seq)
    return fs.device(path, "hid",
                     [("DRIVER", driver), ("HID_ID", "%04X:%08X:%08X" % (bus, vid, pid)),
                      ("HID_NAME", name), ("HID_PHYS", "usb-0000:00:14.0-1/input0"),
                      ("HID_UNIQ", ""),
                      ("MODALIAS", "hid:b%04Xg0001v%08Xp%08X" % (bus, vid, pid))],
                     driver=driver)


def bm(*codes):
    """Bitmap text as the kernel prints it: 64-bit hex words, most significant
    first, from the highest non-zero word down ("0" if empty)."""
    if not codes:
        return "0"
    words = [0] * (max(codes) // 64 + 1)
    for c in codes:
        words[c // 64] |= 1 << (c % 64)
    return " ".join("%x" % w for w in reversed(words))


# input-event-codes.h
EV_KEY, EV_REL, EV_ABS, EV_MSC, EV_SW = 1, 2, 3, 4, 5
ABS_X, ABS_Y, ABS_Z, ABS_RX, ABS_RY, ABS_HAT0X, ABS_HAT0Y, ABS_PRESSURE = 0, 1, 2, 3, 4, 16, 17, 24
ABS_MT_SLOT, ABS_MT_POSITION_X, ABS_MT_POSITION_Y, ABS_MT_TRACKING_ID = 0x2f, 0x35, 0x36, 0x39
REL_X, REL_Y, REL_HWHEEL, REL_WHEEL = 0, 1, 6, 8
BTN_0, BTN_1, BTN_LEFT, BTN_RIGHT, BTN_MIDDLE = 0x100, 0x101, 0x110, 0x111, 0x112
BTN_JOYSTICK, BTN_A, BTN_B, BTN_X, BTN_Y = 0x120, 0x130, 0x131, 0x133, 0x134
BTN_TOOL_PEN, BTN_TOOL_FINGER, BTN_TOUCH, BTN_STYLUS = 0x140, 0x145, 0x14a, 0x14b
BTN_TOOL_DOUBLETAP, BTN_DPAD_UP, BTN_TRIGGER_HAPPY1 = 0x14d, 0x220, 0x2c0
KEY_LEFTCTRL, KEY_CAPSLOCK, KEY_NUMLOCK, KEY_INSERT, KEY_MUTE = 29, 58, 69, 110, 113
KEY_CALC, KEY_FILE, KEY_MAIL, KEY_OK, KEY_ALS_TOGGLE = 140, 144, 155, 0x160, 0x230
PROP_DIRECT, PROP_POINTING_STICK, PROP_ACCELEROMETER = 1, 5, 6


def synthetic_inputs(fs, devs):
    """Edge cases of input_id's classification, one virtual device each."""
    cases = {
        "in_tablet_with_pad": dict(ev=bm(EV_KEY, EV_ABS), abs=bm(ABS_X, ABS_Y),
                                   key=bm(BTN_0, BTN_STYLUS)),
        "in_pad_wheel": dict(ev=bm(EV_KEY, EV_REL, EV_ABS), rel=bm(REL_WHEEL),
                             key=bm(BTN_0, BTN_1, BTN_LEFT), abs=bm(ABS_X, ABS_Y)),
        "in_pad_wheel_noabs": dict(ev=bm(EV_KEY, EV_REL), rel=bm(REL_WHEEL),
                                   key=bm(BTN_0, BTN_1)),
        "in_many_button_mouse": dict(ev=bm(EV_KEY, EV_REL), rel=bm(REL_X, REL_Y),
                                     key=bm(*range(BTN_LEFT, BTN_JOYSTICK + 4))),
        "in_mt_only_direct": dict(ev=bm(EV_KEY, EV_ABS), key=bm(BTN_TOUCH),
                                  abs=bm(ABS_MT_SLOT, ABS_MT_POSITION_X, ABS_MT_POSITION_Y,
                                         ABS_MT_TRACKING_ID), props=bm(PROP_DIRECT)),
        "in_mt_only_touchpad": dict(ev=bm(EV_KEY, EV_ABS), key=bm(BTN_TOOL_FINGER, BTN_LEFT),
                                    abs=bm(ABS_MT_SLOT, ABS_MT_POSITION_X,
                                           ABS_MT_POSITION_Y)),
        "in_fake_mt": dict(ev=bm(EV_KEY, EV_ABS), key=bm(BTN_TOUCH),
                           abs=bm(*range(0, 0x3f))),
        "in_abs_joystick": dict(ev=bm(EV_KEY, EV_ABS), abs=bm(ABS_X, ABS_Y),
                                key=bm(BTN_JOYSTICK, BTN_JOYSTICK + 1)),
        "in_rudder_one_axis": dict(ev=bm(EV_ABS), abs=bm(ABS_RX)),
        "in_rudder_two_axes": dict(ev=bm(EV_ABS), abs=bm(ABS_RX, ABS_RY)),
        "in_kbd_four_known": dict(ev=bm(EV_KEY), key=bm(KEY_LEFTCTRL, KEY_CAPSLOCK, KEY_NUMLOCK,
                                                        KEY_INSERT, BTN_A, BTN_B, BTN_X)),
        "in_kbd_three_known": dict(ev=bm(EV_KEY), key=bm(KEY_LEFTCTRL, KEY_CAPSLOCK,
                                                         KEY_NUMLOCK, BTN_A, BTN_B, BTN_X)),
        "in_accel_prop": dict(ev=bm(EV_KEY, EV_ABS), key=bm(BTN_LEFT),
                              abs=bm(ABS_X, ABS_Y), props=bm(PROP_ACCELEROMETER)),
        "in_accel_2d_nokeys": dict(ev=bm(EV_ABS), abs=bm(ABS_X, ABS_Y)),
        "in_high_keys_only": dict(ev=bm(EV_KEY), key=bm(KEY_OK)),
        "in_als_key_only": dict(ev=bm(EV_KEY), key=bm(KEY_ALS_TOGGLE)),
        "in_dpad_only": dict(ev=bm(EV_KEY), key=bm(BTN_DPAD_UP, BTN_DPAD_UP + 1)),
        "in_trigger_happy": dict(ev=bm(EV_KEY), key=bm(BTN_TRIGGER_HAPPY1,
                                                        BTN_TRIGGER_HAPPY1 + 1)),
        "in_pointing_stick_prop": dict(ev=bm(EV_KEY, EV_REL), rel=bm(REL_X, REL_Y),
                                       key=bm(BTN_LEFT), props=bm(PROP_POINTING_STICK)),
        "in_touchscreen_direct": dict(ev=bm(EV_ABS), abs=bm(ABS_X, ABS_Y),
                                      props=bm(PROP_DIRECT)),
        "in_pen_mt": dict(ev=bm(EV_KEY, EV_ABS), key=bm(BTN_TOOL_PEN),
                          abs=bm(ABS_MT_POSITION_X, ABS_MT_POSITION_Y)),
        "in_hwheel_keyless": dict(ev=bm(EV_REL), rel=bm(REL_HWHEEL)),
        "in_empty": dict(ev="0"),
        "in_long_key_words": dict(ev=bm(EV_KEY), key="1 " * 14 + "fffffffe"),
    }
    for i, (name, c) in enumerate(sorted(cases.items())):
        props = c.pop("props", "0")
        bus = 0x18 if name == "in_pointing_stick_prop" else 3
        devs[name] = input_dev(fs, "/devices/virtual", 100 + i, name, bus, 0x1234, 0x100 + i,
                               1, c, props=props)


def keyboard_cases(fs, devs):
    """Inputs below the AT keyboard (serio0) and the trackpoint (serio2) whose
    event nodes carry the properties the keyboard builtin acts on (normally
    imported from hwdb; here in the uevent file, which sd-device reads as
    properties too). The fake tree has no evdev nodes, so only what needs no
    ioctl can run to the end: force_release and sensitivity writes."""
    kbd = {"ev": "120013", "key": KBD_KEY, "msc": "10"}
    serio0, serio2 = I8042 + "/serio0", I8042 + "/serio1/serio2"
    cases = [
        ("kbd_force_release", serio0, [("KEYBOARD_KEY_a0", "!"), ("KEYBOARD_KEY_zz", "!"),
                                       ("KEYBOARD_KEY_1e", "!"), ("KEYBOARD_KEY_", "!")]),
        ("kbd_map_key", serio0, [("KEYBOARD_KEY_a0", "!mute")]),
        ("kbd_map_number", serio0, [("KEYBOARD_KEY_a1", "113")]),
        ("kbd_evdev_abs", serio0, [("EVDEV_ABS_00", "1:2:3:4:5")]),
        ("kbd_bad_abs_code", serio0, [("EVDEV_ABS_xy", "1:2")]),
        ("kbd_no_props", serio0, []),
        ("tp_sensitivity", serio2, [("POINTINGSTICK_SENSITIVITY", "200")]),
        ("tp_sensitivity_octal", serio2, [("POINTINGSTICK_SENSITIVITY", "010")]),
        ("tp_sensitivity_range", serio2, [("POINTINGSTICK_SENSITIVITY", "300")]),
        ("tp_sensitivity_bad", serio2, [("POINTINGSTICK_SENSITIVITY", "fast")]),
        ("kbd_no_serio", "/devices/virtual", [("KEYBOARD_KEY_a0", "!")]),
    ]
    for i, (name, parent, extra) in enumerate(cases):
        devs[name] = input_dev(fs, parent, 40 + i, name, 0x11, 1, 1, 1, kbd, extra=extra)
    devs["kbd_no_devname"] = parent_input = I8042 + "/serio0/input/input3"
    del parent_input


# 64-bit capability words as the kernel prints them (most significant first)
KBD_KEY = "1000000000007 ff9f207ac14057ff febeffdfffefffff fffffffffffffffe"


def build(root):
    fs = FakeSys(root)
    devs = {}
    fs.plain("/devices/pci0000:00")
    fs.device(PCI_XHCI, "pci",
              [("DRIVER", "xhci_hcd"), ("PCI_CLASS", "C0330"), ("PCI_ID", "8086:A36D"),
               ("PCI_SUBSYS_ID", "1028:089C"), ("PCI_SLOT_NAME", "0000:00:14.0"),
               ("MODALIAS", "pci:v00008086d0000A36Dsv00001028sd0000089Cbc0Csc03i30")],
              {"vendor": "0x8086", "device": "0xa36d", "class": "0x0c0330"}, driver="xhci_hcd")
    fs.device(PCI_AUDIO, "pci",
              [("DRIVER", "snd_hda_intel"), ("PCI_CLASS", "40300"), ("PCI_ID", "8086:A348"),
               ("PCI_SUBSYS_ID", "1028:089C"), ("PCI_SLOT_NAME", "0000:00:1f.3"),
               ("MODALIAS", "pci:v00008086d0000A348sv00001028sd0000089Cbc04sc03i00")],
              {"vendor": "0x8086", "device": "0xa348", "class": "0x040300"},
              driver="snd_hda_intel")
    devs["pci_audio"] = PCI_AUDIO
    # for kmod: a PCI device whose modalias the test module directory knows
    devs["pci_fake"] = fs.device(
        "/devices/pci0000:00/0000:00:1c.0", "pci",
        [("PCI_CLASS", "20000"), ("PCI_ID", "1234:5678"), ("PCI_SUBSYS_ID", "0000:0000"),
         ("PCI_SLOT_NAME", "0000:00:1c.0"),
         ("MODALIAS", "pci:v00001234d00005678sv00000000sd00000000bc02sc00i00")],
        {"vendor": "0x1234", "device": "0x5678", "class": "0x020000"})
    devs["pci_builtin"] = fs.device(
        "/devices/pci0000:00/0000:00:1d.0", "pci",
        [("PCI_CLASS", "20000"), ("PCI_ID", "abcd:0001"), ("PCI_SLOT_NAME", "0000:00:1d.0"),
         ("MODALIAS", "pci:v0000ABCDd00000001sv00000000sd00000000bc02sc00i00")],
        {"vendor": "0xabcd", "device": "0x0001", "class": "0x020000"})
    devs["sound_card_pci"] = fs.device(PCI_AUDIO + "/sound/card0", "sound", [],
                                       {"id": "PCH", "number": "0"})
    devs["sound_pcm_pci"] = fs.device(PCI_AUDIO + "/sound/card0/pcmC0D0p", "sound",
                                      [("MAJOR", "116"), ("MINOR", "3"),
                                       ("DEVNAME", "snd/pcmC0D0p")])
    usb_device(fs, USB1, 1, 1, 0x1d6b, 0x0002, 0x0601, "xHCI Host Controller",
               "Linux 6.1.0 xhci-hcd", [("1-0:1.0", 9, 0, 0, "hub")])

    # USB keyboard: Logitech 046d:0042 (two matching evdev hwdb patterns)
    kb, kbi = usb_device(fs, USB1 + "/1-1", 1, 2, 0x046d, 0x0042, 0x6400, "USB Keyboard",
                         "Logitech", [("1-1:1.0", 3, 1, 1, "usbhid")])
    devs["usb_keyboard_usbdev"] = kb
    kbh = hid_dev(fs, kbi[0], 3, 0x046d, 0x0042, 1, "Logitech USB Keyboard")
    devs["usb_keyboard"] = input_dev(
        fs, kbh, 5, "Logitech USB Keyboard", 3, 0x046d, 0x0042, 0x0110,
        {"ev": "120013", "key": KBD_KEY, "msc": "10", "led": "1f"},
        phys="usb-0000:00:14.0-1/input0",
        modalias="input:b0003v046Dp0042e0110-e0,1,4,11,14,k71,72,73,74,ram4,l0,1,2,sfw")
    devs["usb_keyboard_input"] = kbh + "/input/input5"

    # USB mouse: PixArt 093a:2510 (has a MOUSE_DPI hwdb entry)
    ms, msi = usb_device(fs, USB1 + "/1-2", 1, 3, 0x093a, 0x2510, 0x0100,
                         "USB OPTICAL MOUSE", "PIXART", [("1-2:1.0", 3, 1, 2, "usbhid")])
    msh = hid_dev(fs, msi[0], 3, 0x093a, 0x2510, 2, "PixArt USB Optical Mouse")
    devs["usb_mouse"] = input_dev(fs, msh, 6, "PixArt USB Optical Mouse", 3, 0x093a, 0x2510,
                                  0x0111, {"ev": "17", "key": "70000 0 0 0 0", "rel": "903",
                                           "msc": "10"})
    devs["usb_mouse_input"] = msh + "/input/input6"

    # PS/2 Synaptics touchpad on serio1, and a trackpoint on serio2
    fs.device(I8042, "platform", [("DRIVER", "i8042"), ("MODALIAS", "platform:i8042")],
              driver="i8042")
    fs.device(I8042 + "/serio1", "serio",
              [("DRIVER", "psmouse"), ("SERIO_TYPE", "01"), ("SERIO_PROTO", "00"),
               ("SERIO_ID", "00"), ("SERIO_EXTRA", "00"),
               ("MODALIAS", "serio:ty01pr00id00ex00")],
              {"description": "i8042 AUX port", "protocol": "SynPS/2"}, driver="psmouse")
    devs["touchpad"] = input_dev(
        fs, I8042 + "/serio1", 7, "SynPS/2 Synaptics TouchPad", 0x11, 0x2, 0x7, 0x1b1,
        {"ev": "b", "key": "e520 30000 0 0 0 0", "abs": "660800011000003"},
        phys="isa0060/serio1/input0", props="5")
    fs.device(I8042 + "/serio1/serio2", "serio",
              [("DRIVER", "psmouse"), ("SERIO_TYPE", "01"), ("SERIO_PROTO", "00"),
               ("SERIO_ID", "00"), ("SERIO_EXTRA", "00"),
               ("MODALIAS", "serio:ty01pr00id00ex00")],
              {"description": "Synaptics pass-through", "sensitivity": "128",
               "speed": "97"}, driver="psmouse")
    devs["trackpoint"] = input_dev(
        fs, I8042 + "/serio1/serio2", 8, "TPPS/2 IBM TrackPoint", 0x11, 0x2, 0xa, 0x63,
        {"ev": "7", "key": "70000 0 0 0 0", "rel": "3"},
        phys="synaptics-pt/serio0/input0", props="21")
    # AT keyboard on serio0 (force_release)
    fs.device(I8042 + "/serio0", "serio",
              [("DRIVER", "atkbd"), ("SERIO_TYPE", "06"), ("SERIO_PROTO", "00"),
               ("SERIO_ID", "00"), ("SERIO_EXTRA", "00"),
               ("MODALIAS", "serio:ty06pr00id00ex00")],
              {"description": "i8042 KBD port", "force_release": "369-370",
               "scroll": "0", "set": "2", "softraw": "1"}, driver="atkbd")
    devs["atkbd"] = input_dev(fs, I8042 + "/serio0", 3, "AT Translated Set 2 keyboard",
                              0x11, 0x1, 0x1, 0xab41,
                              {"ev": "120013", "key": "402000000 3803078f800d001 "
                               "feffffdfffefffff fffffffffffffffe", "msc": "10",
                               "led": "7"}, phys="isa0060/serio0/input0")

    # Joystick: Microsoft X-Box 360 pad 045e:028e
    js, jsi = usb_device(fs, USB1 + "/1-3", 1, 4, 0x045e, 0x028e, 0x0114, "Controller",
                         "Microsoft Corp.", [("1-3:1.0", 0xff, 0x5d, 0x01, "xpad")])
    devs["joystick"] = input_dev(fs, jsi[0], 9, "Microsoft X-Box 360 pad", 3, 0x045e, 0x028e,
                                 0x0114, {"ev": "20000b", "key": "7cdb000000000000 0 0 0 0",
                                          "abs": "3003f", "ff": "107030000 0"})
    devs["joystick_js"] = fs.device(jsi[0] + "/input/input9/js0", "input",
                                    [("MAJOR", "13"), ("MINOR", "0"),
                                     ("DEVNAME", "input/js0")])
    # Keyboard with a few joystick buttons: not a joystick (well-known keys)
    devs["kbd_with_joybuttons"] = input_dev(
        fs, "/devices/virtual", 10, "Gaming Keyboard", 3, 0x1234, 0x5678, 0x0111,
        {"ev": "120013", "key": "3 0 0 0 " + KBD_KEY.split(" ", 1)[1], "abs": "0"})
    # One joystick button only: not a joystick
    devs["one_button"] = input_dev(fs, "/devices/virtual", 11, "One Button", 6, 0x1, 0x1, 1,
                                   {"ev": "3", "key": "1 0 0 0 0"})

    # Wacom tablet pen + pad, touchscreen, accelerometer, lid switch,
    # power button, scroll-wheel only, VMware absolute mouse, I2C mouse
    devs["tablet_pen"] = input_dev(fs, "/devices/virtual", 12, "Wacom Intuos Pen", 3, 0x056a,
                                   0x0027, 0x0110,
                                   {"ev": "1b", "key": "1c03 0 0 0 0 0", "abs": "3000003",
                                    "msc": "1"}, props="1")
    devs["tablet_pad"] = input_dev(fs, "/devices/virtual", 13, "Wacom Intuos Pad", 3, 0x056a,
                                   0x0027, 0x0110,
                                   {"ev": "1b", "key": "1c03 0 0 0 0 0 0 3ff", "abs":
                                    "3000003"}, props="0")
    devs["touchscreen"] = input_dev(fs, "/devices/virtual", 14, "ELAN Touchscreen", 0x18,
                                    0x04f3, 0x2494, 0x0100,
                                    {"ev": "b", "key": "400 0 0 0 0 0",
                                     "abs": "3273800000000003"}, props="2")
    devs["accelerometer"] = input_dev(fs, "/devices/virtual", 15, "Accelerometer", 0x19,
                                      0, 0, 0, {"ev": "9", "abs": "7"}, props="40")
    devs["lid_switch"] = input_dev(fs, "/devices/LNXSYSTM:00/LNXSYBUS:00/PNP0C0D:00", 16,
                                   "Lid Switch", 0x19, 0, 5, 0, {"ev": "21", "sw": "1"},
                                   phys="PNP0C0D/button/input0")
    devs["power_button"] = input_dev(fs, "/devices/LNXSYSTM:00/LNXPWRBN:00", 17,
                                     "Power Button", 0x19, 0, 1, 0,
                                     {"ev": "3", "key": "10000000000000 0"},
                                     phys="LNXPWRBN/button/input0")
    devs["wheel_only"] = input_dev(fs, "/devices/virtual", 18, "Wheel", 3, 0x1, 0x2, 1,
                                   {"ev": "5", "rel": "100"})
    devs["vmware_mouse"] = input_dev(fs, "/devices/virtual", 19, "VMware VMware Virtual USB Mouse",
                                     3, 0x0e0f, 0x0003, 0x0110,
                                     {"ev": "1f", "key": "ffff0000 0 0 0 0", "abs": "3",
                                      "rel": "900"})
    devs["i2c_mouse"] = input_dev(fs, "/devices/virtual", 20, "I2C Mouse", 0x18, 0x6cb,
                                  0x1, 1, {"ev": "7", "key": "70000 0 0 0 0", "rel": "3"})
    devs["i2c_abs_mouse"] = input_dev(fs, "/devices/virtual", 21, "I2C Abs Mouse", 0x18,
                                      0x6cb, 0x2, 1, {"ev": "b", "key": "10000 0 0 0 0",
                                                      "abs": "3"})
    devs["garbage_caps"] = input_dev(fs, "/devices/virtual", 22, "Garbage", 3, 1, 3, 1,
                                     {"ev": "zz 3", "key": "-1 12zz"})
    devs["input_no_event"] = input_dev(fs, "/devices/virtual", 23, "No Event", 3, 1, 4, 1,
                                       {"ev": "3", "key": KBD_KEY}, event=False)

    keyboard_cases(fs, devs)
    synthetic_inputs(fs, devs)
    # Wacom-like tablet pad: abs axes, BTN_0 and BTN_STYLUS but no pen
    devs["tablet_pad_stylus"] = input_dev(fs, "/devices/virtual", 24, "Tablet Pad Stylus", 3,
                                          0x056a, 0x0028, 0x0110,
                                          {"ev": bm(EV_KEY, EV_ABS),
                                           "key": bm(BTN_0, BTN_1, BTN_STYLUS),
                                           "abs": bm(ABS_X, ABS_Y)})

    # USB sound card: C-Media 0d8c:0014, and an unknown product of a known vendor
    sc, sci = usb_device(fs, USB1 + "/1-4", 1, 5, 0x0d8c, 0x0014, 0x0100,
                         "USB Audio Device", "C-Media Electronics Inc.",
                         [("1-4:1.0", 1, 1, 0, "snd-usb-audio"),
                          ("1-4:1.1", 1, 2, 0, "snd-usb-audio")])
    devs["usb_sound_usbdev"] = sc
    devs["sound_card_usb"] = fs.device(sci[0] + "/sound/card1", "sound", [],
                                       {"id": "Device", "number": "1"})
    uk, _ = usb_device(fs, USB1 + "/1-5", 1, 6, 0x046d, 0xfffe, 0x0100, None, None,
                       [("1-5:1.0", 0xff, 0, 0, "")])
    devs["usb_unknown_product"] = uk
    # hidraw: hwdb walks up to the hid device and the USB interface
    devs["hidraw"] = fs.device(kbh + "/hidraw/hidraw0", "hidraw",
                               [("MAJOR", "244"), ("MINOR", "0"), ("DEVNAME", "hidraw0")])
    # A device without MODALIAS anywhere above it: hwdb fails
    devs["no_modalias"] = fs.device("/devices/virtual/misc/foo", "misc",
                                    [("MAJOR", "10"), ("MINOR", "99"), ("DEVNAME", "foo")])
    return devs


if __name__ == "__main__":
    d = build(sys.argv[1])
    with open(os.path.join(sys.argv[1], "devices.txt"), "w") as f:
        for k, v in sorted(d.items()):
            f.write("%s %s\n" % (k, v))
