# SPDX-License-Identifier: GPL-2.0-or-later
"""`udevadm settle` (ours and systemd 252's) against tudev: it returns when
/run/udev/queue is gone, i.e. when every queued event has been broadcast."""

import os
import time

import pytest

from tudevlib import QUEUE_FLAG, devpath_in, run

DELAY_MS = 2000


@pytest.fixture(params=["ours", "systemd"])
def tool(request):
    return request.getfixturevalue("udevadm" if request.param == "ours" else "sd_udevadm")


def timed(cmd, timeout=60):
    t = time.monotonic()
    r = run(cmd, timeout=timeout)
    return r, time.monotonic() - t, time.monotonic()


def test_settle(tool, udevd_factory, net, kernel_mon, udev_mon):
    d = udevd_factory("--children-max=8", "--debug-event-delay=%d" % DELAY_MS,
                  "--debug-event-delay-match=/devices/virtual/net/st[ab]0")
    delay = DELAY_MS / 1000

    # idle daemon: returns at once
    r, took, _ = timed([tool, "settle"])
    assert r.returncode == 0, r.stderr
    assert took < 1.0

    paths = ["/devices/virtual/net/sta0", "/devices/virtual/net/stb0"]
    t_add = time.monotonic()
    net.add_veth("sta0", "stb0")

    # pending events, short timeout: fails after ~1s without waiting for them
    r, took, _ = timed([tool, "settle", "--timeout=1"])
    assert r.returncode != 0
    assert 0.9 <= took < delay - 0.3 + 0.5, took
    assert os.path.exists(QUEUE_FLAG)

    r, took, t_done = timed([tool, "settle"])
    assert r.returncode == 0, r.stderr
    assert t_done - t_add >= delay * 0.9, "settle returned before the delayed events ran"
    assert not os.path.exists(QUEUE_FLAG)
    kev = kernel_mon.matching(devpath_in(paths))
    assert len(kev) >= 4
    # every event was broadcast before settle returned (allow the listener
    # thread a moment to read what is already in its socket)
    uev = udev_mon.wait_for(devpath_in(paths), count=len(kev), timeout=2)
    assert sorted(e.seqnum for e in uev) == sorted(e.seqnum for e in kev)
    assert max(e.recv_time for e in uev) <= t_done + 0.25

    # and idle again
    r, took, _ = timed([tool, "settle", "--timeout=0"])
    assert r.returncode == 0, r.stderr
    assert took < 1.0
    # stop now: the veth removal at teardown would be delayed too
    d.stop()
