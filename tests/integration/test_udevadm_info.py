# SPDX-License-Identifier: GPL-2.0-or-later
"""`udevadm info` compared with systemd 252's udevadm (Debian's package)
reading the same sysfs and the same /run/udev: --query=all/property/name/
symlink/path, --export-db, --attribute-walk, --tree, --cleanup-db,
--device-id-of-file, --wait-for-initialization, device arguments, and bad
input (unknown devices, paths outside /sys, garbage in database files).

systemd keeps devlinks and tags in hash sets whose order changes from run to
run: S: lines, DEVLINKS, TAGS and CURRENT_TAGS are compared as sets.
Attribute values that change by themselves (runtime PM counters, I/O
statistics, free-memory based limits) are masked.
"""

import concurrent.futures
import os
import random
import re
import shutil
import stat
import subprocess
import time

import pytest

from tudevlib import LoopDevices, reset_run_udev, run

DATA = "/run/udev/data"

# ---------------------------------------------------------------- comparison helpers

SET_PROP = re.compile(r"^(.*(?:DEVLINKS|TAGS)=)('?)(.*?)('?)$")
VOLATILE_ATTR = re.compile(
    r"^(\s*ATTRS?\{(?:power/runtime_active_time|power/runtime_suspended_time|stat|inflight|"
    r"max_bytes|min_bytes|power/wakeup_\w+|power/runtime_usage|"
    r"cpuidle/state\d+/(?:time|usage|above|below|rejected|s2idle/\w+)|"
    r"cpufreq/(?:scaling|cpuinfo)_cur_freq)\}==)\".*\"$")


def _sorted_words(key_prefix, quote, value):
    if value.startswith(":"):
        words = sorted(w for w in value.split(":") if w)
        value = ":" + ":".join(words) + ":" if words else ""
    else:
        value = " ".join(sorted(value.split(" ")))
    return key_prefix + quote + value + quote


def normalize(text, words=False):
    """Hash-set ordered parts of systemd's output in a fixed order (words:
    also the words of every line, for --query=symlink)."""
    out, run_lines = [], []

    def flush():
        out.extend(sorted(run_lines))
        run_lines.clear()

    for line in text.split("\n"):
        if words:
            line = " ".join(sorted(line.split(" ")))
        m = SET_PROP.match(line)
        if m:
            line = _sorted_words(m.group(1), m.group(2), m.group(3))
        if re.match(r"^[^A-Za-z]*S: ", line):
            run_lines.append(line)
            continue
        flush()
        out.append(VOLATILE_ATTR.sub(r'\1"*"', line))
    flush()
    return "\n".join(out)


def both(udevadm, sd_udevadm, args, timeout=60):
    ours = run([udevadm] + args, timeout=timeout)
    ref = run([sd_udevadm] + args, timeout=timeout)
    assert "Sanitizer" not in ours.stderr and "runtime error" not in ours.stderr, ours.stderr
    return ours, ref


def assert_same(udevadm, sd_udevadm, args, tries=3):
    """Same exit status and (normalized) stdout; retried a few times when
    devices of concurrent activity come and go between the runs."""
    words = "symlink" in args
    for _ in range(tries):
        ours, ref = both(udevadm, sd_udevadm, args)
        a = (ours.returncode, normalize(ours.stdout, words))
        b = (ref.returncode, normalize(ref.stdout, words))
        if a == b:
            return ours
        time.sleep(0.1)
    assert a == b, "udevadm %s: ours differs (stderr: %s)" % (" ".join(args), ours.stderr)


def export_paths(tool):
    r = run([tool, "info", "--export-db"])
    assert r.returncode == 0, r.stderr
    return [line[3:] for line in r.stdout.splitlines() if line.startswith("P: ")]


def records(text):
    """--export-db output -> {devpath: record text}"""
    out = {}
    for rec in text.split("\n\n"):
        if rec.startswith("P: "):
            out[rec.split("\n", 1)[0][3:]] = rec
    return out


@pytest.fixture
def clean_run_udev():
    """An empty /run/udev of the sandbox, removed again afterwards."""
    reset_run_udev()
    os.makedirs(DATA)
    os.makedirs("/run/udev/tags")
    yield
    reset_run_udev()


def write_db(dev_id, text, mode=0o644):
    path = os.path.join(DATA, dev_id)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)
    return path


RICH_RECORD = ("S:disk/by-id/test-one\nS:disk/by-path/test-two\nS:test/three\nL:-5\n"
               "I:123456789\nE:ID_TEST=yes\nE:ID_SPACES=a b  c\nE:ID_EQ=x=y\nE:DEVNAME=/dev/other\n"
               "G:seat\nG:uaccess\nG:systemd\nQ:systemd\nQ:seat\nV:1\n")


# ---------------------------------------------------------------- whole machine

def test_export_db_and_queries_like_systemd(udevadm, sd_udevadm, clean_run_udev, loops):
    """Every device of the machine, with records (also rich ones) in the
    database: --export-db, and --query=all/property for all devices at once
    by /sys path and by /dev node."""
    idx = loops.add()
    write_db("c1:3", RICH_RECORD)
    write_db("n1", "I:42\nE:ID_NET_DRIVER=loopback\nG:systemd\nQ:systemd\nV:1\n")
    write_db("b7:%d" % idx, "S:loop/by-test\nI:7\nE:ID_FS_TYPE=\nE:ID_X=1\nV:1\n", 0o1644)
    write_db("+module:loop", "E:MOD=1\nG:mods\nV:1\n")
    write_db("+drivers:pci:pcieport", "E:DRV=1\nV:1\n")
    assert_same(udevadm, sd_udevadm, ["info", "--export-db"])
    paths = ["/sys" + p for p in export_paths(sd_udevadm)]
    assert len(paths) > 50
    assert_same(udevadm, sd_udevadm, ["info"] + paths)
    assert_same(udevadm, sd_udevadm, ["info", "-q", "property"] + paths)
    assert_same(udevadm, sd_udevadm, ["info", "-q", "path"] + paths)
    assert_same(udevadm, sd_udevadm, ["info", "-q", "symlink", "-r"] + paths)
    nodes = ["/dev/" + n for n in ("null", "zero", "full", "random", "urandom", "tty", "kmsg",
                                   "loop-control")]
    assert_same(udevadm, sd_udevadm, ["info"] + nodes)
    assert_same(udevadm, sd_udevadm, ["info", "-q", "property", "-x"] + nodes)


def test_tree_like_systemd(udevadm, sd_udevadm, clean_run_udev):
    write_db("c1:3", RICH_RECORD)
    assert_same(udevadm, sd_udevadm, ["info", "--tree"])
    for dev in ("/sys/class/net/lo", "/dev/null", "/sys/devices/virtual", "/sys/module/loop",
                "/sys/bus/pci", "/sys/devices/system/cpu"):
        assert_same(udevadm, sd_udevadm, ["info", "-t", dev])
    env = dict(os.environ, LANG="C", LC_ALL="C.UTF-8")
    for e in (env, dict(os.environ, LC_ALL="C")):
        ours = run([udevadm, "info", "-t", "/sys/class/net/lo"], env=e)
        ref = run([sd_udevadm, "info", "-t", "/sys/class/net/lo"], env=e)
        assert ours.stdout == ref.stdout


def leaves(paths):
    s = sorted(paths)
    return [p for i, p in enumerate(s) if i + 1 == len(s) or not s[i + 1].startswith(p + "/")]


def walks(tool, paths):
    """--attribute-walk of each path, run by one shell loop (cheaper than a
    Python subprocess per device): {path: (status, stdout)}."""
    script = 'for p in "$@"; do "$T" info --attribute-walk "/sys$p"; echo "@@rc=$?@@"; done'
    r = subprocess.run(["sh", "-c", script, "sh"] + paths, env=dict(os.environ, T=tool),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
    assert "Sanitizer" not in r.stderr and "runtime error" not in r.stderr, r.stderr
    parts = re.split(r"@@rc=(\d+)@@\n", r.stdout)
    assert len(parts) == 2 * len(paths) + 1, r.stderr
    return {p: (int(parts[2 * i + 1]), parts[2 * i]) for i, p in enumerate(paths)}


def sample_siblings(paths, keep=1):
    """Numbered siblings of one parent (memory blocks, virtual consoles,
    CPUs, ACPI device:NN...) share their attribute set: keep `keep` of each
    kind."""
    seen = {}
    out = []
    for p in paths:
        parent, name = p.rsplit("/", 1)
        kind = (parent, re.sub(r"[0-9a-fA-F]*\d[0-9a-fA-F]*$", "", name))
        seen[kind] = seen.get(kind, 0) + 1
        if seen[kind] <= keep:
            out.append(p)
    return out


def test_attribute_walk_like_systemd(udevadm, sd_udevadm):
    """The walk from every leaf device covers every device of the machine.
    Each walk costs two process starts (much more under the sanitizers), and
    the VM has a few hundred numbered siblings of the same kind (memory
    blocks, ttys): one of each kind is walked unless TUDEV_FULL_WALK=1, to
    keep the suite within seconds."""
    ends = leaves(export_paths(sd_udevadm))
    assert len(ends) > 10
    if os.environ.get("TUDEV_FULL_WALK") != "1":
        ends = sample_siblings(ends)
    chunks = [ends[i::2] for i in range(2)]
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        jobs = [(pool.submit(walks, udevadm, c), pool.submit(walks, sd_udevadm, c))
                for c in chunks]
        results = [(a.result(), b.result()) for a, b in jobs]
    for ours, ref in results:
        for path in ours:
            a, b = ours[path], ref[path]
            if (a[0], normalize(a[1])) != (b[0], normalize(b[1])):
                # a device may have changed meanwhile: compare once more
                assert_same(udevadm, sd_udevadm, ["info", "--attribute-walk", "/sys" + path])


# ---------------------------------------------------------------- attribute walk details

def test_attribute_walk_formatting(udevadm, sd_udevadm, loops):
    idx = loops.add()
    path = "/sys" + LoopDevices.devpath(idx)
    ours = assert_same(udevadm, sd_udevadm, ["info", "-a", path])
    text = ours.stdout
    assert text.startswith("\nUdevadm info starts with the device specified by the devpath")
    assert "  looking at device '%s':\n    KERNEL==\"loop%d\"\n" % (path[4:], idx) in text
    assert '    SUBSYSTEM=="block"\n    DRIVER==""\n' in text
    assert 'ATTR{size}=="0"' in text
    assert "ATTR{uevent}" not in text and "ATTR{subsystem}" not in text
    assert "ATTR{power/control}" in text          # non-device subdirectories
    assert "ATTR{holders" not in text               # directories are not attributes
    # sorted by name, parents with ATTRS
    names = re.findall(r"^    ATTR\{([^}]*)\}", text.split("looking at parent")[0], re.M)
    assert names == sorted(names)
    assert text.endswith("\n\n")
    # the same device through its /dev/block link and its class link
    for alias in ("/dev/block/7:%d" % idx, "/sys/class/block/loop%d" % idx):
        assert run([udevadm, "info", "-a", alias]).stdout == text


def test_attribute_walk_unreadable_and_binary(udevadm, sd_udevadm):
    # a PCI device has a binary "config" (skipped) and root-only files
    r = run([sd_udevadm, "info", "-e"])
    pci = [p for p in records(r.stdout) if re.match(r"^/devices/pci[^/]*/[^/]+$", p)]
    if not pci:
        pytest.skip("no PCI device")
    out = assert_same(udevadm, sd_udevadm, ["info", "-a", "/sys" + pci[0]]).stdout
    assert "ATTR{config}" not in out
    assert "ATTR{vendor}" in out
    # write-only attributes are shown as not readable
    if os.path.exists("/sys" + pci[0] + "/remove"):
        assert 'ATTR{remove}=="(not readable)"' in out


# ---------------------------------------------------------------- options

OPTION_CASES = [
    ["-q", "name", "-n", "null"],
    ["-q", "name", "-r", "-n", "null"],
    ["-q", "name", "/sys/class/net/lo"],
    ["-q", "symlink", "/dev/null"],
    ["-q", "symlink", "-r", "/dev/null"],
    ["-q", "symlink", "/sys/class/net/lo"],
    ["-q", "path", "-n", "/dev/null"],
    ["-q", "env", "/dev/null"],
    ["-q", "property", "--property=ID_TEST,MAJOR", "--property=TAGS", "/dev/null"],
    ["-q", "property", "--property=", "/dev/null"],
    ["-q", "property", "--property=,", "/dev/null"],
    ["-q", "property", "--value", "--property=DEVNAME,ID_SPACES", "/dev/null"],
    ["-q", "property", "--value", "/sys/class/net/lo"],
    ["-q", "property", "-x", "/dev/null"],
    ["-q", "property", "-P", "X_", "/dev/null"],
    ["-P", "X_", "-q", "property", "/sys/class/net/lo"],
    ["-x", "--value", "/dev/null"],
    ["-q", "all", "-p", "/devices/virtual/net/lo"],
    ["-p", "devices/virtual/mem/null"],
    ["-p", "/sys/devices/virtual/mem/null"],
    ["-p", "/sys/class/mem/null", "-n", "zero", "/dev/full"],
    ["/sys/class/net/lo", "-q", "path"],
    ["-q", "foo", "/dev/null"],
    ["--no-pager", "-q", "path", "/dev/null"],
    ["-w1", "-q", "path", "/dev/null"],
    ["--wait-for-initialization=x", "/dev/null"],
    ["-d", "/"],
    ["-d", "/dev/null", "-x"],
    ["-d", "/", "-P", "PFX_"],
    ["-d", "/", "/dev/null"],
    ["-d", "/", "-q", "path", "/dev/null"],
    ["-a"],
    ["-a", "/dev/null", "/dev/zero"],
    ["-t", "/dev/null", "/dev/zero"],
    [],
    ["--bogus"],
    ["sys-devices-virtual-net-lo.device"],
    ["dev-null.device"],
    ["/dev/block/7:0"],
    ["/dev/char/1:3"],
    ["/sys/module/loop"],
    ["/sys/bus/pci"],
    ["/sys/bus/pci/drivers"],
    ["/sys/devices/platform"],
    ["-q", "path", "/dev/null", "/nonexistent", "/dev/zero"],
]


@pytest.mark.parametrize("args", OPTION_CASES, ids=lambda a: " ".join(a) or "none")
def test_options_like_systemd(udevadm, sd_udevadm, clean_run_udev, args):
    write_db("c1:3", RICH_RECORD)
    write_db("n1", "G:systemd\nQ:systemd\nE:ID_NET=1\nV:1\n")
    assert_same(udevadm, sd_udevadm, ["info"] + args)


@pytest.mark.parametrize("args", [["-q", "name"], ["-a"], ["-x", "--value"], ["-a", "/a", "/b"],
                                  ["-q", "x", "/dev/null"], ["--bogus"]])
def test_error_messages_like_systemd(udevadm, sd_udevadm, args):
    ours, ref = both(udevadm, sd_udevadm, ["info"] + args)
    assert ours.returncode == ref.returncode == 1
    assert ours.stderr.replace(udevadm, "U") == ref.stderr.replace(sd_udevadm, "U")


def test_help_and_version(udevadm):
    r = run([udevadm, "info", "--help"])
    assert r.returncode == 0 and "--attribute-walk" in r.stdout and "--export-db" in r.stdout
    assert run([udevadm, "info", "-V"]).stdout == "252\n"


# ---------------------------------------------------------------- device arguments

def test_device_ids(udevadm, clean_run_udev, loops):
    """An addition to systemd 252: database ids name devices too."""
    idx = loops.add()
    want = run([udevadm, "info", "-q", "path", "/sys/devices/virtual/mem/null",
                "/sys/class/net/lo", "/sys" + LoopDevices.devpath(idx), "/sys/module/loop",
                "/sys/bus/pci/drivers"])
    assert want.returncode == 0, want.stderr
    r = run([udevadm, "info", "-q", "path", "c1:3", "n1", "b7:%d" % idx, "+module:loop",
             "+drivers:pci:drivers"])
    assert (r.returncode, r.stdout) == (0, want.stdout), r.stderr
    r = run([udevadm, "info", "-q", "path", "b1:3", "c7:%d" % idx, "n999999", "+net:nope"])
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.count("Unknown device") == 4


@pytest.mark.parametrize("arg,msg", [
    ("/nonexistent", 'Unknown device "/nonexistent": No such device'),
    ("/tmp", 'Unknown device "/tmp": No such device'),
    ("/proc/self", 'Unknown device "/proc/self": No such device'),
    ("/sys", 'Unknown device "/sys": No such device'),
    ("/dev", 'Unknown device "/dev": No such device'),
    ("/dev/shm", 'Unknown device "/dev/shm": No such device'),
    ("/sys/devices/virtual/net", 'Unknown device "/sys/devices/virtual/net": No such device'),
    ("foo", 'Bad argument "foo", expected an absolute path in /dev/ or /sys/ or a unit name'),
    ("foo.service", 'Bad argument "foo.service"'),
    ("x" * 5000, "Bad argument"),
    ("/" + "x/" * 3000, "Unknown device"),
], ids=lambda v: v[:30] if isinstance(v, str) else v)
def test_bad_device(udevadm, sd_udevadm, arg, msg):  # noqa: D103
    for query in (["-q", "all"], ["-a"], ["-t"]):
        ours, ref = both(udevadm, sd_udevadm, ["info"] + query + [arg])
        assert (ours.returncode, ours.stdout) == (1, ""), ours.stderr
        assert msg in ours.stderr
        assert ref.returncode == 1


def test_garbage_in_database(udevadm, sd_udevadm, clean_run_udev):
    """Malformed database files: the output is systemd's (bad lines skipped),
    the problem is reported and the exit status is 1; nothing crashes."""
    write_db("c1:3", "garbage\nS:ok/link\nE:NOEQUALS\nL:abc\nG:a b\nZ:zz\nE:OK=1\n\nQ:\nV:1\n"
                     "unterminated")
    # fixed-seed noise whose lines all start with a non-ASCII byte: reproducible, none valid
    rnd = random.Random(9).randbytes(20000).replace(b"\n", b"\x0b")
    noise = b"".join(b"\x80" + rnd[i:i + 250] + b"\n" for i in range(0, len(rnd), 250))
    with open(os.path.join(DATA, "c1:5"), "wb") as f:
        f.write(noise)
    with open(os.path.join(DATA, "c1:7"), "wb") as f:
        f.write(b"E:A=1\0\nE:B=2\n" + b"\xff" * 100 + b"\n")
    os.mkdir(os.path.join(DATA, "c1:8"))               # a directory instead of a file
    write_db("c1:9", "E:BIG=" + "x" * (9 * 1024 * 1024) + "\n")   # over DB_FILE_MAX (8 MiB)
    for node, line in (("null", "line 1"), ("zero", "Malformed line"),
                       ("full", "Malformed line 1"), ("random", "Is a directory"),
                       ("urandom", "File too large")):
        ours = run([udevadm, "info", "/dev/" + node])
        assert ours.returncode == 1, node
        assert line in ours.stderr, (node, ours.stderr)
        assert "/run/udev/data/c1:" in ours.stderr
        assert ours.stdout.startswith("P: /devices/virtual/mem/" + node)
        if node == "null":
            assert normalize(ours.stdout) == normalize(run([sd_udevadm, "info", "/dev/" + node]).stdout)
    r = run([udevadm, "info", "-e"])
    assert r.returncode == 1 and "P: /devices/virtual/mem/null" in r.stdout
    assert "Sanitizer" not in r.stderr
    # property queries and walks go on too
    assert run([udevadm, "info", "-q", "property", "/dev/null"]).stdout.count("\n") > 3


# ---------------------------------------------------------------- database cleanup

def build_run_udev():
    write_db("c1:3", "E:A=1\nV:1\n")
    write_db("c1:5", "E:B=1\nV:1\n", 0o1644)            # db_persist: kept
    write_db(".#c1:7tmp", "partial")
    os.makedirs(os.path.join(DATA, "subdir"))
    for tag in ("seat", "systemd"):
        os.makedirs("/run/udev/tags/" + tag, exist_ok=True)
        for i in ("c1:3", "c1:5", "n99"):
            open("/run/udev/tags/%s/%s" % (tag, i), "w").close()
    os.makedirs("/run/udev/links/disk\\x2fby-id\\x2ffoo")
    os.symlink("0:/dev/null", "/run/udev/links/disk\\x2fby-id\\x2ffoo/c1:3")
    os.symlink("0:/dev/zero", "/run/udev/links/disk\\x2fby-id\\x2ffoo/c1:5")
    os.makedirs("/run/udev/static_node-tags/uaccess")
    os.symlink("/dev/null", "/run/udev/static_node-tags/uaccess/null")
    os.makedirs("/run/udev/watch")
    os.symlink("c1:3", "/run/udev/watch/1")
    open("/run/udev/tags/stray-file", "w").close()


def tree_listing():
    out = []
    for d, dirs, files in os.walk("/run/udev"):
        for n in dirs + files:
            p = os.path.join(d, n)
            st = os.lstat(p)
            out.append((p, stat.S_IFMT(st.st_mode)))
    return sorted(out)


def test_cleanup_db_like_systemd(udevadm, sd_udevadm, clean_run_udev):
    build_run_udev()
    assert run([sd_udevadm, "info", "--cleanup-db"]).returncode == 0
    want = tree_listing()
    shutil.rmtree("/run/udev")
    os.makedirs(DATA)
    os.makedirs("/run/udev/tags")
    build_run_udev()
    r = run([udevadm, "info", "-c"])
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    assert tree_listing() == want
    assert os.path.exists(os.path.join(DATA, "c1:5"))
    assert not os.path.exists(os.path.join(DATA, "c1:3"))
    assert os.path.islink("/run/udev/watch/1")
    # nothing there at all: fine
    shutil.rmtree("/run/udev")
    assert run([udevadm, "info", "--cleanup-db"]).returncode == 0


# ---------------------------------------------------------------- waiting

def test_wait_for_initialization(udevd, udevadm, loops):
    assert run([udevadm, "control", "--stop-exec-queue"]).returncode == 0
    try:
        idx = loops.add()
        path = "/sys" + LoopDevices.devpath(idx)
        assert run([udevadm, "control", "--ping"]).returncode == 0
        # not initialized yet: times out
        r = run([udevadm, "info", "-w300ms", "-q", "path", path])
        assert r.returncode == 1
        assert "Failed to wait for device to be initialized" in r.stderr
        waiter = subprocess.Popen([udevadm, "info", "--wait-for-initialization=20", path],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(0.3)
        assert waiter.poll() is None
    finally:
        assert run([udevadm, "control", "--start-exec-queue"]).returncode == 0
    out, err = waiter.communicate(timeout=20)
    assert waiter.returncode == 0, err
    assert out.startswith("P: %s\n" % path[4:])
    assert "E: SUBSYSTEM=block\n" in out and "E: ACTION=add\n" in out
    # initialized now: no waiting, read from the database
    t = time.monotonic()
    r = run([udevadm, "info", "-w", "-q", "path", path])
    assert (r.returncode, r.stdout) == (0, path[4:] + "\n")
    assert time.monotonic() - t < 2
