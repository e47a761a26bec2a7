# SPDX-License-Identifier: GPL-2.0-or-later
"""Install layout for split- and merged-/usr systems: rootprefix and udevdir
(configure --with-rootprefix, --with-udevdir; the same make variables) decide
where make install puts rules.d and the helpers, what udev.pc announces as
udevdir, and where udevd looks up programs that rules name without a '/'
(compiled in from the build's udevdir)."""

import os
import shlex
import subprocess

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def make_install(build, dest, *variables):
    r = subprocess.run(["make", "-s", "-C", REPO, "O=" + build, "-o", os.path.join(build, "udevd"),
                        "-o", os.path.join(build, "udevadm"), "DESTDIR=" + dest] +
                       list(variables) + ["install"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr


def pc_udevdir(dest):
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(dest, "usr/share/pkgconfig"),
               PKG_CONFIG_LIBDIR="/nonexistent")
    return subprocess.run(["pkg-config", "--variable=udevdir", "udev"], env=env,
                          capture_output=True, text=True, check=True).stdout.strip()


def helpers(build):
    return sorted(os.listdir(os.path.join(build, "helpers")))


@pytest.mark.parametrize("variables,udevdir", [
    (["prefix=/usr"], "/usr/lib/udev"),                       # merged /usr (default)
    (["prefix=/usr", "rootprefix="], "/lib/udev"),            # split /usr, Debian 12
    (["prefix=/usr", "udevdir=/opt/udev"], "/opt/udev"),      # explicit udevdir
])
def test_install_layout(build, tmp_path, variables, udevdir):
    dest = str(tmp_path / "dest")
    make_install(build, dest, *variables)
    assert pc_udevdir(dest) == udevdir
    top = os.path.join(dest, udevdir.lstrip("/"))
    rules = sorted(os.listdir(os.path.join(top, "rules.d")))
    assert rules == sorted(os.path.basename(f) for f in os.listdir(os.path.join(REPO, "rules.d"))
                           if f.endswith(".rules"))
    assert helpers(build), "no helpers built"
    for h in helpers(build):
        assert os.access(os.path.join(top, h), os.X_OK), h
    # nothing of it anywhere else
    for other in ("usr/lib/udev", "lib/udev", "opt/udev"):
        if os.path.join(dest, other) != top:
            assert not os.path.exists(os.path.join(dest, other, "rules.d")), other


def build_udevdir():
    """The udevdir this build was compiled with (config.mk and the Makefile)."""
    r = subprocess.run(["make", "-s", "--no-print-directory", "-C", REPO, "-f", "Makefile",
                        "-f", "-", "print-tudev-udevdir"],
                       input="print-tudev-udevdir:\n\t@echo '$(udevdir)'\n",
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_runtime_lookup_follows_udevdir(udevadm, tmp_path):
    """A rule's PROGRAM named without '/' runs from the build's udevdir."""
    udevdir = build_udevdir()
    assert udevdir.startswith("/") and udevdir.endswith("/lib/udev")
    if os.path.isdir(udevdir):
        mount = "mount -t tmpfs tmpfs %s" % shlex.quote(udevdir)
        mkdir = ""
    elif os.path.isdir(os.path.dirname(udevdir)) and udevdir.startswith("/usr/local/"):
        mount = "mount -t tmpfs tmpfs %s" % shlex.quote(os.path.dirname(udevdir))
        mkdir = "mkdir %s" % shlex.quote(udevdir)
    else:
        pytest.skip("cannot put a program into %s without touching the host" % udevdir)
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "50-layout.rules").write_text(
        'KERNEL=="lo", PROGRAM="tudev-layout-probe", ENV{LAYOUT}="$result"\n')
    probe = ("printf '#!/bin/sh\\necho from-%s\\n' > %s/tudev-layout-probe; "
             "chmod 755 %s/tudev-layout-probe" % (udevdir, udevdir, udevdir))
    sh = "set -e; %s; %s; %s; exec %s test --rules-dir=%s --action=add /devices/virtual/net/lo" % (
        mount, mkdir or ":", probe, udevadm, shlex.quote(str(rules)))
    r = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", sh],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "LAYOUT=from-%s" % udevdir in r.stdout.splitlines(), r.stdout + r.stderr[-3000:]
