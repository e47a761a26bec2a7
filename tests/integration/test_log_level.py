# SPDX-License-Identifier: GPL-2.0-or-later
"""OPTIONS+="log_level=" (tudev-rules(7) OPTIONS IN RULES): the level of the
worker processing the event changes from that rule on, for that event only;
"reset" goes back to the daemon's level. Real loop-device events, one worker
(--children-max=1) so that the events after the one that raised the level run
on the same thread."""

import re

from tudevlib import run, wait_until

from blocklib import add_loop, write_rules, write_uevent

RULES = r'''
KERNEL=="loop%(a)d", OPTIONS+="log_level=debug"
KERNEL=="loop%(a)d", RUN+="/bin/true tudev-ll-marker-a"
KERNEL=="loop%(r)d", OPTIONS+="log_level=7"
KERNEL=="loop%(r)d", RUN+="/bin/true tudev-ll-marker-r1"
KERNEL=="loop%(r)d", OPTIONS+="log_level=reset"
KERNEL=="loop%(r)d", RUN+="/bin/true tudev-ll-marker-r2"
KERNEL=="loop%(b)d", RUN+="/bin/true tudev-ll-marker-b"
KERNEL=="loop%(q)d", OPTIONS+="log_level=err"
KERNEL=="loop%(q)d", RUN+="/bin/true tudev-ll-marker-q"
'''


def is_event(devpath, action):
    return lambda e: e.devpath == devpath and e.action == action


def process(udev_mon, path):
    mark = udev_mon.mark()
    write_uevent(path, "change")
    got = udev_mon.wait_for(is_event(path, "change"), since=mark, timeout=20)
    assert got, "no udev change event for %s" % path


def lines_about(log, word):
    """Lines naming `word` (a devpath: not one of which it is a prefix)."""
    pat = re.compile(re.escape(word) + r"(?![0-9A-Za-z_])")
    return [line for line in log.splitlines() if pat.search(line)]


def test_log_level_for_one_event(tmp_path, udevd_factory, loops, udev_mon):
    rdir = tmp_path / "rules"
    devs = {k: add_loop(loops) for k in "arbq"}
    write_rules(rdir, RULES % {k: v[0] for k, v in devs.items()})
    d = udevd_factory("--children-max=1", "--rules-dir=%s" % rdir, debug=False)

    for k in "arb":
        process(udev_mon, devs[k][1])
    log = d.log()
    a, r, b = devs["a"][1], devs["r"][1], devs["b"][1]
    # a: debug from the rule on, to the end of the event
    assert lines_about(log, "The log level is changed to 'debug'")
    assert lines_about(log, "RUN '/bin/true tudev-ll-marker-a'")
    assert [x for x in lines_about(log, a) if ": processed" in x]
    # r: debug between the two OPTIONS, then back to the daemon's level (info)
    assert lines_about(log, "RUN '/bin/true tudev-ll-marker-r1'")
    assert not lines_about(log, "tudev-ll-marker-r2")
    assert not [x for x in lines_about(log, r) if ": processed" in x]
    # b, on the same worker afterwards: nothing at debug level
    assert not lines_about(log, "tudev-ll-marker-b")
    assert not lines_about(log, b)
    assert d.alive()


def test_lower_level_for_one_event(tmp_path, udevd_factory, loops, udev_mon):
    """log_level=err on a daemon in --debug: that event's later debug lines go."""
    rdir = tmp_path / "rules"
    devs = {k: add_loop(loops) for k in "arbq"}
    write_rules(rdir, RULES % {k: v[0] for k, v in devs.items()})
    d = udevd_factory("--children-max=1", "--rules-dir=%s" % rdir)
    q, b = devs["q"][1], devs["b"][1]
    process(udev_mon, q)
    process(udev_mon, b)
    log = d.log()
    assert [x for x in lines_about(log, q) if "processing (worker" in x]   # before the rule
    assert not lines_about(log, "tudev-ll-marker-q")
    assert not [x for x in lines_about(log, q) if ": processed" in x]
    # the next event is at debug level again; its "processed" line comes
    # after its broadcast, which is all process() waited for
    assert lines_about(log, "RUN '/bin/true tudev-ll-marker-b'")
    assert wait_until(lambda: [x for x in lines_about(d.log(), b) if ": processed" in x], 10), \
        d.log_tail()


def test_exec_helper_follows_control_log_level(tmp_path, udevd_factory, udevadm, loops,
                                               udev_mon):
    """`udevadm control --log-level` reaches the exec helper process too: its
    own debug lines (a program started, ended) appear while the daemon is at
    debug level, and stop again at info."""
    rdir = tmp_path / "rules"
    idx, path, _node = add_loop(loops)
    write_rules(rdir, 'KERNEL=="loop%d", RUN+="/bin/true tudev-helper-ll"\n' % idx)
    d = udevd_factory("--rules-dir=%s" % rdir, debug=False)
    started = re.compile(r"\] /bin/true started \(request")

    def helper_lines_after(offset):
        process(udev_mon, path)
        return started.findall(d.log_since(offset))

    assert helper_lines_after(d.log_size()) == []
    r = run([udevadm, "control", "--log-level=debug"], timeout=30)
    assert r.returncode == 0, r.stderr
    assert len(helper_lines_after(d.log_size())) == 1
    r = run([udevadm, "control", "--log-level=info"], timeout=30)
    assert r.returncode == 0, r.stderr
    assert helper_lines_after(d.log_size()) == []
    assert d.alive()
