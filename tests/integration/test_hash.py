# SPDX-License-Identifier: GPL-2.0-or-later
"""The test suite's own MurmurHash2 / bloom against vectors computed with
systemd's MurmurHash2.c (the same as in src/proto/test-monitor-msg.c): the
other tests check the daemon's header hashes with this implementation."""

import pytest

from tudevlib import murmur2, tag_bloom

VECTORS = [
    ("block", 0xf0031db7, 0x00c20000, 0x00000001),
    ("disk", 0x7bcbc5ee, 0x10044000, 0x00800000),
    ("partition", 0xcb234489, 0x00100000, 0x00040300),
    ("input", 0xc1a28470, 0x00010100, 0x00020000),
    ("net", 0xa74d3cc8, 0x00080000, 0x00080100),
    ("usb", 0x0577c5e5, 0x10000020, 0x20800000),
    ("usb_device", 0x27f8f50c, 0x40000000, 0x00109000),
    ("drm", 0x16664179, 0x02000010, 0x02000020),
    ("sound", 0xd196ab6e, 0x00006420, 0x00000000),
    ("tty", 0x8afa90c8, 0x40000200, 0x00000108),
    ("systemd", 0xa75f972a, 0x02000400, 0x10800000),
    ("seat", 0x435b3e40, 0x02080000, 0x00400001),
    ("uaccess", 0xe88ed0cc, 0x00002008, 0x00001008),
]


@pytest.mark.parametrize("s,h,hi,lo", VECTORS)
def test_vectors(s, h, hi, lo):
    assert murmur2(s) == h
    assert tag_bloom(s) == (hi << 32) | lo
