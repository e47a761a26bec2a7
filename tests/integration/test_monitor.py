# SPDX-License-Identifier: GPL-2.0-or-later
"""Our `udevadm monitor`: header, event lines and property blocks in the
format of systemd 252's `udevadm monitor`, and the subsystem filter."""

import os
import re
import signal
import time

from tudevlib import LineProcess, ifindex, monotonic_usec

HEADER = "monitor will print the received events for:"
UDEV_HDR = "UDEV - the event which udev sends out after rule processing"
KERNEL_HDR = "KERNEL - the kernel uevent"
LINE = re.compile(r"^(KERNEL|UDEV  )\[(\d+)\.(\d{6})\] (\S+)\s* (/\S*) \((\S+)\)$")


def start_monitor(udevadm, tmp_path, *args):
    m = LineProcess([udevadm, "monitor"] + list(args),
                    stderr_path=str(tmp_path / "monitor.err"))
    m.with_props = "--property" in args
    # the header ends with an empty line
    assert m.wait_line(lambda l: l == "", timeout=10) is not None, m.text_lines()
    time.sleep(0.3)   # be sure the sockets are bound
    return m


def event_lines(m):
    """[(source, usec, action, devpath, subsystem, props dict or None, raw line)]

    With --property an event counts only once its block and the blank line
    after it have been read: the header line alone may arrive first."""
    out = []
    lines = m.text_lines()
    with_props = getattr(m, "with_props", False)
    i = 0
    while i < len(lines):
        mt = LINE.match(lines[i])
        if not mt:
            i += 1
            continue
        src, sec, usec, action, devpath, subsystem = mt.groups()
        props = None
        j = i + 1
        if with_props and j >= len(lines):
            break           # the block has not arrived yet
        if j < len(lines) and "=" in lines[j] and not LINE.match(lines[j]):
            props = {}
            while j < len(lines) and lines[j] != "":
                k, _, v = lines[j].partition("=")
                props[k] = v
                j += 1
            if j >= len(lines):
                break       # block not complete yet
        out.append((src.strip(), int(sec) * 1000000 + int(usec), action, devpath, subsystem,
                    props, lines[i]))
        i = j if j > i else i + 1
    return out


def wait_events(m, pred, count=1, timeout=10):
    deadline = time.monotonic() + timeout
    while True:
        found = [e for e in event_lines(m) if pred(e)]
        if len(found) >= count or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def check_line_format(e):
    src, usec, action, devpath, subsystem, _, raw = e
    expect = "%s[%d.%06d] %-8s %s (%s)" % ("UDEV  " if src == "UDEV" else "KERNEL",
                                           usec // 1000000, usec % 1000000, action, devpath,
                                           subsystem)
    assert raw == expect


def test_monitor_udev_property(udevd, net, kernel_mon, udevadm, tmp_path):
    m = start_monitor(udevadm, tmp_path, "--udev", "--property")
    try:
        assert m.text_lines()[:3] == [HEADER, UDEV_HDR, ""]
        t0 = monotonic_usec()
        net.add_veth("moa0", "mob0")
        path = "/devices/virtual/net/moa0"
        got = wait_events(m, lambda e: e[3] == path and e[2] == "add")
        t1 = monotonic_usec()
        assert len(got) == 1
        e = got[0]
        check_line_format(e)
        src, usec, action, devpath, subsystem, props, _ = e
        assert (src, action, subsystem) == ("UDEV", "add", "net")
        assert t0 <= usec <= t1 + 100000      # CLOCK_MONOTONIC at reception
        k = kernel_mon.matching(lambda x: x.devpath == path and x.action == "add")
        assert props is not None
        assert props["ACTION"] == "add"
        assert props["DEVPATH"] == path
        assert props["SUBSYSTEM"] == "net"
        assert props["INTERFACE"] == "moa0"
        assert props["IFINDEX"] == str(ifindex("moa0"))
        assert props["SEQNUM"] == str(k[0].seqnum)
        assert t0 <= int(props["USEC_INITIALIZED"]) <= t1
        assert "UDEV_DATABASE_VERSION" not in props
        # queue objects are shown too, and no kernel lines at all
        assert wait_events(m, lambda e: e[3].startswith(path + "/queues/"))
        assert [e for e in event_lines(m) if e[0] == "KERNEL"] == []
    finally:
        rc = m.stop(signal.SIGTERM)
    assert rc == 0


def test_monitor_kernel_and_both(udevd, net, loops, udevadm, tmp_path):
    mk = start_monitor(udevadm, tmp_path, "--kernel", "--property", "--subsystem-match=block")
    both = LineProcess([udevadm, "monitor"], stderr_path=str(tmp_path / "both.err"))
    try:
        assert both.wait_line(lambda l: l == "", timeout=10) is not None
        time.sleep(0.3)
        assert mk.text_lines()[:3] == [HEADER, KERNEL_HDR, ""]
        assert both.text_lines()[:4] == [HEADER, UDEV_HDR, KERNEL_HDR, ""]
        idx = loops.add()
        path = loops.devpath(idx)
        net.add_veth("mka0", "mkb0")
        got = wait_events(mk, lambda e: e[3] == path and e[2] == "add")
        assert len(got) == 1
        check_line_format(got[0])
        assert got[0][0] == "KERNEL"
        props = got[0][5]
        assert props["DEVNAME"] == "/dev/loop%d" % idx    # normalised on receipt
        assert props["SUBSYSTEM"] == "block" and props["DEVTYPE"] == "disk"
        assert "USEC_INITIALIZED" not in props
        # the filter: no net events, and nothing from udev
        time.sleep(0.5)
        lines = event_lines(mk)
        assert [e for e in lines if e[4] != "block"] == []
        assert [e for e in lines if e[0] != "KERNEL"] == []
        # both sources without filter
        npath = "/devices/virtual/net/mka0"
        for src in ("KERNEL", "UDEV"):
            for p in (path, npath):
                found = wait_events(both, lambda e: e[0] == src and e[3] == p and e[2] == "add")
                assert len(found) == 1, (src, p)
                check_line_format(found[0])
                assert found[0][5] is None      # no --property
    finally:
        rc1 = mk.stop(signal.SIGINT)
        rc2 = both.stop(signal.SIGTERM)
    assert rc1 == 0 and rc2 == 0


def test_monitor_subsystem_filter(udevd, net, loops, udevadm, tmp_path):
    m = start_monitor(udevadm, tmp_path, "--udev", "--subsystem-match=net")
    try:
        idx = loops.add()
        net.add_veth("msa0", "msb0")
        got = wait_events(m, lambda e: e[3] in ("/devices/virtual/net/msa0",
                                                "/devices/virtual/net/msb0"), count=2)
        assert len(got) == 2
        time.sleep(0.5)
        lines = event_lines(m)
        assert {e[4] for e in lines} == {"net"}
        assert not [e for e in lines if e[3] == loops.devpath(idx)]
        assert not [e for e in lines if "/queues/" in e[3]]
    finally:
        m.stop()
    assert os.path.exists("/run/udev/control")
