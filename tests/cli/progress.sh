#!/usr/bin/env bash
# progress.sh - colony sim shows a progress line when stderr is a terminal (a pseudo-terminal
# from script(1)), erases it at the end, and prints nothing of it when stderr is a pipe or a
# file; its results are the same either way. (colony measure's line: tests/integration/measure.sh.)
set -euo pipefail
bin=${COLONY_BIN:?}
command -v script >/dev/null || { echo "SKIP: script (util-linux) missing"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
sim="$bin/colony sim --workload mishra --jobs 3000 --scale 2 --load 0.9 --policy mix-fit"

# stderr a pipe: results on stdout, nothing on stderr.
$sim 2>&1 >"$dir/piped.out" | cat >"$dir/piped.err"
[ -s "$dir/piped.out" ] || fail "no results"
[ ! -s "$dir/piped.err" ] || fail "progress on a pipe: $(cat -v "$dir/piped.err")"

# On a terminal: script runs the command on a pseudo-terminal and copies what it writes there
# (stderr) to its own output; stdout still goes to a file.
script -qfec "$sim >$dir/tty.out" /dev/null >"$dir/tty.log" </dev/null || fail "colony sim on a terminal failed"
cmp -s "$dir/piped.out" "$dir/tty.out" || fail "results differ on a terminal"
sed 's/\x1b\[K//g' "$dir/tty.log" | tr '\r' '\n' | grep -v '^$' >"$dir/lines" || true
# The first line and the last are drawn whatever the timing; the ones between at most 10 a second.
grep -q '^colony sim: 0% (0/6000 arrivals and ends), ' "$dir/lines" || fail "no first progress line: $(cat -v "$dir/tty.log" | head -c 300)"
grep -q '^colony sim: 100% (6000/6000 arrivals and ends), ' "$dir/lines" || fail "no final progress line: $(cat -v "$dir/tty.log" | tail -c 300)"
n=$(grep -c '^colony sim: ' "$dir/lines")
# ...and the line is erased at the end: the output ends with a carriage return and erase-line.
[ "$(tail -c 4 "$dir/tty.log" | od -An -c | tr -d ' ')" = '\r033[K' ] || fail "the line is not erased at the end: $(tail -c 40 "$dir/tty.log" | cat -v)"
# Nothing else reached the terminal.
! grep -v '^colony sim: ' "$dir/lines" | grep -q . || fail "other output on the terminal: $(grep -v '^colony sim: ' "$dir/lines" | head -3 | cat -v)"
echo "PASS: $n progress lines on a terminal, none when piped"
