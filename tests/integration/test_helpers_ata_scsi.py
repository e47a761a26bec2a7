# SPDX-License-Identifier: GPL-2.0-or-later
"""ata_id and scsi_id against systemd 252's (Debian's package, unpacked in
build-ref/sd-udev/lib/udev): both programs run over the same recorded
devices (tests/helpers/ata_scsi_devices.py), played by the same LD_PRELOAD
shim (tests/helpers/sg-shim.c, built here), and must print the same stdout
and exit with the same status, error paths included. Every difference is a
failure unless KNOWN_DIFFERENCES lists it with its reason."""

import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
HELPERS = os.path.join(HERE, "..", "helpers")
sys.path.insert(0, HELPERS)

import ata_scsi_devices as devices  # noqa: E402
import tudevlib  # noqa: E402

FAKE_DEV = "/dev/fake-sdx"
ETC_CONFIG = "/etc/scsi_id.config"

# (program, case id) -> reason.
KNOWN_DIFFERENCES = {
    ("scsi_id", "naa-ascii-control-chars"):
        "Debian's 252 prints ID_SCSI_SERIAL only when it is valid UTF-8 without control "
        "characters, but the WWN of an ASCII NAA id as it is, so a newline there starts a "
        "property of the device's choosing (ID_EVIL=1 here); tudev checks the WWN the same "
        "way (as later systemd does) and leaves ID_WWN* out",
}


def _sd_root():
    return os.path.dirname(os.path.dirname(tudevlib.SD_UDEVADM))


@pytest.fixture(scope="module")
def shim(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("sg-shim") / "sg-shim.so")
    subprocess.run(["cc", "-O1", "-Wall", "-shared", "-fPIC", "-o", out,
                    os.path.join(HELPERS, "sg-shim.c"), "-ldl"], check=True)
    return out


def _programs(name, build):
    ours = os.path.join(build, "helpers", name)
    ref = os.path.join(_sd_root(), "lib", "udev", name)
    assert os.access(ours, os.X_OK), "%s not built" % ours
    if not os.access(ref, os.X_OK):
        pytest.skip("systemd's %s not found at %s" % (name, ref))
    return ref, ours


def run(binary, shim, dev, args, work, extra_env=None):
    conf = os.path.join(work, "device.conf")
    with open(conf, "w") as f:
        f.write(devices.shim_conf(dev))
    env = dict(os.environ, LD_PRELOAD=shim, SGSHIM_DEV=FAKE_DEV, SGSHIM_CONF=conf,
               ASAN_OPTIONS="verify_asan_link_order=0:" + os.environ.get("ASAN_OPTIONS", ""),
               SYSTEMD_LOG_LEVEL="err")
    env.pop("JOURNAL_STREAM", None)
    env.update(extra_env or {})
    argv = [binary] + ([a.replace("@DEV@", FAKE_DEV).replace("@WORK@", work) for a in args]
                       if args is not None else [])
    if args is not None and "@DEV@" not in " ".join(args) and "--help" not in args:
        argv.append(FAKE_DEV)
    p = subprocess.run(argv, env=env, capture_output=True, timeout=60, cwd=work)
    return p.returncode, p.stdout, p.stderr


def compare(prog, cases, table, build, shim, tmp_path):
    ref, ours = _programs(prog, build)
    diffs, results = [], []
    for cid, dev_name, args, *rest in cases:
        extra = rest[0] if rest else {}
        work = str(tmp_path / ("%s-%d" % (prog, len(results))))
        os.makedirs(work)
        for fname, text in extra.get("files", {}).items():
            with open(os.path.join(work, fname), "w") as f:
                f.write(text)
        # the generic configuration is read from /etc before any option
        # (the sandbox's /etc is a private overlay)
        if "env_config" in extra:
            with open(ETC_CONFIG, "w") as f:
                f.write(extra["env_config"])
        try:
            a = run(ref, shim, table[dev_name], args, work)
            b = run(ours, shim, table[dev_name], args, work)
        finally:
            if "env_config" in extra:
                os.unlink(ETC_CONFIG)
        results.append((cid, a, b))
        for pat in tudevlib.SANITIZER_PATTERNS:
            assert pat.encode() not in b[2], "%s %s: %s" % (prog, cid, b[2].decode(errors="replace"))
        if a[:2] != b[:2] and (prog, cid) not in KNOWN_DIFFERENCES:
            diffs.append("%s %s:\n  systemd: exit %d %r\n  tudev:   exit %d %r"
                         % (prog, cid, a[0], a[1], b[0], b[1]))
    return results, diffs


def test_ata_id_same_as_systemd(build, shim, tmp_path):
    results, diffs = compare("ata_id", devices.ATA_CASES, devices.ATA_DEVICES, build, shim, tmp_path)
    assert not diffs, "\n".join(diffs)
    out = {cid: a for cid, a, _ in results}
    # the cases exercise what they claim
    assert b"ID_SERIAL=QEMU_HARDDISK_QM00001\n" in out["qemu-ahci-hd"][1]
    assert b"ID_TYPE=cd\n" in out["qemu-dvd-rom"][1]
    assert b"ID_WWN=0x5002538e40a1b2c3\n" in out["sata-ssd-wwn"][1]
    assert b"ID_ATA_FEATURE_SET_APM_CURRENT_VALUE=254\n" in out["sata-hdd-aam-apm"][1]
    assert b"ID_SERIAL_SHORT=ZDZ1ABCD\n" in out["usb-sat-bridge-hdd"][1]
    assert b"ID_ATA_CFA=1\n" in out["cf-card"][1]
    assert out["usb-stick-no-sat"][0] == 2
    assert out["sg-eio"][0] == 2
    assert out["open-enoent"][0] == 1
    assert out["no-device-argument"][0] == 1
    assert out["hdio-only"][0] == 0 and b"ID_ATA_SATA" not in out["hdio-only"][1]


TRIXIE = os.environ.get("TUDEV_TRIXIE_ROOT", os.path.join(os.path.dirname(HERE), "..",
                                                          "build-ref", "trixie"))


def test_ata_id_same_as_systemd_257(build, shim, tmp_path):
    """Built for (or running with a naming scheme of) systemd 257, ata_id
    prints what Debian 13's ata_id prints over the same recorded devices:
    ID_ATA_PERIPHERAL_DEVICE_TYPE, and through the v3 header the IDENTIFY
    data of a successful ioctl even without the ATA registers in the sense
    (where 252 falls back to HDIO_GET_IDENTITY). 257's binary runs in the
    chroot of tools/build-ref-trixie with the same shim."""
    ref = os.path.join(TRIXIE, "usr", "lib", "udev", "ata_id")
    if not os.access(ref, os.X_OK):
        pytest.skip("no Debian 13 chroot with ata_id at %s (tools/build-ref-trixie)" % TRIXIE)
    ours = os.path.join(build, "helpers", "ata_id")
    inside = "/tmp/tudev-sgshim-%d" % os.getpid()
    outside = os.path.join(TRIXIE, inside.lstrip("/"))
    os.makedirs(outside)
    try:
        shutil.copy(shim, os.path.join(outside, "sg-shim.so"))
        diffs, out = [], {}
        for cid, dev_name, args, *_ in devices.ATA_CASES:
            if args is None or "@WORK@" in " ".join(args):
                continue
            with open(os.path.join(outside, "device.conf"), "w") as f:
                f.write(devices.shim_conf(devices.ATA_DEVICES[dev_name]))
            argv = [a.replace("@DEV@", FAKE_DEV) for a in args]
            if "@DEV@" not in " ".join(args) and "--help" not in args:
                argv.append(FAKE_DEV)
            env = dict(os.environ, SGSHIM_DEV=FAKE_DEV, SYSTEMD_LOG_LEVEL="err")
            env.pop("JOURNAL_STREAM", None)
            a = subprocess.run(["chroot", TRIXIE, "/usr/lib/udev/ata_id"] + argv,
                               env=dict(env, LD_PRELOAD=inside + "/sg-shim.so",
                                        SGSHIM_CONF=inside + "/device.conf"),
                               capture_output=True, timeout=60)
            b = subprocess.run([ours] + argv,
                               env=dict(env, LD_PRELOAD=shim, NET_NAMING_SCHEME="v257",
                                        SGSHIM_CONF=os.path.join(outside, "device.conf"),
                                        ASAN_OPTIONS="verify_asan_link_order=0:" +
                                        os.environ.get("ASAN_OPTIONS", "")),
                               capture_output=True, timeout=60)
            out[cid] = (a.returncode, a.stdout)
            if cid == "help":
                # the usage text is tudev's own words; the exit status counts
                a, b = (a.returncode, b""), (b.returncode, b"")
                if a != b:
                    diffs.append("help: systemd 257 exit %d, tudev exit %d" % (a[0], b[0]))
                continue
            if (a.returncode, a.stdout) != (b.returncode, b.stdout):
                diffs.append("%s:\n  systemd 257: exit %d %r\n  tudev:       exit %d %r"
                             % (cid, a.returncode, a.stdout, b.returncode, b.stdout))
    finally:
        shutil.rmtree(outside, ignore_errors=True)
    assert not diffs, "\n".join(diffs)
    assert b"ID_ATA_PERIPHERAL_DEVICE_TYPE=0\n" in out["qemu-ahci-hd"][1]
    assert b"ID_ATA_PERIPHERAL_DEVICE_TYPE=5\n" in out["qemu-dvd-rom"][1]
    assert b"ID_ATA_READ_LOOKAHEAD_ENABLED=1\n" in out["sata-hdd-aam-apm"][1]
    assert out["unknown-option-ignored"][0] == 1 and out["hdio-only"][0] == 0
    assert out["sg-eio"][0] == 1


def test_scsi_id_same_as_systemd(build, shim, tmp_path):
    assert not os.path.exists(ETC_CONFIG), "%s exists in the sandbox" % ETC_CONFIG
    results, diffs = compare("scsi_id", devices.SCSI_CASES, devices.SCSI_DEVICES, build, shim,
                             tmp_path)
    assert not diffs, "\n".join(diffs)
    out = {cid: a for cid, a, _ in results}
    ours = {cid: b for cid, _, b in results}
    assert b"ID_SERIAL=0QEMU_QEMU_HARDDISK_drive-scsi0-0-0-0\n" in out["qemu-scsi-hd"][1]
    assert b"ID_WWN=0x5000c50015ea71ac\n" in out["qemu-scsi-hd-wwn"][1]
    assert b"ID_TYPE=cd\n" in out["qemu-scsi-cd"][1]
    assert b"ID_SERIAL=35002538e40a1b2c3\n" in out["libata-ssd-wwn"][1]
    assert b"ID_WWN_VENDOR_EXTENSION=0xd4e4f608a9b0c1d2\n" in out["lio-lun-naa6-tpg"][1]
    assert b"ID_TARGET_PORT=1\n" in out["lio-lun-naa6-tpg"][1]
    assert b"ID_SERIAL=20025385281b01234\n" in out["nvme-sntl-eui64"][1]
    assert b"ID_SERIAL" not in out["usb-stick-no-vpd"][1] and out["usb-stick-no-vpd"][0] == 0
    assert out["usb-stick-no-vpd -g"][0] == 1
    assert b"ID_SCSI_SERIAL=" in out["libata-ssd-wwn"][1]
    assert out["not-whitelisted"] == (1, b"", out["not-whitelisted"][2])
    assert out["std-inquiry-fails"][0] == 1
    assert out["open-enoent"][0] == 0 and b"ID_VENDOR=\n" in out["open-enoent"][1]
    assert out["config-bad-line"][0] == 0
    assert out["config-generic-bad"][0] == 2
    assert b"ID_SERIAL=SATA_" in out["config-vendor-model"][1]
    assert b"ID_SCSI_SERIAL" not in out["odd-strings"][1]
    # the one known difference: ID_WWN* left out, nothing else
    sd, td = out["naa-ascii-control-chars"][1], ours["naa-ascii-control-chars"][1]
    assert b"\nID_EVIL=1" in sd and b"\nID_EVIL" not in td
    assert [l for l in sd.split(b"\n") if not l.startswith((b"ID_WWN", b"ID_EVIL"))] == \
        td.split(b"\n")


def test_real_kernel_nodes(build, tmp_path):
    """No shim: the real kernel answers (a loop device and /dev/null know no
    SG_IO or HDIO_GET_IDENTITY), and a path that does not exist."""
    import blocklib
    loops = tudevlib.LoopDevices()
    try:
        _, _, loop = blocklib.add_loop(loops)
        nodes = [loop, "/dev/null", "/dev/nonexistent-sdx"]
        argvs = [("ata_id", ["--export"]), ("ata_id", []),
                 ("scsi_id", ["--export", "--whitelisted", "-d"]), ("scsi_id", ["-g", "-u"]),
                 ("scsi_id", ["--sg-version=3", "-x", "-g"])]
        diffs, n = [], 0
        for node in nodes:
            for prog, args in argvs:
                ref, ours = _programs(prog, build)
                env = dict(os.environ, SYSTEMD_LOG_LEVEL="err",
                           ASAN_OPTIONS="verify_asan_link_order=0")
                a = subprocess.run([ref] + args + [node], env=env, capture_output=True, timeout=60)
                b = subprocess.run([ours] + args + [node], env=env, capture_output=True, timeout=60)
                n += 1
                if (a.returncode, a.stdout) != (b.returncode, b.stdout):
                    diffs.append("%s %s %s: systemd exit %d %r, tudev exit %d %r"
                                 % (prog, " ".join(args), node, a.returncode, a.stdout,
                                    b.returncode, b.stdout))
        assert n == 15
        assert not diffs, "\n".join(diffs)
    finally:
        loops.remove_all()
