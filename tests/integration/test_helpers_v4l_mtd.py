# SPDX-License-Identifier: GPL-2.0-or-later
"""v4l_id and mtd_probe against systemd 252's (Debian's package, unpacked in
build-ref/sd-udev/lib/udev). Both programs run on the same device answers:
the LD_PRELOAD shim tests/helpers/cdrom-shim.c (built here) answers
VIDIOC_QUERYCAP and MEMGETINFO from a recording made below (ioctlout lines,
tests/helpers/cdrom-replay.h); for mtd_probe the node is a flash image file
whose reads are real. Same stdout and exit status required."""

import os
import struct
import subprocess

import pytest

import tudevlib

HERE = os.path.dirname(os.path.abspath(__file__))
HELPERS = os.path.join(HERE, "..", "helpers")

VIDIOC_QUERYCAP = 0x80685600
MEMGETINFO = 0x80204d01
CIS = bytes([0x01, 0x03, 0xd9, 0x01, 0xff, 0x18, 0x02, 0xdf, 0x01, 0x20])

CAP_CAPTURE, CAP_OUTPUT, CAP_OVERLAY = 0x1, 0x2, 0x4
CAP_CAPTURE_MPLANE, CAP_OUTPUT_MPLANE = 0x1000, 0x2000
CAP_TUNER, CAP_AUDIO, CAP_RADIO = 0x10000, 0x20000, 0x40000
CAP_M2M, CAP_META, CAP_STREAMING, CAP_DEVICE_CAPS = 0x8000, 0x800000, 0x4000000, 0x80000000


def _cap(card, caps, device_caps=0, bus=b"usb-0000:00:14.0-1"):
    return (b"uvcvideo".ljust(16, b"\0") + card.ljust(32, b"\0")[:32] + bus.ljust(32, b"\0")[:32]
            + struct.pack("<IIIIII", 0x060100, caps, device_caps, 0, 0, 0))


V4L_CASES = {
    "webcam": _cap(b"Integrated Camera: Integrated C",
                   CAP_DEVICE_CAPS | CAP_CAPTURE | CAP_STREAMING | CAP_META,
                   CAP_CAPTURE | CAP_STREAMING),
    "webcam-metadata-node": _cap(b"Integrated Camera: Integrated C",
                                 CAP_DEVICE_CAPS | CAP_CAPTURE | CAP_META, CAP_META),
    "tv-card": _cap(b"Hauppauge WinTV", CAP_CAPTURE | CAP_OVERLAY | CAP_TUNER | CAP_AUDIO),
    "radio": _cap(b"FM Radio", CAP_DEVICE_CAPS | CAP_TUNER | CAP_RADIO | CAP_AUDIO,
                  CAP_TUNER | CAP_RADIO | CAP_AUDIO),
    "m2m-mplane": _cap(b"vicodec", CAP_DEVICE_CAPS | CAP_M2M,
                       CAP_CAPTURE_MPLANE | CAP_OUTPUT_MPLANE),
    "output": _cap(b"vivid", CAP_OUTPUT),
    "no-caps": _cap(b"nothing", 0),
    "device-caps-ignored": _cap(b"old driver", CAP_CAPTURE, CAP_RADIO),
    "card-control-char": _cap(b"Cam\x1b[31mera", CAP_CAPTURE),
    "card-tab": _cap(b"Cam\tera", CAP_CAPTURE),
    "card-newline": _cap(b"Cam\nID_EVIL=1", CAP_CAPTURE),
    "card-invalid-utf8": _cap(b"Cam\xff\xfeera", CAP_CAPTURE),
    "card-utf8": _cap("Kamera für Büro".encode(), CAP_CAPTURE),
    "card-empty": _cap(b"", CAP_CAPTURE),
    "card-32-bytes": _cap(b"A" * 32, CAP_CAPTURE),
}


def _mtd_info(mtd_type=4, size=16 << 20, erasesize=16384, writesize=512):
    return struct.pack("<BxxxIIIIIQ", mtd_type, 0, size, erasesize, writesize, 16, 0)


MTD_CASES = {
    "smartmedia-512": (_mtd_info(), CIS + bytes(502) + bytes(4096)),
    "smartmedia-256-cis-at-256": (_mtd_info(size=2 << 20, erasesize=4096, writesize=256),
                                  bytes(256) + CIS + bytes(246)),
    "smartmedia-1m": (_mtd_info(size=1 << 20, erasesize=4096), CIS + bytes(502)),
    "nor-flash": (_mtd_info(mtd_type=3), CIS + bytes(600)),
    "page-2048": (_mtd_info(writesize=2048), CIS + bytes(600)),
    "no-signature": (_mtd_info(), bytes(1024)),
    "short-image": (_mtd_info(), CIS + bytes(100)),
    "empty-image": (_mtd_info(), b""),
    "signature-in-second-sector": (_mtd_info(size=4 << 20), bytes(512) + CIS),
    "zero-erasesize": (_mtd_info(erasesize=0), CIS + bytes(600)),
    "huge-erasesize": (_mtd_info(erasesize=0x80000000), CIS + bytes(600)),
}


@pytest.fixture(scope="module")
def shim(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("cdrom-shim") / "cdrom-shim.so")
    subprocess.run(["cc", "-O1", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", "-o", out,
                    os.path.join(HELPERS, "cdrom-shim.c"), "-ldl"], check=True)
    return out


def _programs(name, build):
    ours = os.path.join(build, "helpers", name)
    ref = os.path.join(os.path.dirname(os.path.dirname(tudevlib.SD_UDEVADM)), "lib", "udev",
                       name)
    assert os.access(ours, os.X_OK), "%s not built" % ours
    if not os.access(ref, os.X_OK):
        pytest.skip("systemd's %s not found at %s" % (name, ref))
    return ref, ours


def _run(argv, **env):
    e = dict(os.environ, SYSTEMD_LOG_LEVEL="err",
             ASAN_OPTIONS="verify_asan_link_order=0:" + os.environ.get("ASAN_OPTIONS", ""))
    e.update(env)
    p = subprocess.run(argv, env=e, capture_output=True, timeout=60)
    assert b"Sanitizer" not in p.stderr, p.stderr.decode("utf-8", "replace")
    return p.returncode, p.stdout


def _recording(path, line):
    with open(path, "w") as f:
        f.write("# SPDX-License-Identifier: GPL-2.0-or-later\n" + line + "\n")
    return path


@pytest.mark.parametrize("name", list(V4L_CASES) + ["querycap-fails"])
def test_v4l_id(build, shim, tmp_path, name):
    ref, ours = _programs("v4l_id", build)
    if name == "querycap-fails":
        line = "ioctlout %x -1 19 - ." % VIDIOC_QUERYCAP
    else:
        line = "ioctlout %x 0 0 %s ." % (VIDIOC_QUERYCAP, V4L_CASES[name].hex())
    rec = _recording(str(tmp_path / "video0.rec"), line)
    sd = _run([ref, rec], LD_PRELOAD=shim, CDROM_SHIM_REPLAY=rec)
    tu = _run([ours, rec], LD_PRELOAD=shim, CDROM_SHIM_REPLAY=rec)
    assert tu == sd
    if name == "webcam":
        assert tu == (0, b"ID_V4L_VERSION=2\nID_V4L_PRODUCT=Integrated Camera: Integrated C\n"
                         b"ID_V4L_CAPABILITIES=:capture:\n")


@pytest.mark.parametrize("args", [[], ["--help"], ["-h"], ["-x", "/dev/null"],
                                  ["/nonexistent/video9"], ["/dev/null"]],
                         ids=["no-device", "help", "h", "bad-option", "missing", "not-v4l"])
def test_v4l_id_cli(build, args):
    ref, ours = _programs("v4l_id", build)
    assert _run([ours] + args) == _run([ref] + args)


@pytest.mark.parametrize("name", list(MTD_CASES) + ["memgetinfo-fails"])
def test_mtd_probe(build, shim, tmp_path, name):
    ref, ours = _programs("mtd_probe", build)
    info, image = MTD_CASES.get(name, (None, CIS + bytes(600)))
    if info is None:
        line = "ioctlout %x -1 19 - ." % MEMGETINFO
    else:
        line = "ioctlout %x 0 0 %s ." % (MEMGETINFO, info.hex())
    rec = _recording(str(tmp_path / "mtd0.rec"), line)
    img = str(tmp_path / "mtd0ro")
    with open(img, "wb") as f:
        f.write(image)
    env = dict(LD_PRELOAD=shim, CDROM_SHIM_REPLAY=rec, CDROM_SHIM_DEVICE=img)
    sd = _run([ref, img], **env)
    tu = _run([ours, img], **env)
    assert tu == sd
    if name.startswith("smartmedia"):
        assert tu == (0, b"MTD_FTL=smartmedia\n")


@pytest.mark.parametrize("args", [[], ["a", "b"], ["--help"], ["/nonexistent/mtd9ro"],
                                  ["/dev/null"]],
                         ids=["no-device", "two-args", "help", "missing", "not-mtd"])
def test_mtd_probe_cli(build, args):
    ref, ours = _programs("mtd_probe", build)
    assert _run([ours] + args) == _run([ref] + args)
