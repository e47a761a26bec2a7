#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Capture real seed inputs for fuzz-exec-msg (run once by hand; the results
are committed under tests/fuzz/corpus-exec-msg/).

    make && tests/sandbox /usr/bin/python3 tests/fuzz/make-corpus-exec-msg.py OUTDIR

Inside the sandbox it starts build/udevd under strace (sendmsg/sendto of every
thread and of the exec helper), with rules that run programs through the exec
helper: PROGRAM, IMPORT{program}, RUN of a program that succeeds, one that
fails, one that does not exist and one that outlives --event-timeout. It then
adds a veth pair and a loop device. Every request (worker -> helper, magic
"texq") and every reply (helper -> worker, "texr") seen in the trace is kept,
one file per kind of request (program, argc) and per kind of reply (flags,
code, status, error), in OUTDIR/exec-msg/. One more request is built here, at
the limits of exec-msg.h (EXEC_ARGC_MAX arguments, EXEC_ENVC_MAX variables):
it also lets libFuzzer try inputs of that size (about 35 KB)."""

import os
import re
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import tudevlib  # noqa: E402

RULES = r'''
SUBSYSTEM=="net", KERNEL=="cx*", PROGRAM="/bin/echo $kernel $env{IFINDEX}", ENV{CX_PROG}="%c", \
  IMPORT{program}="/bin/sh -c 'echo CX_IMP=1; echo CX_NAME=$$INTERFACE'", \
  RUN+="/bin/true run $kernel", RUN+="/nonexistent/tudev-prog $devpath"
SUBSYSTEM=="block", KERNEL=="loop*", ACTION=="add", PROGRAM="/bin/sh -c 'exit 3'", RUN+="/bin/false"
SUBSYSTEM=="block", KERNEL=="loop*", ACTION=="remove", RUN+="/bin/sleep 5"
'''

HEX_STRING = re.compile(r'(?:iov_base=|sendto\(\d+, )"((?:\\x[0-9a-f]{2})*)"')


def capture(out):
    rules_dir = os.path.join(out, "rules.d")
    os.makedirs(rules_dir, exist_ok=True)
    with open(os.path.join(rules_dir, "50-exec.rules"), "w") as f:
        f.write(RULES)
    trace = os.path.join(out, "trace")
    os.environ["TUDEV_WRAPPER"] = \
        "strace -f -qq -xx -s 300000 -e trace=sendmsg,sendto -o " + trace
    daemon = tudevlib.Udevd(tudevlib.build_dir(), os.path.join(out, "udevd.log"),
                            args=["--rules-dir=" + rules_dir, "--event-timeout=2"]).start()
    nets = tudevlib.NetDevices()
    loops = tudevlib.LoopDevices()
    try:
        nets.add_veth("cxa", "cxb")
        time.sleep(2)
        idx = loops.add()
        time.sleep(2)
        loops.remove(idx)
        time.sleep(4)
    finally:
        nets.delete_all()
        # the daemon is strace's child: stop it, strace follows
        with open("/proc/%d/task/%d/children" % (daemon.proc.pid, daemon.proc.pid)) as f:
            for pid in f.read().split():
                os.kill(int(pid), 15)
        daemon.proc.wait(20)
    return trace


def extract(trace, outdir):
    requests, replies = {}, {}
    with open(trace) as f:
        for line in f:
            for m in HEX_STRING.finditer(line):
                b = bytes.fromhex(m.group(1).replace("\\x", ""))
                if b[:4] == b"texq":
                    argc = struct.unpack_from("=I", b, 36)[0]
                    prog = os.path.basename(b[48:].split(b"\0")[0].decode())
                    requests.setdefault("request-%s-argc%d" % (prog, argc), b)
                elif b[:4] == b"texr" and len(b) == 48:
                    flags, code, status, err = (struct.unpack_from("=I", b, 4)
                                                + struct.unpack_from("=iii", b, 20))
                    replies.setdefault("reply-f%d-code%d-status%d-err%d"
                                       % (flags, code, status, err), b)
    os.makedirs(outdir, exist_ok=True)
    for name, b in list(requests.items()) + list(replies.items()):
        with open(os.path.join(outdir, name), "wb") as f:
            f.write(b)
    return len(requests), len(replies)


def limits_request():
    """A valid request with EXEC_ARGC_MAX (4096) arguments and EXEC_ENVC_MAX
    (4096) environment entries, as exec_msg_request_build() encodes it."""
    strings = b"/bin/true\0" + b"a\0" * 4095 + b"".join(b"K%d=\0" % i for i in range(4096))
    size = 48 + len(strings)
    return struct.pack("=IIQQQiIII", 0x71786574, size, 1, 10**12, 0, 9, 4096, 4096, 0) + strings


def main():
    out = sys.argv[1]
    err = tudevlib.check_sandbox()
    if err:
        sys.exit(err)
    os.makedirs(out, exist_ok=True)
    n_req, n_rep = extract(capture(out), os.path.join(out, "exec-msg"))
    with open(os.path.join(out, "exec-msg", "request-limits-argc4096-envc4096"), "wb") as f:
        f.write(limits_request())
    print("%d requests, %d replies in %s" % (n_req, n_rep, os.path.join(out, "exec-msg")))


if __name__ == "__main__":
    main()
