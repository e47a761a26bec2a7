# SPDX-License-Identifier: GPL-2.0-or-later
"""make deb (docs/packaging.md): the Debian binary package built from the
tree into a fresh build directory. Its control fields stand in for udev's
(Provides, Conflicts, Replaces udev; Depends on the packages of the
libraries the programs link), its files carry the same path spellings as
Debian 12's udev package (so dpkg hands them over instead of deleting them
on a merged-/usr system), systemd's unit names are there with socket
activation, the udevadm it ships compiles a hardware database, and its
maintainer scripts parse."""

import glob
import os
import shutil
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))


def field(control, name):
    for line in control.splitlines():
        if line.startswith(name + ": "):
            return line[len(name) + 2:]
    return None


@pytest.fixture(scope="module")
def deb(tmp_path_factory):
    for tool in ("dpkg-deb", "dpkg-query", "readelf"):
        if not shutil.which(tool):
            pytest.skip("%s missing" % tool)
    out = str(tmp_path_factory.mktemp("debbuild"))
    # a clean environment: under `make check-asan` the suite runs in a
    # sub-make whose MAKEFLAGS (SANITIZE=..., -w) would reach this make too
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    r = subprocess.run(["make", "-s", "--no-print-directory", "-j2", "-C", REPO, "O=" + out,
                        "deb"], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                       timeout=1200, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    paths = [l for l in r.stdout.splitlines() if l.startswith(out + "/tudev_")]
    assert len(paths) == 1 and paths[0].endswith(".deb"), r.stdout
    path = paths[0]
    assert os.path.isfile(path)
    assert glob.glob(os.path.join(out, "*.deb")) == [path]
    x = os.path.join(out, "extracted")
    subprocess.run(["dpkg-deb", "-x", path, x], check=True)
    ctl = os.path.join(out, "control")
    subprocess.run(["dpkg-deb", "-e", path, ctl], check=True)
    listing = subprocess.run(["dpkg-deb", "-c", path], check=True, capture_output=True,
                             text=True).stdout
    files = {}
    for line in listing.splitlines():
        parts = line.split()
        name = parts[5][1:]  # "./bin/udevadm" -> "/bin/udevadm"
        files[name.rstrip("/") or "/"] = (parts[0], parts[7] if len(parts) > 7 else None)
    with open(os.path.join(ctl, "control")) as f:
        control = f.read()
    return {"path": path, "x": x, "ctl": ctl, "files": files, "control": control}


def test_control_fields(deb):
    c = deb["control"]
    arch = subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True,
                          check=True).stdout.strip()
    assert field(c, "Package") == "tudev"
    assert field(c, "Architecture") == arch
    version = field(c, "Version")
    assert version and version[0].isdigit(), version
    assert os.path.basename(deb["path"]) == "tudev_%s_%s.deb" % (version, arch)
    assert field(c, "Provides").startswith("udev")
    assert field(c, "Conflicts") == "udev"
    assert field(c, "Replaces") == "udev"
    deps = {d.split()[0]: d for d in field(c, "Depends").split(", ")}
    # the libraries udevd, udevadm, tudev-probe and the helpers link, and
    # libkmod, which the kmod builtin loads with dlopen()
    for pkg in ("libc6", "libkmod2", "libblkid1"):
        assert pkg in deps, (pkg, deps)
        assert deps[pkg].startswith(pkg + " (>= "), deps[pkg]
    assert "udev" not in deps
    assert "libudev1" not in deps  # nothing links it: it is for clients
    # a real installed size, in KiB
    assert int(field(c, "Installed-Size")) > 100


def test_files_in_udevs_places(deb):
    files = deb["files"]
    helpers = sorted(os.path.basename(p)[len("main-"):-2]
                     for p in glob.glob(os.path.join(REPO, "src/helpers/main-*.c")))
    assert "ata_id" in helpers and "scsi_id" in helpers
    rules = sorted(os.path.basename(p) for p in glob.glob(os.path.join(REPO, "rules.d/*.rules")))
    want_exec = ["/usr/sbin/udevd", "/bin/udevadm", "/usr/libexec/tudev/tudev-probe",
                 "/etc/init.d/udev", "/usr/share/initramfs-tools/hooks/tudev",
                 "/usr/share/initramfs-tools/scripts/init-top/tudev",
                 "/usr/share/initramfs-tools/scripts/init-bottom/tudev"]
    want_exec += ["/lib/udev/" + h for h in helpers]
    for p in want_exec:
        assert p in files, p
        assert files[p][0].startswith("-rwx"), (p, files[p])
    want = ["/lib/udev/rules.d/" + r for r in rules]
    want += ["/lib/systemd/system/" + u for u in (
        "systemd-udevd.service", "systemd-udevd-control.socket", "systemd-udevd-kernel.socket",
        "systemd-udev-trigger.service", "systemd-udev-settle.service")]
    want += ["/usr/share/man/man8/udevd.8.gz", "/usr/share/man/man8/udevadm.8.gz",
             "/usr/share/man/man7/tudev-boot.7.gz", "/usr/share/pkgconfig/udev.pc",
             "/lib/systemd/network/99-default.link", "/usr/share/doc/tudev/copyright"]
    for p in want:
        assert p in files, p
        assert files[p][0].startswith("-rw-r--r--"), (p, files[p])
    links = {
        "/lib/systemd/system/udev.service": "systemd-udevd.service",
        "/lib/systemd/systemd-udevd": "/usr/sbin/udevd",
        "/lib/systemd/system/sockets.target.wants/systemd-udevd-control.socket":
            "../systemd-udevd-control.socket",
        "/lib/systemd/system/sockets.target.wants/systemd-udevd-kernel.socket":
            "../systemd-udevd-kernel.socket",
        "/lib/systemd/system/sysinit.target.wants/systemd-udevd.service":
            "../systemd-udevd.service",
        "/lib/systemd/system/sysinit.target.wants/systemd-udev-trigger.service":
            "../systemd-udev-trigger.service",
    }
    for p, target in links.items():
        assert p in files and files[p][0].startswith("l"), p
        assert os.readlink(deb["x"] + p) == target, p
    # the spellings of udev's package only: nothing udev has under /lib
    # may appear under /usr/lib, and no unit keeps tudev's own name
    assert not [p for p in files if p.startswith(("/usr/lib/udev", "/usr/lib/systemd"))]
    assert not [p for p in files if p.startswith("/lib/systemd/system/tudev-")]


def test_units_are_systemds(deb):
    units = os.path.join(deb["x"], "lib/systemd/system")
    for u in os.listdir(units):
        p = os.path.join(units, u)
        if not os.path.isfile(p) or os.path.islink(p):
            continue
        with open(p) as f:
            text = f.read()
        lines = [line for line in text.splitlines() if not line.startswith("#")]
        # no reference to tudev's unit names, no conflict with itself, static
        assert not [line for line in lines if "tudev-" in line and
                    not line.startswith("Documentation=")], (u, lines)
        assert not [line for line in lines if line.startswith("Conflicts=systemd-")], u
        assert "[Install]" not in text, u
    with open(os.path.join(units, "systemd-udevd.service")) as f:
        text = f.read()
    assert "ExecStart=/usr/sbin/udevd\n" in text
    assert "Sockets=systemd-udevd-control.socket systemd-udevd-kernel.socket\n" in text
    with open(os.path.join(units, "systemd-udevd-control.socket")) as f:
        text = f.read()
    assert "Service=systemd-udevd.service\n" in text
    assert "ListenSequentialPacket=/run/udev/control\n" in text
    with open(os.path.join(units, "systemd-udevd-kernel.socket")) as f:
        text = f.read()
    assert "ListenNetlink=kobject-uevent 1\n" in text
    with open(os.path.join(units, "systemd-udev-trigger.service")) as f:
        text = f.read()
    assert "After=systemd-udevd.service\n" in text


def test_built_for_usr(deb):
    """The programs look for their parts where the package puts them."""
    with open(os.path.join(deb["x"], "usr/sbin/udevd"), "rb") as f:
        udevd = f.read()
    # TUDEV_PROBE_PATH: gcc may build it from 8-byte immediates, so only its
    # head is sure to appear whole; a /usr/local build has that instead
    assert b"/usr/libexec/tud" in udevd
    assert b"/usr/local/libexec" not in udevd
    with open(os.path.join(deb["x"], "usr/share/pkgconfig/udev.pc")) as f:
        pc = f.read()
    assert "prefix=/usr\n" in pc and "/usr/local" not in pc
    # Debian's udev.pc says udevdir=/lib/udev: packages drop files there
    assert "udev_dir=/lib/udev\n" in pc and "udevdir=${udev_dir}\n" in pc, pc
    with open(os.path.join(deb["x"], "etc/init.d/udev")) as f:
        text = f.read()
    assert "UDEVD=/usr/sbin/udevd\n" in text and "UDEVADM=/bin/udevadm\n" in text


def test_hwdb_compiler(deb, tmp_path):
    """The packaged udevadm compiles hwdb.d files (what postinst runs)."""
    root = tmp_path / "root"
    (root / "lib/udev/hwdb.d").mkdir(parents=True)
    (root / "lib/udev/hwdb.d/50-test.hwdb").write_text(
        "evdev:input:b0003v1234p5678*\n KEYBOARD_KEY_70039=leftctrl\n")
    udevadm = os.path.join(deb["x"], "bin/udevadm")
    r = subprocess.run([udevadm, "hwdb", "--update", "--usr", "--root=%s" % root],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    with open(root / "lib/udev/hwdb.bin", "rb") as f:
        head = f.read(8)
    assert head == b"KSLPHHRH"
    r = subprocess.run([udevadm, "hwdb", "--test=evdev:input:b0003v1234p5678e0111",
                        "--root=%s" % root], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["KEYBOARD_KEY_70039=leftctrl"]


def test_maintainer_scripts(deb):
    ctl = deb["ctl"]
    for name in ("postinst", "prerm", "postrm"):
        p = os.path.join(ctl, name)
        assert os.access(p, os.X_OK), name
        with open(p) as f:
            assert f.readline() == "#!/bin/sh\n", name
        r = subprocess.run(["sh", "-n", p], capture_output=True, text=True)
        assert r.returncode == 0, (name, r.stderr)
    with open(os.path.join(ctl, "postinst")) as f:
        text = f.read()
    assert "udevadm hwdb --update" in text
    assert "update-rc.d udev defaults" in text
    assert "systemctl restart systemd-udevd.service" in text.replace("\\\n", " ")
    with open(os.path.join(ctl, "conffiles")) as f:
        assert f.read().split() == ["/etc/init.d/udev"]
    with open(os.path.join(ctl, "triggers")) as f:
        trig = f.read().splitlines()
    assert "interest-noawait /lib/udev/hwdb.d" in trig
    assert "activate-noawait update-initramfs" in trig
    # md5sums lists every regular file of the package
    with open(os.path.join(ctl, "md5sums")) as f:
        summed = {"/" + line.split(None, 1)[1].strip() for line in f}
    regular = {p for p, (mode, _) in deb["files"].items() if mode.startswith("-")}
    assert summed == regular
