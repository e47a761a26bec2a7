# SPDX-License-Identifier: GPL-2.0-or-later
"""Event lanes (udevd(8), the event queue): events of a kind that runs no
program are not held behind events that wait for programs. Real veth events
whose RUN program keeps a CPU busy, real loop devices (LOOP_CTL_ADD) added
while those programs back up, a real rules file; latencies from the kernel's
broadcast to udevd's, as a libudev client sees them."""

import os
import statistics
import time

from test_rules_daemon import write_rules
from tudevlib import LoopDevices, devpath_in, parse_stats, wait_until

SPIN = """import sys, time
end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    pass
"""

# 20 new interfaces per CPU, each with a program of SPIN_S of CPU: at most
# one such program per CPU runs at once, so they back up for seconds
PAIRS = 10 * max(len(os.sched_getaffinity(0)), 2)
SPIN_S = 0.2
LOOPS = 6


def test_loop_events_pass_events_waiting_for_programs(tmp_path, udevd_factory, net, loops,
                                                      kernel_mon, udev_mon):
    script = tmp_path / "spin.py"
    script.write_text(SPIN)
    rdir = tmp_path / "rules"
    write_rules(rdir, 'SUBSYSTEM=="net", ACTION=="add", KERNEL=="ln*", '
                'RUN+="/usr/bin/python3 %s %s"\n' % (script, SPIN_S))
    d = udevd_factory("--rules-dir=%s" % rdir)

    names = [("lna%d" % i, "lnb%d" % i) for i in range(PAIRS)]
    net_paths = ["/devices/virtual/net/" + n for pair in names for n in pair]
    net.add_veths(names)
    time.sleep(0.5)  # the programs back up: about one or two run at once
    idxs = []
    for _ in range(LOOPS):
        idxs.append(loops.add())
        time.sleep(0.15)
    loop_paths = [LoopDevices.devpath(i) for i in idxs]

    def is_loop_add(e):
        return e.action == "add" and e.devpath in loop_paths

    uev = udev_mon.wait_for(is_loop_add, count=LOOPS, timeout=60)
    assert len(uev) == LOOPS, "%d of %d loop devices' add events broadcast" % (len(uev), LOOPS)
    kev = {e.seqnum: e for e in kernel_mon.matching(is_loop_add)}
    assert len(kev) == LOOPS
    lat = sorted(e.recv_time - kev[e.seqnum].recv_time for e in uev)
    last_loop = max(e.recv_time for e in uev)

    # The setup must have made events wait for programs: when the last loop
    # event was broadcast, many interfaces' add events were still waiting.
    def is_net_add(e):
        return e.action == "add" and e.devpath in net_paths

    net_done = udev_mon.wait_for(is_net_add, count=2 * PAIRS, timeout=120)
    assert len(net_done) == 2 * PAIRS, "%d of %d interfaces' add events broadcast" % (
        len(net_done), 2 * PAIRS)
    pending = sum(1 for e in net_done if e.recv_time > last_loop)
    net_lat = [e.recv_time - k.recv_time for e in net_done
               for k in kernel_mon.matching(is_net_add) if k.seqnum == e.seqnum]
    print("loop add events: median %.1f ms, max %.1f ms; %d of %d interface adds still "
          "waiting then; theirs: median %.0f ms, max %.0f ms"
          % (statistics.median(lat) * 1e3, lat[-1] * 1e3, pending, 2 * PAIRS,
             statistics.median(net_lat) * 1e3, max(net_lat) * 1e3))
    # In arrival order the loop events would wait for most of the backlog
    # (seconds: 3 s on the build before the lanes); in their own lane they
    # wait for a CPU only.
    assert lat[-1] < 1.0, "loop events waited %s ms" % ", ".join("%.0f" % (x * 1e3)
                                                                  for x in lat)
    assert pending >= PAIRS // 2, "only %d interface add events were left when the loop events " \
        "were done: no backlog to pass" % pending

    # Everything still arrives, exactly once.
    all_paths = net_paths + loop_paths
    kall = kernel_mon.matching(devpath_in(all_paths))
    assert wait_until(lambda: len(udev_mon.matching(devpath_in(all_paths))) >= len(kall), 60)
    assert sorted(e.seqnum for e in udev_mon.matching(devpath_in(all_paths))) == \
        sorted(e.seqnum for e in kall)

    # The exit statistics count the fast lane's events, and the one kind
    # (net add, new, hence fast) that moved to the slow lane.
    stats = parse_stats(d.stop())
    assert stats and stats["fast_lane"] >= LOOPS and stats["lane_changes"] >= 1, stats
