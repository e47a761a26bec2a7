# SPDX-License-Identifier: GPL-2.0-or-later
"""Builtins run by the daemon's worker threads on real kernel events (veth
pairs): IMPORT{builtin} properties reach the broadcast, and a kmod module
insertion failure (this VM cannot load modules; the test's fake module
directory, tests/builtins/kmodfix.py, makes sure something is found) is
logged while the event completes normally, as with systemd."""

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "builtins"))

import kmodfix  # noqa: E402
from test_rules_daemon import start, udev_add, write_rules  # noqa: E402
from tudevlib import wait_until  # noqa: E402


def test_kmod_failure_does_not_fail_the_event(tmp_path, udevd_factory, net, udev_mon,
                                               monkeypatch):
    if not kmodfix.tools_available():
        pytest.skip("gcc or depmod (package kmod) missing: run tools/install-deps")
    moddir, conf = kmodfix.build(str(tmp_path / "modules"))
    monkeypatch.setenv("TUDEV_TEST_KMOD_DIR", moddir)
    monkeypatch.setenv("TUDEV_TEST_KMOD_CONFIG", conf)
    rdir = tmp_path / "rules"
    write_rules(rdir, r'''
SUBSYSTEM=="net", ACTION=="add", KERNEL=="kma*", IMPORT{builtin}="kmod load fake_c", \
  ENV{KM_IMPORT}="ok"
SUBSYSTEM=="net", ACTION=="add", KERNEL=="kma*", RUN{builtin}+="kmod load fake_a fake_b"
SUBSYSTEM=="net", ACTION=="add", KERNEL=="kma*", ENV{KM_AFTER}="1"
''')
    d = start(udevd_factory, rdir)
    net.add_veth("kma0", "kmb0")
    ev = udev_add(udev_mon, "/devices/virtual/net/kma0")
    assert ev.props.get("KM_IMPORT") == "ok", ev.props
    assert ev.props.get("KM_AFTER") == "1", ev.props
    assert wait_until(lambda: "Module 'fake_b' is deny-listed" in d.log(), 10), d.log_tail()
    log = d.log()
    assert "Failed to insert module 'fake_c'" in log
    assert "Failed to insert module 'fake_a'" in log
    # the builtin loaded libkmod into udevd when it first ran
    assert mapped_libraries(d.pid, "libkmod"), "libkmod not mapped after the kmod builtin ran"


def mapped_libraries(pid, name):
    with open("/proc/%d/maps" % pid) as f:
        return sorted({l.split()[-1] for l in f if name in l.split()[-1]})


def children(pid, comm):
    found = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % p) as f:
                st = f.read()
        except OSError:
            continue
        c = st[st.index("(") + 1:st.rindex(")")]
        ppid = int(st[st.rindex(")") + 2:].split()[1])
        if ppid == pid and c == comm:
            found.append(int(p))
    return found


def test_libkmod_is_loaded_only_when_the_builtin_runs(tmp_path, udevd_factory, net, udev_mon):
    """udevd links neither libkmod nor libudev: libkmod (and the libcrypto it
    pulls in) is loaded by the kmod builtin on first use, so a daemon whose
    rules never load a module, and its exec helper, never map it."""
    rdir = tmp_path / "rules"
    write_rules(rdir, r'''
SUBSYSTEM=="net", ACTION=="add", KERNEL=="nka*", RUN+="/bin/true"
SUBSYSTEM=="net", ACTION=="add", KERNEL=="nka*", ENV{NK_DONE}="1"
''')
    d = start(udevd_factory, rdir)
    net.add_veth("nka0", "nkb0")
    ev = udev_add(udev_mon, "/devices/virtual/net/nka0")
    assert ev.props.get("NK_DONE") == "1", ev.props
    helpers = children(d.pid, "udevd-exec")
    assert len(helpers) == 1, helpers
    for pid in [d.pid] + helpers:
        for lib in ("libkmod", "libcrypto", "libudev"):
            assert not mapped_libraries(pid, lib), (pid, lib, mapped_libraries(pid, lib))


def test_hwdb_and_input_id_on_a_net_device(tmp_path, udevd_factory, net, udev_mon):
    """hwdb with an explicit key (the sandbox has no hwdb.bin unless the host
    has one: then the IMPORT fails and the rule's ENV is not set) and input_id
    (not an input device: succeeds without properties)."""
    rdir = tmp_path / "rules"
    write_rules(rdir, r'''
SUBSYSTEM=="net", ACTION=="add", KERNEL=="hwa*", IMPORT{builtin}="input_id", ENV{IN_OK}="1"
SUBSYSTEM=="net", ACTION=="add", KERNEL=="hwa*", IMPORT{builtin}="hwdb 'usb:v1D6Bp0002'", \
  ENV{HW_OK}="1"
''')
    start(udevd_factory, rdir)
    net.add_veth("hwa0", "hwb0")
    ev = udev_add(udev_mon, "/devices/virtual/net/hwa0")
    assert ev.props.get("IN_OK") == "1"
    assert "ID_INPUT" not in ev.props
    have_hwdb = any(os.path.exists(p) for p in (
        "/etc/systemd/hwdb/hwdb.bin", "/etc/udev/hwdb.bin", "/usr/lib/systemd/hwdb/hwdb.bin",
        "/lib/systemd/hwdb/hwdb.bin", "/lib/udev/hwdb.bin"))
    if have_hwdb:
        assert ev.props.get("HW_OK") == "1"
        assert ev.props.get("ID_VENDOR_FROM_DATABASE") == "Linux Foundation"
    else:
        assert "HW_OK" not in ev.props


def test_worker_picks_up_a_new_hwdb(tmp_path, udevd_factory, net, udev_mon, sd_udevadm):
    """hwdb.bin appears while the daemon runs: worker threads notice by
    themselves (within 3 s) and the next events see its entries. /etc/udev
    is replaced by a private bind mount for the duration of the test."""
    import subprocess
    import time
    import compare
    etc = str(tmp_path / "etc-udev")
    os.makedirs(etc)
    built = compare.build_hwdb(os.path.dirname(os.path.dirname(sd_udevadm)),
                               os.path.join(HERE, "..", "builtins", "hwdb-root"),
                               str(tmp_path / "hwdb"))
    rdir = tmp_path / "rules"
    write_rules(rdir, r'''
SUBSYSTEM=="net", ACTION=="add", KERNEL=="hwn*", IMPORT{builtin}="hwdb tudev:exact:one"
''')
    subprocess.run(["mount", "--bind", etc, "/etc/udev"], check=True)
    try:
        # one worker thread: the same thread must notice the new file
        udevd_factory("--children-max=1", "--rules-dir=%s" % rdir)
        net.add_veth("hwn0", "hwp0")
        ev = udev_add(udev_mon, "/devices/virtual/net/hwn0")
        assert "B_KEY" not in ev.props
        mark = udev_mon.mark()
        with open(os.path.join(built, "hwdb.bin"), "rb") as f:
            data = f.read()
        with open(os.path.join(etc, "hwdb.bin.tmp"), "wb") as f:
            f.write(data)
        os.rename(os.path.join(etc, "hwdb.bin.tmp"), os.path.join(etc, "hwdb.bin"))
        time.sleep(3.5)
        net.add_veth("hwn1", "hwp1")
        ev = udev_add(udev_mon, "/devices/virtual/net/hwn1", since=mark)
        assert ev.props.get("B_KEY") == "b-late", ev.props
    finally:
        # lazy: the daemon (stopped only at fixture teardown) may still map hwdb.bin
        subprocess.run(["umount", "-l", "/etc/udev"], check=False)
