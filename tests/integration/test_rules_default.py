# SPDX-License-Identifier: GPL-2.0-or-later
"""tudev's own default rules (rules.d/): they compile cleanly (our `udevadm
verify`, and systemd 252's rules parser through its `udevadm test`), and they
produce what a Debian system expects -- links, properties, groups, network
names -- checked through `udevadm test [--apply] --rules-dir=rules.d`:

  * on fake sysfs trees (tests/builtins: disks on SATA, USB, NVMe, virtio,
    USB serial adapters, input devices, PCI network interfaces), where the
    links our rules make are also compared with those Debian 12's rules make
    under systemd 252's udevadm on the same tree;
  * on a real loop device holding a GPT with an ext4 filesystem (blkid needs
    a real node): by-uuid, by-label, by-partuuid, by-partlabel, by-diskseq.

Every run happens in a nested private mount namespace with its own /run and
/dev; the groups Debian has (input, kvm, render, sgx may be missing on the
build machine) are supplied by a private /etc/group.
"""

import glob
import json
import os
import shlex
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
RULES = os.path.join(REPO, "rules.d")
sys.path.insert(0, os.path.join(REPO, "tests", "builtins"))

import fakesys  # noqa: E402
import storage_net_fixtures  # noqa: E402
from tudevlib import LoopDevices, SD_UDEVADM  # noqa: E402

DEBIAN_RULES = os.path.join(os.path.dirname(os.path.dirname(SD_UDEVADM)), "lib", "udev",
                            "rules.d")
DEBIAN_LINKS = os.path.join(os.path.dirname(os.path.dirname(SD_UDEVADM)), "lib", "systemd",
                            "network")
DEBIAN_GROUPS = ("tty", "disk", "kmem", "dialout", "cdrom", "floppy", "tape", "audio", "video",
                 "lp", "input", "kvm", "render", "sgx")
SEP = "@@@TUDEV-RULES@@@"
# Observes the interface name the rules chose ($name: NAME if assigned, else
# the kernel name).
OBSERVE = 'SUBSYSTEM=="net", ACTION=="add", ENV{TEST_NAME}="$name"\n'


def rule_files():
    return sorted(glob.glob(os.path.join(RULES, "*.rules")))


@pytest.fixture(scope="module")
def group_file(tmp_path_factory):
    """/etc/group plus the Debian groups this machine lacks."""
    p = str(tmp_path_factory.mktemp("etc") / "group")
    with open("/etc/group") as f:
        text = f.read()
    have = {line.split(":")[0] for line in text.splitlines() if line}
    gid = 900
    for g in DEBIAN_GROUPS:
        if g not in have:
            while ":%d:" % gid in text:
                gid += 1
            text += "%s:x:%d:\n" % (g, gid)
            gid += 1
    with open(p, "w") as f:
        f.write(text)
    return p


def nested(script, timeout=120, env=None):
    e = dict(os.environ)
    e.update({"SYSTEMD_DEVICE_VERIFY_SYSFS": "0", "SYSTEMD_LOG_COLOR": "0", "LC_ALL": "C"})
    e.pop("NET_NAMING_SCHEME", None)
    e.update(env or {})
    return subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-ec", script],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=timeout, env=e)


def prologue(group_file, sysroot=None, cmdline=None, link_dir=None, fresh_dev=True):
    """Fresh /run (and /dev), Debian's groups, no rules of the host, optional
    fake /sys, kernel command line and .link directory."""
    s = ["mount -t tmpfs tmpfs /run", "mkdir -p /run/udev"]
    if fresh_dev:
        s += [": > /run/null", "mount --bind /dev/null /run/null",
              "mount -t tmpfs tmpfs /dev", ": > /dev/null", "mount --bind /run/null /dev/null"]
    s.append("mount --bind %s /etc/group" % shlex.quote(group_file))
    for d in ("/etc/udev/rules.d", "/usr/local/lib/udev/rules.d", "/usr/lib/udev/rules.d"):
        s.append("[ ! -d %s ] || mount -t tmpfs tmpfs %s" % (d, d))
    for d in ("/etc/systemd/network", "/run/systemd/network", "/usr/lib/systemd/network"):
        s.append("[ ! -d %s ] || mount -t tmpfs tmpfs %s" % (d, d))
    if link_dir:
        s.append("mount --bind %s /usr/lib/systemd/network" % shlex.quote(link_dir))
    if cmdline is not None:
        s.append("printf '%%s\\n' %s > /run/cmdline" % shlex.quote(cmdline))
        s.append("mount --bind /run/cmdline /proc/cmdline")
    if sysroot:
        s.append("mount --bind %s /sys" % shlex.quote(sysroot))
    return "\n".join(s) + "\n"


def parse_test_output(text):
    props = {}
    for line in text.splitlines():
        if "=" in line and not line.startswith(("This program", "specified", "some values",
                                                "run: ")):
            k, _, v = line.partition("=")
            props[k] = v
    return props


def run_devices(script_head, udevadm_cmd, devpaths, extra="", env=None):
    """Run `udevadm_cmd DEVPATH` for each devpath in one namespace (in order:
    a partition sees its disk's database record); returns [(props, stderr, extra_out)]."""
    s = [script_head, "set +e"]
    for i, d in enumerate(devpaths):
        s.append("echo %s%d; echo %s%d >&2" % (SEP, i, SEP, i))
        s.append("%s %s" % (udevadm_cmd, shlex.quote(d)))
        if extra:
            s.append(extra.replace("@DEV@", shlex.quote(d)))
    r = nested("\n".join(s), env=env)
    out = r.stdout.split(SEP)
    err = r.stderr.split(SEP)
    assert len(out) == len(devpaths) + 1, (r.returncode, r.stdout[-2000:], r.stderr[-3000:])
    res = []
    for i in range(len(devpaths)):
        body = out[i + 1].split("\n", 1)[1] if "\n" in out[i + 1] else ""
        e = err[i + 1] if i + 1 < len(err) else ""
        res.append((parse_test_output(body), e, body))
    return res


def links(props):
    return set(props.get("DEVLINKS", "").split())


# ---------------------------------------------------------------- compiling

def test_files_have_headers():
    files = rule_files()
    assert len(files) >= 10
    for f in files:
        with open(f) as fh:
            first, head = fh.readline(), fh.readline()
        assert first == "# SPDX-License-Identifier: GPL-2.0-or-later\n", f
        assert head.startswith("# tudev default rules: "), f


def test_verify_clean(udevadm, group_file):
    files = " ".join(shlex.quote(f) for f in rule_files())
    r = nested(prologue(group_file) + "%s verify %s" % (udevadm, files))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Fail:    0" in r.stdout
    assert r.stderr == "", r.stderr
    # the search path too, once installed (rules bound over /usr/lib/udev/rules.d)
    r = nested(prologue(group_file) + "mount --bind %s /usr/lib/udev/rules.d\n%s verify"
               % (RULES, udevadm))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "%d udev rules files have been checked" % len(rule_files()) in r.stdout


def test_systemd_parses_them(sd_udevadm, udevadm, group_file):
    """systemd 252's rules parser (through its udevadm test, which reads the
    search path) reports nothing about our files; our loader reports zero
    errors and warnings."""
    script = prologue(group_file) + (
        "mount --bind %s /usr/lib/udev/rules.d\n"
        "SYSTEMD_LOG_LEVEL=debug %s test /devices/virtual/net/lo >/dev/null 2>/run/sd.err || true\n"
        "cat /run/sd.err\n" % (RULES, sd_udevadm))
    r = nested(script)
    assert r.returncode == 0, r.stderr
    log = r.stdout.splitlines()
    read = [line for line in log if line.startswith("Reading rules file: ")]
    assert len(read) == len(rule_files()), log[:40]
    # parser diagnostics are "FILE:LINE message" without a device prefix
    diags = [line for line in log if line.startswith("/usr/lib/udev/rules.d/")]
    assert diags == []
    ours = nested(prologue(group_file) + "%s test --rules-dir=%s /devices/virtual/net/lo"
                  % (udevadm, RULES))
    assert ours.returncode == 0, ours.stderr
    assert "0 errors, 0 warnings" in ours.stderr


# ---------------------------------------------------------------- fake trees

@pytest.fixture(scope="module")
def storage_tree(tmp_path_factory):
    """storage_net_fixtures' machine, plus what the rules read beyond the
    builtins: a WWN on the SATA disk, a serial on virtio-blk, NVMe strings."""
    root = str(tmp_path_factory.mktemp("storage"))
    t, _ = storage_net_fixtures.build(root)
    # device directories by name (no symlinks followed: sysfs links loop)
    where = {}
    for d, subdirs, _files in os.walk(t.sys + "/devices"):
        for s in subdirs:
            where.setdefault(s, []).append(os.path.join(d, s)[len(t.sys):])

    def find(name, parent_dir=None):
        hits = [p for p in where.get(name, [])
                if parent_dir is None or os.path.basename(os.path.dirname(p)) == parent_dir]
        assert len(hits) == 1, (name, hits)
        return hits[0]
    sda = find("sda")
    t.write(os.path.dirname(os.path.dirname(sda)), "wwid", "naa.5002538e40a0e2c6\n")
    t.write(find("vda"), "serial", "VIRT-0042")
    nv = find("nvme0", "nvme")
    t.write(nv, "model", "Samsung SSD 980 1TB                     \n")
    t.write(nv, "firmware_rev", "1B4QFXO7\n")
    devs = {n: find(n) for n in ("sda", "sdb", "vda", "nvme0n1", "sr0")}
    devs.update({n: [p for p in where[n] if p.startswith(devs[d] + "/")][0]
                 for n, d in (("sda1", "sda"), ("sdb1", "sdb"), ("vda1", "vda"),
                              ("nvme0n1p1", "nvme0n1"))})
    devs["ttyUSB0"] = find("ttyUSB0", "tty")
    devs["fuse"] = "/devices/virtual/misc/fuse"
    nets = {n: [p for p in where[n] if p.startswith("/devices/pci0000:00/")][0]
            for n in ("eth0", "eth1", "eth6", "eth12")}
    return t.sys, devs, nets


STORAGE_ORDER = ("sda", "sda1", "sdb", "sdb1", "vda", "vda1", "nvme0n1", "nvme0n1p1", "sr0",
                 "ttyUSB0", "fuse")


def test_storage_and_serial_links(udevadm, group_file, storage_tree):
    sysroot, devs, _ = storage_tree
    paths = [devs[n] for n in STORAGE_ORDER]
    res = run_devices(prologue(group_file, sysroot),
                      "%s test --apply --rules-dir=%s" % (udevadm, RULES), paths,
                      extra="stat -c 'NODE %G %a' /dev/$(sed -n 's/^DEVNAME=//p' "
                            "/sys@DEV@/uevent) 2>/dev/null || true")
    got = dict(zip(STORAGE_ORDER, res))
    for name, (props, err, _) in got.items():
        assert "Rules loaded: 11 files" in err or "Rules loaded:" in err, err[-2000:]

    def node(name):
        return [line for line in got[name][2].splitlines() if line.startswith("NODE ")]

    # SATA disk without ata_id/scsi_id: names from the kernel's wwid (as scsi_id gives them)
    p, _, _ = got["sda"]
    assert p["ID_BUS"] == "scsi" and p["ID_SERIAL"] == "35002538e40a0e2c6"
    assert p["ID_WWN"] == "0x5002538e40a0e2c6" and p["ID_MODEL"] == "Samsung_SSD_860"
    assert links(p) >= {"/dev/disk/by-id/scsi-35002538e40a0e2c6",
                        "/dev/disk/by-id/wwn-0x5002538e40a0e2c6",
                        "/dev/disk/by-path/" + p["ID_PATH"]}
    assert p["ID_PATH"].startswith("pci-0000:00:17.0-ata-1")
    assert node("sda") == ["NODE disk 660"]
    p1, _, _ = got["sda1"]
    assert p1["ID_SERIAL"] == "35002538e40a0e2c6"           # inherited from the disk
    assert links(p1) >= {"/dev/disk/by-id/scsi-35002538e40a0e2c6-part1",
                         "/dev/disk/by-id/wwn-0x5002538e40a0e2c6-part1",
                         "/dev/disk/by-path/%s-part1" % p["ID_PATH"]}
    # USB stick
    p, _, _ = got["sdb"]
    assert p["ID_BUS"] == "usb"
    assert links(p) == {"/dev/disk/by-id/usb-%s" % p["ID_SERIAL"],
                        "/dev/disk/by-path/" + p["ID_PATH"]}
    assert "-usb-0:1:1.0-scsi-0:0:0:0" in p["ID_PATH"]
    assert links(got["sdb1"][0]) == {l + "-part1" for l in links(p)}
    # virtio-blk
    p, _, _ = got["vda"]
    assert links(p) == {"/dev/disk/by-id/virtio-VIRT-0042",
                        "/dev/disk/by-path/pci-0000:00:02.0",
                        "/dev/disk/by-path/virtio-pci-0000:00:02.0"}
    assert links(got["vda1"][0]) == {l + "-part1" for l in links(p)}
    # NVMe
    p, _, _ = got["nvme0n1"]
    assert links(p) == {"/dev/disk/by-id/nvme-eui.0025",
                        "/dev/disk/by-id/nvme-Samsung_SSD_980_1TB_S4EWNX0N123456",
                        "/dev/disk/by-id/nvme-Samsung_SSD_980_1TB_S4EWNX0N123456_1",
                        "/dev/disk/by-path/pci-0000:3c:00.0-nvme-1"}
    assert p["ID_SERIAL"] == "Samsung_SSD_980_1TB_S4EWNX0N123456_1"
    assert links(got["nvme0n1p1"][0]) == {l + "-part1" for l in links(p)}
    # optical drive
    p, _, _ = got["sr0"]
    assert p["ID_CDROM"] == "1" and "/dev/cdrom" in links(p)
    assert node("sr0") == ["NODE cdrom 660"]
    # USB serial adapter
    p, _, _ = got["ttyUSB0"]
    assert links(p) == {"/dev/serial/by-id/usb-FTDI_FT232R_USB_UART_A50285BI-if00",
                        "/dev/serial/by-path/" + p["ID_PATH"]}
    assert node("ttyUSB0") == ["NODE dialout 660"]
    assert node("fuse") == ["NODE root 666"]


@pytest.mark.parametrize("wwid,serial,wwn", [
    ("t10.ATA     Samsung SSD 860 EVO 500GB               S3Z2NB0K123456X",
     "1ATA_Samsung_SSD_860_EVO_500GB_S3Z2NB0K123456X", None),
    ("eui.0025388b91b2c3d4", "20025388b91b2c3d4", None),
    ("naa.600508b1001c3a9f0b1a2c3d4e5f6a7b", "3600508b1001c3a9f0b1a2c3d4e5f6a7b",
     "0x600508b1001c3a9f0b1a2c3d4e5f6a7b"),
])
def test_scsi_names_from_wwid(udevadm, group_file, storage_tree, wwid, serial, wwn):
    """Without scsi_id: the names scsi_id gives, from the kernel's wwid."""
    sysroot, devs, _ = storage_tree
    f = os.path.join(sysroot, os.path.dirname(os.path.dirname(devs["sda"])).lstrip("/"), "wwid")
    with open(f) as fh:
        saved = fh.read()
    try:
        with open(f, "w") as fh:
            fh.write(wwid + "\n")
        ((p, err, _),) = run_devices(prologue(group_file, sysroot),
                                     "%s test --rules-dir=%s" % (udevadm, RULES), [devs["sda"]])
    finally:
        with open(f, "w") as fh:
            fh.write(saved)
    assert p["ID_SERIAL"] == serial, err[-2000:]
    want = {"/dev/disk/by-id/scsi-" + serial}
    if wwn:
        assert p["ID_WWN_WITH_EXTENSION"] == wwn and p["ID_WWN"] == wwn[:18]
        want.add("/dev/disk/by-id/wwn-" + wwn)
    assert {l for l in links(p) if "/by-id/" in l} == want


def test_storage_links_like_debian(sd_udevadm, udevadm, group_file, storage_tree):
    """Debian's rules under systemd 252 make the same links on the same tree
    (without ata_id/scsi_id on this machine, Debian names SATA disks by path
    only: our wwid-based names are the only addition)."""
    sysroot, devs, _ = storage_tree
    paths = [devs[n] for n in STORAGE_ORDER]
    ours = run_devices(prologue(group_file, sysroot),
                       "%s test --apply --rules-dir=%s" % (udevadm, RULES), paths)
    theirs = run_devices(prologue(group_file, sysroot) +
                         "mount --bind %s /usr/lib/udev/rules.d\n" % DEBIAN_RULES,
                         "%s test" % sd_udevadm, paths)
    for name, o, t in zip(STORAGE_ORDER, ours, theirs):
        ol, tl = links(o[0]), links(t[0])
        if name in ("sda", "sda1"):
            ol = {l for l in ol if "scsi-3" not in l and "wwn-" not in l}
        assert ol == tl, name
        for k in ("ID_PATH", "ID_PATH_TAG", "ID_SERIAL", "ID_BUS", "ID_CDROM", "ID_USB_SERIAL"):
            if name not in ("sda", "sda1") or k not in ("ID_SERIAL", "ID_BUS"):
                assert o[0].get(k) == t[0].get(k), (name, k)


@pytest.fixture(scope="module")
def input_tree(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("input"))
    devs = fakesys.build(root)
    return os.path.join(root, "sys"), devs


INPUT_DEVICES = ("usb_keyboard", "usb_mouse", "touchpad", "atkbd", "joystick")


def test_input_like_debian(sd_udevadm, udevadm, group_file, input_tree):
    sysroot, devs = input_tree
    names = [n for n in INPUT_DEVICES if n in devs]
    assert len(names) >= 3
    paths = [devs[n] for n in names]
    ours = run_devices(prologue(group_file, sysroot),
                       "%s test --apply --rules-dir=%s" % (udevadm, RULES), paths,
                       extra="stat -c 'NODE %G %a' /dev/$(sed -n 's/^DEVNAME=//p' "
                             "/sys@DEV@/uevent) 2>/dev/null || true")
    theirs = run_devices(prologue(group_file, sysroot) +
                         "mount --bind %s /usr/lib/udev/rules.d\n" % DEBIAN_RULES,
                         "%s test" % sd_udevadm, paths)
    for name, o, t in zip(names, ours, theirs):
        op = {k: v for k, v in o[0].items() if k.startswith(("ID_INPUT", "ID_BUS", "ID_SERIAL",
                                                              "ID_PATH"))}
        tp = {k: v for k, v in t[0].items() if k.startswith(("ID_INPUT", "ID_BUS", "ID_SERIAL",
                                                              "ID_PATH"))}
        assert op == tp, name
        assert links(o[0]) == links(t[0]), name
        assert [line for line in o[2].splitlines() if line.startswith("NODE")] == \
            ["NODE input 660"], name
    kbd = dict(zip(names, ours))["usb_keyboard"][0]
    assert kbd["ID_INPUT_KEYBOARD"] == "1"
    assert any(l.startswith("/dev/input/by-id/usb-") and l.endswith("-event-kbd")
               for l in links(kbd)), links(kbd)
    assert any(l.startswith("/dev/input/by-path/") and l.endswith("-event-kbd")
               for l in links(kbd)), links(kbd)
    assert ":power-switch:" in kbd.get("TAGS", "")


@pytest.mark.parametrize("cmdline", ["quiet", "net.ifnames=0", "quiet net.ifnames=0 x=1"])
def test_net_names(udevadm, group_file, storage_tree, tmp_path, cmdline):
    """ID_NET_NAME_* always; a NAME from our policy (no .link file applies:
    these interfaces exist only in the fake tree) unless net.ifnames=0."""
    sysroot, _, nets = storage_tree
    obs = tmp_path / "observe"
    obs.mkdir()
    (obs / "99-zz-observe.rules").write_text(OBSERVE)
    names = ("eth0", "eth1", "eth12")
    res = run_devices(prologue(group_file, sysroot, cmdline=cmdline),
                      "%s test --rules-dir=%s --rules-dir=%s" % (udevadm, RULES, obs),
                      [nets[n] for n in names])
    got = {n: r[0] for n, r in zip(names, res)}
    # virtio (PCI 00:03.0), onboard e1000e with a firmware index, USB r8152
    assert got["eth0"]["ID_NET_NAME_PATH"] == "enp0s3"
    assert got["eth0"]["ID_NET_NAME_MAC"] == "enx525400123456"
    assert got["eth1"]["ID_NET_NAME_ONBOARD"] == "eno1"
    assert got["eth12"]["ID_NET_NAME_MAC"] == "enx00e04c681234"
    for n in names:
        assert "net.ifnames" not in got[n]
    if "net.ifnames=0" in cmdline:
        assert [got[n]["TEST_NAME"] for n in names] == list(names)
    else:
        assert [got[n]["TEST_NAME"] for n in names] == ["enp0s3", "eno1", "enx00e04c681234"]


@pytest.mark.parametrize("cmdline", ["quiet", "net.ifnames=0"])
def test_net_setup_link_real(udevadm, group_file, net, tmp_path, cmdline):
    """With Debian's .link files, net_setup_link decides (on a real veth: a
    name given by user space is kept)."""
    if not os.path.isdir(DEBIAN_LINKS):
        pytest.skip("no Debian .link files at %s" % DEBIAN_LINKS)
    net.add_veth("tdr0", "tdr1")
    obs = tmp_path / "observe"
    obs.mkdir()
    (obs / "99-zz-observe.rules").write_text(OBSERVE)
    (res,) = run_devices(prologue(group_file, cmdline=cmdline, link_dir=DEBIAN_LINKS),
                         "%s test --rules-dir=%s --rules-dir=%s" % (udevadm, RULES, obs),
                         ["/devices/virtual/net/tdr0"])
    p = res[0]
    assert p.get("ID_NET_LINK_FILE") == "/usr/lib/systemd/network/99-default.link", res[1][-3000:]
    assert p.get("ID_NET_NAME") == "tdr0" and p["TEST_NAME"] == "tdr0"


# ---------------------------------------------------------------- a real disk



def part_uuid(img, n):
    r = subprocess.run(["sfdisk", "--part-uuid", img, str(n)], capture_output=True, text=True,
                       check=True)
    return r.stdout.strip().lower()

def test_loop_disk_contents(udevadm, sd_udevadm, group_file, tmp_path):
    """GPT with two named partitions, ext4 on the first: the blkid links."""
    for tool in ("mkfs.ext4", "sfdisk", "losetup", "partx"):
        if not shutil.which(tool):
            pytest.skip("%s missing (tools/install-deps)" % tool)
    img = str(tmp_path / "disk.img")
    with open(img, "wb") as f:
        f.truncate(24 * 1024 * 1024)
    subprocess.run(["sfdisk", "-q", img], input="label: gpt\n"
                   "size=8MiB, name=tudevboot\nname=tudevdata\n", text=True, check=True,
                   capture_output=True)
    loops = LoopDevices()
    dt = str(tmp_path / "devtmpfs")
    os.makedirs(dt)
    subprocess.run(["mount", "-t", "devtmpfs", "devtmpfs", dt], check=True)
    try:
        idx = loops.add()
        name = "loop%d" % idx
        node = os.path.join(dt, name)
        subprocess.run(["losetup", "-P", node, img], check=True)
        try:
            subprocess.run(["partx", "-a", node], capture_output=True)
            p1 = os.path.join(dt, name + "p1")
            subprocess.run(["mkfs.ext4", "-q", "-F", "-L", "TUDEVROOT", p1], check=True,
                           capture_output=True)
            uuid = subprocess.run(["blkid", "-o", "value", "-s", "UUID", p1],
                                  capture_output=True, text=True).stdout.strip()
            sysdir = "/sys/devices/virtual/block/" + name
            parts = sorted(p for p in os.listdir(sysdir) if p.startswith(name + "p"))
            assert parts == [name + "p1", name + "p2"]
            devpaths = ["/devices/virtual/block/" + name] + \
                ["/devices/virtual/block/%s/%s" % (name, p) for p in parts]
            bind = "".join(": > /dev/%s; mount --bind %s/%s /dev/%s\n" % (n, dt, n, n)
                           for n in [name] + parts)
            head = prologue(group_file) + bind
            ours = run_devices(head, "%s test --apply --rules-dir=%s" % (udevadm, RULES),
                               devpaths, extra="stat -c 'NODE %G %a' /dev/$(sed -n "
                               "'s/^DEVNAME=//p' /sys@DEV@/uevent)")
            theirs = run_devices(head + "mount --bind %s /usr/lib/udev/rules.d\n"
                                 % DEBIAN_RULES, "%s test" % sd_udevadm, devpaths)
        finally:
            subprocess.run(["losetup", "-d", node], capture_output=True)
    finally:
        subprocess.run(["umount", dt], capture_output=True)
        loops.remove_all()
    disk, part1, part2 = (r[0] for r in ours)
    assert disk["ID_PART_TABLE_TYPE"] == "gpt"
    assert links(disk) == {"/dev/disk/by-diskseq/%s" % disk["DISKSEQ"]}
    assert uuid
    PARTUUID1, PARTUUID2 = part_uuid(img, 1), part_uuid(img, 2)
    assert links(part1) == {"/dev/disk/by-uuid/" + uuid, "/dev/disk/by-label/TUDEVROOT",
                            "/dev/disk/by-partuuid/" + PARTUUID1,
                            "/dev/disk/by-partlabel/tudevboot"}
    assert links(part2) == {"/dev/disk/by-partuuid/" + PARTUUID2,
                            "/dev/disk/by-partlabel/tudevdata"}
    assert part1["ID_PART_TABLE_TYPE"] == "gpt"        # from the disk
    for r in ours:
        assert [line for line in r[2].splitlines() if line.startswith("NODE")] == \
            ["NODE disk 660"]
    # the same as Debian's rules
    for o, t in zip(ours, theirs):
        assert links(o[0]) == links(t[0])


# ---------------------------------------------------------------- documentation

def man_text(name):
    with open(os.path.join(REPO, "man", name)) as f:
        return f.read().replace("\\-", "-")


@pytest.mark.parametrize("page", ["tudev-rules.7", "tudev-boot.7"])
def test_man_page_lint(page):
    if not shutil.which("groff"):
        pytest.skip("groff missing")
    r = subprocess.run(["groff", "-man", "-ww", "-z", os.path.join(REPO, "man", page)],
                       capture_output=True, text=True)
    assert r.returncode == 0 and r.stderr == "", r.stderr


def test_man_pages_list_the_files():
    """tudev-rules(7) names every rules file; tudev-boot(7) every init file."""
    text = man_text("tudev-rules.7")
    for f in rule_files():
        assert os.path.basename(f) in text, f
    text = man_text("tudev-boot.7")
    init = os.path.join(REPO, "init")
    for d, _, files in os.walk(init):
        for f in files:
            rel = os.path.relpath(os.path.join(d, f), init)
            flavour, rest = rel.split(os.sep, 1)
            assert flavour in text.lower()
            if flavour in ("systemd", "openrc"):
                assert rest in text, rel
            elif flavour == "runit":
                assert rest.split(os.sep)[-1] in text, rel
            elif flavour == "s6":
                assert rest.split(os.sep)[0] in text, rel
