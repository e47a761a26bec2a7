# SPDX-License-Identifier: GPL-2.0-or-later
"""Kernel buffer overruns: udevd is given a small receive buffer
(--debug-netlink-rcvbuf) and stopped with SIGSTOP while many real events
happen (new veth pairs and loop devices fill the buffer; then devices udevd
had processed are removed, so their "remove" events are certainly lost). After
SIGCONT the overrun must be detected, counted (stats line: enobufs, lost,
resyncs), logged with the lost SEQNUM range, and once the queue is idle the
resync must make the database, the tag index, the links and the broadcasts
match the devices that exist: a record and an "add" broadcast for every
device that exists, no record and a "remove" broadcast (the kernel's or a
synthesized one with TUDEV_RESYNC=1) for every device that went away.

--debug-resync-match limits the resync to this test's devices: it writes
"add" to uevent files, which must never touch another test's loop devices."""

import os
import re
import signal
import time

from stormlib import NET, Recorder, Storm, db_files, plain_build, storm_rules, wait_idle
from tudevlib import ifindex, wait_until

RCVBUF = 65536   # the kernel doubles it: 128 KiB, about a hundred uevents


def db_has(ident):
    return os.path.exists("/run/udev/data/" + ident)


def our_ifaces(tag):
    return {n: ifindex(n) for n in os.listdir("/sys/class/net") if n.startswith(tag)}


def test_overrun_detected_counted_and_repaired(udevd_factory, tmp_path):
    tag = "ov"
    plain = plain_build()
    n_pre, n_pre_loops = (10, 6) if plain else (5, 4)
    n_new, n_new_loops = (100, 20) if plain else (40, 10)
    storm = Storm(tag, 100)
    rules = storm_rules(tmp_path / "rules", storm)
    d = udevd_factory("--children-max=8", "--rules-dir=" + rules,
                      "--debug-netlink-rcvbuf=%d" % RCVBUF,
                      "--debug-resync-match=" + storm.resync_glob(), debug=False)
    umon = Recorder(2, storm.is_ours)
    try:
        # Devices udevd knows about (record, tags, links) before the overrun.
        pre = [("%spre%da" % (tag, i), "%spre%db" % (tag, i)) for i in range(n_pre)]
        pre_group = storm.add_pairs(pre)
        pre_loops = storm.add_loops(n_pre_loops, mknod=True)
        pre_if = our_ifaces(tag)
        assert wait_until(lambda: all(db_has("n%d" % i) for i in pre_if.values()) and
                          all(db_has("b7:%d" % i) for i in pre_loops), 60), "warm-up"
        assert wait_idle(30)
        assert os.path.islink("/dev/storm/loop%d" % pre_loops[0])

        # The overrun: udevd stopped; the new devices fill its 128 KiB buffer,
        # then the known devices go away: their "remove" is lost for certain.
        log_mark = d.log_size()
        d.signal(signal.SIGSTOP)
        try:
            new = [("%snew%da" % (tag, i), "%snew%db" % (tag, i)) for i in range(n_new)]
            for k in range(0, n_new, 25):
                storm.add_pairs(new[k:k + 25])
            gone_pairs = [("%seph%da" % (tag, i), "%seph%db" % (tag, i)) for i in range(10)]
            eph = storm.add_pairs(gone_pairs)          # never seen alive
            new_loops = storm.add_loops(n_new_loops, mknod=True)
            storm.del_group(eph)
            storm.del_group(pre_group)
            gone_loops = pre_loops[: n_pre_loops // 2]
            storm.remove_loops(gone_loops)
            time.sleep(0.2)
        finally:
            t_cont = time.monotonic()
            d.signal(signal.SIGCONT)

        recovered = wait_until(lambda: "Recovered from the kernel buffer overrun"
                               in d.log_since(log_mark), 90 if plain else 180, 0.05)
        t_recovered = time.monotonic()
        assert recovered, d.log_tail()
        assert wait_idle(60)
        time.sleep(0.3)
        log = d.log_since(log_mark)

        # Detected, logged with the lost range.
        assert "Kernel uevent receive buffer overrun" in log, log[-3000:]
        m = re.search(r"Uevents lost in the overrun: (\d+) at most, SEQNUM (\d+)\.\.(\d+)", log)
        assert m and int(m.group(1)) > 0, log[-3000:]
        assert re.search(r"Resync #1 after \d+ kernel buffer overrun", log), log[-3000:]

        # The database matches what exists.
        now_if = our_ifaces(tag)
        live_loops = [i for i in pre_loops + new_loops if i not in gone_loops]
        for name, idx in now_if.items():
            assert db_has("n%d" % idx), "no record for %s" % name
        for name, idx in pre_if.items():
            assert not db_has("n%d" % idx), "stale record for vanished %s" % name
        for i in live_loops:
            assert db_has("b7:%d" % i), "no record for loop%d" % i
            assert os.path.islink("/dev/storm/loop%d" % i)
            assert os.path.exists("/run/udev/tags/storm/b7:%d" % i)
        for i in gone_loops:
            assert not db_has("b7:%d" % i), "stale record for loop%d" % i
            assert not os.path.lexists("/dev/storm/loop%d" % i)
            assert not os.path.exists("/run/udev/tags/storm/b7:%d" % i)
            assert not os.path.lexists("/dev/block/7:%d" % i)
        shared = os.readlink("/dev/storm/shared")
        assert int(shared.rsplit("loop", 1)[1]) in live_loops, shared
        ours = {f for f in db_files() if f.startswith("b7:") and
                storm.loop_base <= int(f[3:]) < storm.loop_end}
        assert ours == {"b7:%d" % i for i in live_loops}

        # Broadcasts: every device now present was announced (added), every
        # device that went away was announced removed, the ephemeral ones never
        # matter; synthesized events are marked.
        ev = umon.snapshot()
        last = {}
        for r in ev:
            last[r.devpath] = r
        for name in now_if:
            r = last.get(NET + name)
            assert r is not None and r.action == "add", (name, r)
        for name in pre_if:
            r = last.get(NET + name)
            assert r is not None and r.action == "remove", (name, r)
        for i in live_loops:
            r = last.get("/devices/virtual/block/loop%d" % i)
            assert r is not None and r.action == "add", (i, r)
        for i in gone_loops:
            r = last.get("/devices/virtual/block/loop%d" % i)
            assert r is not None and r.action == "remove", (i, r)
        synth = [r for r in ev if r.props.get("TUDEV_RESYNC") == "1"]
        assert synth and all(r.action == "remove" for r in synth), synth[:5]
        retriggered = [r for r in ev if "SYNTH_UUID" in r.props]
        assert retriggered and all(r.action == "add" for r in retriggered)
        seqs = [r.seqnum for r in ev if "TUDEV_RESYNC" not in r.props]
        assert len(seqs) == len(set(seqs)), "a kernel event was broadcast twice"

        # Still healthy: a new device after the recovery is processed normally.
        storm.add_pairs([("%safter0a" % tag, "%safter0b" % tag)])
        assert wait_until(lambda: db_has("n%d" % ifindex("%safter0a" % tag)), 30)

        print("\noverrun: %d new pairs, %d new loops, %d pairs and %d loops removed while "
              "stopped; recovered %.2f s after SIGCONT; lost range %s..%s (%s at most); "
              "synthesized removes %d, re-triggered adds %d"
              % (n_new, n_new_loops, n_pre, len(gone_loops), t_recovered - t_cont,
                 m.group(2), m.group(3), m.group(1), len(synth), len(retriggered)))
    finally:
        umon.close()
        storm.cleanup()
    d.stop()
    st = d.stats()
    assert st["enobufs"] >= 1 and st["lost"] >= 1 and st["resyncs"] >= 1, st
    assert st["resync_added"] >= 1 and st["resync_removed"] >= 1, st
    print("stats: %s" % " ".join("%s=%d" % kv for kv in sorted(st.items())))
