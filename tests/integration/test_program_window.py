# SPDX-License-Identifier: GPL-2.0-or-later
"""How many programs run at once (udevd(8), the event queue's program
window): RUN programs that keep the CPU busy run about one per CPU, not one
per worker, while programs that sleep still run many at once. Real veth
events, a real rules file, real spawned programs that log when they start and
end; the overlap is computed from those logs."""

import os
import re
import time

from test_rules_daemon import write_rules
from tudevlib import devpath_in

CHILDREN_MAX = 20


def intervals(logdir):
    """[(start, end)] in ns from the programs' logs (one file per program)."""
    out = []
    for name in os.listdir(logdir):
        with open(os.path.join(logdir, name)) as f:
            words = f.read().split()
        assert len(words) == 2, "%s: %r (the program did not finish?)" % (name, words)
        out.append((int(words[0]), int(words[1])))
    return out


def max_overlap(iv):
    marks = sorted([(s, 1) for s, _ in iv] + [(e, -1) for _, e in iv])
    cur = best = 0
    for _, d in marks:
        cur += d
        best = max(best, cur)
    return best


def add_veths_and_wait(net, kernel_mon, udev_mon, prefix, pairs):
    """Add veth pairs PREFIXaN/PREFIXbN and wait until udevd broadcast every
    kernel event of them."""
    names = [("%sa%d" % (prefix, i), "%sb%d" % (prefix, i)) for i in range(pairs)]
    paths = []
    for a, b in names:
        paths += ["/devices/virtual/net/" + a, "/devices/virtual/net/" + b]
    net.add_veths(names)
    time.sleep(0.1)
    kev = kernel_mon.matching(devpath_in(paths))
    uev = udev_mon.wait_for(devpath_in(paths), count=len(kev), timeout=120)
    assert sorted(e.seqnum for e in uev) == sorted(e.seqnum for e in kev)


def run_storm(tmp_path, udevd_factory, net, kernel_mon, udev_mon, prefix, pairs, program):
    logdir = tmp_path / "log"
    os.makedirs(str(logdir))
    rdir = tmp_path / "rules"
    # $name is quoted for the rules engine, $$ for the shell's own pid
    stamp = "date +%%s%%N"  # udev turns %% into %, $$ into $
    write_rules(rdir, 'SUBSYSTEM=="net", ACTION=="add", KERNEL=="' + prefix + '*", '
                'RUN+="/bin/sh -c \'L=' + str(logdir) + '/$name; ' + stamp + ' > $$L; ' +
                program + '; ' + stamp + ' >> $$L\'"\n')
    udevd_factory("--children-max=%d" % CHILDREN_MAX, "--rules-dir=%s" % rdir)
    add_veths_and_wait(net, kernel_mon, udev_mon, prefix, pairs)
    iv = intervals(str(logdir))
    assert len(iv) == 2 * pairs, "%d of %d programs logged" % (len(iv), 2 * pairs)
    elapsed = (max(e for _, e in iv) - min(s for s, _ in iv)) / 1e9
    return max_overlap(iv), elapsed


def test_cpu_bound_programs_run_about_one_per_cpu(tmp_path, udevd_factory, net, kernel_mon,
                                                   udev_mon):
    """40 programs of ~20-40 ms of CPU each (a shell loop), one per new
    interface. Without the window every one of the 20 workers would run its
    program at once (as systemd-udevd does); with it, about one per CPU (2 on
    the development VM) plus what the window lets in while the CPUs
    momentarily have room."""
    cpus = len(os.sched_getaffinity(0))
    peak, elapsed = run_storm(tmp_path, udevd_factory, net, kernel_mon, udev_mon, "pw", 20,
                              "i=0; while [ $$i -lt 20000 ]; do i=$$((i+1)); done")
    print("CPU-bound programs: at most %d at once on %d CPUs, %.2f s" % (peak, cpus, elapsed))
    assert peak <= max(2 * cpus + 2, 6), \
        "%d CPU-bound programs ran at once on %d CPUs" % (peak, cpus)


def test_sleeping_programs_run_many_at_once(tmp_path, udevd_factory, net, kernel_mon, udev_mon):
    """32 programs that sleep 1 s: the CPUs have room, so the window grows
    (one place per millisecond) and they overlap almost entirely."""
    peak, elapsed = run_storm(tmp_path, udevd_factory, net, kernel_mon, udev_mon, "ps", 16,
                              "sleep 1")
    print("sleeping programs: at most %d at once, %.2f s" % (peak, elapsed))
    assert peak >= CHILDREN_MAX * 3 // 4, "only %d sleeping programs ran at once" % peak
    assert elapsed < 4, "32 programs of 1 s took %.2f s with %d workers" % (elapsed, CHILDREN_MAX)


GATE_SCRIPT = r'''
# $1: state directory (lock, count), $2: log directory, $3: interface.
# Counts 3 times longer when another copy runs as it starts: programs that
# cost more CPU beside each other (as fork and exec do on some virtual
# machines).
L=$1
exec 9>>"$L/lock"
flock 9; n=$(cat "$L/count" 2>/dev/null || echo 0); echo $((n + 1)) > "$L/count"; flock -u 9
start=$(date +%s%N)
k=1; [ "$n" -gt 0 ] && k=3
i=0; while [ $i -lt $((k * 6000)) ]; do i=$((i + 1)); done
flock 9; n=$(cat "$L/count"); echo $((n - 1)) > "$L/count"; flock -u 9
echo "$start $(date +%s%N)" > "$2/$3"
'''


def costly_storm(tmp_path, udevd_factory, net, kernel_mon, udev_mon, *args):
    """60 RUN programs of GATE_SCRIPT on new veth interfaces: (number of them
    that overlapped another, most at once, the daemon's whole log once it
    stopped)."""
    logdir, statedir = tmp_path / "log", tmp_path / "state"
    os.makedirs(str(logdir))
    os.makedirs(str(statedir))
    script = tmp_path / "prog.sh"
    script.write_text(GATE_SCRIPT)
    rdir = tmp_path / "rules"
    write_rules(rdir, 'SUBSYSTEM=="net", ACTION=="add", KERNEL=="pg*", '
                'RUN+="/bin/sh %s %s %s $name"\n' % (script, statedir, logdir))
    d = udevd_factory("--children-max=%d" % CHILDREN_MAX, "--rules-dir=%s" % rdir, *args)
    add_veths_and_wait(net, kernel_mon, udev_mon, "pg", 30)
    iv = intervals(str(logdir))
    assert len(iv) == 60, "%d of 60 programs logged" % len(iv)
    overlapping = sum(1 for i, (s, e) in enumerate(iv)
                      if any(s < e2 and s2 < e for j, (s2, e2) in enumerate(iv) if j != i))
    print("program gate %s: %d of 60 programs overlapped another, at most %d at once"
          % (args, overlapping, max_overlap(iv)))
    return overlapping, max_overlap(iv), d.stop()  # the log, with the exit statistics


def test_program_gate_runs_costly_programs_one_at_a_time(tmp_path, udevd_factory, net,
                                                        kernel_mon, udev_mon):
    """udevd(8), the program gate: 60 CPU-bound RUN programs that cost three
    times the CPU when they start beside another copy. The gate measures it
    (CPU time from the exec helper's rusage), logs that it runs CPU-heavy
    programs one at a time, and then does: only the programs it learns from
    and those of its retries of side by side (after 2 s, then 4 s...)
    overlap another."""
    overlapping, _, log = costly_storm(tmp_path, udevd_factory, net, kernel_mon, udev_mon)
    assert "running them one at a time" in log, \
        "the gate did not turn serial:\n" + "\n".join(
            line for line in log.splitlines() if "gate" in line.lower())
    stats = re.search(r"program gate: mode=(\w+) serial=(\d+) parallel_retries=(\d+) "
                      r"solo_probes=(\d+) stall_starts=(\d+)", log)
    assert stats, "no program gate statistics at exit"
    # it turned serial at least once, after measuring a program alone at
    # least once (how many more solo probes follow depends on the machine's
    # speed: a TSan build on a loaded 2-CPU machine made one)
    assert int(stats.group(2)) >= 1 and int(stats.group(4)) >= 1, stats.group(0)
    # learning (about ten programs) and one retry of side by side every 2 s
    # or more overlap; without the gate nearly all of them do
    assert overlapping <= 30, "%d of 60 programs overlapped another" % overlapping


def test_program_gate_off(tmp_path, udevd_factory, net, kernel_mon, udev_mon):
    """--program-gate=off: the same programs run side by side (as many as
    the event queue's window lets start), and nothing is logged."""
    overlapping, peak, log = costly_storm(tmp_path, udevd_factory, net, kernel_mon, udev_mon,
                                          "--program-gate=off")
    assert "one at a time" not in log and "program gate:" not in log
    assert overlapping >= 45 and peak >= 2, "%d of 60 overlapped, %d at once" % (overlapping,
                                                                                 peak)
