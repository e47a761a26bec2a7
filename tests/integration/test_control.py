# SPDX-License-Identifier: GPL-2.0-or-later
"""The control socket /run/udev/control with our udevadm and systemd 252's
(same protocol), non-root clients, and garbage on the socket."""

import os
import re
import socket
import time

import pytest

from tudevlib import (CONTROL, CTRL_CHILDREN_MAX, CTRL_END, CTRL_ENV, CTRL_EXIT,
                      CTRL_LOG_LEVEL, CTRL_PING, CTRL_STOP, QUEUE_FLAG, CtrlConnection,
                      as_nobody, ctrl_message, ctrl_ping, ctrl_request, devpath_in, run,
                      wait_until)

DEBUG_LINE = re.compile(r"\] debug: ")


@pytest.fixture(params=["ours", "systemd"])
def tool(request):
    """(short name, path) of the udevadm to use."""
    path = request.getfixturevalue("udevadm" if request.param == "ours" else "sd_udevadm")
    return request.param[0], path


def control(tool, *args, ok=True):
    r = run([tool, "control"] + list(args), timeout=30)
    if ok:
        assert r.returncode == 0, "udevadm control %s: %s" % (" ".join(args), r.stderr)
    return r


def veth_events(net, kernel_mon, udev_mon, a, b, timeout=15):
    """Create a veth pair; return (kernel events, broadcasts) once all arrived."""
    paths = ["/devices/virtual/net/" + a, "/devices/virtual/net/" + b]
    net.add_veth(a, b)
    time.sleep(0.1)
    kev = kernel_mon.matching(devpath_in(paths))
    uev = udev_mon.wait_for(devpath_in(paths), count=len(kev), timeout=timeout)
    assert sorted(e.seqnum for e in uev) == sorted(e.seqnum for e in kev)
    return kev, uev


def test_control_commands(tool, udevd, net, kernel_mon, udev_mon):
    tag, tool = "c" + tool[0], tool[1]
    control(tool, "--ping")

    # log level: debug lines while at debug, none after --log-level=info
    veth_events(net, kernel_mon, udev_mon, tag + "a0", tag + "b0")
    assert wait_until(lambda: not os.path.exists(QUEUE_FLAG), 5)
    assert DEBUG_LINE.search(udevd.log()), "no debug output with --debug"
    control(tool, "--log-level=info")
    off = udevd.log_size()
    veth_events(net, kernel_mon, udev_mon, tag + "a1", tag + "b1")
    assert wait_until(lambda: not os.path.exists(QUEUE_FLAG), 5)
    new = udevd.log_since(off)
    assert not DEBUG_LINE.search(new), "debug lines after --log-level=info:\n" + new[:2000]
    control(tool, "--log-level=debug")

    control(tool, "--property=FOO=bar")
    control(tool, "--property=FOO=")
    control(tool, "--reload")
    control(tool, "--children-max=4")

    # stop: events queue up, nothing is broadcast, the queue flag stays
    control(tool, "--stop-exec-queue")
    paths = ["/devices/virtual/net/%sa2" % tag, "/devices/virtual/net/%sb2" % tag]
    net.add_veth(tag + "a2", tag + "b2")
    time.sleep(1.0)
    kev = kernel_mon.matching(devpath_in(paths))
    assert len(kev) >= 4
    assert udev_mon.matching(devpath_in(paths)) == []
    assert os.path.exists(QUEUE_FLAG)
    control(tool, "--ping")          # still answering while stopped
    r = run([tool, "settle", "--timeout=1"])
    assert r.returncode != 0
    # start: everything arrives
    control(tool, "--start-exec-queue")
    uev = udev_mon.wait_for(devpath_in(paths), count=len(kev), timeout=15)
    assert sorted(e.seqnum for e in uev) == sorted(e.seqnum for e in kev)
    assert wait_until(lambda: not os.path.exists(QUEUE_FLAG), 5)

    # exit: the daemon exits by itself with status 0
    control(tool, "--exit")
    rc = udevd.wait_exit(timeout=20)
    assert rc == 0
    udevd.check_clean_exit()


@pytest.mark.parametrize("which", ["ours", "systemd"])
def test_children_max_at_runtime(which, request, udevd_factory, net, kernel_mon, udev_mon):
    tool = request.getfixturevalue("udevadm" if which == "ours" else "sd_udevadm")
    delay = 0.3
    udevd_factory("--children-max=16", "--debug-event-delay=300",
                  "--debug-event-delay-match=/devices/virtual/net/cm[ab][0-9]")
    control(tool, "--children-max=1")

    def burst(first):
        paths = []
        for i in (first, first + 1):
            paths += ["/devices/virtual/net/cma%d" % i, "/devices/virtual/net/cmb%d" % i]
            net.add_veth("cma%d" % i, "cmb%d" % i)
        time.sleep(0.1)
        kev = kernel_mon.matching(devpath_in(paths))
        uev = udev_mon.wait_for(devpath_in(paths), count=len(kev), timeout=20)
        assert sorted(e.seqnum for e in uev) == sorted(e.seqnum for e in kev)
        return max(e.recv_time for e in uev) - min(e.recv_time for e in kev)

    serial = burst(0)
    print("children-max=1: %.3fs" % serial)
    assert serial >= 4 * delay * 0.9, "children-max=1 not applied: %.2fs" % serial
    control(tool, "--children-max=8")
    parallel = burst(2)
    print("children-max=8: %.3fs" % parallel)
    assert parallel < 4 * delay / 2, "children-max=8 not applied: %.2fs" % parallel


def nobody_script():
    """Python run as uid 65534: connect to the control socket, ask for
    stop-exec-queue and exit; print what happened."""
    return r'''
import socket, struct, sys
def msg(t):
    return b"udev-252".ljust(16, b"\0") + struct.pack("=Ii", 0xdead1dea, t) + bytes(256)
try:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(5)
    s.connect("/run/udev/control")
    for t in (2, 8, 0):
        s.send(msg(t))
    print("sent", s.recv(16))
except Exception as e:
    print("error", type(e).__name__, e)
'''


def test_non_root_refused(udevd, udevadm, net, kernel_mon, udev_mon, request):
    r = run(as_nobody([udevadm, "control", "--ping"]))
    assert r.returncode != 0
    r = run(as_nobody([udevadm, "control", "--exit"]))
    assert r.returncode != 0
    try:
        sd = request.getfixturevalue("sd_udevadm")
    except pytest.skip.Exception:
        sd = None
    if sd:
        r = run(as_nobody([sd, "control", "--exit"]))
        assert r.returncode != 0
    # let a non-root process reach the socket: the daemon itself must refuse it
    os.chmod(CONTROL, 0o777)
    r = run(as_nobody(["/usr/bin/python3", "-c", nobody_script()]))
    assert r.returncode == 0, r.stderr
    assert udevd.alive()
    assert ctrl_ping()
    # neither the stop nor the exit request had an effect
    veth_events(net, kernel_mon, udev_mon, "nra0", "nrb0")
    assert udevd.alive()


GARBAGE = [
    ("empty", b""),
    ("short", b"hello"),
    ("one byte short", ctrl_message(CTRL_PING)[:279]),
    ("one byte long", ctrl_message(CTRL_PING) + b"\0"),
    ("oversized", ctrl_message(CTRL_EXIT) + b"x" * 4000),
    ("bad magic exit", ctrl_message(CTRL_EXIT, magic=0x12345678)),
    ("bad magic stop", ctrl_message(CTRL_STOP, magic=0xfeedcafe)),
    ("unknown type", ctrl_message(99)),
    ("negative type", ctrl_message(-1)),
    ("env without NUL", ctrl_message(CTRL_ENV, b"A=" + b"B" * 254)),
    ("env without =", ctrl_message(CTRL_ENV, "NOEQUALS")),
    ("env control char", ctrl_message(CTRL_ENV, "A=\x01\x02")),
    ("log level 99", ctrl_message(CTRL_LOG_LEVEL, 99)),
    ("log level -1", ctrl_message(CTRL_LOG_LEVEL, -1)),
    ("children max -5", ctrl_message(CTRL_CHILDREN_MAX, -5)),
    ("random", os.urandom(280)),
]


@pytest.mark.parametrize("name,data", GARBAGE, ids=[g[0] for g in GARBAGE])
def test_garbage_on_control_socket(name, data, udevd, net, kernel_mon, udev_mon):
    c = CtrlConnection(timeout=5)
    try:
        try:
            c.send(data)
            c.send(ctrl_message(CTRL_END))
        except OSError:
            pass   # the daemon may already have closed the connection
        assert c.wait_closed(5), "connection not closed after %s" % name
    finally:
        c.close()
    assert udevd.alive()
    assert ctrl_ping()
    if name in ("bad magic exit", "bad magic stop", "oversized", "random"):
        # the request must not have been executed: events still flow
        veth_events(net, kernel_mon, udev_mon, "gba0", "gbb0")
        assert udevd.alive()


def test_idle_connection_does_not_block_forever(udevd):
    """A client that connects and sends nothing must not stop others for good
    once it disconnects."""
    c = CtrlConnection(timeout=5)
    c.close()
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(CONTROL)
    s.send(ctrl_message(CTRL_PING)[:100])
    s.close()
    assert wait_until(lambda: ctrl_ping(timeout=2), 10)
    assert udevd.alive()


def test_global_properties_bounded_and_batched(tmp_path, udevd_factory, net, kernel_mon,
                                               udev_mon):
    """Thousands of --property requests: published once per loop turn (fast), at
    most 1024 kept (a warning names the refused ones), and rules see them."""
    rdir = tmp_path / "rules"
    rdir.mkdir()
    (rdir / "50-gp.rules").write_text(
        'KERNEL=="gpa*", ENV{S0}="$env{GP0000}", ENV{S1}="$env{GP0001}", '
        'ENV{S1023}="$env{GP1023}", ENV{S1024}="$env{GP1024}", ENV{SLAST}="$env{GPLAST}"\n')
    udevd = udevd_factory("--children-max=8", "--rules-dir=%s" % rdir)
    t = time.monotonic()
    for base in range(0, 1200, 200):
        msgs = [ctrl_message(CTRL_ENV, "GP%04d=%s" % (i, "v" * 40))
                for i in range(base, base + 200)]
        assert ctrl_request(msgs, timeout=30)
    assert ctrl_request([ctrl_message(CTRL_ENV, "GP0000=")])   # unset frees one slot
    assert ctrl_request([ctrl_message(CTRL_ENV, "GPLAST=1")])
    elapsed = time.monotonic() - t
    assert elapsed < 20, elapsed
    assert ctrl_ping()
    assert wait_until(lambda: "too many global properties" in udevd.log(), 5)
    assert "ignoring GP1024" in udevd.log()
    _, uev = veth_events(net, kernel_mon, udev_mon, "gpa0", "gpb0")
    p = [e for e in uev if e.devpath.endswith("/gpa0")][-1].props
    assert p.get("S0", "") == "" and p["S1"] == "v" * 40 and p["S1023"] == "v" * 40
    assert p.get("S1024", "") == "" and p["SLAST"] == "1"
    assert not any(k.startswith("GP") for k in p)   # not added to the device
