"""Privilege and containment: the modes of everything udevd creates under
/run/udev and /dev (nothing world-writable), the context programs from rules
run in (environment, umask, descriptors, stdin, signals, limits), and NAME=
/ SYMLINK= values that try to leave /dev (`..`, absolute paths, attribute
values holding "/.."), compared with systemd 252's udevadm test.

Expected values are systemd 252's (src/udev/udevd.c, udev-node.c,
udev-event.c, libsystemd/sd-device/device-private.c): umask 022; data files
0644 (01644 with db_persist), tag index entries 0444, the queue flag 0644,
directories 0755, stack-directory .lock files 0600; programs get exactly the
device's properties as environment, stdin /dev/null, only descriptors 0-2,
an empty signal mask, default dispositions, RLIMIT_NOFILE soft limit 1024
and SIGTERM as parent-death signal. tudev's control socket is 0600 (systemd's
own is 0600 when socket-activated, 0755 otherwise)."""

import json
import os
import random
import stat
import subprocess
import time

import pytest

from tudevlib import CONTROL, QUEUE_FLAG, SD_UDEVADM, devpath_in, ifindex, run, wait_until

NET = "/devices/virtual/net/"
RUN_UDEV = "/run/udev"


def write_rules(directory, text, name="50-priv.rules"):
    os.makedirs(str(directory), exist_ok=True)
    path = os.path.join(str(directory), name)
    with open(path, "w") as f:
        f.write(text)
    return path


def mknod_loop(idx):
    """Stand-in for devtmpfs in the sandbox's tmpfs /dev."""
    path = "/dev/loop%d" % idx
    if not os.path.exists(path):
        os.mknod(path, 0o600 | stat.S_IFBLK, os.makedev(7, idx))
    return path


def free_loop_index():
    for _ in range(200):
        idx = random.randint(2000, 60000)
        if not os.path.exists("/sys/devices/virtual/block/loop%d" % idx):
            return idx
    raise RuntimeError("no free loop index")


def udev_event(udev_mon, devpath, action="add", timeout=20, since=0):
    got = udev_mon.wait_for(lambda e: e.devpath == devpath and e.action == action,
                            timeout=timeout, since=since)
    assert got, "no udev %s event for %s" % (action, devpath)
    assert got[0].errors == [], got[0].errors
    return got[0]


# ----------------------------------------------------------------- file modes

def tree(root):
    """{path: (kind, mode)} of everything below root, symlinks not followed."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            kind = ("dir" if stat.S_ISDIR(st.st_mode) else "link" if stat.S_ISLNK(st.st_mode)
                    else "file" if stat.S_ISREG(st.st_mode) else "sock"
                    if stat.S_ISSOCK(st.st_mode) else "other")
            out[p] = (kind, stat.S_IMODE(st.st_mode), st.st_uid)
    return out


def expected_mode(path, kind):
    rel = os.path.relpath(path, RUN_UDEV)
    if kind == "dir":
        return 0o755
    if kind == "sock":
        return 0o600 if path == CONTROL else None
    if kind == "file":
        if rel.startswith("data/"):
            return (0o644, 0o1644)
        if rel.startswith("tags/"):
            return 0o444
        if rel == "queue":
            return 0o644
        if rel.startswith("links/") and os.path.basename(rel) == ".lock":
            return 0o600
    return None


def test_run_udev_modes(tmp_path, udevd_factory, udevadm, net, loops, udev_mon):
    """Everything the daemon creates for net and block devices (data, tags,
    stack directories and their locks, links, watches, static node tags, the
    queue flag, the control socket) has systemd's mode, is owned by root and
    is not world-writable; programs see umask 022."""
    idx = free_loop_index()
    static = "/dev/tudev-priv-static"
    if os.path.lexists(static):
        os.unlink(static)
    os.mknod(static, 0o600 | stat.S_IFCHR, os.makedev(1, 3))
    rdir = tmp_path / "rules"
    write_rules(rdir, r'''
SUBSYSTEM=="net", KERNEL=="pma*", TAG+="privtag", ENV{PM}="1"
SUBSYSTEM=="net", KERNEL=="pma1", OPTIONS+="db_persist"
SUBSYSTEM=="block", KERNEL=="loop%d", SYMLINK+="privlink/%%k privlink2", TAG+="privtag", OPTIONS+="watch", MODE="0640"
SUBSYSTEM=="block", KERNEL=="loop%d", RUN+="/bin/sh -c 'umask > /run/priv-umask; : > /run/priv-created'"
KERNEL=="tudev-never", OPTIONS+="static_node=tudev-priv-static", TAG+="statictag", MODE="0660"
''' % (idx, idx))
    d = udevd_factory("--children-max=4", "--rules-dir=%s" % rdir)
    # the queue flag, seen while the queue is stopped
    assert run([udevadm, "control", "--stop-exec-queue"]).returncode == 0
    net.add_veth("pma0", "pmb0")
    assert wait_until(lambda: os.path.exists(QUEUE_FLAG), 10)
    queue_mode = stat.S_IMODE(os.stat(QUEUE_FLAG).st_mode)
    assert run([udevadm, "control", "--start-exec-queue"]).returncode == 0
    udev_event(udev_mon, NET + "pma0")
    net.add_veth("pma1", "pmb1")
    udev_event(udev_mon, NET + "pma1")
    mknod_loop(idx)
    loops.add(idx)
    udev_event(udev_mon, "/devices/virtual/block/loop%d" % idx)
    assert wait_until(lambda: os.path.exists("/run/priv-created"), 10)
    assert queue_mode == 0o644, oct(queue_mode)

    with open("/run/priv-umask") as f:
        assert f.read().strip() == "0022"
    entries = tree(RUN_UDEV)
    entries.update({p: v for p, v in tree("/dev").items()
                    if "privlink" in p or p.startswith("/dev/block")})
    kinds = {}
    for path, (kind, mode, uid) in sorted(entries.items()):
        kinds.setdefault(os.path.relpath(path, RUN_UDEV).split("/")[0], set()).add(kind)
        if kind == "link":
            continue
        assert uid == 0, "%s owned by uid %d" % (path, uid)
        assert not mode & 0o002, "%s is world-writable (%o)" % (path, mode)
        want = expected_mode(path, kind)
        if want is None:
            continue
        ok = mode in want if isinstance(want, tuple) else mode == want
        assert ok, "%s: mode %o, expected %s" % (path, mode, want)
    # every kind of entry was there to be checked
    for what in ("data", "tags", "links", "static_node-tags", "control"):
        assert what in kinds, "nothing under /run/udev/%s: %r" % (what, sorted(entries))
    persist = "/run/udev/data/n%d" % ifindex("pma1")
    assert stat.S_IMODE(os.stat(persist).st_mode) == 0o1644
    assert stat.S_IMODE(os.stat(CONTROL).st_mode) == 0o600
    assert stat.S_IMODE(os.stat("/dev/loop%d" % idx).st_mode) == 0o640
    assert stat.S_IMODE(os.stat(static).st_mode) == 0o660
    assert d.alive()


# ----------------------------------------------------------------- program context

DUMP = r'''
import ctypes, json, os, resource, signal, sys
kind, name = sys.argv[1], sys.argv[2]
fds = {}
for fd in range(0, 4096):
    try:
        os.fstat(fd)
    except OSError:
        continue
    fds[fd] = os.readlink("/proc/self/fd/%d" % fd)
status = {}
with open("/proc/self/status") as f:
    for line in f:
        k, _, v = line.partition(":")
        status[k] = v.strip()
# what the shell that exec'd us saw, before Python set up its own signals
with open("/run/privctx-sig-%s-%s" % (kind, name)) as f:
    for line in f:
        k, _, v = line.partition(":")
        status[k] = v.strip()
# the environment the shell got from execve() (it adds PWD, Python LC_CTYPE)
with open("/run/privctx-env-%s-%s" % (kind, name), "rb") as f:
    env = dict(e.decode().split("=", 1) for e in f.read().split(b"\0") if e)
libc = ctypes.CDLL(None, use_errno=True)
sig = ctypes.c_int(0)
libc.prctl(2, ctypes.byref(sig), 0, 0, 0)          # PR_GET_PDEATHSIG
try:
    os.close(os.open("/dev/tty", os.O_RDWR))
    tty = True
except OSError:
    tty = False
with open("/proc/%d/comm" % os.getppid()) as f:
    parent = f.read().strip()
old = os.umask(0)
info = {
    "env": env, "umask": old, "fds": fds, "cwd": os.getcwd(),
    "uid": os.getuid(), "gid": os.getgid(), "groups": os.getgroups(),
    "sigblk": status["SigBlk"], "sigign": status["SigIgn"], "capeff": status["CapEff"],
    "nonewprivs": status.get("NoNewPrivs"),
    "nofile": resource.getrlimit(resource.RLIMIT_NOFILE),
    "pdeathsig": sig.value, "own_pgrp": os.getpgrp() == os.getpid(), "tty": tty,
    "parent": parent,
}
with open("/run/privctx-%s-%s.json" % (kind, name), "w") as f:
    json.dump(info, f)
if kind == "import":
    print("PC_IMPORTED=yes")
elif kind == "program":
    print("ran")
'''


def load_ctx(kind, name):
    path = "/run/privctx-%s-%s.json" % (kind, name)
    assert wait_until(lambda: os.path.exists(path), 10), "%s not written" % path
    with open(path) as f:
        return json.load(f)


def wrap(dump, kind):
    """The dump script, exec'd by a shell that first records its signal state
    and environment as the program got them."""
    return ("/bin/sh -c 'grep ^Sig /proc/$$$$/status > /run/privctx-sig-%s-%%k; "
            "cat /proc/$$$$/environ > /run/privctx-env-%s-%%k; "
            "exec /usr/bin/python3 %s %s %%k'" % (kind, kind, dump, kind))


def test_program_context(tmp_path, udevd_factory, net, udev_mon):
    """PROGRAM, IMPORT{program} and RUN programs see exactly the device's
    properties (no PATH, nothing of the daemon's own environment), umask 022,
    only descriptors 0-2 with stdin on /dev/null, no controlling terminal, an
    empty signal mask, no ignored signals, RLIMIT_NOFILE soft limit 1024,
    SIGTERM as parent-death signal, root's capabilities; they are started by
    the exec helper in a process group of their own."""
    dump = str(tmp_path / "dump.py")
    with open(dump, "w") as f:
        f.write(DUMP)
    rdir = tmp_path / "rules"
    write_rules(rdir, r'''
SUBSYSTEM=="net", KERNEL=="pca0", ENV{PC_SET}="before"
SUBSYSTEM=="net", KERNEL=="pca0", PROGRAM="%(p)s", ENV{PC_PROG}="%%c"
SUBSYSTEM=="net", KERNEL=="pca0", IMPORT{program}="%(i)s"
SUBSYSTEM=="net", KERNEL=="pca0", RUN+="%(r)s", ENV{PC_LATE}="1"
''' % {"p": wrap(dump, "program"), "i": wrap(dump, "import"), "r": wrap(dump, "run")})
    os.environ["TUDEV_PRIV_LEAK"] = "daemon-environment"
    try:
        udevd_factory("--children-max=4", "--rules-dir=%s" % rdir)
    finally:
        del os.environ["TUDEV_PRIV_LEAK"]
    net.add_veth("pca0", "pcb0")
    ev = udev_event(udev_mon, NET + "pca0")
    assert ev.props["PC_PROG"] == "ran" and ev.props["PC_IMPORTED"] == "yes"
    ctx = {k: load_ctx(k, "pca0") for k in ("program", "import", "run")}
    for kind, c in ctx.items():
        what = "%s: " % kind
        env = c["env"]
        assert "PATH" not in env and "TUDEV_PRIV_LEAK" not in env and "HOME" not in env, \
            what + repr(sorted(env))
        assert env["UDEV_DATABASE_VERSION"] == "1", what + repr(env)
        assert env["INTERFACE"] == "pca0" and env["ACTION"] == "add", what + repr(env)
        assert env["PC_SET"] == "before"
        assert c["umask"] == 0o022, what + oct(c["umask"])
        fds = {int(k): v for k, v in c["fds"].items()}
        assert sorted(fds) == [0, 1, 2], what + repr(fds)
        assert fds[0] == "/dev/null", what + repr(fds)
        if kind != "run":
            assert fds[1].startswith("pipe:"), what + repr(fds)
        assert not c["tty"], what + "has a controlling terminal"
        assert int(c["sigblk"], 16) == 0 and int(c["sigign"], 16) == 0, what + repr(c)
        assert c["nofile"][0] == 1024, what + repr(c["nofile"])
        assert c["pdeathsig"] == 15, what + repr(c["pdeathsig"])
        assert c["uid"] == 0 and c["gid"] == 0
        assert c["own_pgrp"] and c["parent"] == "udevd-exec", what + repr(c)
    # PROGRAM and IMPORT ran before the properties set after them; RUN sees
    # the device as it is broadcast
    assert "PC_LATE" not in ctx["program"]["env"] and "PC_PROG" not in ctx["program"]["env"]
    assert ctx["import"]["env"]["PC_PROG"] == "ran"
    run_env = ctx["run"]["env"]
    assert run_env == ev.props, "RUN environment differs from the broadcast:\n%r\n%r" % (
        sorted(run_env.items()), sorted(ev.props.items()))
