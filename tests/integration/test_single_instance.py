# SPDX-License-Identifier: GPL-2.0-or-later
"""One daemon at a time, and `udevadm control --exit` that returns only once
the daemon has exited (udevd(8) "SINGLE INSTANCE", udevadm(8)).

A second udevd refuses to start while the first runs (it holds
/run/udev/udevd.lock) or while any daemon answers on /run/udev/control, and
touches nothing; the exit request's connection closes only when the daemon
process is gone; a restart loop under a storm of real kernel events leaves
the last daemon serving the socket."""

import os
import signal
import socket
import stat
import struct
import subprocess
import threading
import time

import pytest

from tudevlib import (CONTROL, CTRL_EXIT, QUEUE_FLAG, RUN_UDEV, Udevd, ctrl_message, ctrl_ping,
                      ctrl_request, devpath_in, parse_stats, reset_run_udev, run,
                      sanitizer_reports, wait_until)

LOCK = os.path.join(RUN_UDEV, "udevd.lock")
BAIT = os.path.join(RUN_UDEV, "data", ".#n99999990123456789abcdef")


def refusal(pid, what="%s answers" % CONTROL):
    return "another udev daemon is running (PID %d, %s); not starting" % (pid, what)


def peer_pid(path=CONTROL):
    """PID of the process listening on the socket (SO_PEERCRED)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET | socket.SOCK_CLOEXEC)
    try:
        s.connect(path)
        pid, _, _ = struct.unpack("=iII", s.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                                       12))
        return pid
    finally:
        s.close()


def process_gone(pid):
    """True once the process has exited: no such process, or a zombie that
    its parent (this test, for daemons it spawned) has not reaped yet."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(") ", 1)[1].split()[0] in ("Z", "X")
    except (OSError, IndexError):
        return True


def run_udevd_env():
    return dict(os.environ, SYSTEMD_LOG_TARGET="console")


def empty_rules(tmp_path):
    d = tmp_path / "no-rules.d"
    d.mkdir(exist_ok=True)
    return str(d)


def run_udevd(build, *args, timeout=30):
    """Run a udevd that is expected to refuse and exit by itself."""
    return subprocess.run([os.path.join(build, "udevd")] + list(args), stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, errors="replace", timeout=timeout,
                          env=run_udevd_env())


def run_udev_state():
    """Every path under /run/udev with its inode and mtime."""
    out = {}
    for root, dirs, files in os.walk(RUN_UDEV):
        for n in dirs + files:
            p = os.path.join(root, n)
            st = os.lstat(p)
            out[p] = (st.st_ino, st.st_mtime_ns, st.st_size)
    return out


def check_refused(r, pid):
    assert r.returncode != 0, r.stderr
    lines = [line for line in r.stderr.splitlines() if "another udev daemon" in line]
    assert len(lines) == 1 and lines[0].endswith(refusal(pid)), r.stderr
    assert sanitizer_reports(r.stderr) == [], r.stderr


def test_second_daemon_refused(udevd, build, net, kernel_mon, udev_mon, tmp_path):
    ino = os.stat(CONTROL).st_ino
    assert peer_pid() == udevd.pid
    with open(LOCK) as f:
        assert f.read() == "%d\n" % udevd.pid
    # what the start-up repair would remove: a leftover temporary record
    os.makedirs(os.path.dirname(BAIT), exist_ok=True)
    with open(BAIT, "w") as f:
        f.write("bait")
    before = run_udev_state()
    log_at = udevd.log_size()
    rules = "--rules-dir=" + empty_rules(tmp_path)
    for args in ([rules], ["--daemon", rules], ["--debug", rules]):
        r = run_udevd(build, *args)
        check_refused(r, udevd.pid)
    # nothing touched: same socket, bait still there, no file changed
    assert run_udev_state() == before
    assert os.stat(CONTROL).st_ino == ino
    assert os.path.exists(BAIT)
    os.unlink(BAIT)
    # the first one keeps working
    assert udevd.alive()
    assert peer_pid() == udevd.pid
    assert ctrl_ping()
    net.add_veth("sia0", "sib0")
    paths = ["/devices/virtual/net/sia0", "/devices/virtual/net/sib0"]
    kev = kernel_mon.wait_for(devpath_in(paths), count=2, timeout=10)
    uev = udev_mon.wait_for(devpath_in(paths), count=len(kev), timeout=10)
    assert sorted(e.seqnum for e in uev) == sorted(e.seqnum for e in kev)
    assert "another udev daemon" not in udevd.log_since(log_at)


def test_foreign_daemon_refused_stale_socket_replaced(build, tmp_path):
    """A daemon that does not take our lock (systemd-udevd) is recognised by
    its answering socket; a socket nobody serves any more is replaced."""
    reset_run_udev()
    os.makedirs(RUN_UDEV)
    foreign = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET | socket.SOCK_CLOEXEC)
    foreign.bind(CONTROL)
    foreign.listen(4)
    ino = os.stat(CONTROL).st_ino
    try:
        r = run_udevd(build, "--rules-dir=" + empty_rules(tmp_path))
        check_refused(r, os.getpid())
        assert os.stat(CONTROL).st_ino == ino
    finally:
        foreign.close()     # the socket file stays: stale now
    assert stat.S_ISSOCK(os.stat(CONTROL).st_mode)
    log = tmp_path / "udevd.log"
    with open(log, "wb") as f:
        p = subprocess.Popen([os.path.join(build, "udevd"), "--debug",
                              "--rules-dir=" + empty_rules(tmp_path)],
                             stdin=subprocess.DEVNULL, stdout=f, stderr=f, env=run_udevd_env())
    try:
        assert wait_until(lambda: ctrl_ping(timeout=1), 20), log.read_text(errors="replace")
        assert peer_pid() == p.pid
        assert os.stat(CONTROL).st_ino != ino
    finally:
        p.send_signal(signal.SIGTERM)
        rc = p.wait(30)
    text = log.read_text(errors="replace")
    assert rc == 0, text[-3000:]
    assert sanitizer_reports(text) == [], text[-3000:]
    assert not os.path.exists(CONTROL)


def test_daemon_mode_holds_the_lock(build, udevadm, tmp_path):
    """--daemon: the process that lives on holds the lock and is named."""
    reset_run_udev()
    log = tmp_path / "udevd-daemon.log"
    with open(log, "wb") as f:
        r = subprocess.run([os.path.join(build, "udevd"), "--debug", "--daemon",
                            "--rules-dir=" + empty_rules(tmp_path)],
                           stdin=subprocess.DEVNULL, stdout=f, stderr=f, timeout=30,
                           env=run_udevd_env())
    assert r.returncode == 0, log.read_text(errors="replace")
    pid = peer_pid()
    try:
        with open(LOCK) as f:
            assert f.read() == "%d\n" % pid
        check_refused(run_udevd(build, "--daemon", "--rules-dir=" + empty_rules(tmp_path)),
                      pid)
        r = run([udevadm, "control", "--exit"], timeout=30)
        assert r.returncode == 0, r.stderr
        # not our child: init reaps it; gone or a zombie
        assert process_gone(pid) or wait_until(lambda: process_gone(pid), 0.1, 0.002)
    finally:
        if not wait_until(lambda: process_gone(pid), 20):
            os.kill(pid, signal.SIGKILL)   # the daemon this test started
    text = log.read_text(errors="replace")
    assert sanitizer_reports(text) == [], text[-3000:]
    assert parse_stats(text) is not None, text[-3000:]
    assert not os.path.exists(CONTROL)


SLOW_RULES = 'ACTION=="add", SUBSYSTEM=="net", KERNEL=="xwa0", RUN+="/bin/sleep %s"\n'


def slow_daemon(udevd_factory, net, kernel_mon, tmp_path, seconds):
    """A daemon busy with an event whose RUN program sleeps `seconds`."""
    rdir = tmp_path / "rules.d"
    rdir.mkdir()
    (rdir / "50-slow.rules").write_text(SLOW_RULES % seconds)
    d = udevd_factory("--children-max=8", "--rules-dir=%s" % rdir)
    net.add_veth("xwa0", "xwb0")
    assert kernel_mon.wait_for(devpath_in(["/devices/virtual/net/xwa0"]), timeout=10)
    assert wait_until(lambda: os.path.exists(QUEUE_FLAG), 5)
    time.sleep(0.3)       # the RUN program is sleeping now
    return d


@pytest.mark.parametrize("client", ["udevadm", "raw"])
def test_control_exit_waits_for_the_daemon(client, udevadm, udevd_factory, net, kernel_mon,
                                           tmp_path):
    """`udevadm control --exit`, and any client that sends EXIT and END and
    waits for the close, returns only once the daemon process is gone.
    (systemd's udevadm sends EXIT alone and does not wait.)"""
    d = slow_daemon(udevd_factory, net, kernel_mon, tmp_path, 2)
    t0 = time.monotonic()
    if client == "udevadm":
        r = run([udevadm, "control", "--exit"], timeout=30)
        assert r.returncode == 0, r.stderr
    else:
        assert ctrl_request([ctrl_message(CTRL_EXIT)], timeout=20)
    elapsed = time.monotonic() - t0
    # returned: the daemon is gone (a zombie until we reap it), its socket
    # and queue flag removed before
    gone = process_gone(d.pid) or wait_until(lambda: process_gone(d.pid), 0.1, 0.002)
    assert gone, "udevadm control --exit returned %.2fs after the request while udevd " \
        "(PID %d) still runs" % (elapsed, d.pid)
    assert elapsed > 1.0, "the RUN program takes 2 s, udevadm returned after %.2fs" % elapsed
    assert not os.path.exists(CONTROL)
    assert not os.path.exists(QUEUE_FLAG)
    assert d.wait_exit(timeout=5) == 0
    d.check_clean_exit()


def test_control_exit_timeout(udevd_factory, udevadm, net, kernel_mon, tmp_path):
    """--timeout bounds the wait (failure, exit status 1); 0 does not wait."""
    d = slow_daemon(udevd_factory, net, kernel_mon, tmp_path, 3)
    t0 = time.monotonic()
    r = run([udevadm, "control", "--exit", "--timeout=1"], timeout=30)
    elapsed = time.monotonic() - t0
    assert r.returncode == 1, r.stderr
    assert "Failed to wait for daemon to reply" in r.stderr
    assert 0.9 < elapsed < 2.5, elapsed
    assert d.alive()
    # a second request while it exits: not waited for with --timeout=0
    t0 = time.monotonic()
    r = run([udevadm, "control", "--exit", "--timeout=0"], timeout=30)
    assert time.monotonic() - t0 < 1.0
    assert d.wait_exit(timeout=10) == 0
    d.check_clean_exit()
    assert not os.path.exists(CONTROL)


# ---------------------------------------------------------------- restart loop

RESTARTS = 50


STORM_PAIRS = 8
# the events of one storm device take a while: most exits wait for one
# (an exit drains the queue), which is when the old race struck
SLOW_EXIT = ("--debug-event-delay=100", "--debug-event-delay-match=/devices/virtual/net/rsa0")
STORM_RULES = 'ACTION=="add", SUBSYSTEM=="net", KERNEL=="rsa*", RUN+="/bin/true"\n'


class Storm:
    """Bursts of veth pairs added and deleted in a loop (`ip -batch`, then
    `ip link del group`): real kernel events all along."""

    def __init__(self, net):
        self.net = net
        self.stop = threading.Event()
        self.rounds = 0
        self.errors = []
        self.paths = ["/devices/virtual/net/rs%s%d" % (s, i) for s in "ab"
                      for i in range(STORM_PAIRS)]
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stop.is_set():
            try:
                self.net.add_veths([("rsa%d" % i, "rsb%d" % i) for i in range(STORM_PAIRS)])
            except subprocess.CalledProcessError as e:
                self.errors.append(str(e))
            self.net.delete_all()
            self.rounds += 1

    def finish(self):
        self.stop.set()
        self.thread.join(60)
        self.net.delete_all()


def start_no_reset(build, logpath, rules):
    """A udevd started over /run/udev as it is (no reset: the previous
    daemon's leftovers, if any, stay). Returns (Udevd, ready): ready once it
    wrote its --ready-fd line, False if it exited before."""
    d = Udevd(build, logpath, ["--children-max=8", "--rules-dir=" + rules] + list(SLOW_EXIT),
              debug=False)
    rfd, wfd = os.pipe2(os.O_CLOEXEC)
    d.logfile = open(logpath, "ab")
    d.cmd = [os.path.join(build, "udevd")] + d.args + ["--ready-fd=%d" % wfd]
    try:
        d.proc = subprocess.Popen(d.cmd, stdin=subprocess.DEVNULL, stdout=d.logfile,
                                  stderr=d.logfile, env=run_udevd_env(), pass_fds=(wfd,))
    finally:
        os.close(wfd)
    with os.fdopen(rfd, "rb") as r:
        ready = r.readline() == b"\n"   # EOF: the daemon exited before ready
    return d, ready


def test_restart_loop_under_event_storm(request, build, udevadm, net, kernel_mon, udev_mon,
                                        tmp_path):
    """50 times `udevadm control --exit`, then a new udevd at once, while
    veth pairs come and go. Each new daemon must start (the old one is gone
    when udevadm returns), and the old one must not remove the new one's
    socket or queue flag; no kernel event is broadcast twice (two daemons
    never listen at once), and every daemon processes what it received."""
    reset_run_udev()
    rules = tmp_path / "rules.d"
    rules.mkdir()
    (rules / "50-storm.rules").write_text(STORM_RULES)
    rules = str(rules)
    daemons = []
    request.node.tudev_daemons = daemons
    storm = None
    t_start = time.monotonic()
    try:
        d, ready = start_no_reset(build, str(tmp_path / "udevd-0.log"), rules)
        daemons.append(d)
        assert ready, d.log_tail()
        storm = Storm(net)
        in_storm = devpath_in(storm.paths)
        mark = udev_mon.mark()
        for i in range(1, RESTARTS + 1):
            old = daemons[-1]
            # exit while busy: not before this daemon broadcast storm events
            assert udev_mon.wait_for(in_storm, timeout=10, since=mark), \
                "restart %d: daemon %d broadcasts nothing" % (i, old.pid)
            r = run([udevadm, "control", "--exit"], timeout=60)
            assert r.returncode == 0, "restart %d: %s" % (i, r.stderr)
            # returned: the old daemon is gone (50 ms for the kernel to finish
            # the exit it has begun), and a new one starts at once
            gone = process_gone(old.pid) or \
                wait_until(lambda: process_gone(old.pid), 0.05, 0.002)
            mark = udev_mon.mark()
            d, ready = start_no_reset(build, str(tmp_path / ("udevd-%d.log" % i)), rules)
            daemons.append(d)
            assert ready, "restart %d: the new daemon did not start:\n%s" % (i, d.log_tail())
            assert old.wait_exit(timeout=10) == 0
            # the old one, gone now, left the new one's socket alone
            assert os.path.exists(CONTROL), "restart %d: socket removed" % i
            assert peer_pid() == d.pid, "restart %d" % i
            assert gone, "restart %d: control --exit returned while PID %d still ran" % (
                i, old.pid)
        storm.finish()
        assert storm.errors == [], storm.errors[:3]
        assert storm.rounds >= 2
        last = daemons[-1]
        # the last daemon serves the socket, nobody unlinked it
        assert peer_pid() == last.pid
        assert ctrl_ping()
        # and it processes events to the end: a new device, settled by UUID
        mark = udev_mon.mark()
        r = run(["ip", "link", "add", "rla0", "type", "veth", "peer", "name", "rlb0"])
        assert r.returncode == 0, r.stderr
        try:
            assert udev_mon.wait_for(devpath_in(["/devices/virtual/net/rla0"]), timeout=10,
                                     since=mark)
            r = run([udevadm, "trigger", "--settle", "--action=change",
                     "/sys/class/net/rla0"], timeout=30)
            assert r.returncode == 0, r.stderr
        finally:
            run(["ip", "link", "del", "rla0"])
        r = run([udevadm, "settle", "--timeout=10"])
        assert r.returncode == 0, r.stderr
        assert not os.path.exists(QUEUE_FLAG)
        last.stop()
        assert not os.path.exists(CONTROL), "stale socket after the last daemon exited"
    finally:
        if storm:
            storm.finish()
        for d in daemons:
            if d.alive():
                d.proc.send_signal(signal.SIGTERM)
                d.wait_exit(timeout=30)
    elapsed = time.monotonic() - t_start
    kev = kernel_mon.matching(in_storm)
    uev = udev_mon.matching(in_storm)
    print("%d restarts, %d storm rounds in %.1fs: %d kernel events, %d broadcast"
          % (RESTARTS, storm.rounds, elapsed, len(kev), len(uev)))
    # never two daemons listening at once: no event broadcast twice
    seqnums = [e.seqnum for e in uev]
    assert len(seqnums) == len(set(seqnums)), "events broadcast twice: %s" % sorted(
        {n for n in seqnums if seqnums.count(n) > 1})[:20]
    assert set(seqnums) <= {e.seqnum for e in kev}
    # every instance processed every event it received: the exit request
    # drains the queue, nothing is dropped
    for i, d in enumerate(daemons):
        text = d.log()
        assert sanitizer_reports(text) == [], text[-3000:]
        st = parse_stats(text)
        assert st is not None, "udevd #%d: no stats line:\n%s" % (i, text[-3000:])
        assert st["dropped_at_exit"] == 0, (i, st)
        assert st["processed"] + st["failed"] == st["received"], (i, st)
