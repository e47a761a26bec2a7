# SPDX-License-Identifier: GPL-2.0-or-later
"""Hostile input, end to end: connection floods on the control socket,
forged and malformed netlink messages not covered by test_forged.py, rules
files with huge lines, deep GOTO chains, binary garbage, NUL bytes and
invalid UTF-8, sysfs attribute values with control characters and unreadable
attributes (a veth's ifalias and its EOPNOTSUPP attributes), and program
output with NUL bytes, no newline, binary junk or more than the buffer.

Each case checks that the daemon stays up and keeps serving (events flow,
`udevadm control --ping` answers, the descriptor count stays bounded) and,
where systemd 252's udevadm is available, that `udevadm test` gives the same
properties as systemd's on the same device and rules."""

import os
import random
import resource
import socket
import subprocess
import time

import pytest

from tudevlib import (CONTROL, CTRL_END, CTRL_ENV, CTRL_PING, NETLINK_KOBJECT_UEVENT,
                      as_nobody, ctrl_message, ctrl_ping, devpath_in, kernel_seqnum, run,
                      wait_until)

NET = "/devices/virtual/net/"
# Worker threads started meanwhile (for this test's or other tests' events:
# loop and block events reach every namespace) hold a few descriptors each.
FD_SLACK = 48


def plain_build():
    return os.environ.get("TUDEV_BUILD", "").rstrip("/").endswith("/build")


def daemon_fds(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def control_conns(pid):
    """Accepted control connections the daemon holds (ss -x)."""
    out = subprocess.run(["ss", "-xpn"], stdout=subprocess.PIPE, text=True, check=True).stdout
    return sum(1 for line in out.splitlines()
               if line.startswith("u_seq") and " ESTAB " in line and CONTROL + " " in line
               and "pid=%d," % pid in line)


def raise_nofile(want):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard), hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def veth_flows(net, kernel_mon, udev_mon, a, b, timeout=20):
    """Create a veth pair; every kernel event of it must be broadcast."""
    paths = [NET + a, NET + b]
    net.add_veth(a, b)
    time.sleep(0.1)
    kev = kernel_mon.matching(devpath_in(paths))
    uev = udev_mon.wait_for(devpath_in(paths), count=len(kev), timeout=timeout)
    assert sorted(e.seqnum for e in uev) == sorted(e.seqnum for e in kev)
    return uev


def udevadm_ping(udevadm):
    return run([udevadm, "control", "--ping", "--timeout=5"], timeout=30).returncode == 0


# ----------------------------------------------------------------- control socket

def test_control_flood_of_held_connections(udevd, udevadm, net, kernel_mon, udev_mon):
    """Thousands of connections opened and held without a word: at most
    CTRL_CONN_MAX (16) are kept, the others closed; a held idle connection
    gives way to a new one, so --ping answers during the flood; events flow;
    the daemon's descriptor count stays bounded and returns to its level."""
    n = 2000 if plain_build() else 400
    raise_nofile(n + 256)
    base = daemon_fds(udevd.pid)
    socks, eagain = [], 0
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET | socket.SOCK_NONBLOCK
                              | socket.SOCK_CLOEXEC)
            try:
                s.connect(CONTROL)
                socks.append(s)
            except BlockingIOError:
                eagain += 1        # backlog full: refused by the kernel
                s.close()
        print("held %d, refused by the backlog %d" % (len(socks), eagain))
        assert len(socks) > 16
        assert udevd.alive()
        assert control_conns(udevd.pid) <= 16
        assert daemon_fds(udevd.pid) <= base + 16 + FD_SLACK
        # a root client still gets through while the flood is held
        assert wait_until(lambda: ctrl_ping(timeout=2), 15)
        assert udevadm_ping(udevadm)
        veth_flows(net, kernel_mon, udev_mon, "hfa0", "hfb0")
        assert control_conns(udevd.pid) <= 16
    finally:
        for s in socks:
            s.close()
    assert wait_until(lambda: control_conns(udevd.pid) == 0, 10), \
        "%d control connections left after the flood" % control_conns(udevd.pid)
    assert daemon_fds(udevd.pid) <= base + FD_SLACK
    assert udevadm_ping(udevadm)
    assert "too many connections" in udevd.log()


NOBODY_FLOOD = r'''
import socket, struct, sys
n, errs = int(sys.argv[1]), {}
msg = b"udev-252".ljust(16, b"\0") + struct.pack("=Ii", 0xdead1dea, 8) + bytes(256)
for i in range(n):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(2)
    try:
        s.connect("/run/udev/control")
        s.send(msg)
    except OSError as e:
        errs[e.errno] = errs.get(e.errno, 0) + 1
    s.close()
print(errs)
'''


def test_control_flood_of_short_connections(udevd, udevadm, net, kernel_mon, udev_mon):
    """Connections opened and closed as fast as possible, half of them
    leaving a truncated, garbage or oversized message behind, plus a
    non-root client flooding a socket made world-writable for the test:
    nothing is executed, descriptors return to their level, --ping answers
    right after and events flow."""
    n = 2000 if plain_build() else 400
    base = daemon_fds(udevd.pid)
    ping = ctrl_message(CTRL_PING)
    junk = [b"", ping[:100], ping + b"x" * 3000, os.urandom(280),
            ctrl_message(CTRL_ENV, "HOSTILE_FLOOD=1")[:279], ctrl_message(9),
            ctrl_message(CTRL_END, magic=0x1)]
    refused = 0
    t0 = time.monotonic()
    for i in range(n):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET | socket.SOCK_CLOEXEC)
        s.settimeout(2)
        try:
            s.connect(CONTROL)
            if i % 2:
                s.send(junk[i % len(junk)] or b"\0")
        except OSError:
            refused += 1
        s.close()
    print("%d connections in %.2fs, %d refused" % (n, time.monotonic() - t0, refused))
    os.chmod(CONTROL, 0o777)
    r = run(as_nobody(["/usr/bin/python3", "-c", NOBODY_FLOOD, str(n // 4)]), timeout=120)
    assert r.returncode == 0, r.stderr
    print("non-root flood:", r.stdout.strip())
    assert udevd.alive()
    assert wait_until(lambda: ctrl_ping(timeout=2), 15)
    assert udevadm_ping(udevadm)
    assert wait_until(lambda: control_conns(udevd.pid) == 0, 10)
    # (worker threads started for other devices' events hold a few descriptors)
    assert daemon_fds(udevd.pid) <= base + FD_SLACK
    uev = veth_flows(net, kernel_mon, udev_mon, "hsa0", "hsb0")
    assert all("HOSTILE_FLOOD" not in e.props for e in uev)
    assert "refused connection from uid 65534" in udevd.log()


# ----------------------------------------------------------------- udevadm test vs systemd

def nested(script, timeout=120):
    """Run a shell script in a nested private mount namespace; bytes-safe."""
    r = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-ec", script],
                       stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=timeout)
    return (r.returncode, r.stdout.decode("utf-8", "surrogateescape"),
            r.stderr.decode("utf-8", "surrogateescape"))


def isolate(rules_files):
    """Shell prologue: fresh /run and /dev; only the given rules files
    ({name: path}) are visible, in /run/r (tudev's --rules-dir) and in
    /etc/udev/rules.d (systemd)."""
    s = ["mount -t tmpfs tmpfs /run",
         ": > /run/null; mount --bind /dev/null /run/null",
         "mount -t tmpfs tmpfs /dev",
         ": > /dev/null; mount --bind /run/null /dev/null",
         "mkdir -p /run/r /run/udev",
         "for d in /etc/udev/rules.d /usr/lib/udev/rules.d /usr/local/lib/udev/rules.d "
         "/lib/udev/rules.d; do [ -d $d ] && mount -t tmpfs tmpfs $d; done",
         "mkdir -p /etc/udev/rules.d"]
    for name, path in sorted(rules_files.items()):
        s.append("cp %s /run/r/%s; cp %s /etc/udev/rules.d/%s" % (path, name, path, name))
    return "\n".join(s) + "\n"


BANNER = ("This program", "specified", "some values")


def parse_test_output(stdout):
    """KEY=value lines of udevadm test's output (after the banner), and the run: list."""
    props, runs = {}, []
    for line in stdout.splitlines():
        if line.startswith("run: "):
            runs.append(line[5:])
        elif "=" in line and not line.startswith(BANNER):
            k, _, v = line.partition("=")
            props[k] = v
    props.pop("USEC_INITIALIZED", None)
    return props, runs


def udevadm_test(tool, rules_files, devpath, pre="", action="add", timeout=120):
    """(status, props, runs, stderr, seconds) of `udevadm test` run by `tool`
    ("tudev" or "systemd", path) in a nested namespace."""
    name, path = tool
    extra = "--rules-dir=/run/r " if name == "tudev" else ""
    script = (isolate(rules_files) + pre +
              "export SYSTEMD_LOG_LEVEL=debug SYSTEMD_LOG_COLOR=0\n"
              "t0=$(date +%%s%%N)\n"
              "rc=0; %s test %s--action=%s %s || rc=$?\n"
              "t1=$(date +%%s%%N)\n"
              "echo \"@@rc=$rc @@ns=$((t1 - t0))\"\n" % (path, extra, action, devpath))
    rc, out, err = nested(script, timeout)
    assert rc == 0, "nested script failed (%d): %s" % (rc, err[-3000:])
    tail = out.rstrip("\n").rsplit("\n", 1)[-1]
    assert tail.startswith("@@rc="), out[-2000:]
    status = int(tail.split()[0][5:])
    secs = int(tail.split()[1][5:]) / 1e9
    props, runs = parse_test_output(out.rstrip("\n").rsplit("\n", 1)[0])
    return status, props, runs, err, secs


def tools(udevadm):
    """[(name, path)]: ours, and systemd's when it is there -- in the plain
    build only: systemd's results do not depend on the build under test and
    the sanitizer runs must stay short."""
    from tudevlib import SD_UDEVADM
    t = [("tudev", udevadm)]
    if plain_build() and os.access(SD_UDEVADM, os.X_OK):
        t.append(("systemd", SD_UDEVADM))
    return t


# ----------------------------------------------------------------- hostile rules files

def hostile_rules(kern):
    """{file name: (bytes, properties expected set, properties expected
    absent, line numbers expected to carry an error)} for devices whose
    KERNEL matches `kern`. Smaller figures under sanitizers."""
    rnd = random.Random(7)
    big = plain_build()
    n_cont, n_empty, n_goto = (5000, 20000, 10000) if big else (1000, 4000, 2000)
    huge, n_garbage = (1 << 20, 65536) if big else (1 << 16, 16384)

    def ok(tag):
        return ('KERNEL=="%s", ENV{%s}="1"\n' % (kern, tag)).encode()

    k = kern.encode()
    files = {}
    # a 1 MiB physical line (64 KiB): v252 keeps the lines before it, drops
    # the rest
    files["10-huge-line.rules"] = (
        ok("HR_HUGE_BEFORE") + b'KERNEL=="' + k + b'", ENV{HR_HUGE}="' + b"x" * huge +
        b'"\n' + ok("HR_HUGE_AFTER"),
        ["HR_HUGE_BEFORE"], ["HR_HUGE", "HR_HUGE_AFTER"], [2])
    # 5,000 continuations (1,000 under sanitizers): the joined line passes
    # 16 KiB and is dropped alone
    files["11-continued.rules"] = (
        ok("HR_CONT_BEFORE") + b'KERNEL=="' + k + b'", \\\n' +
        b"".join(b'ENV{HR_C%d}="1", \\\n' % i for i in range(n_cont)) + b'ENV{HR_CONT}="1"\n' +
        ok("HR_CONT_AFTER"),
        ["HR_CONT_BEFORE", "HR_CONT_AFTER"], ["HR_CONT", "HR_C0"], [n_cont + 3])
    # 20,000 empty continuations (4,000): short enough, applied
    files["12-continued-empty.rules"] = (
        b'KERNEL=="' + k + b'", \\\n' + b"\\\n" * n_empty + b'ENV{HR_CONT_EMPTY}="1"\n' +
        ok("HR_CONT_EMPTY_AFTER"),
        ["HR_CONT_EMPTY", "HR_CONT_EMPTY_AFTER"], [], [])
    # a chain of 10,000 GOTOs (2,000), each skipping one line
    chain = [b'KERNEL=="' + k + b'", GOTO="g0"\n']
    for i in range(n_goto):
        chain.append(b'ENV{HR_GOTO_SKIPPED}="1"\n')
        chain.append(b'LABEL="g%d"\n' % i)
        chain.append(b'KERNEL=="' + k + b'", GOTO="g%d"\n' % (i + 1) if i < n_goto - 1
                     else ok("HR_GOTO_END"))
    files["13-goto-chain.rules"] = (b"".join(chain), ["HR_GOTO_END"], ["HR_GOTO_SKIPPED"], [])
    # GOTO backwards or to its own line: no label after it, the GOTO is dropped
    files["14-goto-loop.rules"] = (
        b'LABEL="loop"\n' + ok("HR_LOOP_BEFORE") + b'KERNEL=="' + k + b'", GOTO="loop"\n' +
        ok("HR_LOOP_AFTER") + b'KERNEL=="' + k + b'", GOTO="self", LABEL="self"\n' +
        ok("HR_LOOP_AFTER2"),
        ["HR_LOOP_BEFORE", "HR_LOOP_AFTER", "HR_LOOP_AFTER2"], [], [3, 5])
    # 64 KiB of random bytes between two good lines (no backslash: for a
    # continued line systemd names its last physical line, tudev the one
    # holding the fault, so the line numbers would not compare)
    garbage = bytes(rnd.randrange(256) for _ in range(n_garbage)).replace(b"\\", b"/")
    files["15-garbage.rules"] = (ok("HR_GARBAGE_BEFORE") + garbage + b"\n" +
                                 ok("HR_GARBAGE_AFTER"),
                                 ["HR_GARBAGE_BEFORE", "HR_GARBAGE_AFTER"], [], None)
    # NUL bytes end a physical line
    files["16-nul.rules"] = (
        ok("HR_NUL_BEFORE") + b'KERNEL=="' + k + b'", ENV{HR_NUL_A}="x\0y"\n' +
        b'KERNEL=="' + k + b'",\0 ENV{HR_NUL_B}="1"\n' + b"\0\0\0" + ok("HR_NUL_AFTER"),
        ["HR_NUL_BEFORE", "HR_NUL_B", "HR_NUL_AFTER"], ["HR_NUL_A"], [2, 3, 4])
    # invalid UTF-8 is just bytes; a byte-order mark makes an invalid key
    files["17-utf8.rules"] = (
        ok("HR_UTF8_BEFORE") + b'KERNEL=="' + k + b'", ENV{HR_UTF8_A}="\xff\xfe\xc3"\n' +
        b'KERNEL=="' + k + b'\xff", ENV{HR_UTF8_NEVER}="1"\n' +
        b'KERNEL=="' + k + b'", ENV{HR_UTF8_\xc3\xa9}="1"\n' +
        b'\xef\xbb\xbfKERNEL=="' + k + b'", ENV{HR_UTF8_BOM}="1"\n' + ok("HR_UTF8_AFTER"),
        ["HR_UTF8_BEFORE", "HR_UTF8_A", "HR_UTF8_\xe9", "HR_UTF8_AFTER"],
        ["HR_UTF8_NEVER", "HR_UTF8_BOM"], [5])
    return files


def write_hostile_rules(directory, kern):
    os.makedirs(str(directory), exist_ok=True)
    files = hostile_rules(kern)
    paths = {}
    for name, (data, _, _, _) in files.items():
        path = os.path.join(str(directory), name)
        with open(path, "wb") as f:
            f.write(data)
        paths[name] = path
    return files, paths


def error_lines(stderr, name):
    """Line numbers of messages about rules file `name` (file:line[:col]:)."""
    import re
    pat = re.compile(re.escape(name) + r":(\d+)[: ]")
    return sorted({int(m.group(1)) for m in pat.finditer(stderr)})


def check_props(props, want, absent, what):
    for k in want:
        assert props.get(k) == ("1" if k != "HR_UTF8_A" else "\udcff\udcfe\udcc3"), \
            "%s: %s=%r" % (what, k, props.get(k))
    for k in absent:
        assert k not in props, "%s: %s=%r set" % (what, k, props[k])


def test_hostile_rules_udevadm_test_like_systemd(udevadm, tmp_path):
    """Each hostile file alone through `udevadm test` on lo: the good lines
    are applied, the errors name file:line (the same lines as systemd's),
    loading takes a bounded time, and systemd 252 sets the same properties."""
    files, paths = write_hostile_rules(tmp_path / "rules", "lo")
    for name in sorted(files):
        data, want, absent, err_lines = files[name]
        results = {}
        for tool in tools(udevadm):
            status, props, _, err, secs = udevadm_test(tool, {name: paths[name]},
                                                       NET + "lo")
            print("%s %s: %.2fs" % (tool[0], name, secs))
            assert status == 0, "%s %s: status %d\n%s" % (tool[0], name, status, err[-3000:])
            check_props(props, want, absent, "%s %s" % (tool[0], name))
            lines = error_lines(err, name)
            if tool[0] == "tudev":
                assert secs < 30, "%s: loading took %.1fs" % (name, secs)
                if err_lines is not None:
                    assert lines == err_lines, "%s: errors on lines %r" % (name, lines)
                else:
                    assert lines, "%s: no error reported" % name
            results[tool[0]] = (props, lines)
        if "systemd" in results:
            assert results["tudev"][0] == results["systemd"][0], name
            if name != "10-huge-line.rules":   # v252 names no line for it
                assert results["tudev"][1] == results["systemd"][1], name


def test_hostile_rules_in_the_daemon(tmp_path, udevd_factory, udevadm, net, udev_mon):
    """All hostile files at once, plus a FIFO, a symlink to /dev/zero, a
    directory, a dangling symlink and a 1 GiB sparse file named *.rules:
    the daemon starts in bounded time without blocking on the FIFO, reports
    each fault as file:line, applies every good line to a real event, and
    reloads them as quickly."""
    rdir = tmp_path / "rules"
    files, paths = write_hostile_rules(rdir, "hr*")
    os.mkfifo(str(rdir / "20-fifo.rules"))
    os.symlink("/dev/zero", str(rdir / "21-zero.rules"))
    os.mkdir(str(rdir / "22-dir.rules"))
    os.symlink(str(tmp_path / "nowhere"), str(rdir / "23-dangling.rules"))
    with open(str(rdir / "24-sparse.rules"), "wb") as f:
        f.truncate(1 << 30)
    t0 = time.monotonic()
    d = udevd_factory("--children-max=4", "--rules-dir=%s" % rdir, timeout=60)
    started = time.monotonic() - t0
    print("daemon ready in %.2fs" % started)
    assert started < 30

    def check_event(a, b):
        mark = udev_mon.mark()
        net.add_veth(a, b)
        got = udev_mon.wait_for(lambda e: e.devpath == NET + a and e.action == "add",
                                timeout=30, since=mark)
        assert got, "no event for %s" % a
        for name, (_, want, absent, _) in files.items():
            check_props(got[0].props, want, absent, "daemon %s" % name)

    check_event("hra0", "hrb0")
    log = d.log()
    for name, (_, _, _, err_lines) in files.items():
        lines = error_lines(log, name)
        if err_lines is None:
            assert lines, "%s: no error reported" % name
        else:
            assert lines == err_lines, "%s: errors on lines %r" % (name, lines)
    assert "24-sparse.rules: File is too large" in log
    # (the FIFO and the directory are skipped by their directory entry type)
    # reload (every file changed): as fast, same result
    for p in paths.values():
        os.utime(p)
    t0 = time.monotonic()
    assert run([udevadm, "control", "--reload"], timeout=60).returncode == 0
    assert udevadm_ping(udevadm)
    print("reload + ping in %.2fs" % (time.monotonic() - t0))
    assert time.monotonic() - t0 < 30
    check_event("hra1", "hrb1")
    assert d.alive()


# ----------------------------------------------------------------- sysfs attribute values

ATTR_RULES = r'''
KERNEL=="hva*", ENV{HA_RAW}="$attr{ifalias}", ENV{HA_K}="%k"
KERNEL=="hva*", ATTR{ifalias}=="*evil*", ENV{HA_EVIL}="1"
KERNEL=="hva*", ATTR{ifalias}=="?*", ENV{HA_NONEMPTY}="1"
KERNEL=="hva*", ENV{HA_PPI}="[$attr{phys_port_id}]", ENV{HA_SPEED}="[$attr{speed}]"
KERNEL=="hva*", ATTR{phys_port_id}=="?*", ENV{HA_PPI_SET}="1"
KERNEL=="hva*", ATTR{phys_port_id}=="", ENV{HA_PPI_EMPTY}="1"
KERNEL=="hva*", ENV{HA_NOSUCH}="[$attr{nosuch}][$attr{../lo/ifalias}][$attr{/etc/passwd}]"
KERNEL=="hva*", ENV{HA_TRIPLE}="$attr{ifalias}$attr{ifalias}$attr{ifalias}"
KERNEL=="hva*", OPTIONS+="string_escape=replace", ENV{HA_REPL}="$attr{ifalias}"
KERNEL=="hva*", PROGRAM="/bin/echo %s{ifalias}", ENV{HA_PROG}="%c"
KERNEL=="hva*", IMPORT{program}="/bin/echo HA_IMP=$attr{ifalias}"
KERNEL=="hva*", RUN+="/bin/sh -c 'printf %%s \"$HA_RAW\" > /run/hostile-run-%k'"
'''

# Written to /sys/class/net/hva0/ifalias (the kernel keeps at most 255 bytes,
# drops one trailing newline, and shows the value up to a NUL).
ALIASES = [
    b"\x01\x02evil\x1b[31m\tTAB\r\nline2\x7f",
    b"A/../b /../../etc/x ./. //",
    b"\xff\xfe\xc3\xa9 \xe2\x82 invalid UTF-8",
    b"x" * 255,
    b"$(touch /run/hostile-pwned) `id` %k $kernel %% $$ ${HOME}",
    b"  lead and trail \t ",
    b"*?[evil] \\x2f \\",
    b"pre\0post",
    b"\n",
]


def set_alias(ifname, value):
    with open("/sys/class/net/%s/ifalias" % ifname, "wb") as f:
        f.write(value)


def hva_props(e):
    return {k: v for k, v in e.props.items() if k.startswith("HA_")}


def test_hostile_attribute_values(tmp_path, udevd_factory, udevadm, net, udev_mon):
    """A veth whose ifalias holds control characters, path tricks, invalid
    UTF-8, shell syntax, format specifiers, glob characters, a NUL or the
    maximum length, read through $attr{}, %s{}, ATTR{}== and passed to
    programs; plus attributes whose read fails (EOPNOTSUPP, EINVAL), absent
    ones and path escapes: the daemon's result for each change event equals
    systemd 252's udevadm test on the same device, nothing is executed from
    the value, and the daemon keeps going."""
    rdir = tmp_path / "rules"
    os.makedirs(str(rdir))
    with open(str(rdir / "50-hostile.rules"), "w") as f:
        f.write(ATTR_RULES)
    udevd_factory("--children-max=4", "--rules-dir=%s" % rdir)
    net.add_veth("hva0", "hvb0")
    assert udev_mon.wait_for(lambda e: e.devpath == NET + "hva0" and e.action == "add",
                             timeout=20)
    sd = [t for t in tools(udevadm) if t[0] == "systemd"]
    for value in ALIASES:
        set_alias("hva0", value)
        mark = udev_mon.mark()
        with open("/sys/class/net/hva0/uevent", "w") as f:
            f.write("change")
        got = udev_mon.wait_for(lambda e: e.devpath == NET + "hva0" and e.action == "change",
                                timeout=20, since=mark)
        assert got, "no change event for alias %r" % value
        assert got[0].errors == []
        ours = hva_props(got[0])
        print("alias %r -> %r" % (value, ours))
        assert ours["HA_K"] == "hva0"
        assert "HA_PPI_SET" not in ours and "HA_SPEED" in ours
        with open("/run/hostile-run-hva0", "rb") as f:
            ran = f.read().decode("utf-8", "surrogateescape")
        assert ran == ours.get("HA_RAW", ""), (value, ran)
        if sd:
            _, props, _, err, _ = udevadm_test(sd[0], {"50-hostile.rules": str(rdir /
                                                                           "50-hostile.rules")},
                                               NET + "hva0", action="change")
            theirs = {k: v for k, v in props.items() if k.startswith("HA_")}
            assert ours == theirs, "alias %r:\n tudev   %r\n systemd %r" % (value, ours, theirs)
    assert not os.path.exists("/run/hostile-pwned")


# ----------------------------------------------------------------- program output

PROGRAM_RULES = r'''
KERNEL=="hpa*", PROGRAM="/usr/bin/printf 'a\000b\n'", ENV{HP_NUL}="%c"
KERNEL=="hpa*", PROGRAM="/usr/bin/printf 'no newline'", ENV{HP_NONL}="%c"
KERNEL=="hpa*", PROGRAM="/usr/bin/printf '\001\002\377\033[31m\tx\ny\r\n\n\n'", ENV{HP_BIN}="%c"
KERNEL=="hpa*", PROGRAM="/bin/sh -c 'yes a | head -c 40000 | tr -d \\n'", ENV{HP_BIG}="%c", ENV{HP_BIG_RAN}="1"
KERNEL=="hpa*", PROGRAM="/bin/sh -c 'yes a | head -c 1000 | tr -d \\n'", ENV{HP_500}="%c"
KERNEL=="hpa*", PROGRAM="/bin/sh -c 'yes a | head -c 1000 | tr -d \\n'", RESULT=="aaaa*", ENV{HP_RESULT}="1"
KERNEL=="hpa*", PROGRAM="/bin/sh -c 'yes \"$(printf \"\\001\\377\")\" | head -c 40000'", ENV{HP_JUNK}="ok"
KERNEL=="hpa*", PROGRAM="/bin/sh -c 'yes \"$(printf \"\\033\\377\")\" | head -c 2000000 >&2; echo fine'", ENV{HP_STDERR}="%c"
KERNEL=="hpa*", PROGRAM="/usr/bin/yes", ENV{HP_YES}="matched"
KERNEL=="hpa*", PROGRAM="/bin/sh -c 'sleep 30 & echo detached'", ENV{HP_BG}="%c"
KERNEL=="hpa*", PROGRAM="/bin/sh -c 'exec >&-; sleep 0.1'", ENV{HP_CLOSED}="ran:%c"
KERNEL=="hpa*", IMPORT{program}="/usr/bin/printf 'HP_I_A=1\000HP_I_B=2\nHP_I_C=3'"
KERNEL=="hpa*", IMPORT{program}="/usr/bin/printf 'HP_I_D=\001\002\377\nHP_I_E=x\ty\n=novalue\nnokey\nHP_I_F=\"q\"\nHP_I_G\n'"
KERNEL=="hpa*", IMPORT{program}="/bin/sh -c 'printf HP_I_BIG=; yes b | head -c 40000 | tr -d \\n; printf \"\\nHP_I_AFTER=1\\n\"'"
KERNEL=="hpa*", IMPORT{program}="/bin/sh -c 'yes HP_I_MANY=1 | head -c 40000'"
KERNEL=="hpa*", IMPORT{program}="/bin/sh -c 'printf HP_I_LAST=1'"
KERNEL=="hpa*", ENV{HP_DONE}="1"
'''


def test_hostile_program_output(tmp_path, udevd_factory, udevadm, net, udev_mon):
    """PROGRAM and IMPORT{program} output with NUL bytes, no trailing
    newline, control characters and invalid UTF-8, more than the 16 KiB
    buffer, 2 MB on stderr, endless output (yes), a background child that
    keeps stdout open, stdout closed early: the event completes in bounded
    time, the daemon's properties equal systemd 252's udevadm test, and the
    daemon serves the next event."""
    rdir = tmp_path / "rules"
    os.makedirs(str(rdir))
    path = str(rdir / "50-hostile.rules")
    with open(path, "w") as f:
        f.write(PROGRAM_RULES)
    d = udevd_factory("--children-max=4", "--rules-dir=%s" % rdir)
    t0 = time.monotonic()
    net.add_veth("hpa0", "hpb0")
    got = udev_mon.wait_for(lambda e: e.devpath == NET + "hpa0" and e.action == "add",
                            timeout=60)
    took = time.monotonic() - t0
    print("event took %.2fs" % took)
    assert got, d.log_tail()
    assert got[0].errors == []
    assert took < 20, "the event took %.1fs" % took
    ours = {k: v for k, v in got[0].props.items() if k.startswith("HP_")}
    print(sorted(ours))
    assert "UDEV_WORKER_FAILED" not in got[0].props
    assert ours["HP_DONE"] == "1" and ours["HP_BIG_RAN"] == "1"
    assert ours["HP_NUL"] == "a" and ours["HP_NONL"] == "no newline"
    assert ours["HP_BG"] == "detached" and ours["HP_I_LAST"] == "1"
    assert "HP_YES" not in ours
    for tool in tools(udevadm):
        t0 = time.monotonic()
        _, props, _, err, _ = udevadm_test(tool, {"50-hostile.rules": path}, NET + "hpa0")
        print("%s udevadm test: %.2fs" % (tool[0], time.monotonic() - t0))
        assert time.monotonic() - t0 < 20
        theirs = {k: v for k, v in props.items() if k.startswith("HP_")}
        assert ours == theirs, "%s:\n daemon %r\n test   %r" % (tool[0], ours, theirs)
    mark = udev_mon.mark()
    net.add_veth("hpc0", "hpd0")
    assert udev_mon.wait_for(lambda e: e.devpath == NET + "hpc0", timeout=20, since=mark)
    assert d.alive()


# ----------------------------------------------------------------- forged netlink messages

NOBODY_SEND = r'''
import socket, sys
s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 15)
s.bind((0, 0))
res = []
for group in (1, 2):
    try:
        s.sendto(b"add@/devices/virtual/nobody\0ACTION=add\0DEVPATH=/devices/virtual/nobody\0"
                 b"SUBSYSTEM=tudevtest\0SEQNUM=1\0", (0, group))
        res.append("sent")
    except OSError as e:
        res.append(e.errno)
print(res)
'''

FORGED = "/devices/virtual/tudevhostile"


def forger():
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW | socket.SOCK_CLOEXEC,
                      NETLINK_KOBJECT_UEVENT)
    for _ in range(50):
        try:
            s.bind((random.randint(0x10000000, 0x7ffffff0), 0))
            return s
        except OSError:
            continue
    raise RuntimeError("no free netlink port id")


def kernel_msg(action, devpath, props, header=None):
    head = header if header is not None else ("%s@%s" % (action, devpath)).encode()
    return head + b"\0" + b"".join(k.encode() + b"=" + v + b"\0" for k, v in props)


def libudev_msg(props):
    """A datagram in libudev's format (src/proto/monitor-msg.h), as udevd sends."""
    import struct
    body = b"".join(k.encode() + b"=" + v + b"\0" for k, v in props)
    return (b"libudev\0" + b"\xfe\xed\xca\xfe" + struct.pack("<III", 40, 40, len(body)) +
            bytes(16) + body)


def test_forged_from_user_space(udevd_factory, udev_mon, net, kernel_mon):
    """Group 1 and 2 from user space: a non-root process cannot send to
    either group (the kernel refuses); a root process's messages in kernel or
    libudev format on group 1 are dropped as forged; messages on group 2 never
    reach the daemon (it only sends there)."""
    r = run(as_nobody(["/usr/bin/python3", "-c", NOBODY_SEND]))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[1, 1]", "a non-root process could send: %s" % r.stdout

    d = udevd_factory("--children-max=4")
    seq = kernel_seqnum() + 3000000
    valid = [("ACTION", b"add"), ("DEVPATH", FORGED.encode() + b"/g"), ("SUBSYSTEM", b"tudevtest"),
             ("SEQNUM", str(seq).encode())]
    f = forger()
    try:
        f.sendto(kernel_msg("add", FORGED + "/g", valid), (0, 1))
        f.sendto(libudev_msg([("UDEV_DATABASE_VERSION", b"1")] + valid), (0, 1))
        f.sendto(libudev_msg([("UDEV_DATABASE_VERSION", b"1")] + valid), (0, 2))
        f.sendto(kernel_msg("add", FORGED + "/g", valid), (0, 2))
    finally:
        f.close()
    veth_flows(net, kernel_mon, udev_mon, "hga0", "hgb0")
    # the two group-2 messages were seen by our own listener, sent by nobody else
    forged = udev_mon.matching(lambda e: (e.devpath or "").startswith(FORGED))
    assert all(e.sender[0] != 0 for e in forged)
    assert len(forged) == 2, forged
    assert not any(f.startswith("+tudevtest") for f in os.listdir("/run/udev/data")) \
        if os.path.isdir("/run/udev/data") else True
    d.stop()
    assert d.stats()["forged"] == 2, d.stats()


def more_malformed(seq):
    """Kernel-format messages the parser must reject, beyond test_forged.py's."""
    def p(n):
        return "%s/x%d" % (FORGED, n)

    def base(n, extra=(), action="add", devpath=None):
        return [("ACTION", action.encode()), ("DEVPATH", (devpath or p(n)).encode()),
                ("SUBSYSTEM", b"tudevtest"), ("SEQNUM", str(seq + n).encode())] + list(extra)

    up = "/devices/../../run/hostile"
    return [
        ("devpath ..", kernel_msg("add", up, base(1, devpath=up))),
        ("devpath //", kernel_msg("add", FORGED + "//x2", base(2, devpath=FORGED + "//x2"))),
        ("DEVPATH_OLD ..", kernel_msg("move", p(3), base(3, [("DEVPATH_OLD", b"/devices/../x")],
                                                        action="move"))),
        ("DEVNAME outside /dev", kernel_msg("add", p(4), base(4, [
            ("MAJOR", b"1"), ("MINOR", b"3"), ("DEVNAME", b"/run/hostile-decoy")]))),
        ("DEVNAME /dev/..", kernel_msg("add", p(5), base(5, [
            ("MAJOR", b"1"), ("MINOR", b"3"), ("DEVNAME", b"/dev/../run/hostile-decoy")]))),
        ("SEQNUM overflow", kernel_msg("add", p(6), base(6)[:3] +
                                       [("SEQNUM", b"18446744073709551616")])),
        ("SEQNUM negative", kernel_msg("add", p(7), base(7)[:3] + [("SEQNUM", b"-5")])),
        ("MAJOR overflow", kernel_msg("add", p(8), base(8, [("MAJOR", b"4294967296"),
                                                            ("MINOR", b"1")]))),
        ("IFINDEX junk", kernel_msg("add", p(9), base(9, [("IFINDEX", b"1x")]))),
        ("SUBSYSTEM with /", kernel_msg("add", p(10), base(10)[:2] + [
            ("SUBSYSTEM", b"../../etc"), ("SEQNUM", str(seq + 10).encode())])),
        ("libudev header", libudev_msg(base(11))),
        ("NUL header", kernel_msg("add", p(12), base(12), header=b"")),
        ("all NUL", bytes(2048)),
    ]


def test_more_malformed_uevents(udevd_factory, udev_mon, tmp_path):
    """With --test-accept-user-uevents: path tricks in DEVPATH, DEVPATH_OLD
    and DEVNAME, number overflows, a libudev-format datagram, NUL-only data:
    every one rejected (counted as malformed), nothing touched outside /dev,
    and a valid message with odd property values (newline, control
    characters, 4 KiB) still processed."""
    decoy = "/run/hostile-decoy"
    os.mknod(decoy, 0o600 | 0o020000, os.makedev(1, 3))
    rdir = tmp_path / "rules"
    os.makedirs(str(rdir))
    with open(str(rdir / "50-all.rules"), "w") as f:
        f.write('SUBSYSTEM=="tudevtest", MODE="0666", OWNER="65534", SYMLINK+="hostile/%k", '
                'ENV{HM_SEEN}="1"\n')
    d = udevd_factory("--children-max=4", "--test-accept-user-uevents",
                      "--rules-dir=%s" % rdir)
    seq = kernel_seqnum() + 4000000
    cases = more_malformed(seq)
    valid = FORGED + "/valid"
    odd = [("HM_NL", b"a\nb"), ("HM_CTRL", b"\x01\x1b[31m\x7f"), ("HM_LONG", b"v" * 4096),
           ("HM_UTF8", b"\xff\xfe")]
    f = forger()
    try:
        for _, data in cases:
            f.sendto(data, (0, 1))
        f.sendto(kernel_msg("add", valid, [("ACTION", b"add"), ("DEVPATH", valid.encode()),
                                           ("SUBSYSTEM", b"tudevtest"),
                                           ("SEQNUM", str(seq + 100).encode())] + odd), (0, 1))
    finally:
        f.close()
    got = udev_mon.wait_for(lambda e: e.devpath == valid, timeout=20)
    assert got, d.log_tail()
    props = got[0].props
    assert props["HM_SEEN"] == "1"
    # (the uevent parser cuts a value at a newline)
    assert props["HM_NL"] in ("a", "a\nb") and props["HM_LONG"] == "v" * 4096
    assert props["HM_CTRL"] == "\x01\x1b[31m\x7f"
    time.sleep(0.3)
    accepted = udev_mon.matching(lambda e: (e.devpath or "").startswith(FORGED) and
                                 e.devpath != valid)
    assert accepted == [], accepted
    st = os.stat(decoy)
    assert (st.st_mode & 0o7777, st.st_uid) == (0o600, 0), "decoy node was changed"
    assert not os.path.lexists("/run/hostile")
    assert d.alive()
    d.stop()
    assert d.stats()["malformed"] >= len(cases), (d.stats(), len(cases))
