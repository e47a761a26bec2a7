# SPDX-License-Identifier: GPL-2.0-or-later
"""Run commands against fake /sys trees in a private mount namespace.

    nsrun.py < plan.json > results.json

The plan is a list of groups:

    {"sys": DIR,                 bind-mounted over /sys
     "etc_udev": DIR or null,    bind-mounted over /etc/udev (hwdb.bin)
     "dev_nodes": [PATH...],     real nodes bind-mounted into the private /dev
     "dev_files": {REL: MODE},   regular files under /dev standing in for nodes
     "run_files": {REL: TEXT},   files under the private /run
     "cmds": [{"argv": [...], "env": {...}}...],
     "snapshot": [PATH...]}      read after the commands (content; for /dev
                                 paths also mode and POSIX ACL xattr)

For each group: a fresh tmpfs on /run (with an empty /run/udev) and on /dev
(/dev/null plus dev_nodes and dev_files), then the binds; everything is
unmounted again before the next group. The process first moves itself into
a new mount namespace (unshare(CLONE_NEWNS), then makes every mount private)
and checks that it did, so nothing outside that namespace is ever touched.
Output: a list with, per group, {"results": [{"rc","stdout","stderr"}...],
"snapshot": {PATH: value}}. SYSTEMD_DEVICE_VERIFY_SYSFS=0 is set for every
command so that systemd's sd-device accepts a tree that is not on sysfs.
"""

import ctypes
import json
import os
import subprocess
import sys

CLONE_NEWNS = 0x00020000
MS_BIND, MS_REC, MS_PRIVATE = 4096, 16384, 1 << 18
MNT_DETACH = 2

libc = ctypes.CDLL(None, use_errno=True)


def check(r, what):
    if r != 0:
        e = ctypes.get_errno()
        raise OSError(e, "%s: %s" % (what, os.strerror(e)))


def mount(src, target, fstype=None, flags=0, data=None):
    check(libc.mount(src.encode() if src else None, target.encode(),
                     fstype.encode() if fstype else None, ctypes.c_ulong(flags),
                     data.encode() if data else None), "mount %s" % target)


def umount(target):
    check(libc.umount2(target.encode(), MNT_DETACH), "umount %s" % target)


def enter_namespace():
    before = os.readlink("/proc/self/ns/mnt")
    check(libc.unshare(CLONE_NEWNS), "unshare")
    if os.readlink("/proc/self/ns/mnt") == before:
        raise SystemExit("nsrun: not in a private mount namespace, refusing")
    mount(None, "/", None, MS_REC | MS_PRIVATE)


def touch(path, mode=0o644):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w"):
        pass
    os.chmod(path, mode)


def setup(g):
    mounts = []
    # /dev: stage the real nodes under the new /run first, then a new tmpfs
    mount("tmpfs", "/run", "tmpfs", 0, "mode=0755")
    mounts.append("/run")
    nodes = ["/dev/null"] + [n for n in g.get("dev_nodes", []) if os.path.exists(n)]
    stage = "/run/.nsrun-dev"
    for n in nodes:
        touch(stage + n)
        mount(n, stage + n, None, MS_BIND)
    mount("tmpfs", "/dev", "tmpfs", 0, "mode=0755")
    mounts.append("/dev")
    for n in nodes:
        touch(n)
        mount(stage + n, n, None, MS_BIND)
        umount(stage + n)
        mounts.append(n)
    for rel, mode in g.get("dev_files", {}).items():
        touch(os.path.join("/dev", rel), int(mode, 8))
    os.makedirs("/run/udev", exist_ok=True)
    for rel, text in g.get("run_files", {}).items():
        p = os.path.join("/run", rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(text)
    mount(g["sys"], "/sys", None, MS_BIND)
    mounts.append("/sys")
    if g.get("etc_udev"):
        mount(g["etc_udev"], "/etc/udev", None, MS_BIND)
        mounts.append("/etc/udev")
    return mounts


def snapshot(paths):
    out = {}
    for p in paths:
        try:
            with open(p, "rb") as f:
                out[p] = f.read().decode("latin-1")
        except OSError as e:
            out[p] = "error %d" % e.errno
        if p.startswith("/dev/"):
            try:
                out[p + "@acl"] = os.getxattr(p, "system.posix_acl_access").hex()
            except OSError as e:
                out[p + "@acl"] = "error %d" % e.errno
            try:
                out[p + "@mode"] = oct(os.stat(p).st_mode)
            except OSError as e:
                out[p + "@mode"] = "error %d" % e.errno
    return out


def run_group(g):
    mounts = setup(g)
    try:
        results = []
        for c in g["cmds"]:
            env = dict(os.environ)
            env["SYSTEMD_DEVICE_VERIFY_SYSFS"] = "0"
            env.update(c.get("env", {}))
            p = subprocess.run(c["argv"], env=env, capture_output=True, check=False)
            results.append({"rc": p.returncode,
                            "stdout": p.stdout.decode("utf-8", "replace"),
                            "stderr": p.stderr.decode("utf-8", "replace")})
        return {"results": results, "snapshot": snapshot(g.get("snapshot", []))}
    finally:
        for m in reversed(mounts):
            umount(m)


def main():
    plan = json.load(sys.stdin)
    enter_namespace()
    json.dump([run_group(g) for g in plan], sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
