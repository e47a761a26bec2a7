# SPDX-License-Identifier: GPL-2.0-or-later
"""The systemd 257 variant of tudev's rules (rules.d/ with the "#@257 "
prefix stripped, as `make install` does when tudev is built
--with-systemd-compat=257) against Debian 13's rules under systemd 257's own
`udevadm test`, run inside the Debian 13 chroot tools/build-ref-trixie makes
(tests/builtins/trixie-udevadm); skipped when the chroot is absent.

  * the files as they are in git are the systemd 252 variant: every "#@257 "
    line is a comment there, continuation lines and GOTO/LABEL pairs are
    complete in both variants, and both variants pass `udevadm verify`;
  * on the fake sysfs trees test_rules_default.py uses (tests/builtins:
    storage_net_fixtures.py, fakesys.py) and a few devices added here
    (consoles, an accelerator, MTD, zram, a USB display, webcam and sound
    card), every device node and network interface gets the same links,
    properties, group and mode;
  * on a real loop device holding a GPT with an ext4 filesystem (blkid needs
    a real node): by-diskseq of the partitions, by-uuid, by-partuuid, ...
    (the by-path/PATH-part/ links need an ID_PATH, which a loop device has
    not: the fake trees' partitions show them).

Both tools read the same sysfs tree and Debian 13's hwdb.bin (bound on
/etc/udev) and .link files (Debian 13's). tudev runs with
NET_NAMING_SCHEME=latest, which makes its builtins follow systemd 257
(path_id's ID_PATH_WITH_USB_REVISION). systemd 257's `udevadm test` does not
store the database; for partitions to inherit their disk's ID_*
(IMPORT{parent}) the disk's properties are written to the chroot's private
/run/udev/data after each device, as udevd would. Helpers of the udev
package this machine lacks in /lib/udev (ata_id, scsi_id, ...) are replaced
by a failing stub in the chroot, so that both run with the same tools.

Differences that remain are listed in EXPECTED with the reason; a listed
difference that disappears fails too, so the table stays true.
"""

import glob
import os
import re
import shlex
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tests", "builtins"))

import test_rules_default as base  # noqa: E402
from test_rules_default import group_file, input_tree, storage_tree  # noqa: E402,F401
from tudevlib import LoopDevices  # noqa: E402
import fakesys  # noqa: E402

TRIXIE = os.environ.get("TUDEV_TRIXIE_ROOT", os.path.join(REPO, "build-ref", "trixie"))
WRAPPER = os.path.join(REPO, "tests", "builtins", "trixie-udevadm")
PREFIX = "#@257 "
ENV = {"NET_NAMING_SCHEME": "latest"}

# Properties not compared: bookkeeping (DEVLINKS is compared as links), and
# what rules tudev does not ship set on many devices (tags of logind's seat
# and access rules and of 99-systemd.rules, SYSTEMD_*; see tudev-rules(7)).
IGNORED_PROPS = {"DEVLINKS", "TAGS", "CURRENT_TAGS", "USEC_INITIALIZED", "ID_FOR_SEAT",
                 "ID_PROCESSING"}
IGNORED_PREFIXES = (".", "SYSTEMD_")

SEAT_HIDRAW = "logind's 71-seat.rules (not shipped by tudev, see tudev-rules(7)) tags " \
              "hidraw devices 'seat' from systemd 257 on, and imports path_id for them"
INPUT_ID = "input_id builtin: systemd 257 classifies tablet pads differently (BTN_0 " \
           "with a wheel or without ABS axes); not a rules matter"
WWID_NAMES = "without ata_id/scsi_id tudev names SCSI/SATA disks from the kernel's " \
             "wwid (as under systemd 252, test_rules_default.py)"
BLKID_FSINFO = "blkid builtin: systemd 257 also asks libblkid for the filesystem size " \
               "and block size (ID_FS_SIZE, ID_FS_LASTBLOCK, ID_FS_BLOCKSIZE)"
LOOP_BACKING = "blkid builtin: tudev does not set systemd 257's ID_LOOP_BACKING_* yet " \
               "(the rules for the by-loop-inode/by-loop-ref links are ported)"

# {(device, difference): reason}; a difference is "link+ PATH" (only systemd
# 257 makes it), "link- PATH" (only tudev), "prop KEY" (values differ or one
# side lacks it), "group", "mode".
EXPECTED = {
    **{("hidraw0", "prop " + k): SEAT_HIDRAW
       for k in ("ID_PATH", "ID_PATH_TAG", "ID_PATH_WITH_USB_REVISION")},
    # fakesys.synthetic_inputs: in_pad_wheel, in_pad_wheel_noabs, in_tablet_with_pad
    ("event115", "prop ID_INPUT_TABLET"): INPUT_ID,
    ("event115", "prop ID_INPUT_TABLET_PAD"): INPUT_ID,
    ("event116", "prop ID_INPUT_KEY"): INPUT_ID,
    ("event116", "prop ID_INPUT_TABLET"): INPUT_ID,
    ("event116", "prop ID_INPUT_TABLET_PAD"): INPUT_ID,
    ("event116", "prop ID_SERIAL"): INPUT_ID + " (a tablet gets ID_SERIAL=noserial)",
    ("event121", "prop ID_INPUT_TABLET_PAD"): INPUT_ID,
}


# ---------------------------------------------------------------- the variants

def rule_files():
    return sorted(glob.glob(os.path.join(base.RULES, "*.rules")))


def variant257(text):
    return re.sub(r"(?m)^%s" % re.escape(PREFIX), "", text)


def logical_lines(text):
    """(first line number, joined text) of the rules lines, comments and
    blank lines dropped, continuations joined (as udev reads them)."""
    out, cur, start = [], None, 0
    for n, line in enumerate(text.split("\n"), 1):
        s = line.strip()
        if cur is None and (s == "" or s.startswith("#")):
            continue
        if cur is None:
            start, cur = n, ""
        if s.endswith("\\"):
            cur += s[:-1]
            continue
        out.append((start, cur + s))
        cur = None
    assert cur is None, "file ends in a continuation (line %d)" % start
    return out


def gotos_and_labels(text):
    gotos, labels = [], set()
    for n, line in logical_lines(text):
        labels.update(re.findall(r'\bLABEL="([^"]*)"', line))
        gotos += [(n, g) for g in re.findall(r'\bGOTO="([^"]*)"', line)]
    return gotos, labels


@pytest.fixture(scope="module")
def rules257(tmp_path_factory):
    d = tmp_path_factory.mktemp("rules257")
    for f in rule_files():
        with open(f) as fh:
            (d / os.path.basename(f)).write_text(variant257(fh.read()))
    return str(d)


@pytest.fixture(scope="module")
def trixie():
    if not os.access(os.path.join(TRIXIE, "usr", "bin", "udevadm"), os.X_OK):
        pytest.skip("no systemd 257 reference at %s (tools/build-ref-trixie)" % TRIXIE)
    return TRIXIE


def test_257_lines_are_comments_in_git():
    """The prefix is exact and only at the start of a line; a rule is 257-only
    on all its physical lines or on none; every GOTO finds its LABEL in both
    variants (so a LABEL only in "#@257 " lines is a target of those only)."""
    total = 0
    for f in rule_files():
        with open(f) as fh:
            text = fh.read()
        lines = text.split("\n")
        name = os.path.basename(f)
        for n, line in enumerate(lines, 1):
            if "#@257" in line:
                body = line[len(PREFIX):].strip()
                assert line.startswith(PREFIX) and body[:1] not in ("", "#"), \
                    "%s:%d: malformed 257 line" % (name, n)
                total += 1
            if line.endswith("\\") and n < len(lines):
                assert line.startswith(PREFIX) == lines[n].startswith(PREFIX), \
                    "%s:%d: a continued rule must be 257-only on every line" % (name, n)
                if line.startswith("#") and not line.startswith(PREFIX):
                    pytest.fail("%s:%d: a comment ends in a backslash" % (name, n))
        for variant, t in (("252", text), ("257", variant257(text))):
            gotos, labels = gotos_and_labels(t)
            for n, g in gotos:
                assert g in labels, "%s:%d: GOTO=\"%s\" has no LABEL in the %s variant" % (
                    name, n, g, variant)
        # what the 252 variant runs is the file without its 257 lines
        assert logical_lines(text) == logical_lines(
            "\n".join("" if l.startswith(PREFIX) else l for l in lines))
    assert total >= 50, total


def test_257_variant_verifies(udevadm, group_file, rules257):
    files = " ".join(shlex.quote(f) for f in sorted(glob.glob(rules257 + "/*.rules")))
    r = base.nested(base.prologue(group_file) + "%s verify %s" % (udevadm, files))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Fail:    0" in r.stdout and r.stderr == "", r.stdout + r.stderr
    ours = base.nested(base.prologue(group_file) + "%s test --rules-dir=%s /devices/virtual/net/lo"
                       % (udevadm, rules257), env=ENV)
    assert ours.returncode == 0, ours.stderr
    assert "0 errors, 0 warnings" in ours.stderr


def test_257_variant_systemd_257_verifies(trixie, rules257):
    """systemd 257's own parser (udevadm verify, in the chroot) accepts it."""
    files = " ".join("/run/r/" + os.path.basename(f)
                     for f in sorted(glob.glob(rules257 + "/*.rules")))
    r = base.nested("mount -t tmpfs tmpfs %s/run\nmkdir %s/run/r\nmount --bind %s %s/run/r\n"
                    "%s verify --resolve-names=never %s"
                    % (trixie, trixie, rules257, trixie, WRAPPER, files))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Fail:    0" in r.stdout, r.stdout + r.stderr


# ---------------------------------------------------------------- running both

@pytest.fixture(scope="module")
def hwdb257(tmp_path_factory, trixie):
    """A directory holding Debian 13's hwdb.bin, bound on /etc/udev for both."""
    d = tmp_path_factory.mktemp("etc-udev")
    shutil.copy(os.path.join(trixie, "usr", "lib", "udev", "hwdb.bin"), str(d / "hwdb.bin"))
    return str(d)


# After each device: its ID_* properties into the chroot's database, as
# udevd would store them (E: lines), so that a partition can import them.
STORE_DB = r"""sd257() {
    %(wrapper)s test "$1" >/run/sd.out 2>/run/sd.err
    cat /run/sd.out; cat /run/sd.err >&2
    awk -v dir=%(root)s/run/udev/data '
        /^[^ ]/ { sec = $0; next }
        sec == "Properties:" && /^  / {
            kv = substr($0, 3)
            if (kv ~ /^SUBSYSTEM=/) sub_ = substr(kv, 11)
            else if (kv ~ /^MAJOR=/) maj = substr(kv, 7)
            else if (kv ~ /^MINOR=/) mnr = substr(kv, 7)
            else if (kv ~ /^USEC_INITIALIZED=/) usec = substr(kv, 18)
            else if (kv ~ /^ID_/) e[n++] = kv
        }
        END {
            if (maj == "") exit
            f = dir "/" (sub_ == "block" ? "b" : "c") maj ":" mnr
            printf "I:%%s\n", usec > f
            for (i = 0; i < n; i++) printf "E:%%s\n", e[i] > f
        }' /run/sd.out
}
"""


# The helpers of the udev package tudev calls when /lib/udev has them; where
# this machine lacks one, systemd 257 runs without it too (a stub that fails,
# bound over the chroot's copy), so that both see the same tools.
HELPERS = ("ata_id", "scsi_id", "cdrom_id", "v4l_id")


def heads(group_file, hwdb, sysroot=None, extra=""):
    # both read Debian 13's .link files (99-default.link: NamePolicy=)
    links = os.path.join(TRIXIE, "usr", "lib", "systemd", "network")
    links = links if os.path.isdir(links) else None
    common = base.prologue(group_file, sysroot, link_dir=links) + extra + \
        "mkdir -p /etc/udev\nmount --bind %s /etc/udev\n" % shlex.quote(hwdb)
    r = shlex.quote(TRIXIE)
    ref = common + ("mount -t tmpfs tmpfs {r}/run\nmkdir -p {r}/run/udev/data\n"
                    "mount --rbind /dev {r}/dev\n"
                    "printf '#!/bin/sh\\nexit 1\\n' > /run/no-helper\n"
                    "chmod 755 /run/no-helper\n").format(r=r)
    for h in HELPERS:
        if not os.access("/lib/udev/" + h, os.X_OK):
            ref += "mount --bind /run/no-helper %s/usr/lib/udev/%s\n" % (r, h)
    ref += STORE_DB % {"wrapper": shlex.quote(WRAPPER), "root": r}
    return common, ref


NODE = "n=$(sed -n 's/^DEVNAME=//p' /sys@DEV@/uevent); " \
    "[ -z \"$n\" ] || stat -c 'NODE %G %a' /dev/$n 2>/dev/null || true"


def parse257(text):
    """systemd 257's `udevadm test` report: properties, links, group, mode."""
    props, links, group, mode, sec = {}, set(), None, None, None
    for line in text.splitlines():
        if line and not line.startswith(" "):
            sec = line.split(":")[0] if re.match(r"^[A-Z][A-Za-z ]*:", line) else None
            continue
        if not line.startswith("  ") or sec is None:
            continue
        v = line[2:]
        if sec == "Properties":
            k, _, val = v.partition("=")
            props[k] = val
        elif sec == "Device node symlinks":
            links.add(v)
        elif sec == "Device node group":
            group = v.split(" (")[0]
        elif sec == "Device node permission":
            mode = v
    if "DEVNAME" in props and mode is None:
        mode = "0660" if group else "0600"
    return props, links, group or ("root" if "DEVNAME" in props else None), mode


def parse_ours(props, out):
    node = [line.split() for line in out.splitlines() if line.startswith("NODE ")]
    group = mode = None
    if node:
        group, mode = node[0][1], "%04o" % int(node[0][2], 8)
    return props, base.links(props), group, mode


def compared(props):
    return {k: v for k, v in props.items()
            if k not in IGNORED_PROPS and not k.startswith(IGNORED_PREFIXES)}


def differences(ours, theirs):
    op, ol, og, om = ours
    tp, tl, tg, tm = theirs
    d = {"link+ " + l for l in tl - ol} | {"link- " + l for l in ol - tl}
    op, tp = compared(op), compared(tp)
    d |= {"prop " + k for k in set(op) | set(tp) if op.get(k) != tp.get(k)}
    if og is not None and og != tg:
        d.add("group")
    if om is not None and om != tm:
        d.add("mode")
    return d


def run_both(udevadm, rules257, group_file, hwdb, named, sysroot=None, extra=""):
    """named: [(name, devpath)] in order (disks before their partitions).
    Returns {name: (ours, theirs, our stderr, systemd's stderr)}, ours and
    theirs parsed as (properties, links, group, mode)."""
    common, ref = heads(group_file, hwdb, sysroot, extra)
    paths = [p for _, p in named]
    ours = base.run_devices(common, "%s test --apply --rules-dir=%s" % (udevadm, rules257),
                            paths, extra=NODE, env=ENV)
    theirs = base.run_devices(ref, "sd257", paths, env=ENV)
    res = {}
    for (name, _), o, t in zip(named, ours, theirs):
        assert "Properties:" in t[2], (name, t[1][-3000:])
        res[name] = (parse_ours(o[0], o[2]), parse257(t[2]), o[1], t[1])
    return res


def check(res, expected=None):
    expected = EXPECTED if expected is None else expected
    failures = []
    for name, (o, t, oerr, terr) in sorted(res.items()):
        for diff in sorted(differences(o, t)):
            if (name, diff) not in expected:
                if diff.startswith("prop "):
                    k = diff[5:]
                    what = (o[0].get(k, "(unset)"), t[0].get(k, "(unset)"))
                else:
                    what = (o[2:], t[2:])
                failures.append("%s: %s (tudev %r, systemd 257 %r)" % ((name, diff) + what))
        for (n, diff), why in expected.items():
            if n == name and diff not in differences(o, t):
                failures.append("%s: %s is listed (%s) but no longer differs" % (name, diff, why))
    assert not failures, "\n".join(failures)


# ---------------------------------------------------------------- fake trees

def device_nodes(sysroot):
    """Every device with a node, and every network interface, in a fake
    tree; disks before their partitions."""
    out = []
    for d, subdirs, files in os.walk(os.path.join(sysroot, "devices")):
        subdirs[:] = [s for s in subdirs if not os.path.islink(os.path.join(d, s))]
        if "uevent" in files:
            with open(os.path.join(d, "uevent")) as f:
                u = f.read()
                sub = os.path.basename(os.path.realpath(os.path.join(d, "subsystem")))
                if "DEVNAME=" in u or sub == "net":
                    out.append(d[len(sysroot):])
    return sorted(out)


def named_nodes(sysroot):
    """[(name, devpath)]: the name is the device's own where it is unique."""
    paths = device_nodes(sysroot)
    count = {}
    for p in paths:
        count[os.path.basename(p)] = count.get(os.path.basename(p), 0) + 1
    return [(os.path.basename(p) if count[os.path.basename(p)] == 1 else p, p) for p in paths]


def test_storage_tree_like_systemd_257(udevadm, group_file, storage_tree, rules257, trixie,
                                       hwdb257):
    sysroot, devs, _ = storage_tree
    named = named_nodes(sysroot)
    res = run_both(udevadm, rules257, group_file, hwdb257, named, sysroot)
    check(res, {**EXPECTED, **STORAGE_EXPECTED})
    # what the boot test found on real hardware
    disk, part = res["sdb"][0], res["sdb1"][0]
    rev = disk[0]["ID_PATH_WITH_USB_REVISION"]
    assert "-usbv3-" in rev and "/dev/disk/by-path/" + rev in disk[1]
    assert "/dev/disk/by-path/%s-part1" % rev in part[1]
    assert "/dev/disk/by-path/%s-part/by-partnum/1" % disk[0]["ID_PATH"] in part[1]
    tty = res["ttyUSB0"][0]
    assert "/dev/serial/by-path/" + tty[0]["ID_PATH_WITH_USB_REVISION"] in tty[1]


# the SATA disk's wwid names (the same under systemd 252, test_rules_default.py)
STORAGE_EXPECTED = {
    (n, d): WWID_NAMES for n, suffix in (("sda", ""), ("sda1", "-part1"))
    for d in ["link- /dev/disk/by-id/scsi-35002538e40a0e2c6" + suffix,
              "link- /dev/disk/by-id/wwn-0x5002538e40a0e2c6" + suffix] +
    ["prop " + k for k in ("ID_BUS", "ID_MODEL", "ID_REVISION", "ID_SERIAL", "ID_SERIAL_SHORT",
                           "ID_VENDOR", "ID_WWN", "ID_WWN_WITH_EXTENSION")]
}


def usb2_root_hub(sysroot):
    """fakesys' root hub says nothing of its USB revision: make it a USB 2
    hub (bDeviceProtocol 1), so that path_id gives ID_PATH_WITH_USB_REVISION."""
    with open(os.path.join(sysroot, fakesys.USB1.lstrip("/"), "bDeviceProtocol"), "w") as f:
        f.write("01\n")


def test_input_tree_like_systemd_257(udevadm, group_file, input_tree, rules257, trixie,
                                     hwdb257):
    sysroot, devs = input_tree
    usb2_root_hub(sysroot)
    named = named_nodes(sysroot)
    res = run_both(udevadm, rules257, group_file, hwdb257, named, sysroot)
    check(res)
    kbd = res[{p: n for n, p in named}[devs["usb_keyboard"]]][0]
    assert any("-usbv2-" in l and l.endswith("-event-kbd") and "/by-path/" in l
               for l in kbd[1]), kbd[1]


@pytest.fixture(scope="module")
def misc_tree(tmp_path_factory):
    """Devices for the other systemd 257 changes: consoles, an accelerator,
    MTD partitions, a KVM clock, zram, a USB display, webcam and sound card."""
    root = str(tmp_path_factory.mktemp("misc"))
    fs = fakesys.FakeSys(root)
    devs = {}

    def node(path, subsystem, major, minor, devname=None, attrs=None, uevent=()):
        devs[os.path.basename(path)] = fs.device(
            path, subsystem, list(uevent) + [("MAJOR", str(major)), ("MINOR", str(minor)),
                                             ("DEVNAME", devname or os.path.basename(path))],
            attrs)
    for i in (0, 1, 7):
        node("/devices/virtual/tty/tty%d" % i, "tty", 4, i)
    node("/devices/virtual/tty/hvc0", "tty", 229, 0)
    node("/devices/virtual/tty/ptmx", "tty", 5, 2)
    node("/devices/platform/serial8250/tty/ttyS0", "tty", 4, 64)
    fs.plain("/devices/pci0000:00")
    fs.device("/devices/pci0000:00/0000:00:0b.0", "pci",
              [("PCI_SLOT_NAME", "0000:00:0b.0")], {"vendor": "0x8086", "device": "0x7d1d",
                                                     "class": "0x120000"})
    node("/devices/pci0000:00/0000:00:0b.0/accel/accel0", "accel", 261, 0, "accel/accel0")
    fs.plain("/devices/platform/spi-nor")
    node("/devices/platform/spi-nor/mtd/mtd0", "mtd", 90, 0, attrs={"name": "u-boot"})
    node("/devices/platform/spi-nor/mtd/mtd0ro", "mtd", 90, 1, attrs={"name": "u-boot"})
    node("/devices/platform/spi-nor/mtd/mtd1", "mtd", 90, 2, attrs={"name": ""})
    node("/devices/virtual/ptp/ptp0", "ptp", 248, 0, attrs={"clock_name": "KVM virtual PTP"})
    node("/devices/virtual/misc/udmabuf", "misc", 10, 125)
    node("/devices/virtual/block/zram0", "block", 252, 0,
         uevent=[("DEVTYPE", "disk"), ("DISKSEQ", "31")], attrs={"size": "8192"})
    # USB behind xHCI: a DisplayLink-style display, a webcam, a headset
    x = fakesys.PCI_XHCI
    fs.device(x, "pci", [("PCI_SLOT_NAME", "0000:00:14.0")],
              {"vendor": "0x8086", "device": "0xa36d", "class": "0x0c0330"}, driver="xhci_hcd")
    fakesys.usb_device(fs, fakesys.USB1, 1, 1, 0x1d6b, 0x0002, 0x0601, "xHCI Host Controller",
                       "Linux xhci-hcd", [("1-0:1.0", 9, 0, 0, "hub")])
    usb2_root_hub(fs.sys)
    _, di = fakesys.usb_device(fs, fakesys.USB1 + "/1-3", 1, 4, 0x17e9, 0x6006, 0x0100,
                               "USB Display", "DisplayLink", [("1-3:1.0", 0xff, 0, 0, "udl")])
    node(di[0] + "/drm/card1", "drm", 226, 1, "dri/card1")
    _, ci = fakesys.usb_device(fs, fakesys.USB1 + "/1-5", 1, 5, 0x046d, 0x0825, 0x0012,
                               "Webcam C270", "Logitech", [("1-5:1.0", 0x0e, 1, 0, "uvcvideo"),
                                                           ("1-5:1.1", 0x0e, 2, 0, "uvcvideo")])
    node(ci[0] + "/video4linux/video0", "video4linux", 81, 0, attrs={"index": "0",
                                                                      "name": "Webcam C270"})
    _, ai = fakesys.usb_device(fs, fakesys.USB1 + "/1-6", 1, 6, 0x0d8c, 0x0014, 0x0100,
                               "USB Headset", "C-Media", [("1-6:1.0", 1, 1, 0, "snd-usb-audio")])
    fs.device(ai[0] + "/sound/card2", "sound", [], {"id": "Headset", "number": "2"})
    node(ai[0] + "/sound/card2/controlC2", "sound", 116, 20, "snd/controlC2")
    return fs.sys, devs


def test_misc_devices_like_systemd_257(udevadm, group_file, misc_tree, rules257, trixie,
                                       hwdb257):
    sysroot, devs = misc_tree
    named = named_nodes(sysroot)
    res = run_both(udevadm, rules257, group_file, hwdb257, named, sysroot)
    check(res)
    assert res["tty1"][0][2:] == ("tty", "0600")
    assert res["hvc0"][0][2:] == ("tty", "0600")
    assert res["accel0"][0][2:] == ("render", "0660")
    assert res["mtd0"][0][1] == {"/dev/mtd/by-name/u-boot"}
    assert res["mtd0ro"][0][1] == set()
    assert res["zram0"][0][1] == {"/dev/disk/by-diskseq/31"}
    assert any("-usbv2-" in l for l in res["card1"][0][1]), res["card1"][0][1]
    assert any("-usbv2-" in l for l in res["video0"][0][1]), res["video0"][0][1]
    assert any("-usbv2-" in l for l in res["controlC2"][0][1]), res["controlC2"][0][1]


def test_252_variant_keeps_252(udevadm, group_file, misc_tree, tmp_path):
    """The files as they are in git: consoles keep 0620, no 257 links."""
    sysroot, devs = misc_tree
    common, _ = heads(group_file, str(tmp_path), sysroot)
    names = ("tty1", "hvc0", "accel0", "mtd0", "zram0", "card1")
    res = base.run_devices(common, "%s test --apply --rules-dir=%s" % (udevadm, base.RULES),
                           [devs[n] for n in names], extra=NODE)
    got = {n: parse_ours(r[0], r[2]) for n, r in zip(names, res)}
    assert got["tty1"][2:] == ("tty", "0620")
    assert got["hvc0"][2:] == ("root", "0600")
    assert got["accel0"][2:] == ("root", "0600")
    assert got["mtd0"][1] == set() and got["zram0"][1] == set()
    assert not any("-usbv" in l for l in got["card1"][1])


# ---------------------------------------------------------------- a real disk

def test_loop_disk_like_systemd_257(udevadm, group_file, rules257, trixie, hwdb257, tmp_path):
    """GPT with two named partitions, ext4 on the first."""
    for tool in ("mkfs.ext4", "sfdisk", "losetup", "partx"):
        if not shutil.which(tool):
            pytest.skip("%s missing (tools/install-deps)" % tool)
    img = str(tmp_path / "disk.img")
    with open(img, "wb") as f:
        f.truncate(24 * 1024 * 1024)
    subprocess.run(["sfdisk", "-q", img], input="label: gpt\n"
                   "size=8MiB, name=tudevboot\nname=tudevdata\n", text=True, check=True,
                   capture_output=True)
    loops = LoopDevices()
    dt = str(tmp_path / "devtmpfs")
    os.makedirs(dt)
    subprocess.run(["mount", "-t", "devtmpfs", "devtmpfs", dt], check=True)
    try:
        idx = loops.add()
        name = "loop%d" % idx
        node = os.path.join(dt, name)
        subprocess.run(["losetup", "-P", node, img], check=True)
        try:
            subprocess.run(["partx", "-a", node], capture_output=True)
            p1 = os.path.join(dt, name + "p1")
            subprocess.run(["mkfs.ext4", "-q", "-F", "-L", "TUDEVROOT", p1], check=True,
                           capture_output=True)
            sysdir = "/sys/devices/virtual/block/" + name
            parts = sorted(p for p in os.listdir(sysdir) if p.startswith(name + "p"))
            assert parts == [name + "p1", name + "p2"]
            named = [(name, "/devices/virtual/block/" + name)] + \
                [(p, "/devices/virtual/block/%s/%s" % (name, p)) for p in parts]
            bind = "".join(": > /dev/%s; mount --bind %s/%s /dev/%s\n" % (n, dt, n, n)
                           for n, _ in named)
            res = run_both(udevadm, rules257, group_file, hwdb257, named, extra=bind)
        finally:
            subprocess.run(["losetup", "-d", node], capture_output=True)
    finally:
        subprocess.run(["umount", dt], capture_output=True)
        loops.remove_all()
    check(res, {**EXPECTED, **loop_expected(res, name)})
    disk, part1, part2 = (res[n][0] for n, _ in named)
    seq = disk[0]["DISKSEQ"]
    assert "/dev/disk/by-diskseq/%s" % seq in disk[1]
    assert "/dev/disk/by-diskseq/%s-part1" % seq in part1[1]
    assert "/dev/disk/by-diskseq/%s-part2" % seq in part2[1]
    assert "/dev/disk/by-label/TUDEVROOT" in part1[1]


def loop_expected(res, name):
    """systemd 257's loop-backing links and properties, and the filesystem
    size, which tudev's blkid builtin does not give."""
    exp = {}
    for n in (name, name + "p1", name + "p2"):
        t = res[n][1]
        for k in ("ID_FS_SIZE", "ID_FS_LASTBLOCK", "ID_FS_BLOCKSIZE"):
            if k in t[0]:
                exp[(n, "prop " + k)] = BLKID_FSINFO
        for l in t[1]:
            if "/by-loop-inode/" in l or "/by-loop-ref/" in l:
                exp[(n, "link+ " + l)] = LOOP_BACKING
        for k in t[0]:
            if k.startswith("ID_LOOP_BACKING_"):
                exp[(n, "prop " + k)] = LOOP_BACKING
    return exp
