# SPDX-License-Identifier: GPL-2.0-or-later
"""The rules case table (tests/rules-cases/cases_*.py) run through
`udevadm test --action=ACTION --apply` over the fake sysfs tree of
tests/rules-cases/fakesys_tree.py, and, for the same cases, through systemd
252's `udevadm test` (which in v252 applies symlinks, permissions, the DB and
tags for real, but runs no RUN program).

Each tool runs all cases in ONE private mount namespace (`unshare -m`): the
fake tree bound over /sys, a tmpfs /run and /dev (with /dev/null), tmpfs over
every rules directory, a file bound over /proc/cmdline; before each case
/run/udev and /dev are emptied and the case's rules written to
/etc/udev/rules.d/50-test.rules (tudev reads it through --rules-dir). For
systemd the device node is created first (mknod 0600 root:root, as devtmpfs
would), and removed after a remove event.

A case (a dict; see tests/rules-cases/README.md) holds the rules text, the
device (short name of fakesys_tree.DEV), the action, optional earlier events
and shell set-up, and expectations: props (value, or None = absent), links
({link: readlink target or None = absent}), node (uid, gid, mode), run (the
`run:` list), db (lines present / "!line" absent), files (files written by
RUN programs, tudev only). Unless the case says sd="reason" (a deliberate
difference or something v252 cannot show), systemd's properties, run list,
/dev + /run/udev tree and DB record must equal ours too.
"""

import glob
import importlib.util
import os
import shlex
import subprocess
import tempfile

import pytest

import tudevlib

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CASEDIR = os.path.join(REPO, "tests", "rules-cases")
SEP = "@@@TUDEV-RULES-CASE@@@"
CMDLINE = "quiet tudev.flag tudev.val=abc root=/dev/sda1 'tudev.q=x y'\n"
KEYS = {"name", "rules", "dev", "action", "pre", "pre_sh", "props", "links", "node", "run",
        "db", "files", "sd", "rc", "post_sh", "post"}


def _load(path):
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def load_cases():
    tree = _load(os.path.join(CASEDIR, "fakesys_tree.py"))
    cases = []
    for path in sorted(glob.glob(os.path.join(CASEDIR, "cases_*.py"))):
        topic = os.path.basename(path)[6:-3]
        for c in _load(path).CASES:
            bad = set(c) - KEYS
            assert not bad, "%s: %s: unknown keys %s" % (path, c.get("name"), bad)
            c = dict(c)
            c["id"] = "%s/%s" % (topic, c["name"])
            cases.append(c)
    ids = [c["id"] for c in cases]
    assert len(ids) == len(set(ids)), "duplicate case names"
    return tree, cases


TREE, CASES = load_cases()


def devnode_of(sysroot, devpath):
    """(path, 'b'|'c', major, minor) from the fake tree's uevent, or None."""
    kv = {}
    with open(os.path.join(sysroot, devpath.lstrip("/"), "uevent")) as f:
        for line in f:
            k, _, v = line.rstrip("\n").partition("=")
            kv[k] = v
    if "DEVNAME" not in kv:
        return None
    kind = "b" if "/block/" in devpath else "c"
    return "/dev/" + kv["DEVNAME"], kind, int(kv["MAJOR"]), int(kv["MINOR"])


def event_sh(tool, udevadm, sysroot, action, dev):
    devpath = TREE.DEV[dev]
    if tool == "tudev":
        return ("%s test --rules-dir=/etc/udev/rules.d --action=%s --apply %s"
                % (udevadm, action, shlex.quote(devpath)))
    node = devnode_of(sysroot, devpath)
    pre = post = ""
    if node and action != "remove":
        pre = ("[ -e %s ] || { mkdir -p %s; mknod -m 0600 %s %s %d %d; }; "
               % (node[0], os.path.dirname(node[0]), node[0], node[1], node[2], node[3]))
    if node and action == "remove":
        post = "; rm -f %s" % node[0]
    return "%s%s test --action=%s %s%s" % (pre, udevadm, action, shlex.quote(devpath), post)


def script(tool, udevadm, sysroot, tmp, indices):
    cmdline = os.path.join(tmp, "cmdline")
    with open(cmdline, "w") as f:
        f.write(CMDLINE)
    s = ["set -u",
         "mount --bind %s /sys" % sysroot,
         "mount --bind %s /proc/cmdline" % cmdline,
         "mount -t tmpfs tmpfs /run",
         ": > /run/null; mount --bind /dev/null /run/null",
         "mount -t tmpfs tmpfs /dev",
         ": > /dev/null; mount --bind /run/null /dev/null",
         "mkdir -p /etc/udev/rules.d",
         "for d in /etc/udev/rules.d /run/udev/rules.d /usr/lib/udev/rules.d "
         "/usr/local/lib/udev/rules.d /lib/udev/rules.d; do",
         "  [ -d $d ] && mount -t tmpfs tmpfs $d",
         "done",
         "export SYSTEMD_DEVICE_VERIFY_SYSFS=0 SYSTEMD_LOG_LEVEL=debug SYSTEMD_LOG_COLOR=0"]
    for i in indices:
        c = CASES[i]
        s.append("echo %s%d; echo %s%d >&2" % (SEP, i, SEP, i))
        # as few processes per case as possible: exec is slow on the test VMs
        s.append("set -- /run/udev /run/ut; for f in /dev/* /dev/.[!.]*; do "
                 "[ -e \"$f\" ] && [ \"$f\" != /dev/null ] && set -- \"$@\" \"$f\"; done; "
                 "rm -rf \"$@\"; mkdir -p /run/udev /run/ut")
        s.append("printf '%%s\\n' %s > /etc/udev/rules.d/50-test.rules"
                 % shlex.quote(c["rules"].strip("\n")))
        if c.get("pre_sh"):
            s.append(c["pre_sh"])
        for action, dev in c.get("pre", ()):
            s.append(event_sh(tool, udevadm, sysroot, action, dev) + " >/dev/null 2>&1")
        s.append(event_sh(tool, udevadm, sysroot, c.get("action", "add"), c["dev"]) +
                 " >/run/ut/out; echo \"rc=$?\" >> /run/ut/out")
        for action, dev in c.get("post", ()):
            s.append(event_sh(tool, udevadm, sysroot, action, dev) + " >/dev/null 2>&1")
        if c.get("post_sh"):
            s.append(c["post_sh"])
        s.append("while IFS= read -r l; do printf '%s\\n' \"$l\"; done < /run/ut/out; "
                 "echo '@@STATE'")
        s.append("find /dev /run/udev -mindepth 1 ! -path /dev/null "
                 "-printf '%p|%y|%l|%m|%U|%G\\n' -o -path /run/udev/data/* -printf '@@DBF %p\\n'")
        s.append("for f in /run/udev/data/*; do [ -f \"$f\" ] && "
                 "while IFS= read -r l || [ -n \"$l\" ]; do echo \"@@DB $f $l\"; done < \"$f\"; "
                 "done")
        for f in sorted(c.get("files", {})):
            s.append("if [ -e %s ]; then read -r l < %s; else l='<missing>'; fi; "
                     "echo \"@@FILE %s $l\"" % (f, f, f))
    return "\n".join(s) + "\n"


def parse(out):
    """One case's stdout -> dict(rc, props, run, state, db, files)."""
    body, _, rest = out.partition("@@STATE\n")
    props, runs, rc = {}, [], None
    for line in body.splitlines():
        if line.startswith("rc="):
            rc = int(line[3:])
        elif line.startswith("run: "):
            runs.append(line[5:])
        elif "=" in line and not line.startswith(("This program", "specified", "some values")):
            k, _, v = line.partition("=")
            props[k] = v
    state, db, files = [], {}, {}
    for line in rest.splitlines():
        if line.startswith("@@DB "):
            f, _, v = line[5:].partition(" ")
            db.setdefault(f, []).append(v)
        elif line.startswith("@@FILE "):
            f, _, v = line[7:].partition(" ")
            files[f] = v
        elif line.startswith("@@DBF "):
            pass
        elif line:
            state.append(line)
    state.sort()
    return {"rc": rc, "props": props, "run": runs, "state": state, "db": db, "files": files}


def start_chunk(tool, udevadm, indices):
    tmp = tempfile.mkdtemp(prefix="tudev-rules-table-")
    TREE.build(tmp)
    p = subprocess.Popen(["unshare", "-m", "--propagation", "private", "sh", "-c",
                          script(tool, udevadm, os.path.join(tmp, "sys"), tmp, indices)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return tmp, indices, p


def collect_chunk(tmp, indices, p, res):
    try:
        stdout, stderr = p.communicate(timeout=300)
    finally:
        subprocess.run(["rm", "-rf", tmp], check=False)
    out = stdout.decode("utf-8", "surrogateescape").split(SEP)
    err = stderr.decode("utf-8", "surrogateescape").split(SEP)
    assert len(out) == len(indices) + 1, "namespace script failed: %s" % err[0][-3000:]
    for j, i in enumerate(indices):
        o = out[j + 1].split("\n", 1)[1]
        e = err[j + 1].split("\n", 1)[1] if j + 1 < len(err) else ""
        r = parse(o)
        r["stderr"] = e
        res[i] = r


def run_tools(tools):
    """tools: [(name, udevadm)]; each tool's cases in JOBS parallel namespaces
    (each with its own copy of the tree: ATTR{}= cases write to it)."""
    jobs = max(1, min(8, os.cpu_count() or 1))
    chunks = [list(range(len(CASES)))[k::jobs] for k in range(jobs)]
    running = [(name, start_chunk(name, u, ch)) for name, u in tools for ch in chunks if ch]
    results = {name: [None] * len(CASES) for name, _ in tools}
    for name, (tmp, indices, p) in running:
        collect_chunk(tmp, indices, p, results[name])
    return results


@pytest.fixture(scope="module")
def results(udevadm):
    tools = [("tudev", udevadm)]
    if os.access(tudevlib.SD_UDEVADM, os.X_OK):
        tools.append(("systemd", tudevlib.SD_UDEVADM))
    return run_tools(tools)


@pytest.fixture(scope="module")
def ours(results):
    return results["tudev"]


@pytest.fixture(scope="module")
def theirs(results, sd_udevadm):
    return results["systemd"]


def test_case_count():
    assert len(CASES) >= 150


def link_target(state, link):
    for line in state:
        path, kind, target = line.split("|")[:3]
        if path == "/dev/" + link:
            return target if kind == "l" else "<%s>" % kind
    return None


def node_perm(state, node):
    for line in state:
        f = line.split("|")
        if f[0] == node and f[1] in ("b", "c"):
            return (int(f[4]), int(f[5]), f[3])
    return None


def check_expectations(c, r):
    errs = []
    if r["rc"] != c.get("rc", 0):
        errs.append("exit status %s, expected %s" % (r["rc"], c.get("rc", 0)))
    for k, v in c.get("props", {}).items():
        if r["props"].get(k) != v:
            errs.append("property %s=%r, expected %r" % (k, r["props"].get(k), v))
    for link, target in c.get("links", {}).items():
        got = link_target(r["state"], link)
        if got != target:
            errs.append("link /dev/%s -> %r, expected %r" % (link, got, target))
    if "node" in c:
        node = devnode_of_tree(c["dev"])
        got = node_perm(r["state"], node)
        if got != tuple(c["node"]):
            errs.append("node %s uid/gid/mode %r, expected %r" % (node, got, tuple(c["node"])))
    if "run" in c and r["run"] != c["run"]:
        errs.append("run list %r, expected %r" % (r["run"], c["run"]))
    lines = [line for v in r["db"].values() for line in v]
    for d in c.get("db", ()):
        if d.startswith("!"):
            if any(line == d[1:] or (d.endswith("*") and line.startswith(d[1:-1]))
                   for line in lines):
                errs.append("DB has %r" % d[1:])
        elif d not in lines:
            errs.append("DB lacks %r (has %r)" % (d, lines))
    return errs


_NODES = {}


def devnode_of_tree(dev):
    if dev not in _NODES:
        with tempfile.TemporaryDirectory() as tmp:
            TREE.build(tmp)
            _NODES.update({k: (devnode_of(os.path.join(tmp, "sys"), p) or (None,))[0]
                           for k, p in TREE.DEV.items()})
    return _NODES[dev]


@pytest.mark.parametrize("idx", range(len(CASES)), ids=[c["id"] for c in CASES])
def test_case(idx, ours):
    c, r = CASES[idx], ours[idx]
    errs = check_expectations(c, r)
    for k, v in c.get("files", {}).items():
        if r["files"].get(k) != v:
            errs.append("file %s: %r, expected %r" % (k, r["files"].get(k), v))
    san = tudevlib.sanitizer_reports(r["stderr"])
    assert not san and not errs, "\n".join(errs + san) + "\n--- stdout props %r\n--- state\n%s" \
        "\n--- db %r\n--- stderr\n%s" % (r["props"], "\n".join(r["state"]), r["db"],
                                        r["stderr"][-4000:])


def normalised(r):
    props = dict(r["props"])
    props.pop("USEC_INITIALIZED", None)
    for k in ("TAGS", "CURRENT_TAGS"):
        if k in props:
            props[k] = sorted(props[k].strip(":").split(":"))
    if "DEVLINKS" in props:
        props["DEVLINKS"] = sorted(props["DEVLINKS"].split())
    db = {f: sorted(line for line in v if not line.startswith("I:"))
          for f, v in r["db"].items()}
    return {"props": props, "run": r["run"], "state": r["state"], "db": db}


@pytest.mark.parametrize("idx", range(len(CASES)), ids=[c["id"] for c in CASES])
def test_case_like_systemd(idx, ours, theirs):
    c, o, t = CASES[idx], ours[idx], theirs[idx]
    if c.get("sd"):
        pytest.skip("deliberate difference: " + c["sd"])
    no, nt = normalised(o), normalised(t)
    diffs = ["%s: tudev %r\n   systemd %r" % (k, no[k], nt[k]) for k in no if no[k] != nt[k]]
    assert not diffs, "\n".join(diffs) + "\n--- systemd stderr\n" + t["stderr"][-3000:]
