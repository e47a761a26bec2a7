# SPDX-License-Identifier: GPL-2.0-or-later
"""Tags at their edges, as systemd 252 handles them: the empty tag of
TAG+="" (stored as "G:"/"Q:", indexed as /run/udev/tags/<id>, left out of
TAGS=, matched by empty alternatives of TAGS==/TAG==) and a device with
10,000 tags (its record is written, so its links go on remove)."""

# Rules that set M<n>=1 for each pattern that matches.
EMPTY_ALTERNATIVES = ('TAGS=="foo||bar", ENV{M1}="1"\n'
                      'TAGS=="|foo", ENV{M2}="1"\n'
                      'TAGS=="bar|", ENV{M3}="1"\n'
                      'TAG=="", ENV{M4}="1"\n'
                      'TAGS=="", ENV{M5}="1"\n'
                      'TAG!="", ENV{M7}="1"\n'
                      'TAG=="bar|", ENV{M8}="1"')

# 10,000 TAG+= rules appended to the case's rules file (one printf: a shell
# loop would cost a process per line).
MANY_TAGS = ("i=0; s=''; while [ $i -lt 10000 ]; do s=\"$s TAG+=\\\"t$i\\\"\"; "
             "i=$((i+1)); done; printf '%s\\n' $s >> /etc/udev/rules.d/50-test.rules")

CASES = [
    dict(name="tag_empty_added", dev="sda", rules='TAG+="foo", TAG+=""',
         props={"TAGS": ":foo:", "CURRENT_TAGS": ":foo:", "EMPTYTAGFILE": "yes"},
         db=["G:foo", "G:", "Q:foo", "Q:"],
         post_sh="[ -f /run/udev/tags/b8:0 ] && echo EMPTYTAGFILE=yes >> /run/ut/out"),
    dict(name="tag_empty_matches_empty_alternatives", dev="sda",
         rules='TAG+="foo", TAG+=""\n' + EMPTY_ALTERNATIVES,
         props={"M1": "1", "M2": "1", "M3": "1", "M4": "1", "M5": "1", "M7": None,
                "M8": "1"}),
    dict(name="tag_none_empty_alternatives", dev="sda", rules=EMPTY_ALTERNATIVES,
         props={"M1": None, "M2": None, "M3": None, "M4": None, "M5": None, "M7": "1",
                "M8": None}),
    dict(name="tag_foo_only_empty_alternatives", dev="sda",
         rules='TAG+="foo"\n' + EMPTY_ALTERNATIVES,
         props={"M1": "1", "M2": "1", "M3": None, "M4": None, "M5": None, "M7": "1",
                "M8": None}),
    dict(name="tag_empty_change_kept", dev="sda", action="change", pre=[("add", "sda")],
         rules='TAG+="foo", TAG+=""', db=["G:foo", "G:", "Q:foo", "Q:"],
         props={"TAGS": ":foo:"}),
    dict(name="tag_empty_only", dev="sda", rules='TAG=""\nTAGS=="|x", ENV{M}="1"',
         props={"TAGS": None, "CURRENT_TAGS": None, "M": "1", "EMPTYTAGFILE": "yes"},
         db=["G:", "Q:"],
         post_sh="[ -f /run/udev/tags/b8:0 ] && echo EMPTYTAGFILE=yes >> /run/ut/out",
         sd="v252's udevadm test crashes (SIGSEGV) joining TAGS= from the empty tag "
            "alone, after writing G:/Q: and the index; tudev leaves TAGS= out"),
    dict(name="tags_10000_written", dev="sda", pre_sh=MANY_TAGS,
         rules='SYMLINK+="many/x"',
         links={"many/x": "../sda"}, db=["S:many/x", "G:t0", "G:t9999", "Q:t9999"],
         post_sh="echo NG=$(grep -c '^G:t' /run/udev/data/b8:0) >> /run/ut/out; "
                 "[ -f /run/udev/tags/t9999/b8:0 ] && echo LASTTAG=yes >> /run/ut/out",
         props={"NG": "10000", "LASTTAG": "yes"}),
    dict(name="tags_10000_links_removed", dev="sda", action="remove", pre=[("add", "sda")],
         pre_sh=MANY_TAGS, rules='SYMLINK+="many/x"', links={"many/x": None, "sda": None},
         post_sh="[ -e /run/udev/data/b8:0 ] || echo NODB=1 >> /run/ut/out",
         props={"NODB": "1"}),
]
