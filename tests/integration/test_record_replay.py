# SPDX-License-Identifier: GPL-2.0-or-later
"""`udevadm record` on real events (veth pairs created, changed and
deleted, a loop device added, changed and removed): the file holds every
kernel event in order with the state of its device, parsed here by an
independent reader of the format (docs/design.md "Record and replay")."""

import os
import shutil
import signal
import tempfile
import time

import pytest

from tudevlib import LineProcess, as_nobody, run, trigger_uevent, wait_until

NET = "/devices/virtual/net/"


def parse_recording(path):
    """[(kind, fields...)] of a recording; asserts the framing."""
    with open(path, "rb") as f:
        data = f.read()
    pos = 0

    def line():
        nonlocal pos
        end = data.index(b"\n", pos)
        ln = data[pos:end].decode("utf-8", "surrogateescape")
        pos = end + 1
        return ln

    def payload(n):
        nonlocal pos
        b = data[pos:pos + n]
        assert data[pos + n:pos + n + 1] == b"\n"
        pos += n + 1
        return b

    assert line() == "TUDEV-RECORD 1"
    out = []
    while True:
        ln = line()
        kind, _, rest = ln.partition(" ")
        if kind == "END":
            assert int(rest) == sum(1 for r in out if r[0] == "E")
            assert pos == len(data)
            return out
        if kind == "E":
            seq, n = rest.split(" ")
            raw = payload(int(n))
            props = dict(kv.split("=", 1) for kv in
                         raw.rstrip(b"\0").decode("utf-8", "surrogateescape").split("\0")[1:])
            out.append(("E", int(seq), props))
        elif kind == "F":
            n, name = rest.split(" ", 1)
            out.append(("F", name, payload(int(n))))
        elif kind == "L":
            name, target = rest.split(" ", 1)
            out.append(("L", name, target))
        else:
            assert kind in ("S", "G", "U"), ln
            out.append((kind, rest))


class Recorder:
    def __init__(self, udevadm, tmp_path, *args):
        self.path = str(tmp_path / "rec.tudev")
        self.err = str(tmp_path / "record.err")
        self.proc = LineProcess([udevadm, "record", "--output=" + self.path] + list(args),
                                stderr_path=self.err)
        assert wait_until(lambda: "Recording kernel events" in self.stderr(), 10), self.stderr()

    def stderr(self):
        with open(self.err) as f:
            return f.read()

    def wait_seqnum(self, seqnum, timeout=60):
        """Until the recorder has written event `seqnum` (it flushes whenever
        it has caught up): other events on the machine can make it lag, and
        a device deleted before the recorder saw its add is recorded gone."""
        pat = b"\nE %d " % seqnum

        def written():
            with open(self.path, "rb") as f:
                return pat in f.read()
        assert wait_until(written, timeout), "recorder did not catch up to %d" % seqnum

    def stop(self):
        self.proc.proc.send_signal(signal.SIGINT)
        assert self.proc.proc.wait(timeout=30) == 0, self.stderr()
        return parse_recording(self.path)


def state_before(records, seqnum):
    """{devpath: {name: content}} as applied up to the event `seqnum`."""
    state, cur = {}, None
    for r in records:
        if r[0] == "E":
            if r[1] == seqnum:
                return state
            cur = None
        elif r[0] == "S":
            cur = state[r[1]] = {}
        elif r[0] == "G":
            for k in [k for k in state if k == r[1] or k.startswith(r[1] + "/")]:
                del state[k]
            cur = None
        elif r[0] == "F":
            cur[r[1]] = r[2]
        elif r[0] == "L":
            cur[r[1]] = "-> " + r[2]
        elif r[0] == "U":
            cur[r[1]] = None
    raise AssertionError("no event %d" % seqnum)


def storm(net, loops, udev_mon, rec):
    """veth pairs added, changed, deleted; a loop device added, changed,
    removed. Returns the loop index."""
    net.add_veth("rra0", "rrb0")
    net.add_veths([("rra1", "rrb1"), ("rra2", "rrb2")])
    assert wait_until(lambda: os.path.exists("/sys/class/net/rrb2"), 10)
    trigger_uevent("/sys/class/net/rra0")
    trigger_uevent("/sys/class/net/rra1", "change")
    idx = loops.add()
    trigger_uevent("/sys" + loops.devpath(idx))
    change = udev_mon.wait_for(lambda e: e.devpath == loops.devpath(idx) and
                               e.action == "change", timeout=20)
    assert change
    rec.wait_seqnum(change[0].seqnum)
    run(["ip", "link", "del", "rra2"], timeout=30)
    loops.remove(idx)
    return idx


def record_storm(net, loops, udev_mon, rec):
    """storm() under the recorder, until the daemon broadcast its last
    removes; stops the recorder. Returns (loop index, its devpath, the
    records)."""
    idx = storm(net, loops, udev_mon, rec)
    loop = loops.devpath(idx)
    assert udev_mon.wait_for(lambda e: e.devpath == loop and e.action == "remove", timeout=20)
    assert udev_mon.wait_for(lambda e: e.devpath == NET + "rrb2" and e.action == "remove",
                             timeout=20)
    time.sleep(0.3)
    return idx, loop, rec.stop()


def test_record_storm(tmp_path, udevd_factory, udevadm, net, loops, kernel_mon, udev_mon):
    udevd_factory("--children-max=8")
    rec = Recorder(udevadm, tmp_path)
    idx, loop, records = record_storm(net, loops, udev_mon, rec)
    assert "Recorded " in rec.stderr()

    events = [r for r in records if r[0] == "E"]
    want = [e for e in kernel_mon.snapshot()
            if e.devpath and (e.devpath.startswith(NET + "rr") or e.devpath == loop)]
    got = [r for r in events if r[2]["DEVPATH"].startswith(NET + "rr") or
           r[2]["DEVPATH"] == loop]
    # every kernel event of these devices, in order, with its properties
    assert [(r[1], r[2]) for r in got] == [(e.seqnum, e.props) for e in want]
    assert len(got) >= 6 + 2 + 2 + 3
    seqs = [r[1] for r in events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)

    add0 = next(r for r in got if r[2]["DEVPATH"] == NET + "rra0" and r[2]["ACTION"] == "add")
    st = state_before(records, add0[1])[NET + "rra0"]
    with open("/sys/class/net/rra0/ifindex", "rb") as f:
        assert st["ifindex"] == f.read()
    assert st["subsystem"] == "-> /class/net"
    assert st["uevent"].startswith(b"INTERFACE=rra0\n")
    assert "statistics/rx_bytes" in st          # one level of subdirectories
    assert all(not k.startswith("queues/rx-0/") for k in st)

    ladd = next(r for r in got if r[2]["DEVPATH"] == loop and r[2]["ACTION"] == "add")
    st = state_before(records, ladd[1])[loop]
    assert st["dev"] == b"7:%d\n" % idx
    assert st["subsystem"] == "-> /class/block"
    assert "queue/rotational" in st

    # the removed devices are gone for their remove event and stay gone
    rm = next(r for r in got if r[2]["DEVPATH"] == NET + "rra2" and r[2]["ACTION"] == "remove")
    st = state_before(records, rm[1])
    assert NET + "rra2" not in st and NET + "rra1" in st
    i = records.index(rm)
    assert ("G", NET + "rra2") in records[i - 3:i]


def test_record_duration_and_errors(tmp_path, udevadm):
    out = tmp_path / "short.tudev"
    t0 = time.monotonic()
    r = run([udevadm, "record", "--output=%s" % out, "--duration=500ms"], timeout=30)
    assert r.returncode == 0, r.stderr
    assert time.monotonic() - t0 >= 0.5
    assert parse_recording(str(out)) is not None
    r = run([udevadm, "record"], timeout=30)
    assert r.returncode == 1 and "--output=FILE is required" in r.stderr
    r = run([udevadm, "record", "--output=/nonexistent/dir/x"], timeout=30)
    assert r.returncode == 1 and "/nonexistent/dir/x" in r.stderr


# ----------------------------------------------------------------- replay

RULES = r'''SUBSYSTEM=="net", KERNEL=="rr*", ACTION!="remove", ATTR{mtu}=="1500", ENV{RR_MTU}="ok", TAG+="rrtag"
SUBSYSTEM=="net", KERNEL=="rr*", ACTION!="remove", ATTR{address}=="?*", ENV{RR_ADDR}="$attr{address}"
SUBSYSTEM=="net", KERNEL=="rr*", PROGRAM=="/bin/false", ENV{RR_NEVER}="1"
SUBSYSTEM=="net", KERNEL=="rr*", ACTION=="add", ENV{RR_ADDED}="1"
SUBSYSTEM=="net", KERNEL=="rr*", ACTION=="change", IMPORT{db}="RR_ADDED"
SUBSYSTEM=="block", KERNEL=="loop*", ACTION!="remove", ENV{RR_ROT}="$attr{queue/rotational}"
SUBSYSTEM=="block", KERNEL=="loop*", SYMLINK+="rr/%k", MODE="0640", TAG+="rrblk"
SUBSYSTEM=="block", KERNEL=="loop*", IMPORT{builtin}="kmod load rr_nonexistent"
SUBSYSTEM=="block", KERNEL=="loop*", RUN+="/bin/true %k"
'''


def write_rules(directory, text):
    os.makedirs(directory, exist_ok=True)
    os.chmod(directory, 0o755)
    with open(os.path.join(directory, "50-rr.rules"), "w") as f:
        f.write(text)
    os.chmod(os.path.join(directory, "50-rr.rules"), 0o644)


def parse_replay(text):
    """{seqnum: {"head": ..., "props": {...}, "links": [...], "programs": [...],
    "builtins": [...], "run": [...], "node": ...}}"""
    out, cur = {}, None
    for ln in text.splitlines():
        if ln.startswith("event "):
            seq = int(ln.split(" ")[1])
            cur = out[seq] = {"head": ln, "props": {}, "links": [], "programs": [],
                              "builtins": [], "run": [], "node": None, "failed": None}
        elif ln.startswith("  ") and cur is not None:
            kind, _, rest = ln[2:].partition(" ")
            if kind == "property":
                k, _, v = rest.partition("=")
                cur["props"][k] = v
            elif kind == "link":
                cur["links"].append(rest)
            elif kind == "program":
                cur["programs"].append(rest)
            elif kind == "builtin":
                cur["builtins"].append(rest)
            elif kind == "run":
                cur["run"].append(rest)
            elif kind == "node":
                cur["node"] = rest
            elif kind == "failed":
                cur["failed"] = rest
    return out


def replay(udevadm, rec, rules_dir, tmpdir):
    """Run as nobody with an almost empty environment."""
    r = run(as_nobody([udevadm, "replay", "--rules-dir=%s" % rules_dir, rec]),
            env={"TMPDIR": tmpdir, "SYSTEMD_LOG_LEVEL": "warning"}, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.fixture
def shared():
    """A directory nobody can read (pytest's tmp_path is root's only)."""
    d = tempfile.mkdtemp(prefix="rr-replay-")
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def test_replay_matches_daemon(tmp_path, udevd_factory, udevadm, net, loops, udev_mon, shared):
    scratch = os.path.join(shared, "tmp")
    os.mkdir(scratch)
    os.chmod(scratch, 0o1777)
    rules = os.path.join(shared, "rules")
    write_rules(rules, RULES)
    udevd_factory("--children-max=8", "--rules-dir=%s" % rules)
    rec = Recorder(udevadm, tmp_path)
    idx, loop, records = record_storm(net, loops, udev_mon, rec)
    path = os.path.join(shared, "rec.tudev")
    shutil.copy(rec.path, path)
    os.chmod(path, 0o644)

    out = replay(udevadm, path, rules, scratch)
    assert out == replay(udevadm, path, rules, scratch)      # deterministic
    assert os.listdir(scratch) == []                          # nothing left behind
    got = parse_replay(out)
    events = [r for r in records if r[0] == "E"]
    assert out.splitlines()[-1] == "%d events replayed, 0 failed" % len(events)
    assert sorted(got) == [r[1] for r in events]

    mine = {r[1]: r[2] for r in events
            if r[2]["DEVPATH"].startswith(NET + "rr") or r[2]["DEVPATH"] == loop}
    daemon = {e.seqnum: e for e in udev_mon.snapshot() if e.seqnum in mine}
    compared = set()
    for seq, e in daemon.items():
        want = dict(e.props)
        want.pop("USEC_INITIALIZED", None)         # the replay's own time: not printed
        want.pop("UDEV_DATABASE_VERSION", None)    # of the wire format, not a property
        assert got[seq]["props"] == want, (seq, mine[seq])
        links = want.get("DEVLINKS", "").split()
        assert sorted(got[seq]["links"]) == sorted(links)
        compared.add((mine[seq]["DEVPATH"], mine[seq]["ACTION"]))
    for dev in ("rra0", "rrb0", "rra1", "rrb1", "rra2", "rrb2"):
        assert (NET + dev, "add") in compared
    assert (NET + "rra2", "remove") in compared and (NET + "rrb2", "remove") in compared
    assert {(loop, "add"), (loop, "remove")} <= compared

    ladd = next(s for s, p in mine.items() if p["DEVPATH"] == loop and p["ACTION"] == "add")
    ev = got[ladd]
    assert ev["node"] == "/dev/loop%d 7:%d mode 0640" % (idx, idx)
    assert ev["links"] == ["/dev/rr/loop%d" % idx]
    assert ev["props"]["RR_ROT"] in ("0", "1")
    assert ev["builtins"] == ["kmod load rr_nonexistent (not run)"]
    assert ev["run"] == ["/bin/true loop%d" % idx]
    a0 = next(s for s, p in mine.items() if p["DEVPATH"] == NET + "rra0" and p["ACTION"] == "add")
    assert got[a0]["programs"] == ["/bin/false (not run)"]
    with open("/sys/class/net/rra0/address") as f:
        assert got[a0]["props"]["RR_ADDR"] == f.read().strip()
    c0 = next(s for s, p in mine.items()
              if p["DEVPATH"] == NET + "rra0" and p["ACTION"] == "change")
    assert got[c0]["props"]["RR_ADDED"] == "1"              # from the replay's database
    assert got[c0]["props"]["TAGS"] == ":rrtag:"

    # a rules change shows up in the replay, and only there
    changed = os.path.join(shared, "rules2")
    write_rules(changed, RULES.replace('ENV{RR_MTU}="ok"', 'ENV{RR_MTU}="changed"')
                .replace('SYMLINK+="rr/%k"', 'SYMLINK+="rr2/%k"'))
    got2 = parse_replay(replay(udevadm, path, changed, scratch))
    for seq, p in mine.items():
        if p["ACTION"] != "remove" and p["SUBSYSTEM"] == "net":
            assert got[seq]["props"]["RR_MTU"] == "ok"
            assert got2[seq]["props"]["RR_MTU"] == "changed"
    assert got2[ladd]["links"] == ["/dev/rr2/loop%d" % idx]


def test_replay_rejects_bad_recordings(tmp_path, udevadm):
    rules = tmp_path / "rules"
    write_rules(str(rules), RULES)
    bad = tmp_path / "bad.tudev"
    bad.write_bytes(b"TUDEV-RECORD 1\nS /devices/x\nF 3 a\nab")
    r = run([udevadm, "replay", "--rules-dir=%s" % rules, str(bad)], timeout=30)
    assert r.returncode == 1
    assert "%s:3: truncated: 3 bytes of data expected" % bad in r.stderr
    bad.write_bytes(b"TUDEV-RECORD 7\n")
    r = run([udevadm, "replay", "--rules-dir=%s" % rules, str(bad)], timeout=30)
    assert r.returncode == 1 and "%s:1: unsupported version '7'" % bad in r.stderr
    r = run([udevadm, "replay", str(tmp_path / "missing")], timeout=30)
    assert r.returncode == 1 and "missing" in r.stderr
