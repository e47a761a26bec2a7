#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Capture real seed inputs for the fuzz targets (run once by hand; the
results are committed under tests/fuzz/corpus-*/).

    make && tests/sandbox /usr/bin/python3 tests/fuzz/make-corpus.py OUTDIR

Inside the sandbox (private network namespace, tmpfs /run) it starts
build/udevd with a small rules file (tags, symlinks, properties), then makes
the kernel send real uevents: veth pairs added, renamed ("move"), a synthetic
"change" with SYNTH_UUID and arguments, deleted; a loop device added and
removed. Every kernel datagram (group 1) and every udevd broadcast (group 2)
of those devices is written to OUTDIR/uevent/ and OUTDIR/monitor-msg/, and the
database files udevd wrote (/run/udev/data/*) to OUTDIR/db/. Events of other
devices on the machine are ignored (filtered by devpath)."""

import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import tudevlib  # noqa: E402

RULES = r'''
SUBSYSTEM=="net", KERNEL=="fz*", TAG+="systemd", TAG+="fuzz", ENV{ID_NET_FUZZ}="1", \
  ENV{SYSTEMD_ALIAS}="/sys/subsystem/net/devices/$name"
SUBSYSTEM=="block", KERNEL=="loop*", TAG+="systemd", SYMLINK+="disk/by-fuzz/%k disk/by-id/fuzz-$kernel", \
  ENV{ID_FS_TYPE}="", ENV{ID_FUZZ_SERIAL}="fz $major:$minor", TAG+="uaccess"
SUBSYSTEM=="bdi", ENV{ID_BDI}="$kernel"
'''


def main():
    out = sys.argv[1]
    err = tudevlib.check_sandbox()
    if err:
        sys.exit(err)
    for d in ("uevent", "monitor-msg", "db"):
        os.makedirs(os.path.join(out, d), exist_ok=True)
    rules_dir = os.path.join(out, "rules.d")
    os.makedirs(rules_dir, exist_ok=True)
    with open(os.path.join(rules_dir, "50-fuzz.rules"), "w") as f:
        f.write(RULES)

    kern = tudevlib.NetlinkListener(tudevlib.GROUP_KERNEL)
    udev = tudevlib.NetlinkListener(tudevlib.GROUP_UDEV)
    daemon = tudevlib.Udevd(tudevlib.build_dir(), os.path.join(out, "udevd.log"),
                            args=["--rules-dir=" + rules_dir]).start()
    loops = tudevlib.LoopDevices()
    nets = tudevlib.NetDevices()
    try:
        nets.add_veth("fza", "fzb")
        time.sleep(0.3)
        with open("/sys/class/net/fza/uevent", "w") as f:
            f.write("change 4a2b9c1e-0d3f-4e5a-8b6c-7d8e9f0a1b2c FUZZ=1 MODE=test")
        subprocess.run(["ip", "link", "set", "fzb", "name", "fzc"], check=True)
        time.sleep(0.3)
        idx = loops.add()
        time.sleep(0.5)
        for name in os.listdir("/run/udev/data"):
            with open(os.path.join("/run/udev/data", name), "rb") as f:
                data = f.read()
            with open(os.path.join(out, "db", name.replace(":", "_")), "wb") as f:
                f.write(data)
        loops.remove(idx)
        nets.delete_all()
        time.sleep(0.5)
    finally:
        loops.remove_all()
        nets.delete_all()
        daemon.stop()

    def ours(ev):
        p = ev.devpath or ""
        return "/net/fz" in p or ("/loop%d" % idx) in p or ("/bdi/7:%d" % idx) in p

    n = 0
    for group, lst in (("kernel", kern), ("udev", udev)):
        lst.sync()
        for ev in lst.snapshot():
            if not ours(ev):
                continue
            n += 1
            name = "%s-%s-%s" % (group, ev.action, os.path.basename(ev.devpath).replace(":", "_"))
            dirs = ["monitor-msg"] + (["uevent"] if group == "kernel" else [])
            for d in dirs:
                path = os.path.join(out, d, name)
                k = 1
                while os.path.exists(path):
                    k += 1
                    path = os.path.join(out, d, "%s-%d" % (name, k))
                with open(path, "wb") as f:
                    f.write(ev.raw)
    print("captured %d datagrams" % n)


if __name__ == "__main__":
    main()
