# SPDX-License-Identifier: GPL-2.0-or-later
"""The rules engine inside the daemon, with real kernel events (veth pairs,
loop devices) and a rules directory passed with --rules-dir: properties in the
libudev broadcast and the DB, tags and the tag index, SYMLINK/OWNER/GROUP/MODE
on device nodes in the sandbox's private /dev, link priorities, PROGRAM /
IMPORT{program} / RUN with real programs, global properties, and reloading
while events flow."""

import json
import os
import subprocess
import random
import stat
import threading
import time

from tudevlib import (CTRL_ENV, CTRL_RELOAD, ctrl_message, ctrl_request, devpath_in, ifindex,
                      run, wait_until)

NET = "/devices/virtual/net/"


def write_rules(directory, text, name="50-test.rules"):
    os.makedirs(str(directory), exist_ok=True)
    path = os.path.join(str(directory), name)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, path)
    return path


def start(udevd_factory, rules_dir, *extra):
    return udevd_factory("--children-max=8", "--rules-dir=%s" % rules_dir, *extra)


def read(path):
    with open(path) as f:
        return f.read()


def db_lines(path):
    return read(path).splitlines()


def udev_add(udev_mon, devpath, timeout=20, since=0):
    got = udev_mon.wait_for(lambda e: e.devpath == devpath and e.action == "add", timeout=timeout,
                            since=since)
    assert got, "no udev add event for %s" % devpath
    assert got[0].errors == [], got[0].errors
    return got[0]


def free_loop_index():
    for _ in range(200):
        idx = random.randint(2000, 60000)
        if not os.path.exists("/sys/devices/virtual/block/loop%d" % idx):
            return idx
    raise RuntimeError("no free loop index")


def mknod_loop(idx):
    """Stand-in for devtmpfs in the sandbox's tmpfs /dev: the node exists
    before udev sees the event (it cannot be opened, chmod/chown work)."""
    path = "/dev/loop%d" % idx
    if not os.path.exists(path):
        os.mknod(path, 0o600 | stat.S_IFBLK, os.makedev(7, idx))
    return path


def test_veth_properties_tags_db_programs(tmp_path, udevd_factory, net, udev_mon):
    rdir = tmp_path / "rules"
    write_rules(rdir, r'''
# comment
SUBSYSTEM=="net", ACTION=="add", KERNEL=="rta*", ENV{RT_A}="1", ENV{RT_NAME}="%k", \
  TAG+="rtag", ENV{.RT_HIDDEN}="h"
SUBSYSTEM=="net", KERNEL=="rta*", PROGRAM="/bin/echo hello %k", ENV{RT_PROG}="%c"
SUBSYSTEM=="net", KERNEL=="rta*", IMPORT{program}="/bin/sh -c 'echo RT_IMP=x; echo RT_IDX=$IFINDEX'"
SUBSYSTEM=="net", KERNEL=="rta*", PROGRAM=="/bin/false", ENV{RT_NEVER}="1"
SUBSYSTEM=="net", KERNEL=="rta*", RUN+="/bin/sh -c 'echo $INTERFACE $RT_A $RT_IMP > /run/rt-run-%k'"
SUBSYSTEM=="net", KERNEL=="rtb*", ENV{RT_B}="peer", TAG+="other"
''')
    start(udevd_factory, rdir)
    net.add_veth("rta0", "rtb0")
    ev = udev_add(udev_mon, NET + "rta0")
    idx = ifindex("rta0")
    p = ev.props
    assert p["RT_A"] == "1"
    assert p["RT_NAME"] == "rta0"
    assert p["RT_PROG"] == "hello rta0"
    assert p["RT_IMP"] == "x"
    assert p["RT_IDX"] == str(idx)
    assert "RT_NEVER" not in p
    assert p[".RT_HIDDEN"] == "h"          # hidden properties are broadcast ...
    assert p["TAGS"] == ":rtag:" and p["CURRENT_TAGS"] == ":rtag:"
    assert "RT_B" not in p
    # RUN ran before the broadcast, with the device's properties as environment
    assert read("/run/rt-run-rta0") == "rta0 1 x\n"
    db = db_lines("/run/udev/data/n%d" % idx)
    assert "E:RT_A=1" in db and "E:RT_PROG=hello rta0" in db and "E:RT_IMP=x" in db
    assert not any(".RT_HIDDEN" in line for line in db)   # ... but never stored
    assert not any(line.startswith("E:INTERFACE=") for line in db)  # kernel properties aren't
    assert "G:rtag" in db and "Q:rtag" in db
    assert os.path.exists("/run/udev/tags/rtag/n%d" % idx)

    peer = udev_add(udev_mon, NET + "rtb0")
    assert peer.props["RT_B"] == "peer"
    assert peer.props["TAGS"] == ":other:"
    assert "RT_A" not in peer.props


def test_change_event_sticky_tags_and_properties(tmp_path, udevd_factory, net, udev_mon):
    rdir = tmp_path / "rules"
    write_rules(rdir, r'''
KERNEL=="rsa*", ACTION=="add", TAG+="addtag", ENV{RS_ADD}="1"
KERNEL=="rsa*", ACTION=="change", TAG+="chtag", IMPORT{db}="RS_ADD", ENV{RS_SEEN}="$env{RS_ADD}"
''')
    start(udevd_factory, rdir)
    net.add_veth("rsa0", "rsb0")
    udev_add(udev_mon, NET + "rsa0")
    mark = udev_mon.mark()
    with open("/sys/class/net/rsa0/uevent", "w") as f:
        f.write("change")
    got = udev_mon.wait_for(lambda e: e.devpath == NET + "rsa0" and e.action == "change",
                            since=mark, timeout=20)
    assert got
    p = got[0].props
    # TAGS is sticky, CURRENT_TAGS only this event's
    assert sorted(p["TAGS"].strip(":").split(":")) == ["addtag", "chtag"]
    assert p["CURRENT_TAGS"] == ":chtag:"
    assert p["RS_ADD"] == "1" and p["RS_SEEN"] == "1"   # only through IMPORT{db}
    db = db_lines("/run/udev/data/n%d" % ifindex("rsa0"))
    assert "G:addtag" in db and "G:chtag" in db and "Q:chtag" in db and "Q:addtag" not in db


def test_loop_symlinks_permissions_remove(tmp_path, udevd_factory, loops, udev_mon):
    idx = free_loop_index()
    rdir = tmp_path / "rules"
    write_rules(rdir, r'''
SUBSYSTEM=="block", KERNEL=="loop%d", SYMLINK+="rtest/by-test/loop-%%n rtest/second", \
  OWNER="1", GROUP="2", MODE="0640", OPTIONS+="link_priority=5", ENV{RT_LOOP}="$devnode"
''' % idx)
    start(udevd_factory, rdir)
    node = mknod_loop(idx)
    path = loops.devpath(idx)
    assert loops.add(index=idx) == idx
    ev = udev_add(udev_mon, path)
    p = ev.props
    assert p["DEVNAME"] == node
    assert p["RT_LOOP"] == node
    assert sorted(p["DEVLINKS"].split()) == ["/dev/rtest/by-test/loop-%d" % idx,
                                              "/dev/rtest/second"]
    assert os.readlink("/dev/rtest/by-test/loop-%d" % idx) == "../../loop%d" % idx
    assert os.readlink("/dev/rtest/second") == "../loop%d" % idx
    assert os.readlink("/dev/block/7:%d" % idx) == "../loop%d" % idx
    st = os.stat(node)
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (1, 2, 0o640)
    entry = "/run/udev/links/rtest\\x2fsecond/b7:%d" % idx
    assert os.readlink(entry) == "5:" + node
    db = db_lines("/run/udev/data/b7:%d" % idx)
    assert "S:rtest/second" in db and "L:5" in db

    mark = udev_mon.mark()
    loops.remove(idx)
    got = udev_mon.wait_for(lambda e: e.devpath == path and e.action == "remove", since=mark,
                            timeout=20)
    assert got
    # the remove event carries the old record; links, M:m link and DB are gone
    assert got[0].props.get("RT_LOOP") == node
    assert "DEVLINKS" in got[0].props
    assert not os.path.lexists("/dev/rtest/second")
    assert not os.path.lexists("/dev/rtest")            # empty parents removed
    assert not os.path.lexists("/dev/block/7:%d" % idx)
    assert not os.path.exists("/run/udev/data/b7:%d" % idx)
    os.unlink(node)


def test_seclabel_smack_on_loop_node(tmp_path, udevd_factory, loops, udev_mon):
    """SECLABEL{smack} sets security.SMACK64 on a real loop device's node when
    SMACK is active; SECLABEL{selinux} is left alone while SELinux is not;
    an unknown module is named in the log. SMACK is made to look active the
    way systemd-udevd tests for it (/sys/fs/smackfs exists): a tmpfs over the
    sandbox's /sys/fs while the daemon starts (it looks once, at start)."""
    import subprocess
    idx = free_loop_index()
    rdir = tmp_path / "rules"
    write_rules(rdir, r'''
SUBSYSTEM=="block", KERNEL=="loop%d", ACTION=="add", SECLABEL{smack}="Lbl-$kernel", \
  SECLABEL{selinux}+="system_u:object_r:fixed_disk_device_t:s0", SECLABEL{apparmor}+="x"
''' % idx)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "mode=0755", "tmpfs", "/sys/fs"], check=True)
    try:
        os.mkdir("/sys/fs/smackfs")
        os.mkdir("/sys/fs/selinux")  # a plain directory is not a selinuxfs
        d = start(udevd_factory, rdir)
    finally:
        subprocess.run(["umount", "/sys/fs"], check=True)
    node = mknod_loop(idx)
    path = loops.devpath(idx)
    assert loops.add(index=idx) == idx
    udev_add(udev_mon, path)
    assert os.getxattr(node, "security.SMACK64") == b"Lbl-loop%d" % idx
    assert "security.selinux" not in os.listxattr(node)
    assert wait_until(lambda: "SECLABEL: unknown subsystem, ignoring 'apparmor'='x'" in d.log(),
                      timeout=5)
    # a "change" (not an add, no permission change) leaves the label alone
    os.setxattr(node, "security.SMACK64", b"Other")
    mark = udev_mon.mark()
    with open("/sys%s/uevent" % path, "w") as f:
        f.write("change")
    assert udev_mon.wait_for(lambda e: e.devpath == path and e.action == "change", since=mark,
                             timeout=20)
    assert os.getxattr(node, "security.SMACK64") == b"Other"
    loops.remove(idx)
    os.unlink(node)


def test_link_priority_between_two_loops(tmp_path, udevd_factory, loops, udev_mon):
    a, b = free_loop_index(), free_loop_index()
    while b == a:
        b = free_loop_index()
    rdir = tmp_path / "rules"
    write_rules(rdir, r'''
KERNEL=="loop%d", SYMLINK+="rtest/shared", OPTIONS+="link_priority=10"
KERNEL=="loop%d", SYMLINK+="rtest/shared"
''' % (a, b))
    start(udevd_factory, rdir)
    for i in (a, b):
        mknod_loop(i)
    loops.add(index=a)
    udev_add(udev_mon, loops.devpath(a))
    assert os.readlink("/dev/rtest/shared") == "../loop%d" % a
    loops.add(index=b)              # lower priority, processed last: a keeps it
    udev_add(udev_mon, loops.devpath(b))
    assert os.readlink("/dev/rtest/shared") == "../loop%d" % a
    mark = udev_mon.mark()
    loops.remove(a)                 # the winner goes: b takes over
    assert udev_mon.wait_for(lambda e: e.devpath == loops.devpath(a) and e.action == "remove",
                             since=mark, timeout=20)
    assert os.readlink("/dev/rtest/shared") == "../loop%d" % b
    for i in (a, b):
        if os.path.exists("/dev/loop%d" % i):
            os.unlink("/dev/loop%d" % i)


def test_global_property(tmp_path, udevd_factory, net, udev_mon):
    rdir = tmp_path / "rules"
    write_rules(rdir, 'KERNEL=="rga*", ENV{RT_G}=="7", ENV{RT_SEEN}="$env{RT_G}"\n')
    start(udevd_factory, rdir)
    assert ctrl_request([ctrl_message(CTRL_ENV, "RT_G=7")])
    net.add_veth("rga0", "rgb0")
    p = udev_add(udev_mon, NET + "rga0").props
    assert p["RT_SEEN"] == "7"
    assert "RT_G" not in p          # not added to the device


def test_reload_while_events_flow(tmp_path, udevd_factory, net, udev_mon):
    """Events keep flowing while the rules change; every event runs with one
    whole rule set (A == B), none is lost, and after the reload request the
    new rules apply; a changed file is also noticed without any request."""
    rdir = tmp_path / "rules"

    def rules(v):
        return ('KERNEL=="rl*", ENV{RL_A}="%d"\n' % v +
                "".join('KERNEL=="rl*", ENV{RL_PAD%d}="x"\n' % i for i in range(200)) +
                'KERNEL=="rl*", ENV{RL_B}="%d"\n' % v)

    write_rules(rdir, rules(1))
    d = start(udevd_factory, rdir)
    names = []
    stop = threading.Event()

    def producer():
        n = 0
        while not stop.is_set() and n < 60:
            net.add_veth("rl%da" % n, "rl%db" % n)
            names.extend(["rl%da" % n, "rl%db" % n])
            n += 1
            time.sleep(0.02)

    t = threading.Thread(target=producer)
    t.start()
    time.sleep(0.3)
    write_rules(rdir, rules(2))
    assert ctrl_request([ctrl_message(CTRL_RELOAD)])
    reload_mark = len(names)
    t.join(60)
    stop.set()
    got = udev_mon.wait_for(lambda e: e.action == "add" and e.subsystem == "net" and
                            (e.devpath or "").startswith(NET + "rl"),
                            count=len(names), timeout=60)
    assert len(got) == len(names)
    versions = {}
    for e in got:
        assert "RL_A" in e.props, e.props
        assert e.props["RL_A"] == e.props["RL_B"], "half-loaded rules: %r" % e.props
        versions[e.devpath[len(NET):]] = e.props["RL_A"]
    assert set(versions.values()) <= {"1", "2"}
    # everything created after the reload was answered uses the new rules
    for n in names[reload_mark + 2:]:
        assert versions[n] == "2", (n, versions[n])
    assert "Rules reloaded" in d.log()

    # automatic check (every 3 s, on the 1 s housekeeping tick), no request
    write_rules(rdir, rules(3))
    time.sleep(5)
    mark = udev_mon.mark()
    net.add_veth("rlza", "rlzb")
    assert udev_add(udev_mon, NET + "rlza", since=mark).props["RL_A"] == "3"


def test_bad_rules_do_not_stop_the_daemon(tmp_path, udevd_factory, net, udev_mon):
    rdir = tmp_path / "rules"
    write_rules(rdir, 'KERNEL=="rba*", ENV{RB_OK}="1"\nKERNEL=="rba*", NOSUCHKEY="x"\n'
                      'KERNEL=="rba*" ENV{RB_UNQUOTED}=1\nKERNEL=="rba*", ENV{RB_OK2}="2"\n')
    d = start(udevd_factory, rdir)
    net.add_veth("rba0", "rbb0")
    p = udev_add(udev_mon, NET + "rba0").props
    assert p["RB_OK"] == "1" and p["RB_OK2"] == "2"
    assert "RB_UNQUOTED" not in p
    assert "50-test.rules:2" in d.log()


DEBIAN_RULES = os.path.join(os.path.dirname(__file__), "..", "..", "build-ref", "sd-udev", "lib",
                            "udev", "rules.d")


def test_debian_rules_process_real_events(udevd_factory, net, loops, udev_mon):
    """Debian 12's full rule set: every event is processed (no failure), the
    rules see the devices (net: ID_NET_* from 75-net-description where
    builtins allow, systemd tag from 99-systemd.rules; loop: by-diskseq)."""
    if not os.path.isdir(DEBIAN_RULES):
        import pytest
        pytest.skip("Debian's rules not unpacked in build-ref/sd-udev")
    d = start(udevd_factory, os.path.abspath(DEBIAN_RULES))
    pairs = [("rda%d" % i, "rdb%d" % i) for i in range(10)]
    net.add_veths(pairs)
    names = [n for p in pairs for n in p]
    got = udev_mon.wait_for(lambda e: e.action == "add" and e.subsystem == "net" and
                            e.devpath[len(NET):] in names, count=len(names), timeout=60)
    assert len(got) == len(names)
    for e in got:
        assert e.errors == []
        assert "UDEV_WORKER_FAILED" not in e.props, e.props
        assert "systemd" in e.props.get("TAGS", "")
        assert e.props["SYSTEMD_ALIAS"] == "/sys/subsystem/net/devices/" + e.devpath[len(NET):]
    idx = loops.add()
    mknod_loop(idx)
    ev = udev_add(udev_mon, loops.devpath(idx))
    assert "UDEV_WORKER_FAILED" not in ev.props
    diskseq = open("/sys/devices/virtual/block/loop%d/diskseq" % idx).read().strip()
    assert "/dev/disk/by-diskseq/%s" % diskseq in ev.props.get("DEVLINKS", "").split()
    assert os.readlink("/dev/disk/by-diskseq/%s" % diskseq) == "../../loop%d" % idx
    assert "Loaded" in d.log()


def test_netif_rename(tmp_path, udevd_factory, net, udev_mon):
    rdir = tmp_path / "rules"
    write_rules(rdir, r'''
SUBSYSTEM=="net", ACTION=="add", KERNEL=="rna0", NAME="rnrenamed"
SUBSYSTEM=="net", ACTION=="add", KERNEL=="rnc0", NAME="rnd0"
SUBSYSTEM=="net", ACTION=="add", KERNEL=="rne0", NAME="0123"
''')
    start(udevd_factory, rdir)
    net.add_veth("rna0", "rnb0")
    got = udev_mon.wait_for(lambda e: e.action == "add" and e.subsystem == "net" and
                            e.props.get("INTERFACE_OLD") == "rna0", timeout=20)
    assert got, "no add event for the renamed interface"
    p = got[0].props
    assert p["DEVPATH"] == NET + "rnrenamed"
    assert p["INTERFACE"] == "rnrenamed"
    assert p["ID_RENAMING"] == "1"
    assert os.path.exists("/sys/class/net/rnrenamed")
    net.names.append("rnrenamed")
    # the kernel's move event follows; it no longer carries ID_RENAMING
    mv = udev_mon.wait_for(lambda e: e.action == "move" and e.devpath == NET + "rnrenamed",
                           timeout=20)
    assert mv and mv[0].props["DEVPATH_OLD"] == NET + "rna0"
    assert "ID_RENAMING" not in mv[0].props
    idx = ifindex("rnrenamed")
    assert wait_until(lambda: "E:ID_RENAMING=1" not in db_lines("/run/udev/data/n%d" % idx), 5)

    # the name is taken by the peer: the event fails with EEXIST
    net.add_veth("rnc0", "rnd0")
    bad = udev_add(udev_mon, NET + "rnc0")
    assert bad.props.get("UDEV_WORKER_FAILED") == "1"
    assert bad.props.get("UDEV_WORKER_ERRNO") == "17"
    assert os.path.exists("/sys/class/net/rnc0")
    # an invalid name is ignored (warning), the event succeeds
    net.add_veth("rne0", "rnf0")
    ok = udev_add(udev_mon, NET + "rne0")
    assert "UDEV_WORKER_FAILED" not in ok.props
    assert os.path.exists("/sys/class/net/rne0")


def test_netif_rename_to_own_altname(tmp_path, udevd_factory, net, udev_mon):
    """A name that is already one of the interface's alternative names (an
    initramfs daemon gave it, say) is swapped in: the kernel refuses the
    plain rename with EEXIST, so the alternative name is dropped, the
    interface renamed, and the old name kept as an alternative name."""
    rdir = tmp_path / "rules"
    write_rules(rdir, r'''
SUBSYSTEM=="net", ACTION=="add", KERNEL=="rng0", ENV{SYNTH_UUID}=="?*", NAME="rnalt0"
''')
    start(udevd_factory, rdir)
    net.add_veth("rng0", "rnh0")
    udev_add(udev_mon, NET + "rng0")
    subprocess.run(["ip", "link", "property", "add", "dev", "rng0", "altname", "rnalt0"],
                   check=True)
    with open("/sys/class/net/rng0/uevent", "w") as f:
        f.write("add 6c1f2a8e-2d1b-4c8e-9a55-3f0b0d5e7a11")
    got = udev_mon.wait_for(lambda e: e.action == "add" and e.subsystem == "net" and
                            e.props.get("INTERFACE_OLD") == "rng0", timeout=20)
    assert got, "no add event for the renamed interface"
    assert "UDEV_WORKER_FAILED" not in got[0].props, got[0].props
    assert got[0].props["INTERFACE"] == "rnalt0"
    net.names.append("rnalt0")
    info = json.loads(subprocess.run(["ip", "-j", "link", "show", "dev", "rnalt0"],
                                     check=True, capture_output=True, text=True).stdout)
    assert info[0]["ifname"] == "rnalt0"
    assert info[0].get("altnames") == ["rng0"]


def test_reload_then_trigger_never_races(tmp_path, udevd_factory, udevadm, net, udev_mon):
    """`udevadm control --reload` returns only once the new rules are in
    place: a trigger sent right after it runs with them, every time. The file
    is rewritten in place with the same size and its old mtime (as `cp -p`
    does), which the periodic stat check cannot see: a request reloads
    whatever the file times say. Each reload publishes a new generation."""
    rdir = tmp_path / "rules"
    path = write_rules(rdir, 'SUBSYSTEM=="net", KERNEL=="rr*", ENV{RR_GEN}="00"\n')
    st = os.stat(path)
    d = start(udevd_factory, rdir)
    net.add_veth("rr0a", "rr0b")
    dev = NET + "rr0a"
    assert udev_mon.wait_for(lambda e: e.action == "add" and e.devpath == dev, timeout=30)
    for i in range(1, 21):
        with open(path, "w") as f:  # same inode, same size
            f.write('SUBSYSTEM=="net", KERNEL=="rr*", ENV{RR_GEN}="%02d"\n' % i)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
        r = run([udevadm, "control", "--reload"])
        assert r.returncode == 0, r.stderr
        mark = udev_mon.mark()
        r = run([udevadm, "trigger", "--action=change", "/sys/class/net/rr0a"])
        assert r.returncode == 0, r.stderr
        got = udev_mon.wait_for(lambda e: e.action == "change" and e.devpath == dev,
                                timeout=30, since=mark)
        assert got, "no change event for rr0a (round %d)" % i
        assert got[0].props.get("RR_GEN") == "%02d" % i, (i, got[0].props)
    log = d.log()
    assert "Rules reloaded, generation 21" in log
    d.stop()
    assert d.stats()["generation"] == 21
