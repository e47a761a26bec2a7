# SPDX-License-Identifier: GPL-2.0-or-later
"""The btrfs builtin on a real btrfs file system (an image on a loop device,
made with mkfs.btrfs): the kernel's BTRFS_IOC_DEVICES_READY answer through
/dev/btrfs-control gives ID_BTRFS_READY=1, as with systemd 252's udevadm
test-builtin; the fake-tree cases (no control node, not btrfs, bad
arguments) are in test_builtins_compare.py."""

import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "builtins"))

import compare  # noqa: E402
import fakesys  # noqa: E402


@pytest.fixture
def btrfs_loop(tmp_path):
    """A btrfs image on a new loop device; its node and /dev/btrfs-control
    are bind-mounted into the sandbox's /dev from a private devtmpfs mount
    (LoopNodes of test_builtins_blkid.py)."""
    if not (shutil.which("mkfs.btrfs") and shutil.which("losetup") and
            os.path.exists("/sys/class/misc/btrfs-control")):
        pytest.skip("needs mkfs.btrfs (btrfs-progs), losetup and the btrfs driver")
    from test_builtins_blkid import LoopNodes
    img = str(tmp_path / "btrfs.img")
    with open(img, "wb") as f:
        f.truncate(128 << 20)
    subprocess.run(["mkfs.btrfs", "-q", "-f", img], check=True, capture_output=True)
    nodes = LoopNodes(str(tmp_path))
    try:
        nodes.bind("btrfs-control")
        name, _ = nodes.attach(img)
        yield "/dev/" + name
        if shutil.which("btrfs"):  # drop the kernel's record of the scanned device
            subprocess.run(["btrfs", "device", "scan", "--forget", "/dev/" + name],
                           capture_output=True)
    finally:
        nodes.cleanup()


def test_ready_on_a_real_filesystem(btrfs_loop, udevadm, sd_udevadm, tmp_path):
    tree = str(tmp_path / "tree")
    devices = fakesys.build(tree)
    # the sandbox's /dev has neither node: bind the real ones in (read-only use)
    group = {"sys": os.path.join(tree, "sys"), "etc_udev": None,
             "dev_nodes": ["/dev/btrfs-control", btrfs_loop],
             "cmds": [{"argv": [u, "test-builtin", "btrfs ready " + btrfs_loop,
                                devices["no_modalias"]]} for u in (sd_udevadm, udevadm)]}
    sd, ours = compare.run_plan([group])[0]["results"]
    assert sd["stdout"] == "ID_BTRFS_READY=1\n", sd
    assert (ours["rc"], ours["stdout"]) == (sd["rc"], sd["stdout"]), ours["stderr"]
