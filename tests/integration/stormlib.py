# SPDX-License-Identifier: GPL-2.0-or-later
"""Helpers for the daemon life-cycle tests (issue 9): real kernel event storms
of veth pairs and loop devices, a light recorder of kernel (group 1) and udev
(group 2) messages, the exactly-once / ordering check, process figures (RSS,
descriptors, threads) and a daemon start that keeps /run/udev (restart after
a crash).

Everything runs inside tests/sandbox (private network namespace: net events
are ours alone; block events are global, so loop devices are filtered by the
indexes we created, taken from a range no other test uses)."""

import os
import random
import re
import shlex
import signal
import subprocess
import sys
import threading
import time

from tudevlib import (CONTROL, UeventSocket, Udevd, ctrl_ping, wait_until)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import loopdev  # noqa: E402  (tests/lib: loop devices, shared with tools/bench and differential)

NET = "/devices/virtual/net/"
BLOCK = "/devices/virtual/block/"
BDI = "/devices/virtual/bdi/"

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
REPO_RULES = os.path.join(REPO, "rules.d")


def plain_build():
    """True for the plain build (big figures run only there)."""
    return os.path.basename(os.path.normpath(os.environ.get("TUDEV_BUILD", "build"))) == "build"


# ----------------------------------------------------------------- recorder

class Record:
    __slots__ = ("seqnum", "action", "devpath", "subsystem", "props", "t")

    def __init__(self, seqnum, action, devpath, subsystem, props, t):
        self.seqnum = seqnum
        self.action = action
        self.devpath = devpath
        self.subsystem = subsystem
        self.props = props      # only the keys asked for
        self.t = t

    def __repr__(self):
        return "<%s %s %s>" % (self.seqnum, self.action, self.devpath)


class Recorder(UeventSocket):
    """A NETLINK_KOBJECT_UEVENT socket on one group with a large buffer and a
    reader thread that keeps a compact record of every message whose DEVPATH
    passes `keep` (kernel messages and libudev messages alike)."""

    WANTED = (b"ACTION", b"DEVPATH", b"SUBSYSTEM", b"SEQNUM", b"UDEV_WORKER_FAILED",
              b"TUDEV_RESYNC", b"STORM_PROG", b"STORM_IMP", b"DEVLINKS", b"SYNTH_UUID")

    def __init__(self, group, keep, rcvbuf=256 * 1024 * 1024):
        self.keep = keep
        super().__init__(group, rcvbuf)

    def _record(self, data, addr, t):
        if data.startswith(b"libudev\0"):
            body = data[40:]
        else:
            body = data.partition(b"\0")[2]
        props = {}
        for item in body.split(b"\0"):
            k, sep, v = item.partition(b"=")
            if sep and k in self.WANTED:
                props[k.decode()] = v.decode("utf-8", "replace")
        dp = props.get("DEVPATH")
        if dp is None or not self.keep(dp):
            return None
        try:
            seq = int(props.get("SEQNUM", "0"))
        except ValueError:
            seq = 0
        return Record(seq, props.get("ACTION"), dp, props.get("SUBSYSTEM"), props, t)

    def take(self):
        """Return every record so far and forget them (long soak runs)."""
        self.sync()
        with self.lock:
            out, self.events = self.events, []
            return out

    def wait_seqnums(self, seqnums, timeout):
        """Wait until every SEQNUM in `seqnums` was recorded; returns the missing ones."""
        want = set(seqnums)
        deadline = time.monotonic() + timeout
        seen = set()
        idx = 0
        while True:
            self.sync()
            with self.lock:
                for r in self.events[idx:]:
                    seen.add(r.seqnum)
                idx = len(self.events)
                missing = want - seen
                left = deadline - time.monotonic()
                if not missing or left <= 0:
                    return missing
                self.lock.wait(min(left, 0.5))


# ----------------------------------------------------------------- storms

# Loop indexes: the other tests take 2000..60000, tools/differential
# 61000..99000, tools/bench 100000 and up. Ours: 60100..60999, in blocks of
# 100 (a storm round reuses its indexes: the previous round removed them).
LOOP_RANGE = (60100, 61000)


def free_loop_base(count):
    """A random base index (a multiple of 100) with `count` free loop indexes
    above it, in a range no other test or tool uses."""
    assert count <= LOOP_RANGE[1] - LOOP_RANGE[0]
    return loopdev.free_base(count, LOOP_RANGE[0], LOOP_RANGE[1], step=100, tries=100)


def parallel(fn, items, threads=16):
    items = list(items)
    errors = []

    def worker(chunk):
        for it in chunk:
            try:
                fn(it)
            except OSError as e:
                errors.append((it, e))

    chunks = [items[i::threads] for i in range(threads)]
    ts = [threading.Thread(target=worker, args=(c,)) for c in chunks if c]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return errors


class Storm:
    """Generates real kernel events of our own devices: veth pairs (20 events
    per pair over its life: 2 net + 8 queue adds, 4 queue removes while the
    kernel trims the queues, 6 removes) created with `ip -batch` in link
    groups and deleted a group at a time, and loop devices (4 events: bdi and
    block, add and remove) added and removed in parallel threads.

    A round of `pairs` pairs and `loops` loops interleaves: batch k is
    created while batch k-1 is deleted, so adds and removes overlap."""

    EVENTS_PER_PAIR = 20
    EVENTS_PER_LOOP = 4

    def __init__(self, tag, loop_capacity, batch=75):
        self.tag = tag
        self.batch = batch
        self.loop_base = free_loop_base(loop_capacity)
        self.loop_next = self.loop_base
        self.loop_end = self.loop_base + loop_capacity
        self.round_no = 0
        self.group_next = random.randrange(1000, 100000) * 16
        self.live_groups = []
        self.live_loops = []
        self.all_loops = set()

    # filters
    def net_prefix(self):
        return NET + self.tag

    def is_ours(self, devpath):
        if devpath.startswith(NET + self.tag):
            return True
        m = re.match(r"^/devices/virtual/(?:block/loop|bdi/7:)(\d+)$", devpath)
        return bool(m) and self.loop_base <= int(m.group(1)) < self.loop_end

    def loop_globs(self):
        """Globs for the indexes of our loop devices, one per block of 100."""
        return ["%d[0-9][0-9]" % b for b in range(self.loop_base // 100,
                                                  (self.loop_end - 1) // 100 + 1)]

    def resync_glob(self):
        """--debug-resync-match= for our devices only (the resync writes
        "add" to uevent files: never to another test's loop devices)."""
        return "|".join(["%s%s*" % (NET, self.tag)] +
                        ["%sloop%s|%s7:%s" % (BLOCK, g, BDI, g) for g in self.loop_globs()])

    # generation
    def _new_group(self):
        self.group_next += 1
        return self.group_next

    def add_pairs(self, names):
        g = self._new_group()
        cmds = "".join("link add %s group %d type veth peer name %s group %d\n"
                       % (a, g, b, g) for a, b in names)
        subprocess.run(["ip", "-batch", "-"], input=cmds.encode(), check=True)
        self.live_groups.append(g)
        return g

    def del_group(self, g):
        subprocess.run(["ip", "link", "del", "group", str(g)], check=False,
                       stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if g in self.live_groups:
            self.live_groups.remove(g)

    def add_loops(self, n, mknod=False):
        if self.loop_next + n > self.loop_end:
            raise RuntimeError("loop range exhausted")
        idx = list(range(self.loop_next, self.loop_next + n))
        self.loop_next += n
        if mknod:
            for i in idx:
                make_node(i)
        errs = parallel(loopdev.add, idx)
        failed = {i for i, _ in errs}
        self.live_loops += [i for i in idx if i not in failed]   # cleanup() removes them
        self.all_loops.update(idx)
        assert not errs, errs[:3]
        return idx

    def remove_loops(self, idx):
        errs = parallel(lambda i: loopdev.remove(i, interval=0.02), idx)
        assert not errs, errs[:3]
        for i in idx:
            if i in self.live_loops:
                self.live_loops.remove(i)

    def pair_names(self, n):
        r = self.round_no
        return [("%s%03d%03da" % (self.tag, r % 1000, i), "%s%03d%03db" % (self.tag, r % 1000, i))
                for i in range(n)]

    def run_round(self, pairs, loops, pause=0.0):
        """One interleaved storm; returns when the kernel emitted everything."""
        self.round_no += 1
        if not self.live_loops:
            self.loop_next = self.loop_base      # every index is free again
        names = self.pair_names(pairs)
        batches = [names[i:i + self.batch] for i in range(0, len(names), self.batch)] or [[]]
        per = [loops // len(batches)] * len(batches)
        per[-1] += loops - sum(per)
        prev_group, prev_loops = None, []
        for b, nl in zip(batches, per):
            g = self.add_pairs(b) if b else None
            new_loops = self.add_loops(nl) if nl else []
            if prev_group is not None:
                self.del_group(prev_group)
            if prev_loops:
                self.remove_loops(prev_loops)
            prev_group, prev_loops = g, new_loops
            if pause:
                time.sleep(pause)
        if prev_group is not None:
            self.del_group(prev_group)
        if prev_loops:
            self.remove_loops(prev_loops)

    def cleanup(self):
        for g in list(self.live_groups):
            self.del_group(g)
        self.remove_loops(list(self.live_loops))
        for i in self.all_loops:
            try:
                os.unlink("/dev/loop%d" % i)
            except OSError:
                pass


def make_node(idx):
    """Stand-in for devtmpfs in the sandbox's tmpfs /dev."""
    return loopdev.make_loop_node(idx)[0]


# ----------------------------------------------------------------- checks

def conflicts(a, b):
    return a == b or a.startswith(b + "/") or b.startswith(a + "/")


def top_device(devpath):
    """Events of one device and its children share this key."""
    parts = devpath.split("/")
    return "/".join(parts[:5])


def check_exactly_once(kernel, udev, allow_extra=lambda r: False):
    """kernel, udev: lists of Record (udev in reception order). Returns a dict
    of problems (empty if every kernel SEQNUM was broadcast exactly once, with
    the same ACTION and DEVPATH, and events of one device or of a parent and
    its child were broadcast in kernel order)."""
    problems = {}
    kseq = {}
    for r in kernel:
        if r.seqnum in kseq:
            problems.setdefault("kernel_dup", []).append(r)
        kseq[r.seqnum] = r
    count = {}
    pos = {}
    for i, r in enumerate(udev):
        if allow_extra(r):
            continue
        count[r.seqnum] = count.get(r.seqnum, 0) + 1
        pos.setdefault(r.seqnum, i)
        k = kseq.get(r.seqnum)
        if k is None:
            problems.setdefault("extra", []).append(r)
        elif (k.action, k.devpath) != (r.action, r.devpath):
            problems.setdefault("mismatch", []).append((k, r))
    dups = [s for s, c in count.items() if c > 1]
    if dups:
        problems["duplicates"] = sorted(dups)
    missing = sorted(set(kseq) - set(count))
    if missing:
        problems["missing"] = [kseq[s] for s in missing]
    groups = {}
    for r in kernel:
        groups.setdefault(top_device(r.devpath), []).append(r)
    order = []
    for evs in groups.values():
        evs.sort(key=lambda r: r.seqnum)
        for j, b in enumerate(evs):
            for a in evs[:j]:
                if a.seqnum in pos and b.seqnum in pos and conflicts(a.devpath, b.devpath) \
                        and pos[a.seqnum] > pos[b.seqnum]:
                    order.append((a, b))
    if order:
        problems["order"] = order
    return problems


def summarize(problems, limit=8):
    return {k: (v[:limit] if isinstance(v, list) else v) for k, v in problems.items()}


# ----------------------------------------------------------------- processes

def status_kib(pid, key="VmRSS"):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return None


def fd_count(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def figures(pid):
    return {"rss_kib": status_kib(pid), "fds": fd_count(pid),
            "threads": status_kib(pid, "Threads")}


def wait_idle(timeout):
    """As `udevadm settle`: a ping (answered once every uevent that reached
    the daemon's socket is queued), then /run/udev/queue gone."""
    return ctrl_ping(timeout=10) and \
        wait_until(lambda: not os.path.exists("/run/udev/queue"), timeout, 0.05)


# ----------------------------------------------------------------- daemon

class KeptUdevd(Udevd):
    """Udevd started over the /run/udev left by an earlier daemon (the
    standard start removes it)."""

    def start(self, timeout=30.0, wait_ready=True):
        args = list(self.args)
        if not any(a.startswith("--rules-dir") for a in args):
            empty = os.path.join(os.path.dirname(self.logpath), "no-rules.d")
            os.makedirs(empty, exist_ok=True)
            args.append("--rules-dir=" + empty)
        cmd = shlex.split(os.environ.get("TUDEV_WRAPPER", "")) + \
            [os.path.join(self.build, "udevd")] + (["--debug"] if self.debug else []) + args
        self.cmd = cmd
        self.logfile = open(self.logpath, "ab")
        env = dict(os.environ)
        env.setdefault("SYSTEMD_LOG_TARGET", "console")
        env.setdefault("ASAN_OPTIONS", "abort_on_error=0:detect_leaks=1")
        env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
        env.setdefault("TSAN_OPTIONS", "halt_on_error=0:second_deadlock_stack=1")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self.logfile,
                                     stderr=self.logfile, env=env, close_fds=True)
        if wait_ready:
            self.wait_ready(timeout)
        return self


def kill9(d):
    """SIGKILL the daemon (only the one this test started) and reap it."""
    d.proc.send_signal(signal.SIGKILL)
    d.returncode = d.proc.wait(30)
    d.stopped = True
    d.logfile.close()


def write_rules(directory, text, name):
    os.makedirs(str(directory), exist_ok=True)
    path = os.path.join(str(directory), name)
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.rename(path + ".tmp", path)
    return str(directory)


def storm_rules(directory, storm):
    """Rules of our own on top of the repository's rules.d: PROGRAM,
    IMPORT{program} and RUN go through the exec helper for every net add, net
    remove and loop event; our loops get a link, a shared link and a tag."""
    return write_rules(directory, r'''
ACTION=="add", SUBSYSTEM=="net", KERNEL=="%(tag)s*", PROGRAM="/bin/echo %%k", \
  ENV{STORM_PROG}="%%c"
ACTION=="add", SUBSYSTEM=="net", KERNEL=="%(tag)s*a", \
  IMPORT{program}="/bin/sh -c 'echo STORM_IMP=$$INTERFACE'"
ACTION=="remove", SUBSYSTEM=="net", KERNEL=="%(tag)s*", RUN+="/bin/true"
SUBSYSTEM=="block", KERNEL=="%(loops)s", ACTION=="add|remove", RUN+="/bin/true"
SUBSYSTEM=="block", KERNEL=="%(loops)s", ACTION=="add", SYMLINK+="storm/%%k storm/shared", \
  TAG+="storm"
''' % {"tag": storm.tag, "loops": "|".join("loop" + g for g in storm.loop_globs())},
        "90-storm.rules")


def db_files():
    try:
        return {n for n in os.listdir("/run/udev/data") if not n.startswith(".")}
    except FileNotFoundError:
        return set()


DB_LINE = re.compile(r"^(S:.+|L:-?\d+|I:\d+|E:[^=\n]+=.*|G:[^:\s]+|Q:[^:\s]+|V:1)$")


def db_parse_problems(path):
    """Lines a database record must consist of (S:, L:, I:, E:, G:, Q:, V:
    as systemd writes them), newline terminated; returns a list of problems."""
    with open(path, "rb") as f:
        data = f.read()
    problems = []
    if data and not data.endswith(b"\n"):
        problems.append("not newline-terminated")
    for line in data.decode("utf-8", "replace").splitlines():
        if not DB_LINE.match(line):
            problems.append("bad line %r" % line)
    return problems
