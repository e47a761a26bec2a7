# SPDX-License-Identifier: GPL-2.0-or-later
"""`udevadm cat` (the verb of systemd after 252): the rules files in the order
the daemon reads them, each under a "# PATH" header with a blank line between
files; files looked up by name in the search path, paths and directories as
arguments; --tldr without comments and blank lines; --config for udev.conf.

Each run happens in a private mount namespace (unshare -m) with tmpfs over
/etc/udev, /run/udev and the rules directories under /usr that exist, filled
from a staging tree the test writes: the host's rules never show.
systemd 252 has no cat verb, so nothing is compared with it; the expected
output is written out in full."""

import os
import shlex
import shutil
import subprocess

import pytest

# Rules directories under /usr that the daemon searches; we can only mount
# over the ones that exist (creating them would touch the host's /usr).
USR_DIRS = [d for d in ("/usr/local/lib/udev/rules.d", "/usr/lib/udev/rules.d")
            if os.path.isdir(d)]
if os.path.isdir("/lib/udev/rules.d") and not any(
        os.path.samefile("/lib/udev/rules.d", d) for d in USR_DIRS):
    USR_DIRS.append("/lib/udev/rules.d")


def stage(tmp_path, files):
    """files: {absolute path: bytes, or ("link", target)} -> staging root.
    Paths under tmp_path are written in place, the others (system
    directories) into the staging tree."""
    root = tmp_path / "stage"
    if root.exists():
        shutil.rmtree(root)
    for path, content in files.items():
        if path.startswith(str(tmp_path) + "/"):
            p = tmp_path / os.path.relpath(path, str(tmp_path))
            if p.exists() or p.is_symlink():
                continue
        else:
            p = root / path.lstrip("/")
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, tuple):
            os.symlink(content[1], p)
        else:
            p.write_bytes(content)
    return root


def run_cat(udevadm, tmp_path, files, args, cwd=None, env=None):
    root = stage(tmp_path, files)
    sh = ["set -e",
          "mount -t tmpfs tmpfs /etc/udev 2>/dev/null || "
          "{ mkdir -p /etc/udev; mount -t tmpfs tmpfs /etc/udev; }",
          "mkdir -p /run/udev && mount -t tmpfs tmpfs /run/udev"]
    for d in USR_DIRS:
        sh.append("mount -t tmpfs tmpfs %s" % d)
    for d in ["/etc/udev", "/run/udev"] + USR_DIRS:
        src = os.path.join(str(root), d.lstrip("/"))
        sh.append("[ ! -d %s ] || cp -a %s/. %s/" % (shlex.quote(src), shlex.quote(src), d))
    sh.append("cd %s" % shlex.quote(cwd or str(tmp_path)))
    sh.append("exec %s cat %s" % (udevadm, " ".join(shlex.quote(a) for a in args)))
    e = dict(os.environ)
    e.pop("TUDEV_UDEV_CONF", None)
    e.update(env or {})
    return subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c",
                           "\n".join(sh)], capture_output=True, env=e, timeout=60)


def usr_dir():
    if "/usr/lib/udev/rules.d" not in USR_DIRS:
        pytest.skip("/usr/lib/udev/rules.d does not exist here")
    return "/usr/lib/udev/rules.d"


def test_search_path_order_override_and_masks(udevadm, tmp_path):
    usr = usr_dir()
    files = {
        "/etc/udev/rules.d/50-etc.rules": b"E50\n",
        "/etc/udev/rules.d/70-same.rules": b"etc wins\n",
        "/run/udev/rules.d/10-run.rules": b"R10\n",
        "/run/udev/rules.d/70-same.rules": b"run loses\n",
        "/run/udev/rules.d/60-masked.rules": ("link", "/dev/null"),
        "/run/udev/rules.d/.hidden.rules": b"hidden\n",
        usr + "/05-usr.rules": b"U05\n",
        usr + "/70-same.rules": b"usr loses\n",
        usr + "/80-usr.rules": b"U80 no newline",
        usr + "/90-not-rules.conf": b"not a rules file\n",
    }
    r = run_cat(udevadm, tmp_path, files, [])
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode() == (
        "# %s/05-usr.rules\nU05\n\n"
        "# /run/udev/rules.d/10-run.rules\nR10\n\n"
        "# /etc/udev/rules.d/50-etc.rules\nE50\n\n"
        "# /run/udev/rules.d/60-masked.rules\n\n"
        "# /etc/udev/rules.d/70-same.rules\netc wins\n\n"
        "# %s/80-usr.rules\nU80 no newline\n" % (usr, usr))


TLDR_TEXT = (b"# comment\n"
             b"\n"
             b"   \t\n"
             b"  # indented comment\n"
             b"; semicolon comment\n"
             b"KERNEL==\"sda\", ENV{A}=\"1\"  # trailing comment stays\n"
             b"  SUBSYSTEM==\"block\", \\\n"
             b"    ENV{B}=\"2\"\n"
             b"LABEL=\"end\"\n")


def test_tldr(udevadm, tmp_path):
    files = {"/etc/udev/rules.d/40-t.rules": TLDR_TEXT,
             "/run/udev/rules.d/41-only-comments.rules": b"# nothing\n\n"}
    r = run_cat(udevadm, tmp_path, files, ["--tldr", "/etc/udev/rules.d",
                                           "/run/udev/rules.d"])
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode() == (
        "# /etc/udev/rules.d/40-t.rules\n"
        "KERNEL==\"sda\", ENV{A}=\"1\"  # trailing comment stays\n"
        "  SUBSYSTEM==\"block\", \\\n"
        "    ENV{B}=\"2\"\n"
        "LABEL=\"end\"\n\n"
        "# /run/udev/rules.d/41-only-comments.rules\n")
    # without --tldr the text comes out unchanged
    r = run_cat(udevadm, tmp_path, files, ["/etc/udev/rules.d/40-t.rules"])
    assert r.stdout == b"# /etc/udev/rules.d/40-t.rules\n" + TLDR_TEXT


def test_line_endings(udevadm, tmp_path):
    files = {"/etc/udev/rules.d/1.rules": b"a\r\nb\rc\0d\n\ne"}
    r = run_cat(udevadm, tmp_path, files, ["1"])
    assert r.returncode == 0, r.stderr
    assert r.stdout == b"# /etc/udev/rules.d/1.rules\na\nb\nc\nd\n\ne\n"


def test_names_paths_and_dirs(udevadm, tmp_path):
    mine = tmp_path / "mine"
    files = {
        "/etc/udev/rules.d/70-same.rules": b"etc\n",
        "/run/udev/rules.d/70-same.rules": b"run\n",
        "/run/udev/rules.d/30-run.rules": b"run only\n",
        "/run/udev/rules.d/31-link.rules": ("link", "/run/udev/target/real.rules"),
        "/run/udev/target/real.rules": b"through a link\n",
        str(mine / "b.rules"): b"B\n",
        str(mine / "a.rules"): b"A\n",
        str(mine / "c.txt"): b"not listed\n",
        str(tmp_path / "rel.rules"): b"relative\n",
    }
    # a name with or without .rules: the first in the search path, canonical
    r = run_cat(udevadm, tmp_path, files, ["70-same", "30-run.rules", "31-link"])
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode() == ("# /etc/udev/rules.d/70-same.rules\netc\n\n"
                                 "# /run/udev/rules.d/30-run.rules\nrun only\n\n"
                                 "# /run/udev/target/real.rules\nthrough a link\n")
    # a directory: its .rules files by name; a relative path made absolute;
    # arguments keep their order
    r = run_cat(udevadm, tmp_path, files, ["./rel.rules", str(mine)])
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode() == ("# %s/rel.rules\nrelative\n\n"
                                 "# %s/a.rules\nA\n\n# %s/b.rules\nB\n"
                                 % (tmp_path, mine, mine))
    # something that does not exist: status 1 after what came before
    r = run_cat(udevadm, tmp_path, files, ["30-run", "no-such-file"])
    assert r.returncode == 1
    assert r.stdout.decode() == "# /run/udev/rules.d/30-run.rules\nrun only\n"
    assert 'Failed to chase "no-such-file": No such file or directory' in r.stderr.decode()


def test_config(udevadm, tmp_path):
    conf = b"# udev.conf\nudev_log=debug\n\n;children_max=4\nevent_timeout=60\n"
    files = {"/etc/udev/udev.conf": conf, "/etc/udev/rules.d/1.rules": b"R\n"}
    r = run_cat(udevadm, tmp_path, files, ["--config"])
    assert r.returncode == 0, r.stderr
    assert r.stdout == b"# /etc/udev/udev.conf\n" + conf
    r = run_cat(udevadm, tmp_path, files, ["--config", "--tldr"])
    assert r.stdout == b"# /etc/udev/udev.conf\nudev_log=debug\nevent_timeout=60\n"
    r = run_cat(udevadm, tmp_path, {}, ["--config"])
    assert r.returncode == 0, r.stderr
    assert r.stdout == b"# Main configuration file udev/udev.conf not found\n"
    r = run_cat(udevadm, tmp_path, files, ["--config", "1.rules"])
    assert r.returncode == 1 and r.stdout == b""
    assert b"Combination of --config and FILEs is not supported." in r.stderr


def test_empty_search_path_and_help(udevadm, tmp_path):
    r = run_cat(udevadm, tmp_path, {}, [])
    assert (r.returncode, r.stdout) == (0, b""), r.stderr
    r = run_cat(udevadm, tmp_path, {}, ["--help"])
    assert r.returncode == 0 and b"--tldr" in r.stdout and b"--config" in r.stdout
    r = run_cat(udevadm, tmp_path, {}, ["--bogus"])
    assert r.returncode == 1
