# SPDX-License-Identifier: GPL-2.0-or-later
"""path_id, usb_id, net_id, net_setup_link and blkid in the daemon's worker
threads at the same time (a burst of veth pairs, loop devices with file
systems), with a .link reload in the middle: every event gets its
properties, the settings are applied, and the daemon exits cleanly (under
ASan/TSan builds: without a sanitizer report)."""

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from test_builtins_blkid import LoopNodes  # noqa: E402
from test_rules_daemon import start, write_rules  # noqa: E402
from tudevlib import (CTRL_RELOAD, ctrl_message, ctrl_request, trigger_uevent,  # noqa: E402
                      wait_until)

PAIRS = 12
LOOPS = 3

LINK = """[Match]
OriginalName=pp*
[Link]
NamePolicy=keep kernel database onboard slot path mac
MACAddressPolicy=persistent
AlternativeNamesPolicy=mac
Alias=%s
"""


def test_builtins_in_parallel(tmp_path, udevd_factory, udev_mon, net, monkeypatch):
    linkdir = tmp_path / "links"
    os.makedirs(str(linkdir))
    (linkdir / "10-pp.link").write_text(LINK % "first")
    monkeypatch.setenv("TUDEV_NETWORK_DIRS", str(linkdir))
    rdir = tmp_path / "rules"
    write_rules(rdir, r'''
SUBSYSTEM=="net", ACTION=="add", KERNEL=="pp*", IMPORT{builtin}="path_id"
SUBSYSTEM=="net", ACTION=="add", KERNEL=="pp*", IMPORT{builtin}="usb_id"
SUBSYSTEM=="net", ACTION=="add", KERNEL=="pp*", IMPORT{builtin}="net_id"
SUBSYSTEM=="net", ACTION=="add", KERNEL=="pp*", IMPORT{builtin}="net_setup_link"
SUBSYSTEM=="block", KERNEL=="loop*", ACTION=="change", IMPORT{builtin}="blkid", \
  ENV{BLKID_DONE}="1"
SUBSYSTEM=="block", KERNEL=="loop*", ACTION=="change", IMPORT{builtin}="path_id"
''')
    start(udevd_factory, rdir)

    nodes = LoopNodes(str(tmp_path))
    try:
        loops = []
        for i in range(LOOPS):
            img = str(tmp_path / ("fs%d.img" % i))
            with open(img, "wb") as f:
                f.truncate(8 * 1024 * 1024)
            subprocess.run(["mkfs.ext4", "-q", "-F", "-L", "par%d" % i, img], check=True)
            loops.append(nodes.attach(img)[0])

        since = len(udev_mon.events)
        half = PAIRS // 2
        net.add_veths([("pp%da" % i, "pp%db" % i) for i in range(half)])
        for name in loops:
            trigger_uevent("/sys/class/block/" + name)
        # reload in the middle of the burst (the .link file changed)
        # atomically (a worker reading a half-written file would match nothing)
        (linkdir / "10-pp.link.tmp").write_text(LINK % "second")
        os.rename(str(linkdir / "10-pp.link.tmp"), str(linkdir / "10-pp.link"))
        assert ctrl_request([ctrl_message(CTRL_RELOAD)])
        net.add_veths([("pp%da" % i, "pp%db" % i) for i in range(half, PAIRS)])

        adds = udev_mon.wait_for(lambda e: e.action == "add" and
                                 os.path.basename(e.devpath).startswith("pp"),
                                 count=2 * PAIRS, timeout=60, since=since)
        assert len(adds) == 2 * PAIRS, [e.devpath for e in adds]
        for e in adds:
            assert e.errors == [], e.errors
            assert e.props.get("ID_NET_DRIVER") == "veth", e.props
            assert e.props.get("ID_NET_LINK_FILE") == str(linkdir / "10-pp.link"), e.props
            name = os.path.basename(e.devpath)
            assert e.props.get("ID_NET_NAME") == name, e.props  # "keep": user-given names
        # (losetup's own change events may be seen too)
        def probed():
            got = udev_mon.wait_for(lambda e: e.action == "change" and
                                    os.path.basename(e.devpath) in loops and
                                    e.props.get("ID_FS_TYPE") == "ext4",
                                    count=1000, timeout=0.2, since=since)
            return got if {os.path.basename(e.devpath) for e in got} == set(loops) else None
        changes = wait_until(probed, 60)
        assert changes, "not every loop device was probed"
        for e in changes:
            assert e.props.get("BLKID_DONE") == "1", e.props
            assert e.props.get("ID_FS_LABEL", "").startswith("par"), e.props
        # the late pairs were configured from the reloaded file
        out = subprocess.run(["ip", "-d", "link", "show", "pp%da" % (PAIRS - 1)],
                             capture_output=True, text=True, check=True).stdout
        assert "alias second" in out, out
    finally:
        nodes.cleanup()
