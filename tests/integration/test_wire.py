# SPDX-License-Identifier: GPL-2.0-or-later
"""The group-2 datagram byte by byte (decoded by tudevlib, written from
libudev's format, not from the daemon's code), one broadcast per kernel
event, and USEC_INITIALIZED across events."""

import os
import time

from tudevlib import devpath_in, ifindex, monotonic_usec, murmur2, trigger_uevent


def kernel_twin(kernel_mon, ev):
    """The kernel event with the same SEQNUM as the udev event."""
    k = kernel_mon.matching(lambda e: e.seqnum == ev.seqnum and e.devpath == ev.devpath)
    assert len(k) == 1, "no kernel event with SEQNUM %d for %s" % (ev.seqnum, ev.devpath)
    return k[0]


def check_same_props(kev, uev):
    """Every kernel property is forwarded unchanged (DEVNAME made absolute)."""
    for k, v in kev.prop_list:
        if k == "DEVNAME":
            assert uev.props.get(k) == "/dev/" + v
        else:
            assert uev.props.get(k) == v, k


def test_header_of_loop_disk(udevd, loops, udev_mon, kernel_mon):
    t0 = monotonic_usec()
    idx = loops.add()
    path, bdi_path = loops.devpath(idx), loops.bdi_devpath(idx)
    got = udev_mon.wait_for(lambda e: e.devpath in (path, bdi_path) and e.action == "add",
                            count=2, timeout=20)
    t1 = monotonic_usec()
    assert len(got) == 2
    ev = [e for e in got if e.devpath == path][0]
    assert ev.kind == "udev"
    assert ev.errors == []
    raw = ev.raw
    assert raw[0:8] == b"libudev\0"
    assert raw[8:12] == bytes([0xfe, 0xed, 0xca, 0xfe])
    assert raw[12:16] == (40).to_bytes(4, "little")
    assert raw[16:20] == (40).to_bytes(4, "little")
    assert raw[20:24] == (len(raw) - 40).to_bytes(4, "little")
    assert raw[24:28] == bytes.fromhex("f0031db7")      # MurmurHash2("block")
    assert raw[28:32] == bytes.fromhex("7bcbc5ee")      # MurmurHash2("disk")
    assert raw[32:40] == bytes(8)                       # no tags
    assert raw[40:64] == b"UDEV_DATABASE_VERSION=1\0"
    assert raw.endswith(b"\0")
    assert ev.sender[1] == 2                            # sent to group 2 (libudev checks)
    p = ev.props
    assert p["ACTION"] == "add"
    assert p["DEVPATH"] == path
    assert p["SUBSYSTEM"] == "block"
    assert p["DEVTYPE"] == "disk"
    assert p["DEVNAME"] == "/dev/loop%d" % idx
    assert p["MAJOR"] == "7" and p["MINOR"] == str(idx)
    assert t0 <= int(p["USEC_INITIALIZED"]) <= t1
    for k in ("TAGS", "CURRENT_TAGS", "DEVLINKS"):
        assert k not in p
    assert [k for k, _ in ev.prop_list].count("UDEV_DATABASE_VERSION") == 1
    assert len(ev.prop_list) == len(p)                  # no duplicate keys
    kev = kernel_twin(kernel_mon, ev)
    check_same_props(kev, ev)
    assert set(p) == set(kev.props) | {"UDEV_DATABASE_VERSION", "USEC_INITIALIZED"}

    bdi = [e for e in got if e.devpath == bdi_path][0]
    assert bdi.errors == []
    assert bdi.header["subsystem_hash"] == murmur2("bdi")
    assert bdi.header["devtype_hash"] == 0
    check_same_props(kernel_twin(kernel_mon, bdi), bdi)
    assert os.path.isfile("/run/udev/data/b7:%d" % idx)

    mark = udev_mon.mark()
    loops.remove(idx)
    rm = udev_mon.wait_for(lambda e: e.devpath == path and e.action == "remove", timeout=20,
                           since=mark)
    assert len(rm) == 1
    assert rm[0].errors == []
    assert rm[0].props["DEVNAME"] == "/dev/loop%d" % idx
    check_same_props(kernel_twin(kernel_mon, rm[0]), rm[0])
    assert not os.path.exists("/run/udev/data/b7:%d" % idx)


def test_one_broadcast_per_kernel_event_veth(udevd, net, udev_mon, kernel_mon):
    paths = ["/devices/virtual/net/wra0", "/devices/virtual/net/wrb0"]
    net.add_veth("wra0", "wrb0")
    time.sleep(0.2)   # `ip link add` returned: every uevent is emitted; let the reader catch up
    kev = kernel_mon.matching(devpath_in(paths))
    assert len(kev) >= 4
    uev = udev_mon.wait_for(devpath_in(paths), count=len(kev), timeout=20)
    time.sleep(0.3)
    uev = udev_mon.matching(devpath_in(paths))
    assert sorted(e.seqnum for e in uev) == sorted(e.seqnum for e in kev)
    for e in uev:
        assert e.errors == [], e
        k = kernel_twin(kernel_mon, e)
        check_same_props(k, e)
        assert e.action == k.action
        if e.subsystem == "net":
            assert e.header["subsystem_hash"] == 0xa74d3cc8
            assert e.props["INTERFACE"] == os.path.basename(e.devpath)
            assert e.props["IFINDEX"] == str(ifindex(e.props["INTERFACE"]))
        else:
            assert e.subsystem == "queues"
            assert e.header["subsystem_hash"] == murmur2("queues")
        assert e.header["devtype_hash"] == 0
        assert e.header["bloom_hi"] == 0 and e.header["bloom_lo"] == 0
    # DB: net devices (ifindex) get a file, queue objects (no devnum, no
    # ifindex, nothing to store) do not
    for name in ("wra0", "wrb0"):
        assert os.path.isfile("/run/udev/data/n%d" % ifindex(name))
    data = os.listdir("/run/udev/data")
    assert not [f for f in data if f.startswith("+queues:")], data
    assert not [f for f in data if f.startswith(".#")], data


def db_usec(path):
    with open(path) as f:
        for line in f.read().splitlines():
            if line.startswith("I:"):
                return int(line[2:])
    return None


def test_usec_initialized_kept_and_renewed(udevd, loops, udev_mon):
    idx = loops.add()
    path = loops.devpath(idx)
    dbfile = "/run/udev/data/b7:%d" % idx

    def next_event(action, mark):
        got = udev_mon.wait_for(lambda e: e.devpath == path and e.action == action,
                                timeout=20, since=mark)
        assert len(got) == 1, action
        assert got[0].errors == []
        return int(got[0].props["USEC_INITIALIZED"])

    u_add = next_event("add", 0)
    stored = db_usec(dbfile)
    assert stored in (None, u_add)

    mark = udev_mon.mark()
    trigger_uevent("/sys" + path, "change")
    u_change = next_event("change", mark)
    if stored is not None:
        assert u_change == u_add           # kept through the DB I: line
    else:
        assert u_change > u_add            # empty DB file: nothing to keep (as systemd)

    # a device whose DB has an I: line (here because of a sticky tag) keeps it
    with open(dbfile + ".tmp", "w") as f:
        f.write("I:%d\nG:keep\nV:1\n" % u_add)
    os.rename(dbfile + ".tmp", dbfile)
    for _ in range(2):
        mark = udev_mon.mark()
        trigger_uevent("/sys" + path, "change")
        assert next_event("change", mark) == u_add
        assert db_usec(dbfile) == u_add
    ev = udev_mon.matching(lambda e: e.devpath == path and e.action == "change")[-1]
    assert ev.props["TAGS"] == ":keep:" and "CURRENT_TAGS" not in ev.props
    assert os.path.isfile("/run/udev/tags/keep/b7:%d" % idx)

    # removed and created again with the same device number: a new time
    mark = udev_mon.mark()
    loops.remove(idx)
    next_event("remove", mark)
    assert not os.path.exists(dbfile)
    assert not os.path.exists("/run/udev/tags/keep/b7:%d" % idx)
    assert loops.add(idx) == idx
    # (search from the start: the add may arrive before any mark taken now)
    got = udev_mon.wait_for(lambda e: e.devpath == path and e.action == "add", count=2,
                            timeout=20)
    assert len(got) == 2
    u_new = int(got[1].props["USEC_INITIALIZED"])
    assert u_new > u_add
    assert os.path.exists(dbfile)
    assert "G:keep" not in open(dbfile).read()      # tags do not survive a remove
    assert "TAGS" not in got[1].props
