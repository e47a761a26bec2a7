# SPDX-License-Identifier: GPL-2.0-or-later
"""fido_id against systemd 252's (Debian's package, unpacked in
build-ref/sd-udev/lib/udev), on fake /sys trees bind-mounted over /sys in a
private mount namespace (tests/builtins/nsrun.py): HID devices with the
report descriptors of FIDO tokens, other devices and malformed ones, and
trees where the parent or its descriptor is missing. Both programs get the
hidraw syspath as argument and must print the same lines and exit with the
same status; tudev's must do the same when the device comes from the
environment (DEVPATH, SUBSYSTEM, ACTION, SEQNUM), as udev runs it.

systemd's own environment mode cannot be run on a fake tree: it parses the
environment in place (sd-device's device_append() cuts each KEY=value at
'='), so its SYSTEMD_DEVICE_VERIFY_SYSFS=0 is lost and the parent, not on
sysfs, is refused. Its failures before the parent lookup are compared."""

import json
import os
import subprocess
import sys

import pytest

import tudevlib

HERE = os.path.dirname(os.path.abspath(__file__))
NSRUN = os.path.join(HERE, "..", "builtins", "nsrun.py")

U2F = bytes.fromhex("06d0f10901a1010920150026ff007508954081020921150026ff00750895409102c0")
KEYBOARD = bytes.fromhex("05010906a101050719e029e71500250175019508810295017508810395057501"
                         "05081901290591029501750391039506750815002565050719002965810" "0c0")
MOUSE = bytes.fromhex("05010902a1010901a10005091901290315002501950375018102950175058103"
                      "0501093009311581257f750895028106c0c0")

DESCRIPTORS = {
    "u2f": U2F,
    "keyboard": KEYBOARD,
    "mouse": MOUSE,
    "usage-32bit": bytes.fromhex("05010b0100d0f1"),
    "fido-page-other-usage": bytes.fromhex("06d0f10902a101c0"),
    "usage-before-page": bytes.fromhex("090106d0f1"),
    "long-item": bytes.fromhex("fe0210" "06d0" "06d0f10901"),
    "long-item-cut": bytes.fromhex("0501fe"),
    "item-cut": bytes.fromhex("050126ff"),
    "page-4-bytes": bytes.fromhex("07d0f100000901"),
    "match-then-garbage": bytes.fromhex("06d0f1090107"),
    "empty": b"",
    "fido-past-4096": KEYBOARD + b"\x00" * (4100 - len(KEYBOARD)) + U2F,
    "fido-before-4096-cut-after": U2F + b"\x00" * 4090 + b"\x26",
}
# trees: no parent device with a uevent file; descriptor missing; a symlink
TREE_CASES = ["no-parent", "no-descriptor", "descriptor-symlink"]


def _programs(build):
    ours = os.path.join(build, "helpers", "fido_id")
    ref = os.path.join(os.path.dirname(os.path.dirname(tudevlib.SD_UDEVADM)), "lib", "udev",
                       "fido_id")
    assert os.access(ours, os.X_OK), "%s not built" % ours
    if not os.access(ref, os.X_OK):
        pytest.skip("systemd's fido_id not found at %s" % ref)
    return ref, ours


def _touch(path, data=b""):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def _make_tree(root):
    """Returns {case: devpath of its hidraw device}."""
    devs = {}
    _touch(os.path.join(root, "devices", "virtual", "misc", "uhid", "uevent"))
    os.makedirs(os.path.join(root, "class", "hidraw"))
    for i, name in enumerate(list(DESCRIPTORS) + TREE_CASES):
        hid = "/devices/virtual/misc/uhid/0003:1050:0407.%04X" % (i + 1)
        if name == "no-parent":
            hid = "/devices/virtual/nothing/0003:1050:0407.%04X" % (i + 1)
        hidraw = hid + "/hidraw/hidraw%d" % i
        _touch(root + hidraw + "/uevent", b"MAJOR=240\nMINOR=%d\nDEVNAME=hidraw%d\n" % (i, i))
        if name != "no-parent":
            _touch(root + hid + "/uevent", b"DRIVER=hid-generic\nHID_ID=0003:00001050:00000407\n")
        if name in DESCRIPTORS:
            _touch(root + hid + "/report_descriptor", DESCRIPTORS[name])
        elif name == "descriptor-symlink":
            _touch(root + hid + "/real_descriptor", U2F)
            os.symlink("real_descriptor", root + hid + "/report_descriptor")
        os.symlink("../.." + hidraw, os.path.join(root, "class", "hidraw", "hidraw%d" % i))
        devs[name] = hidraw
    return devs


def _env(devpath, **kw):
    e = {"DEVPATH": devpath, "SUBSYSTEM": "hidraw", "ACTION": "add", "SEQNUM": "1234",
         "DEVNAME": "/dev/" + os.path.basename(devpath), "SYSTEMD_LOG_LEVEL": "err",
         "ASAN_OPTIONS": "verify_asan_link_order=0"}
    e.update(kw)
    return {k: v for k, v in e.items() if v is not None}


def _nsrun(plan):
    p = subprocess.run([sys.executable, NSRUN], input=json.dumps(plan).encode(),
                       capture_output=True, timeout=300)
    assert p.returncode == 0, p.stderr.decode("utf-8", "replace")
    return json.loads(p.stdout)


@pytest.fixture(scope="module")
def results(build, tmp_path_factory):
    ref, ours = _programs(build)
    root = str(tmp_path_factory.mktemp("fido-sys"))
    devs = _make_tree(root)
    cmds, keys = [], []
    for name, devpath in devs.items():
        for prog, which in ((ref, "sd"), (ours, "tu")):
            cmds.append({"argv": [prog, "/sys/class/hidraw/" + os.path.basename(devpath)],
                         "env": _env(devpath)})
            keys.append((name, which, "argv"))
        cmds.append({"argv": [ours], "env": _env(devpath)})
        keys.append((name, "tu", "env"))
    # command lines and environments that fail before the parent lookup
    some = devs["u2f"]
    for label, argv, env in (
            ("too-many-args", ["a", "b"], _env(some)),
            ("outside-sys", ["/tmp"], _env(some)),
            ("missing-syspath", ["/sys/devices/none"], _env(some)),
            ("env-no-seqnum", [], _env(some, SEQNUM=None)),
            ("env-seqnum-0", [], _env(some, SEQNUM="0")),
            ("env-bad-action", [], _env(some, ACTION="frob")),
            ("env-no-subsystem", [], _env(some, SUBSYSTEM=None)),
            ("env-no-devpath", [], _env(some, DEVPATH=None))):
        for prog, which in ((ref, "sd"), (ours, "tu")):
            cmds.append({"argv": [prog] + argv, "env": env})
            keys.append((label, which, "cli"))
    out = _nsrun([{"sys": root, "cmds": cmds}])[0]["results"]
    return dict(zip(keys, out))


@pytest.mark.parametrize("name", list(DESCRIPTORS) + TREE_CASES)
def test_fido_id_device(results, name):
    sd = results[(name, "sd", "argv")]
    for mode in ("argv", "env"):
        tu = results[(name, "tu", mode)]
        assert "Sanitizer" not in tu["stderr"], tu["stderr"]
        assert (tu["rc"], tu["stdout"]) == (sd["rc"], sd["stdout"]), (mode, tu["stderr"])


def test_fido_id_finds_tokens(results):
    token = "ID_FIDO_TOKEN=1\nID_SECURITY_TOKEN=1\n"
    for name in ("u2f", "usage-32bit", "long-item", "match-then-garbage",
                 "fido-before-4096-cut-after", "descriptor-symlink"):
        r = results[(name, "sd", "argv")]
        expected = (1, "") if name == "descriptor-symlink" else (0, token)
        assert (r["rc"], r["stdout"]) == expected, name


@pytest.mark.parametrize("label", ["too-many-args", "outside-sys", "missing-syspath",
                                   "env-no-seqnum", "env-seqnum-0", "env-bad-action",
                                   "env-no-subsystem", "env-no-devpath"])
def test_fido_id_cli(results, label):
    sd, tu = results[(label, "sd", "cli")], results[(label, "tu", "cli")]
    assert (tu["rc"], tu["stdout"]) == (sd["rc"], sd["stdout"]), tu["stderr"]
