# SPDX-License-Identifier: GPL-2.0-or-later
"""Our `udevadm trigger`: device selection and order identical to systemd 252's
(compared on the sandbox's sysfs with --dry-run --verbose), the written
action and SYNTH_UUID, --settle/--uuid against tudev (also while an
unrelated slow event runs), and option errors. The filters are in
test_udevadm_trigger_filters.py, the boot sequence in
test_udevadm_trigger_boot.py."""

import os
import time

import pytest

from tudevlib import as_nobody, run


def exactly(paths):
    """Predicate: the event is for one of these devpaths (not below them)."""
    paths = set(paths)
    return lambda e: e.devpath in paths

DRY_RUN_CASES = [
    [],
    ["--type=subsystems"],
    ["--type=all"],
    ["-s", "net"],
    ["-s", "p*", "-S", "pci"],
    ["-S", "*"],
    ["--subsystem-match=block", "--subsystem-match=tty"],
    ["-y", "tty*"],
    ["-t", "all", "-y", "lo"],
    ["--type=all", "-s", "drivers"],
    ["--type=all", "-s", "subsystem", "-s", "module"],
    ["--type=all", "--action=add",
     "--prioritized-subsystem=module,block,tpmrm,net,tty,input"],
    ["--prioritized-subsystem=net", "--prioritized-subsystem=pci,,block"],
    ["--prioritized-subsystem=platform", "-s", "platform", "-s", "tty"],
]


def dry_run(tool, args):
    r = run([tool, "trigger", "--dry-run", "--verbose"] + args)
    return r.returncode, r.stdout


@pytest.mark.parametrize("args", DRY_RUN_CASES, ids=lambda a: " ".join(a) or "default")
def test_dry_run_same_as_systemd(udevadm, sd_udevadm, args):
    # Devices of concurrent activity (loop devices of other tests) may come and
    # go between the two runs: retry a few times before calling it a mismatch.
    for _ in range(5):
        ours, theirs = dry_run(udevadm, args), dry_run(sd_udevadm, args)
        if ours == theirs:
            break
        time.sleep(0.2)
    assert ours[0] == 0
    assert ours == theirs
    assert ours[1].count("\n") >= (0 if "-S" in args else 1)


def test_action_list(udevadm, sd_udevadm):
    r = run([udevadm, "trigger", "--action=help"])
    assert r.returncode == 0
    assert r.stdout == "add\nremove\nchange\nmove\nonline\noffline\nbind\nunbind\n"
    assert r.stdout == run([sd_udevadm, "trigger", "--action=help"]).stdout


@pytest.mark.parametrize("args,msg", [
    (["--action=foo"], "Unknown action 'foo'"),
    (["--type=foo"], "Unknown type --type=foo"),
    (["--bogus"], "unrecognized option"),
    (["--parent-match=/sys/devices/virtual/nope"],
     "Failed to open the device '/sys/devices/virtual/nope': No such device"),
    (["-b", "devices/virtual/nope"], "Failed to open the device 'devices/virtual/nope'"),
    (["--name-match=nope"], "Failed to open the device 'nope': Invalid argument"),
    (["--name-match=/dev/nope"], "Failed to open the device '/dev/nope': No such device"),
    (["/tmp"], "Failed to open the device '/tmp': No such device"),
    (["nope"], "Failed to open the device 'nope': Invalid argument"),
])
def test_option_errors(udevadm, sd_udevadm, args, msg):
    r = run([udevadm, "trigger", "--dry-run"] + args)
    assert r.returncode == 1
    assert msg in r.stderr
    assert r.stdout == ""
    ref = run([sd_udevadm, "trigger", "--dry-run"] + args)
    assert (ref.returncode, ref.stdout) == (1, "")
    if "unrecognized" not in msg:
        assert r.stderr == ref.stderr


def synth(e):
    return e.props.get("SYNTH_UUID")


def test_writes_action_without_uuid(udevadm, net, kernel_mon):
    a, _ = net.add_veth("tta0", "ttb0")
    since = kernel_mon.mark()
    r = run([udevadm, "trigger", "--action=add", "-s", "net", "-y", "tta0"])
    assert r.returncode == 0, r.stderr
    assert r.stdout == ""
    ev = kernel_mon.wait_for(exactly([a]), since=since)
    assert len(ev) == 1
    assert ev[0].action == "add"
    assert synth(ev[0]) == "0"


def test_uuid_and_settle(udevd, udevadm, net, kernel_mon, udev_mon):
    a, b = net.add_veth("tua0", "tub0")
    assert udev_mon.wait_for(exactly([a, b]), count=2)
    since_k, since_u = kernel_mon.mark(), udev_mon.mark()
    r = run([udevadm, "trigger", "--settle", "--uuid", "--verbose", "-s", "net", "-y", "tu?0"],
            timeout=30)
    t_done = time.monotonic()
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    # per device: its path, then its UUID; then one "settle" line pair per event
    assert lines[0] == "/sys" + a and lines[2] == "/sys" + b, lines
    uuids = {lines[0]: lines[1], lines[2]: lines[3]}
    for u in uuids.values():
        assert len(u) == 36 and u[14] == "4" and u.count("-") == 4, u
    rest = lines[4:]
    assert len(rest) == 4
    settled = {}
    for path_line, uuid_line in zip(rest[0::2], rest[1::2]):
        assert path_line.startswith("settle /sys/") and uuid_line.startswith("settle ")
        settled[path_line[len("settle "):]] = uuid_line[len("settle "):]
    assert settled == uuids

    kev = kernel_mon.wait_for(exactly([a, b]), count=2, since=since_k)
    assert sorted(synth(e) for e in kev) == sorted(uuids.values())
    assert all(e.action == "change" for e in kev)
    uev = udev_mon.wait_for(exactly([a, b]), count=2, since=since_u)
    assert sorted(synth(e) for e in uev) == sorted(uuids.values())
    # both broadcasts had arrived when trigger returned
    assert max(e.recv_time for e in uev) <= t_done + 0.25


def test_settle_without_uuid_output(udevd, udevadm, net, udev_mon):
    a, _ = net.add_veth("tsa0", "tsb0")
    assert udev_mon.wait_for(exactly([a]))
    since = udev_mon.mark()
    r = run([udevadm, "trigger", "-w", "-s", "net", "-y", "tsa0", "-c", "add"], timeout=30)
    assert r.returncode == 0, r.stderr
    assert r.stdout == ""
    uev = udev_mon.wait_for(exactly([a]), since=since, timeout=1)
    assert len(uev) == 1 and uev[0].action == "add"
    assert len(synth(uev[0])) == 36


def test_wait_daemon(udevadm, udevd_factory, net):
    r = run([udevadm, "trigger", "--wait-daemon=1", "--dry-run", "-s", "net"])
    assert r.returncode == 1
    assert "Failed to connect to udev daemon" in r.stderr
    udevd_factory()
    r = run([udevadm, "trigger", "--wait-daemon", "--dry-run", "-v", "-s", "net", "-y", "lo"])
    assert r.returncode == 0, r.stderr
    assert r.stdout == "/sys/devices/virtual/net/lo\n"


def test_write_errors_counted(udevadm, net, kernel_mon):
    net.add_veth("tea0", "teb0")
    r = run(as_nobody([udevadm, "trigger", "-s", "net", "-y", "te?0"]))
    assert r.returncode == 1
    assert ("tea0: Failed to write 'change' to '/sys/devices/virtual/net/tea0/uevent'"
            in r.stderr)
    assert "teb0: Failed to write" in r.stderr      # goes on after the first failure
    r = run(as_nobody([udevadm, "trigger", "--quiet", "-s", "net", "-y", "te?0"]))
    assert r.returncode == 1
    assert "Failed to write" not in r.stderr


def test_sysfs_root_override(udevadm, tmp_path):
    root = tmp_path / "sys"
    dev = root / "devices" / "virtual" / "foo" / "foo0"
    dev.mkdir(parents=True)
    (dev / "uevent").write_text("")
    (root / "class" / "foo").mkdir(parents=True)
    (root / "bus").mkdir()
    os.symlink("../../class/foo", dev / "subsystem")
    os.symlink("../../devices/virtual/foo/foo0", root / "class" / "foo" / "foo0")
    env = dict(os.environ, TUDEV_SYSFS_ROOT=str(root))
    r = run([udevadm, "trigger", "-v", "-c", "add"], env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "%s/devices/virtual/foo/foo0\n" % root
    assert (dev / "uevent").read_text() == "add\n"


def test_settle_ignores_unrelated_slow_event(net, udevd_factory, udevadm, udev_mon):
    # (net first: the daemon is stopped before the veths go, so their remove
    # events are not delayed too)
    """--settle waits for the events it triggered, not for the whole queue."""
    delay = 3.0
    udevd_factory("--children-max=8", "--debug-event-delay=%d" % int(delay * 1000),
                  "--debug-event-delay-match=/devices/virtual/net/tsl[ab]0")
    fast, _ = net.add_veth("tsfa0", "tsfb0")
    assert udev_mon.wait_for(exactly([fast]), timeout=20)
    slow_a, slow_b = net.add_veth("tsla0", "tslb0")
    t_slow = time.monotonic()
    since = udev_mon.mark()
    r = run([udevadm, "trigger", "--settle", "--uuid", "-s", "net", "-y", "tsfa0"], timeout=30)
    took = time.monotonic() - t_slow
    assert r.returncode == 0, r.stderr
    uuid = r.stdout.splitlines()[0]
    assert r.stdout == "%s\nsettle %s\n" % (uuid, uuid)
    assert took < delay - 1.0, "trigger --settle waited %.1fs for the slow events" % took
    # the slow events were still running when trigger returned
    assert not udev_mon.matching(exactly([slow_a, slow_b]), since=since)
    assert os.path.exists("/run/udev/queue")
    ev = udev_mon.matching(exactly([fast]), since=since)
    assert [e.props.get("SYNTH_UUID") for e in ev] == [uuid]
    # and they do finish
    assert len(udev_mon.wait_for(exactly([slow_a, slow_b]), count=2, since=since,
                                 timeout=delay + 20)) == 2


def test_write_errors_go_on(udevadm, tmp_path):
    """A device that vanishes or refuses the write is reported and the others
    are still triggered; the status says whether anything failed."""
    root = tmp_path / "sys"
    (root / "class" / "foo").mkdir(parents=True)
    (root / "bus").mkdir()
    for name in ("ok0", "bad0", "ok1"):
        dev = root / "devices" / "virtual" / "foo" / name
        dev.mkdir(parents=True)
        if name == "bad0":
            (dev / "uevent").mkdir()           # the write fails with EISDIR
        else:
            (dev / "uevent").write_text("")
        os.symlink("../../../../class/foo", dev / "subsystem")
        os.symlink("../../devices/virtual/foo/" + name, root / "class" / "foo" / name)
    env = dict(os.environ, TUDEV_SYSFS_ROOT=str(root))
    r = run([udevadm, "trigger", "-v", "-c", "add"], env=env)
    assert r.returncode == 1
    assert ("bad0: Failed to write 'add' to '%s/devices/virtual/foo/bad0/uevent': Is a directory"
            % root) in r.stderr
    assert r.stdout.count("\n") == 3
    for name in ("ok0", "ok1"):
        assert (root / "devices" / "virtual" / "foo" / name / "uevent").read_text() == "add\n"
    # a device that vanished (dangling class link) is not an error
    (root / "devices" / "virtual" / "foo" / "bad0" / "uevent").rmdir()
    (root / "devices" / "virtual" / "foo" / "bad0" / "uevent").write_text("")
    os.symlink("../../devices/virtual/foo/gone0", root / "class" / "foo" / "gone0")
    r = run([udevadm, "trigger", "-c", "add"], env=env)
    assert (r.returncode, r.stderr) == (0, "")
