# SPDX-License-Identifier: GPL-2.0-or-later
"""`udevadm test [--action=] [--rules-dir=]... [--apply] DEVPATH`: output
compared with systemd 252's udevadm test on the same device and rules, the
dry run changing nothing, and --apply performing add and remove for real.
Each run happens in a nested private mount namespace with its own tmpfs
/run, /dev and rules directories."""

import os
import random
import shlex
import subprocess

import pytest

from tudevlib import run

NET = "/devices/virtual/net/"


def nested(script, timeout=60):
    """Run a shell script in a nested private mount namespace."""
    return subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-ec", script],
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=timeout, text=True)


def isolate(rules_text):
    """Shell prologue: fresh /run and /dev; only our rules are visible, in
    /run/r (for tudev's --rules-dir) and in /etc/udev/rules.d (systemd)."""
    return ("mount -t tmpfs tmpfs /run\n"
            ": > /run/null; mount --bind /dev/null /run/null\n"
            "mount -t tmpfs tmpfs /dev\n"
            ": > /dev/null; mount --bind /run/null /dev/null\n"
            "mkdir -p /run/r /run/udev\n"
            "cat > /run/r/50-test.rules <<'EOF_RULES'\n%s\nEOF_RULES\n"
            "for d in /etc/udev/rules.d /usr/lib/udev/rules.d /usr/local/lib/udev/rules.d; do\n"
            "  [ -d $d ] && mount -t tmpfs tmpfs $d\n"
            "done\n"
            "cp /run/r/50-test.rules /etc/udev/rules.d/\n" % rules_text)


def props_of(stdout):
    """KEY=value lines and run: lines after the banner."""
    props, runs = {}, []
    for line in stdout.splitlines():
        if line.startswith("run: "):
            runs.append(line)
        elif "=" in line and not line.startswith(("This program", "specified", "some values")):
            k, _, v = line.partition("=")
            props[k] = v
    return props, runs


def free_loop_index():
    for _ in range(200):
        idx = random.randint(2000, 60000)
        if not os.path.exists("/sys/devices/virtual/block/loop%d" % idx):
            return idx
    raise RuntimeError("no free loop index")


RULES_NET = r'''
SUBSYSTEM!="net", GOTO="end"
KERNEL=="uta*", ENV{UT_K}="$kernel %k %n $devpath $id", ENV{UT_ATTR}="$attr{address}"
KERNEL=="uta*", ATTR{mtu}=="1500", ATTR{nonexistent}!="x", ENV{UT_NEVER}="1"
KERNEL=="uta*", ATTR{mtu}=="1500", ENV{UT_MTU}="ok"
KERNEL=="uta*", PROGRAM="/bin/echo one two", RESULT=="one two", ENV{UT_RES}="%c{2}"
KERNEL=="uta*", PROGRAM="/bin/echo one  two", RESULT=="one two", ENV{UT_RES2}="%c{2}"
KERNEL=="uta*", IMPORT{program}="/bin/sh -c 'echo UT_I1=a; echo UT_I2=\\\"q v\\\"; echo bad'"
KERNEL=="uta*", OPTIONS+="string_escape=replace", ENV{UT_ESC}="a/b c"
KERNEL=="uta*", ENV{UT_ADD}="x", ENV{UT_ADD}+="y", ENV{UT_DEL}="z", ENV{UT_DEL}=""
KERNEL=="uta*", TAG+="t1", TAG+="t2", TAG-="t1"
KERNEL=="uta*", RUN+="/bin/true %k", RUN{builtin}+="kmod load dummy-%k"
KERNEL=="uta*", ENV{UT_SUBSYS}="$env{SUBSYSTEM}", ENV{.UT_HIDDEN}="1"
KERNEL=="utb*", ENV{UT_PEER}="1"
LABEL="end"
'''


def test_output_like_systemd(sd_udevadm, udevadm, net):
    net.add_veth("uta0", "utb0")
    dev = NET + "uta0"
    ours = nested(isolate(RULES_NET) + "%s test --rules-dir=/run/r %s" % (udevadm, dev))
    theirs = nested(isolate(RULES_NET) + "%s test %s" % (sd_udevadm, dev))
    assert ours.returncode == 0, ours.stderr
    assert theirs.returncode == 0, theirs.stderr
    # same banner
    assert ours.stdout.splitlines()[:4] == theirs.stdout.splitlines()[:4]
    op, oruns = props_of(ours.stdout)
    tp, truns = props_of(theirs.stdout)
    assert "USEC_INITIALIZED" in op and "USEC_INITIALIZED" in tp
    for p in (op, tp):
        del p["USEC_INITIALIZED"]
        for k in ("TAGS", "CURRENT_TAGS"):      # systemd lists tags in hash order
            p[k] = sorted(p[k].strip(":").split(":"))
    assert op["UT_RES"] == "two" and op["UT_I1"] == "a"
    assert op == tp
    assert oruns == truns
    # property order as systemd prints it (where TAGS/DEVLINKS land depends on
    # sd-device's lazy property updates: not compared)
    synth = ("TAGS", "CURRENT_TAGS", "DEVLINKS")
    okeys = [line.partition("=")[0] for line in ours.stdout.splitlines() if "=" in line]
    tkeys = [line.partition("=")[0] for line in theirs.stdout.splitlines() if "=" in line]
    assert [k for k in okeys if k not in synth] == [k for k in tkeys if k not in synth]
    # rule actions are logged with file:line
    assert "uta0: /run/r/50-test.rules:" in ours.stderr


RULES_BLOCK = r'''
SUBSYSTEM=="block", KERNEL=="loop%(idx)d", SYMLINK+="ut/by-test/%%k ut/two", \
  SYMLINK+="ut/sp ace", OWNER="1", GROUP="2", MODE="0640", ENV{UT_NODE}="$devnode", \
  OPTIONS+="link_priority=4"
SUBSYSTEM=="block", KERNEL=="loop%(idx)d", ENV{UT_LINKS}="$links"
SUBSYSTEM=="block", KERNEL=="loop%(idx)d", ACTION=="remove", ENV{UT_REMOVE}="$env{UT_NODE}"
'''


def test_block_device_like_systemd(sd_udevadm, udevadm, loops):
    idx = loops.add()
    rules = RULES_BLOCK % {"idx": idx}
    dev = loops.devpath(idx)
    ours = nested(isolate(rules) + "%s test --rules-dir=/run/r %s" % (udevadm, dev))
    theirs = nested(isolate(rules) + "%s test %s" % (sd_udevadm, dev))
    assert ours.returncode == 0, ours.stderr
    op, _ = props_of(ours.stdout)
    tp, _ = props_of(theirs.stdout)
    for p in (op, tp):
        del p["USEC_INITIALIZED"]
        for k in ("DEVLINKS", "UT_LINKS"):     # systemd's order is a hash order
            p[k] = sorted(p[k].split())
    assert op == tp


def test_dry_run_changes_nothing_apply_does(udevadm, loops):
    idx = loops.add()
    rules = (RULES_BLOCK % {"idx": idx} +
             'KERNEL=="loop%d", ATTR{queue/read_ahead_kb}="68", RUN+="/bin/touch /run/ut-ran"\n'
             % idx)
    ra = "/sys/devices/virtual/block/loop%d/queue/read_ahead_kb" % idx
    before = open(ra).read()
    assert before.strip() != "68"
    dev = loops.devpath(idx)
    check = ("ls -A /dev; ls -A /run/udev; [ -e /run/ut-ran ] && echo RAN || true; cat %s"
             % ra)
    dry = nested(isolate(rules) + "%s test --rules-dir=/run/r %s >/run/out 2>&1\n%s"
                 % (udevadm, dev, check))
    assert dry.returncode == 0, dry.stderr
    # /dev holds only null, /run/udev is empty; no RUN; no ATTR write
    assert dry.stdout.split() == ["null", before.strip()]

    node = "/dev/loop%d" % idx
    script = isolate(rules) + r'''
U=%(udevadm)s
$U test --rules-dir=/run/r --action=add --apply %(dev)s > /run/add.out 2> /run/add.err
stat -c 'node %%t:%%T %%u %%g %%a %%F' %(node)s
readlink /dev/ut/by-test/loop%(idx)d /dev/ut/two /dev/ut/sp /dev/ace /dev/block/7:%(idx)d
readlink '/run/udev/links/ut\x2ftwo/b7:%(idx)d'
sed 's/^/db /' /run/udev/data/b7:%(idx)d
[ -e /run/ut-ran ] && echo RAN
cat %(ra)s
grep -c '^run: ' /run/add.out
$U test --rules-dir=/run/r --action=remove --apply %(dev)s > /run/rm.out 2> /run/rm.err
grep '^UT_REMOVE=' /run/rm.out
ls -A /dev; ls -A /run/udev/data; ls -A /run/udev/tags 2>/dev/null || true; echo end
''' % {"udevadm": udevadm, "dev": dev, "node": node, "idx": idx, "ra": ra}
    res = nested(script)
    assert res.returncode == 0, res.stdout + res.stderr
    out = res.stdout.splitlines()
    assert out[0] == "node 7:%x 1 2 640 block special file" % idx
    assert out[1:6] == ["../../loop%d" % idx, "../loop%d" % idx, "../loop%d" % idx,
                        "loop%d" % idx, "../loop%d" % idx]
    assert out[6] == "4:" + node
    db = [line[3:] for line in out if line.startswith("db ")]
    assert "S:ut/two" in db and "L:4" in db and "E:UT_NODE=%s" % node in db
    assert "RAN" in out
    assert "68" in out
    assert "UT_REMOVE=" + node in out
    # remove: node, links, /dev/block and the DB record are gone
    tail = out[out.index("UT_REMOVE=" + node) + 1:]
    assert tail == ["block", "null", "end"], res.stdout    # /dev/block itself stays
    with open(ra, "w") as f:
        f.write(before)


def test_errors(udevadm):
    r = run([udevadm, "test"])
    assert r.returncode == 1 and "syspath parameter missing" in r.stderr
    r = run([udevadm, "test", "--action=bogus", "/devices/virtual/net/lo"])
    assert r.returncode == 1 and "Invalid action" in r.stderr
    r = run([udevadm, "test", "--rules-dir=/nonexistent", "/devices/nonexistent"])
    assert r.returncode == 1 and "Failed to open device" in r.stderr
    r = run([udevadm, "test", "--action=help"])
    assert r.returncode == 0 and r.stdout.split() == ["add", "remove", "change", "move",
                                                      "online", "offline", "bind", "unbind"]


DEBIAN = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "build-ref",
                                      "sd-udev"))

DIFF_SCRIPT = r'''
import os, subprocess, sys, time
sd, ours, rules, budget = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
devs = sorted(root for root, dirs, files in os.walk("/sys/devices") if "uevent" in files)
step = int(sys.argv[5])
def norm(out):
    d = {}
    for l in out.splitlines():
        if "=" not in l or l.startswith(("This program", "specified", "some values")):
            continue
        k, _, v = l.partition("=")
        if k == "USEC_INITIALIZED":
            continue
        if k == "DEVLINKS":
            v = " ".join(sorted(v.split()))      # systemd: hash order
        if k in ("TAGS", "CURRENT_TAGS"):
            v = ":".join(sorted(v.strip(":").split(":")))
        d[k] = v
    return d, [l for l in out.splitlines() if l.startswith("run:")]
def fresh():
    subprocess.run(["rm", "-rf", "/run/udev"])
    os.makedirs("/run/udev")
t0, n, bad = time.monotonic(), 0, 0
for dev in devs[::step]:
    if time.monotonic() - t0 > budget:
        break
    fresh()
    a = subprocess.run([sd, "test", dev], capture_output=True, text=True)
    fresh()
    b = subprocess.run([ours, "test", "--rules-dir=" + rules, dev], capture_output=True, text=True)
    n += 1
    if norm(a.stdout) != norm(b.stdout):
        bad += 1
        print("DIFF", dev)
        da, db = norm(a.stdout)[0], norm(b.stdout)[0]
        for k in sorted(set(da) | set(db)):
            if da.get(k) != db.get(k):
                print("  %s: systemd=%r tudev=%r" % (k, da.get(k), db.get(k)))
print("COMPARED", n, "DIFFERENT", bad)
'''


def test_debian_rules_every_device_like_systemd(sd_udevadm, udevadm, build, tmp_path):
    """Debian 12's rules (and the builtins) over the devices of this machine:
    the same properties and RUN list as systemd 252's udevadm test (the
    order of DEVLINKS and TAGS is systemd's hash order: compared sorted)."""
    if not os.path.isdir(os.path.join(DEBIAN, "lib", "udev", "rules.d")):
        pytest.skip("Debian's udev package not unpacked in build-ref/sd-udev")
    sanitized = any(s in os.path.basename(build) for s in ("asan", "tsan"))
    script = tmp_path / "diff.py"
    script.write_text(DIFF_SCRIPT)
    res = nested(
        "mount -t sysfs sysfs /sys 2>/dev/null || true\n"
        "mount -t tmpfs tmpfs /run\n"
        ": > /run/null; mount --bind /dev/null /run/null\n"
        "mount -t tmpfs tmpfs /dev\n"
        ": > /dev/null; mount --bind /run/null /dev/null\n"
        "for d in /etc/udev/rules.d /usr/local/lib/udev/rules.d; do\n"
        "  [ -d $d ] && mount -t tmpfs tmpfs $d\n"
        "done\n"
        "mount --bind %(deb)s/lib/udev/rules.d /usr/lib/udev/rules.d\n"
        "python3 %(script)s %(sd)s %(ours)s %(deb)s/lib/udev/rules.d %(budget)d %(step)d\n"
        % {"deb": DEBIAN, "script": script, "sd": sd_udevadm, "ours": udevadm,
           "budget": 90 if sanitized else 45, "step": 8 if sanitized else 3},
        timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    last = res.stdout.strip().splitlines()[-1].split()
    assert last[0] == "COMPARED" and int(last[1]) >= 20, res.stdout
    assert last[3] == "0", res.stdout


RULES_EXPLAIN = r'''
SUBSYSTEM=="block", ENV{UX_NEVER}="1"
KERNEL=="uxa*", ENV{UX_SEEN}="1", GOTO="ux_more"
ENV{UX_SKIPPED}="1"
LABEL="ux_more"
KERNEL=="uxa*", ATTR{mtu}=="9000", ENV{UX_NEVER}="1"
KERNEL=="uxa*", PROGRAM=="/bin/false", ENV{UX_NEVER}="1"
KERNEL=="uxa*", ENV{UX_SEEN}=="1", RUN+="/bin/true %k"
'''


def test_explain(udevadm, net):
    """--explain: one line per evaluated rule line, the failing key and the
    value it compared, the applied lines, programs, nothing else on stdout."""
    net.add_veth("uxa0", "uxb0")
    dev = NET + "uxa0"
    ours = nested(isolate(RULES_EXPLAIN) + "%s test --explain --rules-dir=/run/r %s"
                  % (udevadm, dev))
    assert ours.returncode == 0, ours.stderr
    lines = ours.stdout.splitlines()
    f = "/run/r/50-test.rules:"
    assert lines[0] == "event seqnum=0 action=add devpath=%s subsystem=net" % dev
    rules = [ln for ln in lines if ln.startswith(f)]
    # line 1 of the heredoc is empty: the rules start on line 2
    assert [ln.split(" ", 2)[:2] for ln in rules] == [
        [f + "2", "failed"], [f + "3", "applied"], [f + "6", "failed"],
        [f + "7", "failed"], [f + "8", "applied"]]
    assert rules[0].endswith(' SUBSYSTEM=="block" got "net"')
    assert rules[1].endswith(' ENV{UX_SEEN}="1" GOTO="ux_more"')
    assert rules[2].endswith(' ATTR{mtu}=="9000" got "1500"')
    assert rules[3].endswith(' PROGRAM=="/bin/false" got exit status 1')
    assert rules[4].endswith(' RUN{program}+="/bin/true %k"')
    assert lines[lines.index(rules[3]) + 1].startswith('  program "/bin/false" exit 1 ')
    assert lines[-1].startswith("summary lines=5 applied=2 time=")
    assert lines[-1].endswith(" result=0")
    assert not any(ln.startswith(("UX_", "run: ", "This program")) for ln in lines)
