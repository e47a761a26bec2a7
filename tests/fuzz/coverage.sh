#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Source coverage reached by the fuzz corpora (llvm-cov line/branch report of
# the file each target is about).
#
#   tests/fuzz/coverage.sh [CORPUS_ROOT [TARGET...]]
#
# CORPUS_ROOT holds corpus-<name>/ directories (default: build/fuzz, what
# `make check-fuzz` left there; tests/fuzz gives the seed corpora). Builds
# every target with clang's source-based coverage into build/fuzz-cov/ (no
# sanitizers), runs it once over its corpus and prints the report.
set -eu

cd "$(dirname "$0")/../.."
root=${1:-build/fuzz}
[ $# -gt 0 ] && shift
targets=${*:-"uevent monitor-msg ctrl-msg db format rules"}
out=build/fuzz-cov
cc=${FUZZ_CC:-clang}
cflags="-O1 -g -std=gnu11 -D_GNU_SOURCE -Isrc -DVERSION=\"cov\" -DTUDEV_RULES_DIR=\"/nonexistent\"
        -DTUDEV_PROBE_PATH=\"/nonexistent\" -fprofile-instr-generate -fcoverage-mapping"

mkdir -p "$out/obj"
objs=
for f in src/shared/*.c src/proto/*.c src/device/*.c src/rules/*.c; do
        case "$f" in */test-*) continue ;; esac
        o="$out/obj/$(echo "$f" | tr / _ | sed 's/\.c$/.o/')"
        if [ ! -f "$o" ] || [ "$f" -nt "$o" ]; then
                # shellcheck disable=SC2086
                $cc $cflags -fsanitize=fuzzer-no-link -c -o "$o" "$f"
        fi
        objs="$objs $o"
done
rm -f "$out/libcov.a"
# shellcheck disable=SC2086
ar rcs "$out/libcov.a" $objs

files_of() {
        case "$1" in
        uevent) echo src/proto/uevent.c ;;
        monitor-msg) echo src/proto/monitor-msg.c src/udevadm/netlink-monitor.c ;;
        ctrl-msg) echo src/proto/ctrl-msg.c ;;
        db) echo src/device/db.c ;;
        format) echo src/event/event-format.c ;;
        rules) echo src/rules/rules-parse.c src/rules/rules-compile.c src/rules/rules-load.c ;;
        esac
}

for t in $targets; do
        # shellcheck disable=SC2086
        $cc $cflags -fsanitize=fuzzer -o "$out/fuzz-$t" "tests/fuzz/fuzz-$t.c" "$out/libcov.a" \
                -ludev -lkmod -pthread
        rm -f "$out/$t.profraw"
        LLVM_PROFILE_FILE="$out/$t.profraw" "$out/fuzz-$t" -runs=0 "$root/corpus-$t" \
                >"$out/$t.log" 2>&1
        llvm-profdata merge -sparse -o "$out/$t.profdata" "$out/$t.profraw"
        echo "== $t ($(find "$root/corpus-$t" -type f | wc -l) inputs)"
        # shellcheck disable=SC2046
        llvm-cov report "$out/fuzz-$t" -instr-profile="$out/$t.profdata" $(files_of "$t") |
                sed -n '1p;3,$p'
done
