# SPDX-License-Identifier: GPL-2.0-or-later
"""The exec helper's wire protocol, spoken from Python to the real binary
(`udevd --exec-helper=FD`, as udevd starts it), written from the description
in src/exec/exec-msg.h: a valid request is answered on its own reply socket
with the program's outcome and output; malformed requests (wrong descriptor
count, too many descriptors, bad header, strings not NUL-terminated, oversized
datagram, empty datagram) are rejected without leaking a descriptor and
without disturbing the helper; the helper exits cleanly at end of stream."""

import array
import errno
import os
import signal
import socket
import struct
import subprocess
import time

import pytest

from tudevlib import SANITIZER_PATTERNS

REQ_MAGIC = 0x71786574
REP_MAGIC = 0x72786574
REQ_FMT = "=IIQQQiIII"     # magic size id deadline grace signal argc envc flags
REP_FMT = "=IIQiiiiQQ"     # magic flags id pid code status error usec cpu_usec
REQ_SIZE = struct.calcsize(REQ_FMT)
REP_SIZE = struct.calcsize(REP_FMT)
TIMED_OUT, KILLED = 1, 2
CLD_EXITED, CLD_KILLED = 1, 2
STRINGS_MAX = 128 * 1024


def now_usec():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000


def request(req_id, argv, envp=(), timeout=5.0, grace=1.0, sig=signal.SIGTERM, **override):
    strings = b"".join(s.encode() + b"\0" for s in list(argv) + list(envp))
    fields = dict(magic=REQ_MAGIC, size=REQ_SIZE + len(strings), id=req_id,
                  deadline=now_usec() + int(timeout * 1e6), grace=int(grace * 1e6), sig=int(sig),
                  argc=len(argv), envc=len(envp), flags=0)
    fields.update(override)
    return struct.pack(REQ_FMT, fields["magic"], fields["size"], fields["id"], fields["deadline"],
                       fields["grace"], fields["sig"], fields["argc"], fields["envc"],
                       fields["flags"]) + strings


class Helper:
    def __init__(self, build, tmp_path):
        self.sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.errpath = str(tmp_path / "helper.err")
        self.err = open(self.errpath, "wb")
        self.proc = subprocess.Popen([os.path.join(build, "udevd"),
                                      "--exec-helper=%d" % theirs.fileno()],
                                     stdin=subprocess.DEVNULL, stdout=self.err, stderr=self.err,
                                     pass_fds=[theirs.fileno()])
        theirs.close()
        self.devnull = os.open("/dev/null", os.O_RDWR | os.O_CLOEXEC)

    def fds(self):
        return sorted(int(x) for x in os.listdir("/proc/%d/fd" % self.proc.pid))

    def send(self, msg, n_fds=4, capture=True):
        """Send msg with a fresh reply socket, /dev/null, and two pipes (or
        /dev/null) as the 4 descriptors; returns (reply socket, out, err)."""
        reply, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        out_r, out_w = os.pipe2(os.O_CLOEXEC) if capture else (None, self.devnull)
        err_r, err_w = os.pipe2(os.O_CLOEXEC) if capture else (None, self.devnull)
        fds = [theirs.fileno(), self.devnull, out_w, err_w, self.devnull, self.devnull][:n_fds]
        if fds:
            self.sock.sendmsg([msg], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                                       array.array("i", fds))])
        else:
            self.sock.send(msg)
        theirs.close()
        if capture:
            os.close(out_w)
            os.close(err_w)
        return reply, out_r, err_r

    def close(self):
        self.sock.close()
        try:
            rc = self.proc.wait(5)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            os.close(self.devnull)
            self.err.close()
        return rc

    def stderr(self):
        with open(self.errpath, "rb") as f:
            return f.read().decode("utf-8", "replace")


def read_all(fd):
    chunks = []
    while True:
        b = os.read(fd, 65536)
        if not b:
            break
        chunks.append(b)
    os.close(fd)
    return b"".join(chunks)


def reply_of(reply, timeout=10.0):
    reply.settimeout(timeout)
    data = reply.recv(REP_SIZE + 1)
    reply.close()
    if not data:
        return None
    assert len(data) == REP_SIZE, "reply of %d bytes" % len(data)
    magic, flags, rid, pid, code, status, error, usec, cpu = struct.unpack(REP_FMT, data)
    assert magic == REP_MAGIC
    return dict(flags=flags, id=rid, pid=pid, code=code, status=status, error=error, usec=usec,
                cpu_usec=cpu)


@pytest.fixture
def helper(build, tmp_path):
    """The helper on a socketpair; at teardown it must exit 0 at end of
    stream, without a sanitizer report."""
    h = Helper(build, tmp_path)
    yield h
    if h.proc.poll() is None:
        assert h.close() == 0, h.stderr()
    text = h.stderr()
    assert not any(p in text for p in SANITIZER_PATTERNS), text


def run(helper, req_id, argv, envp=(), **kw):
    reply, out, err = helper.send(request(req_id, argv, envp, **kw))
    rep = reply_of(reply)
    return rep, read_all(out), read_all(err)


def test_requests_and_outcomes(helper):
    rep, out, err = run(helper, 1, ["/bin/sh", "-c", 'echo "$A|$B"; echo oops >&2; exit 7', "sh"],
                        ["A=x=y", "B=two\nlines"])
    assert rep["id"] == 1 and rep["pid"] > 0 and rep["error"] == 0
    assert (rep["code"], rep["status"], rep["flags"]) == (CLD_EXITED, 7, 0)
    assert out == b"x=y|two\nlines\n" and err == b"oops\n"

    rep, out, _ = run(helper, 2, ["/usr/bin/env"])
    assert rep["status"] == 0 and out == b""           # nothing inherited

    rep, _, _ = run(helper, 3, ["/bin/sh", "-c", "kill -USR2 $$"])
    assert (rep["code"], rep["status"]) == (CLD_KILLED, signal.SIGUSR2)

    rep, _, _ = run(helper, 4, ["/nonexistent"])
    assert rep["error"] == errno.ENOENT and rep["pid"] == 0
    assert rep["cpu_usec"] == 0 and rep["usec"] == 0

    # CPU time (rusage) of a program that counts, and of one that sleeps
    rep, _, _ = run(helper, 6, ["/bin/sh", "-c", "i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done"])
    assert rep["status"] == 0 and 10000 <= rep["cpu_usec"] <= rep["usec"] + 10000, rep
    rep, _, _ = run(helper, 7, ["/bin/sleep", "0.2"])
    assert rep["usec"] >= 200000 and rep["cpu_usec"] < 100000, rep

    t0 = time.monotonic()
    rep, _, _ = run(helper, 5, ["/bin/sh", "-c", "trap '' TERM; sleep 30"], timeout=0.3, grace=0.3)
    assert rep["flags"] == TIMED_OUT | KILLED and rep["status"] == signal.SIGKILL
    assert time.monotonic() - t0 < 3

    # Several in flight at once; answers come in completion order, each on its own socket.
    pending = [(i, helper.send(request(100 + i, ["/bin/sh", "-c", "sleep 0.$1; echo $1", "sh",
                                                 str(3 - i)]))) for i in range(3)]
    for i, (reply, out, err) in pending:
        rep = reply_of(reply)
        assert rep["id"] == 100 + i and rep["status"] == 0
        assert read_all(out) == b"%d\n" % (3 - i)
        os.close(err)


def test_malformed_requests_rejected(helper):
    good = request(10, ["/bin/true"])

    # Wrong descriptor counts: dropped, every descriptor closed (the reply
    # socket hangs up without an answer).
    for n in (0, 1, 3, 5, 6):
        reply, out, err = helper.send(good, n_fds=n)
        if n == 0:
            reply.close()
        else:
            assert reply_of(reply) is None, "answered a request with %d descriptors" % n
            assert read_all(out) == b"" and read_all(err) == b""
            continue
        os.close(out)
        os.close(err)

    # Bad bodies with the right descriptors: answered with EBADMSG.
    bad = [
        request(11, ["/bin/true"], magic=0),
        request(12, ["/bin/true"], flags=0x10),        # a reserved flag
        request(31, ["/bin/true"], flags=9),           # log level 8 (+1)
        request(13, ["/bin/true"], sig=0),
        request(14, ["/bin/true"], sig=65),
        request(15, ["/bin/true"], argc=0),
        request(16, ["/bin/true"], argc=2),            # fewer strings than announced
        request(17, ["/bin/true"], envc=1),
        request(18, ["bin/true"]),                     # relative program
        request(19, ["/bin/true"], ["NOEQUALS"]),
        request(20, ["/bin/true"], ["=value"]),
        request(21, ["/bin/true"])[:-1],               # last string not terminated
        request(22, ["/bin/true"]) + b"x",             # bytes after the strings
        request(23, ["/bin/true"], size=REQ_SIZE),     # size field wrong
        b"\0" * (REQ_SIZE - 1),                        # shorter than the header
    ]
    for msg in bad:
        reply, out, err = helper.send(msg)
        rep = reply_of(reply)
        assert rep is not None and rep["error"] == errno.EBADMSG and rep["pid"] == 0, msg[:24]
        assert read_all(out) == b"" and read_all(err) == b""

    # Oversized datagram (more than a request may be): dropped whole.
    helper.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 * 1024 * 1024)
    big = request(30, ["/bin/echo", "x" * (STRINGS_MAX + 1000)])
    reply, out, err = helper.send(big)
    assert reply_of(reply) is None
    read_all(out)
    read_all(err)

    # An empty datagram is not end of stream.
    helper.sock.send(b"")

    # Still serving, and nothing leaked: 0-2, request socket, epoll, timerfd.
    rep, out, _ = run(helper, 40, ["/bin/echo", "alive"])
    assert rep["status"] == 0 and out == b"alive\n"
    deadline = time.monotonic() + 3
    while len(helper.fds()) != 6 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(helper.fds()) == 6, os.listdir("/proc/%d/fd" % helper.proc.pid)


def test_end_of_stream_stops_helper_and_programs(helper):
    reply, out, err = helper.send(request(50, ["/bin/sh", "-c", "echo $$; exec sleep 60"],
                                          timeout=60))
    pid = int(os.read(out, 64).split()[0])
    assert os.path.exists("/proc/%d" % pid)
    t0 = time.monotonic()
    assert helper.close() == 0
    assert time.monotonic() - t0 < 3
    # The running program was told to stop (SIGTERM to its process group).
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        try:
            with open("/proc/%d/stat" % pid) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
            if state in ("Z", "X"):
                break
        except OSError:
            break
        time.sleep(0.02)
    else:
        pytest.fail("program %d still running after the helper exited" % pid)
    assert reply_of(reply) is None       # no answer: the helper is gone
    os.close(out)
    os.close(err)
