# SPDX-License-Identifier: GPL-2.0-or-later
"""udevadm stats on real events: counts by subsystem and action equal the
events the daemon broadcast, every latency histogram counts every event,
programs are counted by result, the rules generation follows reloads, and
the three formats (text, --json, --prometheus) are well-formed."""

import collections
import json
import math
import os
import re
import time

from tudevlib import QUEUE_FLAG, devpath_in, run, wait_until

STAGES = ("queue", "wait", "rules", "db", "run", "broadcast", "total")


def stats(udevadm, *args):
    r = run([udevadm, "stats"] + list(args), timeout=30)
    assert r.returncode == 0, r.stderr
    return r.stdout


def settle(udevadm):
    r = run([udevadm, "settle", "-t", "30"], timeout=60)
    assert r.returncode == 0, r.stderr


def write_rules(tmp_path, text):
    d = tmp_path / "rules.d"
    d.mkdir(exist_ok=True)
    (d / "50-stats.rules").write_text(text)
    return str(d)


RULES = """\
SUBSYSTEM=="net", KERNEL=="st*", PROGRAM=="/bin/true"
SUBSYSTEM=="net", KERNEL=="st*", ACTION=="add", RUN+="/bin/false"
"""


def test_stats_counts_real_events(udevd_factory, udevadm, tmp_path, net, loops, udev_mon):
    rules = write_rules(tmp_path, RULES)
    udevd_factory("--children-max=8", "--rules-dir=" + rules)
    before = json.loads(stats(udevadm, "--json"))
    assert before["events"]["processed"] == 0
    gen0 = before["rules_generation"]
    assert gen0 >= 1

    mark = udev_mon.mark()
    paths = []
    for i in range(3):
        paths += net.add_veth("st%da" % i, "st%db" % i)
    idx = loops.add()
    paths.append(loops.devpath(idx))
    time.sleep(0.2)
    settle(udevadm)
    assert wait_until(lambda: not os.path.exists(QUEUE_FLAG), 10)
    seen = udev_mon.matching(lambda e: True, since=mark)
    assert len(seen) >= 12 and any(devpath_in(paths)(e) for e in seen)

    # the daemon broadcast exactly what it counted
    want = collections.Counter((e.props.get("SUBSYSTEM"), e.action) for e in seen)
    s = json.loads(stats(udevadm, "--json"))
    got = collections.Counter()
    for sub, actions in s["events"]["by_subsystem"].items():
        for act, n in actions.items():
            got[(sub, act)] = n
    assert got == want, "counted %s, broadcast %s" % (dict(got), dict(want))
    assert s["events"]["processed"] == len(seen)
    assert s["events"]["failed"] == 0
    assert s["events"]["received"] >= len(seen)
    for st in STAGES:
        h = s["latency_usec"][st]
        assert sum(b["count"] for b in h["buckets"]) == h["count"]
        assert h["count"] == len(seen), "stage %s counted %d of %d" % (st, h["count"], len(seen))
        assert h["p50"] <= h["p90"] <= h["p99"] <= h["max"]
        assert h["sum"] <= h["max"] * h["count"]
    # the total covers the stages
    assert s["latency_usec"]["total"]["sum"] >= s["latency_usec"]["rules"]["sum"]
    # 6 net adds run the PROGRAM and the RUN; the RUN fails each time
    net_events = sum(n for (sub, _), n in want.items() if sub == "net")
    net_adds = want[("net", "add")]
    assert net_adds == 6
    assert s["programs"]["run"] == net_events + net_adds
    assert s["programs"]["failed"] == net_adds
    assert s["programs"]["killed"] == 0
    assert s["queue"]["queued"] == 0 and s["queue"]["running"] == 0
    assert s["queue"]["peak"] >= 1
    # the budget: the defaults, nothing held at rest, a peak, no pause
    q = s["queue"]
    assert (q["max_events"], q["max_bytes"]) == (1000, 8 * 1024 * 1024), q
    assert q["bytes"] == 0 and q["budget_pauses"] == 0, q
    # each event held at least its record (the kernel's message and more)
    assert 300 <= q["bytes_peak"] <= q["peak"] * 8192, q
    assert s["netlink"]["overruns"] == 0 and s["netlink"]["resyncs"] == 0
    # every event's rules trace is kept for udevadm explain (default ring)
    x = s["explain"]
    assert x["events"] == len(seen)
    assert x["max_events"] == 256 and x["max_bytes"] == 256 * 1024
    assert 100 * len(seen) <= x["bytes"] <= 2048 * len(seen)

    # a reload with changed rules: the next generation
    with open(os.path.join(rules, "50-stats.rules"), "a") as f:
        f.write('SUBSYSTEM=="block", ENV{STATS_TEST}="1"\n')
    r = run([udevadm, "control", "--reload"], timeout=30)
    assert r.returncode == 0, r.stderr
    assert json.loads(stats(udevadm, "--json"))["rules_generation"] > gen0

    # text: the same numbers
    text = stats(udevadm)
    assert re.search(r"^Events: +%d processed, 0 failed" % len(seen), text, re.M), text
    row = re.search(r"^  net +(\d+)", text, re.M)
    assert row and int(row.group(1)) == net_events
    for st in STAGES:
        assert re.search(r"^  %s +%d " % (st, len(seen)), text, re.M), text
    assert re.search(r"^Explain traces: +%d events, %d bytes \(at most 256 events, 262144 bytes\)$"
                     % (len(seen), x["bytes"]), text, re.M), text
    assert re.search(r"^Queue: +0 queued, 0 running, peak %d \(limit 1000\)$" % q["peak"],
                     text, re.M), text
    assert re.search(r"^Queue memory: +0 bytes, peak %d \(limit 8388608\); reading paused 0 "
                     r"times at the limit$" % q["bytes_peak"], text, re.M), text

    check_prometheus(stats(udevadm, "--prometheus"), want, len(seen),
                     {"tudev_explain_events": len(seen), "tudev_explain_bytes": x["bytes"],
                      "tudev_explain_max_events": 256, "tudev_explain_max_bytes": 262144})


PROM_LINE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="[^"\\\n]*"'
                       r'(,[a-zA-Z_][a-zA-Z0-9_]*="[^"\\\n]*")*)\})? (\S+)$')


def check_prometheus(text, want, n_events, gauges=None):
    types, samples = {}, []
    for line in text.splitlines():
        if line.startswith("# HELP "):
            assert len(line.split(" ", 3)) == 4
            continue
        if line.startswith("# TYPE "):
            _, _, name, typ = line.split(" ")
            assert typ in ("counter", "gauge", "histogram")
            assert name not in types, "two TYPE lines for " + name
            types[name] = typ
            continue
        m = PROM_LINE.match(line)
        assert m, "malformed line: %r" % line
        value = float(m.group(5))
        assert not math.isnan(value)
        labels = dict(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="([^"]*)"', m.group(3) or ""))
        name = m.group(1)
        base = re.sub(r"_(bucket|sum|count)$", "", name)
        assert name in types or (base in types and types[base] == "histogram"), \
            "sample before its TYPE: " + name
        samples.append((name, labels, value))
    for name, v in (gauges or {}).items():
        assert types.get(name) == "gauge", name
        assert [s for n, _, s in samples if n == name] == [float(v)], name
    ev = {(l["subsystem"], l["action"]): v for n, l, v in samples if n == "tudev_events_total"}
    assert ev == {k: float(v) for k, v in want.items()}
    one = {n: v for n, l, v in samples if not l}
    assert one["tudev_queue_max_events"] == 1000
    assert one["tudev_queue_max_bytes"] == 8 * 1024 * 1024
    assert one["tudev_queue_bytes"] == 0 and one["tudev_queue_peak_bytes"] >= 300
    assert one["tudev_queue_budget_pauses_total"] == 0
    assert types["tudev_queue_budget_pauses_total"] == "counter"
    assert types["tudev_queue_peak_bytes"] == "gauge"
    for st in STAGES:
        buckets = [(l["le"], v) for n, l, v in samples
                   if n == "tudev_event_stage_seconds_bucket" and l["stage"] == st]
        assert buckets[-1][0] == "+Inf"
        counts = [v for _, v in buckets]
        assert counts == sorted(counts), "buckets of %s not cumulative" % st
        les = [float(le) for le, _ in buckets[:-1]]
        assert les == sorted(les)
        count = [v for n, l, v in samples
                 if n == "tudev_event_stage_seconds_count" and l["stage"] == st]
        assert count == [float(n_events)] and counts[-1] == n_events


def test_stats_explain_off(udevd_factory, udevadm, tmp_path, net, udev_mon):
    """--explain-events=0: no trace is kept, and stats say so."""
    rules = write_rules(tmp_path, RULES)
    udevd_factory("--children-max=8", "--rules-dir=" + rules, "--explain-events=0")
    mark = udev_mon.mark()
    net.add_veth("sx0a", "sx0b")
    assert udev_mon.wait_for(lambda e: e.action == "add" and e.devpath.endswith("/sx0b"),
                             timeout=20, since=mark)
    s = json.loads(stats(udevadm, "--json"))
    assert s["events"]["processed"] >= 1
    assert s["explain"] == {"events": 0, "bytes": 0, "max_events": 0, "max_bytes": 0}
    assert re.search(r"^Explain traces: +off$", stats(udevadm), re.M)


def test_stats_unsupported_and_no_daemon(udevadm):
    # no daemon at all: a clear error, non-zero exit
    r = run([udevadm, "stats"], timeout=30)
    assert r.returncode != 0
    assert "not running" in r.stderr
