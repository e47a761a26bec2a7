# SPDX-License-Identifier: GPL-2.0-or-later
"""--kernel-broadcast (udevd(8)): once an event is processed, its kernel
datagram is sent unchanged to netlink groups 4, where libudev-zero listens
(mdevd -O 4 does the same). Real veth events; a listener bound to groups 4
as libudev-zero binds it."""

import time

from tudevlib import NetlinkListener, devpath_in

KERNEL_BROADCAST_GROUPS = 4


def add_pair(net, a, b):
    net.add_veths([(a, b)])
    return ["/devices/virtual/net/" + a, "/devices/virtual/net/" + b]


def wait_udev(kernel_mon, udev_mon, paths):
    time.sleep(0.1)
    kev = kernel_mon.matching(devpath_in(paths))
    uev = udev_mon.wait_for(devpath_in(paths), count=len(kev), timeout=60)
    assert sorted(e.seqnum for e in uev) == sorted(e.seqnum for e in kev)
    return kev


def test_processed_events_reach_group_4_unchanged(udevd_factory, net, kernel_mon, udev_mon):
    zero = NetlinkListener(KERNEL_BROADCAST_GROUPS)
    try:
        udevd_factory("--kernel-broadcast")
        paths = add_pair(net, "kba0", "kbb0")
        net.delete_all()
        kev = wait_udev(kernel_mon, udev_mon, paths)
        got = zero.wait_for(devpath_in(paths), count=len(kev), timeout=30)
        assert len(got) == len(kev), (len(got), len(kev))
        assert all(e.kind == "kernel" for e in got)
        by_seq = {e.seqnum: e.raw for e in kev}
        assert {e.seqnum: e.raw for e in got} == by_seq
        # each device's events in the kernel's order
        for p in paths:
            mine = [e.seqnum for e in got if e.devpath == p]
            assert mine == sorted(mine), (p, mine)
    finally:
        zero.close()


def test_nothing_on_group_4_without_the_option(udevd_factory, net, kernel_mon, udev_mon):
    zero = NetlinkListener(KERNEL_BROADCAST_GROUPS)
    try:
        udevd_factory()
        paths = add_pair(net, "kba1", "kbb1")
        wait_udev(kernel_mon, udev_mon, paths)
        assert zero.quiet(devpath_in(paths), 0.3) == []
    finally:
        zero.close()
