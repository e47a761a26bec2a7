# SPDX-License-Identifier: GPL-2.0-or-later
"""path_id, usb_id and net_id over fake sysfs trees, compared with systemd 252.

The fixtures (tests/builtins/storage_net_fixtures.py) model devices this VM
lacks: a USB stick with partitions, SATA (AHCI, port multiplier), virtio-scsi,
virtio-blk, NVMe (+ multipath, NVMe-oF), SAS (direct, expander, wide port), FC,
iSCSI, Hyper-V, cciss, tapes, MMC, Xen, s390 (ccw, ccwgroup, ap), SPI, BCMA, a
USB keyboard, card readers with odd strings and broken descriptors, virtio and
PCI network interfaces with firmware indexes/labels, hotplug slots behind
bridges, SR-IOV, ARI, PCI domains, phys_port_name, USB/BCMA network devices,
and the non-PCI naming paths (ACPI platform, vio, ccwgroup, Xen, netdevsim).

For every (builtin, device) both `udevadm test-builtin` run in a private mount
namespace with the tree on /sys and the reference hwdb.bin on /etc/udev; the
printed properties and success/failure must be identical. net_id is also run
under each naming scheme selected by net.naming-scheme= and
$NET_NAMING_SCHEME. Every difference is a failure unless listed in
EXPECTED_DIFFS with its reason.
"""

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "builtins"))

import sd_compare  # noqa: E402
import storage_net_fixtures  # noqa: E402

# {(command, devpath): reason}; empty: everything is byte-for-byte identical.
EXPECTED_DIFFS = {}

SCHEMES = [
    ("net.naming-scheme=v238", None),
    ("net_naming_scheme=v240 net.naming-scheme=v247", None),
    ("rd.net.naming-scheme=v238 net.naming-scheme=bogus", {"NET_NAMING_SCHEME": ":v250"}),
]


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    return storage_net_fixtures.build(str(tmp_path_factory.mktemp("sysfs")))


def check(failures):
    assert not failures, "%d differences:\n\n%s" % (len(failures), "\n\n".join(failures))


def test_all_builtins_match_systemd(tree, sd_udevadm, udevadm):
    t, cases = tree
    failures, ours, _ = sd_compare.compare(cases, sysroot=t.sys, expected_diffs=EXPECTED_DIFFS)
    check(failures)
    # the fixtures really produce values (not just two empty outputs)
    produced = sum(1 for o in ours if o[1])
    assert produced > len(cases) // 2, produced


@pytest.mark.parametrize("cmdline,env", SCHEMES)
def test_net_id_naming_schemes(tree, sd_udevadm, udevadm, cmdline, env):
    t, cases = tree
    cases = [c for c in cases if c[0] == "net_id"]
    failures, ours, _ = sd_compare.compare(cases, sysroot=t.sys, cmdline=cmdline, env=env,
                                           expected_diffs=EXPECTED_DIFFS)
    check(failures)
