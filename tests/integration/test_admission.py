# SPDX-License-Identifier: GPL-2.0-or-later
"""The admission policy (udevd(8), CONCURRENCY) on real events: as many
events run at once as children_max allows, whatever they do, so as many
programs run side by side, and never more; events of one device still run
one after the other, in order.

Real veth interfaces, a real rules file, real RUN programs (a shell script)
that leave a marker file while they run. Concurrency is counted from those
markers, never from timings: a program that waits for the others ends as
soon as they are all there, and gives up only after a generous timeout that
only a failing run reaches."""

import os
import pytest
import time

from test_rules_daemon import write_rules
from tudevlib import devpath_in, trigger_uevent, wait_until

# $1: state directory, $2: name, $3: markers to wait for. Creates its
# marker, waits until $3 markers exist (or $1/release appears, or 60 s pass),
# then records the most markers it saw at once and, with $4 = drop, removes
# its own marker first.
SCRIPT = r'''
d=$1; name=$2; want=$3
: > "$d/run/$name"
max=0; i=0
while :; do
    n=$(ls "$d/run" | wc -l)
    [ "$n" -gt "$max" ] && max=$n
    [ "$n" -ge "$want" ] && break
    [ -e "$d/release" ] && break
    [ $i -ge 1200 ] && break
    sleep 0.05; i=$((i + 1))
done
if [ "$4" = drop ]; then
    # a moment for an event beyond the limit to show up, then count again
    sleep 0.2
    n=$(ls "$d/run" | wc -l)
    [ "$n" -gt "$max" ] && max=$n
    rm -f "$d/run/$name"
fi
echo "$max" > "$d/seen/$name.tmp" && mv "$d/seen/$name.tmp" "$d/seen/$name"
'''


def start_storm(tmp_path, udevd_factory, prefix, children_max, want, mode):
    state = tmp_path / "state"
    for sub in ("run", "seen"):
        os.makedirs(str(state / sub))
    script = tmp_path / "prog.sh"
    script.write_text(SCRIPT)
    rdir = tmp_path / "rules"
    write_rules(rdir, 'SUBSYSTEM=="net", ACTION=="add", KERNEL=="%s*", '
                'RUN+="/bin/sh %s %s $name %d %s"\n' % (prefix, script, state, want, mode))
    udevd_factory("--children-max=%d" % children_max, "--rules-dir=%s" % rdir)
    return state


def add_veths(net, prefix, pairs):
    names = [("%sa%d" % (prefix, i), "%sb%d" % (prefix, i)) for i in range(pairs)]
    net.add_veths(names)
    return ["/devices/virtual/net/" + n for pair in names for n in pair]


def seen(state):
    out = {}
    for name in os.listdir(str(state / "seen")):
        if not name.endswith(".tmp"):
            with open(str(state / "seen" / name)) as f:
                out[name] = int(f.read().strip())
    return out


def wait_broadcast(kernel_mon, udev_mon, paths):
    time.sleep(0.1)
    kev = kernel_mon.matching(devpath_in(paths))
    uev = udev_mon.wait_for(devpath_in(paths), count=len(kev), timeout=180)
    assert sorted(e.seqnum for e in uev) == sorted(e.seqnum for e in kev)


def test_programs_run_side_by_side(tmp_path, udevd_factory, net, kernel_mon, udev_mon):
    """8 interfaces whose program waits until all 8 programs run: with
    children_max 16, each of them sees all 8 markers, on any number of
    CPUs."""
    n = 8
    state = start_storm(tmp_path, udevd_factory, "aw", 16, n, "keep")
    paths = add_veths(net, "aw", n // 2)
    wait_broadcast(kernel_mon, udev_mon, paths)
    got = seen(state)
    assert len(got) == n, got
    assert all(v == n for v in got.values()), \
        "not all %d programs ran at once (markers each saw: %s)" % (n, sorted(got.values()))


def test_children_max_bounds_programs(tmp_path, udevd_factory, net, kernel_mon, udev_mon):
    """children_max 2: programs meet in pairs, and none of them ever sees a
    third marker. A program left without a partner is released by the test
    once nothing else moves (that only costs time)."""
    n = 8
    state = start_storm(tmp_path, udevd_factory, "ac", 2, 2, "drop")
    paths = add_veths(net, "ac", n // 2)
    last, last_change = -1, time.monotonic()
    deadline = time.monotonic() + 300
    while len(seen(state)) < n and time.monotonic() < deadline:
        count = len(seen(state))
        if count != last:
            last, last_change = count, time.monotonic()
        elif time.monotonic() - last_change > 3:
            (state / "release").touch()
        time.sleep(0.1)
    wait_broadcast(kernel_mon, udev_mon, paths)
    got = seen(state)
    assert len(got) == n, got
    assert max(got.values()) == 2, \
        "children_max 2, but programs saw %s markers at once" % sorted(got.values())


# $1: state directory, $2: SEQNUM. Notes an overlap with another event of
# the device, keeps its marker a moment, appends its seqnum to the order.
ORDER_SCRIPT = r'''
d=$1
[ -n "$(ls "$d/run")" ] && echo "$2 overlaps $(ls "$d/run")" >> "$d/errors"
: > "$d/run/$2"
sleep 0.1
rm -f "$d/run/$2"
echo "$2" >> "$d/order"
'''


def test_events_of_one_device_in_order(tmp_path, udevd_factory, net, kernel_mon, udev_mon):
    """Six change events of one interface right after its add: each runs
    after the previous one finished, in the kernel's order, although 16
    workers are free. Changes still queued behind a running event of the
    device may be merged into one (udevd(8), STORM DAMPING): what runs is
    a subsequence of the kernel's events that starts with the add and ends
    with the last change."""
    state = tmp_path / "state"
    os.makedirs(str(state / "run"))
    script = tmp_path / "order.sh"
    script.write_text(ORDER_SCRIPT)
    rdir = tmp_path / "rules"
    write_rules(rdir, 'SUBSYSTEM=="net", KERNEL=="ao0", '
                'RUN+="/bin/sh %s %s $env{SEQNUM}"\n' % (script, state))
    udevd_factory("--children-max=16", "--rules-dir=%s" % rdir)
    path, _ = net.add_veth("ao0", "ao1")
    for _ in range(6):
        trigger_uevent("/sys" + path)
    time.sleep(0.1)

    def is_ao0(e):
        return e.devpath == path

    kev = kernel_mon.matching(is_ao0)
    assert len(kev) == 7, [(e.action, e.seqnum) for e in kev]
    seqnums = sorted(e.seqnum for e in kev)
    last = seqnums[-1]
    uev = udev_mon.wait_for(lambda e: is_ao0(e) and e.seqnum == last, timeout=60)
    assert uev, "no broadcast of the last change (SEQNUM %d)" % last
    broadcast = [e.seqnum for e in udev_mon.matching(is_ao0)]

    def order():
        try:
            return [int(x) for x in open(str(state / "order")).read().split()]
        except OSError:
            return []
    assert wait_until(lambda: order() and order()[-1] == last, 30), order()
    got = order()
    # each event once, in the kernel's order, the add first and the last change last
    assert got == broadcast, (got, broadcast)
    assert got[0] == seqnums[0] and got[-1] == last, (got, seqnums)
    assert got == sorted(set(got)) and set(got) <= set(seqnums), (got, seqnums)
    assert not os.path.exists(str(state / "errors")), open(str(state / "errors")).read()


# $1: state directory, $2: name. Spins (runnable all along: shell builtins
# only) until $1/stop exists, logging its start and end.
SPIN_SCRIPT = r'''
d=$1
echo "start $2" >> "$d/log"
while [ ! -e "$d/stop" ]; do :; done
echo "end $2" >> "$d/log"
'''


def spin_storm(tmp_path, udevd_factory, net, prefix, limit, pairs=2):
    state = tmp_path / "state"
    os.makedirs(str(state))
    script = tmp_path / "spin.sh"
    script.write_text(SPIN_SCRIPT)
    rdir = tmp_path / "rules"
    write_rules(rdir, 'SUBSYSTEM=="net", ACTION=="add", KERNEL=="%s*", '
                'RUN+="/bin/sh %s %s $name"\n' % (prefix, script, state))
    limit_args = [] if limit is None else ["--program-limit=%d" % limit]
    udevd_factory("--children-max=16", *limit_args, "--rules-dir=%s" % rdir)
    paths = add_veths(net, prefix, pairs)
    return state, paths


def log_lines(state):
    try:
        with open(str(state / "log")) as f:
            return f.read().split("\n")[:-1]
    except FileNotFoundError:
        return []


def test_program_limit_holds_spinning_programs(tmp_path, udevd_factory, net, kernel_mon,
                                               udev_mon):
    """--program-limit=1: of 4 programs that keep a CPU busy, one runs; the
    others start one after the other, each once the one before it ended."""
    state, paths = spin_storm(tmp_path, udevd_factory, net, "pl", 1)
    assert wait_until(lambda: len(log_lines(state)) >= 1, timeout=60), "no program started"
    time.sleep(0.5)  # time enough for others to start, were they not held
    assert len(log_lines(state)) == 1, log_lines(state)
    (state / "stop").touch()
    wait_broadcast(kernel_mon, udev_mon, paths)
    lines = log_lines(state)
    assert len(lines) == 8, lines
    for i in range(0, 8, 2):
        assert lines[i].startswith("start ") and lines[i + 1] == "end " + lines[i][6:], lines


def test_program_limit_zero_is_no_limit(tmp_path, udevd_factory, net, kernel_mon, udev_mon):
    """--program-limit=0: all 4 spinning programs run at once."""
    state, paths = spin_storm(tmp_path, udevd_factory, net, "pz", 0)
    assert wait_until(lambda: len(log_lines(state)) >= 4, timeout=60), log_lines(state)
    (state / "stop").touch()
    wait_broadcast(kernel_mon, udev_mon, paths)
    lines = log_lines(state)
    assert [l.split()[0] for l in lines] == ["start"] * 4 + ["end"] * 4, lines


def test_program_limit_default_is_two_per_cpu(tmp_path, udevd_factory, net, kernel_mon,
                                              udev_mon):
    """No --program-limit: of 2 x CPUs + 2 spinning programs, 2 x CPUs run;
    the other two start once two have ended."""
    cpus = len(os.sched_getaffinity(0))
    if 2 * cpus + 2 > 16:
        pytest.skip("%d CPUs: more programs than --children-max=16 events" % cpus)
    state, paths = spin_storm(tmp_path, udevd_factory, net, "pd", None, pairs=cpus + 1)
    assert wait_until(lambda: len(log_lines(state)) >= 2 * cpus, timeout=60), log_lines(state)
    time.sleep(0.5)  # time enough for the last two to start, were they not held
    assert len(log_lines(state)) == 2 * cpus, log_lines(state)
    (state / "stop").touch()
    wait_broadcast(kernel_mon, udev_mon, paths)
    lines = log_lines(state)
    assert len(lines) == 2 * (2 * cpus + 2), lines
    assert [l.split()[0] for l in lines[:2 * cpus]] == ["start"] * (2 * cpus), lines
