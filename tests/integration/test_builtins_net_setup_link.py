# SPDX-License-Identifier: GPL-2.0-or-later
"""net_setup_link compared with systemd 252 on real interfaces of the
sandbox's network namespace (veth pairs, a bridge, a macvlan, lo).

Each scenario writes .link files (and drop-ins, masks) into temporary
directories that are bind-mounted over /etc/systemd/network and
/usr/lib/systemd/network (/run/systemd/network is the sandbox's empty tmpfs)
for both tools, recreates the interfaces, and runs `udevadm test-builtin
net_setup_link` of tudev, then of systemd 252 (which also applies the
settings; ours does not in test mode), with actions add/change/move.
Properties and success must be identical.

Then the daemon path: tudev's udevd (rules: IMPORT{builtin}="net_setup_link"
on add, .link directory from $TUDEV_NETWORK_DIRS) must set the same persistent
MAC address, alias and alternative name that systemd's builtin set on an
interface of the same name, and put ID_NET_* into the event.
"""

import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "builtins"))

import sd_compare  # noqa: E402
from test_rules_daemon import start, udev_add, write_rules  # noqa: E402

GROUP = 77
# {case tuple: reason}; empty: everything matches.
EXPECTED_DIFFS = {}

BASIC = """[Match]
OriginalName=tva*
Driver=veth

[Link]
Description=basic
NamePolicy=kernel database onboard slot path mac
Name=renamed0
AlternativeName=alt-one alt-two
MACAddressPolicy=persistent
Alias=hello alias
"""

SCENARIOS = {
    "basic": {"etc": {"10-basic.link": BASIC}},
    "keep-user-name": {"etc": {"10-keep.link": BASIC.replace("NamePolicy=kernel",
                                                             "NamePolicy=keep kernel")}},
    "no-match": {"etc": {"10-x.link": "[Match]\nOriginalName=nothing*\n[Link]\nName=x0\n"}},
    "match-mac": {"etc": {
        "10-mac.link": "[Match]\nMACAddress=02:00:00:00:00:aa  02-00-00-00-00-bb bogus\n"
                       "[Link]\nName=bymac0\n",
        "20-perm.link": "[Match]\nPermanentMACAddress=02:00:00:00:00:cc\n[Link]\nName=perm0\n",
        "30-all.link": "[Match]\nOriginalName=*\n[Link]\nNamePolicy=mac\n"}},
    "type-kind-path-property": {"etc": {
        "10-path.link": "[Match]\nPath=pci-*\n[Link]\nName=pci0\n",
        # a leading '!' negates every word: veth is excluded too
        "11-notpath.link": "[Match]\nPath=!pci-*\nDriver=!e1000* veth\nType=ether\n"
                           "[Link]\nName=kind0\n",
        "12-prop.link": "[Match]\nPath=!pci-*\nDriver=e1000* veth\nType=ether\nKind=veth\n"
                        "Property=INTERFACE=tvb* \"IFINDEX=*\"\n[Link]\nName=prop0\n",
        "13-prop-neg.link": "[Match]\nProperty=!INTERFACE=tvb*\nOriginalName=tva*\n"
                            "[Link]\nName=propneg0\n",
        "20-bridge.link": "[Match]\nDriver=bridge\nKind=bridge\n[Link]\nName=br0x\n",
        "21-macvlan.link": "[Match]\nKind=macvlan\nType=ether\n[Link]\nName=mvx0\n",
        "30-lo.link": "[Match]\nOriginalName=lo\n[Link]\nName=loop0\n"}},
    "override-mask-dropins": {
        "etc": {"10-a.link": "[Match]\nOriginalName=never\n[Link]\nName=etc0\n",
                "30-c.link": None,  # symlink to /dev/null: masks lib's 30-c.link
                "20-b.link.d/50-x.conf": "[Link]\nName=dropin0\n",
                "20-b.link.d/10-y.conf": "[Match]\nOriginalName=\nOriginalName=tv*\n"},
        "lib": {"10-a.link": "[Match]\nOriginalName=*\n[Link]\nName=lib0\n",
                "20-b.link": "[Match]\nOriginalName=nothing\n[Link]\nName=b0\n",
                "20-b.link.d/50-x.conf": "[Link]\nName=shadowed0\n",
                "30-c.link": "[Match]\nOriginalName=*\n[Link]\nName=masked0\n"}},
    "syntax": {"etc": {
        "01-badheader.link": "[Match\nOriginalName=*\n",
        "02-empty-match.link": "[Match]\n[Link]\nName=empty0\n",
        "03-only-unknown.link": "[Match]\nFoo=bar\n",
        "04-empty.link": "",
        "05-syntax.link": "\ufeff# comment\n; other comment\nName=outside\n[X-Vendor]\nA=b\n"
                          "[Unknown]\nC=d\n[Match]\nOriginalName=tv\\\n   a* tvb*\n"
                          "X-Key=1\nNoEquals\n=novalue\n[Link]\nUnknownKey=1\n"
                          "NamePolicy=bogus mac mac  path\nName=bad/name\n"
                          "Name=good0\nAlias=\u00e4lias\nMTUBytes=1.5K\n"
                          "TransmitQueueLength=2000\nWakeOnLan=off\n[SR-IOV]\nTrust=yes\n",
        "06-later.link": "[Match]\nOriginalName=*\n[Link]\nName=later0\n"}},
    "conditions": {"etc": {
        "10-cmdline.link": "[Match]\nKernelCommandLine=tudev.test\nOriginalName=tva*\n"
                           "[Link]\nName=cmd0\n",
        "11-notcmd.link": "[Match]\nKernelCommandLine=!tudev.test=1\nOriginalName=tvb*\n"
                          "[Link]\nName=notcmd0\n",
        "12-arch.link": "[Match]\nArchitecture=x86-64\nHost=*\nKernelVersion=*\n"
                        "OriginalName=br*\n[Link]\nName=arch0\n"}},
    "enum-names": {"etc": {"10-enum.link": "[Match]\nOriginalName=veth*\n[Link]\n"
                                          "NamePolicy=kernel\nName=fromenum0\n"}},
}

# Scenario-specific kernel command lines (several variants each).
CMDLINES = {
    "basic": ["", "net.ifnames=0"],
    "keep-user-name": ["", "net.ifnames=0 net.ifnames", "net.ifnames=bogus net_ifnames=0",
                       "net.ifnames=no net.ifnames=1"],
    "conditions": ["", "tudev.test", "tudev.test=1", "quiet tudev.test=2"],
}

IFACES = ["tva0", "tvb0", "br0", "mv0", "lo", "veth0", "veth1", "macv0", "permv0"]


def setup_interfaces():
    subprocess.run(["ip", "link", "del", "group", str(GROUP)], capture_output=True)
    cmds = ("link add tva0 group %d type veth peer name tvb0 group %d\n"
            "link add type veth\n"
            "link set veth0 group %d\n"
            "link set veth1 group %d\n"
            "link add macv0 address 02:00:00:00:00:bb group %d type veth peer name permv0 "
            "address 02:00:00:00:00:cc group %d\n"
            "link add br0 group %d type bridge\n"
            "link add mv0 link permv0 group %d type macvlan\n" % ((GROUP,) * 8))
    subprocess.run(["ip", "-batch", "-"], input=cmds.encode(), check=True)


def cleanup_interfaces():
    subprocess.run(["ip", "link", "del", "group", str(GROUP)], capture_output=True)


def write_tree(base, files):
    os.makedirs(base, exist_ok=True)
    for name, content in (files or {}).items():
        p = os.path.join(base, name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        if content is None:
            os.symlink("/dev/null", p)
        else:
            with open(p, "w") as f:
                f.write(content)


def binds_for(tmp, scenario):
    etc = os.path.join(tmp, "etc")
    lib = os.path.join(tmp, "lib")
    write_tree(etc, scenario.get("etc"))
    write_tree(lib, scenario.get("lib"))
    empty = os.path.join(tmp, "empty")
    os.makedirs(empty, exist_ok=True)
    binds = [(etc, "/etc/systemd/network"), (lib, "/usr/lib/systemd/network")]
    # non-merged /usr, or a local directory: hide them too
    for d in ("/lib/systemd/network", "/usr/local/lib/systemd/network"):
        if os.path.isdir(d) and not os.path.samefile(d, "/usr/lib/systemd/network"):
            binds.append((empty, d))
    return binds


@pytest.fixture
def interfaces():
    setup_interfaces()
    yield
    cleanup_interfaces()


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_net_setup_link_matches_systemd(name, tmp_path, interfaces, sd_udevadm, udevadm):
    binds = binds_for(str(tmp_path), SCENARIOS[name])
    present = [i for i in IFACES if os.path.exists("/sys/class/net/" + i)]
    assert {"tva0", "tvb0", "br0", "lo"} <= set(present), present
    cases = [("net_setup_link", "/sys/class/net/" + i) for i in present]
    cases += [("net_setup_link", "/sys/class/net/tva0", a) for a in ("change", "move", "bind")]
    cases += [("net_setup_link extra-arg", "/sys/class/net/tva0")]
    failures = []
    for n, cmdline in enumerate(CMDLINES.get(name, [""])):
        if n > 0:  # the other command lines: the interfaces that can differ
            setup_interfaces()
            cases = [c for c in cases if c[1].split("/")[-1] in ("tva0", "tvb0", "br0")]
        f, ours, _ = sd_compare.compare(cases, binds=binds, cmdline=cmdline,
                                        expected_diffs=EXPECTED_DIFFS)
        failures += ["[cmdline %r] %s" % (cmdline, x) for x in f]
    assert not failures, "\n\n".join(failures)


def iface_state(name):
    out = subprocess.run(["ip", "-d", "link", "show", name], capture_output=True, text=True,
                         check=True).stdout
    mac = alias = None
    altnames = []
    for line in out.splitlines():
        w = line.split()
        if w and w[0] == "link/ether":
            mac = w[1]
        elif w and w[0] == "alias":
            alias = line.strip()[len("alias "):]
        elif w and w[0] == "altname":
            altnames.append(w[1])
    return mac, alias, sorted(altnames)


def test_daemon_applies_like_systemd(tmp_path, udevd_factory, udev_mon, monkeypatch,
                                     sd_udevadm):
    """systemd's builtin applies the .link settings to tva0; then tva0 is
    recreated and tudev's daemon must apply the very same settings."""
    scenario = {"etc": {"10-basic.link": BASIC}}
    binds = binds_for(str(tmp_path / "sd"), scenario)
    setup_interfaces()
    try:
        sd_compare.run_cases(sd_udevadm, [("net_setup_link", "/sys/class/net/tva0")],
                             binds=binds)
        want = iface_state("tva0")
        assert want[0] and want[1] == "hello alias" and want[2] == ["alt-one", "alt-two"], want
        cleanup_interfaces()

        linkdir = tmp_path / "links"
        write_tree(str(linkdir), scenario["etc"])
        monkeypatch.setenv("TUDEV_NETWORK_DIRS", str(linkdir))
        rdir = tmp_path / "rules"
        write_rules(rdir, r'''
SUBSYSTEM=="net", ACTION=="add", KERNEL=="tva*", IMPORT{builtin}="net_setup_link"
''')
        start(udevd_factory, rdir)
        subprocess.run(["ip", "link", "add", "tva0", "group", str(GROUP), "type", "veth",
                        "peer", "name", "tvb0", "group", str(GROUP)], check=True)
        ev = udev_add(udev_mon, "/devices/virtual/net/tva0")
        assert ev.props.get("ID_NET_LINK_FILE") == str(linkdir / "10-basic.link"), ev.props
        assert ev.props.get("ID_NET_NAME") == "renamed0", ev.props
        assert ev.props.get("ID_NET_DRIVER") == "veth", ev.props
        assert iface_state("tva0") == want
    finally:
        cleanup_interfaces()


def test_daemon_name_policy_from_properties(tmp_path, udevd_factory, udev_mon, monkeypatch):
    """NamePolicy= and AlternativeNamesPolicy= take ID_NET_NAME_* set by earlier
    rules; a static MACAddress= is applied."""
    linkdir = tmp_path / "links"
    write_tree(str(linkdir), {"10-policy.link": (
        "[Match]\nOriginalName=tvp*\n[Link]\n"
        "NamePolicy=kernel database onboard slot path mac\nName=fallback0\n"
        "AlternativeNamesPolicy=path mac\nAlternativeName=tvp0\n"
        "MACAddressPolicy=none\nMACAddress=02:11:22:33:44:55\n")})
    monkeypatch.setenv("TUDEV_NETWORK_DIRS", str(linkdir))
    rdir = tmp_path / "rules"
    write_rules(rdir, r'''
SUBSYSTEM=="net", ACTION=="add", KERNEL=="tvp*", ENV{ID_NET_NAME_SLOT}="ens9", \
  ENV{ID_NET_NAME_PATH}="enp0s9"
SUBSYSTEM=="net", ACTION=="add", KERNEL=="tvp*", IMPORT{builtin}="net_setup_link"
''')
    start(udevd_factory, rdir)
    try:
        subprocess.run(["ip", "link", "add", "tvp0", "group", str(GROUP), "type", "veth",
                        "peer", "name", "tvq0", "group", str(GROUP)], check=True)
        ev = udev_add(udev_mon, "/devices/virtual/net/tvp0")
        assert ev.props.get("ID_NET_NAME") == "ens9", ev.props
        # the current name and duplicates are dropped from the alternative names
        assert iface_state("tvp0") == ("02:11:22:33:44:55", None, ["enp0s9"])
    finally:
        cleanup_interfaces()


def test_daemon_quiet_when_alternative_names_exist(tmp_path, udevd_factory, udev_mon,
                                                   monkeypatch):
    """A second "add" of an interface whose alternative names are already set
    (the coldplug after the initramfs's daemon applied the .link file) sets
    nothing again and warns about nothing, as systemd-udevd; the names stay."""
    linkdir = tmp_path / "links"
    write_tree(str(linkdir), {"10-alt.link": (
        "[Match]\nOriginalName=tva*\n[Link]\nNamePolicy=\n"
        "AlternativeName=alt-one alt-two\n")})
    monkeypatch.setenv("TUDEV_NETWORK_DIRS", str(linkdir))
    rdir = tmp_path / "rules"
    write_rules(rdir, r'''
SUBSYSTEM=="net", ACTION=="add", KERNEL=="tva*", IMPORT{builtin}="net_setup_link"
''')
    daemon = start(udevd_factory, rdir)
    try:
        subprocess.run(["ip", "link", "add", "tva0", "group", str(GROUP), "type", "veth",
                        "peer", "name", "tvb0", "group", str(GROUP)], check=True)
        udev_add(udev_mon, "/devices/virtual/net/tva0")
        assert iface_state("tva0")[2] == ["alt-one", "alt-two"]
        assert "AlternativeName" not in daemon.log(), daemon.log()[-3000:]
        mark = udev_mon.mark()
        with open("/sys/class/net/tva0/uevent", "w") as f:
            f.write("add")
        udev_add(udev_mon, "/devices/virtual/net/tva0", since=mark)
        assert iface_state("tva0")[2] == ["alt-one", "alt-two"]
        log = daemon.log()
        assert "AlternativeName" not in log, log[-3000:]
    finally:
        cleanup_interfaces()
