# SPDX-License-Identifier: GPL-2.0-or-later
"""The kmod builtin against a module directory the test builds
(tests/builtins/kmodfix.py: fake modules carrying only .modinfo alias lines,
indexed by depmod) and a modprobe.d directory blacklisting one of them,
passed to libkmod through the test-only variables TUDEV_TEST_KMOD_DIR and
TUDEV_TEST_KMOD_CONFIG. This VM cannot load modules, and the fake ones could
not be loaded anyway: insertion fails, is logged, and the builtin (and so the
event) still succeeds, as with systemd."""

import os
import shutil
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "builtins"))

import compare  # noqa: E402
import fakesys  # noqa: E402
import kmodfix  # noqa: E402
import tudevlib  # noqa: E402


@pytest.fixture(scope="module")
def kmod_env(udevadm, tmp_path_factory):
    if not kmodfix.tools_available():
        pytest.skip("gcc or depmod (package kmod) missing: run tools/install-deps")
    work = str(tmp_path_factory.mktemp("builtins-kmod"))
    devices = fakesys.build(os.path.join(work, "tree"))
    moddir, conf = kmodfix.build(os.path.join(work, "modules"))
    env = {"TUDEV_TEST_KMOD_DIR": moddir, "TUDEV_TEST_KMOD_CONFIG": conf}
    return udevadm, os.path.join(work, "tree"), devices, env


def run(kmod_env, cases):
    """cases: [(command, device name)] -> [{"rc","stdout","stderr"}]"""
    udevadm, tree, devices, env = kmod_env
    group = {"sys": os.path.join(tree, "sys"), "etc_udev": None,
             "cmds": [{"argv": [udevadm, "test-builtin", cmd, devices[dev]], "env": env}
                      for cmd, dev in cases]}
    res = compare.run_plan([group])[0]["results"]
    for r in res:
        assert not tudevlib.sanitizer_reports(r["stderr"]), r["stderr"]
    return res


def lines(r):
    return [l for l in r["stderr"].splitlines()]


def test_modalias_resolves_and_blacklist_applies(kmod_env):
    r, = run(kmod_env, [("kmod load", "pci_fake")])
    assert r["rc"] == 0 and r["stdout"] == ""
    log = lines(r)
    assert "Loading module: pci:v00001234d00005678sv00000000sd00000000bc02sc00i00" in log
    # fake_a (exact alias) is tried and fails: logged, not fatal
    assert any(l.startswith("Failed to insert module 'fake_a': ") for l in log), log
    # fake_b matches by vendor but is blacklisted in the test's modprobe.d
    assert "Module 'fake_b' is deny-listed" in log
    assert not any("fake_c" in l for l in log)


def test_explicit_names_and_aliases(kmod_env):
    r, = run(kmod_env, [("kmod load fake_c no_such_module "
                         "usb:v0BADp0001d0000dc00dsc00dp00ic00isc00ip00in00", "no_modalias")])
    assert r["rc"] == 0
    log = lines(r)
    assert "Loading module: fake_c" in log
    assert "Failed to find module 'no_such_module'" in log
    assert sum(l.startswith("Failed to insert module 'fake_c': ") for l in log) == 2, log


def test_builtin_module_skipped(kmod_env):
    r, = run(kmod_env, [("kmod load", "pci_builtin")])
    assert r["rc"] == 0
    assert "Module 'fake_builtin' is built in" in lines(r)
    assert not any(l.startswith("Failed to insert") for l in lines(r))


def test_usage_errors(kmod_env):
    no_alias, no_verb, bad_verb, prefix = run(kmod_env, [
        ("kmod load", "no_modalias"), ("kmod", "pci_fake"), ("kmod unload x", "pci_fake"),
        ("km load fake_c", "pci_fake")])
    assert no_alias["rc"] == 1
    assert 'foo: Failed to read property "MODALIAS".' in lines(no_alias)
    assert no_verb["rc"] == 1 and "expected: load [module…]" in no_verb["stderr"]
    assert bad_verb["rc"] == 1
    # the first word is looked up by prefix, as systemd does: "km" is kmod
    assert prefix["rc"] == 0 and "Loading module: fake_c" in lines(prefix)


def test_without_test_dir_uses_the_running_kernel(kmod_env):
    """No override: kmod_new(NULL, NULL), /lib/modules/$(uname -r), which does
    not exist on this VM: nothing is found, the builtin still succeeds."""
    udevadm, tree, devices, _ = kmod_env
    group = {"sys": os.path.join(tree, "sys"), "etc_udev": None,
             "cmds": [{"argv": [udevadm, "test-builtin", "kmod load fake_a", devices["pci_fake"]]}]}
    r = compare.run_plan([group])[0]["results"][0]
    assert r["rc"] == 0
    if not os.path.isdir("/lib/modules/" + os.uname().release):
        assert "Failed to find module 'fake_a'" in lines(r)
