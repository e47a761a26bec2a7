# SPDX-License-Identifier: GPL-2.0-or-later
"""The boot sequence of /etc/init.d/udev over the sandbox's real devices:

    udevadm trigger --type=subsystems --action=add
    udevadm trigger --type=devices --action=add
    udevadm settle

with our udevadm against tudev. Afterwards every device has been processed
(a udev event for each), every device with a device number or an interface
index has its database record (sd-device's notion of "initialized"; devices
without either count as initialized without one), and systemd 252's
`udevadm info --export-db` reads that database exactly as ours does."""

import os
import re
import time

from tudevlib import run

# Devices of other activity (loop devices of concurrent tests) may appear or
# vanish while we look: they are the only ones allowed to differ.
TRANSIENT = re.compile(r"^/devices/virtual/(block/loop\d+|bdi/7:\d+)$")


def devpaths(udevadm, kind):
    r = run([udevadm, "trigger", "--dry-run", "--verbose", "--type=" + kind])
    assert r.returncode == 0, r.stderr
    return [line[4:] for line in r.stdout.splitlines()]


def records(text):
    out = {}
    for rec in text.split("\n\n"):
        if rec.startswith("P: "):
            out[rec.split("\n", 1)[0][3:]] = rec
    return out


def db_id(rec):
    """The database file name of a device from its --export-db record."""
    fields = dict((line[:1], line[3:]) for line in rec.split("\n") if line[1:3] == ": ")
    if "D" in fields:
        kind, num = fields["D"].split(" ")
        return kind + num
    if "I" in fields:
        return "n" + fields["I"]
    return None


def test_boot_sequence(udevd, udevadm, sd_udevadm, udev_mon):
    since = udev_mon.mark()
    t0 = time.monotonic()
    for args in (["trigger", "--type=subsystems", "--action=add"],
                 ["trigger", "--type=devices", "--action=add"],
                 ["settle", "--timeout=120"]):
        r = run([udevadm] + args, timeout=180)
        assert r.returncode == 0, (args, r.stderr)
    took = time.monotonic() - t0
    assert not os.path.exists("/run/udev/queue")

    # every device got its event processed (those without a uevent file,
    # such as built-in modules, cannot be triggered)
    wanted = [p for p in devpaths(udevadm, "subsystems") + devpaths(udevadm, "devices")
              if os.path.exists("/sys%s/uevent" % p)]
    assert len(wanted) > 50
    seen = {e.devpath for e in udev_mon.matching(lambda e: e.action == "add", since=since)}
    missing = [p for p in wanted if p not in seen and not TRANSIENT.match(p)]
    assert missing == [], "no processed event for %d devices (%.1fs): %s" % (
        len(missing), took, missing[:10])

    # every device with a node or an interface has its record
    ours = run([udevadm, "info", "--export-db"])
    assert ours.returncode == 0, ours.stderr
    recs = records(ours.stdout)
    no_db = [p for p, rec in recs.items()
             if db_id(rec) and not os.path.exists("/run/udev/data/" + db_id(rec))
             and not TRANSIENT.match(p)]
    assert no_db == []
    assert sum(1 for rec in recs.values() if db_id(rec)) > 10

    # systemd's udevadm reads the same database the same way
    for _ in range(5):
        ref = records(run([sd_udevadm, "info", "--export-db"]).stdout)
        recs = records(run([udevadm, "info", "--export-db"]).stdout)
        differ = [p for p in set(ref) | set(recs)
                  if ref.get(p) != recs.get(p) and not TRANSIENT.match(p)]
        if not differ:
            break
        time.sleep(0.2)
    assert differ == [], ["%s:\n%s\n---\n%s" % (p, ref.get(p), recs.get(p)) for p in differ[:3]]
