#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Write the synthetic cdrom_id recordings (tests/helpers/fixtures/cdrom/
synthetic-*.rec, format: tests/helpers/cdrom-replay.h): drive answers that
QEMU cannot give (recordable and rewritable media, DVD-RAM, pre-MMC2 drives,
SCSI errors, malformed lengths), made to walk every branch of cdrom_id. The
expected output (.out beside each) is what systemd 252's cdrom_id prints on
them under tests/helpers/cdrom-shim.c:

    tests/helpers/make-cdrom-synthetic.py
    (then, for each new NAME, run systemd's cdrom_id under the shim with
     CDROM_SHIM_REPLAY=NAME.rec and save its stdout as NAME.out, after two
     comment lines: the SPDX line and a description; the tests skip them)
"""

import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "fixtures", "cdrom")

CDROM_GET_CAPABILITY = 0x5331
CDROM_DRIVE_STATUS = 0x5326
CDROM_CLEAR_OPTIONS = 0x5321
CDROM_LOCKDOOR = 0x5329
CDSL_CURRENT = 0x7fffffff
CDS_NO_DISC, CDS_TRAY_OPEN, CDS_DISC_OK = 1, 2, 4
# CDC_* capability bits
CDC_CD_R, CDC_CD_RW, CDC_DVD, CDC_DVD_R, CDC_DVD_RAM = 0x2000, 0x4000, 0x8000, 0x10000, 0x20000
CDC_MRW, CDC_MRW_W = 0x80000, 0x100000
EIO, ENOTTY = 5, 25


def ioctl(req, arg, ret, err=0):
    if ret < 0:
        return "ioctl %x %x -1 %x" % (req, arg, err)
    return "ioctl %x %x %x 0" % (req, arg, ret)


def cdb(*pairs, length=10):
    b = bytearray(length)
    for i, v in pairs:
        b[i] = v
    return bytes(b)


def sgio(c, dxfer_len, data=b"", sense=b"", ret=0, err=0):
    data = data[:dxfer_len].rstrip(b"\0")
    if sense:
        status, masked, info = 2, 1, 1  # CHECK CONDITION
    else:
        status, masked, info = 0, 0, 0
    return "sgio %s %x %s %x %x %x 0 0 %x 0 %s %s ." % (
        c.hex(), dxfer_len, "-1" if ret < 0 else "0", err, status, masked, info,
        sense.hex() or "-", data.hex() or "-")


def sense(key, asc, ascq=0):
    s = bytearray(18)
    s[0], s[2], s[7], s[12], s[13] = 0x70, key, 10, asc, ascq
    return bytes(s)


INQ = cdb((0, 0x12), (4, 36), (5, 0), length=6)


def inquiry(devtype=5, model=b"TUDEV   SYNTHETIC DRIVE 1.00"):
    d = bytearray(36)
    d[0] = devtype
    d[1] = 0x80
    d[2] = 5
    d[8:36] = model.ljust(28)[:28]
    return sgio(INQ, 36, bytes(d))


def gc_header(total_len, current):
    return struct.pack(">IHH", total_len, 0, current)


def get_config(current, profiles, extra_features=b"", claimed=None):
    """Both GET CONFIGURATION exchanges; `claimed` overrides the data length field."""
    plist = b"".join(struct.pack(">HBB", p, 0, 0) for p in profiles)
    body = struct.pack(">HBB", 0, 3, len(plist)) + plist + extra_features
    total = 8 + len(body) if claimed is None else claimed
    full = gc_header(total, current) + body
    n = total if 8 < total <= 65530 else 65530
    lines = [sgio(cdb((0, 0x46), (8, 8), (9, 0)), 8, full[:8])]
    lines.append(sgio(cdb((0, 0x46), (7, n >> 8), (8, n & 0xff), (9, 0)), n, full))
    return lines


def toc(tracks, last_session_block=0):
    """READ TOC format 0 (header, then all tracks) and format 1. tracks: [(number, control, lba)]"""
    first, last = tracks[0][0], tracks[-1][0]
    desc = b"".join(struct.pack(">BBBBI", 0, 0x10 | ctl, num, 0, lba) for num, ctl, lba in tracks)
    desc += struct.pack(">BBBBI", 0, 0x14, 0xaa, 0, 200000)  # lead-out
    full = struct.pack(">HBB", len(desc) + 2, first, last) + desc
    n = len(full)
    lines = [sgio(cdb((0, 0x43), (6, 1), (8, 12), (9, 0)), 12, full[:12]),
             sgio(cdb((0, 0x43), (6, first), (7, n >> 8), (8, n & 0xff), (9, 0)), n, full)]
    sess = struct.pack(">HBBBBBBI", 10, 1, 2, 0, 0x14, tracks[-1][0], 0, last_session_block)
    lines.append(sgio(cdb((0, 0x43), (2, 1), (8, 12), (9, 0)), 12, sess))
    return lines


def disc_info(status, sessions, tracks, next_session=0, erasable=False, disc_type=0):
    d = bytearray(32)
    d[0:2] = struct.pack(">H", 32)
    d[2] = status | (0x10 if erasable else 0)
    d[3] = 1
    d[4], d[9] = sessions & 0xff, sessions >> 8
    d[5], d[10] = next_session & 0xff, next_session >> 8
    d[6], d[11] = tracks & 0xff, tracks >> 8
    d[8] = disc_type
    return sgio(cdb((0, 0x51), (8, 32), (9, 0)), 32, bytes(d))


READ10 = cdb((0, 0x28), (5, 0), (8, 32), (9, 0))
DVDSTRUCT = cdb((0, 0xad), (7, 0xc0), (9, 8), (11, 0), length=12)
FORMATCAP = cdb((0, 0x23), (8, 12), (9, 0))
EJECT = cdb((0, 0x1b), (4, 2), (5, 0), length=6)


def lock_lines(lock):
    return [ioctl(CDROM_CLEAR_OPTIONS, 8, 5), ioctl(CDROM_LOCKDOOR, 1 if lock else 0, 0)]


def compat(cap, status):
    return [ioctl(CDROM_GET_CAPABILITY, 0, cap), ioctl(CDROM_DRIVE_STATUS, CDSL_CURRENT, status)]


BURNER = CDC_CD_R | CDC_CD_RW | CDC_DVD | CDC_DVD_R | CDC_DVD_RAM | CDC_MRW | CDC_MRW_W
BURNER_PROFILES = [0x1b, 0x1a, 0x2b, 0x15, 0x16, 0x14, 0x13, 0x12, 0x11, 0x10, 0x0a, 0x09, 0x08]

CASES = {}

# a mixed-mode CD-R, two sessions, still appendable, in a DVD burner
CASES["synthetic-cdr-multisession"] = (
    "CD-R with 3 audio tracks and 1 data track in 2 sessions, appendable",
    compat(BURNER, CDS_DISC_OK) + [inquiry()] + get_config(0x09, BURNER_PROFILES)
    + toc([(1, 0, 0), (2, 0, 15000), (3, 0, 30000), (4, 4, 45000)], last_session_block=45000)
    + [disc_info(1, 2, 4, next_session=3)] + lock_lines(True))

# a blank DVD+RW: "complete" by the drive, no data in blocks 0 and 16
CASES["synthetic-dvd-plus-rw-blank"] = (
    "formatted DVD+RW without data: blank",
    compat(BURNER, CDS_DISC_OK) + [inquiry()] + get_config(0x1a, BURNER_PROFILES)
    + toc([(1, 4, 0)]) + [disc_info(2, 1, 1), sgio(READ10, 0x10000, b"")])

# a DVD+RW with an ISO 9660 file system (data in block 16)
CASES["synthetic-dvd-plus-rw-data"] = (
    "DVD+RW with an ISO 9660 volume descriptor in block 16: complete",
    compat(BURNER, CDS_DISC_OK) + [inquiry()] + get_config(0x1a, BURNER_PROFILES)
    + toc([(1, 4, 0)]) + [disc_info(2, 1, 1), sgio(READ10, 0x10000, bytes(32768) + b"\x01CD001")])

# DVD-RW restricted overwrite, fresh: "appendable" turned into blank
CASES["synthetic-dvd-rw-ro-fresh"] = (
    "fresh DVD-RW in restricted overwrite mode: appendable reported as blank",
    compat(BURNER, CDS_DISC_OK) + [inquiry()] + get_config(0x13, BURNER_PROFILES)
    + toc([(1, 4, 0)]) + [disc_info(1, 1, 1, next_session=1)])

# write-protected DVD-RAM
CASES["synthetic-dvd-ram-protected"] = (
    "write-protected DVD-RAM: complete without reading blocks",
    compat(BURNER, CDS_DISC_OK) + [inquiry()] + get_config(0x12, BURNER_PROFILES)
    + toc([(1, 4, 0)]) + [disc_info(3, 1, 1), sgio(DVDSTRUCT, 8, bytes([0, 6, 0, 0, 2]))])

# formatted DVD-RAM with data in block 0
CASES["synthetic-dvd-ram-formatted"] = (
    "formatted DVD-RAM with data in block 0",
    compat(BURNER, CDS_DISC_OK) + [inquiry()] + get_config(0x12, BURNER_PROFILES)
    + toc([(1, 4, 0)])
    + [disc_info(3, 1, 1), sgio(DVDSTRUCT, 8, bytes(8)),
       sgio(FORMATCAP, 12, bytes([0, 0, 0, 16, 0, 0x22, 0x90, 0x00, 2, 0, 8, 0])),
       sgio(READ10, 0x10000, b"\xeb\x3c\x90MSDOS5.0")])

# DVD-RAM whose format capacities say "no media"
CASES["synthetic-dvd-ram-nomedia"] = (
    "DVD-RAM: format capacities report no medium",
    compat(BURNER, CDS_DISC_OK) + [inquiry()] + get_config(0x12, BURNER_PROFILES)
    + toc([(1, 4, 0)])
    + [disc_info(3, 1, 1), sgio(DVDSTRUCT, 8, bytes(8)),
       sgio(FORMATCAP, 12, bytes([0, 0, 0, 16, 0, 0, 0, 0, 3, 0, 8, 0]))])

# DVD-RAM with a bad format capacities list length
CASES["synthetic-dvd-ram-badformat"] = (
    "DVD-RAM: format capacity list length not a multiple of 8",
    compat(BURNER, CDS_DISC_OK) + [inquiry()] + get_config(0x12, BURNER_PROFILES)
    + toc([(1, 4, 0)])
    + [disc_info(3, 1, 1), sgio(DVDSTRUCT, 8, bytes(8)),
       sgio(FORMATCAP, 12, bytes([0, 0, 0, 12, 0, 0, 0, 0, 2, 0, 8, 0]))])

# pre-MMC2 drive (GET CONFIGURATION: ILLEGAL REQUEST, invalid opcode), CD-RW
OLD_DI2 = cdb((0, 0x51), (8, 2), (9, 0))
CASES["synthetic-old-mmc-cdrw"] = (
    "pre-MMC2 drive with a CD-RW (erasable)",
    compat(CDC_CD_R | CDC_CD_RW, CDS_DISC_OK) + [inquiry()]
    + [sgio(cdb((0, 0x46), (8, 8), (9, 0)), 8, sense=sense(5, 0x20))]
    + [sgio(OLD_DI2, 2, struct.pack(">H", 32)),
       sgio(cdb((0, 0x51), (8, 34), (9, 0)), 34, struct.pack(">HB", 32, 0x10 | 1))])

CASES["synthetic-old-mmc-cdr"] = (
    "pre-MMC2 CD-R drive with a blank CD-R",
    compat(CDC_CD_R, CDS_DISC_OK) + [inquiry()]
    + [sgio(cdb((0, 0x46), (8, 8), (9, 0)), 8, sense=sense(5, 0x24))]
    + [sgio(OLD_DI2, 2, struct.pack(">H", 14)),
       sgio(cdb((0, 0x51), (8, 16), (9, 0)), 16, struct.pack(">HB", 14, 0))])

# pre-MMC2, READ DISC INFORMATION fails too, but the drive says a disc is in
CASES["synthetic-old-mmc-assume-cd"] = (
    "pre-MMC2 drive, no disc information, disc present: assumed data CD",
    compat(0, CDS_DISC_OK) + [inquiry()]
    + [sgio(cdb((0, 0x46), (8, 8), (9, 0)), 8, sense=sense(5, 0x20)),
       sgio(OLD_DI2, 2, sense=sense(5, 0x20))]
    + toc([(1, 4, 0)]) + [disc_info(2, 1, 1)] + lock_lines(True))

CASES["synthetic-old-mmc-nomedia"] = (
    "pre-MMC2 drive without disc",
    compat(0, CDS_NO_DISC) + [inquiry()]
    + [sgio(cdb((0, 0x46), (8, 8), (9, 0)), 8, sense=sense(5, 0x20)),
       sgio(OLD_DI2, 2, sense=sense(2, 0x3a))])

# GET CONFIGURATION fails with another sense: drive features only
CASES["synthetic-getconfig-error"] = (
    "GET CONFIGURATION fails with NOT READY",
    compat(CDC_DVD, CDS_DISC_OK) + [inquiry(),
                                    sgio(cdb((0, 0x46), (8, 8), (9, 0)), 8, sense=sense(2, 0x04, 1))]
    + lock_lines(True))

# SG_IO itself fails
CASES["synthetic-sgio-eio"] = (
    "every SG_IO fails with EIO; a disc is in",
    compat(CDC_DVD, CDS_DISC_OK) + [sgio(INQ, 36, ret=-1, err=EIO)] + lock_lines(False))

# not an MMC unit (direct-access device type)
CASES["synthetic-not-mmc"] = (
    "INQUIRY says peripheral type 0",
    compat(CDC_CD_R, CDS_NO_DISC) + [inquiry(devtype=0)])

# CDROM_GET_CAPABILITY unsupported: nothing printed, failure
CASES["synthetic-no-capability"] = (
    "CDROM_GET_CAPABILITY fails (not a cdrom device)",
    [ioctl(CDROM_GET_CAPABILITY, 0, -1, ENOTTY)])

# a BD writer with many profiles, some unknown, MO profiles, a BD-R SRM disc
BD_PROFILES = [0x43, 0x42, 0x41, 0x40, 0x2b, 0x1b, 0x1a, 0x15, 0x16, 0x14, 0x13, 0x12, 0x11,
               0x10, 0x0a, 0x09, 0x08, 0x03, 0x04, 0x05, 0x02, 0x01, 0x18, 0x17, 0x20, 0x21,
               0x22, 0x2a, 0x50, 0x51, 0x52, 0x53, 0x58, 0x5a, 0x5b, 0x5c, 0xffff, 0x1234, 0x43]
CASES["synthetic-bd-writer"] = (
    "BD writer listing every known profile and unknown ones, BD-R SRM disc",
    compat(BURNER, CDS_DISC_OK) + [inquiry()]
    + get_config(0x41, BD_PROFILES, extra_features=struct.pack(">HBB", 1, 3, 8) + bytes(8))
    + toc([(1, 4, 0)]) + [disc_info(1, 1, 1, next_session=2)])

# MO / DVD-R DDR / DVD-R DL media lines
CASES["synthetic-dvd-r-ddr"] = (
    "DVD-R DDR medium (ID_CDROM_MEDIA_DVD_R)",
    compat(BURNER, CDS_DISC_OK) + [inquiry()] + get_config(0x18, [0x18, 0x15, 0x04])
    + toc([(1, 4, 0)]) + [disc_info(2, 1, 1)])
CASES["synthetic-mo"] = (
    "magneto-optical medium, unknown medium state 3",
    compat(0, CDS_DISC_OK) + [inquiry()] + get_config(0x04, [0x03, 0x04, 0x05])
    + toc([(1, 4, 0)]) + [disc_info(3, 1, 1)])
CASES["synthetic-dvd-r-dl"] = (
    "DVD-R DL jump recording medium, appendable",
    compat(BURNER, CDS_DISC_OK) + [inquiry()] + get_config(0x16, [0x16, 0x15])
    + toc([(1, 4, 0)]) + [disc_info(1, 1, 1, next_session=2)])
CASES["synthetic-unknown-profile"] = (
    "current profile unknown to cdrom_id (0x0100)",
    compat(0, CDS_DISC_OK) + [inquiry()] + get_config(0x100, [0x100, 0x08])
    + toc([(1, 4, 0)]) + [disc_info(2, 1, 1)])

# malformed lengths: GET CONFIGURATION claims more than the buffer, short
# descriptors; TOC claims the maximum; last track below the first
CASES["synthetic-huge-lengths"] = (
    "GET CONFIGURATION length 0x01000000, READ TOC length 0xffff",
    compat(CDC_DVD, CDS_DISC_OK) + [inquiry()]
    + get_config(0x10, [0x10, 0x08], claimed=0x01000000)
    + [sgio(cdb((0, 0x43), (6, 1), (8, 12), (9, 0)), 12, struct.pack(">HBB", 0xffff, 1, 1))]
    + [disc_info(2, 1, 1)])
CASES["synthetic-toc-reversed"] = (
    "READ TOC with last track below the first",
    compat(CDC_DVD, CDS_DISC_OK) + [inquiry()] + get_config(0x08, [0x10, 0x08])
    + [sgio(cdb((0, 0x43), (6, 1), (8, 12), (9, 0)), 12, struct.pack(">HBB", 26, 5, 2)),
       sgio(cdb((0, 0x43), (6, 5), (8, 28), (9, 0)), 28,
            struct.pack(">HBB", 26, 5, 2) + struct.pack(">BBBBI", 0, 0x14, 5, 0, 0) * 3),
       sgio(cdb((0, 0x43), (2, 1), (8, 12), (9, 0)), 12, sense=sense(5, 0x24))]
    + [disc_info(2, 0x0102, 0x0304)])
CASES["synthetic-short-config"] = (
    "GET CONFIGURATION length 4 (re-read with the whole buffer), descriptor past the end",
    compat(CDC_DVD, CDS_NO_DISC) + [inquiry()]
    + [sgio(cdb((0, 0x46), (8, 8), (9, 0)), 8, struct.pack(">IHH", 4, 0, 0)),
       sgio(cdb((0, 0x46), (7, 0xff), (8, 0xfa), (9, 0)), 65530,
            struct.pack(">IHH", 20, 0, 0) + struct.pack(">HBB", 0, 3, 200) + b"\x00\x10\x00\x00"
            + b"\x00\x08\x00\x00")])


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, (what, lines) in sorted(CASES.items()):
        with open(os.path.join(OUT, name + ".rec"), "w") as f:
            f.write("# SPDX-License-Identifier: GPL-2.0-or-later\n")
            f.write("# synthetic (tests/helpers/make-cdrom-synthetic.py): %s\n" % what)
            if any(line.startswith("sgio 1b") for line in lines):
                opt = "--eject-media"
            elif "ioctl 5329 1 0 0" in lines:
                opt = "--lock-media"
            elif "ioctl 5329 0 0 0" in lines:
                opt = "--unlock-media"
            else:
                opt = ""
            f.write("# options: %s\n" % opt)
            for line in lines:
                f.write(line + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
