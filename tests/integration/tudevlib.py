# SPDX-License-Identifier: GPL-2.0-or-later
"""Helpers for tudev integration tests (used through conftest.py).

Everything here expects to run inside tests/sandbox: private mount and network
namespaces, tmpfs /run, fresh sysfs, private /dev. `check_sandbox()` refuses to
run anywhere else, because the helpers remove /run/udev, create and delete
network interfaces and start a daemon bound to /run/udev/control.

Independent implementations (written from systemd's formats, not from the
daemon's code): MurmurHash2 + tag bloom, the libudev netlink header
decoder, the kernel uevent decoder, and the control-socket client.
"""

import errno
import json
import os
import queue
import random
import re
import select
import shutil
import shlex
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import loopdev  # noqa: E402  (tests/lib: loop devices, shared with tools/bench and differential)

NETLINK_KOBJECT_UEVENT = 15
GROUP_KERNEL = 1
GROUP_UDEV = 2

RUN_UDEV = "/run/udev"
CONTROL = "/run/udev/control"
QUEUE_FLAG = "/run/udev/queue"

SANITIZER_PATTERNS = ("ERROR: AddressSanitizer", "WARNING: ThreadSanitizer", "runtime error:",
                      "ERROR: LeakSanitizer", "ERROR: UndefinedBehaviorSanitizer")



def _find_sd_udevadm():
    """systemd 252's udevadm, unpacked from Debian's package (never installed):
    $TUDEV_SD_UDEVADM, else $SD_UDEV_ROOT/bin/udevadm (tools/install-deps puts
    it in build-ref/sd-udev), else /tmp/sd-udev/bin/udevadm."""
    if os.environ.get("TUDEV_SD_UDEVADM"):
        return os.environ["TUDEV_SD_UDEVADM"]
    repo = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    for root in (os.environ.get("SD_UDEV_ROOT"), os.path.join(repo, "build-ref", "sd-udev"),
                 "/tmp/sd-udev"):
        if root and os.access(os.path.join(root, "bin", "udevadm"), os.X_OK):
            return os.path.join(root, "bin", "udevadm")
    return "/tmp/sd-udev/bin/udevadm"


SD_UDEVADM = _find_sd_udevadm()


def build_dir():
    return os.path.abspath(os.environ.get("TUDEV_BUILD",
                                          os.path.join(os.path.dirname(__file__), "..", "..",
                                                       "build")))


def check_sandbox():
    """Return None if we run in the private mount+net namespaces set up by
    tests/sandbox (which records the caller's namespaces before unshare),
    else the reason why not."""
    if os.environ.get("TUDEV_SANDBOX") != "1":
        return "TUDEV_SANDBOX=1 not set (run through tests/sandbox)"
    try:
        for ns in ("mnt", "net"):
            host = os.environ.get("TUDEV_HOST_%sNS" % ns.upper())
            if not host or os.readlink("/proc/self/ns/" + ns) == host:
                return "not in a private %s namespace (run through tests/sandbox)" % ns
    except OSError as e:
        return "cannot read namespaces: %s" % e
    return None


def wait_until(pred, timeout, interval=0.02):
    """Poll pred() until it returns a true value or timeout; returns the value."""
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() >= deadline:
            return v
        time.sleep(interval)


def monotonic_usec():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000


# ----------------------------------------------------------------- hash, bloom

def murmur2(data, seed=0):
    """Austin Appleby's 32-bit MurmurHash2 (systemd's MurmurHash2.c), little-endian
    block reads as on x86-64."""
    if isinstance(data, str):
        data = data.encode()
    m = 0x5bd1e995
    n = len(data)
    h = (seed ^ n) & 0xffffffff
    i = 0
    while n - i >= 4:
        k = data[i] | (data[i + 1] << 8) | (data[i + 2] << 16) | (data[i + 3] << 24)
        k = (k * m) & 0xffffffff
        k ^= k >> 24
        k = (k * m) & 0xffffffff
        h = (h * m) & 0xffffffff
        h ^= k
        i += 4
    rest = n - i
    if rest == 3:
        h ^= data[i + 2] << 16
    if rest >= 2:
        h ^= data[i + 1] << 8
    if rest >= 1:
        h ^= data[i]
        h = (h * m) & 0xffffffff
    h ^= h >> 13
    h = (h * m) & 0xffffffff
    h ^= h >> 15
    return h


def tag_bloom(tag):
    h = murmur2(tag)
    bits = 0
    for shift in (0, 6, 12, 18):
        bits |= 1 << ((h >> shift) & 63)
    return bits


def tags_of(value):
    """':a:b:' -> ['a', 'b']"""
    if not value:
        return []
    return [t for t in value.split(":") if t]


# ----------------------------------------------------------------- uevents

class Uevent:
    """One datagram received on a NETLINK_KOBJECT_UEVENT socket."""

    def __init__(self, raw, sender, recv_time):
        self.raw = raw
        self.sender = sender            # (nl_pid, nl_groups) of the sender
        self.recv_time = recv_time      # time.monotonic() at reception
        self.kind = None                # "udev" or "kernel"
        self.header = None              # dict for udev messages
        self.prop_list = []             # [(key, value)] in wire order
        self.props = {}
        self.errors = []                # format violations found while decoding
        self._decode()

    def _decode(self):
        raw = self.raw
        if raw.startswith(b"libudev\0"):
            self.kind = "udev"
            self._decode_udev()
        else:
            self.kind = "kernel"
            self._decode_kernel()

    def _split_props(self, buf, what):
        if not buf.endswith(b"\0"):
            self.errors.append("%s: property buffer does not end with NUL" % what)
        for item in buf.split(b"\0"):
            if not item:
                continue
            s = item.decode("utf-8", "surrogateescape")
            k, sep, v = s.partition("=")
            if not sep:
                self.errors.append("%s: entry without '=': %r" % (what, s))
                continue
            self.prop_list.append((k, v))
            self.props[k] = v

    def _decode_udev(self):
        raw = self.raw
        if len(raw) < 40:
            self.errors.append("udev datagram shorter than the 40-byte header")
            return
        h = {
            "prefix": raw[0:8],
            "magic_bytes": raw[8:12],
            "header_size": struct.unpack("<I", raw[12:16])[0],
            "properties_off": struct.unpack("<I", raw[16:20])[0],
            "properties_len": struct.unpack("<I", raw[20:24])[0],
            "subsystem_hash": struct.unpack(">I", raw[24:28])[0],
            "devtype_hash": struct.unpack(">I", raw[28:32])[0],
            "bloom_hi": struct.unpack(">I", raw[32:36])[0],
            "bloom_lo": struct.unpack(">I", raw[36:40])[0],
        }
        self.header = h
        if h["magic_bytes"] != b"\xfe\xed\xca\xfe":
            self.errors.append("magic bytes %s != fe ed ca fe" % h["magic_bytes"].hex())
        if h["header_size"] != 40:
            self.errors.append("header_size %d != 40" % h["header_size"])
        if h["properties_off"] != 40:
            self.errors.append("properties_off %d != 40" % h["properties_off"])
        if h["properties_len"] != len(raw) - 40:
            self.errors.append("properties_len %d != datagram length %d - 40"
                               % (h["properties_len"], len(raw)))
        if len(raw) - 40 < 32:
            self.errors.append("property buffer shorter than 32 bytes")
        self._split_props(raw[40:], "udev")
        if not self.prop_list or self.prop_list[0] != ("UDEV_DATABASE_VERSION", "1"):
            self.errors.append("first property is %r, not UDEV_DATABASE_VERSION=1"
                               % (self.prop_list[0] if self.prop_list else None,))
        sub = self.props.get("SUBSYSTEM")
        if sub is None:
            self.errors.append("no SUBSYSTEM")
        elif h["subsystem_hash"] != murmur2(sub):
            self.errors.append("subsystem hash %08x != murmur2(%r)=%08x"
                               % (h["subsystem_hash"], sub, murmur2(sub)))
        dt = self.props.get("DEVTYPE")
        want = murmur2(dt) if dt is not None else 0
        if h["devtype_hash"] != want:
            self.errors.append("devtype hash %08x != %08x (DEVTYPE=%r)"
                               % (h["devtype_hash"], want, dt))
        bloom = 0
        for t in tags_of(self.props.get("TAGS")):
            bloom |= tag_bloom(t)
        got = (h["bloom_hi"] << 32) | h["bloom_lo"]
        if got != bloom:
            self.errors.append("tag bloom %016x != %016x (TAGS=%r)"
                               % (got, bloom, self.props.get("TAGS")))
        for key in ("TAGS", "CURRENT_TAGS", "DEVLINKS"):
            v = self.props.get(key)
            if v is not None and v.strip(":") == "":
                self.errors.append("empty %s=%r sent" % (key, v))
        for key in ("TAGS", "CURRENT_TAGS"):
            v = self.props.get(key)
            if v and not (v.startswith(":") and v.endswith(":")):
                self.errors.append("%s=%r not in :a:b: form" % (key, v))
        for key in ("ACTION", "DEVPATH", "SEQNUM"):
            if key not in self.props:
                self.errors.append("no %s" % key)
        dn = self.props.get("DEVNAME")
        if dn is not None and not dn.startswith("/dev/"):
            self.errors.append("DEVNAME=%r not absolute" % dn)

    def _decode_kernel(self):
        raw = self.raw
        head, sep, rest = raw.partition(b"\0")
        if not sep or b"@/" not in head:
            self.errors.append("kernel datagram without ACTION@DEVPATH header")
            return
        self.kernel_header = head.decode("utf-8", "surrogateescape")
        self._split_props(rest, "kernel")

    # convenience
    @property
    def action(self):
        return self.props.get("ACTION")

    @property
    def devpath(self):
        return self.props.get("DEVPATH")

    @property
    def subsystem(self):
        return self.props.get("SUBSYSTEM")

    @property
    def seqnum(self):
        try:
            return int(self.props.get("SEQNUM", "0"))
        except ValueError:
            return 0

    def __repr__(self):
        return "<%s %s %s %s seq=%s>" % (self.kind, self.action, self.devpath, self.subsystem,
                                         self.props.get("SEQNUM"))


class UeventSocket:
    """A NETLINK_KOBJECT_UEVENT socket bound to one multicast group.

    A background thread reads datagrams as soon as they arrive (so reception
    times are accurate and the socket never overflows) and keeps what the
    subclass's _record(data, addr, t) makes of each one (None: drop it) in
    self.events. Every query first drains what is already queued in the
    socket (sync), so "everything delivered before this call" is always
    included, and a mark() taken after an event was emitted always comes
    after that event."""

    def __init__(self, group, rcvbuf):
        self.group = group
        self.sock = socket.socket(socket.AF_NETLINK,
                                  socket.SOCK_RAW | socket.SOCK_CLOEXEC | socket.SOCK_NONBLOCK,
                                  NETLINK_KOBJECT_UEVENT)
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, 33, rcvbuf)  # SO_RCVBUFFORCE
        except OSError:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.bind((0, group))
        self.events = []
        self.lock = threading.Condition()     # protects events
        self.rx_lock = threading.Lock()       # serialises reads from the socket
        self.closed = False
        self.enobufs = 0
        self.rpipe, self.wpipe = os.pipe2(os.O_CLOEXEC)
        self.thread = threading.Thread(target=self._reader, daemon=True)
        self.thread.start()

    def _record(self, data, addr, t):
        raise NotImplementedError

    def _drain(self):
        """Read every datagram queued in the socket now. Returns False once
        the socket is unusable."""
        with self.rx_lock:
            if self.closed:
                return False
            got = []
            while True:
                try:
                    data, addr = self.sock.recvfrom(1024 * 1024)
                except BlockingIOError:
                    break
                except InterruptedError:
                    continue
                except OSError as e:
                    if e.errno == errno.ENOBUFS:
                        self.enobufs += 1
                        continue
                    return False
                rec = self._record(data, addr, time.monotonic())
                if rec is not None:
                    got.append(rec)
            if got:
                with self.lock:
                    self.events.extend(got)
                    self.lock.notify_all()
            return True

    def _reader(self):
        while True:
            r, _, _ = select.select([self.sock, self.rpipe], [], [])
            if self.rpipe in r:
                return
            if not self._drain():
                return

    def sync(self):
        if not self.closed:
            self._drain()

    def close(self):
        if self.closed:
            return
        os.write(self.wpipe, b"x")
        self.thread.join(5)
        with self.rx_lock:
            self.closed = True
            self.sock.close()
        os.close(self.rpipe)
        os.close(self.wpipe)

    def snapshot(self):
        self.sync()
        with self.lock:
            return list(self.events)


class NetlinkListener(UeventSocket):
    """Every message of one group, parsed (Uevent), with queries for tests."""

    def __init__(self, group, rcvbuf=64 * 1024 * 1024):
        super().__init__(group, rcvbuf)

    def _record(self, data, addr, t):
        return Uevent(data, addr, t)

    def mark(self):
        """Index to pass as `since` to only look at later events."""
        self.sync()
        with self.lock:
            return len(self.events)

    def matching(self, pred, since=0):
        self.sync()
        with self.lock:
            return [e for e in self.events[since:] if pred(e)]

    def wait_for(self, pred, count=1, timeout=10.0, since=0):
        """Wait until `count` events after index `since` satisfy pred; returns
        all matching events (possibly fewer than count on timeout)."""
        self.sync()
        deadline = time.monotonic() + timeout
        with self.lock:
            while True:
                found = [e for e in self.events[since:] if pred(e)]
                left = deadline - time.monotonic()
                if len(found) >= count or left <= 0:
                    return found
                self.lock.wait(min(left, 0.5))

    def quiet(self, pred, duration, since=0):
        """Sleep `duration` and return the matching events that arrived meanwhile."""
        time.sleep(duration)
        return self.matching(pred, since)


def devpath_under(prefix):
    """Predicate: event devpath is prefix or below it."""
    def pred(e):
        d = e.devpath
        return d is not None and (d == prefix or d.startswith(prefix + "/"))
    return pred


def devpath_in(paths):
    paths = set(paths)

    def pred(e):
        d = e.devpath
        if d is None:
            return False
        for p in paths:
            if d == p or d.startswith(p + "/"):
                return True
        return False
    return pred


# ----------------------------------------------------------------- network devices

class NetDevices:
    """veth pairs in the test's network namespace, all in one link group so one
    `ip link del group N` removes them (one RCU wait instead of one per link)."""

    _next_group = 11

    def __init__(self):
        NetDevices._next_group += 1
        self.group = NetDevices._next_group
        self.names = []

    def add_veth(self, name, peer):
        subprocess.run(["ip", "link", "add", name, "group", str(self.group), "type", "veth",
                        "peer", "name", peer, "group", str(self.group)],
                       check=True, stdin=subprocess.DEVNULL)
        self.names += [name, peer]
        return "/devices/virtual/net/" + name, "/devices/virtual/net/" + peer

    def add_veths(self, pairs):
        """Create several pairs with one `ip -batch` (the kernel events then
        arrive in a burst, as during a coldplug)."""
        cmds = "".join("link add %s group %d type veth peer name %s group %d\n"
                       % (a, self.group, b, self.group) for a, b in pairs)
        subprocess.run(["ip", "-batch", "-"], input=cmds.encode(), check=True)
        for a, b in pairs:
            self.names += [a, b]

    def delete_all(self):
        if not self.names:
            return
        subprocess.run(["ip", "link", "del", "group", str(self.group)], check=False,
                       stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.names = []


def ifindex(name):
    with open("/sys/class/net/%s/ifindex" % name) as f:
        return int(f.read().strip())


def trigger_uevent(syspath, action="change"):
    with open(os.path.join(syspath, "uevent"), "w") as f:
        f.write(action)


def kernel_seqnum():
    with open("/sys/kernel/uevent_seqnum") as f:
        return int(f.read().strip())


# ----------------------------------------------------------------- loop devices



class LoopDevices:
    """Loop devices created with LOOP_CTL_ADD at random high indexes (so
    concurrent test runs do not collide) and removed with LOOP_CTL_REMOVE."""

    def __init__(self):
        self.indexes = []

    def add(self, index=None):
        """Create a loop device (at `index`, or a random free high one)."""
        for _ in range(100):
            idx = random.randint(2000, 60000) if index is None else index
            try:
                n = loopdev.add(idx)
            except OSError as e:
                if e.errno == errno.EEXIST and index is None:
                    continue
                raise
            self.indexes.append(n)
            return n
        raise RuntimeError("no free loop index found")

    @staticmethod
    def devpath(idx):
        return "/devices/virtual/block/loop%d" % idx

    @staticmethod
    def bdi_devpath(idx):
        return "/devices/virtual/bdi/7:%d" % idx

    def remove(self, idx, timeout=10.0):
        loopdev.remove(idx, timeout)
        if idx in self.indexes:
            self.indexes.remove(idx)

    def remove_all(self):
        threads = [threading.Thread(target=self._remove_quiet, args=(i,))
                   for i in list(self.indexes)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    def _remove_quiet(self, idx):
        try:
            self.remove(idx)
        except OSError:
            pass


# ----------------------------------------------------------------- control socket

CTRL_MAGIC = 0xdead1dea
CTRL_END, CTRL_LOG_LEVEL, CTRL_STOP, CTRL_START, CTRL_RELOAD, CTRL_ENV, CTRL_CHILDREN_MAX, \
    CTRL_PING, CTRL_EXIT = range(9)


def ctrl_message(mtype, value=None, magic=CTRL_MAGIC, version=b"udev-252"):
    """One 280-byte control message (layout in src/proto/ctrl-msg.h)."""
    if value is None:
        val = b""
    elif isinstance(value, int):
        val = struct.pack("=i", value)
    elif isinstance(value, str):
        val = value.encode() + b"\0"
    else:
        val = bytes(value)
    msg = version.ljust(16, b"\0")[:16] + struct.pack("=Ii", magic, mtype) + \
        val.ljust(256, b"\0")[:256]
    assert len(msg) == 280
    return msg


class CtrlConnection:
    def __init__(self, path=CONTROL, timeout=5.0):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET | socket.SOCK_CLOEXEC)
        self.sock.settimeout(timeout)
        self.sock.connect(path)

    def send(self, data):
        self.sock.send(data)

    def wait_closed(self, timeout=5.0):
        """True if the server closed the connection (EOF or reset) within timeout."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            # poll, not select: a test may hold thousands of sockets, so this
            # one's descriptor can be above select()'s limit of 1024
            p = select.poll()
            p.register(self.sock, select.POLLIN)
            if not p.poll(left * 1000):
                return False
            try:
                data = self.sock.recv(4096)
            except (ConnectionResetError, BrokenPipeError):
                return True
            except OSError as e:
                if e.errno in (errno.EAGAIN, errno.EINTR):
                    continue
                return True
            if not data:
                return True

    def close(self):
        self.sock.close()


def ctrl_request(msgs, timeout=5.0):
    """Send messages (bytes), then END; True if the server closed the connection."""
    c = CtrlConnection(timeout=timeout)
    try:
        for m in msgs:
            c.send(m)
        c.send(ctrl_message(CTRL_END))
        return c.wait_closed(timeout)
    finally:
        c.close()


# tudev's query extension (src/proto/ctrl-msg.h, QUERIES)
CTRL_TUDEV_QUERY = 0x74750001
CTRL_REPLY_MAGIC = 0x74757270
CTRL_REPLY_LAST = 1


def ctrl_query(query, timeout=10.0):
    """Send a query and END; return (status, text, packets) once the server
    closed the connection, or None if it closed without replying."""
    c = CtrlConnection(timeout=timeout)
    status, chunks, last, packets = None, [], False, 0
    try:
        c.send(ctrl_message(CTRL_TUDEV_QUERY, query))
        c.send(ctrl_message(CTRL_END))
        deadline = time.monotonic() + timeout
        while True:
            c.sock.settimeout(max(0.01, deadline - time.monotonic()))
            data = c.sock.recv(65536)
            if not data:
                break
            assert not last, "data after the last reply packet"
            assert 16 <= len(data) <= 4096, "reply packet of %d bytes" % len(data)
            magic, st, flags, n = struct.unpack("=IiII", data[:16])
            assert magic == CTRL_REPLY_MAGIC and n == len(data) - 16 and flags in (0, 1)
            assert status is None or st == status
            status, last = st, bool(flags & CTRL_REPLY_LAST)
            chunks.append(data[16:])
            packets += 1
    finally:
        c.close()
    if status is None:
        return None
    assert last, "connection closed before the last reply packet"
    return status, b"".join(chunks).decode(), packets


def ctrl_ping(timeout=5.0):
    try:
        return ctrl_request([ctrl_message(CTRL_PING)], timeout)
    except OSError:
        return False


# ----------------------------------------------------------------- daemon

def parse_stats(text):
    """Last 'stats: k=v ...' line of a log -> dict of ints (or None)."""
    stats = None
    for line in text.splitlines():
        m = re.search(r"\bstats: (.*)$", line)
        if m:
            stats = {}
            for k, v in re.findall(r"([A-Za-z_][A-Za-z0-9_]*)=(-?\d+)", m.group(1)):
                stats[k] = int(v)
    return stats


def sanitizer_reports(text):
    return [line for line in text.splitlines() if any(p in line for p in SANITIZER_PATTERNS)]


class Udevd:
    """One tudev daemon run under test."""

    def __init__(self, build, logpath, args=(), debug=True):
        self.build = build
        self.logpath = logpath
        self.args = list(args)
        self.debug = debug
        self.proc = None
        self.returncode = None
        self.stopped = False

    @property
    def pid(self):
        return self.proc.pid

    def start(self, timeout=30.0, wait_ready=True):
        reset_run_udev()
        args = list(self.args)
        if not any(a.startswith("--rules-dir") for a in args):
            # Tests that bring no rules must not pick up the host's installed ones.
            empty = os.path.join(os.path.dirname(self.logpath), "no-rules.d")
            os.makedirs(empty, exist_ok=True)
            args.append("--rules-dir=" + empty)
        cmd = [os.path.join(self.build, "udevd")] + (["--debug"] if self.debug else []) + args
        # TUDEV_WRAPPER (e.g. "valgrind --error-exitcode=99 ..."): run the daemon under it.
        cmd = shlex.split(os.environ.get("TUDEV_WRAPPER", "")) + cmd
        self.cmd = cmd
        self.logfile = open(self.logpath, "ab")
        env = dict(os.environ)
        env.setdefault("SYSTEMD_LOG_TARGET", "console")   # never the host's kmsg/syslog
        # Make sanitizer failures fatal and visible in the log.
        env.setdefault("ASAN_OPTIONS", "abort_on_error=0:detect_leaks=1")
        env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
        env.setdefault("TSAN_OPTIONS", "halt_on_error=0:second_deadlock_stack=1")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self.logfile,
                                     stderr=self.logfile, env=env, close_fds=True)
        if wait_ready:
            self.wait_ready(timeout)
        return self

    def wait_ready(self, timeout=30.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError("udevd exited with %s before becoming ready:\n%s"
                                     % (self.proc.returncode, self.log_tail()))
            if os.path.exists(CONTROL) and ctrl_ping(timeout=2.0):
                return
            time.sleep(0.05)
        raise AssertionError("udevd did not answer a ping within %.0fs:\n%s"
                             % (timeout, self.log_tail()))

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def log(self):
        try:
            with open(self.logpath, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def log_size(self):
        try:
            return os.path.getsize(self.logpath)
        except OSError:
            return 0

    def log_since(self, offset):
        with open(self.logpath, "rb") as f:
            f.seek(offset)
            return f.read().decode("utf-8", "replace")

    def log_tail(self, lines=150):
        text = self.log().splitlines()
        head = ["[udevd log: %s, %d lines, last %d shown]" % (self.logpath, len(text),
                                                               min(lines, len(text)))]
        return "\n".join(head + text[-lines:])

    def signal(self, sig):
        if self.alive():
            self.proc.send_signal(sig)

    def wait_exit(self, timeout=30.0):
        try:
            self.returncode = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.returncode = self.proc.wait()
            raise AssertionError("udevd did not exit within %.0fs:\n%s" % (timeout,
                                                                          self.log_tail()))
        self.stopped = True
        self.logfile.close()
        return self.returncode

    def stop(self, timeout=30.0, check=True):
        """SIGTERM, wait; returns the full log. With check: exit status 0, a
        stats line, no sanitizer report."""
        if self.proc is None:
            return ""
        if not self.stopped:
            self.signal(signal.SIGTERM)
            self.wait_exit(timeout)
        text = self.log()
        if check:
            self.check_clean_exit(text)
        return text

    def check_clean_exit(self, text=None):
        text = self.log() if text is None else text
        reports = sanitizer_reports(text)
        assert not reports, "sanitizer report in udevd log:\n%s\n%s" % (
            "\n".join(reports[:10]), self.log_tail())
        assert self.returncode == 0, "udevd exit status %s:\n%s" % (self.returncode,
                                                                    self.log_tail())
        assert parse_stats(text) is not None, "no 'stats:' line at exit:\n%s" % self.log_tail()

    def stats(self):
        return parse_stats(self.log())


def reset_run_udev():
    """Fresh /run/udev (the sandbox's private tmpfs)."""
    err = check_sandbox()
    if err:
        raise RuntimeError(err)
    shutil.rmtree(RUN_UDEV, ignore_errors=True)


def queue_flag_exists():
    return os.path.exists(QUEUE_FLAG)


def db_path_for_ifindex(idx):
    return "/run/udev/data/n%d" % idx


def db_props(name):
    """The E: properties of network interface `name`'s database record."""
    props = {}
    with open(db_path_for_ifindex(ifindex(name))) as f:
        for line in f:
            if line.startswith("E:"):
                k, _, v = line[2:].rstrip("\n").partition("=")
                props[k] = v
    return props


# ----------------------------------------------------------------- clients

class LineProcess:
    """A subprocess whose stdout lines are collected by a thread."""

    def __init__(self, cmd, env=None, stderr_path=None):
        self.cmd = cmd
        self.stderr_file = open(stderr_path, "ab") if stderr_path else subprocess.DEVNULL
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=self.stderr_file, env=env, close_fds=True)
        self.lines = []
        self.cond = threading.Condition()
        self.eof = False
        self.thread = threading.Thread(target=self._reader, daemon=True)
        self.thread.start()

    def _reader(self):
        for raw in self.proc.stdout:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            with self.cond:
                self.lines.append((time.monotonic(), line))
                self.cond.notify_all()
        with self.cond:
            self.eof = True
            self.cond.notify_all()

    def wait_line(self, pred, timeout=10.0, since=0):
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for i in range(since, len(self.lines)):
                    if pred(self.lines[i][1]):
                        return i
                left = deadline - time.monotonic()
                if left <= 0 or self.eof:
                    return None
                self.cond.wait(min(left, 0.5))

    def text_lines(self):
        with self.cond:
            return [l for _, l in self.lines]

    def stop(self, sig=signal.SIGTERM, timeout=10.0):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        self.thread.join(5)
        if self.stderr_file is not subprocess.DEVNULL:
            self.stderr_file.close()
        return rc


class LibudevClient(LineProcess):
    """tests/clients/libudev-monitor (system libudev) started with filters."""

    def __init__(self, build, args=(), stderr_path=None, ready_timeout=10.0):
        binary = os.path.join(build, "clients", "libudev-monitor")
        super().__init__([binary] + list(args), stderr_path=stderr_path)
        if self.wait_line(lambda l: l == "READY", ready_timeout) is None:
            self.stop()
            raise AssertionError("libudev-monitor did not get ready: %r" % (self.text_lines(),))

    def devices(self):
        out = []
        for line in self.text_lines():
            if line.startswith("{"):
                d = json.loads(line)
                if "timeout" not in d:
                    out.append(d)
        return out

    def wait_devices(self, pred, count=1, timeout=10.0):
        deadline = time.monotonic() + timeout
        while True:
            found = [d for d in self.devices() if pred(d)]
            if len(found) >= count or time.monotonic() >= deadline or self.eof:
                return found
            with self.cond:
                self.cond.wait(0.1)


def run(cmd, timeout=60, **kw):
    """subprocess.run with captured text output."""
    return subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=timeout, text=True,
                          errors="surrogateescape", **kw)


def as_nobody(cmd):
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + list(cmd)
