"""How many programs run at once (udevd(8), the event queue's program
window): RUN programs that keep the CPU busy run about one per CPU, not one
per worker, while programs that sleep still run many at once. Real veth
events, a real rules file, real spawned programs that log when they start and
end; the overlap is computed from those logs."""

import os
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
    names = [("%sa%d" % (prefix, i), "%sb%d" % (prefix, i)) for i in range(pairs)]
    paths = []
    for a, b in names:
        paths += ["/devices/virtual/net/" + a, "/devices/virtual/net/" + b]
    net.add_veths(names)
    time.sleep(0.1)
    kev = kernel_mon.matching(devpath_in(paths))
    uev = udev_mon.wait_for(devpath_in(paths), count=len(kev), timeout=120)
    assert sorted(e.seqnum for e in uev) == sorted(e.seqnum for e in kev)
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
