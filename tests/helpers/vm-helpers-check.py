#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Run tudev's cdrom_id, dmi_memory_id, fido_id, v4l_id and mtd_probe and
Debian's (systemd 252) side by side on real kernel devices in a QEMU VM, and
optionally record the cdrom_id fixtures again. Not part of `make check`
(it downloads Debian packages and boots a VM; about two minutes with TCG):

    tests/helpers/vm-helpers-check.py [--record] [--build build]
                                      [--sd-root build-ref/sd-udev]

The VM (q35, Debian 12's kernel, a busybox initramfs) has QEMU's ATAPI
DVD-ROM on AHCI and its virtio-scsi CD-ROM, each with an ISO 9660 medium and
empty, one DIMM described with -smbios type=17, HID devices made through
uhid (a U2F token and a keyboard), vivid's V4L2 nodes and a nandsim NAND
flash holding a SmartMedia CIS. Each program runs on each device, Debian's
first then tudev's (for --eject-media: tudev's, then both plain ones on the
ejected drive); the stdout and exit status must be the same. With --record
systemd's cdrom_id runs first under tests/helpers/cdrom-shim.c in record
mode and the recordings and outputs replace
tests/helpers/fixtures/cdrom/{ahci,virtio}-*.{rec,out}.

Needs root (apt-get download, insmod in the VM), qemu-system-x86_64, cc."""

import argparse
import base64
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.abspath(os.path.join(HERE, "..", ".."))
SPDX = "# SPDX-License-Identifier: GPL-2.0-or-later\n"
PROGRAMS = ["cdrom_id", "dmi_memory_id", "fido_id", "v4l_id", "mtd_probe"]
# the drivers wanted; their dependencies come from modules.dep (built-in
# ones are not there and need no loading)
MODULES = ["ahci", "sr_mod", "virtio_pci", "virtio_scsi", "hid-generic", "uhid", "vivid",
           "nandsim"]
CIS = bytes([0x01, 0x03, 0xd9, 0x01, 0xff, 0x18, 0x02, 0xdf, 0x01, 0x20])

UHID_MAKE = r"""
#include <fcntl.h>
#include <linux/uhid.h>
#include <string.h>
#include <unistd.h>
static const unsigned char u2f[] = {0x06,0xd0,0xf1,0x09,0x01,0xa1,0x01,0x09,0x20,0x15,0x00,
        0x26,0xff,0x00,0x75,0x08,0x95,0x40,0x81,0x02,0x09,0x21,0x15,0x00,0x26,0xff,0x00,0x75,
        0x08,0x95,0x40,0x91,0x02,0xc0};
static const unsigned char kbd[] = {0x05,0x01,0x09,0x06,0xa1,0x01,0x05,0x07,0x19,0xe0,0x29,
        0xe7,0x15,0x00,0x25,0x01,0x75,0x01,0x95,0x08,0x81,0x02,0xc0};
static void make(const char *name, const unsigned char *rd, size_t n, unsigned pid) {
        int fd = open("/dev/uhid", O_RDWR | O_CLOEXEC);
        struct uhid_event ev;
        memset(&ev, 0, sizeof(ev));
        ev.type = UHID_CREATE2;
        strcpy((char *)ev.u.create2.name, name);
        ev.u.create2.rd_size = n;
        memcpy(ev.u.create2.rd_data, rd, n);
        ev.u.create2.bus = BUS_USB;
        ev.u.create2.vendor = 0x1050;
        ev.u.create2.product = pid;
        if (fd < 0 || write(fd, &ev, sizeof(ev)) < 0)
                _exit(1);
}
int main(void) {
        make("Test U2F", u2f, sizeof(u2f), 0x0407);
        make("Test Keyboard", kbd, sizeof(kbd), 0x0001);
        for (;;) pause();
}
"""

INIT = r"""#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in @MODULES@; do insmod /mods/$m.ko || echo "=====NOTE insmod $m failed"; done
/bin/uhid-make &
sleep 3
cat /bin/cis512.bin > /dev/mtd0 || echo "=====NOTE mtd write failed"
emit() { echo "=====BEGIN $1"; base64 "$2"; echo "=====END $1"; }
run() {
  n=$1; shift; p=$1; shift
  for w in sd tu; do
    /$w/$p "$@" > /out/o 2>/dev/null; echo "rc=$?" >> /out/o
    emit "$n.$w" /out/o
  done
}
record() {
  n=$1; shift
  CDROM_SHIM_RECORD=/out/$n.rec LD_PRELOAD=/lib/cdrom-shim.so /sd/cdrom_id "$@" > /out/o 2>/dev/null
  echo "rc=$?" >> /out/o
  [ -f /out/$n.rec ] || : > /out/$n.rec
  emit "rec-$n.rec" /out/$n.rec
  emit "rec-$n.out" /out/o
}
for d in /dev/sr*; do b=${d##*/}
  readlink -f /sys/block/$b > /out/o; emit "path-$b" /out/o
  if [ -n "@RECORD@" ]; then
    record $b-plain $d; record $b-lock-media --lock-media $d
    record $b-unlock-media --unlock-media $d
  fi
  run cdrom-$b cdrom_id $d
  run cdrom-lock-$b cdrom_id --lock-media $d
  run cdrom-unlock-$b cdrom_id --unlock-media $d
done
run dmi dmi_memory_id
for d in /sys/class/video4linux/*; do b=${d##*/}; run v4l-$b v4l_id /dev/$b; done
for d in /sys/class/hidraw/*; do b=${d##*/}
  dp=$(readlink -f $d); dp=${dp#/sys}
  for w in sd tu; do
    env DEVPATH=$dp SUBSYSTEM=hidraw ACTION=add SEQNUM=42 DEVNAME=/dev/$b /$w/fido_id > /out/o 2>/dev/null
    echo "rc=$?" >> /out/o
    emit "fido-env-$b.$w" /out/o
  done
  run fido-arg-$b fido_id /sys/class/hidraw/$b
done
for d in /dev/mtd*; do b=${d##*/}; run mtd-$b mtd_probe $d; done
for d in /dev/sr*; do b=${d##*/}
  if [ -n "@RECORD@" ]; then
    record $b-eject-media --eject-media $d; record $b-after-eject $d
  else
    /tu/cdrom_id --eject-media $d > /out/o 2>/dev/null; echo "rc=$?" >> /out/o
    emit "eject-tu-$b" /out/o
  fi
  run cdrom-after-eject-$b cdrom_id $d
done
echo "=====DONE"
poweroff -f
"""


def sh(*argv, **kw):
    return subprocess.run(argv, check=True, **kw)


def fetch_packages(work):
    """Debian 12's kernel, busybox-static and xorriso, unpacked under work."""
    dl = os.path.join(work, "deb")
    os.makedirs(dl)
    out = subprocess.run(["apt-cache", "depends", "linux-image-amd64"], capture_output=True,
                         text=True, check=True).stdout
    kernel = re.search(r"Depends: (linux-image-[0-9][^\s]*-amd64)", out).group(1)
    pkgs = [kernel, "busybox-static", "xorriso", "libisoburn1", "libburn4", "libisofs6",
            "libjte2"]
    sh("apt-get", "download", *pkgs, cwd=dl, stdout=subprocess.DEVNULL,
       stderr=subprocess.DEVNULL)
    root = os.path.join(work, "root")
    for deb in glob.glob(os.path.join(dl, "*.deb")):
        sh("dpkg-deb", "-x", deb, root)
    vmlinuz = glob.glob(os.path.join(root, "boot", "vmlinuz-*"))[0]
    moddir = glob.glob(os.path.join(root, "lib", "modules", "*"))[0]
    sh("depmod", "-b", root, os.path.basename(moddir))
    return root, vmlinuz, moddir


def build_initramfs(work, root, moddir, build, sd_root, record):
    ir = os.path.join(work, "ir")
    for d in ("bin", "lib", "lib64", "lib/x86_64-linux-gnu", "mods", "out", "proc", "sys",
              "dev", "tmp", "sd", "tu"):
        os.makedirs(os.path.join(ir, d), exist_ok=True)
    shutil.copy(os.path.join(root, "bin", "busybox"), os.path.join(ir, "bin"))
    for a in ("sh", "mount", "insmod", "cat", "base64", "echo", "sleep", "poweroff",
              "readlink", "env"):
        os.symlink("busybox", os.path.join(ir, "bin", a))
    for p in PROGRAMS:
        shutil.copy(os.path.join(build, "helpers", p), os.path.join(ir, "tu"))
        shutil.copy(os.path.join(sd_root, "lib", "udev", p), os.path.join(ir, "sd"))
    for lib in ("libselinux.so.1", "libc.so.6", "libpcre2-8.so.0"):
        shutil.copy(os.path.join("/lib/x86_64-linux-gnu", lib),
                    os.path.join(ir, "lib/x86_64-linux-gnu"))
    shutil.copy("/lib64/ld-linux-x86-64.so.2", os.path.join(ir, "lib64"))
    sh("cc", "-O1", "-shared", "-fPIC", "-o", os.path.join(ir, "lib", "cdrom-shim.so"),
       os.path.join(HERE, "cdrom-shim.c"), "-ldl")
    src = os.path.join(work, "uhid-make.c")
    with open(src, "w") as f:
        f.write(UHID_MAKE)
    sh("cc", "-static", "-O1", "-o", os.path.join(ir, "bin", "uhid-make"), src)
    with open(os.path.join(ir, "bin", "cis512.bin"), "wb") as f:
        f.write(CIS + b"\xff" * (512 - len(CIS)))
    deps, paths = {}, {}
    with open(os.path.join(moddir, "modules.dep")) as f:
        for line in f:
            path, _, rest = line.partition(":")
            name = os.path.basename(path)[:-3]
            paths[name] = path
            deps[name] = [os.path.basename(d)[:-3] for d in rest.split()]
    order = []

    def want(m):
        if m in order or m not in paths:
            return
        for d in reversed(deps[m]):
            want(d)
        order.append(m)

    for m in MODULES:
        want(m)
    for m in order:
        shutil.copy(os.path.join(moddir, paths[m]), os.path.join(ir, "mods", m + ".ko"))
    init = INIT.replace("@MODULES@", " ".join(order)).replace("@RECORD@",
                                                                "1" if record else "")
    with open(os.path.join(ir, "init"), "w") as f:
        f.write(init)
    os.chmod(os.path.join(ir, "init"), 0o755)
    initrd = os.path.join(work, "initrd.cpio")
    files = subprocess.run(["find", "."], cwd=ir, capture_output=True, check=True).stdout
    with open(initrd, "wb") as f:
        sh(os.path.join(ir, "bin", "busybox"), "cpio", "-o", "-H", "newc", cwd=ir,
           input=files, stdout=f, stderr=subprocess.DEVNULL)
    return initrd


def make_iso(work, root):
    data = os.path.join(work, "isodata")
    os.makedirs(data)
    with open(os.path.join(data, "README.TXT"), "w") as f:
        f.write("tudev cdrom_id test medium\n")
    isos = []
    for name in ("data.iso", "data2.iso"):
        iso = os.path.join(work, name)
        sh(os.path.join(root, "usr", "bin", "xorriso"), "-as", "mkisofs", "-V", "TUDEV_TEST",
           "-o", iso, data, env=dict(os.environ, LD_LIBRARY_PATH=os.path.join(
               root, "usr", "lib", "x86_64-linux-gnu")),
           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        isos.append(iso)
    return isos


def boot(work, vmlinuz, initrd, isos):
    argv = ["qemu-system-x86_64", "-accel", "tcg", "-machine", "q35", "-m", "1G", "-smp", "1",
            "-nographic", "-no-reboot", "-kernel", vmlinuz, "-initrd", initrd,
            "-append", "console=ttyS0 quiet panic=-1",
            "-smbios", "type=17,loc_pfx=DIMM,bank=Bank0,manufacturer=QEMU-Test,serial=SN0001,"
                       "asset=AT01,part=PN-TEST,speed=3200",
            "-drive", "if=none,id=cd0,media=cdrom,readonly=on,file=" + isos[0],
            "-device", "ide-cd,drive=cd0,bus=ide.0",
            "-drive", "if=none,id=cd1,media=cdrom", "-device", "ide-cd,drive=cd1,bus=ide.1",
            "-device", "virtio-scsi-pci,id=vs",
            "-drive", "if=none,id=cd2,media=cdrom,readonly=on,file=" + isos[1],
            "-device", "scsi-cd,drive=cd2,bus=vs.0",
            "-drive", "if=none,id=cd3,media=cdrom", "-device", "scsi-cd,drive=cd3,bus=vs.0"]
    p = subprocess.run(argv, capture_output=True, timeout=1200, stdin=subprocess.DEVNULL)
    console = p.stdout.decode("latin-1").replace("\r", "")
    if "=====DONE" not in console:
        sys.exit("the VM did not finish:\n" + console[-3000:])
    files = {m.group(1): base64.b64decode(m.group(2)) for m in
             re.finditer(r"=====BEGIN (\S+)\n(.*?)=====END \1\n", console, re.S)}
    for note in re.findall(r"=====NOTE (.*)", console):
        print("note:", note)
    return files


def save_recordings(files):
    """The VM's sr0..sr3 are, by construction, these four drives."""
    ver = re.search(r"version (\d+\.\d+)", subprocess.run(
        ["qemu-system-x86_64", "--version"], capture_output=True, text=True).stdout).group(1)
    names = {}
    for key, val in files.items():
        if key.startswith("path-"):
            path, dev = val.decode().strip(), key[5:]
            bus = "ahci-ide-cd" if "/ata" in path else "virtio-scsi-cd"
            medium = "iso" if dev in ("sr0", "sr2") else "empty"
            names[dev] = ("%s-%s" % (bus, medium), path.replace("/sys/devices/", ""))
    fix = os.path.join(HERE, "fixtures", "cdrom")
    for dev, (name, path) in names.items():
        for mode in ("plain", "lock-media", "unlock-media", "eject-media", "after-eject"):
            rec = files["rec-%s-%s.rec" % (dev, mode)].decode()
            out = files["rec-%s-%s.out" % (dev, mode)].decode()
            opt = "" if mode in ("plain", "after-eject") else "--" + mode
            what = name.replace("-iso", " with an ISO 9660 medium").replace(
                "-empty", " without medium")
            what += ", after --eject-media" if mode == "after-eject" else ""
            with open(os.path.join(fix, "%s-%s.rec" % (name, mode)), "w") as f:
                f.write(SPDX + "# systemd 252 cdrom_id %s on QEMU %s %s\n# %s\n# options: %s\n"
                        % (opt, ver, what, path, opt) + rec)
            with open(os.path.join(fix, "%s-%s.out" % (name, mode)), "w") as f:
                f.write(SPDX + "# expected output: what systemd 252's program printed\n"
                        + re.sub(r"rc=\d+\n$", "", out))
    print("recordings written to", fix)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--record", action="store_true")
    ap.add_argument("--build", default=os.path.join(TOP, "build"))
    ap.add_argument("--sd-root", default=os.path.join(TOP, "build-ref", "sd-udev"))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="vm-helpers-") as work:
        root, vmlinuz, moddir = fetch_packages(work)
        initrd = build_initramfs(work, root, moddir, os.path.abspath(args.build),
                                 os.path.abspath(args.sd_root), args.record)
        files = boot(work, vmlinuz, initrd, make_iso(work, root))
    differences = 0
    for key in sorted(k for k in files if k.endswith(".sd")):
        name = key[:-3]
        sd, tu = files[key], files.get(name + ".tu")
        same = sd == tu
        differences += not same
        print("%-30s %s  %s" % (name, "same" if same else "DIFFERENT",
                                sd.decode("latin-1").strip().replace("\n", " | ")[:100]))
        if not same:
            print("   tudev:", (tu or b"").decode("latin-1").strip().replace("\n", " | "))
    for key in sorted(k for k in files if k.startswith("eject-tu-")):
        dev = key[len("eject-tu-"):]
        after = files.get("cdrom-after-eject-%s.tu" % dev, b"")
        ejected = b"ID_CDROM_MEDIA=1" not in after
        print("%-30s %s" % ("tudev --eject-media " + dev, "medium gone" if ejected
                            else "MEDIUM STILL THERE"))
        differences += not ejected and b"ID_CDROM_MEDIA=1" in files[key]
    if args.record:
        save_recordings(files)
    print("%d difference(s)" % differences)
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
