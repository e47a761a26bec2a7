# SPDX-License-Identifier: GPL-2.0-or-later
"""Loop devices and mounts for the integration tests and the tools that run
inside tests/sandbox (tools/bench, tools/differential): one copy of the
LOOP_CTL_ADD/LOOP_CTL_REMOVE calls, the stand-in for devtmpfs' nodes, the
search for free indexes and the mount(8) call.

Import it from a test module with tests/lib on sys.path (stormlib and
tudevlib put it there), from a tool with

    sys.path.insert(0, os.path.join(REPO, "tests", "lib"))

Everything here acts on the kernel's loop devices, which every namespace
shares: callers pick their indexes from a range of their own (tests:
2000..61000, tools/differential: 61000..99000, tools/bench: 100000 and up)
and remove what they added. Nothing touches the host's /dev: node making is
for the sandbox's private tmpfs /dev."""

import errno
import fcntl
import os
import random
import stat
import subprocess
import time

LOOP_CTL_ADD = 0x4C80
LOOP_CTL_REMOVE = 0x4C81
LOOP_CONTROL = "/dev/loop-control"
LOOP_MAJOR = 7
SYS_LOOP = "/sys/devices/virtual/block/loop%d"
INDEX_MAX = (1 << 20) - 1               # MINORBITS


def loop_exists(idx):
    """True if the kernel has loop device number idx."""
    return os.path.exists(SYS_LOOP % idx)


def part_shift():
    """Minor of loop N is N << shift (loop.max_part); None if unknown."""
    try:
        with open("/sys/module/loop/parameters/max_part") as f:
            max_part = int(f.read())
    except (OSError, ValueError):
        return None
    return max_part.bit_length() if max_part > 0 else 0


def free_base(count, lo, hi, step=1, tries=200):
    """A random base in [lo, hi - count] (a multiple of step) such that the
    `count` indexes from it are all free now; RuntimeError if `tries`
    draws found none. Free now only: callers still handle EEXIST."""
    if count < 1 or hi - lo < count:
        raise ValueError("no room for %d loop indexes in %d..%d" % (count, lo, hi))
    for _ in range(tries):
        base = random.randrange(lo, hi - count + 1, step)
        if not any(loop_exists(i) for i in range(base, base + count)):
            return base
    raise RuntimeError("no free range of %d loop indexes in %d..%d" % (count, lo, hi))


def add(idx, fd=None):
    """LOOP_CTL_ADD of number idx; returns the kernel's number. OSError as
    the kernel says (EEXIST: taken). fd: an open /dev/loop-control to use."""
    own = fd is None
    if own:
        fd = os.open(LOOP_CONTROL, os.O_RDWR | os.O_CLOEXEC)
    try:
        return fcntl.ioctl(fd, LOOP_CTL_ADD, idx)
    finally:
        if own:
            os.close(fd)


def remove(idx, timeout=30.0, interval=0.05, fd=None):
    """LOOP_CTL_REMOVE of number idx, retrying while the device is busy
    (EBUSY) for up to `timeout` seconds. Returns when it is gone (ENODEV
    counts as gone); OSError otherwise (EBUSY once the time is up)."""
    own = fd is None
    if own:
        fd = os.open(LOOP_CONTROL, os.O_RDWR | os.O_CLOEXEC)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.ioctl(fd, LOOP_CTL_REMOVE, idx)
                return
            except OSError as e:
                if e.errno == errno.ENODEV:
                    return
                if e.errno == errno.EBUSY and time.monotonic() < deadline:
                    time.sleep(interval)
                    continue
                raise
    finally:
        if own:
            os.close(fd)


def make_node(name, major, minor, dev="/dev", replace=False):
    """A block node dev/name (mode 0600), as devtmpfs would make it, in the
    sandbox's tmpfs /dev. An existing one is kept (replace=False) or
    replaced. Returns (path, True if this call made it)."""
    path = os.path.join(dev, name)
    if os.path.lexists(path):
        if not replace:
            return path, False
        os.unlink(path)
    os.mknod(path, 0o600 | stat.S_IFBLK, os.makedev(major, minor))
    return path, True


def make_loop_node(idx, shift=0, dev="/dev", replace=False):
    """make_node() of loopN with minor N << shift (see part_shift())."""
    return make_node("loop%d" % idx, LOOP_MAJOR, idx << shift, dev, replace)


def unlink_quiet(path):
    """Remove path if it is there; True if it was."""
    try:
        os.unlink(path)
        return True
    except FileNotFoundError:
        return False


def run(cmd, **kw):
    """subprocess.run with stdin from /dev/null and check=True unless told."""
    kw.setdefault("stdin", subprocess.DEVNULL)
    kw.setdefault("check", True)
    return subprocess.run(cmd, **kw)


def mount(*args):
    """mount(8) with these arguments; CalledProcessError if it fails."""
    run(["mount"] + list(args))
