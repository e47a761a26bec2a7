# SPDX-License-Identifier: GPL-2.0-or-later
"""Scoped settle (udevadm settle --seqnum/--subsystem/--devpath) and the
timeout report of settle and trigger --settle, on real events: one veth
interface's "add" is held by a rule running /bin/sleep; events out of the
scope do not delay a scoped settle, events in it do, and the report names the
sleeping program with its pid and the events waiting behind it. Against a
daemon that does not answer queries (as systemd-udevd) the scoped options
fail with exit status 2 and plain settle works as before."""

import os
import re
import signal
import socket
import threading
import time

from tudevlib import CONTROL, QUEUE_FLAG, ctrl_query, run, wait_until

HELD = "/devices/virtual/net/ssa"
FREE = "/devices/virtual/net/ssc"


def pending_rows():
    st, text, _ = ctrl_query("pending")
    assert st == 0, text
    return [l.split("\t") for l in text.splitlines() if not l.startswith("#")]


def settle(udevadm, *args, timeout=60):
    t = time.monotonic()
    r = run([udevadm, "settle"] + list(args), timeout=timeout)
    return r, time.monotonic() - t


def test_scoped_settle_real_events(udevd_factory, udevadm, net, udev_mon, tmp_path):
    d = tmp_path / "r"
    d.mkdir()
    (d / "50.rules").write_text('SUBSYSTEM=="net", KERNEL=="ssa", ACTION=="add", '
                                'RUN+="/bin/sleep 30"\n')
    daemon = udevd_factory("--children-max=8", "--event-timeout=120",
                           "--rules-dir=" + str(d))
    # another interface, before the held one (the queue devices of every
    # veth share ids such as "+queues:rx-0", so later ones would wait too)
    net.add_veth("ssc", "ssd")
    r, _ = settle(udevadm)
    assert r.returncode == 0, r.stderr
    net.add_veth("ssa", "ssb")
    assert wait_until(lambda: any(r[2] == HELD and r[5] == "program"
                                  for r in pending_rows()), 10)
    rows = pending_rows()
    held = [r for r in rows if r[2] == HELD]
    assert len(held) == 1
    held_seq = int(held[0][0])
    assert int(held[0][7]) == held_seq  # the first SEQNUM it covers: its own
    waiters = [r for r in rows if r[2].startswith(HELD + "/")]
    assert waiters, rows

    # a real event of the other interface: scoped settle waits for it, and
    # only for it
    mark = udev_mon.mark()
    with open("/sys/class/net/ssc/uevent", "w") as f:
        f.write("change")
    r, _ = settle(udevadm, "--devpath=/sys/class/net/ssc")
    t_done = time.monotonic()
    assert r.returncode == 0, r.stderr
    ev = udev_mon.wait_for(lambda e: e.devpath == FREE and e.action == "change",
                           timeout=5, since=mark)
    assert ev and ev[0].recv_time <= t_done + 0.25

    # out of the scope: returns 0 while the held event still runs
    for scope in (["--devpath=" + FREE], ["--devpath=/sys" + FREE],
                  ["--devpath=/sys/class/net/ssc"], ["--subsystem=block"],
                  ["--seqnum=%d" % (held_seq - 1)],
                  ["--subsystem=net", "--devpath=" + FREE, "--timeout=5"]):
        r, took = settle(udevadm, *scope)
        assert r.returncode == 0, (scope, r.stderr)
        assert r.stderr == "", (scope, r.stderr)
    # /devices/virtual/net/ss is not a parent of ssa: nothing to wait for
    r, _ = settle(udevadm, "--devpath=/devices/virtual/net/ss")
    assert r.returncode == 0, r.stderr
    assert any(r[2] == HELD for r in pending_rows()), "the held event ended too early"

    # in the scope: times out after 1 s with the report
    for scope in (["--devpath=" + HELD], ["--devpath=/sys/class/net/ssa"],
                  ["--seqnum=%d" % held_seq], ["--subsystem=net"]):
        r, took = settle(udevadm, *scope, "--timeout=1")
        assert r.returncode == 1, (scope, r.stdout, r.stderr)
        assert 0.9 <= took < 10, (scope, took)
        assert "Timed out waiting for the events in the scope." in r.stderr
        m = re.search(r"^  %d add %s \(net\) for [0-9.]+s: program /bin/sleep "
                      r"\(pid (\d+), running [0-9.]+s\)$" % (held_seq, re.escape(HELD)),
                      r.stderr, re.M)
        assert m, (scope, r.stderr)
        sleep_pid = int(m.group(1))
        with open("/proc/%d/cmdline" % sleep_pid, "rb") as f:
            assert f.read().split(b"\0")[:2] == [b"/bin/sleep", b"30"]
        assert FREE not in r.stderr
        if scope[0].startswith("--devpath"):
            # the events of the devices below it wait for the held one,
            # directly or through an earlier event of the same device
            seqs = {int(w[0]) for w in waiters} | {held_seq}
            named = set()
            for w in waiters:
                m = re.search(r"^  %s %s %s \(%s\) for [0-9.]+s: event (\d+)$"
                              % (w[0], w[1], re.escape(w[2]), w[3]), r.stderr, re.M)
                assert m, (w, r.stderr)
                assert int(m.group(1)) in seqs and int(m.group(1)) < int(w[0])
                named.add(int(m.group(1)))
            assert held_seq in named, r.stderr
        if scope[0].startswith("--seqnum"):
            # later events are out of this scope
            assert not any(("  %s " % w[0]) in r.stderr for w in waiters
                           if int(w[0]) > held_seq)

    # plain settle: unchanged, plus the report of everything pending
    r, took = settle(udevadm, "--timeout=1")
    assert r.returncode == 1
    assert "Timed out for waiting the udev queue being empty." in r.stderr
    assert re.search(r"^  %d add %s \(net\) for .*: program /bin/sleep \(pid [1-9]"
                     % (held_seq, re.escape(HELD)), r.stderr, re.M), r.stderr
    assert os.path.exists(QUEUE_FLAG)

    # trigger --settle: its own events (changes of ssa and below, queued behind
    # the held add) are reported, the held add itself is not one of them
    r = run([udevadm, "trigger", "--settle", "--settle-timeout=1", "/sys/class/net/ssa"],
            timeout=30)
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert "Timed out waiting for" in r.stderr
    changes = re.findall(r"^  (\d+) change (\S+) \(\S+\) for [0-9.]+s: (.*)$",
                         r.stderr, re.M)
    assert changes, r.stderr
    assert any(p == HELD for _, p, _ in changes)
    assert all(p == HELD or p.startswith(HELD + "/") for _, p, _ in changes)
    assert all(int(s) > held_seq and w.startswith("event ") for s, _, w in changes)
    assert not re.search(r"^  %d add" % held_seq, r.stderr, re.M)
    print(r.stderr)

    # end the program: everything in the scope completes, settle returns 0
    os.kill(sleep_pid, signal.SIGTERM)
    r, _ = settle(udevadm, "--devpath=" + HELD, "--timeout=20")
    assert r.returncode == 0, r.stderr
    assert not any(r[2].startswith(HELD) for r in pending_rows())
    daemon.stop()


def test_seqnum_of_done_events_and_bad_args(udevd, udevadm, net):
    net.add_veth("ssc", "ssd")
    r, _ = settle(udevadm)
    assert r.returncode == 0, r.stderr
    with open("/sys/kernel/uevent_seqnum") as f:
        seq = int(f.read())
    r, _ = settle(udevadm, "--seqnum=%d" % seq, "--devpath=/sys/class/net/ssc")
    assert r.returncode == 0, r.stderr
    for bad in ("--seqnum=0", "--seqnum=x", "--seqnum=-1", "--subsystem=", "--subsystem=a b",
                "--devpath=devices/x", "--devpath=/sys", "--devpath=/"):
        r, _ = settle(udevadm, bad)
        assert r.returncode == 1, (bad, r.stderr)
        assert "Invalid" in r.stderr, (bad, r.stderr)


class FakeServer:
    """A control socket that handles requests as systemd-udevd does for a
    type it does not know: it reads until END and closes without a reply."""

    def __init__(self):
        os.makedirs(os.path.dirname(CONTROL), exist_ok=True)
        if os.path.exists(CONTROL):
            os.unlink(CONTROL)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.sock.bind(CONTROL)
        self.sock.listen(16)
        self.types = []
        self.stop = False
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        self.sock.settimeout(0.2)
        while not self.stop:
            try:
                c, _ = self.sock.accept()
            except socket.timeout:
                continue
            with c:
                c.settimeout(5)
                while True:
                    data = c.recv(4096)
                    if len(data) != 280:
                        break
                    t = int.from_bytes(data[20:24], "little", signed=True)
                    self.types.append(t)
                    if t == 0:
                        break

    def close(self):
        self.stop = True
        self.thread.join()
        self.sock.close()
        os.unlink(CONTROL)


def test_scoped_settle_unsupported(udevadm):
    if os.path.exists(QUEUE_FLAG):
        os.unlink(QUEUE_FLAG)
    srv = FakeServer()
    try:
        r, _ = settle(udevadm, "--timeout=5")
        assert r.returncode == 0, r.stderr  # plain settle: ping, no queue file
        assert 7 in srv.types  # PING
        for scope in ("--devpath=/devices/virtual/net/lo", "--seqnum=1", "--subsystem=net"):
            r, _ = settle(udevadm, scope, "--timeout=5")
            assert r.returncode == 2, (scope, r.stderr)
            assert "does not support --seqnum, --subsystem or --devpath" in r.stderr
        assert 0x74750001 in srv.types
        # plain settle times out as before; no report without an answer
        open(QUEUE_FLAG, "w").close()
        r, _ = settle(udevadm, "--timeout=1")
        assert r.returncode == 1
        assert r.stderr.strip() == "Timed out for waiting the udev queue being empty.", r.stderr
    finally:
        if os.path.exists(QUEUE_FLAG):
            os.unlink(QUEUE_FLAG)
        srv.close()
