# SPDX-License-Identifier: GPL-2.0-or-later
"""Kernel-format messages sent to group 1 by a user-space process (sender
nl_pid != 0): dropped as forged; with --test-accept-user-uevents they reach the
parser, which must reject every malformed one and accept a valid one."""

import random
import socket
import time

from tudevlib import NETLINK_KOBJECT_UEVENT, kernel_seqnum, trigger_uevent

BASE = "/devices/virtual/tudevtest"


def kmsg(action, devpath, props, header=None):
    """Kernel-format datagram: 'ACTION@DEVPATH\\0KEY=VALUE\\0...'."""
    head = header if header is not None else "%s@%s" % (action, devpath)
    body = b"".join(("%s=%s" % kv).encode("latin-1") + b"\0" for kv in props)
    return head.encode("latin-1") + b"\0" + body


def valid_props(action, devpath, seqnum, extra=()):
    return [("ACTION", action), ("DEVPATH", devpath), ("SUBSYSTEM", "tudevtest"),
            ("SEQNUM", str(seqnum))] + list(extra)


class Forger:
    """A user-space netlink socket with an explicit non-zero port id."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW | socket.SOCK_CLOEXEC,
                                  NETLINK_KOBJECT_UEVENT)
        for _ in range(50):
            try:
                self.sock.bind((random.randint(0x10000000, 0x7ffffff0), 0))
                break
            except OSError:
                continue
        assert self.sock.getsockname()[0] != 0

    def send(self, data):
        self.sock.sendto(data, (0, 1))    # to the kernel's multicast group 1

    def close(self):
        self.sock.close()


def test_forged_uevents_dropped(udevd, udev_mon):
    f = Forger()
    seq = kernel_seqnum() + 1000000
    try:
        for i in range(3):
            path = "%s/forged%d" % (BASE, i)
            f.send(kmsg("add", path, valid_props("add", path, seq + i)))
    finally:
        f.close()
    time.sleep(1.0)
    assert udev_mon.matching(lambda e: (e.devpath or "").startswith(BASE + "/")) == []
    # still serving real kernel events
    mark = udev_mon.mark()
    trigger_uevent("/sys/class/net/lo", "change")
    got = udev_mon.wait_for(lambda e: e.devpath == "/devices/virtual/net/lo", timeout=10,
                            since=mark)
    assert len(got) == 1
    udevd.stop()
    stats = udevd.stats()
    assert stats["forged"] == 3, stats


def malformed_cases(seq):
    """(name, datagram); every one must be rejected. Each uses its own
    devpath under BASE so an accepted one is visible in the broadcasts."""
    def p(n):
        return "%s/m%d" % (BASE, n)

    cases = []
    full = kmsg("add", p(1), valid_props("add", p(1), seq))
    cases.append(("truncated", full[:full.index(b"SEQNUM=") + 4]))
    cases.append(("missing SEQNUM", kmsg("add", p(2), valid_props("add", p(2), seq)[:3])))
    cases.append(("SEQNUM=0", kmsg("add", p(3), valid_props("add", p(3), 0))))
    cases.append(("SEQNUM not a number", kmsg("add", p(4), valid_props("add", p(4), "12abc"))))
    cases.append(("bad action", kmsg("frobnicate", p(5), valid_props("frobnicate", p(5), seq))))
    cases.append(("over-long", kmsg("add", p(6), valid_props("add", p(6), seq,
                                                             [("LONG", "x" * 9000)]))))
    cases.append(("missing NUL", kmsg("add", p(7), valid_props("add", p(7), seq))
                  .replace(b"\0", b" ")))
    cases.append(("header devpath mismatch", kmsg("add", p(8), valid_props("add", p(8) + "x",
                                                                           seq))))
    cases.append(("header action mismatch", kmsg("add", p(9), valid_props("remove", p(9), seq))))
    cases.append(("control char in devpath", kmsg("add", p(10) + "\x01",
                                                  valid_props("add", p(10) + "\x01", seq))))
    cases.append(("control char in DEVTYPE", kmsg("add", p(11), valid_props(
        "add", p(11), seq, [("DEVTYPE", "a\x1bb")]))))
    cases.append(("control char in SUBSYSTEM", kmsg("add", p(18), [
        ("ACTION", "add"), ("DEVPATH", p(18)), ("SUBSYSTEM", "tude\x07vtest"),
        ("SEQNUM", str(seq))])))
    cases.append(("no ACTION@ header", kmsg("add", p(12), valid_props("add", p(12), seq),
                                            header="add" + p(12))))
    cases.append(("missing SUBSYSTEM", kmsg("add", p(13), [
        ("ACTION", "add"), ("DEVPATH", p(13)), ("SEQNUM", str(seq))])))
    cases.append(("unsafe DEVNAME", kmsg("add", p(14), valid_props("add", p(14), seq, [
        ("MAJOR", "1"), ("MINOR", "3"), ("DEVNAME", "../etc/passwd")]))))
    cases.append(("MAJOR not a number", kmsg("add", p(15), valid_props("add", p(15), seq, [
        ("MAJOR", "abc"), ("MINOR", "3")]))))
    cases.append(("too many properties", kmsg("add", p(16), valid_props(
        "add", p(16), seq, [("K%d" % i, "v") for i in range(200)]))))
    cases.append(("property without =", kmsg("add", p(17), valid_props("add", p(17), seq))
                  + b"NOEQUALSIGN\0"))
    for name, data in cases:
        assert len(data) >= 32, name
    return cases


def test_malformed_uevents_rejected(udevd_factory, udev_mon):
    d = udevd_factory("--children-max=8", "--test-accept-user-uevents")
    seq = kernel_seqnum() + 2000000
    cases = malformed_cases(seq)
    f = Forger()
    try:
        for _, data in cases:
            f.send(data)
        f.send(b"add@/x\0ACTION=add\0")   # shorter than 32 bytes: dropped too
        valid = "%s/valid" % BASE
        f.send(kmsg("add", valid, valid_props("add", valid, seq + 1, [("FOO", "bar")])))
    finally:
        f.close()
    got = udev_mon.wait_for(lambda e: e.devpath == valid, timeout=10)
    assert len(got) == 1, "the valid user-space uevent was not processed"
    ev = got[0]
    assert ev.errors == []
    assert ev.props["ACTION"] == "add"
    assert ev.props["SUBSYSTEM"] == "tudevtest"
    assert ev.props["SEQNUM"] == str(seq + 1)
    assert ev.props["FOO"] == "bar"
    assert int(ev.props["USEC_INITIALIZED"]) > 0
    time.sleep(0.3)
    accepted = udev_mon.matching(lambda e: (e.devpath or "").startswith(BASE + "/m"))
    assert accepted == [], "malformed uevents were processed: %r" % accepted
    assert d.alive()
    d.stop()
    stats = d.stats()
    # every malformed message counted; the < 32 byte one may be counted or not
    assert len(cases) <= stats["malformed"] <= len(cases) + 1, stats
