# SPDX-License-Identifier: GPL-2.0-or-later
"""The blkid builtin on real images, compared with systemd 252's.

Images are made by the test (mkfs.ext4, mkfs.vfat, mkswap, GPT and MBR tables
with partition names via sfdisk) and attached to loop devices created with
LOOP_CTL_ADD at random high indexes (partition scanning on). Their nodes are
bind-mounted from a private devtmpfs mount into the sandbox's /dev (a node on
tmpfs cannot be opened); partitions are added with `partx -a` where the
kernel has no partition table parsers (as on the development VM).
`udevadm test-builtin blkid ...` of tudev and of systemd 252 run over each
disk and partition, with --offset, --noraid and --hint variants; outputs must
be identical. Truncated, corrupt and ambiguous
images must give the same result without crashing or hanging (timeouts). Every
loop device added is removed again.
"""

import os
import shutil
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "builtins"))

import sd_compare  # noqa: E402
from tudevlib import LoopDevices  # noqa: E402

MIB = 1024 * 1024
TOOLS = ("mkfs.ext4", "mkfs.vfat", "mkswap", "sfdisk", "losetup", "partx")

# type GUIDs (sfdisk accepts them verbatim)
GPT_ESP = "C12A7328-F81F-11D2-BA4B-00A0C93EC93B"
GPT_ROOT_X86_64 = "4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709"
GPT_LINUX = "0FC63DAF-8483-4772-8E79-3D69D8477DE4"

# Expected differences: {(command, devpath-suffix): reason}. Empty: everything matches.
EXPECTED_DIFFS = {}


def sh(*args, **kw):
    return subprocess.run(list(args), check=True, capture_output=True, **kw)


class LoopNodes:
    """Loop devices with their nodes (and their partitions') visible in the
    sandbox's /dev, bind-mounted from a private devtmpfs mount."""

    def __init__(self, tmp):
        self.loops = LoopDevices()
        self.dt = os.path.join("/run", "tudev-devtmpfs-%d" % os.getpid())
        os.makedirs(self.dt, exist_ok=True)
        sh("mount", "-t", "devtmpfs", "devtmpfs", self.dt)
        self.bound = []
        self.attached = []

    def bind(self, name):
        dst = "/dev/" + name
        if dst in self.bound:
            return dst
        open(dst, "a").close()
        sh("mount", "--bind", os.path.join(self.dt, name), dst)
        self.bound.append(dst)
        return dst

    def attach(self, image):
        """A new loop device backed by `image` (partitions scanned); returns
        (name, [partition names])."""
        idx = self.loops.add()
        name = "loop%d" % idx
        node = self.bind(name)
        sh("losetup", "-P", node, image)
        self.attached.append(node)
        # This VM's kernel has no partition table parsers: add the partitions
        # libblkid finds with BLKPG (no-op when the kernel already did).
        subprocess.run(["partx", "-a", node], capture_output=True)
        sysdir = "/sys/class/block/" + name
        parts = sorted(p for p in os.listdir(sysdir + "/") if p.startswith(name + "p"))
        for p in parts:
            self.bind(p)
        return name, parts

    def cleanup(self):
        for node in self.attached:
            subprocess.run(["losetup", "-d", node], capture_output=True)
        self.loops.remove_all()
        for dst in reversed(self.bound):
            subprocess.run(["umount", dst], capture_output=True)
            try:
                os.unlink(dst)
            except OSError:
                pass
        subprocess.run(["umount", self.dt], capture_output=True)
        try:
            os.rmdir(self.dt)
        except OSError:
            pass


def image(path, size):
    with open(path, "wb") as f:
        f.truncate(size)
    return path


def make_images(d):
    imgs = {}
    # ext4 with a label containing a space and a fixed UUID
    p = image(os.path.join(d, "ext4.img"), 16 * MIB)
    sh("mkfs.ext4", "-q", "-F", "-L", "root fs", "-U", "3f2b9b7c-1d41-4cf1-9d4a-5e8f1a2b3c4d", p)
    imgs["ext4"] = p
    # vfat with a label and volume id
    p = image(os.path.join(d, "vfat.img"), 8 * MIB)
    sh("mkfs.vfat", "-n", "EFI BOOT", "-i", "1234ABCD", p)
    imgs["vfat"] = p
    # swap with label and UUID
    p = image(os.path.join(d, "swap.img"), 4 * MIB)
    sh("mkswap", "-L", "sw\u00e4p", "-U", "11111111-2222-3333-4444-555555555555", p)
    imgs["swap"] = p
    # GPT: ESP (vfat inside), root with a version label, data with odd name
    p = image(os.path.join(d, "gpt.img"), 40 * MIB)
    table = ("label: gpt\nlabel-id: 9A3B5C7D-1E2F-4A5B-8C9D-0E1F2A3B4C5D\n"
             "start=2048, size=16384, type=%s, name=\"EFI System\", "
             "uuid=0A1B2C3D-0000-4000-8000-000000000001\n"
             "size=16384, type=%s, name=\"root-1.2\", uuid=0A1B2C3D-0000-4000-8000-000000000002, "
             "attrs=\"GUID:59\"\n"
             "size=16384, type=%s, name=\"root-1.10\", "
             "uuid=0A1B2C3D-0000-4000-8000-000000000003\n"
             "type=%s, name=\"data \u00e4/1 \\\\x\", uuid=0A1B2C3D-0000-4000-8000-000000000004\n" %
             (GPT_ESP, GPT_ROOT_X86_64, GPT_ROOT_X86_64, GPT_LINUX))
    sh("sfdisk", "-q", p, input=table.encode())
    imgs["gpt"] = p
    # MBR with two partitions (one extended with a logical one)
    p = image(os.path.join(d, "mbr.img"), 24 * MIB)
    sh("sfdisk", "-q", p, input=b"label: dos\nlabel-id: 0x1234abcd\nstart=2048, size=8192, "
                                b"type=83, bootable\nsize=16384, type=5\nsize=4096, type=82\n")
    imgs["mbr"] = p
    # a "floppy": 1 MiB whole disk with a partition table (partitions-only path)
    p = image(os.path.join(d, "floppy.img"), 1 * MIB)
    sh("sfdisk", "-q", p, input=b"label: dos\nstart=64, type=c\n")
    imgs["floppy"] = p
    # ext4 at 1 MiB into the image (for --offset)
    p = image(os.path.join(d, "offset.img"), 17 * MIB)
    fs = image(os.path.join(d, "inner.img"), 16 * MIB)
    sh("mkfs.ext4", "-q", "-F", "-L", "inner", "-U", "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", fs)
    with open(fs, "rb") as src, open(p, "r+b") as dst:
        dst.seek(MIB)
        dst.write(src.read())
    os.unlink(fs)
    imgs["offset"] = p
    # truncated: ext4 cut to 64 KiB, and a GPT whose header and entries are cut
    p = image(os.path.join(d, "trunc-ext4.img"), 16 * MIB)
    sh("mkfs.ext4", "-q", "-F", "-L", "cut", p)
    os.truncate(p, 64 * 1024)
    imgs["trunc-ext4"] = p
    p = os.path.join(d, "trunc-gpt.img")
    shutil.copy(imgs["gpt"], p)
    os.truncate(p, 1536)
    imgs["trunc-gpt"] = p
    # corrupt: GPT header with garbage entries and a wrong CRC, random data
    p = os.path.join(d, "corrupt-gpt.img")
    shutil.copy(imgs["gpt"], p)
    with open(p, "r+b") as f:
        f.seek(512 + 80)
        f.write(b"\xff\xff\xff\x7f")  # number of entries: absurd
        f.seek(1024)
        f.write(os.urandom(4096))
    imgs["corrupt-gpt"] = p
    p = image(os.path.join(d, "random.img"), 2 * MIB)
    with open(p, "r+b") as f:
        f.write(os.urandom(2 * MIB))
    imgs["random"] = p
    # ambiguous: an ext4 superblock and a FAT boot sector (libblkid's safe
    # probe refuses to choose: the builtin fails)
    p = image(os.path.join(d, "ambig.img"), 16 * MIB)
    sh("mkfs.ext4", "-q", "-F", p)
    with open(imgs["vfat"], "rb") as src, open(p, "r+b") as dst:
        dst.write(src.read(512))
    imgs["ambig"] = p
    # empty (all zero)
    imgs["zero"] = image(os.path.join(d, "zero.img"), 4 * MIB)
    return imgs


@pytest.fixture(scope="module")
def blkid_env(tmp_path_factory):
    missing = [t for t in TOOLS if not shutil.which(t)]
    if missing:
        pytest.skip("missing tools: %s (tools/install-deps)" % " ".join(missing))
    d = str(tmp_path_factory.mktemp("blkid"))
    imgs = make_images(d)
    nodes = LoopNodes(d)
    try:
        attached = {}
        for key, img in imgs.items():
            attached[key] = nodes.attach(img)
        # a filesystem inside the GPT's ESP
        esp = "/dev/" + attached["gpt"][1][0]
        sh("mkfs.vfat", "-n", "ESP", "-i", "0badcafe", esp)
        yield attached
    finally:
        nodes.cleanup()


def cases_for(attached):
    cases = []
    for key, (name, parts) in attached.items():
        cases.append(("blkid", "/sys/class/block/" + name))
        for p in parts:
            cases.append(("blkid", "/sys/class/block/" + p))
    name = attached["offset"][0]
    cases += [("blkid --offset=1048576", "/sys/class/block/" + name),
              ("blkid -o 1048576 --noraid", "/sys/class/block/" + name),
              ("blkid --offset=0x100000 -R", "/sys/class/block/" + name),
              ("blkid --offset=-5", "/sys/class/block/" + name),
              ("blkid --offset=abc", "/sys/class/block/" + name),
              ("blkid --offset=999999999999", "/sys/class/block/" + name)]
    name = attached["ext4"][0]
    cases += [("blkid --noraid", "/sys/class/block/" + name),
              ("blkid --hint=session_offset=0", "/sys/class/block/" + name),
              ("blkid -H session_offset=1048576", "/sys/class/block/" + name),
              ("blkid --bogus-option", "/sys/class/block/" + name),
              ("blkid --hint=", "/sys/class/block/" + name)]
    # a device without a node (no DEVNAME) and one whose node is missing
    cases += [("blkid", "/sys/devices/virtual/net/lo"),
              ("blkid", "/sys/class/block/" + attached["zero"][0] + "/queue")]
    return cases


def test_blkid_matches_systemd(blkid_env, sd_udevadm, udevadm):
    cases = cases_for(blkid_env)
    failures, ours, ref = sd_compare.compare(cases, expected_diffs=EXPECTED_DIFFS, timeout=300)
    assert not failures, "\n\n".join(failures)
    # sanity: the interesting values are really there
    out = dict(zip(cases, (o[1] for o in ours)))
    ext4 = out[("blkid", "/sys/class/block/" + blkid_env["ext4"][0])]
    assert "ID_FS_LABEL=root_fs\n" in ext4 and "ID_FS_LABEL_ENC=root\\x20fs\n" in ext4
    gpt = out[("blkid", "/sys/class/block/" + blkid_env["gpt"][0])]
    assert "ID_PART_TABLE_TYPE=gpt\n" in gpt
    p4 = out[("blkid", "/sys/class/block/" + blkid_env["gpt"][1][3])]
    assert "ID_PART_ENTRY_NAME=data\\x20\xe4\\x2f1\\x20\\x5cx\n" in p4 or \
        "ID_PART_ENTRY_NAME=" in p4


def test_blkid_no_crash_on_bad_images(blkid_env, udevadm):
    """Truncated/corrupt images: our udevadm exits 0/1 (never a signal) quickly."""
    for key in ("trunc-ext4", "trunc-gpt", "corrupt-gpt", "random", "ambig", "zero"):
        name, parts = blkid_env[key]
        for dev in [name] + parts:
            r = subprocess.run([sd_compare.our_udevadm(), "test-builtin", "blkid",
                                "/sys/class/block/" + dev],
                               capture_output=True, timeout=30,
                               env=dict(os.environ, SYSTEMD_LOG_LEVEL="debug"))
            assert r.returncode in (0, 1), (key, dev, r.returncode, r.stderr[-2000:])
            assert b"Sanitizer" not in r.stderr and b"runtime error" not in r.stderr, \
                r.stderr[-4000:]
