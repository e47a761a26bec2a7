# SPDX-License-Identifier: GPL-2.0-or-later
"""Storm damping (udevd(8) STORM DAMPING) on real kernel events: "change"
uevents written to veth interfaces' uevent files while the daemon's queue is
stopped are merged into the first queued "change" of each device, the newest
record wins, every SEQNUM is settled, the database holds the last state, and
an event that `udevadm trigger --settle` waits for (its SYNTH_UUID) is never
absorbed. Synthesized inotify "change" events are rate-limited per device."""

import os
import subprocess
import time

from blocklib import add_loop, close_after_write, write_uevent
from tudevlib import db_props, run, wait_until

NET = "/devices/virtual/net/"
# one shared UUID, so that the storm's events may merge among themselves
STORM_UUID = "5d2c1f3e-7a4b-4c6d-8e9f-0a1b2c3d4e5f"
RULES = ('SUBSYSTEM=="net", KERNEL=="sdmp*", ENV{SYNTH_ARG_N}=="?*", '
         'ENV{DAMP_N}="$env{SYNTH_ARG_N}"\n')


def write_rules(directory, text):
    os.makedirs(str(directory), exist_ok=True)
    with open(os.path.join(str(directory), "50-damp.rules"), "w") as f:
        f.write(text)


def storm(name, first, last):
    """Write "change <STORM_UUID> N=i" for i = first..last to name's uevent."""
    for i in range(first, last + 1):
        with open("/sys/class/net/%s/uevent" % name, "w") as f:
            f.write("change %s N=%d" % (STORM_UUID, i))


def test_change_storm_merged(tmp_path, udevd_factory, udevadm, net, udev_mon, kernel_mon):
    rdir = tmp_path / "rules"
    write_rules(rdir, RULES)
    d = udevd_factory("--children-max=4", "--rules-dir=%s" % rdir)
    names = ["sdmp%d%s" % (i, s) for i in range(4) for s in "ab"]
    for i in range(4):
        net.add_veth("sdmp%da" % i, "sdmp%db" % i)
    assert run([udevadm, "settle"]).returncode == 0

    assert run([udevadm, "control", "--stop-exec-queue"]).returncode == 0
    kmark, mark = kernel_mon.mark(), udev_mon.mark()
    per = 50
    for n in names[1:]:
        storm(n, 1, per)
    # sdmp0a: storm, a trigger --settle (its own UUID), storm again
    storm(names[0], 1, per)
    dev0 = NET + names[0]
    kernel_mon.wait_for(lambda e: e.devpath == dev0 and e.action == "change",
                        count=per, since=kmark, timeout=20)
    trig = subprocess.Popen([udevadm, "trigger", "--settle", "--action=change",
                             "/sys/class/net/" + names[0]], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert kernel_mon.wait_for(lambda e: e.devpath == dev0 and e.action == "change" and
                               e.props.get("SYNTH_UUID") not in (None, STORM_UUID),
                               since=kmark, timeout=20)
    storm(names[0], per + 1, 2 * per)
    kev = kernel_mon.wait_for(lambda e: e.action == "change" and
                              (e.devpath or "").startswith(NET + "sdmp"),
                              count=len(names) * per + per + 1, since=kmark, timeout=30)
    assert len(kev) == len(names) * per + per + 1
    assert trig.poll() is None, "trigger --settle returned while the queue was stopped"

    assert run([udevadm, "control", "--start-exec-queue"]).returncode == 0
    out, err = trig.communicate(timeout=30)
    assert trig.returncode == 0, err
    r = run([udevadm, "settle", "--timeout=30"])
    assert r.returncode == 0, r.stderr
    assert not os.path.exists("/run/udev/queue")

    # every SEQNUM the kernel sent is covered by one broadcast at or after it
    got = udev_mon.matching(lambda e: e.action == "change" and
                            (e.devpath or "").startswith(NET + "sdmp"), since=mark)
    by_dev = {}
    for e in got:
        by_dev.setdefault(e.devpath[len(NET):], []).append(e)
    for n in names[1:]:
        evs = by_dev.get(n, [])
        assert len(evs) == 1, (n, [e.props for e in evs])
        assert evs[0].props["DAMP_N"] == str(per)   # the newest record won
        last_seq = max(e.seqnum for e in kev if e.devpath == NET + n)
        assert evs[0].seqnum == last_seq
        assert db_props(n)["DAMP_N"] == str(per)
    evs = by_dev[names[0]]
    assert [e.props.get("DAMP_N") for e in evs] == [str(per), None, str(2 * per)], \
        [e.props for e in evs]
    assert evs[1].props["SYNTH_UUID"] not in ("0", STORM_UUID)
    assert db_props(names[0])["DAMP_N"] == str(2 * per)
    d.stop()
    st = d.stats()
    assert st["coalesced"] == len(names) * (per - 1) + (per - 1)
    assert st["processed"] + st["failed"] == st["received"] - st["coalesced"]


RULES_WATCH = r'''
ACTION!="remove", SUBSYSTEM=="block", KERNEL=="loop%(idx)d", OPTIONS+="watch"
'''


def test_watch_changes_rate_limited(tmp_path, udevd_factory, udevadm, loops, udev_mon,
                                    kernel_mon):
    rdir = tmp_path / "rules"
    idx, path, node = add_loop(loops)
    os.makedirs(str(rdir), exist_ok=True)
    with open(os.path.join(str(rdir), "50-watch.rules"), "w") as f:
        f.write(RULES_WATCH % {"idx": idx})
    d = udevd_factory("--children-max=4", "--rules-dir=%s" % rdir)
    mark = udev_mon.mark()
    write_uevent(path, "change")
    assert udev_mon.wait_for(lambda e: e.devpath == path and e.action == "change",
                             since=mark, timeout=20)
    assert wait_until(lambda: os.path.lexists("/run/udev/watch/b7:%d" % idx), 5)

    assert run([udevadm, "control", "--stop-exec-queue"]).returncode == 0
    log_at, kmark = d.log_size(), kernel_mon.mark()
    for _ in range(20):
        close_after_write(node)
        # inotify folds identical unread events: let the daemon read each one
        wait_until(lambda: False, 0.02)
    # the daemon saw the closes and wrote one change
    assert wait_until(lambda: d.log_since(log_at).count("closed after writing") >= 10, 10)
    time.sleep(0.2)
    closes = d.log_since(log_at).count("closed after writing")
    assert d.log_since(log_at).count("watch: synthesized 'change' for %s" % path) == 1
    time.sleep(0.2)
    kev = kernel_mon.matching(lambda e: e.devpath == path and e.action == "change",
                              since=kmark)
    assert len(kev) == 1
    mark = udev_mon.mark()
    assert run([udevadm, "control", "--start-exec-queue"]).returncode == 0
    assert run([udevadm, "settle", "--timeout=30"]).returncode == 0
    got = udev_mon.wait_for(lambda e: e.devpath == path and e.action == "change",
                            since=mark, timeout=10)
    assert len(got) == 1
    # its event started: the next close writes a change again
    assert wait_until(lambda: os.path.lexists("/run/udev/watch/b7:%d" % idx), 5)
    mark = udev_mon.mark()
    close_after_write(node)
    assert udev_mon.wait_for(lambda e: e.devpath == path and e.action == "change",
                             since=mark, timeout=20)
    d.stop()
    assert d.stats()["watch_limited"] == closes - 1
