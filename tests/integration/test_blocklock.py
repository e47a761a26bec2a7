# SPDX-License-Identifier: GPL-2.0-or-later
"""Block device locking (tudev-rules(7), systemd.io/BLOCK_DEVICE_LOCKING)
with real loop devices: while another process holds flock(LOCK_EX) on the
whole disk, events of the disk and of its partitions are not processed but
requeued (retried every 200 ms); they still block later events of the device;
other devices go on; once the lock is released the events are processed in
order. Remove events take no lock."""

import fcntl
import os
import signal
import subprocess
import time
import uuid

import pytest

from blocklib import PartitionedLoop, add_loop, write_rules, write_uevent
from tudevlib import CTRL_EXIT, ctrl_message, ctrl_request, wait_until

RULES = 'SUBSYSTEM=="block", KERNEL=="loop%d|loop%dp*|loop%d", ENV{TUDEV_LOCKTEST}="1"\n'


def start(udevd_factory, rules_dir):
    return udevd_factory("--children-max=4", "--rules-dir=%s" % rules_dir)


def is_event(devpath, action):
    return lambda e: e.devpath == devpath and e.action == action


def wait_udev(udev_mon, devpath, action, since, timeout=20, count=1):
    got = udev_mon.wait_for(is_event(devpath, action), since=since, timeout=timeout, count=count)
    assert len(got) >= count, "no udev %s event for %s" % (action, devpath)
    return got


class Locker:
    """flock(1) holding LOCK_EX on a node in a child process until stopped."""

    def __init__(self, node):
        # --no-fork: the lock holder is the process we kill (else the forked
        # command would keep the lock)
        self.proc = subprocess.Popen(["flock", "--no-fork", "-x", node, "sh", "-c",
                                      "echo locked; exec sleep 60"],
                                     stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
        assert self.proc.stdout.readline().strip() == b"locked"

    def release(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.proc.stdout.close()


def test_locked_disk_event_waits_for_release(tmp_path, udevd_factory, loops, udev_mon):
    rdir = tmp_path / "rules"
    idx, path, node = add_loop(loops)
    idx2, path2, _ = add_loop(loops)
    write_rules(rdir, RULES % (idx, idx, idx2))
    d = start(udevd_factory, rdir)

    locker = Locker(node)
    try:
        mark = udev_mon.mark()
        log_at = d.log_size()
        # each change with its own SYNTH_UUID, which storm damping never
        # merges (udevd(8)): the second must wait for the first
        write_uevent(path, "change %s" % uuid.uuid4())
        write_uevent(path, "change %s" % uuid.uuid4())  # blocked by the first one
        # another device is not held up
        write_uevent(path2, "change")
        assert wait_udev(udev_mon, path2, "change", mark)[0].props["TUDEV_LOCKTEST"] == "1"
        assert udev_mon.quiet(is_event(path, "change"), 1.0, since=mark) == []
        log = d.log_since(log_at)
        assert "locked by another process, requeueing" in log
        # retried several times meanwhile (every 200 ms), never processed
        assert log.count("locked by another process, requeueing") >= 3
        assert os.path.exists("/run/udev/queue")
    finally:
        released = time.monotonic()
        locker.release()
    got = wait_udev(udev_mon, path, "change", mark, count=2, timeout=10)
    assert time.monotonic() - released < 5
    assert got[0].seqnum < got[1].seqnum
    assert all(e.props.get("TUDEV_LOCKTEST") == "1" for e in got)
    assert all("UDEV_WORKER_FAILED" not in e.props for e in got)


def test_shared_lock_does_not_block(tmp_path, udevd_factory, loops, udev_mon):
    """Only LOCK_EX makes udev wait: readers holding LOCK_SH do not."""
    rdir = tmp_path / "rules"
    idx, path, node = add_loop(loops)
    write_rules(rdir, RULES % (idx, idx, idx))
    start(udevd_factory, rdir)
    fd = os.open(node, os.O_RDONLY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        mark = udev_mon.mark()
        write_uevent(path, "change")
        wait_udev(udev_mon, path, "change", mark, timeout=10)
    finally:
        os.close(fd)


def test_partition_event_locks_the_whole_disk(tmp_path, udevd_factory, loops, udev_mon):
    rdir = tmp_path / "rules"
    try:
        pl = PartitionedLoop(loops, tmp_path)
    except (OSError, AssertionError, subprocess.CalledProcessError) as e:
        pytest.skip("no partitioned loop device: %s" % e)
    try:
        write_rules(rdir, RULES % (pl.idx, pl.idx, pl.idx))
        d = start(udevd_factory, rdir)
        locker = Locker(pl.node)
        try:
            mark = udev_mon.mark()
            log_at = d.log_size()
            write_uevent(pl.part_devpath, "change")
            assert udev_mon.quiet(is_event(pl.part_devpath, "change"), 1.0, since=mark) == []
            assert "locked by another process" in d.log_since(log_at)
        finally:
            locker.release()
        ev = wait_udev(udev_mon, pl.part_devpath, "change", mark, timeout=10)[0]
        assert ev.props.get("TUDEV_LOCKTEST") == "1"
    finally:
        pl.detach()


def test_remove_is_not_locked(tmp_path, udevd_factory, loops, udev_mon):
    """A remove event never waits for the lock (a synthetic one: the device
    cannot go away while the lock holder has it open)."""
    rdir = tmp_path / "rules"
    idx, path, node = add_loop(loops)
    write_rules(rdir, RULES % (idx, idx, idx))
    start(udevd_factory, rdir)
    locker = Locker(node)
    try:
        mark = udev_mon.mark()
        write_uevent(path, "remove")
        wait_udev(udev_mon, path, "remove", mark, timeout=10)
        write_uevent(path, "add")
        assert udev_mon.quiet(is_event(path, "add"), 1.0, since=mark) == []
    finally:
        locker.release()
    wait_udev(udev_mon, path, "add", mark, timeout=10)


@pytest.mark.parametrize("how", ["sigterm", "control-exit"])
def test_exit_while_waiting_for_a_lock(tmp_path, udevd_factory, loops, udev_mon, how):
    """An event waiting for a lock does not hold up the exit: SIGTERM drops it
    with the other queued events, a control exit (which drains the queue)
    gives it up at its next retry."""
    rdir = tmp_path / "rules"
    idx, path, node = add_loop(loops)
    write_rules(rdir, RULES % (idx, idx, idx))
    d = start(udevd_factory, rdir)
    locker = Locker(node)
    try:
        log_at = d.log_size()
        write_uevent(path, "change")
        assert wait_until(lambda: "locked by another process" in d.log_since(log_at), 10)
        t0 = time.monotonic()
        if how == "sigterm":
            d.signal(signal.SIGTERM)
        else:
            assert ctrl_request([ctrl_message(CTRL_EXIT)], timeout=10)
        d.wait_exit(timeout=20)
        assert time.monotonic() - t0 < 10
        d.check_clean_exit()
        if how == "control-exit":
            assert "dropping the event at exit" in d.log_since(log_at)
    finally:
        locker.release()
