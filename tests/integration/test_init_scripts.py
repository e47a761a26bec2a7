# SPDX-License-Identifier: GPL-2.0-or-later
"""The OpenRC and sysvinit scripts (init/openrc, init/sysvinit) checked
without booting anything: their dependencies, the commands they run (fake
udevd and udevadm that log their arguments), the settings they read, and the
shell they are written in (sh -n, dash -n; shellcheck and checkbashisms when
installed). test_boot_init.py boots the same scripts over real devices.

  * OpenRC: depend() is run under stand-ins for need/use/after/before/
    provide/keyword. Every "need" names one of tudev's own services, the only
    ones that exist on Gentoo, Alpine, Debian and Devuan alike (Debian's and
    Devuan's OpenRC have no sysfs, devfs or dev-mount); udev-trigger provides
    dev, udev-settle dev-settle, udev itself nothing. start() of each service
    with the conf.d keys: udev_opts (and the older udevd_args), rc_coldplug,
    udev_settle_timeout. The example conf.d files name only keys the
    services read.
  * sysvinit: start, status, reload, restart, stop in a private mount
    namespace (tmpfs /run and /dev): the daemon under start-stop-daemon with
    a pid file named in /run/sendsigs.omit.d, the coldplug, /dev/MAKEDEV made
    before the settle, everything removed again on stop.
"""

import os
import re
import shlex
import shutil
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
OPENRC = os.path.join(REPO, "init", "openrc")
SYSVINIT = os.path.join(REPO, "init", "sysvinit", "udev")
SERVICES = ("udev", "udev-trigger", "udev-settle")
OURS = set(SERVICES)

DEPEND_STUBS = "".join(
    '%s() { echo "%s $*"; }\n' % (f, f)
    for f in ("need", "use", "after", "before", "provide", "keyword"))

# openrc-run's functions, as far as the scripts use them; yesno as
# OpenRC's: yes/true/on/1 and no/false/off/0 in any case
OPENRC_FUNCS = r'''
ebegin() { echo "* $*"; }
eend() { r=${1:-0}; [ "$r" -eq 0 ] || echo "* failed: $2"; return "$r"; }
einfo() { echo "* $*"; }
ewarn() { echo "* warning: $*"; }
eerror() { echo "! $*"; }
yesno() {
        case $1 in
        [Yy][Ee][Ss]|[Tt][Rr][Uu][Ee]|[Oo][Nn]|1) return 0 ;;
        *) return 1 ;;
        esac
}
'''

# fake udevadm: logs its arguments; "control --ping" answers while the fake
# udevd runs, "control --exit" stops it
FAKE_UDEVADM = r'''#!/bin/sh
fake=%(fake)s
case "$*" in
"control --ping"*)
        [ -s $fake/udevd.pid ] && kill -0 "$(cat $fake/udevd.pid)" 2>/dev/null
        exit ;;
"control --exit")
        echo "$*" >> $fake/udevadm.log
        [ -s $fake/udevd.pid ] && kill "$(cat $fake/udevd.pid)" 2>/dev/null
        : > $fake/udevd.pid
        exit 0 ;;
settle*)
        [ -L /dev/MAKEDEV ] && m=" (MAKEDEV $(readlink /dev/MAKEDEV))" || m=
        echo "$*$m" >> $fake/udevadm.log ;;
*)
        echo "$*" >> $fake/udevadm.log ;;
esac
exit 0
'''

# fake udevd: logs its arguments; in the foreground it reports READY=1 on
# $NOTIFY_SOCKET and waits for SIGTERM, with --daemon it returns at once
FAKE_UDEVD = r'''#!/usr/bin/python3
import os, signal, socket, sys, time
fake = %(fake)r
with open(os.path.join(fake, "udevd.log"), "a") as f:
    f.write(" ".join(sys.argv[1:]) + "\n")
if "--daemon" in sys.argv:
    sys.exit(0)
with open(os.path.join(fake, "udevd.pid"), "w") as f:
    f.write("%%d\n" %% os.getpid())
path = os.environ.get("NOTIFY_SOCKET")
if path:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.sendto(b"READY=1\nSTATUS=fake\n", path)
    s.close()
signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
deadline = time.monotonic() + 120
while time.monotonic() < deadline:
    time.sleep(0.2)
'''


def substituted(src, dst, bindir, extra=()):
    with open(src) as f:
        text = f.read().replace("@sbindir@", bindir).replace("@bindir@", bindir)
    for a, b in extra:
        assert a in text, a
        text = text.replace(a, b)
    with open(dst, "w") as f:
        f.write(text)
    os.chmod(dst, 0o755)
    return dst


@pytest.fixture
def fake(tmp_path):
    """A directory with the fake udevd and udevadm (also the bindir)."""
    d = tmp_path / "fake"
    d.mkdir()
    for name, text in (("udevadm", FAKE_UDEVADM), ("udevd", FAKE_UDEVD)):
        p = d / name
        p.write_text(text % {"fake": str(d)})
        p.chmod(0o755)
    yield d
    pid = d / "udevd.pid"
    if pid.exists() and pid.read_text().strip():
        try:
            os.kill(int(pid.read_text()), 15)
        except (ProcessLookupError, ValueError):
            pass


def log(fake, name):
    p = fake / ("%s.log" % name)
    return p.read_text().splitlines() if p.exists() else []


def sh(script, shell="sh", env=None, timeout=60):
    return subprocess.run([shell, "-c", script], capture_output=True, text=True,
                          timeout=timeout, env=env)


# ---------------------------------------------------------------- OpenRC: depend()

def depend_of(name, shell="sh"):
    """{"need": [...], "use": [...], ...} from the script's depend()."""
    r = sh(DEPEND_STUBS + ". %s\ndepend\n" % shlex.quote(os.path.join(OPENRC, name)), shell)
    assert r.returncode == 0, r.stderr
    assert r.stderr == "", r.stderr
    deps = {}
    for line in r.stdout.splitlines():
        kind, *names = line.split()
        deps.setdefault(kind, []).extend(names)
    return deps


@pytest.mark.parametrize("shell", ["sh", "dash", "bash"])
def test_openrc_depend(shell):
    if not shutil.which(shell):
        pytest.skip("%s missing" % shell)
    udev, trigger, settle = (depend_of(n, shell) for n in SERVICES)

    # hard dependencies only on our own services: they exist everywhere
    for name, deps in zip(SERVICES, (udev, trigger, settle)):
        assert set(deps.get("need", [])) <= OURS, (name, deps)
    assert "need" not in udev
    # ordered after the mounts of /sys and /dev where those services exist
    for svc in ("sysfs", "dev-mount", "devfs"):
        assert svc in udev["use"] and svc in udev["after"]
    assert "mountkernfs" in udev["after"]          # Debian's initscripts
    assert {"checkfs", "fsck"} <= set(udev["before"])
    # "dev" means populated: the coldplug provides it, not the daemon
    assert "provide" not in udev
    assert trigger["need"] == ["udev"]
    assert trigger["provide"] == ["dev"]
    assert {"checkfs", "fsck"} <= set(trigger["before"])
    assert settle["need"] == ["udev"]
    assert settle["provide"] == ["dev-settle"]
    assert "udev-trigger" in settle.get("after", []) + settle.get("use", [])
    for deps in (udev, trigger, settle):
        assert {"-lxc", "-docker", "-systemd-nspawn"} <= set(deps["keyword"])


def test_openrc_services_start_without_gentoo_services():
    """What OpenRC does with the needs on Debian: a service starts when every
    service it needs (transitively) exists; names that are only "use"d or
    "after"ed may be missing. Debian's OpenRC has our three services and
    LSB scripts, no sysfs/devfs/dev-mount/modloop."""
    deps = {n: depend_of(n) for n in SERVICES}
    provided = {p: n for n, d in deps.items() for p in d.get("provide", [])}
    debian = OURS | {"mountkernfs", "mountkernfs.sh", "checkfs", "checkroot"}
    assert not {"sysfs", "devfs", "dev-mount", "modloop"} & debian

    def startable(name, seen=()):
        if name not in debian:
            name = provided.get(name, name)
        if name not in debian:
            return False
        if name in seen:
            return True
        return all(startable(n, seen + (name,)) for n in deps.get(name, {}).get("need", []))

    for n in SERVICES:
        assert startable(n), n
    # services that need "dev" or "dev-settle" get the coldplug
    assert provided["dev"] == "udev-trigger" and startable("dev")
    assert provided["dev-settle"] == "udev-settle" and startable("dev-settle")


# ---------------------------------------------------------------- OpenRC: start()

def run_service(fake, tmp_path, name, func, conf=""):
    """Run one function of an openrc-run script. udev-trigger makes
    /dev/MAKEDEV on Debian: the sandbox's /dev (tests/sandbox) is private,
    and the link is removed again after each run."""
    assert os.environ.get("TUDEV_SANDBOX") == "1", "run under tests/sandbox"
    if os.path.lexists("/dev/MAKEDEV"):
        os.unlink("/dev/MAKEDEV")
    script = substituted(os.path.join(OPENRC, name), str(tmp_path / name), str(fake))
    r = sh(OPENRC_FUNCS + conf + "\n. %s\n%s\n" % (script, func))
    if os.path.lexists("/dev/MAKEDEV"):
        os.unlink("/dev/MAKEDEV")
    return r


def openrc_log(fake, name):
    """log() without the " (MAKEDEV ...)" note of the fake udevadm."""
    return [re.sub(r" \(MAKEDEV [^)]*\)$", "", x) for x in log(fake, name)]


def test_openrc_trigger_commands(fake, tmp_path):
    r = run_service(fake, tmp_path, "udev-trigger", "start")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "failed" not in r.stdout
    debian = os.path.exists("/etc/debian_version")
    makedev = "/sbin/MAKEDEV" if os.path.exists("/sbin/MAKEDEV") else "/bin/true"
    # /dev/MAKEDEV (Debian and Devuan only) is there when settle runs (the
    # fake udevadm notes it on settle)
    note = " (MAKEDEV %s)" % makedev if debian else ""
    assert log(fake, "udevadm") == ["trigger --type=subsystems --action=add",
                                    "trigger --type=devices --action=add",
                                    "settle" + note]


def test_openrc_trigger_settle_timeout(fake, tmp_path):
    r = run_service(fake, tmp_path, "udev-trigger", "start", "udev_settle_timeout=30")
    assert r.returncode == 0, r.stdout + r.stderr
    assert openrc_log(fake, "udevadm")[-1] == "settle --timeout=30"


@pytest.mark.parametrize("value", ["NO", "no", "false", "off", "0"])
def test_openrc_rc_coldplug_no(fake, tmp_path, value):
    r = run_service(fake, tmp_path, "udev-trigger", "start",
                    "rc_coldplug=%s; udev_settle_timeout=30" % value)
    assert r.returncode == 0, r.stdout + r.stderr
    assert log(fake, "udevadm") == []
    assert "rc_coldplug is %s" % value in r.stdout


@pytest.mark.parametrize("value", ["YES", "yes"])
def test_openrc_rc_coldplug_yes(fake, tmp_path, value):
    r = run_service(fake, tmp_path, "udev-trigger", "start", "rc_coldplug=%s" % value)
    assert r.returncode == 0, r.stdout + r.stderr
    assert len(log(fake, "udevadm")) == 3


def test_openrc_settle(fake, tmp_path):
    r = run_service(fake, tmp_path, "udev-settle", "start")
    assert r.returncode == 0, r.stdout + r.stderr
    r = run_service(fake, tmp_path, "udev-settle", "start", "udev_settle_timeout=7")
    assert r.returncode == 0, r.stdout + r.stderr
    assert openrc_log(fake, "udevadm") == ["settle", "settle --timeout=7"]


@pytest.mark.parametrize("conf,argv", [
    ("", "--daemon"),
    ('udev_opts="--children-max=8 --exec-delay=0"',
     "--daemon --children-max=8 --exec-delay=0"),
    ('udevd_args="--children-max=8"', "--daemon --children-max=8"),
    ('udev_opts=--debug; udevd_args="--children-max=8"', "--daemon --debug --children-max=8"),
])
def test_openrc_udev_options(fake, tmp_path, conf, argv):
    r = run_service(fake, tmp_path, "udev", "start", conf)
    assert r.returncode == 0, r.stdout + r.stderr
    assert log(fake, "udevd") == [argv]


def test_openrc_reload(fake, tmp_path):
    r = run_service(fake, tmp_path, "udev", "reload")
    assert r.returncode == 0, r.stdout + r.stderr
    assert log(fake, "udevadm") == ["control --reload"]


def test_openrc_conf_d_examples(fake, tmp_path):
    """Each example conf.d file is valid sh, sets nothing (all commented
    out: the defaults), and names only keys its service reads."""
    confd = os.path.join(OPENRC, "conf.d")
    assert sorted(os.listdir(confd)) == sorted(SERVICES)
    for name in SERVICES:
        path = os.path.join(confd, name)
        with open(path) as f:
            text = f.read()
        keys = [line[1:].split("=")[0] for line in text.splitlines()
                if line.startswith("#") and "=" in line and " " not in line.split("=")[0]]
        assert keys, name
        with open(os.path.join(OPENRC, name)) as f:
            script = f.read()
        for k in keys:
            assert "${%s" % k in script or "$%s" % k in script, (name, k)
        r = sh("set -u; . %s; echo ok" % shlex.quote(path))
        assert r.stdout == "ok\n", r.stderr
    # uncommented, the examples' values are the defaults
    conf = "".join(line[1:] + "\n" for line in
                   open(os.path.join(confd, "udev-trigger")).read().splitlines()
                   if line.startswith("#") and "=" in line and " " not in line.split("=")[0])
    r = run_service(fake, tmp_path, "udev-trigger", "start", conf)
    assert r.returncode == 0, r.stdout + r.stderr
    assert openrc_log(fake, "udevadm")[-1] == "settle --timeout=120"


# ---------------------------------------------------------------- sysvinit

def nested(script, timeout=120):
    return subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-ec", script],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=timeout)


def ssd_notifies():
    ssd = shutil.which("start-stop-daemon")
    if not ssd:
        return False
    r = subprocess.run([ssd, "--help"], capture_output=True, text=True)
    return "--notify-await" in r.stdout + r.stderr


def test_sysvinit_start_stop(fake, tmp_path):
    """Debian's duties, in Debian's order, with fake binaries."""
    defaults = tmp_path / "default-tudev"
    defaults.write_text('UDEVD_ARGS="--children-max=8"\n')
    script = substituted(SYSVINIT, str(tmp_path / "udev"), str(fake),
                         [("/etc/default/tudev", str(defaults))])
    out = tmp_path / "out"
    out.mkdir()
    body = (
        "mount -t tmpfs tmpfs /run\n"
        ": > /run/null; mount --bind /dev/null /run/null\n"
        "mount -t tmpfs -o mode=0755 tmpfs /dev\n"
        ": > /dev/null; mount --bind /run/null /dev/null\n"
        "mkdir -p /run/udev; : > /run/udev/control\n"
        "%(s)s start > %(o)s/start.log 2>&1\n"
        "ls -l /run/sendsigs.omit.d > %(o)s/omit 2>&1 || true\n"
        "readlink /run/sendsigs.omit.d/udevd > %(o)s/omit-link 2>&1 || true\n"
        "cat /run/udev.pid > %(o)s/pidfile 2>&1 || true\n"
        "readlink /dev/MAKEDEV > %(o)s/makedev 2>&1 || true\n"
        "%(s)s status > %(o)s/status 2>&1\n"
        "%(s)s reload\n"
        "%(s)s force-reload\n"
        "%(s)s restart > %(o)s/restart.log 2>&1\n"
        "cat /run/udev.pid > %(o)s/pidfile2 2>&1 || true\n"
        ": > /run/udev/control\n"
        "%(s)s stop > %(o)s/stop.log 2>&1\n"
        "%(s)s status > %(o)s/status-after 2>&1 || echo rc=$? >> %(o)s/status-after\n"
        "ls -A /run/sendsigs.omit.d > %(o)s/omit-after 2>&1 || true\n"
        "for f in /run/udev.pid /run/udev/control; do [ ! -e $f ] || echo $f; done"
        " > %(o)s/left\n"
        % {"s": script, "o": out})
    r = nested(body)
    assert r.returncode == 0, r.stdout + r.stderr

    def read(n):
        return (out / n).read_text()

    assert "starting udevd" in read("start.log"), read("start.log")
    makedev = "/sbin/MAKEDEV" if os.path.exists("/sbin/MAKEDEV") else "/bin/true"
    assert read("makedev").strip() == makedev
    udevadm = log(fake, "udevadm")
    assert udevadm[:4] == ["info --cleanup-db",
                           "trigger --type=subsystems --action=add",
                           "trigger --type=devices --action=add",
                           "settle (MAKEDEV %s)" % makedev], udevadm
    # reload and force-reload reload; restart: the daemon only, no coldplug
    assert udevadm[4:] == ["control --reload", "control --reload", "control --exit",
                           "control --exit"], udevadm
    assert read("status").strip() == "udevd is running"
    assert read("status-after").split() == ["udevd", "is", "not", "running", "rc=3"]
    assert read("left") == ""
    if ssd_notifies():
        # start-stop-daemon --notify-await: no --daemon; the pid file names
        # the daemon and sendsigs spares it
        assert log(fake, "udevd") == ["--children-max=8", "--children-max=8"]
        pids = [read("pidfile").strip(), read("pidfile2").strip()]
        assert all(p.isdigit() for p in pids) and pids[0] != pids[1], pids
        assert read("omit-link").strip() == "/run/udev.pid"
        assert read("omit-after").strip() == ""
    else:
        assert log(fake, "udevd") == ["--daemon --children-max=8"] * 2


def test_sysvinit_not_in_container(fake, tmp_path):
    """A read-only /sys (a container) starts nothing and succeeds."""
    script = substituted(SYSVINIT, str(tmp_path / "udev"), str(fake))
    r = nested("mount -t tmpfs tmpfs /run\n"
               "mount -o remount,bind,ro /sys 2>/dev/null || mount -t sysfs -o ro sysfs /sys\n"
               "%s start\n" % script)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "read-only" in r.stdout
    assert log(fake, "udevd") == [] and log(fake, "udevadm") == []


# ---------------------------------------------------------------- the shell

def shell_scripts(under="init"):
    """(path, is an openrc-run script) of every sh script under a directory."""
    out = []
    for d, _, files in os.walk(os.path.join(REPO, under)):
        for f in sorted(files):
            p = os.path.join(d, f)
            with open(p, "rb") as fh:
                first = fh.readline()
            if first.startswith(b"#!/bin/sh") or first.startswith(b"#!/sbin/openrc-run"):
                out.append((p, first.startswith(b"#!/sbin/openrc-run")))
    return out


def test_scripts_parse():
    scripts = shell_scripts()
    assert len([p for p, o in scripts if o]) == 3
    assert SYSVINIT in [p for p, _ in scripts]
    for shell in ("sh", "dash", "bash"):
        if not shutil.which(shell):
            continue
        for p, _ in scripts:
            r = subprocess.run([shell, "-n", p], capture_output=True, text=True)
            assert r.returncode == 0, (shell, p, r.stderr)


def test_shellcheck():
    if not shutil.which("shellcheck"):
        pytest.skip("shellcheck missing (apt-get install shellcheck)")
    for p, openrc in (shell_scripts("init/openrc") + shell_scripts("init/sysvinit") +
                      shell_scripts("init/initramfs-tools")):
        # openrc-run reads description, extra_started_commands, ... and
        # sets the conf.d keys
        extra = ["-e", "SC2034,SC2154"] if openrc else []
        # warnings and errors (infos such as "not following ./conf" are not)
        r = subprocess.run(["shellcheck", "-s", "sh", "-S", "warning"] + extra + [p],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr


def test_checkbashisms():
    if not shutil.which("checkbashisms"):
        pytest.skip("checkbashisms missing (devscripts)")
    for p, _ in shell_scripts("init/openrc") + shell_scripts("init/sysvinit"):
        r = subprocess.run(["checkbashisms", "-f", p], capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr


# ---------------------------------------------------------------- make install

def test_install_openrc(build, tmp_path):
    """INIT=openrc: the services in /etc/init.d, the conf.d examples in
    /etc/conf.d (not under init.d); an existing conf.d file is kept, and
    uninstall removes only unchanged ones."""
    dest = tmp_path / "dest"
    common = ["make", "-s", "-C", REPO, "O=" + build, "-o", os.path.join(build, "udevd"),
              "-o", os.path.join(build, "udevadm"), "DESTDIR=" + str(dest), "prefix=/usr",
              "sysconfdir=/etc", "INIT=openrc"]
    edited = dest / "etc" / "conf.d" / "udev-settle"
    edited.parent.mkdir(parents=True)
    edited.write_text("udev_settle_timeout=60\n")
    r = subprocess.run(common + ["install"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    for n in SERVICES:
        p = dest / "etc" / "init.d" / n
        assert os.access(p, os.X_OK), n
        text = p.read_text()
        assert "@bindir@" not in text and "/usr/bin/udevadm" in text
    assert not (dest / "etc" / "init.d" / "conf.d").exists()
    assert (dest / "etc" / "conf.d" / "udev").read_text() == \
        open(os.path.join(OPENRC, "conf.d", "udev")).read()
    assert not os.access(dest / "etc" / "conf.d" / "udev", os.X_OK)
    assert edited.read_text() == "udev_settle_timeout=60\n"
    assert (dest / "usr/share/tudev/init/openrc/conf.d/udev-trigger").exists()
    r = subprocess.run(common + ["uninstall"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    left = sorted(os.path.relpath(os.path.join(d, f), dest)
                  for d, _, fs in os.walk(dest) for f in fs)
    assert left == ["etc/conf.d/udev-settle"]
