# SPDX-License-Identifier: GPL-2.0-or-later
"""cdrom_id and dmi_memory_id against systemd 252's (Debian's package,
unpacked in build-ref/sd-udev/lib/udev).

cdrom_id: both programs run over the same recorded drive answers
(tests/helpers/fixtures/cdrom/*.rec: QEMU 7.2's AHCI ATAPI DVD-ROM and
virtio-scsi CD-ROM with and without a medium, recorded under systemd's
cdrom_id in a VM by tests/helpers/vm-helpers-check.py --record, and
synthetic ones from make-cdrom-synthetic.py), played by
an LD_PRELOAD shim (tests/helpers/cdrom-shim.c, built here) that answers the
ioctls on the recording file given as the device node. Both must print the
same lines, exit with the same status and send the same requests (the
ioctls and SCSI commands, in order, logged by the shim). For the QEMU
recordings the lines must also be those systemd printed on the real
emulated drive (NAME.out).

dmi_memory_id: both programs read the same dumps (-F; written out from
tests/helpers/fixtures/dmi/*.hex) and must print the same lines and exit
with the same status; NAME.out/exit-codes (what the unit test checks) must
match systemd's too. TUDEV_SAVE_DMI_EXPECTED=1 rewrites them from systemd's
output.

Fixture files start with '#' lines (SPDX line, description); the tests
skip them."""

import glob
import os
import subprocess

import pytest

import tudevlib

HERE = os.path.dirname(os.path.abspath(__file__))
HELPERS = os.path.join(HERE, "..", "helpers")
CDROM_FIX = os.path.join(HELPERS, "fixtures", "cdrom")
DMI_FIX = os.path.join(HELPERS, "fixtures", "dmi")

CDROM_RECS = sorted(glob.glob(os.path.join(CDROM_FIX, "*.rec")))
DMI_DUMPS = sorted(glob.glob(os.path.join(DMI_FIX, "*.hex")))


SPDX = "# SPDX-License-Identifier: GPL-2.0-or-later\n"


def _read_expected(path, mode="r"):
    """A fixture without its leading '#' lines."""
    with open(path, mode) as f:
        lines = f.readlines()
    hash_ = "#" if mode == "r" else b"#"
    while lines and lines[0].startswith(hash_):
        lines.pop(0)
    return ("" if mode == "r" else b"").join(lines)


def _sd_root():
    return os.path.dirname(os.path.dirname(tudevlib.SD_UDEVADM))


def _programs(name, build):
    ours = os.path.join(build, "helpers", name)
    ref = os.path.join(_sd_root(), "lib", "udev", name)
    assert os.access(ours, os.X_OK), "%s not built" % ours
    if not os.access(ref, os.X_OK):
        pytest.skip("systemd's %s not found at %s" % (name, ref))
    return ref, ours


def _env(**extra):
    env = dict(os.environ, SYSTEMD_LOG_LEVEL="err",
               ASAN_OPTIONS="verify_asan_link_order=0:" + os.environ.get("ASAN_OPTIONS", ""))
    env.pop("JOURNAL_STREAM", None)
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def shim(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("cdrom-shim") / "cdrom-shim.so")
    subprocess.run(["cc", "-O1", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", "-o", out,
                    os.path.join(HELPERS, "cdrom-shim.c"), "-ldl"], check=True)
    return out


def _options(rec):
    with open(rec) as f:
        for line in f:
            if line.startswith("# options:"):
                return line.split(":", 1)[1].split()
    return []


def _run_cdrom(binary, shim, rec, log):
    env = _env(LD_PRELOAD=shim, CDROM_SHIM_REPLAY=rec, CDROM_SHIM_LOG=log)
    p = subprocess.run([binary] + _options(rec) + [rec], env=env, capture_output=True,
                       timeout=60)
    with open(log) as f:
        requests = f.read()
    return p.returncode, p.stdout.decode("utf-8", "replace"), requests, p.stderr


@pytest.mark.parametrize("rec", CDROM_RECS, ids=[os.path.basename(r)[:-4] for r in CDROM_RECS])
def test_cdrom_id_recording(build, shim, rec, tmp_path):
    ref, ours = _programs("cdrom_id", build)
    rc_sd, out_sd, req_sd, _ = _run_cdrom(ref, shim, rec, str(tmp_path / "sd.log"))
    rc_tu, out_tu, req_tu, err_tu = _run_cdrom(ours, shim, rec, str(tmp_path / "tu.log"))
    assert b"Sanitizer" not in err_tu, err_tu.decode("utf-8", "replace")
    assert (rc_tu, out_tu) == (rc_sd, out_sd)
    assert req_tu == req_sd, "different requests sent to the drive"
    assert out_tu == _read_expected(rec[:-4] + ".out")


def test_cdrom_id_fixtures_cover_qemu():
    names = {os.path.basename(r)[:-4] for r in CDROM_RECS}
    for bus in ("ahci-ide-cd", "virtio-scsi-cd"):
        for medium in ("iso", "empty"):
            for mode in ("plain", "lock-media", "unlock-media", "eject-media", "after-eject"):
                assert "%s-%s-%s" % (bus, medium, mode) in names


def _run_plain(binary, args, **kw):
    p = subprocess.run([binary] + args, env=_env(), capture_output=True, timeout=60, **kw)
    return p.returncode, p.stdout


@pytest.mark.parametrize("args", [["--help"], ["-h"], [], ["/nonexistent/sr9"],
                                  ["--lock-media", "/nonexistent/sr9"], ["/nonexistent/a", "b"]],
                         ids=["help", "h", "no-device", "missing", "lock-missing", "extra-arg"])
def test_cdrom_id_cli(build, args):
    ref, ours = _programs("cdrom_id", build)
    assert _run_plain(ours, args) == _run_plain(ref, args)


def test_cdrom_id_bad_option(build):
    """Known difference: systemd 252 reaches assert_not_reached() on an unknown
    option and aborts (SIGABRT); tudev exits 1."""
    ref, ours = _programs("cdrom_id", build)
    assert _run_plain(ours, ["-x", "/dev/null"]) == (1, b"")
    assert _run_plain(ref, ["-x", "/dev/null"])[0] in (-6, 134)


def test_cdrom_id_not_a_drive(build, tmp_path):
    """A regular file: CDROM_GET_CAPABILITY fails, nothing printed, exit 1."""
    ref, ours = _programs("cdrom_id", build)
    f = tmp_path / "plain-file"
    f.write_bytes(b"x")
    assert _run_plain(ours, [str(f)]) == _run_plain(ref, [str(f)]) == (1, b"")


def _run_dmi(binary, args):
    p = subprocess.run([binary] + args, env=_env(), capture_output=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


@pytest.mark.parametrize("hexfile", DMI_DUMPS,
                         ids=[os.path.basename(d)[:-4] for d in DMI_DUMPS])
def test_dmi_memory_id_dump(build, hexfile, tmp_path):
    ref, ours = _programs("dmi_memory_id", build)
    dump = str(tmp_path / "dump")
    with open(dump, "wb") as f:
        f.write(bytes.fromhex(_read_expected(hexfile).replace("\n", "")))
    rc_sd, out_sd, _ = _run_dmi(ref, ["-F", dump])
    rc_tu, out_tu, err_tu = _run_dmi(ours, ["-F", dump])
    assert b"Sanitizer" not in err_tu, err_tu.decode("utf-8", "replace")
    assert (rc_tu, out_tu) == (rc_sd, out_sd)

    name = os.path.basename(hexfile)[:-4]
    out_file = os.path.join(DMI_FIX, name + ".out")
    codes_file = os.path.join(DMI_FIX, "exit-codes")
    if os.environ.get("TUDEV_SAVE_DMI_EXPECTED"):
        with open(out_file, "wb") as f:
            f.write(SPDX.encode() + b"# expected output: what systemd 252's program printed\n"
                    + out_sd)
        with open(codes_file) as f:
            lines = f.read().splitlines()
        head = [ln for ln in lines if ln.startswith("#")]
        body = [ln for ln in lines if ln.strip() and not ln.startswith("#")
                and ln.split()[0] != name]
        with open(codes_file, "w") as f:
            f.write("\n".join(head + sorted(body + ["%s %d" % (name, rc_sd)])) + "\n")
    assert _read_expected(out_file, "rb") == out_sd, "%s.out is not systemd's output" % name
    codes = dict(ln.split() for ln in _read_expected(codes_file).splitlines() if ln.strip())
    assert int(codes[name]) == rc_sd


def test_dmi_memory_id_fixtures_cover():
    names = {os.path.basename(d)[:-4] for d in DMI_DUMPS}
    assert {"qemu-q35", "sm3-four-dimms", "many-dimms", "sm3-nvdimm", "sm2-count",
            "legacy"} <= names


@pytest.mark.parametrize("args", [["--help"], ["-h"], ["-F", "/nonexistent/dump"],
                                  ["-F"], ["-x"], ["extra"], []],
                         ids=["help", "h", "missing-dump", "F-no-arg", "bad-option",
                              "extra-arg", "system"])
def test_dmi_memory_id_cli(build, args):
    """Without -F both read this machine's /sys/firmware/dmi/tables (exit 1
    without a message where there are none)."""
    ref, ours = _programs("dmi_memory_id", build)
    rc_sd, out_sd, _ = _run_dmi(ref, args)
    rc_tu, out_tu, _ = _run_dmi(ours, args)
    assert (rc_tu, out_tu) == (rc_sd, out_sd)
