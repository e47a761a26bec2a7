# SPDX-License-Identifier: GPL-2.0-or-later
"""The builtins against systemd 252's `udevadm test-builtin` (the reference,
Debian's package unpacked in build-ref/sd-udev) over the same fake sysfs
trees (tests/builtins/fakesys.py) and the same hwdb.bin files: for every case
of tests/builtins/cases.py (hwdb, input_id, keyboard, btrfs, uaccess) the
printed properties and the exit status must be identical, and so must the
files the builtins write (the keyboard builtin's sysfs attributes, the
uaccess builtin's ACLs). Every difference is a failure unless it is listed
in KNOWN_DIFFERENCES with its reason."""

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "builtins"))

import compare  # noqa: E402

# (case id, what) -> reason. Empty: tudev matches systemd 252 everywhere.
KNOWN_DIFFERENCES = {}


@pytest.fixture(scope="module")
def comparison(sd_udevadm, udevadm, tmp_path_factory):
    sd_root = os.path.dirname(os.path.dirname(sd_udevadm))
    work = str(tmp_path_factory.mktemp("builtins-compare"))
    return compare.compare_all(sd_udevadm, udevadm, work, sd_root)


def test_same_output_as_systemd(comparison):
    results, diffs = comparison
    assert len(results) > 120
    unexpected = [d for d in diffs if (d[0], d[1]) not in KNOWN_DIFFERENCES]
    msg = "\n".join("%s (%s):\n  systemd: %r\n  tudev:   %r" % d for d in unexpected)
    assert not unexpected, msg


def test_cases_are_meaningful(comparison):
    """The fixture exercises what it claims: properties were found."""
    results, _ = comparison
    out = {cid: sd["stdout"] for cid, sd, _ in results}
    assert "ID_INPUT_KEYBOARD=1" in out["input_id/usb_keyboard"]
    assert "ID_INPUT_TOUCHPAD=1" in out["input_id/touchpad"]
    assert "ID_INPUT_JOYSTICK=1" in out["input_id/joystick"]
    assert "ID_INPUT_MOUSE=1" in out["input_id/usb_mouse"]
    assert "ID_INPUT_TABLET_PAD=1" in out["input_id/tablet_pad_stylus"]
    assert "ID_MODEL_FROM_DATABASE=" in out["hwdb/sound_card_pci"]
    assert "ID_MODEL_FROM_DATABASE=" in out["hwdb --subsystem=usb/usb_sound_usbdev"]
    assert "KEYBOARD_KEY_" in out["hwdb --subsystem=input --lookup-prefix=evdev:/usb_keyboard"]
    assert "MOUSE_DPI=" in out["hwdb 'mouse:usb:v093ap2510:name:PixArt USB Optical Mouse:'"
                               "/usb_mouse"]
    assert out["btrfs ready /dev/foo/plain"] == "ID_BTRFS_READY=0\n"


def test_no_sanitizer_reports(comparison):
    import tudevlib
    results, _ = comparison
    for cid, _, ours in results:
        assert not tudevlib.sanitizer_reports(ours["stderr"]), (cid, ours["stderr"])
