# SPDX-License-Identifier: GPL-2.0-or-later
"""Socket activation (udevd(8) "SOCKET ACTIVATION"): udevd started as
systemd starts it from systemd-udevd-control.socket and
systemd-udevd-kernel.socket. The test plays the service manager: it binds
the control socket and the uevent socket itself, and listen_launcher.py
hands them to udevd as fds 3, 4, ... with LISTEN_FDS and LISTEN_PID.

The daemon serves the passed sockets (ping, real veth events), leaves the
control socket's path alone (never unlinked or replaced, not at exit
either), passes neither the sockets nor the LISTEN_* variables to its
children, and closes a passed fd that is neither socket. Because the test
holds the sockets across a restart, as systemd does, the kernel's events
and a client's ping sent while no daemon runs are served by the next one."""

import os
import shlex
import signal
import socket
import subprocess
import sys
import time

import pytest

from tudevlib import (CONTROL, QUEUE_FLAG, RUN_UDEV, Udevd, devpath_in, reset_run_udev, run)

LAUNCHER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "listen_launcher.py")
NETLINK_KOBJECT_UEVENT = 15


class ActivatedUdevd(Udevd):
    """Udevd started through listen_launcher.py with `fds` passed in order."""

    def __init__(self, build, logpath, fds, args=(), listen_pid=None):
        super().__init__(build, logpath, args, debug=True)
        self.fds = list(fds)
        self.listen_pid = listen_pid

    def start(self, timeout=30.0, wait_ready=True):
        empty = os.path.join(os.path.dirname(self.logpath), "no-rules.d")
        os.makedirs(empty, exist_ok=True)
        launcher = [sys.executable, LAUNCHER]
        if self.listen_pid is not None:
            launcher.append("--pid=%d" % self.listen_pid)
        launcher += [",".join(str(fd) for fd in self.fds), "--"]
        cmd = (launcher + shlex.split(os.environ.get("TUDEV_WRAPPER", "")) +
               [os.path.join(self.build, "udevd"), "--debug"] + list(self.args) +
               ["--rules-dir=" + empty])
        self.cmd = cmd
        self.logfile = open(self.logpath, "ab")
        env = dict(os.environ)
        env.setdefault("SYSTEMD_LOG_TARGET", "console")
        env.setdefault("ASAN_OPTIONS", "abort_on_error=0:detect_leaks=1")
        env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
        env.setdefault("TSAN_OPTIONS", "halt_on_error=0:second_deadlock_stack=1")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self.logfile,
                                     stderr=self.logfile, env=env, pass_fds=self.fds)
        if wait_ready:
            self.wait_ready(timeout)
        return self


@pytest.fixture
def activate(request, build, tmp_path):
    """activate(fds, *args, listen_pid=None) -> ActivatedUdevd; stopped (and
    checked for a clean exit) at teardown."""
    daemons = []
    request.node.tudev_daemons = daemons

    def start(fds, *args, listen_pid=None, wait_ready=True):
        for d in daemons:
            assert not d.alive(), "one daemon at a time"
        d = ActivatedUdevd(build, str(tmp_path / ("udevd-%d.log" % len(daemons))), fds, args,
                           listen_pid)
        daemons.append(d)
        return d.start(wait_ready=wait_ready)

    yield start
    errors = []
    for d in daemons:
        if d.proc is not None:
            try:
                d.stop()
            except AssertionError as e:
                errors.append(str(e))
    if errors:
        pytest.fail("\n\n".join(errors), pytrace=False)


def control_socket():
    """Bound and listening at /run/udev/control, mode 0600, as
    systemd-udevd-control.socket makes it."""
    os.makedirs(RUN_UDEV, exist_ok=True)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET | socket.SOCK_CLOEXEC)
    old = os.umask(0o177)
    try:
        s.bind(CONTROL)
    finally:
        os.umask(old)
    s.listen(64)
    return s


def uevent_socket():
    """NETLINK_KOBJECT_UEVENT bound to group 1, with credentials, as
    systemd-udevd-kernel.socket makes it."""
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW | socket.SOCK_CLOEXEC,
                      NETLINK_KOBJECT_UEVENT)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 * 1024 * 1024)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
    s.bind((0, 1))
    return s


def children(pid):
    out = []
    for tid in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/children" % (pid, tid)) as f:
            out += [int(x) for x in f.read().split()]
    return out


def socket_inodes(pid):
    out = set()
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            target = os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except OSError:
            continue
        if target.startswith("socket:["):
            out.add(int(target[len("socket:["):-1]))
    return out


def add_pair(net, a, b):
    net.add_veths([(a, b)])
    return ["/devices/virtual/net/" + a, "/devices/virtual/net/" + b]


def wait_processed(kernel_mon, udev_mon, paths, since=0):
    time.sleep(0.1)
    kev = kernel_mon.matching(devpath_in(paths))
    assert kev, "no kernel events for %s" % paths
    uev = udev_mon.wait_for(devpath_in(paths), count=len(kev), timeout=60, since=since)
    assert sorted(e.seqnum for e in uev) == sorted(e.seqnum for e in kev)
    return uev


def test_passed_sockets_are_served_and_left_in_place(activate, udevadm, net, kernel_mon,
                                                     udev_mon):
    reset_run_udev()
    ctl, nl = control_socket(), uevent_socket()
    junk_r, junk_w = os.pipe()
    try:
        ino = os.stat(CONTROL).st_ino
        d = activate([nl.fileno(), ctl.fileno(), junk_r])
        log = d.log()
        assert "Using the uevent socket passed by the service manager (fd 3)" in log, log
        assert "Using the control socket passed by the service manager (fd 4)" in log, log
        assert "Passed fd 5 is neither the control socket" in log, log
        # the service manager's socket, not replaced
        assert os.stat(CONTROL).st_ino == ino
        assert os.stat(CONTROL).st_mode & 0o777 == 0o600

        r = run([udevadm, "control", "--ping", "--timeout=10"])
        assert r.returncode == 0, r.stderr
        paths = add_pair(net, "saa0", "sab0")
        net.delete_all()
        wait_processed(kernel_mon, udev_mon, paths)

        # nothing passed on to the daemon's children (the exec helper)
        kids = children(d.pid)
        assert kids, "udevd has no exec helper child"
        ours = {os.fstat(ctl.fileno()).st_ino, os.fstat(nl.fileno()).st_ino}
        for k in kids:
            with open("/proc/%d/environ" % k, "rb") as f:
                env = f.read().split(b"\0")
            assert not [v for v in env if v.startswith(b"LISTEN_")], (k, env)
            assert not socket_inodes(k) & ours, k
        # the daemon holds both, and the junk pipe no more
        assert ours <= socket_inodes(d.pid)
        assert not os.path.exists("/proc/%d/fd/5" % d.pid) or \
            not os.readlink("/proc/%d/fd/5" % d.pid).startswith("pipe:")

        d.stop()
        # the path stays for the next start, with the same socket behind it
        assert os.stat(CONTROL).st_ino == ino
        assert not os.path.exists(QUEUE_FLAG)
    finally:
        ctl.close()
        nl.close()
        os.close(junk_r)
        os.close(junk_w)


def test_events_and_clients_wait_for_the_next_start(activate, udevadm, net, kernel_mon,
                                                    udev_mon):
    reset_run_udev()
    ctl, nl = control_socket(), uevent_socket()
    ping = None
    try:
        d = activate([ctl.fileno(), nl.fileno()])
        d.stop()
        assert not d.alive()

        # No daemon: the kernel's events queue in the held uevent socket, a
        # client's connection in the held control socket's backlog.
        paths = add_pair(net, "sac0", "sad0")
        kev = []
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and len(kev) < 2:
            kev = kernel_mon.matching(devpath_in(paths))
            time.sleep(0.05)
        assert len(kev) >= 2, kev
        assert udev_mon.quiet(devpath_in(paths), 0.3) == []
        ping = subprocess.Popen([udevadm, "control", "--ping", "--timeout=60"],
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        time.sleep(0.5)
        assert ping.poll() is None, "ping returned without a daemon: %r" % (
            ping.communicate(),)

        d2 = activate([ctl.fileno(), nl.fileno()], wait_ready=False)
        out, err = ping.communicate(timeout=60)
        assert ping.returncode == 0, err
        wait_processed(kernel_mon, udev_mon, paths)
        assert "another udev daemon" not in d2.log()
    finally:
        if ping is not None and ping.poll() is None:
            ping.send_signal(signal.SIGKILL)
            ping.wait()
        ctl.close()
        nl.close()


def test_fds_of_another_process_are_not_taken(activate, udevadm, net, kernel_mon, udev_mon):
    """LISTEN_PID names another process: the fds are left alone and the
    daemon makes its own sockets (and removes its control socket at exit)."""
    reset_run_udev()
    nl = uevent_socket()
    try:
        d = activate([nl.fileno()], listen_pid=1)
        log = d.log()
        assert "passed by the service manager" not in log, log
        r = run([udevadm, "control", "--ping", "--timeout=10"])
        assert r.returncode == 0, r.stderr
        paths = add_pair(net, "sae0", "saf0")
        net.delete_all()
        wait_processed(kernel_mon, udev_mon, paths)
        d.stop()
        assert not os.path.exists(CONTROL)
    finally:
        nl.close()
