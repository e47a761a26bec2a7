"""Run commands against a fake /sys in a private mount namespace.

    nsrun.py --sys DIR [--etc-udev DIR] [--dev-node PATH]... [--run-file REL:TEXT]...
             [--dev-file REL:MODE]... < commands.json

Re-executes itself under `unshare -m --propagation private`, then: bind-mounts
DIR over /sys, mounts a tmpfs on /run (an empty /run/udev) and on /dev (with
bind mounts of /dev/null and of each --dev-node that exists), bind-mounts
--etc-udev over /etc/udev (where both systemd's udevadm and ours find
hwdb.bin); creates each --run-file under /run and each --dev-file (a regular
file standing in for a device node) under /dev. Nothing outside the new
namespace is touched.

stdin: JSON list of {"argv": [...], "env": {...}}; stdout: JSON list of
{"rc", "stdout", "stderr"} in the same order. SYSTEMD_DEVICE_VERIFY_SYSFS=0 is
set for every command so that systemd's sd-device accepts a tree that is not
on a sysfs mount.
"""

import argparse
import json
import os
import subprocess
import sys


def outer(args):
    cmd = ["unshare", "-m", "--propagation", "private", sys.executable,
           os.path.abspath(__file__), "--inner"] + sys.argv[1:]
    p = subprocess.run(cmd, stdin=sys.stdin, check=False)
    return p.returncode


def mount(*a):
    subprocess.run(["mount"] + list(a), check=True)


def inner(args):
    me = os.readlink("/proc/self/ns/mnt")
    parent = os.readlink("/proc/%d/ns/mnt" % os.getppid())
    if me == parent:
        print("nsrun: not in a private mount namespace, refusing", file=sys.stderr)
        return 2
    dev_nodes = [n for n in args.dev_node if os.path.exists(n)]
    mount("--bind", args.sys, "/sys")
    mount("-t", "tmpfs", "-o", "mode=0755", "tmpfs", "/run")
    os.makedirs("/run/udev", exist_ok=True)
    stage = "/run/.dev"
    os.makedirs(stage)
    for n in ["/dev/null"] + dev_nodes:
        t = stage + n[len("/dev"):]
        os.makedirs(os.path.dirname(t), exist_ok=True)
        open(t, "w").close()
        mount("--bind", n, t)
    mount("-t", "tmpfs", "-o", "mode=0755", "tmpfs", "/dev")
    for n in ["/dev/null"] + dev_nodes:
        t = stage + n[len("/dev"):]
        os.makedirs(os.path.dirname(n), exist_ok=True)
        open(n, "w").close()
        mount("--move", t, n)
    for spec in args.run_file:
        rel, _, content = spec.partition(":")
        p = os.path.join("/run", rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(content.replace("\\n", "\n"))
    for spec in args.dev_file:
        rel, _, mode = spec.partition(":")
        p = os.path.join("/dev", rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        open(p, "w").close()
        os.chmod(p, int(mode or "0660", 8))
    if args.etc_udev:
        mount("--bind", args.etc_udev, "/etc/udev")
    cmds = json.load(sys.stdin)
    out = []
    for c in cmds:
        env = dict(os.environ)
        env["SYSTEMD_DEVICE_VERIFY_SYSFS"] = "0"
        env.update(c.get("env", {}))
        p = subprocess.run(c["argv"], env=env, capture_output=True, check=False)
        out.append({"rc": p.returncode,
                    "stdout": p.stdout.decode("utf-8", "replace"),
                    "stderr": p.stderr.decode("utf-8", "replace")})
    json.dump(out, sys.stdout)
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--inner", action="store_true")
    ap.add_argument("--sys", required=True)
    ap.add_argument("--etc-udev")
    ap.add_argument("--dev-node", action="append", default=[])
    ap.add_argument("--run-file", action="append", default=[],
                    help="REL:CONTENT, a file under the private /run ('\\n' = newline)")
    ap.add_argument("--dev-file", action="append", default=[],
                    help="REL:MODE, a regular file under the private /dev")
    args = ap.parse_args()
    return inner(args) if args.inner else outer(args)


if __name__ == "__main__":
    sys.exit(main())
