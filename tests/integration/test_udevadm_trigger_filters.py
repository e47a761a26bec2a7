# SPDX-License-Identifier: GPL-2.0-or-later
"""Every filter of `udevadm trigger` selects exactly the right devices among
veth pairs and loop devices made by the test (with database records and
tag index entries written by hand), in the same order as systemd 252's
udevadm; and a real trigger sends events to exactly those devices."""

import os
import re
import time

import pytest

from tudevlib import LoopDevices, NetDevices, ifindex, reset_run_udev, run

TAG = "tftag"


class Devices:
    """Two veth pairs and two loop devices, by short name -> devpath."""

    def __init__(self, net, loops):
        net.add_veth("tfa0", "tfb0")
        net.add_veth("tfc0", "tfd0")
        self.la, self.lb = loops.add(), loops.add()
        self.path = {n: "/devices/virtual/net/" + n for n in ("tfa0", "tfb0", "tfc0", "tfd0")}
        self.path["la"] = LoopDevices.devpath(self.la)
        self.path["lb"] = LoopDevices.devpath(self.lb)
        run(["ip", "link", "set", "tfa0", "alias", "tf-alpha"], check=True)
        run(["ip", "link", "set", "tfc0", "mtu", "1400"], check=True)
        # database: tfa0, tfc0 and loop A are initialized; tfa0 and loop A are tagged
        reset_run_udev()
        os.makedirs("/run/udev/data")
        os.makedirs("/run/udev/tags/" + TAG)
        self.write("n%d" % ifindex("tfa0"), "E:ID_TF=alpha\nG:%s\nQ:%s\nV:1\n" % (TAG, TAG))
        self.write("n%d" % ifindex("tfc0"), "")
        self.write("b7:%d" % self.la, "E:ID_TF=loop\nE:ID_OTHER=1\nG:%s\nV:1\n" % TAG)
        for dev_id in ("n%d" % ifindex("tfa0"), "b7:%d" % self.la):
            open("/run/udev/tags/%s/%s" % (TAG, dev_id), "w").close()

    @staticmethod
    def write(dev_id, text):
        with open("/run/udev/data/" + dev_id, "w") as f:
            f.write(text)

    def names(self, devpaths):
        """The test's devices among devpaths (a device below one of them
        would show up as "<name>/<child>")."""
        out = set()
        for p in devpaths:
            for n, q in self.path.items():
                if p == q:
                    out.add(n)
                elif p.startswith(q + "/"):
                    out.add(n + "/" + p[len(q) + 1:])
        return out


@pytest.fixture(scope="module")
def devs():
    """Made once for the module (making and removing veths and loop devices
    costs tenths of seconds each)."""
    net, loops = NetDevices(), LoopDevices()
    try:
        yield Devices(net, loops)
    finally:
        net.delete_all()
        loops.remove_all()
        reset_run_udev()


def dry_run(tool, args):
    r = run([tool, "trigger", "--dry-run", "--verbose"] + args)
    return r.returncode, r.stdout, r.stderr


def selected(udevadm, sd_udevadm, args):
    """Devpaths ours selects (in order); systemd's selection must be the same."""
    for _ in range(5):
        ours, ref = dry_run(udevadm, args), dry_run(sd_udevadm, args)
        if ours[:2] == ref[:2]:
            break
        time.sleep(0.2)   # other activity's loop devices come and go
    assert ours[0] == 0, ours[2]
    assert ours[:2] == ref[:2]
    return [line[4:] for line in ours[1].splitlines()]


def la_lb(d):
    return "loop%d" % d.la, "loop%d" % d.lb


CASES = [
    # (id, args (with {A}/{B} for the loop names), expected test devices)
    ("subsystem+sysname", ["-s", "net", "-y", "tf?0"], {"tfa0", "tfb0", "tfc0", "tfd0"}),
    ("nomatch wins", ["-s", "net", "-y", "tf?0", "-S", "n*"], set()),
    ("sysname or", ["-y", "tfa0", "-y", "{B}"], {"tfa0", "lb"}),
    ("attr value", ["-s", "net", "-a", "ifalias=tf-alpha"], {"tfa0"}),
    ("attr glob", ["-s", "net", "-y", "tf*", "-a", "mtu=14*"], {"tfc0"}),
    ("attr and", ["-y", "tf*", "-a", "mtu=1400", "-a", "ifalias=tf-*"], set()),
    ("attr values or", ["-y", "tf*", "-a", "mtu=1400", "-a", "mtu=1500"],
     {"tfa0", "tfb0", "tfc0", "tfd0"}),
    ("attr nomatch", ["-s", "net", "-y", "tf*", "-A", "mtu=1400"], {"tfa0", "tfb0", "tfd0"}),
    ("attr exists", ["-y", "tf*", "-y", "{A}", "-a", "ifalias"],
     {"tfa0", "tfb0", "tfc0", "tfd0"}),
    ("attr missing", ["-y", "tf*", "-a", "no_such_attribute"], set()),
    ("property", ["-p", "ID_TF=alpha"], {"tfa0"}),
    ("property glob or", ["-p", "ID_TF=*"], {"tfa0", "la"}),
    ("property two", ["-p", "ID_TF=alpha", "-p", "ID_OTHER=1"], {"tfa0", "la"}),
    ("property name glob", ["-p", "ID_T?=lo*"], {"la"}),
    ("property uevent key", ["-y", "tf*", "-p", "INTERFACE=tfb0"], {"tfb0"}),
    ("property key only", ["-p", "ID_TF"], set()),
    ("tag", ["-g", TAG], {"tfa0", "la"}),
    ("tag and subsystem", ["-g", TAG, "-s", "block"], {"la"}),
    ("tag and sysname", ["-g", TAG, "-y", "tf*"], {"tfa0"}),
    ("tag unknown", ["-g", "no-such-tag"], set()),
    ("initialized", ["-y", "tf*", "-y", "{A}", "-y", "{B}", "--initialized-match"],
     {"tfa0", "tfc0", "la"}),
    ("not initialized", ["-y", "tf?0", "-y", "{A}", "-y", "{B}", "--initialized-nomatch"],
     {"tfb0", "tfd0", "lb"}),
    ("parent", ["-b", "/sys/class/net/tfa0"], {"tfa0"}),
    ("parent devpath", ["--parent-match", "devices/virtual/net/tfc0", "-s", "net"], {"tfc0"}),
    ("parents", ["-b", "/sys/devices/virtual/net/tfa0", "-b", "/sys/class/block/{B}"],
     {"tfa0", "lb"}),
    ("parent and attr", ["-b", "/sys/class/net/tfc0", "-a", "mtu=1400"], {"tfc0"}),
    ("arguments", ["/sys/class/net/tfb0", "/sys/class/block/{A}"],
     {"tfb0", "la"}),
    ("name", ["--name-match=/dev/null"], set()),
    ("parent and tag", ["-b", "/sys/class/net/tfa0", "-g", TAG], {"tfa0"}),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_filter_selects_exactly(udevadm, sd_udevadm, devs, case):
    _, args, want = case
    a, b = la_lb(devs)
    args = [x.replace("{A}", a).replace("{B}", b) for x in args]
    got = devs.names(selected(udevadm, sd_udevadm, args))
    assert got == set(want), args


def test_filters_outside_the_test_devices(udevadm, sd_udevadm, devs):
    # nothing but the test's devices carries the tag or the property
    assert selected(udevadm, sd_udevadm, ["-g", TAG]) == sorted(
        [devs.path["la"], devs.path["tfa0"]])
    assert selected(udevadm, sd_udevadm, ["-p", "ID_TF=*", "-t", "all"]) == sorted(
        [devs.path["la"], devs.path["tfa0"]])
    # the name match selects the device of that node and what is below it
    assert selected(udevadm, sd_udevadm, ["--name-match=null"]) == ["/devices/virtual/mem/null"]
    # with --type=subsystems the tag is a filter on modules, buses and drivers
    assert selected(udevadm, sd_udevadm, ["-t", "subsystems", "-g", TAG]) == []


def test_tag_index_errors(udevadm, sd_udevadm, devs):
    # a stale entry (removed device) is skipped; an entry that is no device id fails the scan
    stale, garbage = "/run/udev/tags/%s/n999999" % TAG, "/run/udev/tags/%s/garbage" % TAG
    try:
        open(stale, "w").close()
        assert len(selected(udevadm, sd_udevadm, ["-g", TAG])) == 2
        open(garbage, "w").close()
        for tool in (udevadm, sd_udevadm):
            rc, out, err = dry_run(tool, ["-g", TAG])
            assert (rc, out) == (1, "")
            assert "Failed to scan devices: Invalid argument" in err
    finally:
        for f in (stale, garbage):
            if os.path.exists(f):
                os.unlink(f)


def test_trigger_reaches_exactly_the_selected_devices(udevadm, devs, kernel_mon):
    """Real writes: one kernel event per selected device, carrying the UUID
    that was printed for it."""
    for args, want in ((["-g", TAG], {"tfa0", "la"}),
                       (["-y", "tf?0", "-a", "mtu=1400", "-c", "add"], {"tfc0"}),
                       (["--initialized-nomatch", "-y", "tfb0", "-y", "tfd0", "-y",
                         "loop%d" % devs.lb, "-c", "change"], {"tfb0", "tfd0", "lb"})):
        since = kernel_mon.mark()
        r = run([udevadm, "trigger", "--verbose", "--uuid"] + args)
        assert r.returncode == 0, r.stderr
        lines = r.stdout.splitlines()
        paths, uuids = lines[0::2], lines[1::2]
        assert devs.names(p[4:] for p in paths) == want
        events = kernel_mon.wait_for(lambda e: e.props.get("SYNTH_UUID") in uuids,
                                     count=len(uuids), since=since)
        assert sorted((e.devpath, e.props["SYNTH_UUID"]) for e in events) == sorted(
            (p[4:], u) for p, u in zip(paths, uuids))
        action = args[args.index("-c") + 1] if "-c" in args else "change"
        assert all(e.action == action for e in events)
        # nothing else was triggered by us
        time.sleep(0.2)
        extra = kernel_mon.matching(lambda e: e.props.get("SYNTH_UUID") not in (None, "0")
                                    and e.props["SYNTH_UUID"] not in uuids
                                    and re.match(r"^/devices/virtual/net/tf", e.devpath or ""),
                                    since=since)
        assert extra == []
