# SPDX-License-Identifier: GPL-2.0-or-later
"""path_id, usb_id and net_id against systemd 257's own `udevadm test-builtin`
(Debian 13's udev package in the chroot tools/build-ref-trixie makes, run
through tests/builtins/trixie-udevadm) over the fake sysfs trees of
tests/builtins/storage_net_fixtures.py.

tudev runs with net.naming_scheme= on its (fake) kernel command line: with
"latest" every builtin must print exactly what systemd 257 prints by default
(its default scheme is v257); net_id is also compared under each scheme
systemd 253-257 added, given to both. Skipped when the chroot is absent
(tools/build-ref-trixie builds it in about a minute)."""

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "builtins"))

import sd_compare  # noqa: E402
import storage_net_fixtures  # noqa: E402

REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
TRIXIE = os.environ.get("TUDEV_TRIXIE_ROOT", os.path.join(REPO, "build-ref", "trixie"))
WRAPPER = os.path.join(REPO, "tests", "builtins", "trixie-udevadm")

# {(command, devpath): reason}
EXPECTED_DIFFS = {}
# With a scheme of v252 or earlier tudev keeps systemd 252's code, where it
# differs from systemd 257's under the same scheme:
V252_CODE = {
    ("net_id", "/devices/pci0000:00/0000:00:1f.6/net/eth1"):
        "systemd 257 prints ID_NET_LABEL_ONBOARD before ID_NET_NAME_ONBOARD",
    ("net_id", "/devices/pci0000:00/0000:07:00.0/net/ib0"):
        "systemd 257 reads dev_id \"0x1\" as a number, systemd 252 fails to parse it",
}


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    if not os.access(os.path.join(TRIXIE, "usr", "bin", "udevadm"), os.X_OK):
        pytest.skip("no systemd 257 reference at %s (tools/build-ref-trixie)" % TRIXIE)
    return storage_net_fixtures.build(str(tmp_path_factory.mktemp("sysfs")))


def compare(t, cases, cmdline_ours, cmdline_ref, tmp, expected=None):
    etc = sd_compare.hwdb_etc_dir(tmp)
    ours = sd_compare.run_cases(sd_compare.our_udevadm(), cases, sysroot=t.sys, etc_udev=etc,
                                cmdline=cmdline_ours)
    ref = sd_compare.run_cases(WRAPPER, cases, sysroot=t.sys, etc_udev=etc, cmdline=cmdline_ref)
    expected = EXPECTED_DIFFS if expected is None else expected
    failures = []
    for case, o, r in zip(cases, ours, ref):
        same = (o[0] == 0) == (r[0] == 0) and o[1] == r[1]
        listed = tuple(case) in expected
        if not same and not listed:
            failures.append("%s differs:\n--- systemd 257 (rc %d)\n%s--- tudev (rc %d)\n%s"
                            "--- tudev stderr\n%s" % (" ".join(case), r[0], r[1], o[0], o[1],
                                                      o[2][-1500:]))
        elif same and listed:
            failures.append("%s: listed as a difference but now equal" % " ".join(case))
    return failures, ours, ref


def check(failures):
    assert not failures, "%d differences:\n\n%s" % (len(failures), "\n\n".join(failures))


def test_latest_matches_systemd_257(tree, tmp_path, udevadm):
    t, cases = tree
    cases = [c for c in cases if c[0] in ("path_id", "usb_id", "net_id")]
    failures, ours, ref = compare(t, cases, "net.naming_scheme=latest", "", str(tmp_path))
    check(failures)
    out = "".join(o[1] for o in ours)
    # the fixtures exercise what changed since systemd 252
    assert "ID_NET_NAMING_SCHEME=v257" in out
    assert "ID_PATH_WITH_USB_REVISION=pci-0000:00:14.0-usbv3-0:1:1.0" in out, out
    assert "ID_NET_NAME_PATH=enu1\n" in out  # USB NIC on a platform host (v253)
    assert "r3\n" in out                     # SR-IOV representor (v254)
    assert "ID_NET_NAME_SLOT=ens12\n" in out  # firmware_node/sun (v257)


@pytest.mark.parametrize("scheme", ["v252", "v253", "v254", "v255", "v257", "latest"])
def test_net_id_schemes_match_systemd_257(tree, tmp_path, udevadm, scheme):
    t, cases = tree
    cases = [c for c in cases if c[0] == "net_id"]
    cmd = "net.naming_scheme=%s" % scheme
    failures, _, _ = compare(t, cases, cmd, cmd, str(tmp_path),
                             {**EXPECTED_DIFFS, **V252_CODE} if scheme == "v252" else None)
    check(failures)


def test_path_id_v252_has_no_usb_revision(tree, tmp_path, udevadm):
    """A systemd 252 scheme keeps systemd 252's path_id output."""
    t, cases = tree
    cases = [c for c in cases if c[0] == "path_id"]
    etc = sd_compare.hwdb_etc_dir(str(tmp_path))
    ours = sd_compare.run_cases(sd_compare.our_udevadm(), cases, sysroot=t.sys, etc_udev=etc,
                                cmdline="net.naming_scheme=v252")
    assert not any("ID_PATH_WITH_USB_REVISION" in o[1] for o in ours)
    assert any("-usb-0:1:1.0" in o[1] for o in ours)


LINK_FILE = """[Match]
OriginalName=tv257*

[Link]
NamePolicy=keep
Property=ID_NET_MANAGED_BY=io.systemd.Network FOO=%v "BAR=a b" DEVPATH=x
Property=FOO=second
ImportProperty=NOT_IN_DB
UnsetProperty=ID_NET_NAME_SLOT
ReceivePacketSteeringCPUMask=all
"""


def test_real_veth_net_driver_and_link_properties(tmp_path, udevadm):
    """net_driver and the .link udev property keys on a real veth pair of the
    sandbox's network namespace, both tools reading the same .link file."""
    import subprocess
    if not os.access(os.path.join(TRIXIE, "usr", "bin", "udevadm"), os.X_OK):
        pytest.skip("no systemd 257 reference at %s (tools/build-ref-trixie)" % TRIXIE)
    netdir = tmp_path / "network"
    netdir.mkdir()
    (netdir / "10-tv257.link").write_text(LINK_FILE)
    (netdir / "10-tv257.link.d").mkdir()
    (netdir / "10-tv257.link.d" / "50-a:b.conf").write_text("[Link]\nProperty=DROP=in\n")
    subprocess.run(["ip", "link", "add", "tv257a", "type", "veth", "peer", "name", "tv257b"],
                   check=True)
    try:
        cases = [("net_driver", "/sys/class/net/tv257a"),
                 ("net_setup_link", "/sys/class/net/tv257a", "add"),
                 ("net_setup_link", "/sys/class/net/tv257a", "change")]
        ours = sd_compare.run_cases(sd_compare.our_udevadm(), cases,
                                    env={"TUDEV_NETWORK_DIRS": str(netdir)},
                                    cmdline="net.naming_scheme=latest")
        ours252 = sd_compare.run_cases(sd_compare.our_udevadm(), cases,
                                       env={"TUDEV_NETWORK_DIRS": str(netdir)})
        ref = sd_compare.run_cases(
            WRAPPER, cases, binds=[(str(netdir), os.path.join(TRIXIE, "etc/systemd/network"))])
    finally:
        subprocess.run(["ip", "link", "del", "tv257a"], check=False)
    assert ours[0][1] == ref[0][1] == "ID_NET_DRIVER=veth\n", (ours[0], ref[0])

    def props(out):
        # tudev keeps systemd 252's ID_NET_DRIVER in net_setup_link (systemd
        # 252's rules read it there)
        return [l for l in out.splitlines() if not l.startswith("ID_NET_DRIVER=")]

    def files(out):  # the file names differ: the same directory, bound elsewhere
        return [l.split("=")[0] + "=" + os.path.basename(l.split("=", 1)[1])
                if l.startswith("ID_NET_LINK_FILE=") else
                l.replace(str(netdir), "DIR").replace("/etc/systemd/network", "DIR")
                for l in props(out)]
    for i in (1, 2):
        assert files(ours[i][1]) == files(ref[i][1]), (ours[i], ref[i])
    assert "FOO=second" in ours[1][1] and "ID_NET_NAME_SLOT=" in ours[1][1]
    assert "DROP=in" in ours[1][1]
    assert "ID_NET_LINK_FILE_DROPINS=DIR/10-tv257.link.d/50-a\\x3ab.conf" in \
        files(ours[1][1]), ours[1][1]
    assert "ReceivePacketSteeringCPUMask= in [Link] (systemd 256) is not applied" in ours[1][2]
    # with systemd 252's scheme: no _DROPINS, and a change event is matched
    assert "ID_NET_LINK_FILE_DROPINS" not in ours252[1][1]
    assert "ID_NET_LINK_FILE=" in ours252[2][1] and "FOO=" not in ours252[2][1]
