# SPDX-License-Identifier: GPL-2.0-or-later
"""Our udevadm's command line (global options, control, settle, monitor):
messages and exit codes as systemd 252's, settle --exit-if-exists, and
`monitor --property` output identical to systemd's udevadm for the same
events of tudev."""

import os
import re
import signal
import threading
import time

import pytest

from tudevlib import QUEUE_FLAG, LineProcess, as_nobody, devpath_in, run, trigger_uevent

LOG_PREFIX = re.compile(r"^\[ *\d+\.\d+\] \w+: ", re.M)


def stderr_text(r):
    """stderr without our logger's "[time] level: " prefix."""
    return LOG_PREFIX.sub("", r.stderr)


def test_version(udevadm):
    for args in (["--version"], ["-V"], ["version"], ["control", "-V"], ["settle", "--version"]):
        r = run([udevadm] + args)
        assert (r.returncode, r.stdout) == (0, "252\n"), args


@pytest.mark.parametrize("args,msg", [
    ([], "Command verb required."),
    (["foo"], "Unknown command verb foo."),
    (["-x"], "invalid option -- 'x'"),
    (["info"], "A device name or path is required"),
    (["control"], "This command expects one or more options."),
    (["control", "-p", "FOO"], "expect <KEY>=<value> instead of 'FOO'"),
    (["control", "-l", "loud"], "Failed to parse log level 'loud'"),
    (["control", "-m", "x"], "Failed to parse maximum number of children 'x'"),
    (["control", "-t", "x", "--ping"], "Failed to parse timeout value 'x'"),
    (["control", "--ping", "extra"], "Extraneous argument: extra"),
    (["control", "--bogus"], "control: unrecognized option '--bogus'"),
    (["settle", "-s", "1"], "Option -s no longer supported."),
    (["settle", "--seq-end=1"], "Option -e no longer supported."),
    (["settle", "-q"], "Option -q no longer supported."),
    (["monitor", "--bogus"], "monitor: unrecognized option '--bogus'"),
])
def test_errors(udevadm, sd_udevadm, args, msg):
    r = run([udevadm] + args)
    assert r.returncode == 1
    assert msg in r.stderr
    ref = run([sd_udevadm] + args)
    assert ref.returncode == 1
    assert stderr_text(r).replace(udevadm, "U") == ref.stderr.replace(sd_udevadm, "U")


def test_no_daemon(udevadm):
    # root and no daemon: nothing to wait for
    t = time.monotonic()
    r = run([udevadm, "settle"])
    assert r.returncode == 0 and time.monotonic() - t < 1.0
    r = run([udevadm, "control", "--ping"])
    assert r.returncode == 1
    assert "Failed to send a ping message:" in r.stderr
    # no request at all: nothing to connect for
    assert run([udevadm, "control", "--timeout=1"]).returncode == 0
    r = run(as_nobody([udevadm, "settle"]))
    assert r.returncode == 1
    assert "systemd-udevd is not running." in r.stderr
    r = run(as_nobody([udevadm, "control", "--reload"]))
    assert r.returncode == 1
    assert "Need to be root." in r.stderr


def test_settle_exit_if_exists(udevd, udevadm, tmp_path):
    assert run([udevadm, "control", "--stop-exec-queue"]).returncode == 0
    trigger_uevent("/sys/class/net/lo")
    assert run([udevadm, "control", "--ping"]).returncode == 0
    assert os.path.exists(QUEUE_FLAG)
    try:
        r = run([udevadm, "settle", "--timeout=1"])
        assert r.returncode == 1
        assert "Timed out for waiting the udev queue being empty." in r.stderr
        assert run([udevadm, "settle", "-t", "0"]).returncode == 1

        # the file exists already
        r = run([udevadm, "settle", "-t", "5", "-E", "/run/udev/control"])
        assert r.returncode == 0
        # the file appears later, in /run/udev and elsewhere: noticed at once
        for path in ("/run/udev/settle-flag", str(tmp_path / "flag")):
            threading.Timer(0.5, lambda p=path: open(p, "w").close()).start()
            t = time.monotonic()
            r = run([udevadm, "settle", "--timeout=10", "--exit-if-exists=" + path])
            took = time.monotonic() - t
            assert r.returncode == 0, r.stderr
            assert 0.4 <= took < 2.0, took
            os.unlink(path)
    finally:
        threading.Timer(0.5, lambda: run([udevadm, "control", "-S"])).start()
    t = time.monotonic()
    r = run([udevadm, "settle", "-t", "20"])
    assert r.returncode == 0, r.stderr
    assert time.monotonic() - t >= 0.4
    assert not os.path.exists(QUEUE_FLAG)


def test_control_requests_reach_daemon(udevd, udevadm):
    off = udevd.log_size()
    r = run([udevadm, "control", "--ping", "-p", "FOO=bar", "--env=BAZ=", "-m", "3",
             "-R", "-S", "-s", "--log-priority=debug"])
    assert r.returncode == 0, r.stderr
    log = udevd.log_since(off)
    assert "FOO=bar" in log
    assert run([udevadm, "control", "-S", "-t", "0"]).returncode == 0
    assert run([udevadm, "control", "--exit"]).returncode == 0
    assert udevd.wait_exit(timeout=20) == 0


def start_monitor(tool, tmp_path, name, *args):
    m = LineProcess([tool, "monitor"] + list(args), stderr_path=str(tmp_path / (name + ".err")))
    assert m.wait_line(lambda l: l == "", timeout=10) is not None, m.text_lines()
    return m


def blocks(lines, keep):
    """Event blocks (event line + properties) with the time stamp removed,
    only those whose event line satisfies keep(); sorted (the order in which
    two sockets are read may differ)."""
    out, cur = [], None
    for l in lines[4:] if lines[:1] == ["monitor will print the received events for:"] else lines:
        m = re.match(r"^(KERNEL|UDEV  )\[\d+\.\d{6}\] (.*)$", l)
        if m:
            cur = [m.group(1) + m.group(2)]
            if keep(l):
                out.append(cur)
        elif cur is not None and l != "":
            cur.append(l)
    return sorted(out)


@pytest.mark.parametrize("args", [["-p"], ["-p", "-k", "-s", "block/disk"],
                                  ["--udev", "--property", "--subsystem-match=net"],
                                  ["-e", "-t", "systemd"]])
def test_monitor_same_as_systemd(udevd, udevadm, sd_udevadm, net, loops, udev_mon, tmp_path,
                                 args):
    ours = start_monitor(udevadm, tmp_path, "ours", *args)
    ref = start_monitor(sd_udevadm, tmp_path, "ref", *args)
    try:
        # the header (block events of other activity reach every namespace and
        # may already follow it: compare up to the first empty line only)
        def header(lines):
            return lines[:lines.index("") + 1] if "" in lines else lines
        assert header(ours.text_lines()) == header(ref.text_lines())
        time.sleep(0.3)
        a, b = net.add_veth("mca0", "mcb0")
        idx = loops.add()
        paths = [a, b, loops.devpath(idx)]
        udev_mon.wait_for(devpath_in(paths), count=3)
        loops.remove(idx)
        net.delete_all()
        time.sleep(1.0)
    finally:
        assert ours.stop(signal.SIGINT) == 0
        assert ref.stop(signal.SIGTERM) == 0

    def keep(line):
        return any(p + " " in line for p in paths) or "/queues/" in line
    assert blocks(ours.text_lines(), keep) == blocks(ref.text_lines(), keep)
    if "-t" not in args:
        assert blocks(ours.text_lines(), keep)
