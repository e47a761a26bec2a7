# SPDX-License-Identifier: GPL-2.0-or-later
"""`udevadm wait` and `udevadm lock` on real devices (veth pairs, loop
devices, a partitioned loop device, file systems on loop devices) with tudev's
udevd, ours and systemd 252's (Debian's) side by side where both apply.

wait: returns once the awaited device's event has been processed and not
before (the event is held in a rule's PROGRAM until the test opens a gate),
--initialized=no only needs the device to exist, --removed, --settle waits
for the whole queue, --timeout fails with status 1 and systemd's message.

lock: udevd holds off a loop device's change event while `udevadm lock`
runs a command; exit status is the command's; --print names the whole disk of
a partition and orders disks by device number; --timeout (0, bounded,
infinity); --backing on file systems on loop devices (ext4, btrfs).

Argument errors are compared with systemd's messages word for word."""

import fcntl
import os
import re
import shutil
import subprocess
import threading
import time

import pytest

from blocklib import PartitionedLoop, add_loop, sysfs_devnum, write_rules, write_uevent
from tudevlib import QUEUE_FLAG, db_path_for_ifindex, ifindex, run

LOG_PREFIX = re.compile(r"^\[ *\d+\.\d+\] \w+: ", re.M)


def stderr_text(r):
    """stderr without our logger's "[time] level: " prefix."""
    return LOG_PREFIX.sub("", r.stderr)


@pytest.fixture(params=["ours", "systemd"])
def tool(request):
    return request.getfixturevalue("udevadm" if request.param == "ours" else "sd_udevadm")


def start(cmd):
    return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def finish(p, timeout=20):
    """(returncode, stdout, stderr, time of exit) of a started process."""
    out, err = p.communicate(timeout=timeout)
    return p.returncode, out, err, time.monotonic()


def is_event(devpath, action):
    return lambda e: e.devpath == devpath and e.action == action


class Gate:
    """A rule PROGRAM that holds the events of some network interfaces until
    open() creates its file. PROGRAM runs while the rules are applied, before
    the database record is written and the event is broadcast."""

    def __init__(self, name):
        self.path = "/run/tudev-wait-gate-%s" % name
        if os.path.exists(self.path):
            os.unlink(self.path)

    def rule(self, kernel):
        return ('SUBSYSTEM=="net", ACTION=="add", KERNEL=="%s", '
                'PROGRAM="/bin/sh -c \'while [ ! -e %s ]; do sleep 0.05; done\'", '
                'ENV{TUDEV_WAITTEST}="gated"\n' % (kernel, self.path))

    def open(self):
        """Let the events through (the file stays: the PROGRAM polls for it)."""
        open(self.path, "w").close()


# every test interface gets a property, so that it gets a database record
NET_RULE = 'SUBSYSTEM=="net", KERNEL=="w*", ENV{TUDEV_WAITTEST}="1"\n'


def start_daemon(udevd_factory, tmp_path, text):
    rdir = tmp_path / "rules"
    write_rules(rdir, text)
    return udevd_factory("--children-max=4", "--rules-dir=%s" % rdir)


# ---------------------------------------------------------------- wait

def test_wait_returns_once_the_event_is_processed(tool, tmp_path, udevd_factory, net,
                                                  kernel_mon, udev_mon):
    gate = Gate("init")
    start_daemon(udevd_factory, tmp_path, NET_RULE + gate.rule("wia0"))
    a, b = "/devices/virtual/net/wia0", "/devices/virtual/net/wib0"
    try:
        # neither device exists yet; one is named by its class link, one by its devpath
        w = start([tool, "wait", "--timeout=30", "/sys/class/net/wia0", "/sys" + b])
        time.sleep(0.5)
        assert w.poll() is None, w.communicate()
        net.add_veth("wia0", "wib0")
        assert kernel_mon.wait_for(is_event(a, "add"))
        # the peer's event goes through, the gated one is held in its PROGRAM
        assert udev_mon.wait_for(is_event(b, "add"))
        time.sleep(1.0)
        assert w.poll() is None, "wait returned before the event was processed: %r" % (
            w.communicate(),)
        assert os.path.exists("/sys/class/net/wia0")
        assert not os.path.exists(db_path_for_ifindex(ifindex("wia0")))
        assert not udev_mon.matching(is_event(a, "add"))
        gate.open()
        rc, out, err, t_done = finish(w)
        assert rc == 0, err
        ev = udev_mon.wait_for(is_event(a, "add"), timeout=5)
        assert ev and ev[0].props.get("TUDEV_WAITTEST") == "gated"
        # returned once the processed event was broadcast (the monitor's
        # thread may take a moment to stamp it)
        assert ev[0].recv_time <= t_done + 0.25
        assert os.path.exists(db_path_for_ifindex(ifindex("wia0")))
        # initialized: returns at once, also for a /sys path with redundant parts
        t = time.monotonic()
        r = run([tool, "wait", "-t", "5", "/sys//class/net/./wia0/", "/sys" + b])
        assert r.returncode == 0, r.stderr
        assert time.monotonic() - t < 1.5
    finally:
        gate.open()


def test_wait_initialized_no_needs_only_the_device(tool, tmp_path, udevd_factory, net,
                                                   udev_mon):
    gate = Gate("added")
    start_daemon(udevd_factory, tmp_path, NET_RULE + gate.rule("wna0"))
    path = "/devices/virtual/net/wna0"
    try:
        w = start([tool, "wait", "--initialized=no", "-t", "30", "/sys/class/net/wna0"])
        time.sleep(0.5)
        assert w.poll() is None, w.communicate()
        t0 = time.monotonic()
        net.add_veth("wna0", "wnb0")
        rc, out, err, t_done = finish(w)
        assert rc == 0, err
        assert t_done - t0 < 3.0
        # while its event is still held
        assert not udev_mon.matching(is_event(path, "add"))
        assert not os.path.exists(db_path_for_ifindex(ifindex("wna0")))
        # and the default still waits for it
        r = run([tool, "wait", "-t", "1", "/sys/class/net/wna0"])
        assert r.returncode == 1
        assert "Timed out for waiting devices being initialized." in r.stderr
    finally:
        gate.open()
    assert udev_mon.wait_for(is_event(path, "add"), timeout=10)


def test_wait_removed(tool, tmp_path, udevd_factory, net, udev_mon):
    start_daemon(udevd_factory, tmp_path, NET_RULE)
    a, b = net.add_veth("wra0", "wrb0")
    assert len(udev_mon.wait_for(lambda e: e.action == "add" and e.devpath in (a, b),
                                 count=2)) == 2
    w = start([tool, "wait", "--removed", "-t", "30", "/sys/class/net/wra0", "/sys" + b])
    time.sleep(0.7)
    assert w.poll() is None, w.communicate()
    subprocess.run(["ip", "link", "del", "wra0"], check=True, stdin=subprocess.DEVNULL)
    rc, out, err, _ = finish(w)
    assert rc == 0, err
    assert not os.path.exists("/sys/class/net/wrb0")
    # gone already: at once
    r = run([tool, "wait", "--removed", "-t", "5", "/sys/class/net/wra0"])
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("args,path,state", [
    ([], "/sys/class/net/nosuchdev0", "initialized"),
    # exists, but no event of it was processed: no database record
    ([], "/sys/class/net/lo", "initialized"),
    (["--initialized=no"], "/sys/class/net/nosuchdev0", "added"),
    (["--initialized=false", "--removed"], "/sys/class/net/lo", "removed"),
])
def test_wait_timeout(tool, udevd, args, path, state):
    t = time.monotonic()
    r = run([tool, "wait", "--timeout=1"] + args + [path])
    took = time.monotonic() - t
    assert r.returncode == 1
    assert stderr_text(r) == "Timed out for waiting devices being %s.\n" % state
    assert 0.9 <= took < 4.0, took


def test_wait_timeout_zero_and_existing_device(tool, udevd):
    r = run([tool, "wait", "-t", "0", "/sys/class/net/nosuchdev0"])
    assert r.returncode == 1
    assert "Timed out for waiting devices being initialized." in r.stderr
    r = run([tool, "wait", "-t", "0", "--initialized=no", "/sys/class/net/lo"])
    assert r.returncode == 0, r.stderr


def test_wait_settle_waits_for_the_queue(tool, tmp_path, udevd_factory, net, udev_mon):
    gate = Gate("settle")
    start_daemon(udevd_factory, tmp_path, NET_RULE + gate.rule("wsa0"))
    try:
        a, b = net.add_veth("wsa0", "wsb0")
        assert udev_mon.wait_for(is_event(b, "add"))
        # wsb0 is initialized, wsa0's event still queued
        r = run([tool, "wait", "-t", "5", "/sys/class/net/wsb0"])
        assert r.returncode == 0, r.stderr
        assert os.path.exists(QUEUE_FLAG)
        w = start([tool, "wait", "--settle", "-t", "30", "/sys/class/net/wsb0"])
        time.sleep(1.0)
        assert w.poll() is None, w.communicate()
        gate.open()
        rc, out, err, _ = finish(w)
        assert rc == 0, err
        assert not os.path.exists(QUEUE_FLAG)
        assert udev_mon.wait_for(is_event(a, "add"), timeout=5)
    finally:
        gate.open()


@pytest.mark.parametrize("args", [
    ["wait"],
    ["wait", "--settle"],
    ["wait", "/sys/../dev/null"],
    ["wait", "/tmp/foo"],
    ["wait", "sys/class/net/lo"],
    ["wait", "--initialized=maybe", "/sys/class/net/lo"],
    ["wait", "--timeout=soon", "/sys/class/net/lo"],
    ["wait", "--bogus", "/sys/class/net/lo"],
    ["lock"],
    ["lock", "true"],
    ["lock", "--print"],
    ["lock", "-d", "/dev/null"],
    ["lock", "-p", "-d", "/dev/null", "extra"],
    ["lock", "-d", "/dev/null", "true"],
    ["lock", "-p", "-d", "/dev/nosuchnode"],
    ["lock", "-p", "-b", "/dev/null"],
    ["lock", "-p", "-b", "/run"],
    ["lock", "-p", "-b", "/run/nosuchfile"],
    ["lock", "-p", "-d", "null"],
    ["lock", "-t", "soon", "-d", "/dev/null", "true"],
    ["lock", "--bogus", "-d", "/dev/null", "true"],
])
def test_errors_like_systemd(udevadm, sd_udevadm, args):
    # cwd /dev: a relative path is made absolute against it
    r = run([udevadm] + args, cwd="/dev")
    ref = run([sd_udevadm] + args, cwd="/dev")
    assert ref.returncode == 1, ref.stderr
    assert (r.returncode, r.stdout) == (1, "")
    assert stderr_text(r) == ref.stderr
    assert r.stderr.strip()


def test_help_lists_both(udevadm):
    r = run([udevadm, "--help"])
    assert r.returncode == 0
    assert "not implemented" not in r.stdout
    for verb in ("wait", "lock"):
        assert re.search(r"^  %s +\S" % verb, r.stdout, re.M), r.stdout
        r2 = run([udevadm, verb, "--help"])
        assert r2.returncode == 0 and ("%s " % verb) in r2.stdout, r2.stdout
        r2 = run([udevadm, verb, "--version"])
        assert (r2.returncode, r2.stdout) == (0, "252\n")


# ---------------------------------------------------------------- lock

def lock_held(node):
    """Whether another process holds LOCK_EX on node (probing with a shared
    lock that is dropped again at once)."""
    fd = os.open(node, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def wait_locked(node, proc, timeout=10):
    deadline = time.monotonic() + timeout
    while not lock_held(node):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no lock on %s" % node
        time.sleep(0.02)


def block_link(node):
    """/dev/block/M:m -> node, as udevd makes it (systemd's lock needs it)."""
    st = os.stat(node)
    ma, mi = os.major(st.st_rdev), os.minor(st.st_rdev)
    os.makedirs("/dev/block", exist_ok=True)
    link = "/dev/block/%d:%d" % (ma, mi)
    if not os.path.lexists(link):
        os.symlink("../" + os.path.basename(node), link)
    return link


LOCK_RULES = 'SUBSYSTEM=="block", KERNEL=="loop%d", ENV{TUDEV_LOCKTEST}="1"\n'


def test_lock_holds_off_the_change_event(tool, tmp_path, udevd_factory, loops, udev_mon):
    idx, path, node = add_loop(loops)
    d = start_daemon(udevd_factory, tmp_path, LOCK_RULES % idx)
    mark = udev_mon.mark()
    log_at = d.log_size()
    t0 = time.monotonic()
    p = start([tool, "lock", "--device=" + node, "sleep", "2"])
    wait_locked(node, p)
    write_uevent(path, "change")
    # not processed while the command runs
    assert udev_mon.quiet(is_event(path, "change"), 1.0, since=mark) == []
    assert p.poll() is None
    assert "locked by another process, requeueing" in d.log_since(log_at)
    rc, out, err, t_exit = finish(p)
    assert rc == 0, err
    assert t_exit - t0 >= 1.9
    ev = udev_mon.wait_for(is_event(path, "change"), since=mark, timeout=10)
    assert ev, "change event not processed after the lock was released"
    assert ev[0].recv_time >= t_exit - 0.3
    assert ev[0].props.get("TUDEV_LOCKTEST") == "1"
    assert not lock_held(node)


def test_lock_on_a_partition_locks_the_disk(udevadm, tmp_path, udevd_factory, loops,
                                            udev_mon):
    try:
        pl = PartitionedLoop(loops, tmp_path)
    except (OSError, AssertionError, subprocess.CalledProcessError) as e:
        pytest.skip("no partitioned loop device: %s" % e)
    try:
        rules = 'SUBSYSTEM=="block", KERNEL=="loop%dp1", ENV{TUDEV_LOCKTEST}="1"\n' % pl.idx
        start_daemon(udevd_factory, tmp_path, rules)
        mark = udev_mon.mark()
        p = start([udevadm, "lock", "-d", pl.part_node, "sleep", "1.5"])
        wait_locked(pl.node, p)
        assert not lock_held(pl.part_node)  # the disk's node, not the partition's
        write_uevent(pl.part_devpath, "change")
        assert udev_mon.quiet(is_event(pl.part_devpath, "change"), 0.8, since=mark) == []
        rc, out, err, t_exit = finish(p)
        assert rc == 0, err
        ev = udev_mon.wait_for(is_event(pl.part_devpath, "change"), since=mark, timeout=10)
        assert ev and ev[0].recv_time >= t_exit - 0.3
    finally:
        pl.detach()


@pytest.mark.parametrize("cmd,status", [
    (["true"], 0),
    (["false"], 1),
    (["sh", "-c", "exit 7"], 7),
    (["sh", "-c", "exit 255"], 255),
    (["sh", "-c", "kill -9 $$"], 1),
    (["/nonexistent/command"], 1),
    (["nonexistent-command-in-path"], 1),
])
def test_lock_exit_status_is_the_commands(udevadm, sd_udevadm, loops, cmd, status):
    idx, path, node = add_loop(loops)
    r = run([udevadm, "lock", "-d", node] + cmd)
    assert r.returncode == status, r.stderr
    # systemd 252 documents the same, but its main() turns every result >= 0
    # into status 0 (later versions pass it on): only a command killed by a
    # signal (an error inside udevadm) gives 1 there
    ref = run([sd_udevadm, "lock", "-d", node] + cmd)
    assert ref.returncode == (1 if "kill" in cmd[-1] else 0), ref.stderr
    assert stderr_text(r) == ref.stderr
    if "nonexistent" in cmd[0]:
        assert "Failed to execute %s: No such file or directory" % cmd[0] in r.stderr


def test_lock_command_environment(tool, loops):
    idx, path, node = add_loop(loops)
    # the command's own options are not ours; it gets no lock descriptor
    r = run([tool, "lock", "-d", node, "sh", "-c",
             'echo "$@"; for f in /proc/$$/fd/*; do readlink "$f"; done; true', "sh", "-d",
             "--print",
             "-t", "0"])
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "-d --print -t 0"
    assert node not in lines[1:], lines
    # lock held while the command runs, dropped after
    r = run([tool, "lock", "-d", node, "sh", "-c",
             "flock -n -s %s true && echo free || echo locked" % node])
    assert (r.returncode, r.stdout) == (0, "locked\n"), r.stderr
    assert not lock_held(node)


def test_lock_print_whole_disks(udevadm, sd_udevadm, loops, tmp_path):
    try:
        pl = PartitionedLoop(loops, tmp_path)
    except (OSError, AssertionError, subprocess.CalledProcessError) as e:
        pytest.skip("no partitioned loop device: %s" % e)
    try:
        idx2, path2, node2 = add_loop(loops)
        link = str(tmp_path / "part-link")
        os.symlink(pl.part_node, link)
        order = sorted([pl.node, node2], key=lambda n: (os.major(os.stat(n).st_rdev),
                                                         os.minor(os.stat(n).st_rdev)))
        cases = [
            (["-d", pl.part_node], [pl.node]),
            (["-d", link], [pl.node]),
            (["-b", pl.part_node], [pl.node]),  # a node: as --device
            (["-d", pl.part_node, "-d", pl.node, "--backing", pl.part_node], [pl.node]),
            (["-d", node2, "-d", pl.part_node], order),
            (["-d", order[0], "-d", order[1]], order),
            (["-d", order[1], "-d", order[0]], order),
        ]
        # ours, without /dev/block links (no daemon made them): the kernel's names
        for f in ("/dev/block/%d:%d" % sysfs_devnum("/sys" + pl.devpath),
                  "/dev/block/%d:%d" % sysfs_devnum("/sys" + path2)):
            if os.path.lexists(f):
                os.unlink(f)
        for args, want in cases:
            r = run([udevadm, "lock", "--print"] + args)
            assert (r.returncode, r.stdout) == (0, "".join(n + "\n" for n in want)), \
                (args, r.stderr)
        # with the links both give the same
        block_link(pl.node)
        block_link(node2)
        for args, want in cases:
            for tool_ in (udevadm, sd_udevadm):
                r = run([tool_, "lock", "-p"] + args)
                assert (r.returncode, r.stdout) == (0, "".join(n + "\n" for n in want)), \
                    (tool_, args, r.stderr)
    finally:
        pl.detach()


def test_lock_timeout(tool, loops):
    idx, path, node = add_loop(loops)
    fd = os.open(node, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        r = run([tool, "lock", "-t", "0", "-d", node, "echo", "ran"])
        assert (r.returncode, r.stdout) == (1, "")
        assert stderr_text(r) == "Device '%s' is currently locked.\n" % node

        t = time.monotonic()
        r = run([tool, "lock", "--timeout=1", "-d", node, "echo", "ran"])
        took = time.monotonic() - t
        assert (r.returncode, r.stdout) == (1, ""), r.stderr
        assert "Timeout reached." in r.stderr
        assert 0.9 <= took < 4.0, took
        assert lock_held(node)  # ours, still

        # released while waiting: bounded and unbounded waits go on
        for timeout in (["--timeout=20"], []):
            threading.Timer(0.7, lambda: fcntl.flock(fd, fcntl.LOCK_UN)).start()
            t = time.monotonic()
            r = run([tool, "lock"] + timeout + ["-d", node, "echo", "ran"])
            assert (r.returncode, r.stdout) == (0, "ran\n"), r.stderr
            assert time.monotonic() - t >= 0.6
            assert "Device '%s' is currently locked, waiting" % node in r.stderr
            fcntl.flock(fd, fcntl.LOCK_EX)
    finally:
        os.close(fd)


def test_lock_order_prevents_deadlocks(udevadm, loops):
    """Two lockers naming the same disks in opposite orders both finish."""
    nodes = [add_loop(loops)[2] for _ in range(2)]
    for _ in range(5):
        procs = [start([udevadm, "lock", "-d", nodes[0], "-d", nodes[1], "sleep", "0.2"]),
                 start([udevadm, "lock", "-d", nodes[1], "-d", nodes[0], "sleep", "0.2"])]
        for p in procs:
            rc, out, err, _ = finish(p, timeout=20)
            assert rc == 0, err


@pytest.mark.parametrize("fstype", ["ext4", "btrfs"])
def test_lock_backing_file_system_on_a_loop_device(udevadm, sd_udevadm, loops, tmp_path,
                                                   fstype):
    mkfs = shutil.which("mkfs." + fstype)
    if not mkfs:
        pytest.skip("mkfs.%s not installed" % fstype)
    img = str(tmp_path / "fs.img")
    with open(img, "wb") as f:
        f.truncate(128 << 20)
    r = subprocess.run([mkfs, "-q", "-F" if fstype == "ext4" else "-f", img],
                       capture_output=True, stdin=subprocess.DEVNULL)
    if r.returncode != 0:
        pytest.skip("mkfs.%s failed: %s" % (fstype, r.stderr))
    idx, path, node = add_loop(loops)
    subprocess.run(["losetup", node, img], check=True, stdin=subprocess.DEVNULL)
    mnt = str(tmp_path / "mnt")
    os.mkdir(mnt)
    try:
        r = subprocess.run(["mount", "-t", fstype, node, mnt], capture_output=True,
                           stdin=subprocess.DEVNULL)
        if r.returncode != 0:
            pytest.skip("cannot mount %s: %s" % (fstype, r.stderr))
        try:
            f = os.path.join(mnt, "file")
            open(f, "w").close()
            if fstype == "btrfs":
                assert os.major(os.stat(f).st_dev) == 0  # the case needing the ioctls
            block_link(node)
            for arg in (f, mnt):
                for tool_ in (udevadm, sd_udevadm):
                    r = run([tool_, "lock", "-p", "-b", arg])
                    assert (r.returncode, r.stdout) == (0, node + "\n"), (tool_, r.stderr)
                # --device wants a node
                r = run([udevadm, "lock", "-p", "-d", arg])
                assert r.returncode == 1
                assert ("Failed to find whole block device for '%s': Block device required"
                        % arg) in r.stderr
            # and the lock taken through the file system holds udevd's lock off too
            p = start([udevadm, "lock", "-b", f, "sleep", "0.5"])
            wait_locked(node, p)
            assert finish(p)[0] == 0
        finally:
            subprocess.run(["umount", mnt], check=False, stdin=subprocess.DEVNULL)
            if fstype == "btrfs" and shutil.which("btrfs"):
                subprocess.run(["btrfs", "device", "scan", "--forget", node],
                               capture_output=True, stdin=subprocess.DEVNULL)
    finally:
        subprocess.run(["losetup", "-d", node], check=False, stdin=subprocess.DEVNULL)
