# SPDX-License-Identifier: GPL-2.0-or-later
"""Run `udevadm test-builtin` of tudev and of systemd 252 over the same tree.

Each tool runs in its own private mount namespace (`unshare -m`) with:
  * the fake sysfs tree bind-mounted on /sys (or the real /sys if sysroot=None),
  * a directory holding the reference hwdb.bin bind-mounted on /etc/udev, so
    both read the same hwdb,
  * optional extra bind mounts (e.g. .link directories),
  * SYSTEMD_DEVICE_VERIFY_SYSFS=0 (systemd otherwise refuses a tree that is
    not sysfs), SYSTEMD_PROC_CMDLINE (both read the kernel command line from
    it; default empty) and SYSTEMD_LOG_LEVEL=debug (stderr, for diagnosis).

All cases of one call run in one namespace (one shell loop), so a suite of
hundreds of cases costs two namespaces. Needs root (the tests run under
tests/sandbox).
"""

import os
import shlex
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tests", "integration"))

import tudevlib  # noqa: E402

SEP = "@@@TUDEV-CASE@@@"


def sd_udevadm():
    return tudevlib.SD_UDEVADM


def our_udevadm():
    return os.path.join(tudevlib.build_dir(), "udevadm")


def sd_root():
    """The unpacked Debian package root (its etc/udev/hwdb.bin)."""
    return os.path.dirname(os.path.dirname(sd_udevadm()))


def hwdb_etc_dir(tmpdir):
    """A directory with hwdb.bin to bind-mount on /etc/udev; built once from the
    reference package with its own systemd-hwdb if missing."""
    src = os.path.join(sd_root(), "etc", "udev", "hwdb.bin")
    if not os.path.exists(src):
        hwdb_tool = os.path.join(sd_root(), "bin", "systemd-hwdb")
        subprocess.run([hwdb_tool, "update", "--root=" + sd_root()], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    d = os.path.join(tmpdir, "etc-udev")
    os.makedirs(d, exist_ok=True)
    shutil.copy(src, os.path.join(d, "hwdb.bin"))
    return d


def run_cases(udevadm, cases, sysroot=None, etc_udev=None, binds=(), cmdline="", env=None,
              timeout=120):
    """cases: [(command, devpath[, action]), ...]. Returns [(rc, stdout, stderr), ...]
    with rc 0/1 as udevadm exits."""
    script = ["set -u"]
    if sysroot:
        script.append("mount --bind %s /sys" % shlex.quote(sysroot))
    if etc_udev:
        script.append("mount --bind %s /etc/udev" % shlex.quote(etc_udev))
    for src, dst in binds:
        script.append("mount --bind %s %s" % (shlex.quote(src), shlex.quote(dst)))
    for i, case in enumerate(cases):
        cmd, devpath = case[:2]
        action = "-a %s " % shlex.quote(case[2]) if len(case) > 2 else ""
        script.append("echo %s%d >&2; echo %s%d" % (SEP, i, SEP, i))
        script.append("%s test-builtin %s%s %s; echo \"rc=$?\"" %
                      (shlex.quote(udevadm), action, shlex.quote(cmd), shlex.quote(devpath)))
    e = dict(os.environ)
    e.update({"SYSTEMD_DEVICE_VERIFY_SYSFS": "0", "SYSTEMD_PROC_CMDLINE": cmdline,
              "SYSTEMD_LOG_LEVEL": "debug", "SYSTEMD_LOG_COLOR": "0", "LC_ALL": "C"})
    e.pop("NET_NAMING_SCHEME", None)
    if env:
        e.update(env)
    p = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c",
                        "\n".join(script)], env=e, capture_output=True, timeout=timeout)
    out = p.stdout.decode("utf-8", "surrogateescape").split(SEP)
    err = p.stderr.decode("utf-8", "surrogateescape").split(SEP)
    if len(out) != len(cases) + 1:
        raise RuntimeError("namespace script failed (rc %d): %s" % (p.returncode, err[0][-2000:]))
    res = []
    for i in range(len(cases)):
        body = out[i + 1].split("\n", 1)[1] if "\n" in out[i + 1] else ""
        lines = body.rstrip("\n").split("\n")
        rc = int(lines[-1][3:]) if lines and lines[-1].startswith("rc=") else -1
        stdout = "\n".join(lines[:-1])
        stdout = stdout + "\n" if stdout else ""
        stderr = err[i + 1].split("\n", 1)[1] if i + 1 < len(err) and "\n" in err[i + 1] else ""
        res.append((rc, stdout, stderr))
    return res


def compare(cases, sysroot=None, expected_diffs=None, **kw):
    """Run both tools (ours first: systemd's net_setup_link changes the
    interface); return (failures, ours, ref) where failures is a list of
    human-readable differences (empty = all equal or listed in expected_diffs
    {case tuple: reason})."""
    expected_diffs = expected_diffs or {}
    with tempfile.TemporaryDirectory(prefix="tudev-oracle-") as tmp:
        etc = kw.pop("etc_udev", None) or hwdb_etc_dir(tmp)
        ours = run_cases(our_udevadm(), cases, sysroot=sysroot, etc_udev=etc, **kw)
        ref = run_cases(sd_udevadm(), cases, sysroot=sysroot, etc_udev=etc, **kw)
    failures = []
    for case, o, r in zip(cases, ours, ref):
        same = (o[0] == 0) == (r[0] == 0) and o[1] == r[1]
        listed = tuple(case) in expected_diffs
        name = " ".join(case)
        if same and listed:
            failures.append("%s: listed as a difference (%s) but now equal" %
                            (name, expected_diffs[tuple(case)]))
        elif not same and not listed:
            failures.append("%s differs:\n--- systemd (rc %d)\n%s--- tudev (rc %d)\n%s"
                            "--- tudev stderr\n%s--- systemd stderr\n%s" %
                            (name, r[0], r[1], o[0], o[1], o[2][-3000:], r[2][-3000:]))
    return failures, ours, ref
