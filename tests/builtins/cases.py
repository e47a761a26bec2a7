# SPDX-License-Identifier: GPL-2.0-or-later
"""The builtin comparison cases shared by tests/integration/test_builtins_compare.py
and tests/builtins/update-expected.py (which records systemd 252's answers in
expected.json for machines without the reference binary).

A case is (id, command, device name in fakesys.DEVICES or a devpath, setup)
where setup names an environment of nsrun.py (extra /run and /dev files)."""

HWDB_DEBIAN = "debian"   # Debian 12's hwdb.bin (build-ref/sd-udev/etc/udev/hwdb.bin)
HWDB_TUDEV = "tudev"     # built from tests/builtins/hwdb-root by systemd-hwdb

# Environments: extra parts of an nsrun.py group (besides sys/etc_udev).
SEAT0 = "systemd/seats/seat0"
SETUPS = {
    "plain": {},
    "btrfs": {"dev_nodes": ["/dev/btrfs-control"], "dev_files": {"foo": "0660"}},
    "seat_none": {"dev_files": {"snd/pcmC0D0p": "0660"}},
    "seat_active": {"dev_files": {"snd/pcmC0D0p": "0660"},
                    "run_files": {SEAT0: "ACTIVE=c1\nACTIVE_UID=1000\n"}},
    "seat_active_quoted": {"dev_files": {"snd/pcmC0D0p": "0640"},
                           "run_files": {SEAT0: "ACTIVE_UID=\"1000\"\n"}},
    "seat_root": {"dev_files": {"snd/pcmC0D0p": "0660"},
                  "run_files": {SEAT0: "ACTIVE=c1\nACTIVE_UID=0\n"}},
    "seat_no_user": {"dev_files": {"snd/pcmC0D0p": "0660"},
                     "run_files": {SEAT0: "ACTIVE=c1\n"}},
    "seat_other": {"dev_files": {"snd/pcmC0D0p": "0660"},
                   "run_files": {"systemd/seats/seat1": "ACTIVE_UID=1000\n"}},
    "seat_bad_uid": {"dev_files": {"snd/pcmC0D0p": "0660"},
                     "run_files": {SEAT0: "ACTIVE_UID=abc\n"}},
    "seat_no_node": {"run_files": {SEAT0: "ACTIVE_UID=1000\n"}},
}

# After every command of a setup, these files are read in the namespace and
# compared too (sysfs attributes the keyboard builtin writes, ACLs uaccess
# sets).
SYSFS_FILES = ["/sys/devices/platform/i8042/serio0/force_release",
               "/sys/devices/platform/i8042/serio1/serio2/sensitivity"]
ACL_FILES = ["/dev/snd/pcmC0D0p"]

HWDB_VARIANTS = [
    ("hwdb --subsystem=usb", ["usb_keyboard_usbdev", "usb_sound_usbdev", "usb_unknown_product",
                              "sound_card_usb", "usb_keyboard"]),
    ("hwdb --subsystem=input --lookup-prefix=evdev:", ["usb_keyboard", "atkbd", "touchpad",
                                                        "usb_mouse"]),
    ("hwdb --subsystem=input --lookup-prefix=id-input:modalias:", ["usb_keyboard", "joystick",
                                                                    "usb_mouse"]),
    ("hwdb --subsystem=pci", ["sound_card_pci", "sound_pcm_pci", "hidraw"]),
    ("hwdb --subsystem=hid", ["hidraw"]),
    ("hwdb --filter=ID_MODEL*", ["sound_card_pci", "sound_card_usb"]),
    ("hwdb --filter=NOTHING*", ["sound_card_pci"]),
    ("hwdb --device=c13:69", ["no_modalias"]),
    ("hwdb --device=c13:69 --subsystem=usb", ["no_modalias"]),
    ("hwdb --device=c99:99", ["no_modalias"]),
    ("hwdb 'mouse:usb:v093ap2510:name:PixArt USB Optical Mouse:'", ["usb_mouse"]),
    ("hwdb 'evdev:input:b0003v046Dp0042e0110-e0,1,4'", ["usb_keyboard"]),
    ("hwdb --lookup-prefix=evdev: 'input:b0003v046Dp0042e0110'", ["usb_keyboard"]),
    ("hwdb 'usb:v1D6Bp0002*'", ["usb_keyboard"]),
    ("hwdb usb:v0D8Cp0014", ["no_modalias"]),
    ("hwdb --bogus-option pci:v00008086d0000A348", ["no_modalias"]),
    ("hwd", ["sound_card_pci"]),
]

TUDEV_KEYS = ["tudev:exact:one", "tudev:glob:one", "tudev:glob:", "tudev:glab:xyz",
              "tudev:set:bz", "tudev:set:dz", "tudev:mid-and-middle:end", "tudev:none",
              "tudev:order:x", "tudev:order:y", "tudev:exact:on", "tudev:x:one", "''",
              "--filter=B* tudev:exact:one", "--filter=[ tudev:exact:one",
              "--lookup-prefix=tudev: exact:one", "'tudev:exact:one' --filter=A*",
              "tudev:exact:one tudev:glob:x", "--lookup-prefix=tudev:gl ob:x"]

KEYBOARD = ["kbd_force_release", "kbd_map_key", "kbd_map_number", "kbd_evdev_abs",
            "kbd_bad_abs_code", "kbd_no_props", "tp_sensitivity", "tp_sensitivity_octal",
            "tp_sensitivity_range", "tp_sensitivity_bad", "kbd_no_serio", "kbd_no_devname",
            "usb_keyboard"]

BTRFS = [("btrfs ready /dev/foo", "plain"), ("btrfs ready /dev/foo", "btrfs"),
         ("btrfs ready /dev/null", "btrfs"), ("btrfs ready", "plain"), ("btrfs", "plain"),
         ("btrfs notready /dev/foo", "plain"), ("btrfs ready /dev/foo extra", "plain")]

UACCESS = [(s, d) for s in ("seat_none", "seat_active", "seat_active_quoted", "seat_root",
                            "seat_no_user", "seat_other", "seat_bad_uid")
           for d in ("sound_pcm_pci",)] + [("seat_no_node", "sound_pcm_pci"),
                                           ("seat_active", "sound_card_pci")]


def cases(devices):
    """All cases, grouped: [(hwdb, setup, [(id, command, devpath)])]. Commands
    of one group run in one namespace, in order."""
    groups = []
    main = []
    for name in sorted(devices):
        path = devices[name]
        is_input = "/input/" in path
        # input_id on every input device and a few others; hwdb's default walk
        # on everything that is not a synthetic input (no hwdb entries there)
        if is_input or name in ("no_modalias", "sound_card_pci", "usb_keyboard_usbdev"):
            main.append(("input_id/" + name, "input_id", path))
        if not is_input or name in ("usb_keyboard", "usb_mouse", "joystick", "touchpad",
                                    "atkbd", "usb_keyboard_input"):
            main.append(("hwdb/" + name, "hwdb", path))
    for cmd, names in HWDB_VARIANTS:
        for n in names:
            main.append(("%s/%s" % (cmd, n), cmd, devices[n]))
    main.append(("unknown/foo", "foo", devices["no_modalias"]))
    main.append(("input_id/missing", "input_id", "/devices/virtual/none"))
    groups.append((HWDB_DEBIAN, "plain", main))
    groups.append((HWDB_TUDEV, "plain",
                   [("tudev-hwdb/" + k, "hwdb " + k, devices["no_modalias"])
                    for k in TUDEV_KEYS]))
    groups.append((HWDB_DEBIAN, "plain",
                   [("keyboard/" + n, "keyboard", devices[n]) for n in KEYBOARD]))
    for cmd, setup in BTRFS:
        groups.append((HWDB_DEBIAN, setup,
                       [("%s/%s" % (cmd, setup), cmd, devices["sound_pcm_pci"])]))
    for setup, dev in UACCESS:
        groups.append((HWDB_DEBIAN, setup,
                       [("uaccess/%s/%s" % (setup, dev), "uaccess", devices[dev])]))
    return groups
