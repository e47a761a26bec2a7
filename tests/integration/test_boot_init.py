# SPDX-License-Identifier: GPL-2.0-or-later
"""Booting with tudev's init files (init/) over this machine's real devices.

Each test runs in a nested private mount namespace laid out like a system
that has tudev installed: our rules.d on /usr/lib/udev/rules.d (nothing in
/etc/udev/rules.d), Debian's groups, a fresh /run, and a /dev holding a node
for every device the kernel lists in /sys/dev (made with mknod on tmpfs, as
devtmpfs would: udevd may change their owner and mode without touching the
host's real nodes; /dev/null stays bound to the real one). A loop device with
an ext4 filesystem -- ours, with its real node -- gives blkid something to
read.

  * sysvinit: `init.d/udev start` (udevd --daemon, trigger subsystems,
    trigger devices, settle), then every device with a device number or an
    interface is initialized in the database (our udevadm info --export-db
    and systemd 252's read the same), our links exist where the devices call
    for them (virtio disk by-path/by-id/by-diskseq, the loop disk's by-uuid
    and by-label), nodes have their groups; `status`, `stop` (the control
    socket is gone afterwards).
  * OpenRC (its functions run under a stand-in for openrc-run), runit
    (the run script with its readiness fifo and coldplug, and the hand-over
    from a daemon started in stage 1), s6 (readiness on the notification fd,
    then the coldplug oneshot's commands).
  * systemd: the installed units pass systemd-analyze verify.
  * make install / uninstall with INIT=... put every file in place and take
    all of them away again.
"""

import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
RULES = os.path.join(REPO, "rules.d")
INIT = os.path.join(REPO, "init")
sys.path.insert(0, HERE)

from tudevlib import LoopDevices, run  # noqa: E402

DEBIAN_GROUPS = ("tty", "disk", "kmem", "dialout", "cdrom", "tape", "audio", "video", "lp",
                 "input", "kvm", "render", "sgx")
# devices of concurrent activity (other tests' loop devices) may come and go
TRANSIENT = re.compile(r"^/devices/virtual/(block/loop\d+(/loop\d+p\d+)?|bdi/7:\d+)$")


@pytest.fixture(scope="module")
def group_file(tmp_path_factory):
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


def substituted(src, dst, build):
    """An init file with @sbindir@/@bindir@ pointing at the build."""
    with open(src) as f:
        text = f.read().replace("@sbindir@", build).replace("@bindir@", build)
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    with open(dst, "w") as f:
        f.write(text)
    os.chmod(dst, 0o755 if os.access(src, os.X_OK) else 0o644)
    return dst


@pytest.fixture
def ext4_loop(tmp_path):
    """(name, devtmpfs dir, uuid): a loop device with a labelled ext4."""
    for tool in ("mkfs.ext4", "losetup"):
        if not shutil.which(tool):
            pytest.skip("%s missing (tools/install-deps)" % tool)
    img = str(tmp_path / "fs.img")
    with open(img, "wb") as f:
        f.truncate(8 * 1024 * 1024)
    subprocess.run(["mkfs.ext4", "-q", "-F", "-L", "TUDEVBOOT", img], check=True,
                   capture_output=True)
    uuid = subprocess.run(["blkid", "-o", "value", "-s", "UUID", img], capture_output=True,
                          text=True).stdout.strip()
    loops = LoopDevices()
    dt = str(tmp_path / "devtmpfs")
    os.makedirs(dt)
    subprocess.run(["mount", "-t", "devtmpfs", "devtmpfs", dt], check=True)
    idx = loops.add()
    name = "loop%d" % idx
    subprocess.run(["losetup", os.path.join(dt, name), img], check=True)
    try:
        yield name, dt, uuid
    finally:
        subprocess.run(["losetup", "-d", os.path.join(dt, name)], capture_output=True)
        subprocess.run(["umount", dt], capture_output=True)
        loops.remove_all()


def boot_prologue(group_file, loop=None):
    """The installed-system layout described in the module docstring."""
    s = ["mount -t tmpfs tmpfs /run", "mkdir -p /run/udev",
         ": > /run/null", "mount --bind /dev/null /run/null",
         "mount -t tmpfs -o mode=0755 tmpfs /dev",
         ": > /dev/null", "mount --bind /run/null /dev/null",
         "mount --bind %s /etc/group" % shlex.quote(group_file)]
    for d in ("/etc/udev/rules.d", "/usr/local/lib/udev/rules.d"):
        s.append("[ ! -d %s ] || mount -t tmpfs tmpfs %s" % (d, d))
    s.append("mount --bind %s /usr/lib/udev/rules.d" % RULES)
    # a node for every device number the kernel knows, named as devtmpfs would
    s.append(r'''for l in /sys/dev/char/* /sys/dev/block/*; do
  n=$(sed -n 's/^DEVNAME=//p' "$l/uevent" 2>/dev/null) || continue
  [ -n "$n" ] && [ ! -e "/dev/$n" ] || continue
  t=c; case $l in /sys/dev/block/*) t=b;; esac
  mm=${l##*/}
  case $n in */*) mkdir -p "/dev/${n%/*}";; esac
  mknod -m 0600 "/dev/$n" $t ${mm%:*} ${mm#*:} 2>/dev/null || true
done''')
    if loop:
        name, dt, _ = loop
        s.append("rm -f /dev/%s; : > /dev/%s; mount --bind %s/%s /dev/%s"
                 % (name, name, dt, name, name))
    return "\n".join(s) + "\n"


def nested(script, timeout=240):
    return subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-ec", script],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=timeout)


def records(text):
    out = {}
    for rec in text.split("\n\n"):
        if rec.startswith("P: "):
            out[rec.split("\n", 1)[0][3:]] = rec
    return out


def normalized(rec):
    """A record with the orders that are hash orders in systemd (links, tags)
    made canonical."""
    out = []
    for line in rec.split("\n"):
        for key in ("E: DEVLINKS=", "E: TAGS=", "E: CURRENT_TAGS="):
            if line.startswith(key):
                sep = " " if key == "E: DEVLINKS=" else ":"
                line = key + " ".join(sorted(w for w in line[len(key):].split(sep) if w))
        out.append(line)
    return sorted(out)


def db_id(rec):
    fields = dict((line[:1], line[3:]) for line in rec.split("\n") if line[1:3] == ": ")
    if "D" in fields:
        kind, num = fields["D"].split(" ")
        return kind + num
    if "I" in fields:
        return "n" + fields["I"]
    return None


# Run after a coldplug, inside the namespace: what the Python side checks.
REPORT = r'''
out=%(out)s
[ ! -e /run/udev/queue ] && echo empty > $out/queue || echo busy > $out/queue
%(udevadm)s info --export-db > $out/ours.db
%(sd)s info --export-db > $out/sd.db 2>/dev/null || true
ls /run/udev/data > $out/data
find /dev -type l -printf '%%p %%l\n' > $out/links
for n in tty0 tty ttyS0 fuse kmsg loop-control vda %(loop)s; do
  [ -e /dev/$n ] && stat -c '%%n %%G %%a' /dev/$n
done > $out/nodes
'''


def report(tmp_path, udevadm, sd_udevadm, loop=""):
    out = tmp_path / "report"
    out.mkdir(exist_ok=True)
    return out, REPORT % {"out": out, "udevadm": udevadm, "sd": sd_udevadm or "false",
                          "loop": loop}


def read(out, name):
    with open(os.path.join(out, name)) as f:
        return f.read()


def check_initialized(out):
    """Every device with a node or an interface is in the database, and
    systemd's udevadm reads the database as ours does."""
    assert read(out, "queue").strip() == "empty"
    recs = records(read(out, "ours.db"))
    data = set(read(out, "data").split())
    want = {p: db_id(r) for p, r in recs.items() if db_id(r) and not TRANSIENT.match(p)}
    assert len(want) > 10
    missing = sorted(p for p, i in want.items() if i not in data)
    assert missing == [], missing[:10]
    sd = read(out, "sd.db")
    if sd:
        ref = records(sd)
        differ = [p for p in set(ref) | set(recs)
                  if not TRANSIENT.match(p) and
                  normalized(ref.get(p, "")) != normalized(recs.get(p, ""))]
        assert differ == [], ["%s:\n%s\n---\n%s" % (p, ref.get(p), recs.get(p))
                              for p in differ[:3]]
    return recs


def check_rules_applied(out, loop=None):
    links = dict(line.split(" ", 1) for line in read(out, "links").splitlines())
    nodes = {line.split()[0]: line.split()[1:] for line in read(out, "nodes").splitlines()}
    if os.path.exists("/sys/class/block/vda"):
        vda = os.path.realpath("/sys/class/block/vda")
        m = re.search(r"/(\d{4}:\d\d:\d\d\.\d)/virtio\d+/block/vda$", vda)
        if m:
            assert links.get("/dev/disk/by-path/pci-" + m.group(1)) == "../../vda", links
        serial = open("/sys/class/block/vda/serial").read().strip() \
            if os.path.exists("/sys/class/block/vda/serial") else ""
        if serial:
            assert links.get("/dev/disk/by-id/virtio-" + serial) == "../../vda"
        seq = open("/sys/class/block/vda/diskseq").read().strip() \
            if os.path.exists("/sys/class/block/vda/diskseq") else ""
        if seq:
            assert links.get("/dev/disk/by-diskseq/" + seq) == "../../vda"
        assert nodes["/dev/vda"] == ["disk", "660"]
    if loop:
        name, _, uuid = loop
        assert links.get("/dev/disk/by-uuid/" + uuid) == "../../" + name, links
        assert links.get("/dev/disk/by-label/TUDEVBOOT") == "../../" + name
        assert nodes["/dev/" + name] == ["disk", "660"]
    if "/dev/tty0" in nodes:
        assert nodes["/dev/tty0"] == ["tty", "620"]
    if "/dev/tty" in nodes:
        assert nodes["/dev/tty"] == ["tty", "666"]
    if "/dev/ttyS0" in nodes:
        assert nodes["/dev/ttyS0"][0] == "dialout"
    if "/dev/fuse" in nodes:
        assert nodes["/dev/fuse"][1] == "666"
    if "/dev/loop-control" in nodes:
        assert nodes["/dev/loop-control"][0] == "disk"


# ---------------------------------------------------------------- sysvinit

def test_sysvinit_boot(build, udevadm, sd_udevadm, group_file, tmp_path, ext4_loop):
    script = substituted(os.path.join(INIT, "sysvinit", "udev"), str(tmp_path / "init.d-udev"),
                         build)
    defaults = tmp_path / "default-tudev"
    defaults.write_text('UDEVD_ARGS="--children-max=8"\n')
    out, rep = report(tmp_path, udevadm, sd_udevadm, ext4_loop[0])
    body = boot_prologue(group_file, ext4_loop) + (
        "[ -d /etc/default ] && mount --bind %(defaults)s /etc/default/tudev || true\n"
        "trap '%(udevadm)s control --exit >/dev/null 2>&1 || true' EXIT\n"
        "%(script)s start > %(out)s/start.log 2>&1\n"
        "%(script)s status > %(out)s/status\n"
        "readlink /dev/MAKEDEV > %(out)s/makedev || true\n"
        "{ [ ! -s /run/udev.pid ] || readlink /proc/$(cat /run/udev.pid)/exe; } > %(out)s/pid-exe\n"
        "readlink /run/sendsigs.omit.d/udevd > %(out)s/omit || true\n"
        "%(report)s\n"
        "%(script)s stop > %(out)s/stop.log 2>&1\n"
        "%(script)s status > %(out)s/status-after || echo rc=$? >> %(out)s/status-after\n"
        "[ -e /run/udev/control ] && echo control-left > %(out)s/control || "
        "echo gone > %(out)s/control\n"
        % {"defaults": defaults, "udevadm": udevadm, "script": script, "out": out,
           "report": rep})
    t0 = time.monotonic()
    r = nested(body)
    assert r.returncode == 0, r.stdout + r.stderr
    took = time.monotonic() - t0
    log = read(out, "start.log")
    assert "starting udevd" in log and "coldplug" in log, log
    assert read(out, "status").strip() == "udevd is running"
    # Debian's duties: /dev/MAKEDEV; under dpkg's start-stop-daemon
    # (--notify-await, our READY=1) a pid file that sendsigs spares
    assert read(out, "makedev").strip() in ("/bin/true", "/sbin/MAKEDEV")
    ssd = subprocess.run(["start-stop-daemon", "--help"], capture_output=True, text=True) \
        if shutil.which("start-stop-daemon") else None
    if ssd and "--notify-await" in ssd.stdout + ssd.stderr:
        assert read(out, "pid-exe").strip() == os.path.join(build, "udevd")
        assert read(out, "omit").strip() == "/run/udev.pid"
    check_initialized(out)
    check_rules_applied(out, ext4_loop)
    assert read(out, "status-after").split() == ["udevd", "is", "not", "running", "rc=3"]
    assert read(out, "control").strip() == "gone"
    assert took < 120


# ---------------------------------------------------------------- OpenRC

OPENRC_SHIM = r'''
ebegin() { echo "* $*"; }
eend() { r=${1:-0}; [ "$r" -eq 0 ] || echo "* failed: $2"; return $r; }
einfo() { echo "* $*"; }
eerror() { echo "! $*"; }
ewarn() { echo "* $*"; }
yesno() { case $1 in [Yy][Ee][Ss]|[Tt][Rr][Uu][Ee]|[Oo][Nn]|1) return 0;; *) return 1;; esac; }
'''


def test_openrc_services(build, udevadm, sd_udevadm, group_file, tmp_path):
    """The OpenRC functions, run in order as openrc-run would for the sysinit
    runlevel (udev, then udev-trigger, then udev-settle), then stop."""
    d = tmp_path / "openrc"
    for n in ("udev", "udev-trigger", "udev-settle"):
        substituted(os.path.join(INIT, "openrc", n), str(d / n), build)
        with open(d / n) as f:
            assert f.readline() == "#!/sbin/openrc-run\n"
    out, rep = report(tmp_path, udevadm, sd_udevadm)
    body = boot_prologue(group_file) + OPENRC_SHIM + (
        "trap '%(udevadm)s control --exit >/dev/null 2>&1 || true' EXIT\n"
        "udev_opts=--children-max=8 udev_settle_timeout=120\n"
        ". %(d)s/udev; depend() { :; }; start_pre; start\n"
        ". %(d)s/udev-trigger; start\n"
        ". %(d)s/udev-settle; start\n"
        "%(report)s\n"
        ". %(d)s/udev; stop\n"
        "[ -e /run/udev/control ] && echo left > %(out)s/control || echo gone > %(out)s/control\n"
        % {"d": d, "udevadm": udevadm, "out": out, "report": rep})
    r = nested(body)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "failed" not in r.stdout, r.stdout
    check_initialized(out)
    check_rules_applied(out)
    assert read(out, "control").strip() == "gone"


# ---------------------------------------------------------------- runit

def test_runit_service(build, udevadm, sd_udevadm, group_file, tmp_path):
    """First start: readiness through the fifo, coldplug in the background,
    marker written; then a second start hands over from a running daemon
    without a second coldplug; check; finish."""
    sv = tmp_path / "sv" / "udevd"
    for n in ("run", "check", "finish"):
        substituted(os.path.join(INIT, "runit", "udevd", n), str(sv / n), build)
    (sv / "conf").write_text('UDEVD_ARGS="--children-max=8"\n')
    out, rep = report(tmp_path, udevadm, sd_udevadm)
    body = boot_prologue(group_file) + (
        "trap '%(udevadm)s control --exit >/dev/null 2>&1 || true' EXIT\n"
        "cd %(sv)s\n"
        "./run > %(out)s/run1.log 2>&1 &\n"
        "pid1=$!\n"
        "i=0; while [ ! -e /run/udev/.tudev-coldplug ]; do\n"
        "  i=$((i+1)); [ $i -lt 1200 ] || { echo no-coldplug; exit 1; }; sleep 0.1; done\n"
        "./check && echo up > %(out)s/check\n"
        "%(report)s\n"
        "cp %(out)s/data %(out)s/data1\n"
        # hand-over: a new run while the first daemon runs
        "./run > %(out)s/run2.log 2>&1 &\n"
        "pid2=$!\n"
        "i=0; while kill -0 $pid1 2>/dev/null; do i=$((i+1)); [ $i -lt 300 ] || exit 1; "
        "sleep 0.1; done\n"
        "i=0; while ! ./check; do i=$((i+1)); [ $i -lt 300 ] || exit 1; sleep 0.1; done\n"
        "ls /run/udev/data > %(out)s/data2\n"
        "[ -e /run/udev/.tudev-ready ] && echo fifo-left > %(out)s/fifo || echo ok > %(out)s/fifo\n"
        "%(udevadm)s control --exit\n"
        "wait $pid2 || true\n"
        "./finish\n"
        "[ -e /run/udev/control ] && echo left > %(out)s/control || echo gone > %(out)s/control\n"
        % {"sv": sv, "udevadm": udevadm, "out": out, "report": rep})
    r = nested(body)
    assert r.returncode == 0, r.stdout + r.stderr + read(out, "run1.log") + \
        (read(out, "run2.log") if os.path.exists(out / "run2.log") else "")
    assert read(out, "check").strip() == "up"
    check_initialized(out)
    check_rules_applied(out)
    # the second daemon took over the database; no coldplug wiped or redid it
    assert set(read(out, "data2").split()) >= set(read(out, "data1").split()) - \
        {x for x in read(out, "data1").split() if x.startswith("b7:")}
    assert read(out, "fifo").strip() == "ok"
    assert read(out, "control").strip() == "gone"


# ---------------------------------------------------------------- s6

def up_commands(path):
    """The commands of the execline 'up' script (foreground blocks, last line)."""
    cmds = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            m = re.match(r"^foreground \{ (.*) \}$", line)
            cmds.append(shlex.split(m.group(1) if m else line))
    return cmds


def test_s6_service(build, udevadm, sd_udevadm, group_file, tmp_path):
    """udevd/run signals readiness on fd 3 (notification-fd says 3); the
    oneshot's commands are the coldplug."""
    base = tmp_path / "s6"
    for rel in ("udevd/run", "udevd/finish", "udevd-coldplug/up"):
        substituted(os.path.join(INIT, "s6", rel), str(base / rel), build)
    for rel, want in (("udevd/type", "longrun"), ("udevd/notification-fd", "3"),
                      ("udevd-coldplug/type", "oneshot"), ("tudev/type", "bundle")):
        with open(os.path.join(INIT, "s6", rel)) as f:
            assert f.read().strip() == want
    assert os.path.exists(os.path.join(INIT, "s6", "udevd-coldplug", "dependencies.d", "udevd"))
    cmds = up_commands(str(base / "udevd-coldplug" / "up"))
    assert [c[1:] for c in cmds] == [["trigger", "--type=subsystems", "--action=add"],
                                     ["trigger", "--type=devices", "--action=add"],
                                     ["settle"]]
    assert all(c[0] == os.path.join(build, "udevadm") for c in cmds)
    out, rep = report(tmp_path, udevadm, sd_udevadm)
    coldplug = "\n".join(" ".join(shlex.quote(a) for a in c) for c in cmds)
    body = boot_prologue(group_file) + (
        "trap '%(udevadm)s control --exit >/dev/null 2>&1 || true' EXIT\n"
        "cd %(base)s/udevd\n"
        "mkfifo /run/notify\n"
        "./run 3>/run/notify > %(out)s/run.log 2>&1 &\n"
        "pid=$!\n"
        "read -r line < /run/notify\n"
        "%(udevadm)s control --ping && echo ready > %(out)s/ready\n"
        "%(coldplug)s\n"
        "%(report)s\n"
        "%(udevadm)s control --exit\n"
        "wait $pid || true\n"
        "./finish\n"
        % {"base": base, "udevadm": udevadm, "out": out, "report": rep,
           "coldplug": coldplug})
    r = nested(body)
    assert r.returncode == 0, r.stdout + r.stderr + read(out, "run.log")
    assert read(out, "ready").strip() == "ready"
    check_initialized(out)
    check_rules_applied(out)


# ---------------------------------------------------------------- systemd, install

def test_systemd_units_verify(build, tmp_path):
    if not shutil.which("systemd-analyze"):
        pytest.skip("systemd-analyze missing")
    units = []
    for n in ("tudev-udevd.service", "tudev-trigger.service", "tudev-settle.service",
              "tudev-udevd-control.socket", "tudev-udevd-kernel.socket"):
        units.append(substituted(os.path.join(INIT, "systemd", n), str(tmp_path / n), build))
    r = subprocess.run(["systemd-analyze", "verify", "--man=no"] + units, capture_output=True,
                       text=True, timeout=60)
    # only complaints about our units count (the host's own units may be odd)
    ours = [line for line in (r.stdout + r.stderr).splitlines() if "tudev-" in line]
    assert ours == [], ours
    with open(units[0]) as f:
        text = f.read()
    assert "Type=notify" in text and "ExecStart=%s/udevd\n" % build in text
    # socket activation: both sockets passed to the daemon, as systemd's are
    assert "Sockets=tudev-udevd-control.socket tudev-udevd-kernel.socket\n" in text
    with open(units[3]) as f:
        text = f.read()
    assert "ListenSequentialPacket=/run/udev/control\n" in text
    assert "Service=tudev-udevd.service\n" in text and "SocketMode=0600\n" in text
    with open(units[4]) as f:
        text = f.read()
    assert "ListenNetlink=kobject-uevent 1\n" in text and "ReceiveBuffer=128M\n" in text
    assert "PassCredentials=yes\n" in text and "Service=tudev-udevd.service\n" in text


def test_systemd_unit_after_static_nodes():
    """udevd gives static nodes their static_node= permissions when it
    starts, so it must start after the units that make them: systemd orders
    those before systemd-udevd.service only (the boot test saw /dev/snd/seq
    left 0600 root:root when tudev won that race)."""
    after = []
    with open(os.path.join(INIT, "systemd", "tudev-udevd.service")) as f:
        for line in f:
            if line.startswith("After="):
                after += line[len("After="):].split()
    for unit in ("kmod-static-nodes.service", "systemd-tmpfiles-setup-dev.service",
                 "systemd-tmpfiles-setup-dev-early.service"):
        assert unit in after, unit


def test_install_uninstall(build, tmp_path):
    """make install INIT=all-five puts the substituted files in place;
    uninstall removes every file again."""
    dest = str(tmp_path / "dest")
    inits = "systemd sysvinit runit s6"
    common = ["make", "-s", "-C", REPO, "O=" + build, "-o", os.path.join(build, "udevd"),
              "-o", os.path.join(build, "udevadm"), "DESTDIR=" + dest, "prefix=/usr",
              "sysconfdir=/etc", "INIT=" + inits]
    r = subprocess.run(common + ["install"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    for rel in ("usr/lib/systemd/system/tudev-udevd.service", "etc/init.d/udev",
                "etc/sv/udevd/run", "etc/s6/sv/udevd/run", "etc/s6/sv/udevd-coldplug/up",
                "usr/share/tudev/init/openrc/udev-trigger",
                "usr/lib/udev/rules.d/60-tudev-storage.rules"):
        assert os.path.exists(os.path.join(dest, rel)), rel
    for rel in ("etc/init.d/udev", "etc/sv/udevd/run", "etc/s6/sv/udevd/run"):
        p = os.path.join(dest, rel)
        assert os.access(p, os.X_OK), rel
        with open(p) as f:
            text = f.read()
        assert "@sbindir@" not in text and "@bindir@" not in text
        assert "/usr/sbin/udevd" in text
    assert not os.access(os.path.join(dest, "etc/s6/sv/udevd/type"), os.X_OK)
    r = subprocess.run(common + ["uninstall"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    left = [os.path.join(d, f) for d, _, fs in os.walk(dest) for f in fs]
    assert left == []
    r = subprocess.run(common[:-1] + ["INIT=upstart", "install"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode != 0 and "unknown init system" in r.stderr


def compat_lines(rules_text, compat):
    """The rule lines of one rules file's text as built for `compat`: the
    "#@257 " prefix removed for 257, the line a comment otherwise."""
    out = []
    for ln in rules_text.splitlines():
        if ln.startswith("#@257 ") and compat == "257":
            ln = ln[len("#@257 "):]
        if ln and not ln.startswith("#"):
            out.append(ln)
    return out


@pytest.mark.parametrize("compat", ["252", "257"])
def test_install_rules_for_systemd_compat(build, tmp_path, compat):
    """make install keeps "#@257 " lines of rules.d as comments for systemd
    252 compatibility and makes them rules, in place, for 257."""
    dest = str(tmp_path / "dest")
    r = subprocess.run(["make", "-s", "-C", REPO, "O=" + build, "-o", os.path.join(build, "udevd"),
                        "-o", os.path.join(build, "udevadm"), "DESTDIR=" + dest,
                        "prefix=/usr", "SYSTEMD_COMPAT=" + compat, "install"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    tagged = 0
    for src in sorted(glob.glob(os.path.join(REPO, "rules.d", "*.rules"))):
        with open(src) as f:
            text = f.read()
        tagged += text.count("\n#@257 ")
        with open(os.path.join(dest, "usr/lib/udev/rules.d", os.path.basename(src))) as f:
            assert compat_lines(f.read(), "252") == compat_lines(text, compat), src
    assert tagged > 0, "rules.d has no systemd 257 lines"


def test_install_udev_pc(build, tmp_path):
    """make install puts udev.pc where pkg-config finds it: udevdir is the
    rules directory's parent, the version the systemd release followed."""
    dest = str(tmp_path / "dest")
    r = subprocess.run(["make", "-s", "-C", REPO, "O=" + build, "-o", os.path.join(build, "udevd"),
                        "-o", os.path.join(build, "udevadm"), "DESTDIR=" + dest,
                        "prefix=/usr", "SYSTEMD_COMPAT=257", "install"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(dest, "usr/share/pkgconfig"),
               PKG_CONFIG_LIBDIR="/nonexistent")
    q = lambda *a: subprocess.run(["pkg-config"] + list(a) + ["udev"], env=env,
                                  capture_output=True, text=True, check=True).stdout.strip()
    assert q("--variable=udevdir") == "/usr/lib/udev"
    assert q("--modversion") == "257"
    assert os.path.isdir(os.path.join(dest, q("--variable=udevdir").lstrip("/"), "rules.d"))
