# SPDX-License-Identifier: GPL-2.0-or-later
"""udevadm hwdb --update against systemd 252's systemd-hwdb (Debian's package,
unpacked in $SD_UDEV_ROOT = build-ref/sd-udev).

Debian 12's hwdb.d ($SD_UDEV_ROOT/lib/udev/hwdb.d) is compiled by both into
separate roots. Every match pattern of those files is turned into a string it
matches ('*' -> "", then again '*' -> "Zz9", '?' -> a character, '[set]' -> a
member); each string is looked up in both files with the system's libudev
(tests/clients/hwdb-lookup, systemd's own reader: udev_hwdb_new() +
udev_hwdb_get_properties_list_entry()), run in a private mount namespace with
the file under test bind-mounted over /etc/udev. The properties must be equal
for every string. A sample is also looked up with tudev's reader
(`udevadm hwdb --test`) in tudev's file and with `systemd-hwdb query` in
systemd's: same properties in the same order."""

import os
import subprocess

import pytest

import tudevlib

STAR_REPLACEMENTS = ("", "Zz9")
SAMPLE_EVERY = 211  # patterns between two `--test` / `query` comparisons


def sd_root():
    root = os.environ.get("SD_UDEV_ROOT")
    if not root:
        root = os.path.dirname(os.path.dirname(tudevlib.SD_UDEVADM))
    return root


def read_lines(path):
    """The lines of a source file as the compiler sees them: split at \\n,
    \\r, \\r\\n or NUL, comment lines dropped, '#' ending the line,
    trailing whitespace cut. Yields (number, text)."""
    data = open(path, "rb").read().decode("utf-8", "surrogateescape")
    n = 0
    for raw in data.replace("\r\n", "\n").replace("\r", "\n").replace("\0", "\n").split("\n"):
        n += 1
        if raw.startswith("#"):
            continue
        yield n, raw.split("#", 1)[0].rstrip()


def records(path):
    """(patterns, has_property) of every record of a source file."""
    out, matches, props, state = [], [], False, "none"
    for _, line in read_lines(path):
        if state == "none":
            if line and not line.startswith(" "):
                matches, props, state = [line], False, "match"
        elif state == "match":
            if not line:
                out.append((matches, False))
                state = "none"
            elif not line.startswith(" "):
                matches.append(line)
            else:
                props = props or ("=" in line and line.lstrip(" \t")[:1] != "=")
                state = "data"
        else:
            if line.startswith(" "):
                props = props or ("=" in line and line.lstrip(" \t")[:1] != "=")
                continue
            out.append((matches, props))
            state = "none"
    if state != "none":
        out.append((matches, props))
    return out


def concrete(pattern, star):
    """A string the fnmatch() pattern matches."""
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "*":
            out.append(star)
        elif c == "?":
            out.append("q")
        elif c == "\\" and i + 1 < len(pattern):
            i += 1
            out.append(pattern[i])
        elif c == "[" and "]" in pattern[i + 2:]:
            end = pattern.index("]", i + 2)
            body = pattern[i + 1:end]
            if body[:1] in ("!", "^"):
                excluded = body[1:]
                out.append(next(ch for ch in "0aZ_-.9xQ" if ch not in excluded))
            else:
                out.append(body[0])
            i = end
        else:
            out.append(c)
        i += 1
    return "".join(out)


def libudev_lookup(client, hwdb_dir, modaliases):
    """Properties of each modalias with the system's libudev reading
    hwdb_dir/hwdb.bin (bind-mounted over /etc/udev in a new mount namespace;
    an /etc/systemd/hwdb, which libudev would prefer, is hidden)."""
    script = ('set -e; mount --bind "$1" /etc/udev; '
              'if [ -d /etc/systemd/hwdb ]; then mount -t tmpfs tmpfs /etc/systemd/hwdb; fi; '
              'exec "$2"')
    p = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script,
                        "sh", hwdb_dir, client],
                       input="".join(m + "\n" for m in modaliases).encode(),
                       capture_output=True, check=False, timeout=600)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    blocks = p.stdout.decode("utf-8", "surrogateescape").split("\n\n")
    assert blocks[-1] == "", "output not terminated"
    blocks = blocks[:-1]
    assert len(blocks) == len(modaliases)
    return [sorted(b.split("\n")) if b else [] for b in blocks]


@pytest.fixture(scope="module")
def trees(udevadm, tmp_path_factory):
    root = sd_root()
    sd_hwdb = os.path.join(root, "bin", "systemd-hwdb")
    src = os.path.join(root, "lib", "udev", "hwdb.d")
    if not os.access(sd_hwdb, os.X_OK) or not os.path.isdir(src):
        pytest.skip("systemd-hwdb or hwdb.d not found under %s" % root)
    work = tmp_path_factory.mktemp("hwdb-compile")
    out = {}
    for name in ("sd", "tu"):
        dest = work / name / "lib" / "udev" / "hwdb.d"
        dest.mkdir(parents=True)
        for f in sorted(os.listdir(src)):
            if f.endswith(".hwdb"):
                (dest / f).write_bytes(open(os.path.join(src, f), "rb").read())
        out[name] = str(work / name)
    p = subprocess.run([sd_hwdb, "update", "--root=" + out["sd"]], capture_output=True,
                       check=False)
    assert p.returncode == 0, p.stderr
    p = subprocess.run([udevadm, "hwdb", "--update", "--strict", "--root=" + out["tu"]],
                       capture_output=True, check=False)
    out["tu_stderr"] = p.stderr.decode(errors="replace")
    assert p.returncode == 0, out["tu_stderr"]
    out["src"] = src
    out["sd_hwdb"] = sd_hwdb
    return out


@pytest.fixture(scope="module")
def patterns(trees):
    """(modalias, pattern, has_property) for every pattern of every file."""
    out = []
    for f in sorted(os.listdir(trees["src"])):
        if not f.endswith(".hwdb"):
            continue
        for matches, props in records(os.path.join(trees["src"], f)):
            for m in matches:
                for star in STAR_REPLACEMENTS:
                    out.append((concrete(m, star), m, props))
    return out


def test_written_files(trees):
    for name in ("sd", "tu"):
        path = os.path.join(trees[name], "etc", "udev", "hwdb.bin")
        st = os.stat(path)
        assert st.st_mode & 0o7777 == 0o444, name
        with open(path, "rb") as f:
            assert f.read(8) == b"KSLPHHRH"
    # no parse error in Debian's files, and nothing else said at info level
    assert trees["tu_stderr"] == ""
    # no temporary file left beside it
    assert os.listdir(os.path.join(trees["tu"], "etc", "udev")) == ["hwdb.bin"]


def test_same_lookups_as_systemd(build, trees, patterns):
    client = os.path.join(build, "clients", "hwdb-lookup")
    assert os.access(client, os.X_OK), "%s not built" % client
    modaliases = sorted({m for m, _, _ in patterns})
    assert len(modaliases) > 100000
    sd = libudev_lookup(client, os.path.join(trees["sd"], "etc", "udev"), modaliases)
    tu = libudev_lookup(client, os.path.join(trees["tu"], "etc", "udev"), modaliases)
    diffs = [(m, a, b) for m, a, b in zip(modaliases, sd, tu) if a != b]
    print("hwdb: %d patterns, %d lookup strings compared, %d differ"
          % (len(patterns) // len(STAR_REPLACEMENTS), len(modaliases), len(diffs)))
    assert not diffs, "%d of %d lookups differ, e.g.:\n%s" % (
        len(diffs), len(modaliases),
        "\n".join("%r:\n  systemd: %r\n  tudev:   %r" % d for d in diffs[:20]))

    # the strings are meaningful: each finds the properties of its own record
    found = dict(zip(modaliases, sd))
    empty = [(m, p) for m, p, props in patterns if props and not found[m]]
    assert not empty, "patterns whose string matched nothing: %r" % empty[:20]


def test_same_order_as_systemd_query(udevadm, trees, patterns):
    """tudev's reader in tudev's file against systemd-hwdb query in
    systemd's, property order included (as hwdb builtin output is)."""
    sample = [m for m, _, _ in patterns[::SAMPLE_EVERY]]
    assert len(sample) > 500
    diffs = []
    for m in sample:
        a = subprocess.run([trees["sd_hwdb"], "query", "--root=" + trees["sd"], m],
                           capture_output=True, check=False)
        b = subprocess.run([udevadm, "hwdb", "--test=" + m, "--root=" + trees["tu"]],
                           capture_output=True, check=False)
        assert b.returncode == 0, b.stderr
        if a.stdout != b.stdout:
            diffs.append((m, a.stdout, b.stdout))
    assert not diffs, "\n".join("%r:\n  systemd: %r\n  tudev:   %r" % d for d in diffs[:10])


def test_usr_and_overrides(udevadm, tmp_path):
    """--usr writes lib/udev/hwdb.bin; /etc overrides /lib by file name;
    --strict fails on a malformed line but still writes the database."""
    lib = tmp_path / "lib" / "udev" / "hwdb.d"
    etc = tmp_path / "etc" / "udev" / "hwdb.d"
    lib.mkdir(parents=True)
    etc.mkdir(parents=True)
    (lib / "50-a.hwdb").write_text("t:*\n FROM=lib\n\nu:*\n U=1\n")
    (etc / "50-a.hwdb").write_text("t:*\n FROM=etc\n")
    p = subprocess.run([udevadm, "hwdb", "--update", "--usr", "--root=%s" % tmp_path],
                       capture_output=True, check=False)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "lib" / "udev" / "hwdb.bin").exists()
    assert not (tmp_path / "etc" / "udev" / "hwdb.bin").exists()
    p = subprocess.run([udevadm, "hwdb", "--test=t:1", "--root=%s" % tmp_path],
                       capture_output=True, check=False)
    assert (p.returncode, p.stdout) == (0, b"FROM=etc\n")
    p = subprocess.run([udevadm, "hwdb", "--test=u:1", "--root=%s" % tmp_path],
                       capture_output=True, check=False)
    assert (p.returncode, p.stdout) == (0, b"")

    (etc / "60-b.hwdb").write_text("v:*\n NOEQ\n V=1\n")
    p = subprocess.run([udevadm, "hwdb", "--update", "--strict", "--root=%s" % tmp_path],
                       capture_output=True, check=False)
    assert p.returncode == 1
    assert "60-b.hwdb:2:" in p.stderr.decode()
    p = subprocess.run([udevadm, "hwdb", "--update", "--root=%s" % tmp_path],
                       capture_output=True, check=False)
    assert p.returncode == 0
    p = subprocess.run([udevadm, "hwdb", "--test=v:1", "--root=%s" % tmp_path],
                       capture_output=True, check=False)
    assert (p.returncode, p.stdout) == (0, b"V=1\n")


def test_missing_database_message(udevadm):
    """No hwdb.bin anywhere: one info message naming the command that builds
    it (the sandbox's /etc is private; the host's /lib must have none)."""
    from_host = [p for p in ("/usr/lib/systemd/hwdb/hwdb.bin", "/lib/systemd/hwdb/hwdb.bin",
                             "/lib/udev/hwdb.bin") if os.path.exists(p)]
    if from_host:
        pytest.skip("this machine has %s" % from_host[0])
    script = ('set -e; mount -t tmpfs tmpfs /etc/udev; '
              'if [ -d /etc/systemd/hwdb ]; then mount -t tmpfs tmpfs /etc/systemd/hwdb; fi; '
              'exec "$1" hwdb --test=usb:v1D6Bp0001')
    p = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script,
                        "sh", udevadm], capture_output=True, check=False)
    err = p.stderr.decode()
    assert p.returncode == 1
    assert err.count("udevadm hwdb --update") == 1, err
    assert "systemd-hwdb" not in err, err
