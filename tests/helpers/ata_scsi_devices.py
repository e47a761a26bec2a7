# SPDX-License-Identifier: GPL-2.0-or-later
"""Recorded devices for ata_id and scsi_id (tests/helpers/sg-shim.c plays
them): IDENTIFY blocks, INQUIRY data and VPD pages of realistic devices, as
their kernels' SCSI/ATA translation (libata, QEMU's emulation, USB bridges)
returns them, plus broken ones for the error paths.

Each device is a dict of sg-shim directives (see sg-shim.c); ATA_CASES and
SCSI_CASES list (case id, device, argv) triples. src/helpers/test-ata-identify.c
and test-scsi-inquiry.c build the same blocks in C."""

import struct


def ata_string(s, nbytes):
    """ATA string: space padded, two characters per word, high byte first."""
    b = s.encode("latin-1") if isinstance(s, str) else s
    b = b.ljust(nbytes, b" ")[:nbytes]
    return bytes(x for i in range(0, nbytes, 2) for x in (b[i + 1], b[i]))


def identify(words, serial="", fw="", model=""):
    """512-byte IDENTIFY block: words {index: value} little-endian, strings at
    words 10 (serial, 20 bytes), 23 (firmware, 8), 27 (model, 40)."""
    blk = bytearray(512)
    for i, v in words.items():
        struct.pack_into("<H", blk, i * 2, v)
    if serial is not None:
        blk[20:40] = ata_string(serial, 20)
    if fw is not None:
        blk[46:54] = ata_string(fw, 8)
    if model is not None:
        blk[54:94] = ata_string(model, 40)
    return bytes(blk)


def hd_driveid(block):
    """HDIO_GET_IDENTITY's struct hd_driveid for `block` (libata swaps the
    strings back into reading order; words are host order = little-endian)."""
    blk = bytearray(block)
    for off, n in ((20, 20), (46, 8), (54, 40)):
        s = blk[off:off + n]
        blk[off:off + n] = bytes(x for i in range(0, n, 2) for x in (s[i + 1], s[i]))
    return bytes(blk)


def inquiry(ptype, vendor, model, rev, removable=False, version=5, extra=b""):
    """Standard INQUIRY data (36 bytes + extra)."""
    body = (vendor.encode("latin-1").ljust(8)[:8] + model.encode("latin-1").ljust(16)[:16]
            + rev.encode("latin-1").ljust(4)[:4])
    data = bytes([ptype & 0x1f, 0x80 if removable else 0, version, 0x02, 31 + len(extra),
                  0, 0, 0x02]) + body + extra
    return data


def vpd(page, payload):
    return bytes([0, page, len(payload) >> 8, len(payload) & 0xff]) + payload


def desc(code_set, assoc, id_type, ident, piv=0):
    """A page 0x83 designation descriptor."""
    return bytes([code_set & 0x0f, (piv << 7) | (assoc << 4) | id_type, 0, len(ident)]) + ident


# ---------------------------------------------------------------- ATA devices

# QEMU's emulated IDE disk (hw/ide/core.c ide_identify) on its AHCI controller:
# NCQ (word 75/76), write cache, SMART, LBA48, no WWN, no rotation rate.
QEMU_HD = identify({
    0: 0x0040, 1: 16383, 3: 16, 4: 512 * 63, 5: 512, 6: 63, 20: 3, 21: 512, 22: 4,
    47: 0x8010, 48: 1, 49: (1 << 11) | (1 << 9) | (1 << 8), 51: 0x200, 52: 0x200, 53: 7,
    54: 16383, 55: 16, 56: 63, 57: 0xfc10, 58: 0x00fb, 59: 0x110, 60: 0xffff, 61: 0x0fff,
    62: 0x07, 63: 0x07, 64: 0x03, 65: 120, 66: 120, 67: 120, 68: 120, 75: 31, 76: 1 << 8,
    80: 0xf0, 81: 0x16, 82: (1 << 14) | (1 << 5) | 1, 83: (1 << 14) | (1 << 13) | (1 << 12) | (1 << 10),
    84: 1 << 14, 85: (1 << 14) | (1 << 5) | 1, 86: (1 << 14) | (1 << 13) | (1 << 12) | (1 << 10),
    87: 1 << 14, 88: 0x3f | (1 << 13), 93: 1 | (1 << 14) | 0x2000, 100: 0, 101: 0x0400,
}, serial="QM00001", fw="2.5+", model="QEMU HARDDISK")

# QEMU's ATAPI DVD-ROM (ide_atapi_identify): removable CD-ROM, 12-byte packets.
QEMU_DVD = identify({
    0: (2 << 14) | (5 << 8) | (1 << 7) | (2 << 5), 20: 3, 21: 512, 22: 4, 48: 1,
    49: 1 << 9, 53: 3, 63: 0x103, 64: 1, 65: 0xb4, 66: 0xb4, 67: 0x12c, 68: 0xb4,
    71: 30, 72: 30, 80: 0x1e,
}, serial="QM00003", fw="2.5+", model="QEMU DVD-ROM")

# A SATA SSD (Samsung 860 EVO class): WWN, non-rotating, SATA gen1-3, security
# supported and frozen, enhanced erase, download microcode, HPA, PM, SMART.
SATA_SSD = identify({
    0: 0x0040, 47: 0x8001, 49: 0x2f00, 53: 0x0007, 59: 0x0101, 60: 0xffff, 61: 0x0fff,
    63: 0x0007, 64: 0x0003, 75: 0x001f, 76: 0x170e, 77: 0x00c6, 78: 0x016c, 79: 0x0040,
    80: 0x07f8, 81: 0x0000, 82: 0x746b, 83: 0x7d61, 84: 0x6163, 85: 0x7469, 86: 0xbc41,
    87: 0x6163, 88: 0x407f, 89: 0x0001, 90: 0x0001, 93: 0x0000, 100: 0x6db0, 101: 0x3a38,
    106: 0x4000, 108: 0x5002, 109: 0x538e, 110: 0x40a1, 111: 0xb2c3, 128: 0x0029,
    169: 0x0001, 217: 0x0001,
}, serial="S3Z2NB0K123456A", fw="RVT01B6Q", model="Samsung SSD 860 EVO 500GB")

# A 7200 rpm desktop disk with AAM, APM (enabled), PUIS, security enabled at
# level maximum and locked, erase times, WWN.
SATA_HDD = identify({
    0: 0x427a, 47: 0x8010, 49: 0x2f00, 53: 0x0007, 76: 0x670e, 82: 0x346b, 83: 0x7f69,
    84: 0x6163, 85: 0x346b, 86: 0xbe29, 87: 0x6163, 89: 0x00a5, 90: 0x00a5, 91: 0x40fe,
    94: 0x80fe, 108: 0x5001, 109: 0x4ee2, 110: 0x0b1a, 111: 0x2f3c, 128: 0x0137, 217: 7200,
}, serial="     WD-WCC6Y0ABCDEF", fw="01.01A01", model="WDC WD10EZEX-08WN4A0")

# A 2.5" disk in a USB enclosure whose bridge (SAT) answers pass-through with
# fixed-format sense (ASC/ASCQ 00/1D).
USB_HDD = identify({
    0: 0x0040, 76: 0x0f0e, 82: 0x746b, 83: 0x7d69, 85: 0x7469, 86: 0xbc49, 91: 0x0080,
    108: 0x5000, 109: 0xc500, 110: 0xa3b4, 111: 0xc5d6, 217: 5400,
}, serial="ZDZ1ABCD", fw="0001", model="ST2000LM015-2E8174")

# CompactFlash card (word 0 signature 848Ah), parallel ATA (word 76 FFFFh).
CF_CARD = identify({0: 0x848a, 76: 0xffff, 82: 0x000c, 83: 0x7068, 85: 0x000c, 86: 0x7044,
                    91: 0x4060},
                   serial="CF0123456789", fw="V1.0", model="SanDisk SDCFXS-016G")

# Strings that need the encoding rules: UTF-8, invalid bytes, a backslash,
# runs of whitespace (tabs), leading blanks.
ODD_STRINGS = identify({0: 0x0040, 82: 0x4021, 85: 0x4001},
                       serial="  AB\tC D  ", fw=" 1.0\\x ",
                       model=b"Gr\xc3\xbc\xc3\x9fe  \\Disk\xff#+=@ x\x01y")

ATA_INQ = inquiry(0, "ATA", "QEMU HARDDISK", "2.5+")


def ata_dev(block, inq=None, **kw):
    d = {"inquiry": inq or ATA_INQ, "ata": block}
    d.update(kw)
    return d


ATA_DEVICES = {
    "qemu-ahci-hd": ata_dev(QEMU_HD),
    "qemu-ahci-hd-bsg": ata_dev(QEMU_HD, v4="yes"),
    "qemu-dvd-rom": {"inquiry": inquiry(5, "QEMU", "QEMU DVD-ROM", "2.5+", removable=True),
                     "atapi": QEMU_DVD},
    "sata-ssd-wwn": ata_dev(SATA_SSD, inquiry(0, "ATA", "Samsung SSD 860", "1B6Q")),
    "sata-hdd-aam-apm": ata_dev(SATA_HDD, inquiry(0, "ATA", "WDC WD10EZEX-08W", "1A01")),
    "usb-sat-bridge-hdd": ata_dev(USB_HDD, inquiry(0, "ST2000LM", "015-2E8174", "0001"),
                                  ata_sense="fixed"),
    "cf-card": ata_dev(CF_CARD, inquiry(0, "ATA", "SanDisk SDCFXS-0", "V1.0")),
    "odd-strings": ata_dev(ODD_STRINGS),
    "zbc-host-managed": ata_dev(SATA_HDD, inquiry(0x14, "ATA", "HGST HSH721414AL", "W232")),
    # the bridge has no SAT: pass-through is an illegal request, no HDIO either
    "usb-stick-no-sat": {"inquiry": inquiry(0, "SanDisk", "Cruzer Blade", "1.00", removable=True)},
    # an old PATA disk via ide/HDIO only: SG_IO refused
    "hdio-only": {"sg_errno": "25", "hdio": hd_driveid(SATA_HDD)},
    # SG_IO data but no ATA return descriptor: HDIO answers, words from the SG buffer
    "sense-missing-hdio": ata_dev(SATA_SSD, ata_sense="none", hdio=hd_driveid(QEMU_HD)),
    "all-zero-identify": ata_dev(bytes(512), hdio=hd_driveid(CF_CARD)),
    "tape-type": {"inquiry": inquiry(1, "HP", "Ultrium 6-SCSI", "35GD"), "ata": QEMU_HD},
    "inquiry-fails-status": ata_dev(QEMU_HD, status="std 0 7 0"),
    "sg-eio": {"sg_errno": "5"},
    "open-enoent": {"open_errno": "2"},
}

ATA_CASES = [(name + ("" if export else " (plain)"), name, ["--export"] if export else [])
             for name in ATA_DEVICES for export in (True, False)]
ATA_CASES += [("no-device-argument", "qemu-ahci-hd", None),
              ("unknown-option-ignored", "qemu-ahci-hd", ["--bogus", "-x"]),
              ("help", "qemu-ahci-hd", ["--help"])]


def shim_conf(dev):
    """The sg-shim.c description of a device dict."""
    lines = []
    for key, val in dev.items():
        if key == "vpd":
            for page, data in sorted(val.items()):
                lines.append("vpd %02x %s" % (page, data.hex()))
        elif key == "status":
            for st in (val if isinstance(val, list) else [val]):
                lines.append("status " + st)
        elif isinstance(val, (bytes, bytearray)):
            lines.append("%s %s" % (key, bytes(val).hex()))
        else:
            lines.append("%s %s" % (key, val))
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- SCSI devices

def naa(hexstr):
    return desc(1, 0, 3, bytes.fromhex(hexstr))


QEMU_HD_INQ = inquiry(0, "QEMU", "QEMU HARDDISK", "2.5+")
# QEMU's scsi-hd (hw/scsi/scsi-disk.c) without serial=: page 0x83 holds the
# drive name as an ASCII vendor-specific id; pages 00 83 b0 b1 b2.
QEMU_SCSI_HD = {
    "inquiry": QEMU_HD_INQ,
    "vpd": {0x00: vpd(0x00, bytes([0x00, 0x83, 0xb0, 0xb1, 0xb2])),
            0x83: vpd(0x83, desc(2, 0, 0, b"drive-scsi0-0-0-0"))},
}
# scsi-hd with serial= and wwn=: page 0x80 and an NAA 5 id besides the name.
QEMU_SCSI_HD_WWN = {
    "inquiry": QEMU_HD_INQ,
    "vpd": {0x00: vpd(0x00, bytes([0x00, 0x80, 0x83, 0xb0, 0xb1, 0xb2])),
            0x80: vpd(0x80, b"QM-SERIAL-0042"),
            0x83: vpd(0x83, desc(2, 0, 0, b"QM-SERIAL-0042") + naa("5000c50015ea71ac"))},
}
QEMU_SCSI_CD = {
    "inquiry": inquiry(5, "QEMU", "QEMU CD-ROM", "2.5+", removable=True),
    "vpd": {0x00: vpd(0x00, bytes([0x00, 0x83])),
            0x83: vpd(0x83, desc(2, 0, 0, b"drive-scsi0-0-1-0"))},
}
# libata's SCSI translation of a SATA SSD (drivers/ata/libata-scsi.c): page
# 0x80 is the ATA serial as is, 0x83 the serial (vendor specific), the T10
# "ATA" + model + serial id and the NAA WWN.
SSD_SERIAL = b"S3Z2NB0K123456A     "
LIBATA_SSD = {
    "inquiry": inquiry(0, "ATA", "Samsung SSD 860", "1B6Q"),
    "vpd": {0x00: vpd(0x00, bytes([0x00, 0x80, 0x83, 0x89, 0xb0, 0xb1, 0xb2])),
            0x80: vpd(0x80, SSD_SERIAL),
            0x83: vpd(0x83, desc(2, 0, 0, SSD_SERIAL)
                      + desc(2, 0, 1, b"ATA     " + b"Samsung SSD 860 EVO 500GB".ljust(40) + SSD_SERIAL)
                      + naa("5002538e40a1b2c3"))},
}
# A disk without WWN behind libata: the T10 vendor id wins over the serial.
LIBATA_HDD_NO_WWN = {
    "inquiry": inquiry(0, "ATA", "ST500DM002-1BD14", "KC45"),
    "vpd": {0x00: vpd(0x00, bytes([0x00, 0x80, 0x83, 0x89])),
            0x80: vpd(0x80, b"            Z3T0ABCD"),
            0x83: vpd(0x83, desc(2, 0, 0, b"            Z3T0ABCD")
                      + desc(2, 0, 1, b"ATA     " + b"ST500DM002-1BD142".ljust(40)
                             + b"            Z3T0ABCD"))},
}
# An LIO iSCSI/iblock LUN: NAA 6 (registered extended, 16 bytes), T10 id,
# relative target port, target port group 0x0001, SCSI name string.
LIO_LUN = {
    "inquiry": inquiry(0, "LIO-ORG", "block1", "4.0"),
    "vpd": {0x00: vpd(0x00, bytes([0x00, 0x80, 0x83, 0x86, 0xb0, 0xb1, 0xb2])),
            0x80: vpd(0x80, b"f3b7c5a1-2d4e-4f60-8a9b-0c1d2e3f4a5b"),
            0x83: vpd(0x83, desc(1, 0, 3, bytes.fromhex("6001405f3b7c5a12d4e4f608a9b0c1d2"))
                      + desc(2, 0, 1, b"LIO-ORG block1:f3b7c5a1-2d4e-4f60-8a9b-0c1d2e3f4a5b")
                      + desc(1, 1, 4, bytes([0, 0, 0, 1]), piv=1)
                      + desc(1, 1, 5, bytes([0, 0, 0, 1]), piv=1)
                      + desc(3, 1, 8, b"iqn.2003-01.org.linux-iscsi.host:sn.1234,t,0x1\0\0", piv=1))},
}
# EUI-64 only (an NVMe namespace behind a SCSI translation layer).
NVME_SNTL = {
    "inquiry": inquiry(0, "NVMe", "Samsung SSD 970", "2B2Q"),
    "vpd": {0x00: vpd(0x00, bytes([0x00, 0x80, 0x83])),
            0x80: vpd(0x80, b"0025_3852_81B0_1234."),
            0x83: vpd(0x83, desc(1, 0, 2, bytes.fromhex("0025385281b01234")))},
}
# A USB stick that knows no VPD page: ILLEGAL REQUEST for every one of them.
USB_STICK = {"inquiry": inquiry(0, "SanDisk", "Cruzer Blade", "1.00", removable=True)}
# A USB bridge whose stick has only a page 0x80 serial.
USB_STICK_SERIAL = {
    "inquiry": inquiry(0, "Kingston", "DataTraveler 3.0", "PMAP", removable=True),
    "vpd": {0x00: vpd(0x00, bytes([0x00, 0x80])),
            0x80: vpd(0x80, b"60A44C413A8CF3A1B9770123")},
}
# EMC Symmetrix, SCSI-2 format page 0x83 (byte 6 holds the OUI).
EMC_SYMMETRIX = {
    "inquiry": inquiry(0, "EMC", "SYMMETRIX", "5771"),
    "vpd": {0x00: vpd(0x00, bytes([0x00, 0x80, 0x83])),
            0x80: vpd(0x80, b"0001234567"),
            0x83: bytes([0, 0x83, 0, 16]) + bytes.fromhex("6006048000028750123453594d323430")},
}
# A tape drive with a target port group and a vendor specific id only.
TAPE = {
    "inquiry": inquiry(1, "HP", "Ultrium 6-SCSI", "35GD"),
    "vpd": {0x00: vpd(0x00, bytes([0x00, 0x80, 0x83])),
            0x80: vpd(0x80, b"HU1234ABCD"),
            0x83: vpd(0x83, desc(1, 0, 3, bytes.fromhex("50014380123456ab"))
                      + desc(1, 1, 5, bytes([0, 0, 0x01, 0x2c])))},
}
# Vendor with a NUL inside: the vendor-specific id cannot be built and
# systemd keeps the '0' it already wrote.
NUL_VENDOR = {
    "inquiry": bytes([0, 0, 5, 2, 31, 0, 0, 2]) + b"AB\0\0\0\0\0\0" + b"Model           " + b"1.00",
    "vpd": {0x00: vpd(0x00, bytes([0x00, 0x83])),
            0x83: vpd(0x83, desc(2, 0, 0, b"ID-1"))},
}
# Page 0 answered with the standard INQUIRY data (ill-behaved devices).
PAGE0_IS_STD = {
    "inquiry": inquiry(0, "GENERIC", "USB2.0 Card Read", "1.00"),
    "vpd": {0x00: inquiry(0, "GENERIC", "USB2.0 Card Read", "1.00"),
            0x83: vpd(0x83, naa("5000000000000001"))},
}
# Odd bytes in vendor/model and a serial with blanks, tabs and a newline.
ODD_SCSI = {
    "inquiry": inquiry(0, "Ve\xe9 d", "M\\x ode\tl\xc3", "r 1"),
    "vpd": {0x00: vpd(0x00, bytes([0x00, 0x80, 0x83])),
            0x80: vpd(0x80, b"  SER\tIAL\nID_EVIL=1 "),
            0x83: vpd(0x83, desc(2, 0, 0, b" a  b\tc "))},
}

# An ASCII NAA id carrying control characters (a newline would start a
# property of the device's choosing).
NAA_ASCII_CC = {
    "inquiry": QEMU_HD_INQ,
    "vpd": {0x00: vpd(0x00, bytes([0x00, 0x80, 0x83])),
            0x80: vpd(0x80, b"SER\xffIAL"),
            0x83: vpd(0x83, desc(2, 0, 3, b"ABCD\nID_EVIL=1\x7fQRSTUVW"))},
}

SCSI_DEVICES = {
    "qemu-scsi-hd": QEMU_SCSI_HD,
    "qemu-scsi-hd-bsg": dict(QEMU_SCSI_HD, v4="yes"),
    "qemu-scsi-hd-wwn": QEMU_SCSI_HD_WWN,
    "qemu-scsi-cd": QEMU_SCSI_CD,
    "libata-ssd-wwn": LIBATA_SSD,
    "libata-hdd-no-wwn": LIBATA_HDD_NO_WWN,
    "lio-lun-naa6-tpg": LIO_LUN,
    "nvme-sntl-eui64": NVME_SNTL,
    "usb-stick-no-vpd": USB_STICK,
    "usb-stick-serial": USB_STICK_SERIAL,
    "emc-symmetrix-prespc3": EMC_SYMMETRIX,
    "tape-tpg": TAPE,
    "nul-vendor": NUL_VENDOR,
    "page0-is-std-inquiry": PAGE0_IS_STD,
    "odd-strings": ODD_SCSI,
    "naa-ascii-control-chars": NAA_ASCII_CC,
    "vpd83-retry-then-80": dict(QEMU_SCSI_HD_WWN, status="vpd83 0 14 0"),
    "vpd83-unit-attention": dict(QEMU_SCSI_HD_WWN, status="vpd83 2 0 8 700006000000000a0000000029000000"),
    "vpd83-recovered": dict(LIO_LUN, status="vpd83 2 0 8 720100000000000000"),
    "std-inquiry-fails": dict(QEMU_SCSI_HD, status="std 0 7 0"),
    "sg-eio": {"sg_errno": "5"},
    "open-enoent": {"open_errno": "2"},
    "open-eacces": {"open_errno": "13"},
}

WL = ["--export", "--whitelisted", "-d", "@DEV@"]
SCSI_CASES = []
for _name in SCSI_DEVICES:
    SCSI_CASES += [
        (_name, _name, WL),
        (_name + " -g -u", _name, ["-g", "-u", "@DEV@"]),
        (_name + " -g", _name, ["--whitelisted", "--device=@DEV@"]),
    ]
for _name in ("qemu-scsi-hd-wwn", "libata-ssd-wwn", "lio-lun-naa6-tpg", "emc-symmetrix-prespc3",
              "usb-stick-serial", "tape-tpg"):
    for _page in ("0x80", "0x83", "pre-spc3-83"):
        SCSI_CASES.append((_name + " --page=" + _page, _name, WL + ["--page=" + _page]))
SCSI_CASES += [
    ("sg-version-3", "qemu-scsi-hd-bsg", ["--sg-version=3"] + WL),
    ("sg-version-4 on sd", "libata-ssd-wwn", ["-s", "4"] + WL),
    ("sg-version-bad", "qemu-scsi-hd", ["--sg-version=5"] + WL),
    ("page-bad", "qemu-scsi-hd", ["--page=0x81"] + WL),
    ("not-whitelisted", "qemu-scsi-hd", ["--export", "@DEV@"]),
    ("blacklisted", "qemu-scsi-hd", ["-g", "-b", "-x", "@DEV@"]),
    ("no-device", "qemu-scsi-hd", ["--export", "-g"]),
    ("positional-device", "libata-ssd-wwn", ["@DEV@", "--export", "-g"]),
    ("unknown-option", "qemu-scsi-hd", ["--bogus"] + WL),
    ("help", "qemu-scsi-hd", ["--help"]),
    ("config-generic", "libata-ssd-wwn", ["--export", "@DEV@"],
     {"env_config": "# comment\n\n  OPTIONS=--whitelisted -p 0x80\n"}),
    # '=' splits words in the file: "--page" loses its argument (exit 2)
    ("config-generic-eq-splits", "libata-ssd-wwn", ["--export", "@DEV@"],
     {"env_config": "OPTIONS=--whitelisted --page=0x80\n"}),
    ("config-vendor-model", "libata-ssd-wwn", ["--export", "--config=@WORK@/c", "@DEV@"],
     {"files": {"c": "VENDOR=\"ATA\",MODEL=\"Samsung\",OPTIONS=\"-g -p 0x80\"\n"}}),
    ("config-vendor-blacklist", "qemu-scsi-hd", WL + ["--config=@WORK@/c"],
     {"files": {"c": "vendor=QEMU,options=-b\nVENDOR=QEMU,OPTIONS=-g\n"}}),
    ("config-no-match", "qemu-scsi-hd", WL + ["--config=@WORK@/c"],
     {"files": {"c": "VENDOR=\"ATA\",OPTIONS=\"-b\"\n"}}),
    ("config-bad-line", "qemu-scsi-hd", WL + ["--config=@WORK@/c"],
     {"files": {"c": "VENDOR=\"QEMU\", MODEL=\"x\",OPTIONS=\"-b\"\n"}}),
    ("config-bad-option", "qemu-scsi-hd", WL + ["--config=@WORK@/c"],
     {"files": {"c": "VENDOR=QEMU,OPTIONS=-g --device=/x -b\n"}}),
    ("config-escape", "qemu-scsi-hd", WL + ["--config=@WORK@/c"],
     {"files": {"c": "VENDOR=QE\\MU,OPTIONS=-\\b\n"}}),
    ("config-long-line", "qemu-scsi-hd", WL + ["--config=@WORK@/c"],
     {"files": {"c": "#" + "x" * 300 + "\nVENDOR=QEMU,OPTIONS=-b\n"}}),
    ("config-generic-bad", "qemu-scsi-hd", WL, {"env_config": "OPTIONS=--nope\n"}),
]
