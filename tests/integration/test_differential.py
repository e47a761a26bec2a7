# SPDX-License-Identifier: GPL-2.0-or-later
"""tudev against systemd-udevd 252 with Debian 12's full rule set: tools/differential.

The tool runs each daemon in a sandbox of its own with the rules, helpers,
hwdb and .link files of Debian's udev package, replays a coldplug over this
machine's devices plus devices it creates (veth pairs, tap, tun, bridge,
macvlan, macvtap, vxlan, ifb; loop devices holding GPT/MBR/whole-disk images
with vfat, ext4 and swap), and compares the databases, tag index, link
claims, broadcasts and /dev entries device by device. Every difference must
be explained by the tool's allowlist.

Plain build: every device of the machine (about 20 s). Sanitizer builds
(TUDEV_BUILD not ending in /build): --small (a veth pair, a tap, a GPT and a
btrfs disk, a loop device that comes and goes) with systemd's udevadm driving
trigger and settle (a sanitized udevadm takes long to start), about 20 s.
"""

import json
import os
import shutil
import subprocess

import pytest

from tudevlib import SD_UDEVADM, build_dir

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
TOOL = os.path.join(REPO, "tools", "differential")
TOOLS = ("sfdisk", "mkfs.ext4", "mkfs.vfat", "mkswap", "losetup", "partx", "ip", "dd")


def plain_build():
    return os.path.basename(os.path.normpath(build_dir())) == "build"


def test_differential(tmp_path):
    if not os.access(SD_UDEVADM, os.X_OK):
        pytest.skip("systemd 252's udevadm not found at %s" % SD_UDEVADM)
    sd_root = os.path.dirname(os.path.dirname(SD_UDEVADM))
    if not os.path.isdir(os.path.join(sd_root, "lib", "udev", "rules.d")):
        pytest.skip("no Debian rules under %s" % sd_root)
    missing = [t for t in TOOLS if not shutil.which(t)]
    if missing:
        pytest.skip("missing tools: %s" % ", ".join(missing))
    out = tmp_path / "diff.json"
    cmd = [TOOL, "--build", build_dir(), "--sd-root", sd_root, "--json", str(out),
           "--timeout", "150"]
    if not plain_build():
        cmd += ["--small", "--control-udevadm", "systemd"]
    r = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                       timeout=400)
    print(r.stdout)
    print(r.stderr[-4000:])
    if r.returncode == 3:
        pytest.skip("inconclusive: other activity on this machine flooded the daemon with "
                    "events (%s)" % r.stderr.strip().splitlines()[-1])
    assert r.returncode == 0, "differences or a failed run:\n%s\n%s" % (r.stdout, r.stderr[-4000:])
    with open(out) as f:
        doc = json.load(f)
    figs = doc["figures"]
    # the comparison is not vacuous: what the tool creates was compared
    assert figs["created_devices"] >= 10, figs
    assert figs["symlinks"] >= 12, figs
    assert figs["db_files"] >= 8, figs
    assert figs["broadcasts_compared"] >= 40, figs
    assert figs["net_attrs"] >= 20, figs
    assert figs["dev_entries"] >= 12, figs
    if plain_build():
        assert figs["devices"] >= 100 and figs["created_devices"] >= 25, figs
    for name, errors in doc["errors"].items():
        assert not errors, (name, errors)
