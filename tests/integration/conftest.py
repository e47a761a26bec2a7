# SPDX-License-Identifier: GPL-2.0-or-later
"""pytest fixtures for the tudev integration tests.

Run through the sandbox (the Makefile's check-integration does this):

    TUDEV_BUILD=$PWD/build tests/sandbox /usr/bin/python3 -m pytest -q \
        -p no:cacheprovider tests/integration

TUDEV_BUILD selects the build directory under test (build/, build-asan/,
build-tsan/). systemd 252's udevadm (Debian's package, unpacked, never
installed) is $TUDEV_SD_UDEVADM, $SD_UDEV_ROOT/bin/udevadm, build-ref/sd-udev or
/tmp/sd-udev; tests needing it are skipped if none exists.
"""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

import tudevlib  # noqa: E402
from tudevlib import (LibudevClient, LoopDevices, NetDevices, NetlinkListener,  # noqa: E402
                      Udevd, GROUP_KERNEL, GROUP_UDEV)

DEFAULT_ARGS = ("--children-max=8",)


def pytest_sessionstart(session):
    err = tudevlib.check_sandbox()
    if err:
        pytest.exit("refusing to run: %s" % err, returncode=2)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if rep.failed:
        for i, d in enumerate(getattr(item, "tudev_daemons", [])):
            rep.sections.append(("udevd #%d %s" % (i, " ".join(d.args)), d.log_tail(200)))
        for i, c in enumerate(getattr(item, "tudev_clients", [])):
            rep.sections.append(("client #%d %s" % (i, " ".join(c.cmd)),
                                 "\n".join(c.text_lines()[-60:])))


@pytest.fixture(scope="session")
def build():
    b = tudevlib.build_dir()
    return b


@pytest.fixture(scope="session")
def udevadm(build):
    """Path of our udevadm."""
    p = os.path.join(build, "udevadm")
    assert os.access(p, os.X_OK), "%s not built" % p
    return p


@pytest.fixture(scope="session")
def sd_udevadm():
    """Path of systemd 252's udevadm (Debian package, unpacked, not installed)."""
    p = tudevlib.SD_UDEVADM
    if not os.access(p, os.X_OK):
        pytest.skip("systemd's udevadm not found at %s (cd /tmp && apt-get download udev "
                    "libudev1 systemd libsystemd-shared && dpkg -x udev_*.deb /tmp/sd-udev)" % p)
    return p


@pytest.fixture
def udevd_factory(request, build, tmp_path):
    """start(*args, debug=True, wait_ready=True) -> Udevd; every daemon is
    stopped with SIGTERM at teardown and must exit 0 without sanitizer reports."""
    daemons = []
    request.node.tudev_daemons = daemons
    udevd_bin = os.path.join(build, "udevd")

    def start(*args, debug=True, wait_ready=True, timeout=30.0):
        assert os.access(udevd_bin, os.X_OK), "%s not built" % udevd_bin
        for d in daemons:
            assert not d.alive(), "only one daemon at a time (fixed /run/udev paths)"
        d = Udevd(build, str(tmp_path / ("udevd-%d.log" % len(daemons))), args, debug)
        daemons.append(d)
        d.start(timeout=timeout, wait_ready=wait_ready)
        return d

    yield start
    errors = []
    for d in daemons:
        if d.proc is None:
            continue
        try:
            d.stop()
        except AssertionError as e:
            errors.append(str(e))
    if errors:
        pytest.fail("\n\n".join(errors), pytrace=False)


@pytest.fixture
def udevd(udevd_factory):
    """A daemon with default options (--debug --children-max=8)."""
    return udevd_factory(*DEFAULT_ARGS)


@pytest.fixture
def kernel_mon():
    m = NetlinkListener(GROUP_KERNEL)
    yield m
    m.close()


@pytest.fixture
def udev_mon():
    m = NetlinkListener(GROUP_UDEV)
    yield m
    m.close()


@pytest.fixture
def net():
    n = NetDevices()
    yield n
    n.delete_all()


@pytest.fixture
def loops():
    lo = LoopDevices()
    yield lo
    lo.remove_all()


@pytest.fixture
def libudev_client(request, build, tmp_path):
    """start(args) -> LibudevClient (READY already seen); stopped at teardown."""
    clients = []
    request.node.tudev_clients = clients
    binary = os.path.join(build, "clients", "libudev-monitor")

    def start(*args):
        assert os.access(binary, os.X_OK), "%s not built" % binary
        c = LibudevClient(build, args, stderr_path=str(tmp_path / ("client-%d.err"
                                                                   % len(clients))))
        clients.append(c)
        return c

    yield start
    for c in clients:
        c.stop()
