#!/usr/bin/env bash
# colony sim: the controller's scheduling core on a virtual clock. Runs repeat exactly for a
# seed, every job is accounted for, waits grow with load, and bad options are refused.
set -euo pipefail
[ -x "${COLONY_BIN:-}/colony" ] || { echo "COLONY_BIN not set to the build's bin/"; exit 1; }
command -v jq >/dev/null || { echo "SKIP: jq missing"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
sim() { "$COLONY_BIN/colony" sim --json --workload mishra --scale 5 --jobs 8000 "$@"; }

a=$(sim --seed 7 --load 0.9)
[ "$a" = "$(sim --seed 7 --load 0.9)" ] || fail "the same seed gave two different runs"
[ "$a" != "$(sim --seed 8 --load 0.9)" ] || fail "two seeds gave the same run"
[ "$(jq .completed <<<"$a")" = 8000 ] || fail "completed $(jq .completed <<<"$a") of 8000"
[ "$(jq .refused <<<"$a")" = 0 ] || fail "refused $(jq .refused <<<"$a") jobs that fit the cluster"
[ "$(jq .machines <<<"$a")" = 50 ] || fail "scale 5 should give 50 machines"

low=$(sim --seed 7 --load 0.3 | jq .wait.mean)
high=$(jq .wait.mean <<<"$a")
echo "# mean wait: $low s at load 0.3, $high s at load 0.9"
awk -v l="$low" -v h="$high" 'BEGIN { exit !(h > l) }' || fail "waits did not grow with load"
for policy in best-fit-mem worst-fit-cores mix-fit max-jobs; do
        p=$(sim --seed 7 --load 0.9 --policy "$policy" --order backfill)
        [ "$(jq .completed <<<"$p")" = 8000 ] || fail "$policy lost jobs"
        echo "# $policy, backfill: mean wait $(jq .wait.mean <<<"$p") s, cpu $(jq .mean_cpu_utilization <<<"$p")"
done
cyc=$(sim --seed 7 --load 0.5 --cycle 30)
awk -v w="$(jq .wait.p50 <<<"$cyc")" 'BEGIN { exit !(w > 0 && w <= 30) }' ||
        fail "with a 30 s cycle and no queue, a job should wait part of a cycle, not $(jq .wait.p50 <<<"$cyc") s"

check_usage() { # check_usage TEXT ARGS...
        local want=$1 rc=0 out; shift
        out=$("$COLONY_BIN/colony" sim "$@" 2>&1 >/dev/null) || rc=$?
        [ "$rc" = 2 ] || fail "colony sim $*: exit $rc, want 2"
        grep -q -- "$want" <<<"$out" || fail "colony sim $*: '$out' lacks '$want'"
        echo "# $out"
}
check_usage "unknown workload" --workload nope
check_usage "required" --jobs 10
check_usage "--load" --workload mishra --load -1
check_usage "--jobs" --workload mishra --jobs 0
check_usage "--policy" --workload mishra --policy fastest
echo PASS
