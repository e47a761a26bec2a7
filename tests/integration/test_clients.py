# SPDX-License-Identifier: GPL-2.0-or-later
"""Real libudev clients (systemd's libudev through a C program, pyudev, and
systemd 252's own udevadm) against tudev, with real kernel events from veth
pairs and loop devices."""

import os
import time

import pyudev

from tudevlib import (devpath_in, ifindex, monotonic_usec, run, wait_until)


def read_db(path):
    with open(path) as f:
        return f.read()


def db_usec(text):
    for line in text.splitlines():
        if line.startswith("I:"):
            return int(line[2:])
    return None


def kernel_seqnums(kernel_mon, devpath, action):
    return [e.seqnum for e in kernel_mon.matching(lambda e: e.devpath == devpath and
                                                  e.action == action)]


def test_veth_add_libudev_client(udevd, net, kernel_mon, libudev_client):
    client = libudev_client("--subsystem", "net", "--timeout", "60")
    t0 = monotonic_usec()
    net.add_veth("lca0", "lcb0")
    devs = client.wait_devices(lambda d: d["action"] == "add" and
                               d["interface"] in ("lca0", "lcb0"), count=2, timeout=20)
    t1 = monotonic_usec()
    assert sorted(d["interface"] for d in devs) == ["lca0", "lcb0"]
    for d in devs:
        name = d["interface"]
        idx = ifindex(name)
        path = "/devices/virtual/net/" + name
        assert d["devpath"] == path
        assert d["syspath"] == "/sys" + path
        assert d["subsystem"] == "net"
        assert d["devtype"] is None
        assert d["ifindex"] == str(idx)
        # the kernel's SEQNUM, unchanged
        assert [d["seqnum"]] == kernel_seqnums(kernel_mon, path, "add")
        # USEC_INITIALIZED: CLOCK_MONOTONIC microseconds of this processing
        usec = int(d["usec_initialized"])
        assert t0 <= usec <= t1
        assert d["is_initialized"] == 1
        assert d["tags"] == [] and d["current_tags"] == []
        assert d["tags_prop"] is None and d["current_tags_prop"] is None
        assert "UDEV_DATABASE_VERSION" not in d["properties"]
        # the DB was written before the broadcast: the re-read device is initialized
        dbfile = "/run/udev/data/n%d" % idx
        assert os.path.isfile(dbfile)
        db = d["db"]
        assert db is not None, d
        assert db["is_initialized"] == 1
        assert db["properties"]["INTERFACE"] == name
        assert db["properties"]["IFINDEX"] == str(idx)
        # With an I: line libudev knows the time; an empty file (no info to
        # store, as systemd does for untagged devices) only marks "initialized".
        stored = db_usec(read_db(dbfile))
        if stored is None:
            assert read_db(dbfile) == ""
            assert db["usec_since_initialized_positive"] is False
        else:
            assert stored == usec
            assert db["usec_initialized"] == str(usec)
            assert db["usec_since_initialized_positive"] is True
    # only net devices got through the subsystem filter (queues are "queues")
    assert {d["subsystem"] for d in client.devices()} == {"net"}


def parse_export_db(text):
    """systemd's `udevadm info --export-db` -> {devpath: [lines]}"""
    records = {}
    for block in text.split("\n\n"):
        lines = [l for l in block.splitlines() if l]
        if lines and lines[0].startswith("P: "):
            records[lines[0][3:]] = lines
    return records


def test_export_db_by_systemd_udevadm(udevd, net, loops, udev_mon, sd_udevadm):
    net.add_veth("eda0", "edb0")
    idx = loops.add()
    loop_path = loops.devpath(idx)
    paths = ["/devices/virtual/net/eda0", "/devices/virtual/net/edb0", loop_path]
    got = udev_mon.wait_for(lambda e: e.devpath in paths and e.action == "add", count=3,
                            timeout=20)
    assert sorted(e.devpath for e in got) == sorted(paths)
    r = run([sd_udevadm, "info", "--export-db"])
    assert r.returncode == 0, r.stderr
    records = parse_export_db(r.stdout)
    for name in ("eda0", "edb0"):
        rec = records.get("/devices/virtual/net/" + name)
        assert rec is not None, "systemd's udevadm does not list " + name
        assert "U: net" in rec
        assert "I: %d" % ifindex(name) in rec
        assert "E: INTERFACE=%s" % name in rec
        usec = db_usec(read_db("/run/udev/data/n%d" % ifindex(name)))
        ev = [e for e in got if e.devpath == "/devices/virtual/net/" + name][0]
        if usec is not None:
            assert "E: USEC_INITIALIZED=%d" % usec in rec
            assert ev.props["USEC_INITIALIZED"] == str(usec)
    rec = records.get(loop_path)
    assert rec is not None, "systemd's udevadm does not list loop%d" % idx
    assert "U: block" in rec and "T: disk" in rec
    assert "D: b 7:%d" % idx in rec
    assert "N: loop%d" % idx in rec
    assert os.path.isfile("/run/udev/data/b7:%d" % idx)
    # systemd's own view of "initialized" (sd-device reads our DB file)
    r = run([sd_udevadm, "info", "--query=property", "/sys/class/net/eda0"])
    assert r.returncode == 0, r.stderr
    assert "INTERFACE=eda0" in r.stdout.splitlines()


def test_pyudev_monitor_and_device(udevd, net, kernel_mon):
    ctx = pyudev.Context()
    mon = pyudev.Monitor.from_netlink(ctx, "udev")
    mon.filter_by("net")
    mon.start()
    t0 = monotonic_usec()
    net.add_veth("pya0", "pyb0")
    got = {}
    deadline = time.monotonic() + 20
    while len(got) < 2 and time.monotonic() < deadline:
        dev = mon.poll(timeout=1)
        if dev is not None and dev.action == "add" and dev.sys_name in ("pya0", "pyb0"):
            got[dev.sys_name] = dev
    t1 = monotonic_usec()
    assert sorted(got) == ["pya0", "pyb0"]
    for name, dev in got.items():
        path = "/devices/virtual/net/" + name
        assert dev.device_path == path
        assert dev.subsystem == "net"
        assert dev.properties["INTERFACE"] == name
        assert int(dev.properties["IFINDEX"]) == ifindex(name)
        assert [dev.sequence_number] == kernel_seqnums(kernel_mon, path, "add")
        assert t0 <= int(dev.properties["USEC_INITIALIZED"]) <= t1
        assert dev.is_initialized
        again = pyudev.Devices.from_sys_path(ctx, "/sys/class/net/" + name)
        assert again.is_initialized
        assert again.properties["INTERFACE"] == name
        assert list(again.tags) == []
    # an uninitialized device for contrast: lo never had an event here
    lo = pyudev.Devices.from_sys_path(ctx, "/sys/class/net/lo")
    assert not os.path.exists("/run/udev/data/n%d" % ifindex("lo"))
    assert not lo.is_initialized
    # and after a change event it is initialized
    with open("/sys/class/net/lo/uevent", "w") as f:
        f.write("change")
    assert wait_until(lambda: os.path.exists("/run/udev/data/n%d" % ifindex("lo")), 10)
    assert pyudev.Devices.from_sys_path(ctx, "/sys/class/net/lo").is_initialized
