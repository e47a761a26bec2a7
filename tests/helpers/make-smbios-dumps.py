#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Write the SMBIOS dumps for dmi_memory_id's tests (tests/helpers/fixtures/
dmi/NAME.hex: '#' comment lines, then the bytes of a dump in hex, 32 a line;
the dump has dmidecode --dump-bin's layout: the entry point at offset 0, the
structure table at the address it names, 0x20 unless a case says otherwise).
The tests turn them into binary files.

qemu-q35.hex is not made here: it is the table of a QEMU 7.2 q35 VM with
one DIMM described by -smbios type=17,... (its /sys/firmware/dmi/tables
files, the table moved to 0x20 as dmidecode does).

NAME.out (after its two comment lines) and the exit status in exit-codes
are what systemd 252's dmi_memory_id -F prints on the dump
(tests/integration/test_helpers_cdrom_dmi.py checks tudev's against it live
and can rewrite them: TUDEV_SAVE_DMI_EXPECTED=1)."""

import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "fixtures", "dmi")


def structure(stype, handle, body, strings=(), length=None):
    """body: the formatted area after the 4-byte header."""
    fmt = bytes(body)
    if length is not None:
        fmt = fmt[:length - 4].ljust(length - 4, b"\0")
    head = struct.pack("<BBH", stype, 4 + len(fmt), handle)
    tail = b"".join(s + b"\0" for s in strings) + b"\0" if strings else b"\0\0"
    return head + fmt + tail


def memory_array(handle, location=0x03, use=0x03, ec=0x03, max_kib=0x80000000,
                 ext_max=0, ndev=4, length=0x17):
    body = struct.pack("<BBBIHH", location, use, ec, max_kib, 0xfffe, ndev)
    body += struct.pack("<Q", ext_max)
    return structure(16, handle, body, length=length)


# type 17 fields: name -> (offset, struct format)
FIELDS = {
    "array": (0x04, "<H"), "error": (0x06, "<H"), "total_width": (0x08, "<H"),
    "data_width": (0x0a, "<H"), "size": (0x0c, "<H"), "form": (0x0e, "B"), "set": (0x0f, "B"),
    "locator": (0x10, "B"), "bank": (0x11, "B"), "type": (0x12, "B"), "detail": (0x13, "<H"),
    "speed": (0x15, "<H"), "manufacturer": (0x17, "B"), "serial": (0x18, "B"),
    "asset": (0x19, "B"), "part": (0x1a, "B"), "attributes": (0x1b, "B"),
    "ext_size": (0x1c, "<I"), "conf_speed": (0x20, "<H"), "min_v": (0x22, "<H"),
    "max_v": (0x24, "<H"), "conf_v": (0x26, "<H"), "technology": (0x28, "B"),
    "op_modes": (0x29, "<H"), "firmware": (0x2b, "B"), "module_mfr": (0x2c, "<H"),
    "module_product": (0x2e, "<H"), "ctrl_mfr": (0x30, "<H"), "ctrl_product": (0x32, "<H"),
    "nonvolatile": (0x34, "<Q"), "volatile": (0x3c, "<Q"), "cache": (0x44, "<Q"),
    "logical": (0x4c, "<Q"),
}


def memory_device(handle, strings=(), length=0x54, **f):
    b = bytearray(0x54)
    for name, value in f.items():
        off, fmt = FIELDS[name]
        struct.pack_into(fmt, b, off, value)
    return structure(17, handle, b[4:], strings, length=length)


def other(stype, handle, nbytes=0x10, strings=(b"Other",)):
    return structure(stype, handle, bytes(range(1, nbytes - 3)), strings)


END = structure(127, 0xfeff, b"")


def checksum_fix(b, start, length, at):
    b[at] = 0
    b[at] = (-sum(b[start:start + length])) & 0xff


def ep_sm3(table_len, address=0x20, eplen=0x18, bad_sum=False):
    b = bytearray(struct.pack("<5sBBBBBBBIQ", b"_SM3_", 0, eplen, 3, 3, 0, 1, 0, table_len,
                              address))
    checksum_fix(b, 0, min(eplen, len(b)), 5)
    if bad_sum:
        b[5] ^= 1
    return bytes(b)


def ep_sm2(table_len, count, address=0x20, eplen=0x1f, bad_sum=False, dmi=b"_DMI_"):
    b = bytearray(struct.pack("<4sBBBBHB5s5sBHIHB", b"_SM_", 0, eplen, 2, 8, 0x100, 0,
                              bytes(5), dmi, 0, table_len, address, count, 0x28))
    checksum_fix(b, 0x10, 0x0f, 0x15)
    checksum_fix(b, 0, min(eplen, len(b)), 4)
    if bad_sum:
        b[0x15] ^= 1
    return bytes(b)


def ep_legacy(table_len, count, address=0x20):
    b = bytearray(struct.pack("<5sBHIHB", b"_DMI_", 0, table_len, address, count, 0x21))
    checksum_fix(b, 0, 0x0f, 5)
    return bytes(b)


def dump(ep, table, address=0x20):
    return ep.ljust(address, b"\0") + table


def full_dimm(handle, n):
    strings = (b"  DIMM_%c1  " % (65 + n), b"P0_Node0_Channel%d_Dimm0" % n, b"Samsung",
               b"%08X" % (0x1234 + n), b"AssetTag%d" % n, b"M378A1K43CB2-CTD    ",
               b"FW-1.%d" % n)
    return memory_device(handle, strings, array=0x1000, error=0xfffe, total_width=72,
                         data_width=64, size=0x2000, form=0x09, set=0, locator=1, bank=2,
                         type=0x1a, detail=0x4080, speed=3200, manufacturer=3, serial=4,
                         asset=5, part=6, attributes=0x02, ext_size=0, conf_speed=2933,
                         min_v=1200, max_v=1200, conf_v=1200, technology=0x03, op_modes=0x0008,
                         firmware=7, module_mfr=0xce80, module_product=0, ctrl_mfr=0,
                         ctrl_product=0, nonvolatile=0, volatile=8 << 30, cache=0, logical=0)


def case_sm3_four_dimms():
    t = other(0, 0x0000) + other(1, 0x0001, 0x1b)
    t += memory_array(0x1000, max_kib=0x80000000, ext_max=64 << 30)
    t += full_dimm(0x1100, 0)
    # an empty slot as BIOSes describe it
    t += memory_device(0x1101, (b"DIMM_B1", b"NO DIMM", b"NO DIMM", b"NO DIMM", b"NO DIMM",
                                b"NO DIMM"), length=0x28, array=0x1000, total_width=0xffff,
                       data_width=0xffff, size=0, form=0x09, locator=1, bank=2, type=0x02,
                       detail=0x0000, manufacturer=3, serial=4, asset=5, part=6)
    # extended size, DDR3 voltages, set unknown
    t += memory_device(0x1102, (b"DIMM_C1", b"BANK 2", b"Hynix", b"  ", b" \t", b"HMT41GU6"),
                       length=0x28, array=0x1000, total_width=64, data_width=64, size=0x7fff,
                       ext_size=32768, form=0x0d, set=0xff, locator=1, bank=2, type=0x18,
                       detail=0x0082, speed=1600, manufacturer=3, serial=4, asset=0, part=6,
                       conf_speed=1333, min_v=1350, max_v=1500, conf_v=1100)
    # KiB size, out-of-spec codes, bad and absent strings, short structure
    t += memory_device(0x1103, (b"DIMM_D1", b"Bank"), length=0x1b, array=0x1000,
                       total_width=8, data_width=8, size=0x8200, form=0x42, set=3, locator=1,
                       bank=5, type=0x99, detail=0xffff, speed=0, manufacturer=0, serial=2,
                       asset=9, part=0)
    t += other(4, 0x0004, 0x30) + END
    return dump(ep_sm3(len(t)), t)


def case_sm3_nvdimm():
    t = memory_array(0x2000, location=0xa4, ec=0x05, max_kib=0x01000000, length=0x0f)
    t += memory_array(0x2001, location=0x0b, use=0x04, ec=0x09)  # video memory: skipped
    t += memory_array(0x2002, location=0xa5, ec=0x09, max_kib=0x80000000, ext_max=1 << 40,
                      length=0x0f)  # extended capacity but too short for it
    t += memory_array(0x2003, location=0x00, ec=0x00, max_kib=0x00400000)
    t += memory_device(0x2100, (b"NVDIMM 1", b"Optane"), length=0x54, array=0x2000,
                       total_width=72, data_width=64, size=0x7fff, ext_size=0x80000000,
                       form=0x10, locator=1, bank=2, type=0x1f, detail=0x1000, speed=2666,
                       manufacturer=2, serial=1, asset=2, part=1, attributes=0x0f,
                       conf_speed=2666, min_v=1234, max_v=2500, conf_v=0, technology=0x07,
                       op_modes=0x0032, firmware=2, module_mfr=0x8900, module_product=0x0556,
                       ctrl_mfr=0x0180, ctrl_product=0xffff, nonvolatile=128 << 30,
                       volatile=0xffffffffffffffff, cache=16 << 30, logical=1)
    t += structure(126, 0x2101, bytes(0x50))  # inactive: not counted
    t += memory_device(0x2102, (b"X",), length=0x14, size=0x100)  # too short: counted only
    t += memory_device(0x2103, (b"HBM stack",), length=0x54, size=0x400, form=0x05,
                       locator=1, type=0x24, detail=0x0002, technology=0x08, op_modes=0x00c1,
                       module_mfr=0x7f7f, module_product=0x0001, ctrl_mfr=1, ctrl_product=0)
    t += memory_device(0x2104, (b"LPDDR5",), length=0x44, size=0x4000, form=0x0b,
                       locator=1, type=0x23, technology=0x02, op_modes=0x0001,
                       nonvolatile=0xffffffffffffffff, volatile=0)
    t += END
    return dump(ep_sm3(len(t) + 0x1000), t)  # maximum larger than the file


def case_sm2_count():
    t = memory_array(0x10, ec=0x06, max_kib=0x00800000, length=0x0f)
    for i in range(4):
        t += memory_device(0x11 + i, (b"DIMM%d" % i,), length=0x22, size=0x1000, form=0x09,
                           locator=1, type=0x13, detail=0x0080, speed=800, conf_speed=667)
    return dump(ep_sm2(len(t), count=3), t)  # the count stops after 2 devices


def case_legacy():
    t = memory_array(0x10, location=0x01, ec=0x04, max_kib=0x00100000, length=0x0f)
    t += memory_device(0x11, (b"SIMM0",), length=0x15, size=0x0020, form=0x03, locator=1,
                       type=0x03, detail=0x0004, total_width=36, data_width=32)
    return dump(ep_legacy(len(t), 2), t)


def case_many_dimms():
    t = memory_array(0x3000, max_kib=0x80000000, ext_max=2 << 40)
    for i in range(24):
        populated = i % 3 != 2
        t += memory_device(0x3100 + i, (b"CPU%d_DIMM_%c%d" % (i // 12, 65 + i % 6, i % 2),
                                        b"NODE %d" % (i // 12), b"Micron" if populated else
                                        b"NO DIMM", b"%08x" % (i * 7919)),
                           length=0x28, array=0x3000, total_width=72 if populated else 0,
                           data_width=64 if populated else 0,
                           size=0x8000 | 0x4000 if i % 5 == 0 else (0x8000 if populated else 0),
                           form=0x09, locator=1, bank=2, type=0x22 if populated else 0x02,
                           detail=0x2080 if populated else 0x0002, speed=4800 if populated else 0,
                           manufacturer=3, serial=4, asset=0, part=4, attributes=0x01 + i % 4,
                           conf_speed=4400 if populated else 0, min_v=1100, max_v=1100,
                           conf_v=1100 if populated else 0)
    t += END
    return dump(ep_sm3(len(t)), t)


def case_end_marker():
    t = memory_array(0x10) + full_dimm(0x11, 0) + END + full_dimm(0x12, 1)
    return dump(ep_sm3(len(t)), t)


def case_truncated():
    t = memory_array(0x10) + full_dimm(0x11, 0) + full_dimm(0x12, 1)
    t = t[:-9]  # the last structure's strings cut
    return dump(ep_sm3(len(t) + 100), t)


def case_short_header():
    t = memory_array(0x10) + full_dimm(0x11, 0)
    t += struct.pack("<BBH", 17, 2, 0x12) + b"\0\0" + full_dimm(0x13, 1)
    return dump(ep_sm3(len(t)), t)


def case_no_terminator():
    t = memory_array(0x10) + full_dimm(0x11, 0)
    t = t[:-2] + b"AB"  # no double NUL at the end: the last structure is dropped
    return dump(ep_sm3(len(t)), t)


def case_length_past_end():
    t = memory_array(0x10) + struct.pack("<BBH", 17, 0xf0, 0x11) + bytes(20)
    return dump(ep_sm3(len(t)), t)


def case_table_elsewhere():
    t = memory_array(0x10) + full_dimm(0x11, 3) + END
    return dump(ep_sm2(len(t), 3, address=0x400), t, address=0x400)


def case_table_past_eof():
    t = memory_array(0x10) + full_dimm(0x11, 0) + END
    return ep_sm2(len(t), 3, address=0x100000).ljust(0x20, b"\0") + t


def case_zero_length():
    t = memory_array(0x10) + full_dimm(0x11, 0) + END
    return dump(ep_sm2(0, 3), t)


def case_bad_checksum():
    t = memory_array(0x10) + full_dimm(0x11, 0) + END
    return dump(ep_sm2(len(t), 3, bad_sum=True), t)


def case_bad_checksum_sm3():
    t = memory_array(0x10) + full_dimm(0x11, 0) + END
    return dump(ep_sm3(len(t), bad_sum=True), t)


def case_bad_intermediate():
    t = memory_array(0x10) + full_dimm(0x11, 0) + END
    return dump(ep_sm2(len(t), 3, dmi=b"_DMX_"), t)


def case_eplen_too_large():
    t = memory_array(0x10) + full_dimm(0x11, 0) + END
    return dump(ep_sm3(len(t), eplen=0x21), t)


def case_eplen_too_large_sm2():
    t = memory_array(0x10) + full_dimm(0x11, 0) + END
    return dump(ep_sm2(len(t), 3, eplen=0x40), t)


def case_eplen_short_sm3():
    # an entry point length of 0x10 sums fewer bytes: accepted when they sum to 0
    t = memory_array(0x10) + full_dimm(0x11, 2) + END
    return dump(ep_sm3(len(t), eplen=0x10), t)


def case_no_signature():
    t = memory_array(0x10) + full_dimm(0x11, 0) + END
    return dump(b"_XX_" + bytes(28), t)


def case_short_entry():
    return ep_sm3(100)[:20]


def case_empty():
    return b""


UNPRINTABLE = [b"DIMM0\nMEMORY_EVIL=1", b"\tBank 0\r\n", b"A\tB", b"A\x01B", b"A\x7fB",
               b"A\xffB", b"caf\xc3\xa9", b"\xc0\xaf", b"\xe0\x80\xaf", b"\xed\xa0\x80",
               b"\xef\xb7\x90", b"\xef\xbf\xbe", b"\xf4\x90\x80\x80", b"\xf0\x9f\x98\x80",
               b"\xf8\x88\x80\x80\x80", b"A\xc3", b"\xef\xb7\xb0", b"\xf0\x9f\xbf\xbf",
               b"\xc2\x80", b"\xe2\x80\xa8", b" \x0bX", b"x" * 300]


def case_strings_unprintable():
    """control characters, invalid and valid UTF-8: left out or printed"""
    t = memory_array(0x10)
    for i in range(0, len(UNPRINTABLE), 2):
        t += memory_device(0x11 + i, tuple(UNPRINTABLE[i:i + 2]), length=0x1b, size=0x400,
                           form=0x09, locator=1, bank=2, type=0x1a, manufacturer=1, serial=2,
                           asset=0, part=3)
    t += END
    return dump(ep_sm3(len(t)), t)


def case_empty_string_splits():
    """an empty string ends the strings early: the rest reads as another structure"""
    t = memory_array(0x10)
    t += memory_device(0x11, (b"DIMM0", b"", b"\x11\x28\x12\x00"), length=0x1b, size=0x400,
                       form=0x09, locator=1, bank=3, type=0x1a, manufacturer=2)
    t += full_dimm(0x13, 1) + END
    return dump(ep_sm3(len(t)), t)


CASES = {name[5:].replace("_", "-"): fn for name, fn in globals().items()
         if name.startswith("case_")}


def write_hex(path, data, what):
    with open(path, "w") as f:
        f.write("# SPDX-License-Identifier: GPL-2.0-or-later\n# %s\n" % what)
        for i in range(0, len(data), 32):
            f.write(data[i:i + 32].hex() + "\n")


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, fn in sorted(CASES.items()):
        what = (fn.__doc__ or name.replace("-", " ")).strip()
        write_hex(os.path.join(OUT, name + ".hex"), fn(),
                  "synthetic (tests/helpers/make-smbios-dumps.py): " + what)
    return 0


if __name__ == "__main__":
    sys.exit(main())
