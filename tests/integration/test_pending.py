# SPDX-License-Identifier: GPL-2.0-or-later
"""The "pending" query (what scoped settle reports): an event held by a
program shows the program with its pid, and the events waiting behind it
name it; an unrelated device is not pending."""

import os
import time

from tudevlib import ctrl_query, wait_until


def test_pending_names_program_and_waiters(udevd_factory, net, tmp_path):
    d = tmp_path / "r"
    d.mkdir()
    (d / "50.rules").write_text('SUBSYSTEM=="net", KERNEL=="pda", RUN+="/bin/sleep 4"\n')
    udevd_factory("--children-max=8", "--rules-dir=" + str(d))
    net.add_veth("pda", "pdb")

    def rows():
        st, text, _ = ctrl_query("pending")
        assert st == 0
        return [l.split("\t") for l in text.splitlines()]

    assert wait_until(lambda: any(r[5] == "program" for r in rows()), 5)
    time.sleep(0.5)
    rs = rows()
    held = [r for r in rs if r[2] == "/devices/virtual/net/pda"]
    assert len(held) == 1 and held[0][1] == "add" and held[0][5] == "program"
    assert held[0][7] == held[0][0]  # FIRST_SEQNUM: nothing merged into it
    name, pid, usec = held[0][6].split(":")
    assert name == "/bin/sleep" and int(usec) >= 400000
    assert int(pid) > 0
    with open("/proc/%s/cmdline" % pid, "rb") as f:
        assert f.read().split(b"\0")[:2] == [b"/bin/sleep", b"4"]
    waiters = [r for r in rs if r[2].startswith("/devices/virtual/net/pda/")]
    assert waiters and all(r[5] == "waiting" for r in waiters)
    assert any(r[6] == held[0][0] for r in waiters)
    assert not any(r[2] == "/devices/virtual/net/pdb" for r in rs)
    # scoped: the daemon filters (proto/event-scope.h)
    st, text, _ = ctrl_query("pending devpath=/devices/virtual/net/pda")
    assert st == 0
    scoped = [l.split("\t") for l in text.splitlines()]
    assert scoped and all(r[2] == "/devices/virtual/net/pda" or
                          r[2].startswith("/devices/virtual/net/pda/") for r in scoped)
    assert len(scoped) == len(held) + len(waiters)
    st, text, _ = ctrl_query("pending-count devpath=/devices/virtual/net/pd")
    assert (st, text) == (0, "0\n")
    st, text, _ = ctrl_query("pending-count seqnum=%s" % held[0][0])
    assert st == 0 and int(text) >= 1
    st, text, _ = ctrl_query("pending-count devpath=relative")
    assert st == -22 and text.startswith("pending-count: bad scope")
    assert wait_until(lambda: rows() == [], 10)
