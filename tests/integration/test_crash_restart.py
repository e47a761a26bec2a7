# SPDX-License-Identifier: GPL-2.0-or-later
"""Faults in the daemon's life cycle (what test_exec_helper.py,
test_event_timeout.py and test_lifecycle.py do not cover already):

  * the exec helper SIGKILLed again and again in the middle of a storm:
    restarted each time, the failures logged, no event lost or duplicated;
  * SIGTERM with a full queue: udevd stops within a bound; the queued events
    are dropped (never broadcast), counted in the stats line
    (dropped_at_exit), the running ones finish, /run/udev/queue is gone;
  * kill -9 of udevd in the middle of a storm, devices added and removed
    while it is down, then a restart over the same /run/udev: every database
    record is complete and parseable, the stale queue flag and leftover
    temporary files are removed (settle does not hang), records, tag entries
    and link claims of vanished devices are dropped and their /dev links
    re-resolved or removed; a coldplug (udevadm trigger) after that brings
    the database in line with sysfs, and a second one changes nothing."""

import os
import re
import signal
import subprocess
import threading
import time

from stormlib import (NET, KeptUdevd, Recorder, Storm, check_exactly_once, db_files,
                      db_parse_problems, kill9, plain_build, storm_rules, summarize, wait_idle)
from tudevlib import ifindex, parse_stats, reset_run_udev, wait_until

HELPER = "udevd-exec"


def helper_of(ppid):
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name) as f:
                text = f.read()
        except OSError:
            continue
        comm = text[text.index("(") + 1:text.rindex(")")]
        rest = text[text.rindex(")") + 2:].split()
        if comm == HELPER and int(rest[1]) == ppid and rest[0] not in "ZX":
            return int(name)
    return None


# ---------------------------------------------------------------- exec helper

def test_helper_killed_mid_storm(udevd_factory, tmp_path):
    tag = "hk"
    pairs, loops = (150, 50) if plain_build() else (30, 10)
    storm = Storm(tag, 100)
    rules = storm_rules(tmp_path / "rules", storm)
    d = udevd_factory("--children-max=8", "--rules-dir=" + rules)
    kmon, umon = Recorder(1, storm.is_ours), Recorder(2, storm.is_ours)
    killed = []
    done = threading.Event()

    def killer():
        # kill whichever helper runs now, every 150 ms, while the storm lasts
        while not done.is_set() and len(killed) < 12:
            pid = helper_of(d.pid)
            if pid and pid not in killed:
                os.kill(pid, signal.SIGKILL)      # the helper of the udevd this test started
                killed.append(pid)
            time.sleep(0.15)

    t = threading.Thread(target=killer)
    try:
        t.start()
        storm.run_round(pairs, loops, pause=0.05)
        time.sleep(0.3)
        kernel = kmon.take()
        missing = umon.wait_seqnums([r.seqnum for r in kernel], 120 if plain_build() else 300)
        done.set()
        t.join()
        assert not missing, sorted(missing)[:10]
        assert wait_idle(60)
        time.sleep(0.2)
        udev = umon.take()
    finally:
        done.set()
        kmon.close()
        umon.close()
        storm.cleanup()
    assert len(killed) >= 2, "the helper was not killed mid-storm"
    problems = check_exactly_once(kernel, udev)
    assert not problems, summarize(problems)
    log = d.log()
    for pid in killed:
        assert "exec helper [%d] died (killed by signal SIGKILL)" % pid in log, d.log_tail()
    # A new helper each time: at once, or after exec-client's back-off
    # (more than 5 deaths a second) from the manager's 1 s timer or the
    # next request, whichever comes first.
    def restarts():
        return len(re.findall(r"exec helper \[\d+\] started", d.log())) - 1
    assert wait_until(lambda: restarts() >= len(killed), 5), (restarts(), len(killed))
    # Requests in flight failed and were logged; the events went on (a PROGRAM
    # that failed does not match: STORM_PROG is missing on a few net adds).
    failed_programs = log.count("exec helper died while running")
    net_adds = [r for r in udev if r.action == "add" and r.subsystem == "net"]
    without = [r for r in net_adds if "STORM_PROG" not in r.props]
    assert len(without) <= failed_programs + 2 * len(killed), (len(without), failed_programs)
    # Still working after the last kill. (The restart is logged when the
    # helper is spawned; it names itself udevd-exec a moment later.)
    assert wait_until(lambda: helper_of(d.pid), 5)
    print("\nhelper killed %d times during %d events: %d restarts, %d programs failed, "
          "%d of %d net adds without the PROGRAM result"
          % (len(killed), len(kernel), restarts(), failed_programs, len(without), len(net_adds)))


def test_helper_back_after_crash_loop_without_requests(udevd_factory, tmp_path):
    """The helper killed more than 5 times within a second: the restart after
    the back-off does not wait for a request (the manager's timer starts it),
    so the next event with a program finds a helper ready."""
    d = udevd_factory("--children-max=2", "--rules-dir=" + str(tmp_path))
    killed = []
    deadline = time.monotonic() + 10
    while len(killed) < 7 and time.monotonic() < deadline:
        pid = helper_of(d.pid)
        if pid and pid not in killed:
            os.kill(pid, signal.SIGKILL)          # the helper of the udevd this test started
            killed.append(pid)
        time.sleep(0.01)
    assert len(killed) >= 6, killed
    assert wait_until(lambda: "exec helper keeps dying" in d.log(), 5), d.log_tail()
    # no event, no request: back within the back-off second and a timer tick
    assert wait_until(lambda: helper_of(d.pid) not in (None, *killed), 5), d.log_tail()
    assert d.alive()


# ---------------------------------------------------------------- SIGTERM

def test_sigterm_with_full_queue(udevd_factory, tmp_path):
    tag = "tq"
    pairs = 60 if plain_build() else 30
    storm = Storm(tag, 100)
    d = udevd_factory("--children-max=2", "--debug-event-delay=200",
                      "--debug-event-delay-match=%s%s*" % (NET, tag))
    umon = Recorder(2, storm.is_ours)
    try:
        g = storm.add_pairs([("%s%da" % (tag, i), "%s%db" % (tag, i)) for i in range(pairs)])
        # 14 events per pair at once, 2 workers, 200 ms per event: the queue
        # stays full for a minute.
        time.sleep(1.0)
        assert os.path.exists("/run/udev/queue")
        t0 = time.monotonic()
        d.signal(signal.SIGTERM)
        rc = d.wait_exit(timeout=30)
        took = time.monotonic() - t0
        time.sleep(0.3)
        broadcast = umon.take()
        storm.del_group(g)
    finally:
        umon.close()
        storm.cleanup()
    assert rc == 0
    # Bound: the running events (2 workers, 200 ms each) finish; nothing else.
    assert took < 5.0, took
    d.check_clean_exit()
    st = parse_stats(d.log())
    assert st["dropped_at_exit"] > 0, st
    assert st["processed"] + st["failed"] + st["dropped_at_exit"] == st["received"], st
    assert "Dropped %d queued events" % st["dropped_at_exit"] in d.log()
    ours = len(broadcast)
    assert ours <= st["processed"] + st["failed"]
    assert not os.path.exists("/run/udev/queue")
    print("\nSIGTERM after %d events received: exit after %.2f s, %d processed, %d dropped"
          % (st["received"], took, st["processed"], st["dropped_at_exit"]))


# ---------------------------------------------------------------- kill -9

def unescape(name):
    return name.replace("\\x2f", "/").replace("\\x5c", "\\")


def record_links(ident):
    links = []
    try:
        with open("/run/udev/data/" + ident) as f:
            for line in f:
                if line.startswith("S:"):
                    links.append(line[2:].rstrip("\n"))
    except FileNotFoundError:
        return None
    return links


def state_problems():
    """The invariants between records, tag index, link stacks and /dev links."""
    problems = []
    records = db_files()
    for ident in records:
        problems += ["%s: %s" % (ident, p) for p in db_parse_problems("/run/udev/data/" + ident)]
    for tag in os.listdir("/run/udev/tags") if os.path.isdir("/run/udev/tags") else []:
        for ident in os.listdir("/run/udev/tags/" + tag):
            if ident not in records:
                problems.append("tag %s of %s without a record" % (tag, ident))
    links_dir = "/run/udev/links"
    for name in os.listdir(links_dir) if os.path.isdir(links_dir) else []:
        link = unescape(name)
        for ident in os.listdir(os.path.join(links_dir, name)):
            if ident.startswith("."):
                continue
            rl = record_links(ident)
            if rl is None or link not in rl:
                problems.append("claim of %s by %s without a record listing it" % (link, ident))
        path = "/dev/" + link
        if os.path.islink(path) and not os.path.exists(path):
            problems.append("dangling link %s" % path)
    for top in ("/run/udev/data", "/dev", "/dev/storm"):
        if os.path.isdir(top):
            problems += ["temporary file %s/%s" % (top, n) for n in os.listdir(top)
                         if n.startswith(".#")]
    return problems


def count_temps():
    """Leftovers of interrupted atomic writes, where the restart looks for
    them: files in /run/udev/data, symlinks anywhere below /dev."""
    n = sum(1 for e in os.listdir("/run/udev/data") if e.startswith(".#"))
    for dirpath, dirnames, filenames in os.walk("/dev"):
        n += sum(1 for e in dirnames + filenames
                 if e.startswith(".#") and os.path.islink(os.path.join(dirpath, e)))
    return n


def our_devices(storm):
    """Records our devices must have now, from sysfs."""
    want = set()
    for n in os.listdir("/sys/class/net"):
        if n.startswith(storm.tag):
            want.add("n%d" % ifindex(n))
    for i in range(storm.loop_base, storm.loop_end):
        if os.path.exists("/sys/devices/virtual/block/loop%d" % i):
            want.add("b7:%d" % i)
    return want


def our_records(storm):
    """Records of our loops and of network interfaces (the sandbox's network
    namespace has only ours and lo, which never gets an event)."""
    out = set()
    for f in db_files():
        if f.startswith("b7:") and storm.loop_base <= int(f[3:]) < storm.loop_end:
            out.add(f)
        elif f.startswith("n") and f[1:].isdigit():
            out.add(f)
    return out


def trigger(udevadm, storm):
    matches = ["--sysname-match=%s*" % storm.tag]
    for g in storm.loop_globs():
        matches += ["--sysname-match=loop" + g, "--sysname-match=7:" + g]
    r = subprocess.run([udevadm, "trigger", "--action=add", "--settle"] + matches,
                       stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def snapshot_records(names):
    out = {}
    for n in names:
        with open("/run/udev/data/" + n) as f:
            out[n] = f.read()
    return out


def test_kill9_mid_storm_then_restart(build, udevadm, tmp_path):
    tag = "ck"
    pairs, loops = (150, 60) if plain_build() else (40, 20)
    storm = Storm(tag, 100)
    rules = storm_rules(tmp_path / "rules", storm)
    args = ["--children-max=8", "--rules-dir=" + rules]
    d1 = KeptUdevd(build, str(tmp_path / "udevd-1.log"), args, debug=False)
    d2 = None
    reset_run_udev()
    d1.start()
    try:
        # Devices that stay, then a storm the daemon dies in the middle of.
        keep = storm.add_pairs([("%sk%da" % (tag, i), "%sk%db" % (tag, i)) for i in range(10)])
        kept_loops = storm.add_loops(loops // 2, mknod=True)
        assert wait_idle(60)

        def storm_thread():
            storm.run_round(pairs, 0, pause=0.02)

        t = threading.Thread(target=storm_thread)
        t.start()
        time.sleep(0.6)
        kill9(d1)                                 # mid-storm
        t.join()
        # While udevd is down: loops with records go away, new ones come.
        gone = kept_loops[: len(kept_loops) // 2]
        storm.remove_loops(gone)
        new_loops = storm.add_loops(loops // 4, mknod=True)
        storm.del_group(keep)

        # What the crash left: only complete, parseable records.
        left = db_files()
        assert left, "nothing was processed before the kill"
        for f in left:
            assert db_parse_problems("/run/udev/data/" + f) == [], f
        queue_left = os.path.exists("/run/udev/queue")
        # Leftovers of an interrupted atomic write, made certain here.
        with open("/run/udev/data/.#b7:%d0123456789abcdef" % kept_loops[-1], "w") as f:
            f.write("S:storm/half")
        os.makedirs("/dev/storm", exist_ok=True)
        os.symlink("../loop%d" % kept_loops[-1], "/dev/storm/.#x0123456789abcdef")
        open("/run/udev/queue", "w").close()
        # ours, plus any the kill itself interrupted
        temps = count_temps()
        assert temps >= 2

        d2 = KeptUdevd(build, str(tmp_path / "udevd-2.log"), args, debug=False)
        t0 = time.monotonic()
        d2.start()
        started = time.monotonic() - t0
        r = subprocess.run([udevadm, "settle", "--timeout=20"], capture_output=True,
                           timeout=60)
        assert r.returncode == 0, "settle stuck after the restart"
        log2 = d2.log()
        repaired = [line for line in log2.splitlines() if "Repaired the state" in line]
        assert repaired and "queue flag 1, temporary files %d," % temps in repaired[0], \
            log2[-3000:]
        assert state_problems() == [], state_problems()[:10]
        for i in gone:
            assert not os.path.exists("/run/udev/data/b7:%d" % i)
            assert not os.path.lexists("/dev/storm/loop%d" % i)
            assert not os.path.lexists("/dev/block/7:%d" % i)
        shared = os.readlink("/dev/storm/shared") if os.path.lexists("/dev/storm/shared") \
            else None
        assert shared is None or os.path.exists("/dev/storm/" + shared)

        # Coldplug converges: every device of ours has a record, no record is
        # left without a device, links and tags agree; a second run changes
        # nothing.
        trigger(udevadm, storm)
        assert wait_idle(60)
        want = our_devices(storm)
        assert our_records(storm) == want
        assert state_problems() == [], state_problems()[:10]
        for i in kept_loops[len(gone):] + new_loops:
            assert os.readlink("/dev/storm/loop%d" % i) == "../loop%d" % i
            assert os.path.exists("/run/udev/tags/storm/b7:%d" % i)
        assert os.path.realpath("/dev/storm/shared") in \
            {"/dev/loop%d" % i for i in kept_loops[len(gone):] + new_loops}
        first = snapshot_records(want)
        trigger(udevadm, storm)
        assert wait_idle(60)
        assert our_records(storm) == want
        assert snapshot_records(want) == first
        print("\nkill -9 mid-storm: %d records left (queue flag left: %s); restart ready in "
              "%.2f s; %s" % (len(left), queue_left, started, repaired[0].split(": ", 1)[1]))
        d2.stop()              # exit status 0, stats line, no sanitizer report
    finally:
        for dd in (d1, d2):
            if dd is not None and dd.alive():
                dd.proc.kill()        # only the daemons this test started
                dd.proc.wait()
        storm.cleanup()
