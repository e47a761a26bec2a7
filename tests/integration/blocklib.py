# SPDX-License-Identifier: GPL-2.0-or-later
"""Helpers for the block-device tests (inotify watch, block device locking,
per-event log level): loop devices with a node in the sandbox's /dev, a
private rules directory, partitioned loop devices backed by a file."""

import os
import random
import stat
import subprocess
import time

from tudevlib import wait_until

SYS_BLOCK = "/sys/devices/virtual/block"


def write_rules(directory, text, name="50-test.rules"):
    os.makedirs(str(directory), exist_ok=True)
    path = os.path.join(str(directory), name)
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.rename(path + ".tmp", path)
    return path


def free_loop_index():
    for _ in range(200):
        idx = random.randint(2000, 60000)
        if not os.path.exists("%s/loop%d" % (SYS_BLOCK, idx)):
            return idx
    raise RuntimeError("no free loop index")


def mknod_block(name, major, minor):
    """Stand-in for devtmpfs in the sandbox's tmpfs /dev."""
    path = "/dev/" + name
    if not os.path.exists(path):
        os.mknod(path, 0o600 | stat.S_IFBLK, os.makedev(major, minor))
    return path


def sysfs_devnum(syspath):
    with open(os.path.join(syspath, "dev")) as f:
        ma, mi = f.read().strip().split(":")
    return int(ma), int(mi)


def add_loop(loops, idx=None):
    """A new loop device with its node: (index, devpath, node)."""
    idx = loops.add(index=free_loop_index() if idx is None else idx)
    node = mknod_block("loop%d" % idx, 7, idx)
    return idx, loops.devpath(idx), node


def write_uevent(devpath, text):
    with open("/sys" + devpath + "/uevent", "w") as f:
        f.write(text)


def close_after_write(node):
    fd = os.open(node, os.O_WRONLY | os.O_CLOEXEC)
    os.close(fd)


def mbr_image(path, size_mb=8):
    """A sparse file with an MBR holding one Linux partition."""
    sectors = size_mb * 2048
    with open(path, "wb") as f:
        f.truncate(size_mb * 1024 * 1024)
        entry = bytes([0x00, 0, 0, 0, 0x83, 0, 0, 0]) + \
            (2048).to_bytes(4, "little") + (sectors - 2048).to_bytes(4, "little")
        f.seek(446)
        f.write(entry)
        f.seek(510)
        f.write(b"\x55\xaa")


class PartitionedLoop:
    """A loop device bound (losetup -P) to an MBR image with one partition;
    detach() unbinds it (must happen before the loop device is removed)."""

    def __init__(self, loops, tmp_path):
        self.idx, self.devpath, self.node = add_loop(loops)
        self.image = str(tmp_path / ("loop%d.img" % self.idx))
        self.part_devpath = self.devpath + "/loop%dp1" % self.idx
        mbr_image(self.image)
        subprocess.run(["losetup", "-P", self.node, self.image], check=True,
                       stdin=subprocess.DEVNULL)
        self.bound = True
        try:
            if not wait_until(lambda: os.path.exists("/sys" + self.part_devpath), 2):
                # kernels without partition table parsers: add it with BLKPG
                subprocess.run(["partx", "-a", self.node], check=True, stdin=subprocess.DEVNULL)
            assert wait_until(lambda: os.path.exists("/sys" + self.part_devpath), 10), \
                "partition of loop%d did not appear" % self.idx
            ma, mi = sysfs_devnum("/sys" + self.part_devpath)
            self.part_node = mknod_block("loop%dp1" % self.idx, ma, mi)
        except BaseException:
            self.detach()
            raise

    def detach(self):
        """Unbind (retried while the device is busy) so that the loop device
        can be removed."""
        backing = "/sys%s/loop/backing_file" % self.devpath
        deadline = time.monotonic() + 10
        while self.bound and time.monotonic() < deadline:
            subprocess.run(["losetup", "-d", self.node], check=False, stdin=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            self.bound = wait_until(lambda: not os.path.exists(backing), 1) is False
