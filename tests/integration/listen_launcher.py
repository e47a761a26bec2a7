#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Start a program as systemd's socket activation does (the sd_listen_fds
protocol): the inherited fds named on the command line are moved to 3, 4,
... in that order, LISTEN_FDS is their count, LISTEN_FDNAMES their names,
and LISTEN_PID the PID of this process, which execve() hands on to the
program.

    listen_launcher.py [--pid=N] FD[,FD...] -- PROGRAM [ARG...]

--pid=N puts N into LISTEN_PID instead (fds meant for another process).
Run it as the child of a fork (subprocess with pass_fds=...), so that the
PID it writes is the one the program will have."""

import fcntl
import os
import sys


def main(argv):
    pid = None
    if argv and argv[0].startswith("--pid="):
        pid = int(argv.pop(0)[len("--pid="):])
    if len(argv) < 3 or argv[1] != "--":
        sys.stderr.write(__doc__)
        return 2
    fds = [int(x) for x in argv[0].split(",") if x]
    cmd = argv[2:]
    # Out of the way first, so that moving one does not overwrite another.
    high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 100) for fd in fds]
    for fd in fds:
        os.close(fd)
    for i, fd in enumerate(high):
        os.dup2(fd, 3 + i, inheritable=True)
        os.close(fd)
    env = dict(os.environ)
    env["LISTEN_FDS"] = str(len(fds))
    env["LISTEN_PID"] = str(os.getpid() if pid is None else pid)
    env["LISTEN_FDNAMES"] = ":".join("fd%d" % (3 + i) for i in range(len(fds)))
    os.execve(cmd[0], cmd, env)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
