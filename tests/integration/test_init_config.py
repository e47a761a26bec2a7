# SPDX-License-Identifier: GPL-2.0-or-later
"""Init integration and configuration sources: readiness through --ready-fd
(s6 style) and $NOTIFY_SOCKET (systemd, without libsystemd), and the
precedence defaults < udev.conf < command line < kernel command line
($TUDEV_UDEV_CONF and $SYSTEMD_PROC_CMDLINE stand in for /etc/udev/udev.conf
and /proc/cmdline)."""

import os
import select
import signal
import socket
import subprocess
import time

import tudevlib


def status_from_notify(sock, timeout=20.0):
    r, _, _ = select.select([sock], [], [], timeout)
    assert r, "no notification on NOTIFY_SOCKET"
    return sock.recv(4096).decode()


def start_with_notify(udevd_factory, monkeypatch, tmp_path, *args, conf=None, cmdline=None):
    path = str(tmp_path / "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    monkeypatch.setenv("NOTIFY_SOCKET", path)
    if conf is not None:
        conf_path = tmp_path / "udev.conf"
        conf_path.write_text(conf)
        monkeypatch.setenv("TUDEV_UDEV_CONF", str(conf_path))
    monkeypatch.setenv("SYSTEMD_PROC_CMDLINE", cmdline or "quiet")
    d = udevd_factory(*args)
    msg = status_from_notify(sock)
    return d, sock, msg


def test_notify_ready_and_stopping(udevd_factory, monkeypatch, tmp_path):
    d, sock, msg = start_with_notify(udevd_factory, monkeypatch, tmp_path, "--children-max=9")
    assert msg.split("\n")[0] == "READY=1"
    assert "STATUS=Processing with 9 children at max" in msg
    d.stop()
    assert status_from_notify(sock, timeout=10) == "STOPPING=1"


def test_udev_conf_sets_defaults(udevd_factory, monkeypatch, tmp_path):
    _, _, msg = start_with_notify(udevd_factory, monkeypatch, tmp_path,
                                  conf="# test\nchildren_max=7\nevent_timeout=\"30\"\n")
    assert "with 7 children" in msg


def test_command_line_beats_udev_conf(udevd_factory, monkeypatch, tmp_path):
    _, _, msg = start_with_notify(udevd_factory, monkeypatch, tmp_path, "--children-max=5",
                                  conf="children_max=7\n")
    assert "with 5 children" in msg


def test_kernel_command_line_beats_everything(udevd_factory, monkeypatch, tmp_path):
    d, _, msg = start_with_notify(udevd_factory, monkeypatch, tmp_path, "--children-max=5",
                                  conf="children_max=7\n",
                                  cmdline="root=/dev/vda1 udev.children_max=3 udev.bogus=1 "
                                          "rd.udev.children_max=11")
    assert "with 3 children" in msg       # rd.* only counts inside an initrd
    assert 'Unknown udev kernel command line option "udev.bogus"' in d.log()


def test_invalid_config_values_are_ignored(udevd_factory, monkeypatch, tmp_path):
    d, _, msg = start_with_notify(udevd_factory, monkeypatch, tmp_path,
                                  conf="children_max=lots\nudev_log=shouty\n",
                                  cmdline="udev.event_timeout=never")
    assert "children at max" in msg        # started with defaults
    log = d.log()
    assert "invalid value for children_max" in log
    assert "Invalid value for kernel command line option udev.event_timeout" in log


def test_ready_fd(build, tmp_path):
    tudevlib.reset_run_udev()
    rfd, wfd = os.pipe()
    log = open(tmp_path / "udevd.log", "wb")
    env = dict(os.environ, SYSTEMD_LOG_TARGET="console", SYSTEMD_PROC_CMDLINE="quiet")
    p = subprocess.Popen([os.path.join(build, "udevd"), "--ready-fd=%d" % wfd],
                         stdout=log, stderr=log, pass_fds=(wfd,), env=env)
    os.close(wfd)
    try:
        r, _, _ = select.select([rfd], [], [], 20)
        assert r, "no readiness on --ready-fd"
        assert os.read(rfd, 16) == b"\n"
        # ready means: the control socket exists and answers
        assert os.path.exists(tudevlib.CONTROL)
        assert tudevlib.ctrl_ping(timeout=5.0)
        # the fd is closed after the notification
        assert os.read(rfd, 16) == b""
    finally:
        p.send_signal(signal.SIGTERM)
        assert p.wait(timeout=30) == 0
        os.close(rfd)


def test_ready_fd_invalid(build, tmp_path):
    p = subprocess.run([os.path.join(build, "udevd"), "--ready-fd=77"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=20,
                       env=dict(os.environ, SYSTEMD_LOG_TARGET="console"))
    assert p.returncode != 0
    assert b"--ready-fd" in p.stdout


def test_blockdev_read_only_spares_loop_devices(udevd_factory, monkeypatch, tmp_path, loops,
                                                udev_mon):
    """udev.blockdev_read_only marks new disks read-only, except stacked and
    memory-backed ones (dm-, md, drbd, loop, nbd, zram) as in systemd: a real
    loop device stays writable, and the daemon says why. (Which names are
    marked is unit-tested: this machine has no disk a test may mark.)"""
    from blocklib import add_loop
    d, _, _ = start_with_notify(udevd_factory, monkeypatch, tmp_path,
                                cmdline="quiet udev.blockdev_read_only")
    since = udev_mon.mark()
    idx, path, node = add_loop(loops)
    got = udev_mon.wait_for(lambda e: e.devpath == path and e.action == "add", since=since,
                            timeout=20)
    assert got, "no udev add event for %s" % path
    with open("/sys%s/ro" % path) as f:
        assert f.read().strip() == "0"
    log = d.log()
    assert "%s: not a device udev.blockdev_read_only marks read-only" % path in log
    assert "marked block device" not in log
