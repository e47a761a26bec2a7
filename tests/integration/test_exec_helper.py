# SPDX-License-Identifier: GPL-2.0-or-later
"""The exec helper inside the daemon: udevd starts it before any thread (a
re-executed, single-threaded, small child named udevd-exec holding only its
own descriptors), notices at once when it is killed, reaps it and starts a new
one while events keep flowing, and takes it down when it exits (also when
udevd itself is killed). PROGRAM / IMPORT{program} / RUN from rules run
through it, with --exec-delay before RUN programs and the timeout signal at
the event's deadline."""

import os
import re
import signal
import time

from tudevlib import Udevd, wait_until

NET = "/devices/virtual/net/"
COMM = "udevd-exec"


def proc_stat(pid):
    """(comm, state, ppid) of pid, or None."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            text = f.read()
    except OSError:
        return None
    comm = text[text.index("(") + 1:text.rindex(")")]
    rest = text[text.rindex(")") + 2:].split()
    return comm, rest[0], int(rest[1])


def helpers_of(ppid):
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        st = proc_stat(int(name))
        if st and st[2] == ppid and st[0] == COMM and st[1] not in ("Z", "X"):
            found.append(int(name))
    return found


def the_helper(ppid, timeout=5.0, not_pid=None):
    def one():
        h = [p for p in helpers_of(ppid) if p != not_pid]
        return h[0] if len(h) == 1 else None
    pid = wait_until(one, timeout)
    assert pid, "no (single) %s child of udevd [%d]: %s" % (COMM, ppid, helpers_of(ppid))
    return pid


def status_field(pid, key):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return line.split()[1]
    return None


def sanitized(pid):
    with open("/proc/%d/maps" % pid) as f:
        maps = f.read()
    return "libasan" in maps or "libtsan" in maps or "libubsan" in maps


def gone(pid):
    st = proc_stat(pid)
    return st is None or st[1] in ("Z", "X")


def fd_targets(pid):
    d = "/proc/%d/fd" % pid
    return sorted(os.readlink(os.path.join(d, fd)) for fd in os.listdir(d))


def test_helper_is_a_lean_child(udevd):
    pid = the_helper(udevd.pid)
    # It names itself first thing, then sets up its loop: wait for that.
    wait_until(lambda: len(fd_targets(pid)) == 6, 5.0)
    # Re-executed: a fresh address space, one thread (TSan adds its own).
    threads = int(status_field(pid, "Threads"))
    tsan = sanitized(pid)
    assert threads == 1 or (tsan and threads <= 2), threads
    if not tsan:
        rss_kib = int(status_field(pid, "VmRSS"))
        assert rss_kib < 8 * 1024, "helper RSS %d KiB" % rss_kib
    # Only its own descriptors: stdio, the request socket, epoll, timerfd.
    targets = fd_targets(pid)
    assert len(targets) == 6, targets
    assert sum(t.startswith("socket:") for t in targets) == 1, targets
    assert "anon_inode:[eventpoll]" in targets and "anon_inode:[timerfd]" in targets, targets
    # All signals blocked, none ignored (programs get a clean slate).
    assert status_field(pid, "SigBlk").strip("0") != ""
    assert int(status_field(pid, "SigIgn"), 16) == 0


def test_helper_killed_is_restarted(udevd, net, udev_mon):
    old = the_helper(udevd.pid)
    os.kill(old, signal.SIGKILL)
    new = the_helper(udevd.pid, timeout=3.0, not_pid=old)
    assert new != old
    assert wait_until(lambda: gone(old), 3.0), "the dead helper was not reaped"
    log = udevd.log()
    assert re.search(r"exec helper \[%d\] died \(killed by signal SIGKILL\)" % old, log), \
        udevd.log_tail()
    assert "exec helper restarted as [%d]" % new in log
    # Events keep flowing.
    net.add_veth("exk0", "exk1")
    got = udev_mon.wait_for(lambda e: e.devpath == NET + "exk0" and e.action == "add")
    assert got and "UDEV_WORKER_FAILED" not in got[0].props


def test_helper_ends_with_udevd(udevd_factory):
    d = udevd_factory("--children-max=4")
    pid = the_helper(d.pid)
    d.stop()
    assert wait_until(lambda: gone(pid), 3.0), "helper [%d] outlived udevd" % pid


def test_helper_ends_when_udevd_is_killed(build, tmp_path):
    d = Udevd(build, str(tmp_path / "udevd.log"), ["--children-max=4"], True)
    d.start()
    try:
        pid = the_helper(d.pid)
    finally:
        d.proc.kill()
        d.wait_exit()
    # End of stream on its request socket: it exits (init reaps it).
    assert wait_until(lambda: gone(pid), 3.0), "helper [%d] outlived a killed udevd" % pid


# ---- programs from rules ----

def write_rules(directory, text):
    os.makedirs(str(directory), exist_ok=True)
    with open(os.path.join(str(directory), "50-exec.rules"), "w") as f:
        f.write(text)


def test_rules_programs_run_in_the_helper(tmp_path, udevd_factory, net, udev_mon):
    rdir = tmp_path / "rules"
    write_rules(rdir, r'''
SUBSYSTEM=="net", ACTION=="add", KERNEL=="exp*", PROGRAM="/bin/sh -c 'cat /proc/$PPID/comm'", ENV{EXP_PARENT}="%c"
SUBSYSTEM=="net", ACTION=="add", KERNEL=="exp*", IMPORT{program}="/bin/sh -c 'echo EXP_FDS=$(ls /proc/self/fd | wc -l)'"
SUBSYSTEM=="net", ACTION=="add", KERNEL=="exp*", RUN+="/bin/sh -c 'date +%%s.%%N > /run/exp-run-%k'"
''')
    d = udevd_factory("--children-max=4", "--rules-dir=%s" % rdir, "--exec-delay=1")
    helper = the_helper(d.pid)
    t0 = time.time()
    net.add_veth("exp0", "exq0")
    got = udev_mon.wait_for(lambda e: e.devpath == NET + "exp0" and e.action == "add",
                            timeout=20)
    assert got, d.log_tail()
    props = got[0].props
    assert props.get("EXP_PARENT") == COMM, props
    # ls itself holds one directory descriptor: 0, 1, 2 and that one.
    assert props.get("EXP_FDS") == "4", props
    # RUN waited --exec-delay=1 first.
    with open("/run/exp-run-exp0") as f:
        ran_at = float(f.read())
    assert ran_at - t0 >= 1.0
    assert the_helper(d.pid) == helper


def test_rules_program_timeout(tmp_path, udevd_factory, net, udev_mon):
    """A PROGRAM that ignores SIGTERM: at the event's deadline it gets the
    timeout signal, SIGKILL 5 s later; the event is abandoned (broadcast as
    failed) at its timeout and the worker carries on afterwards."""
    rdir = tmp_path / "rules"
    write_rules(rdir, r'''
SUBSYSTEM=="net", ACTION=="add", KERNEL=="ext0", PROGRAM="/bin/sh -c 'trap \"\" TERM; sleep 60'", ENV{EXT_NEVER}="1"
''')
    d = udevd_factory("--children-max=4", "--rules-dir=%s" % rdir, "--event-timeout=2")
    t0 = time.monotonic()
    net.add_veth("ext0", "ext1")
    got = udev_mon.wait_for(lambda e: e.devpath == NET + "ext0" and e.action == "add",
                            timeout=20)
    assert got, d.log_tail()
    assert got[0].props.get("UDEV_WORKER_FAILED") == "1"
    assert got[0].props.get("UDEV_WORKER_ERRNO_NAME") == "ETIMEDOUT"
    assert time.monotonic() - t0 < 6
    # The program is killed (2 s + 5 s grace) and the worker gets on with it.
    assert wait_until(lambda: re.search(r"Spawned process .*sleep 60.* timed out after", d.log()),
                      15), d.log_tail()
    assert wait_until(lambda: "result discarded" in d.log(), 5), d.log_tail()
    net.add_veth("ext2", "ext3")
    later = udev_mon.wait_for(lambda e: e.devpath == NET + "ext2" and e.action == "add")
    assert later and "UDEV_WORKER_FAILED" not in later[0].props
