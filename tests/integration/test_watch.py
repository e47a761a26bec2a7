# SPDX-License-Identifier: GPL-2.0-or-later
"""OPTIONS+="watch" (tudev-rules(7)) with real loop devices: the
daemon watches the node with inotify, a close after writing makes it write
"change" to the device's uevent file (SYNTH_UUID=0 in the kernel event) or
re-read the partition table of a whole disk; the watch is recorded in
/run/udev/watch as two symlinks, dropped by an event without the option and
by remove, kept across a restart and restored by the next daemon."""

import os
import subprocess
import time

import pytest

import tudevlib
from blocklib import PartitionedLoop, add_loop, close_after_write, write_rules, write_uevent
from tudevlib import wait_until

WATCH_DIR = "/run/udev/watch"

RULES = r'''
ACTION!="remove", SUBSYSTEM=="block", KERNEL=="loop%(idx)d|loop%(idx)dp*", \
  ENV{SYNTH_ARG_NOWATCH}!="1", OPTIONS+="watch"
'''


def start(udevd_factory, rules_dir, *extra):
    return udevd_factory("--children-max=4", "--rules-dir=%s" % rules_dir, *extra)


def is_event(devpath, action):
    return lambda e: e.devpath == devpath and e.action == action


def wait_udev(udev_mon, devpath, action, since, timeout=20):
    got = udev_mon.wait_for(is_event(devpath, action), since=since, timeout=timeout)
    assert got, "no udev %s event for %s" % (action, devpath)
    return got[0]


def watch_record(devnum):
    """The wd of the watch of block device `devnum` ("7:123") or None; checks
    that both symlinks exist and point at each other."""
    dev_id = "b" + devnum
    try:
        wd = os.readlink(os.path.join(WATCH_DIR, dev_id))
    except FileNotFoundError:
        return None
    assert os.readlink(os.path.join(WATCH_DIR, wd)) == dev_id
    return int(wd)


def synthesized(d, since):
    """Devpaths the daemon wrote "change" for (its debug log after offset
    `since`). Other tests may trigger "change" on every block device at any
    time, so kernel events alone do not tell who caused them."""
    out = []
    for line in d.log_since(since).splitlines():
        _, sep, rest = line.partition("watch: synthesized 'change' for ")
        if sep:
            out.append(rest.strip())
    return out


def test_close_after_write_synthesizes_change(tmp_path, udevd_factory, loops, udev_mon,
                                              kernel_mon):
    rdir = tmp_path / "rules"
    idx, path, node = add_loop(loops)
    write_rules(rdir, RULES % {"idx": idx})
    d = start(udevd_factory, rdir)

    mark = udev_mon.mark()
    write_uevent(path, "change")
    wait_udev(udev_mon, path, "change", mark)
    assert wait_until(lambda: watch_record("7:%d" % idx) is not None, 5)

    kmark, mark, log_at = kernel_mon.mark(), udev_mon.mark(), d.log_size()
    close_after_write(node)
    kev = kernel_mon.wait_for(is_event(path, "change"), since=kmark, timeout=10)
    assert kev, "no kernel change event after close"
    assert kev[0].props.get("SYNTH_UUID") == "0"
    ev = wait_udev(udev_mon, path, "change", mark)
    assert ev.props.get("SYNTH_UUID") == "0"
    assert wait_until(lambda: synthesized(d, log_at) == [path], 5)
    # the synthesized event set the watch again: a second close works too
    assert wait_until(lambda: watch_record("7:%d" % idx) is not None, 5)
    mark, log_at = udev_mon.mark(), d.log_size()
    close_after_write(node)
    wait_udev(udev_mon, path, "change", mark)
    assert wait_until(lambda: synthesized(d, log_at) == [path], 5)

    # reading does not count
    assert wait_until(lambda: watch_record("7:%d" % idx) is not None, 5)
    log_at = d.log_size()
    os.close(os.open(node, os.O_RDONLY | os.O_CLOEXEC))
    time.sleep(1.0)
    assert synthesized(d, log_at) == []


def test_event_without_watch_drops_it(tmp_path, udevd_factory, loops, udev_mon):
    rdir = tmp_path / "rules"
    idx, path, node = add_loop(loops)
    write_rules(rdir, RULES % {"idx": idx})
    d = start(udevd_factory, rdir)
    mark = udev_mon.mark()
    write_uevent(path, "change")
    wait_udev(udev_mon, path, "change", mark)
    assert wait_until(lambda: watch_record("7:%d" % idx) is not None, 5)

    # an event whose rules do not ask for the watch ends it
    mark = udev_mon.mark()
    write_uevent(path, "change 11111111-2222-3333-4444-555555555555 NOWATCH=1")
    ev = wait_udev(udev_mon, path, "change", mark)
    assert ev.props.get("SYNTH_ARG_NOWATCH") == "1"
    assert watch_record("7:%d" % idx) is None
    assert os.listdir(WATCH_DIR) == []

    log_at = d.log_size()
    close_after_write(node)
    time.sleep(1.5)
    assert synthesized(d, log_at) == []
    assert "closed after writing" not in d.log_since(log_at)


def test_no_watch_without_option(tmp_path, udevd_factory, loops, udev_mon):
    rdir = tmp_path / "rules"
    idx, path, node = add_loop(loops)
    write_rules(rdir, 'KERNEL=="loop%d", ENV{TUDEV_SEEN}="1"\n' % idx)
    d = start(udevd_factory, rdir)
    mark = udev_mon.mark()
    write_uevent(path, "change")
    assert wait_udev(udev_mon, path, "change", mark).props.get("TUDEV_SEEN") == "1"
    assert watch_record("7:%d" % idx) is None
    log_at = d.log_size()
    close_after_write(node)
    time.sleep(1.5)
    assert synthesized(d, log_at) == []


def test_remove_drops_the_watch(tmp_path, udevd_factory, loops, udev_mon):
    rdir = tmp_path / "rules"
    idx, path, node = add_loop(loops)
    write_rules(rdir, RULES % {"idx": idx})
    start(udevd_factory, rdir)
    mark = udev_mon.mark()
    write_uevent(path, "change")
    wait_udev(udev_mon, path, "change", mark)
    assert wait_until(lambda: watch_record("7:%d" % idx) is not None, 5)
    mark = udev_mon.mark()
    loops.remove(idx)
    wait_udev(udev_mon, path, "remove", mark)
    assert watch_record("7:%d" % idx) is None
    assert os.listdir(WATCH_DIR) == []
    os.unlink(node)


def test_restart_restores_watches(tmp_path, udevd_factory, loops, udev_mon, udevadm,
                                  monkeypatch):
    rdir = tmp_path / "rules"
    idx, path, node = add_loop(loops)
    write_rules(rdir, RULES % {"idx": idx})
    d = start(udevd_factory, rdir)
    mark = udev_mon.mark()
    write_uevent(path, "change")
    wait_udev(udev_mon, path, "change", mark)
    assert wait_until(lambda: watch_record("7:%d" % idx) is not None, 5)
    # --cleanup-db leaves the watches alone (systemd: udevd handles them)
    tudevlib.run([udevadm, "info", "--cleanup-db"])
    assert watch_record("7:%d" % idx) is not None
    d.stop()
    # the records outlive the daemon ...
    assert watch_record("7:%d" % idx) is not None

    # ... and the next one watches again, even with rules that no longer ask
    # for it (the watch then goes with the next event, as in systemd)
    write_rules(rdir, 'KERNEL=="loop%d", ENV{TUDEV_SEEN}="1"\n' % idx)
    monkeypatch.setattr(tudevlib, "reset_run_udev", lambda: None)  # keep /run/udev
    d = start(udevd_factory, rdir)
    assert watch_record("7:%d" % idx) is not None
    assert not os.path.exists("/run/udev/watch.old")
    mark = udev_mon.mark()
    close_after_write(node)
    ev = wait_udev(udev_mon, path, "change", mark)
    assert ev.props.get("SYNTH_UUID") == "0"
    assert wait_until(lambda: synthesized(d, 0) == [path], 5)
    assert ev.props.get("TUDEV_SEEN") == "1"
    assert watch_record("7:%d" % idx) is None


def test_partitioned_disk(tmp_path, udevd_factory, loops, udev_mon, kernel_mon):
    """Whole disk with a partition. While someone else holds a lock on the
    disk the re-read fails and "change" is written to the disk and to each
    partition. Without a lock BLKRRPART works: the kernel announces the
    partitions again itself (remove/add) and nothing is synthesized, unless no
    partition is left (kernels without partition table parsers drop the one
    added with BLKPG): then the disk gets a "change"."""
    import fcntl

    rdir = tmp_path / "rules"
    try:
        pl = PartitionedLoop(loops, tmp_path)
    except (OSError, AssertionError, subprocess.CalledProcessError) as e:
        pytest.skip("no partitioned loop device: %s" % e)
    try:
        write_rules(rdir, RULES % {"idx": pl.idx})
        d = start(udevd_factory, rdir)
        mark = udev_mon.mark()
        write_uevent(pl.devpath, "change")
        wait_udev(udev_mon, pl.devpath, "change", mark)
        assert wait_until(lambda: watch_record("7:%d" % pl.idx) is not None, 5)

        # someone holds a shared lock: no re-read, "change" for disk and partition
        holder = os.open(pl.node, os.O_RDONLY | os.O_CLOEXEC)
        try:
            fcntl.flock(holder, fcntl.LOCK_SH)
            kmark, mark, log_at = kernel_mon.mark(), udev_mon.mark(), d.log_size()
            close_after_write(pl.node)
            for p in (pl.devpath, pl.part_devpath):
                got = kernel_mon.wait_for(is_event(p, "change"), since=kmark, timeout=10)
                assert got and got[0].props.get("SYNTH_UUID") == "0", p
            assert wait_until(lambda: synthesized(d, log_at) == [pl.devpath, pl.part_devpath],
                              5), synthesized(d, log_at)
            assert kernel_mon.matching(is_event(pl.part_devpath, "remove"), since=kmark) == []
        finally:
            os.close(holder)

        # no lock: the partition table is re-read (once udevd's own events,
        # which hold a shared lock, are done)
        for p in (pl.devpath, pl.part_devpath):
            wait_udev(udev_mon, p, "change", mark)
        assert wait_until(lambda: watch_record("7:%d" % pl.idx) is not None, 5)
        assert wait_until(lambda: not tudevlib.queue_flag_exists(), 10)
        kmark, log_at = kernel_mon.mark(), d.log_size()
        close_after_write(pl.node)
        removed = is_event(pl.part_devpath, "remove")
        assert wait_until(lambda: synthesized(d, log_at) or kernel_mon.matching(removed, kmark),
                          10)
        if "failed to re-read the partition table" in d.log_since(log_at):
            # the kernel refuses while anyone has a partition open (other
            # tests' daemons see this loop device too and may probe it)
            assert wait_until(lambda: synthesized(d, log_at) == [pl.devpath, pl.part_devpath],
                              5), synthesized(d, log_at)
        else:
            readded = kernel_mon.wait_for(is_event(pl.part_devpath, "add"), since=kmark,
                                          timeout=2)
            time.sleep(0.5)
            assert synthesized(d, log_at) == ([] if readded else [pl.devpath])
    finally:
        pl.detach()
