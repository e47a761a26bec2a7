# SPDX-License-Identifier: GPL-2.0-or-later
"""Run builtin cases with systemd 252's udevadm test-builtin and with ours,
each over its own copy of the fake sysfs tree, in private mount namespaces
(nsrun.py), and collect stdout, exit status and the files the builtins write."""

import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import cases as C  # noqa: E402
import fakesys  # noqa: E402

def build_hwdb(sd_root, source_root, dest_dir):
    """hwdb.bin compiled by systemd 252's systemd-hwdb from source_root's
    hwdb.d directories, copied to dest_dir/hwdb.bin. Returns dest_dir."""
    tmp = dest_dir + ".root"
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(source_root, tmp, symlinks=True)
    subprocess.run([os.path.join(sd_root, "bin", "systemd-hwdb"), "update", "--root=" + tmp],
                   check=True, capture_output=True)
    os.makedirs(dest_dir, exist_ok=True)
    shutil.copy(os.path.join(tmp, "etc", "udev", "hwdb.bin"), dest_dir)
    shutil.rmtree(tmp)
    return dest_dir


def debian_hwdb(sd_root, dest_dir):
    """Debian's hwdb.bin: build-ref/sd-udev/etc/udev/hwdb.bin, compiled once
    from the package's hwdb.d if missing."""
    src = os.path.join(sd_root, "etc", "udev", "hwdb.bin")
    if not os.path.exists(src):
        subprocess.run([os.path.join(sd_root, "bin", "systemd-hwdb"), "update",
                        "--root=" + sd_root], check=True, capture_output=True)
    os.makedirs(dest_dir, exist_ok=True)
    shutil.copy(src, dest_dir)
    return dest_dir


def plan_group(udevadm, tree, etc_udev, setup, cmds):
    g = {"sys": os.path.join(tree, "sys"), "etc_udev": etc_udev,
         "cmds": [{"argv": [udevadm, "test-builtin", cmd, dev]} for _, cmd, dev in cmds],
         "snapshot": C.SYSFS_FILES + C.ACL_FILES}
    g.update(C.SETUPS[setup])
    return g


def run_plan(plan):
    p = subprocess.run([sys.executable, os.path.join(HERE, "nsrun.py")],
                       input=json.dumps(plan).encode(), capture_output=True, check=False)
    if p.returncode != 0:
        raise RuntimeError("nsrun failed: %s" % p.stderr.decode(errors="replace"))
    return json.loads(p.stdout)


def compare_all(sd_udevadm, our_udevadm, workdir, sd_root):
    """Returns (results, differences): results = [(id, sd, ours)], differences =
    [(id, what, sd value, our value)]."""
    trees = {}
    for who in ("sd", "us"):
        trees[who] = os.path.join(workdir, "tree-" + who)
        shutil.rmtree(trees[who], ignore_errors=True)
        devices = fakesys.build(trees[who])
    hwdbs = {C.HWDB_DEBIAN: debian_hwdb(sd_root, os.path.join(workdir, "hwdb-debian")),
             C.HWDB_TUDEV: build_hwdb(sd_root, os.path.join(HERE, "hwdb-root"),
                                      os.path.join(workdir, "hwdb-tudev"))}
    groups = C.cases(devices)
    plan = []
    for hwdb, setup, cmds in groups:
        plan.append(plan_group(sd_udevadm, trees["sd"], hwdbs[hwdb], setup, cmds))
        plan.append(plan_group(our_udevadm, trees["us"], hwdbs[hwdb], setup, cmds))
    out = run_plan(plan)
    results, diffs = [], []
    for i, (_, _, cmds) in enumerate(groups):
        sd, us = out[2 * i], out[2 * i + 1]
        for (cid, _, _), a, b in zip(cmds, sd["results"], us["results"]):
            results.append((cid, a, b))
            if a["stdout"] != b["stdout"]:
                diffs.append((cid, "stdout", a["stdout"], b["stdout"]))
            if a["rc"] != b["rc"]:
                diffs.append((cid, "exit status", a["rc"], b["rc"]))
        for k in sorted(set(sd["snapshot"]) | set(us["snapshot"])):
            if sd["snapshot"].get(k) != us["snapshot"].get(k):
                diffs.append((cmds[-1][0], "file " + k, sd["snapshot"].get(k),
                              us["snapshot"].get(k)))
    return results, diffs


if __name__ == "__main__":
    # compare.py SD_ROOT OUR_UDEVADM WORKDIR: print every difference
    sd_root, ours, work = sys.argv[1:4]
    res, diffs = compare_all(os.path.join(sd_root, "bin", "udevadm"), ours, work, sd_root)
    for d in diffs:
        print("DIFF %s %s\n  systemd: %r\n  tudev:   %r" % d)
    print("%d cases, %d differences" % (len(res), len(diffs)))
