# SPDX-License-Identifier: GPL-2.0-or-later
"""libudev's in-kernel BPF filters (subsystem/devtype hashes, tag bloom) only
let a broadcast through when tudev's header is right; libudev then re-checks
in user space. Sticky tags from the DB are carried into the next event."""

import os
import time

from tudevlib import ifindex, tag_bloom, trigger_uevent


def write_db(path, text):
    tmp = os.path.join(os.path.dirname(path), ".#test-" + os.path.basename(path))
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, path)


def test_tag_and_subsystem_filters(udevd, net, udev_mon, libudev_client):
    path = "/devices/virtual/net/tga0"
    net.add_veth("tga0", "tgb0")
    add = udev_mon.wait_for(lambda e: e.devpath == path and e.action == "add", timeout=20)
    assert len(add) == 1
    usec = int(add[0].props["USEC_INITIALIZED"])
    idx = ifindex("tga0")
    dbfile = "/run/udev/data/n%d" % idx
    assert os.path.isfile(dbfile)
    # Simulate a tag set by an earlier event (there are no rules yet).
    write_db(dbfile, "I:%d\nG:testtag\nV:1\n" % usec)

    by_tag = libudev_client("--tag", "testtag", "--timeout", "60")
    by_other_tag = libudev_client("--tag", "othertag", "--timeout", "60")
    by_net = libudev_client("--subsystem", "net", "--timeout", "60")
    by_block = libudev_client("--subsystem", "block", "--timeout", "60")
    by_net_tag = libudev_client("--subsystem", "net", "--tag", "testtag", "--timeout", "60")

    mark = udev_mon.mark()
    trigger_uevent("/sys/class/net/tga0", "change")
    raw = udev_mon.wait_for(lambda e: e.devpath == path and e.action == "change", timeout=20,
                            since=mark)
    assert len(raw) == 1
    ev = raw[0]
    assert ev.errors == []
    assert ev.props["TAGS"] == ":testtag:"
    assert "CURRENT_TAGS" not in ev.props
    assert (ev.header["bloom_hi"] << 32 | ev.header["bloom_lo"]) == tag_bloom("testtag")
    assert ev.props["USEC_INITIALIZED"] == str(usec)

    is_change = lambda d: d["devpath"] == path and d["action"] == "change"  # noqa: E731
    for c in (by_tag, by_net, by_net_tag):
        got = c.wait_devices(is_change, timeout=10)
        assert len(got) == 1, c.cmd
        d = got[0]
        # (systemd 252's libudev splits ":testtag:" of a received device into
        # "" and "testtag": a quirk of the client, seen with systemd-udevd too)
        assert [t for t in d["tags"] if t] == ["testtag"]
        assert d["tags_prop"] == ":testtag:"
        assert d["current_tags"] == []          # UDEV_DATABASE_VERSION=1 sent: trusted
        assert d["current_tags_prop"] is None
        assert d["usec_initialized"] == str(usec)
        db = d["db"]
        assert db["tags"] == ["testtag"] and db["current_tags"] == []
        assert db["usec_initialized"] == str(usec)
        assert db["usec_since_initialized_positive"] is True
    # the broadcast has been delivered to every socket already: give the
    # clients time to print, then make sure the filtered ones printed nothing
    time.sleep(0.5)
    assert [d for d in by_other_tag.devices() if d["devpath"] == path] == []
    assert [d for d in by_block.devices() if d["devpath"] == path] == []

    # the DB now holds the sticky tag (not current) and the kept time
    lines = open(dbfile).read().splitlines()
    assert "I:%d" % usec in lines
    assert "G:testtag" in lines
    assert "Q:testtag" not in lines
    assert lines[-1] == "V:1"
    assert os.path.isfile("/run/udev/tags/testtag/n%d" % idx)

    # remove: DB and tag index entry deleted, broadcast carries the tag
    mark = udev_mon.mark()
    net.delete_all()
    rm = udev_mon.wait_for(lambda e: e.devpath == path and e.action == "remove", timeout=20,
                           since=mark)
    assert len(rm) == 1
    assert not os.path.exists(dbfile)
    assert not os.path.exists("/run/udev/tags/testtag/n%d" % idx)
    got = by_tag.wait_devices(lambda d: d["devpath"] == path and d["action"] == "remove",
                              timeout=10)
    assert len(got) == 1 and got[0]["db"] is None


def test_devtype_filter_loop(udevd, loops, udev_mon, libudev_client):
    disk = libudev_client("--subsystem", "block/disk", "--timeout", "60")
    part = libudev_client("--subsystem", "block/partition", "--timeout", "60")
    block = libudev_client("--subsystem", "block", "--timeout", "60")
    bdi = libudev_client("--subsystem", "bdi", "--timeout", "60")
    idx = loops.add()
    path = loops.devpath(idx)
    bdi_path = loops.bdi_devpath(idx)
    raw = udev_mon.wait_for(lambda e: e.devpath in (path, bdi_path) and e.action == "add",
                            count=2, timeout=20)
    assert sorted(e.devpath for e in raw) == sorted([path, bdi_path])

    is_add = lambda d: d["devpath"] == path and d["action"] == "add"  # noqa: E731
    for c in (disk, block):
        got = c.wait_devices(is_add, timeout=10)
        assert len(got) == 1, c.cmd
        d = got[0]
        assert d["subsystem"] == "block" and d["devtype"] == "disk"
        assert d["devnode"] == "/dev/loop%d" % idx
        assert d["properties"]["DEVNAME"] == "/dev/loop%d" % idx
        assert d["properties"]["MAJOR"] == "7"
        assert d["properties"]["MINOR"] == str(idx)
        assert d["is_initialized"] == 1
        assert d["db"] is not None and d["db"]["is_initialized"] == 1
    got = bdi.wait_devices(lambda d: d["devpath"] == bdi_path, timeout=10)
    assert len(got) == 1 and got[0]["subsystem"] == "bdi"
    time.sleep(0.5)
    assert [d for d in part.devices() if d["devpath"] in (path, bdi_path)] == []
    assert [d for d in disk.devices() if d["devpath"] == bdi_path] == []
    assert [d for d in bdi.devices() if d["devpath"] == path] == []
    assert os.path.isfile("/run/udev/data/b7:%d" % idx)

    loops.remove(idx)
    got = disk.wait_devices(lambda d: d["devpath"] == path and d["action"] == "remove",
                            timeout=20)
    assert len(got) == 1
    assert got[0]["devnode"] == "/dev/loop%d" % idx
    # deleted before the remove event was broadcast
    assert not os.path.exists("/run/udev/data/b7:%d" % idx)
