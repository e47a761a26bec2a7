# SPDX-License-Identifier: GPL-2.0-or-later
"""Daemon life cycle: --daemon readiness, start failure, SIGTERM with events
in flight, and a burst of real events (every one broadcast exactly once)."""

import os
import signal
import socket
import struct
import subprocess
import threading
import time

from tudevlib import (CONTROL, CTRL_EXIT, Udevd, ctrl_message, ctrl_ping, ctrl_request,
                      devpath_in, parse_stats, reset_run_udev, sanitizer_reports, wait_until)


def peer_pid(path=CONTROL):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET | socket.SOCK_CLOEXEC)
    try:
        s.connect(path)
        pid, _, _ = struct.unpack("=iII", s.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                                       12))
        return pid
    finally:
        s.close()


def process_gone(pid):
    """True once the process has exited (a zombie not yet reaped by init counts)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(") ", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


def test_daemon_mode_ready_on_return(build, net, udev_mon, tmp_path):
    reset_run_udev()
    log = tmp_path / "udevd-daemon.log"
    with open(log, "wb") as f:
        # an empty --rules-dir: otherwise the host's installed rules (99-systemd.rules runs
        # systemd-sysctl for each interface) would apply and the exit wait for them
        empty = tmp_path / "no-rules.d"
        empty.mkdir()
        r = subprocess.run([os.path.join(build, "udevd"), "--debug", "--daemon",
                            "--children-max=8", "--rules-dir=%s" % empty],
                           stdin=subprocess.DEVNULL, stdout=f, stderr=f,
                           timeout=30, env=dict(os.environ, SYSTEMD_LOG_TARGET="console"))
    assert r.returncode == 0, log.read_text()
    # ready when the parent returned: no retry
    assert os.path.exists(CONTROL)
    pid = peer_pid()
    assert pid > 0 and os.path.exists("/proc/%d" % pid)
    try:
        assert ctrl_ping(timeout=5)
        net.add_veth("dma0", "dmb0")
        got = udev_mon.wait_for(devpath_in(["/devices/virtual/net/dma0"]), count=1, timeout=10)
        assert got, "the daemonized udevd did not process events"
    finally:
        ctrl_request([ctrl_message(CTRL_EXIT)], timeout=10)
        gone = wait_until(lambda: process_gone(pid), 20)
        if not gone:
            os.kill(pid, signal.SIGKILL)   # the daemon this test started
    assert gone, "udevd --daemon did not exit on 'control --exit':\n" + \
        log.read_text(errors="replace")[-6000:]
    text = log.read_text(errors="replace")
    assert sanitizer_reports(text) == [], text[-3000:]
    assert parse_stats(text) is not None, text[-3000:]


def test_bad_option_fails(build):
    r = subprocess.run([os.path.join(build, "udevd"), "--no-such-option"],
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=30,
                       env=dict(os.environ, SYSTEMD_LOG_TARGET="console"))
    assert r.returncode != 0
    assert sanitizer_reports(r.stderr.decode(errors="replace")) == []


def test_sigterm_with_events_in_flight(build, net, kernel_mon, tmp_path):
    d = Udevd(build, str(tmp_path / "udevd.log"),
              ["--children-max=8", "--debug-event-delay=1000",
               "--debug-event-delay-match=/devices/virtual/net/tf[ab]*"])
    d.start()
    try:
        net.add_veths([("tfa%d" % i, "tfb%d" % i) for i in range(4)])
        assert kernel_mon.wait_for(devpath_in(["/devices/virtual/net/tfa3"]), timeout=5)
        time.sleep(0.2)              # workers are sleeping in the delayed events now
        t = time.monotonic()
        d.signal(signal.SIGTERM)
        d.wait_exit(timeout=20)
        assert time.monotonic() - t < 10
    finally:
        if d.alive():
            d.proc.kill()
            d.proc.wait()
    d.check_clean_exit()


def test_burst_every_event_broadcast_once(udevd_factory, net, loops, kernel_mon, udev_mon):
    udevd_factory()   # default children-max
    pairs = [("bsa%d" % i, "bsb%d" % i) for i in range(24)]
    net_paths = ["/devices/virtual/net/" + n for p in pairs for n in p]
    idx = []
    adders = [threading.Thread(target=lambda: idx.append(loops.add())) for _ in range(8)]
    for t in adders:
        t.start()
    net.add_veths(pairs)
    for t in adders:
        t.join()
    loop_paths = [loops.devpath(i) for i in idx] + [loops.bdi_devpath(i) for i in idx]
    mine = devpath_in(net_paths + loop_paths)
    time.sleep(0.3)
    kev = kernel_mon.matching(mine)
    assert len(kev) >= 24 * 4 + 8 * 2
    uev = udev_mon.wait_for(mine, count=len(kev), timeout=30)
    time.sleep(0.3)
    uev = udev_mon.matching(mine)
    assert sorted(e.seqnum for e in uev) == sorted(e.seqnum for e in kev)
    for e in uev:
        assert e.errors == [], e
    for dev in {e.devpath for e in kev}:
        assert [e.seqnum for e in uev if e.devpath == dev] == \
            [e.seqnum for e in kev if e.devpath == dev], dev
    assert kernel_mon.enobufs == 0 and udev_mon.enobufs == 0
    for i in idx:
        assert os.path.isfile("/run/udev/data/b7:%d" % i)


def thread_names(pid):
    """{tid: comm} of every thread of the process."""
    names = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
                names[int(tid)] = f.read().strip()
        except OSError:
            pass   # the thread ended meanwhile
    return names


def test_thread_names(udevd_factory, net, udev_mon):
    """ps -L / top -H tell the threads apart; the process keeps its name."""
    d = udevd_factory("--children-max=4")
    net.add_veth("tna0", "tnb0")
    assert udev_mon.wait_for(devpath_in(["/devices/virtual/net/tna0",
                                         "/devices/virtual/net/tnb0"]), count=2, timeout=10)
    names = thread_names(d.pid)
    with open("/proc/%d/comm" % d.pid) as f:
        assert f.read().strip() == "udevd"
    assert names[d.pid] == "udevd"          # the main thread
    others = sorted(n for tid, n in names.items() if tid != d.pid)
    assert others.count("udevd-listen") == 1, names
    assert others.count("udevd-watch") == 1, names
    assert 1 <= others.count("udevd-worker") <= 4, names
    # ThreadSanitizer's runtime has a background thread of its own, which
    # keeps the name of the thread that made it
    with open("/proc/%d/maps" % d.pid) as f:
        tsan = "libtsan" in f.read()
    assert others.count("udevd") == (1 if tsan else 0), names
    assert set(others) <= {"udevd", "udevd-listen", "udevd-watch", "udevd-worker"}, names
