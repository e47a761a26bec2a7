# SPDX-License-Identifier: GPL-2.0-or-later
"""`udevadm explain`: the rules trace the daemon kept of real events (veth
pairs, a loop device): the right file:line entries, the failing key with the
value it compared, the applied lines, programs with their results, the
rules generation, --seqnum, a device given as SYSPATH or device node, and
the errors, and --explain-events= (the ring's size, 0 = off)."""

import errno
import os
import re

from tudevlib import ctrl_query, run, wait_until

from test_rules_daemon import free_loop_index, start, udev_add, write_rules  # noqa: F401

NET = "/devices/virtual/net/"

RULES = r'''SUBSYSTEM=="block", ENV{XP_NEVER}="1"
SUBSYSTEM=="net", KERNEL=="xpa*", ENV{XP_A}="1", GOTO="xp_more"
ENV{XP_SKIPPED}="1"
LABEL="xp_more"
SUBSYSTEM=="net", ATTR{mtu}=="9000", ENV{XP_NEVER}="1"
SUBSYSTEM=="net", KERNEL=="xpa*", PROGRAM=="/bin/false", ENV{XP_NEVER}="1"
SUBSYSTEM=="net", ENV{XP_A}=="1", ENV{XP_B}="2", RUN+="/bin/true %k"
SUBSYSTEM=="net", KERNELS=="xpb*", ENV{XP_NEVER}="1"
'''

def explain(udevadm, *args):
    return run([udevadm, "explain"] + list(args), timeout=30)


def rule_lines(stdout, path):
    return [ln for ln in stdout.splitlines() if ln.startswith(path + ":")]


def test_explain_veth(tmp_path, udevd_factory, udevadm, net, udev_mon):
    rdir = tmp_path / "rules"
    path = write_rules(rdir, RULES)
    start(udevd_factory, rdir)
    net.add_veth("xpa0", "xpb0")
    ev = udev_add(udev_mon, NET + "xpa0")
    assert ev.props["XP_B"] == "2" and "XP_NEVER" not in ev.props
    udev_add(udev_mon, NET + "xpb0")

    r = explain(udevadm, NET + "xpa0")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    head = lines[0].split()
    assert head[0] == "event" and head[2] == "action=add"
    assert head[1] == "seqnum=%s" % ev.props["SEQNUM"]
    assert head[3] == "devpath=%s" % (NET + "xpa0") and head[4] == "subsystem=net"
    assert re.fullmatch(r"generation=[1-9][0-9]*", head[5])
    got = rule_lines(r.stdout, path)
    assert [ln.split(" ")[:3] for ln in got] == [
        [path + ":1", "failed", "-"], [path + ":2", "applied", "-"],
        [path + ":5", "failed", "-"], [path + ":6", "failed", "-"],
        [path + ":7", "applied", "-"], [path + ":8", "failed", "-"]]
    assert got[0].endswith(' SUBSYSTEM=="block" got "net"')
    assert got[1].endswith(' ENV{XP_A}="1" GOTO="xp_more"')
    assert got[2].endswith(' ATTR{mtu}=="9000" got "1500"')
    assert got[3].endswith(' PROGRAM=="/bin/false" got exit status 1')
    assert got[4].endswith(' ENV{XP_B}="2" RUN{program}+="/bin/true %k"')
    # the nearest miss of KERNELS: the device itself
    assert got[5].endswith(' KERNELS=="xpb*" got "xpa0" at xpa0')
    # the program, timed, right after its line; the RUN entry after the rules
    prog = lines[lines.index(got[3]) + 1]
    assert re.fullmatch(r'  program "/bin/false" exit 1 [0-9]+\.[0-9]{3}us', prog)
    assert any(re.fullmatch(r'run\{program\} "/bin/true xpa0" ok [0-9]+\.[0-9]{3}us', ln)
               for ln in lines)
    assert re.fullmatch(r"summary lines=6 applied=2 time=[0-9]+\.[0-9]{3}us result=0",
                        lines[-1])

    # the peer: its own trace, found by SYSPATH (a symlink) as well
    r = explain(udevadm, "/sys/class/net/xpb0")
    assert r.returncode == 0, r.stderr
    got = rule_lines(r.stdout, path)
    assert got[1].split(" ")[:2] == [path + ":2", "failed"]
    assert got[1].endswith(' KERNEL=="xpa*" got "xpb0"')

    # --seqnum: that event, with or without the device; a wrong pair is not found
    seq = ev.props["SEQNUM"]
    for args in (["--seqnum=" + seq], ["--seqnum=" + seq, NET + "xpa0"]):
        r = explain(udevadm, *args)
        assert r.returncode == 0, r.stderr
        assert r.stdout.splitlines()[0].startswith("event seqnum=%s action=add devpath=%s "
                                                   % (seq, NET + "xpa0"))
    r = explain(udevadm, "--seqnum=" + seq, NET + "xpb0")
    assert r.returncode != 0 and "no trace kept" in r.stderr

    # a change event is the newest one now
    def newest_action():
        r = explain(udevadm, NET + "xpa0")
        return r.stdout.splitlines()[0].split()[2] if r.returncode == 0 else None

    with open("/sys/class/net/xpa0/uevent", "w") as f:
        f.write("change")
    assert wait_until(lambda: newest_action() == "action=change", timeout=20)
    r = explain(udevadm, NET + "xpa0")
    got = rule_lines(r.stdout, path)
    assert got[1].split(" ")[:2] == [path + ":2", "applied"]
    # the add event is still there by its seqnum
    r = explain(udevadm, "--seqnum=" + seq)
    assert " action=add " in r.stdout.splitlines()[0]


def test_explain_loop_node_and_errors(tmp_path, udevd_factory, udevadm, loops, udev_mon):
    rdir = tmp_path / "rules"
    path = write_rules(rdir, RULES)
    start(udevd_factory, rdir)
    idx = loops.add()
    dev = loops.devpath(idx)
    udev_add(udev_mon, dev)
    r = explain(udevadm, "/dev/loop%d" % idx) if os.path.exists("/dev/loop%d" % idx) \
        else explain(udevadm, dev)
    assert r.returncode == 0, r.stderr
    got = rule_lines(r.stdout, path)
    assert got[0].split(" ")[:2] == [path + ":1", "applied"]
    assert got[0].endswith(' ENV{XP_NEVER}="1"')
    assert got[1].endswith(' KERNEL=="xpa*" got "loop%d"' % idx)

    # unknown device, bad arguments
    r = explain(udevadm, "/devices/virtual/net/no-such-device")
    assert r.returncode != 0
    assert r.stderr == "explain: no trace kept for /devices/virtual/net/no-such-device\n"
    r = explain(udevadm)
    assert r.returncode != 0
    status, text, _ = ctrl_query("explain")
    assert status == -errno.EINVAL and text.count("\n") == 1
    status, text, _ = ctrl_query("explain seqnum=x /devices")
    assert status == -errno.EINVAL
    status, _, _ = ctrl_query("queries")
    assert status == 0


def test_explain_events_option(tmp_path, udevd_factory, udevadm, net, udev_mon):
    """--explain-events=1 keeps only the newest event (a veth pair also
    brings events of its queues, so which one that is is known only after a
    "change" of our own)."""
    rdir = tmp_path / "rules"
    write_rules(rdir, RULES)
    start(udevd_factory, rdir, "--explain-events=1")
    net.add_veth("xpa1", "xpb1")
    udev_add(udev_mon, NET + "xpa1")
    udev_add(udev_mon, NET + "xpb1")
    # the queues' events too: the "change" below is then the newest event
    assert run([udevadm, "settle", "--timeout=30"], timeout=40).returncode == 0
    since = len(udev_mon.events)
    with open("/sys/class/net/xpa1/uevent", "w") as f:
        f.write("change")
    got = udev_mon.wait_for(lambda e: e.devpath == NET + "xpa1" and e.action == "change",
                            timeout=20, since=since)
    assert got
    r = explain(udevadm, NET + "xpa1")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0].split()[2] == "action=change"
    r = explain(udevadm, "--seqnum=" + got[0].props["SEQNUM"])
    assert r.returncode == 0, r.stderr
    # the add events are gone
    r = explain(udevadm, NET + "xpb1")
    assert r.returncode != 0
    assert r.stderr == "explain: no trace kept for %s\n" % (NET + "xpb1")


def test_explain_events_off(tmp_path, udevd_factory, udevadm, net, udev_mon):
    rdir = tmp_path / "rules"
    write_rules(rdir, RULES)
    start(udevd_factory, rdir, "--explain-events=0")
    net.add_veth("xpa2", "xpb2")
    ev = udev_add(udev_mon, NET + "xpa2")
    assert ev.props["XP_B"] == "2"
    r = explain(udevadm, NET + "xpa2")
    assert r.returncode != 0
    assert r.stderr == "explain: events are not traced (explain_events=0)\n"
    status, _, _ = ctrl_query("explain " + NET + "xpa2")
    assert status == -errno.EOPNOTSUPP
