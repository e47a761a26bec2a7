# SPDX-License-Identifier: GPL-2.0-or-later
"""Per-event timeout (--event-timeout): a warning at a third of it, and at the
timeout the event is abandoned -- broadcast once with UDEV_WORKER_FAILED and
ETIMEDOUT, its dependants released at once -- while the worker's late result
is discarded. The slow event is made with --debug-event-delay."""

import time



def exactly(path):
    return lambda e: e.devpath == path


def below(path):
    return lambda e: e.devpath is not None and e.devpath.startswith(path + "/")

TIMEOUT_S = 2
DELAY_MS = 5000


def test_event_timeout_abandons_and_releases(udevd_factory, net, udev_mon):
    d = udevd_factory("--children-max=4", "--event-timeout=%d" % TIMEOUT_S,
                      "--debug-event-delay=%d" % DELAY_MS,
                      "--debug-event-delay-match=/devices/virtual/net/toa")
    slow = "/devices/virtual/net/toa"
    t0 = time.monotonic()
    net.add_veth("toa", "tob")

    # The slow device's add is broadcast as failed, after ~TIMEOUT (tick: 1 s).
    failed = udev_mon.wait_for(exactly(slow), timeout=TIMEOUT_S + 4)
    assert len(failed) == 1, "the timed-out event was not broadcast"
    e = failed[0]
    waited = e.recv_time - t0
    assert TIMEOUT_S - 0.2 <= waited < DELAY_MS / 1000, \
        "abandoned after %.2fs, expected about %ds" % (waited, TIMEOUT_S)
    assert e.props.get("UDEV_WORKER_FAILED") == "1"
    assert e.props.get("UDEV_WORKER_ERRNO") == "110"
    assert e.props.get("UDEV_WORKER_ERRNO_NAME") == "ETIMEDOUT"
    assert e.action == "add"

    # Its children (queues) were blocked by it and are released by the abandon,
    # long before the stuck worker wakes up.
    kids = udev_mon.wait_for(below(slow), count=2, timeout=1.5)
    assert len(kids) >= 2, "children still blocked after the abandon"
    assert max(k.recv_time for k in kids) - t0 < DELAY_MS / 1000

    # The unrelated peer was never delayed and succeeded.
    peer = udev_mon.matching(exactly("/devices/virtual/net/tob"))
    assert len(peer) == 1 and "UDEV_WORKER_FAILED" not in peer[0].props

    # After the worker wakes up, its result is discarded: still one broadcast.
    time.sleep(max(0.0, t0 + DELAY_MS / 1000 + 0.7 - time.monotonic()))
    again = udev_mon.matching(exactly(slow))
    assert [x.seqnum for x in again] == [e.seqnum], "the abandoned event was broadcast twice"

    log = d.log()
    assert "is taking a long time" in log
    assert "timed out after" in log
    assert "result discarded" in log
