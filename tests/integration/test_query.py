# SPDX-License-Identifier: GPL-2.0-or-later
"""tudev's query extension of the control protocol (src/proto/ctrl-msg.h,
QUERIES): a round trip with an independent client, errors, and the old
requests of systemd's and our udevadm on the same socket still working."""

import errno

from tudevlib import (CTRL_END, CTRL_PING, CTRL_TUDEV_QUERY, CtrlConnection, ctrl_message,
                      ctrl_query, ctrl_request, run)


def test_query_round_trip(udevd):
    status, text, packets = ctrl_query("queries")
    assert status == 0
    names = text.splitlines()
    assert "queries" in names
    assert packets >= 1

    # unknown name: one error line with -ENOENT
    status, text, _ = ctrl_query("no-such-query")
    assert status == -errno.ENOENT
    assert text == 'unknown query "no-such-query"\n'
    # arguments where none are expected
    status, text, _ = ctrl_query("queries extra")
    assert status == -errno.EINVAL
    assert text.count("\n") == 1

    # a query among other requests on one connection: answered in order,
    # the connection still closes after END
    c = CtrlConnection()
    try:
        c.send(ctrl_message(CTRL_PING))
        c.send(ctrl_message(CTRL_TUDEV_QUERY, "queries"))
        c.send(ctrl_message(CTRL_END))
        data = c.sock.recv(65536)
        assert data[:4] == (0x74757270).to_bytes(4, "little")
        assert c.wait_closed(10)
    finally:
        c.close()


def test_malformed_query_closes(udevd):
    # an empty or unterminated query is a malformed message: the connection
    # ends without a reply, the daemon goes on
    for value in (b"", b"q" * 256, b"stats\n"):
        c = CtrlConnection()
        try:
            c.send(ctrl_message(CTRL_TUDEV_QUERY, value))
            assert c.wait_closed(5)
        finally:
            c.close()
    assert ctrl_request([ctrl_message(CTRL_PING)])
    assert ctrl_query("queries")[0] == 0


def test_old_clients_unaffected(udevd, udevadm, sd_udevadm):
    for tool in (udevadm, sd_udevadm):
        for args in (["control", "--ping"], ["control", "--reload"], ["settle", "-t", "10"]):
            r = run([tool] + args, timeout=30)
            assert r.returncode == 0, "%s %s: %s" % (tool, args, r.stderr)
    assert ctrl_query("queries")[0] == 0
