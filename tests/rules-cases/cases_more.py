# SPDX-License-Identifier: GPL-2.0-or-later
"""Substitutions, string_escape, PROGRAM/RESULT, every IMPORT kind, link
priorities and conflicts between two devices, remove cleanup."""

S = 'KERNEL=="sda1", ENV{V}="%s"'


def sub(name, text, value, dev="sda1", **kw):
    rules = 'ENV{V}="%s"' % text
    return dict(name="subst_" + name, dev=dev, rules=kw.pop("rules", rules),
                props={"V": value}, **kw)


CASES = [
    sub("kernel", "$kernel %k", "sda1 sda1"),
    sub("number", "$number %n", "1 1"),
    sub("devpath", "$devpath", "/devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/"
        "0:0:0:0/block/sda/sda1"),
    sub("id", "$id", "", ),
    sub("driver_in_parents", "x$driver", "x"),
    sub("attr", "$attr{size} %s{partition}", "512 1"),
    sub("attr_parent_walk", "$attr{model}", "", dev="sda"),  # $attr{} does not walk up
    sub("env", "$env{DEVTYPE}", "partition"),
    sub("major_minor", "$major:$minor %M:%m", "8:1 8:1"),
    sub("devnode", "$devnode %N", "/dev/sda1 /dev/sda1"),
    sub("name", "$name", "sda1"),
    sub("root_sys", "$root $sys", "/dev /sys"),
    sub("dollar_percent", "$$ %%", "$ %"),
    sub("parent", "$parent %P", "sda sda"),
    sub("links", "$links", "l1 l2", rules='SYMLINK+="l1 l2"\nENV{V}="$links"',
        sd="systemd lists $links in hash order (l2 l1)"),
    sub("result", "%c", "one two", rules='PROGRAM="/bin/echo one two"\nENV{V}="%c"'),
    sub("result_n", "%c{2}", "two", rules='PROGRAM="/bin/echo one two three"\nENV{V}="%c{2}"'),
    sub("result_n_plus", "%c{2+}", "two three",
        rules='PROGRAM="/bin/echo one two three"\nENV{V}="%c{2+}"'),
    sub("result_match", "", "ok",
        rules='PROGRAM="/bin/echo one two"\nRESULT=="one*", ENV{V}="ok"'),
    sub("result_miss", "", None,
        rules='PROGRAM="/bin/echo one two"\nRESULT=="two*", ENV{V}="ok"'),
    sub("program_sh", "", "a-b",
        rules='PROGRAM="/bin/sh -c \'echo a-b\'", ENV{V}="%c"'),
    sub("escape_replace", "", "a_b_c",
        rules='OPTIONS+="string_escape=replace", ENV{V}="a/b c"'),
    sub("escape_none", "", "a/b c",
        rules='OPTIONS+="string_escape=none", ENV{V}="a/b c"'),
    dict(name="symlink_escape_replace", dev="sda",
         rules='PROGRAM="/bin/echo a b", SYMLINK+="x/%c"',
         links={"x/a": "../sda", "b": "sda"}),  # "x/a b" is two links
    dict(name="symlink_escape_replace_opt", dev="sda",
         rules='OPTIONS+="string_escape=replace", PROGRAM="/bin/echo a b", SYMLINK+="x/%c"',
         links={"x/a_b": "../sda"}),
    dict(name="import_program", dev="sda",
         rules='IMPORT{program}="/bin/sh -c \'echo P1=a; echo P2=b\'"',
         props={"P1": "a", "P2": "b"}),
    dict(name="import_program_fail", dev="sda",
         rules='IMPORT{program}="/bin/false", ENV{X}="1"', props={"X": None}),
    dict(name="import_file", dev="sda",
         pre_sh="printf 'F1=one\\nF2=\"two words\"\\n# c\\n' > /run/ut/imp",
         rules='IMPORT{file}="/run/ut/imp"', props={"F1": "one", "F2": "two words"}),
    dict(name="import_file_missing", dev="sda",
         rules='IMPORT{file}="/run/ut/none", ENV{X}="1"', props={"X": None}),
    dict(name="import_builtin_path_id", dev="sda1", rules='IMPORT{builtin}="path_id"',
         props={"ID_PATH": "pci-0000:00:1f.2-ata-1.0",
                "ID_PATH_TAG": "pci-0000_00_1f_2-ata-1_0"}),
    dict(name="import_builtin_usb_id", dev="event3", rules='IMPORT{builtin}="usb_id"',
         props={"ID_VENDOR_ID": "046d", "ID_MODEL_ID": "c077", "ID_SERIAL_SHORT": "ABC123",
                "ID_BUS": "usb"}),
    dict(name="import_db", dev="sda",
         pre_sh="mkdir -p /run/udev/data; printf 'E:OLD=1\\nE:KEEP=2\\n' > "
                "/run/udev/data/b8:0",
         rules='IMPORT{db}="OLD"', props={"OLD": "1", "KEEP": None}),
    dict(name="import_cmdline_value", dev="sda", rules='IMPORT{cmdline}="tudev.val"',
         sd="in a container v252 reads PID 1's command line, not /proc/cmdline",
         props={"tudev.val": "abc"}),
    dict(name="import_cmdline_flag", dev="sda", rules='IMPORT{cmdline}="tudev.flag"',
         sd="in a container v252 reads PID 1's command line, not /proc/cmdline",
         props={"tudev.flag": "1"}),
    dict(name="import_cmdline_missing", dev="sda",
         rules='IMPORT{cmdline}="tudev.nope", ENV{X}="1"', props={"X": None}),
    dict(name="import_parent", dev="sda1",
         pre_sh="mkdir -p /run/udev/data; printf 'E:PARENT_P=7\\nE:ID_X=y\\n' > "
                "/run/udev/data/b8:0",
         rules='IMPORT{parent}="PARENT_*"', props={"PARENT_P": "7", "ID_X": None}),
    dict(name="link_conflict_winner_removed", dev="sda", action="remove",
         pre=[("add", "sda"), ("add", "sdb")],
         rules='KERNEL=="sda", SYMLINK+="shared", OPTIONS+="link_priority=10"\n'
               'KERNEL=="sdb", SYMLINK+="shared"',
         links={"shared": "sdb"}),
    dict(name="remove_cleanup", dev="sda", action="remove", pre=[("add", "sda")],
         rules='SYMLINK+="gone/x", TAG+="t"', links={"gone/x": None, "sda": None},
         post_sh="[ -e /run/udev/data/b8:0 ] || echo NODB=1 >> /run/ut/out",
         props={"NODB": "1"}),
    dict(name="remove_env_from_db", dev="sda", action="remove",
         pre=[("add", "sda")],
         rules='ACTION=="add", ENV{SAVED}="s"\nACTION=="remove", ENV{R}="$env{SAVED}"',
         props={"R": "s"}),
    dict(name="change_keeps_links", dev="sda", action="change", pre=[("add", "sda")],
         rules='SYMLINK+="keep"', links={"keep": "sda"}),
    dict(name="change_drops_old_link", dev="sda", action="change", pre=[("add", "sda")],
         rules='ACTION=="add", SYMLINK+="addonly"', links={"addonly": None}),
]
