#!/usr/bin/env bash
# colony measure on this host: a CPU-bound job slows another CPU-bound job sharing its core more
# than it slows an idle-heavy one, and two measurements agree within their confidence intervals
# (each at least +-0.05: the drift between whole runs, below).
# Only ratios measured in one run are compared, never absolute times: the host may be busy.
. "$(dirname "$0")/lib.sh"
cluster_up --agents 1 --agent-cpus 2
command -v taskset >/dev/null || { echo "SKIP: taskset (util-linux) missing"; exit $SKIP; }

# Small work (about 0.3 s alone) so that the 18 runs of each measurement take seconds.
measure() { colony measure --types cpu,idle --reps 3 --size 0.3 --mem 64M --pin 0 --json; }
# entry FILE MATRIX ROW COL: one entry of a matrix, rows and columns by type name.
entry() {
        jq -r --arg m "$2" --arg r "$3" --arg c "$4" \
                '(.types | index($r)) as $i | (.types | index($c)) as $j | .[$m][$i][$j]' "$1"
}
# Usage errors are exit 2, before any job is submitted.
for bad in "--types cpu,gpu" "--types cpu,cpu" "--reps 1" "--type =true" "--type x" "--size 0" "--cpus lots" "--types ,"; do
        rc=0; colony measure $bad >/dev/null 2>&1 || rc=$?
        [ "$rc" = 2 ] || fail "colony measure $bad exited $rc, not 2"
done
[ "$(colony queue --all --json | jq '.jobs | length')" = 0 ] || fail "a usage error submitted jobs"
# work-io cleans up after itself: its file is unlinked as soon as it is open.
"$COLONY_BIN/colony-stress" work-io 3 >/dev/null || fail "colony-stress work-io failed"
[ -z "$(ls "$DIR" | grep colony-stress-io)" ] || fail "work-io left its file behind"

measure >first.json 2>first.log
measure >second.json 2>second.log
# Piped, no progress line (nor anything else) on stderr.
[ ! -s first.log ] && [ ! -s second.log ] || fail "stderr of a piped measure: $(cat -v first.log second.log | head -c 300)"
# On a terminal (script's pseudo-terminal), a progress line: the first run's is drawn whatever
# the timing; the line is erased at the end. 1 type, 2 reps: 2 runs alone, 2 in pairs.
script -qfec "$COLONY_BIN/colony measure --types idle --reps 2 --size 0.1 --mem 64M --pin 0 --json >tty.json" \
        /dev/null </dev/null >tty.log || fail "measure on a terminal failed: $(cat -v tty.log | tail -c 300)"
jq -e '.types == ["idle"]' tty.json >/dev/null || fail "measure on a terminal: $(cat tty.json)"
sed 's/\x1b\[K//g' tty.log | tr '\r' '\n' | grep -v '^$' >tty-lines.log || true
grep -q '^colony measure: 0% (0/4 runs), .*: idle alone$' tty-lines.log || fail "no progress line: $(cat -v tty.log | head -c 300)"
! grep -v '^colony measure: [0-9]*% ([0-4]/4 runs), [^:]*\(: idle \(alone\|beside idle\)\)\?$' tty-lines.log | grep -q . ||
        fail "not a progress line: $(grep -v '^colony measure' tty-lines.log | head -3 | cat -v)"
[ "$(tail -c 4 tty.log | od -An -c | tr -d ' ')" = '\r033[K' ] || fail "the progress line is not erased: $(tail -c 40 tty.log | cat -v)"
note "on a terminal: $(wc -l <tty-lines.log) progress lines"

# spread FILE: the 95% half-width of cpu's times alone relative to their mean (fixed work: a few
# percent on a quiet host). Other users' bursts on CPU 0 widen it, and can make a ratio mean
# nothing; then a failed comparison is a skip, as in cpu_limit.sh, not a verdict.
spread() {
        jq '(.types | index("cpu")) as $i | .alone_seconds[$i] | (add / length) as $m |
            ((map((. - $m) * (. - $m)) | add) / (length - 1) | sqrt) * 4.303 / (length | sqrt) / $m' "$1"
}
# alone_mean FILE: cpu's mean time alone. Two runs whose means differ by more than 15% ran on a
# host whose load changed between them (CI starts a guest beside this test: 0.28 s, then 0.35).
alone_mean() { jq '(.types | index("cpu")) as $i | .alone_seconds[$i] | add / length' "$1"; }
noisy=$(awk -v a="$(spread first.json)" -v b="$(spread second.json)" -v m1="$(alone_mean first.json)" \
        -v m2="$(alone_mean second.json)" 'BEGIN { d = m1 > m2 ? m1 / m2 : m2 / m1; print (a > 0.15 || b > 0.15 || d > 1.15) }')
note "cpu alone: $(jq -c '.alone_seconds[0]' first.json) then $(jq -c '.alone_seconds[0]' second.json) s (noisy: $noisy)"
disagree() {
        [ "$noisy" = 1 ] && { echo "SKIP: the host is too busy to measure on: $*"; exit $SKIP; }
        fail "$*"
}

jq -e '.types == ["cpu", "idle"] and (.alpha | length) == 2 and .reps == 3 and
       ([.alone_seconds[][]] | all(. > 0))' first.json >/dev/null || fail "malformed output: $(cat first.json)"
cc=$(entry first.json alpha_mean cpu cpu)
ic=$(entry first.json alpha_mean idle cpu)
note "alpha(cpu -> cpu) = $cc [$(entry first.json ci95_low cpu cpu), $(entry first.json ci95_high cpu cpu)]"
note "alpha(idle -> cpu) = $ic [$(entry first.json ci95_low idle cpu), $(entry first.json ci95_high idle cpu)]"
# The pairs can be noisy while the runs alone were not: CI's host suite beside two guests gave
# cpu's times alone within 7% and alpha(idle -> cpu) = 0.84 in [-2.60, 4.28]. An interval of
# either alpha wider than +-0.5, half the effect compared below, cannot order them: noise too.
wide=$(awk -v a="$(entry first.json ci95_low cpu cpu)" -v b="$(entry first.json ci95_high cpu cpu)" \
        -v c="$(entry first.json ci95_low idle cpu)" -v d="$(entry first.json ci95_high idle cpu)" \
        'BEGIN { print ((b - a) / 2 > 0.5 || (d - c) / 2 > 0.5) }')
[ "$wide" = 1 ] && noisy=1
awk -v a="$cc" -v b="$ic" 'BEGIN { exit !(a > b) }' || disagree "a CPU-bound neighbour ($cc) slows cpu no more than an idle one ($ic)"
awk -v a="$cc" 'BEGIN { exit !(a > 0.3) }' || disagree "alpha(cpu -> cpu) = $cc: sharing a core barely slowed cpu"

# Agreement: the two 95% intervals of alpha(cpu -> cpu), each at least +-DRIFT wide, overlap.
# An interval covers the noise between the repetitions of one run, not all of what moves a
# whole run: 16 runs here had means from 0.91 to 1.04 (sd 0.035), while 3 repetitions now and
# then agree by chance to within +-0.01 (CI failed on [1.013, 1.031] against [0.985, 1.009]).
DRIFT=0.05
lo1=$(entry first.json ci95_low cpu cpu); hi1=$(entry first.json ci95_high cpu cpu)
lo2=$(entry second.json ci95_low cpu cpu); hi2=$(entry second.json ci95_high cpu cpu)
note "second run: alpha(cpu -> cpu) = $(entry second.json alpha_mean cpu cpu) [$lo2, $hi2]"
awk -v a="$lo1" -v b="$hi1" -v c="$lo2" -v d="$hi2" -v drift="$DRIFT" '
        function half(lo, hi) { return (hi - lo) / 2 > drift ? (hi - lo) / 2 : drift }
        function abs(x) { return x < 0 ? -x : x }
        BEGIN { exit !(abs((a + b) / 2 - (c + d) / 2) <= half(a, b) + half(c, d)) }' ||
        disagree "the two measurements disagree: [$lo1, $hi1] and [$lo2, $hi2], each widened to at least +-$DRIFT, do not overlap"

# The matrix is a colony coloc instance's: add machines and jobs, and coloc takes it.
jq '{types, alpha, machines: 2, jobs: [{type: "cpu", load: 1, count: 2}, {type: "idle", load: 1, count: 2}]}' \
        first.json >instance.json
colony coloc --algo best-schedule --instance instance.json >/dev/null || fail "colony coloc refuses the measured matrix"
# Nothing left in the working directory but what this test wrote (work-io's file is unlinked).
[ -z "$(ls "$DIR" | grep -v -e '\.json$' -e '\.log$' -e '^controller' -e '^agent-' -e '^secret$')" ] ||
        fail "measure left files behind: $(ls "$DIR")"
echo "PASS"
