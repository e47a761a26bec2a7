# SPDX-License-Identifier: GPL-2.0-or-later
"""Queue ordering (an event waits for earlier events of the same device, node
or a parent/child devpath: udevd(8) DESCRIPTION) and parallelism, made
visible with --debug-event-delay: each worker sleeps DELAY ms in every event
whose DEVPATH matches the glob (here: the veth net devices themselves, not
their queues)."""

import time

from tudevlib import devpath_in, devpath_under

DELAY_MS = 300


def veth_names(prefix, n):
    return [("%sa%d" % (prefix, i), "%sb%d" % (prefix, i)) for i in range(n)]


def create_and_collect(net, kernel_mon, udev_mon, prefix, pairs):
    """Create the pairs, wait until every kernel event of them was broadcast;
    returns (net devpaths, kernel events, udev events, elapsed seconds from the
    first kernel event to the last broadcast)."""
    names = veth_names(prefix, pairs)
    paths = []
    for a, b in names:
        paths += ["/devices/virtual/net/" + a, "/devices/virtual/net/" + b]
    net.add_veths(names)
    time.sleep(0.1)   # all uevents are emitted when `ip link add` returns
    kev = kernel_mon.matching(devpath_in(paths))
    uev = udev_mon.wait_for(devpath_in(paths), count=len(kev),
                            timeout=10 + 2 * len(paths) * DELAY_MS / 1000)
    assert sorted(e.seqnum for e in uev) == sorted(e.seqnum for e in kev), \
        "not every kernel event was broadcast exactly once"
    elapsed = max(e.recv_time for e in uev) - min(e.recv_time for e in kev)
    print("%d veth pairs: %d kernel events, first kernel event to last broadcast %.3fs"
          % (pairs, len(kev), elapsed))
    return paths, kev, uev, elapsed


def check_order(paths, kev, uev):
    # per device: broadcasts in kernel order (same seqnum sequence)
    devs = {e.devpath for e in kev}
    for d in devs:
        k = [(e.seqnum, e.action) for e in kev if e.devpath == d]
        u = [(e.seqnum, e.action) for e in uev if e.devpath == d]
        assert u == k, "events of %s broadcast out of order" % d
    # children after their parent's add (and never before it)
    for p in paths:
        add_pos = [i for i, e in enumerate(uev) if e.devpath == p and e.action == "add"]
        assert len(add_pos) == 1
        kids = [i for i, e in enumerate(uev) if e.devpath.startswith(p + "/")]
        assert kids, "no queue events for %s" % p
        assert min(kids) > add_pos[0], "a queue of %s was broadcast before its add" % p


def test_order_and_parallelism(udevd_factory, net, kernel_mon, udev_mon):
    delay_ms = 500
    udevd_factory("--children-max=20", "--debug-event-delay=%d" % delay_ms,
                  "--debug-event-delay-match=/devices/virtual/net/or[ab][0-9]")
    paths, kev, uev, elapsed = create_and_collect(net, kernel_mon, udev_mon, "or", 8)
    n_delayed = len([e for e in kev if e.devpath in paths])
    assert n_delayed == 16
    delay = delay_ms / 1000
    # every delayed event really took DELAY (the knob works) ...
    for e in uev:
        if e.devpath in paths:
            k = [x for x in kev if x.seqnum == e.seqnum][0]
            assert e.recv_time - k.recv_time >= delay * 0.9, e
    # ... and independent devices ran in parallel
    assert elapsed >= delay * 0.9
    assert elapsed < n_delayed * delay / 2, \
        "%.2fs for %d delayed events: not parallel" % (elapsed, n_delayed)
    check_order(paths, kev, uev)

    # removal: children first (kernel order), each device's events in order
    mark_k, mark_u = kernel_mon.mark(), udev_mon.mark()
    net.delete_all()
    time.sleep(0.1)
    kev2 = kernel_mon.matching(devpath_in(paths), since=mark_k)
    assert [e for e in kev2 if e.devpath in paths and e.action == "remove"]
    uev2 = udev_mon.wait_for(devpath_in(paths), count=len(kev2), timeout=15, since=mark_u)
    assert sorted(e.seqnum for e in uev2) == sorted(e.seqnum for e in kev2)
    all_k, all_u = kev + kev2, uev + uev2
    for d in {e.devpath for e in all_k}:
        assert [e.seqnum for e in all_u if e.devpath == d] == \
            [e.seqnum for e in all_k if e.devpath == d], d
    # a parent's remove is broadcast after every event of its children
    for p in paths:
        rm = [i for i, e in enumerate(all_u) if e.devpath == p and e.action == "remove"]
        kids = [i for i, e in enumerate(all_u) if devpath_under(p)(e) and e.devpath != p]
        assert len(rm) == 1 and max(kids) < rm[0]

    # children-max (20) >= the 16 independent delayed events, which arrived in
    # one burst: all of them should have run at the same time
    assert elapsed < 2 * delay, \
        "%.2fs for %d independent events of %.1fs with children-max=20: they ran in " \
        "waves, not all at once" % (elapsed, n_delayed, delay)


def test_children_max_1_is_serial(udevd_factory, net, kernel_mon, udev_mon):
    udevd_factory("--children-max=1", "--debug-event-delay=%d" % DELAY_MS,
                  "--debug-event-delay-match=/devices/virtual/net/se[ab][0-9]")
    paths, kev, uev, elapsed = create_and_collect(net, kernel_mon, udev_mon, "se", 2)
    n_delayed = len([e for e in kev if e.devpath in paths])
    assert n_delayed == 4
    assert elapsed >= n_delayed * DELAY_MS / 1000 * 0.9, \
        "%.2fs for %d delayed events with one worker: ran in parallel" % (elapsed, n_delayed)
    check_order(paths, kev, uev)
