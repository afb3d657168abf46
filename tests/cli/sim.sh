#!/usr/bin/env bash
# colony sim: the controller's scheduling core on a virtual clock. Runs repeat exactly for a
# seed, every job is accounted for, waits grow with load, and bad options are refused.
set -euo pipefail
[ -x "${COLONY_BIN:-}/colony" ] || { echo "COLONY_BIN not set to the build's bin/"; exit 1; }
command -v jq >/dev/null || { echo "SKIP: jq missing"; exit 77; }
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d /tmp/colony-sim-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
sim() { "$COLONY_BIN/colony" sim --json --workload mishra --scale 5 --jobs 8000 "$@"; }

a=$(sim --seed 7 --load 0.9)
[ "$a" = "$(sim --seed 7 --load 0.9)" ] || fail "the same seed gave two different runs"
[ "$a" != "$(sim --seed 8 --load 0.9)" ] || fail "two seeds gave the same run"
[ "$(jq .completed <<<"$a")" = 8000 ] || fail "completed $(jq .completed <<<"$a") of 8000"
[ "$(jq .refused <<<"$a")" = 0 ] || fail "refused $(jq .refused <<<"$a") jobs that fit the cluster"
[ "$(jq .machines <<<"$a")" = 50 ] || fail "scale 5 should give 50 machines"
# a workload's departments are its classes, unless --dept-by none
[ "$(jq -c '[.departments_by, ([.departments[].jobs] | add), (.departments | length)]' <<<"$a")" = '["class",8000,8]' ] ||
        fail "mishra departments: $(jq -c '[.departments_by, ([.departments[].jobs] | add), (.departments | length)]' <<<"$a")"
[ "$(sim --seed 7 --load 0.9 --dept-by none | jq '.departments | length')" = 0 ] || fail "--dept-by none kept departments"

low=$(sim --seed 7 --load 0.3 | jq .wait.mean)
high=$(jq .wait.mean <<<"$a")
echo "# mean wait: $low s at load 0.3, $high s at load 0.9"
awk -v l="$low" -v h="$high" 'BEGIN { exit !(h > l) }' || fail "waits did not grow with load"
for policy in best-fit-mem worst-fit-cores mix-fit max-jobs; do
        p=$(sim --seed 7 --load 0.9 --policy "$policy" --order backfill)
        [ "$(jq .completed <<<"$p")" = 8000 ] || fail "$policy lost jobs"
        echo "# $policy, backfill: mean wait $(jq .wait.mean <<<"$p") s, cpu $(jq .mean_cpu_utilization <<<"$p")"
done
# the machine index decides as the scan of every machine does (--scan, the reference): the same
# runs, with queues (load 1.2), reservations and ties
for policy in first-fit best-fit-cores best-fit-mem worst-fit-cores worst-fit-mem mix-fit max-jobs; do
        for order in fifo backfill reserve; do
                args=(--json --workload mishra --scale 2 --jobs 3000 --load 1.2 --seed 3 --policy "$policy" --order "$order")
                [ "$("$COLONY_BIN/colony" sim "${args[@]}")" = "$("$COLONY_BIN/colony" sim "${args[@]}" --scan)" ] ||
                        fail "$policy, $order: the index and the scan gave different runs"
        done
done
echo "# every fit policy and order: the index's runs are the scan's"
g=$("$COLONY_BIN/colony" sim --json --workload lotes-google --scale 100 --jobs 5000 --load 0.8)
[ "$g" = "$("$COLONY_BIN/colony" sim --json --workload lotes-google --scale 100 --jobs 5000 --load 0.8 --scan)" ] ||
        fail "lotes-google: the index and the scan gave different runs"
[ "$(jq -c '[.machines, .completed, .refused]' <<<"$g")" = "[191,5000,0]" ] ||
        fail "lotes-google at scale 100: machines, completed, refused = $(jq -c '[.machines, .completed, .refused]' <<<"$g")"
cyc=$(sim --seed 7 --load 0.5 --cycle 30)
awk -v w="$(jq .wait.p50 <<<"$cyc")" 'BEGIN { exit !(w > 0 && w <= 30) }' ||
        fail "with a 30 s cycle and no queue, a job should wait part of a cycle, not $(jq .wait.p50 <<<"$cyc") s"

# a trace small enough to check by hand (tests/data/tiny.swf says how)
data=$(dirname "$0")/../data
t=$("$COLONY_BIN/colony" sim --json --trace "$data/tiny.swf" --machines "$data/one-machine.json")
[ "$(jq -c '[.jobs, .completed, .refused, .skipped]' <<<"$t")" = "[4,3,1,1]" ] ||
        fail "tiny.swf: jobs, completed, refused, skipped = $(jq -c '[.jobs, .completed, .refused, .skipped]' <<<"$t")"
awk -v m="$(jq .wait.mean <<<"$t")" -v x="$(jq .wait.max <<<"$t")" -v r="$(jq .response.max <<<"$t")" \
        'BEGIN { exit !(m > 5.666 && m < 5.667 && x == 9 && r == 14) }' ||
        fail "tiny.swf: waits mean $(jq .wait.mean <<<"$t") max $(jq .wait.max <<<"$t"), response max $(jq .response.max <<<"$t")"
echo "# tiny.swf: waits 0, 9, 8 s as computed by hand"
[ "$(jq -c '[.departments[] | [.name, .jobs, .refused, .cpu_seconds]]' <<<"$t")" = '[["g1",4,1,30]]' ] ||
        fail "tiny.swf departments (group 1: 2 x 10 + 1 x 5 + 1 x 5 core-seconds): $(jq -c .departments <<<"$t")"
u=$("$COLONY_BIN/colony" sim --trace "$data/tiny.swf" --machines "$data/one-machine.json" --dept-by user --jobs-csv - --csv)
[ "$(grep -c '^[0-9]*,u1,solo,' <<<"$u")" = 3 ] || fail "--jobs-csv -: $u"
printf '1 0 -1 10 2 -1 -1 2 10 -1 1 1 1 1 1 -1 -1\n' >"$tmp/short.swf"
printf '1 0 -1 10 2 -1 -1 x 10 -1 1 1 1 1 1 -1 -1 -1\n' >"$tmp/word.swf"
: >"$tmp/empty.swf"

check_exit 2 "unknown workload" sim --workload nope
check_exit 2 "give one of --workload" sim --jobs 10
check_exit 2 "--load" sim --workload mishra --load -1
check_exit 2 "--jobs" sim --workload mishra --jobs 0
check_exit 2 "--policy" sim --workload mishra --policy fastest
check_exit 2 "go together" sim --trace "$data/tiny.swf"
check_exit 1 "short.swf:1: fewer than 18 fields" sim --trace "$tmp/short.swf" --machines "$data/one-machine.json"
check_exit 1 "word.swf:1: a field is not a number" sim --trace "$tmp/word.swf" --machines "$data/one-machine.json"
check_exit 1 "no job with a submit time, a run time and processors" sim --trace "$tmp/empty.swf" --machines "$data/one-machine.json"
check_exit 1 "No such file" sim --trace "$tmp/none.swf" --machines "$data/one-machine.json"

# --policy coloc: the lotes workloads' types c1.. with a matrix from a file; every job is
# accounted for, and the matrix changes the run (c1 and c2 clash, c3 is alone)
printf '{"types": ["c1", "c2", "c3"], "alpha": [[1, 4, 0], [4, 1, 0], [0, 0, 1]]}\n' >"$tmp/alpha.json"
printf '{"types": ["c1"], "alpha": [[-1]]}\n' >"$tmp/negative.json"
coloc() { "$COLONY_BIN/colony" sim --json --workload lotes-google --scale 2 --jobs 2000 --load 0.8 --policy coloc "$@"; }
ones=$(coloc)
clash=$(coloc --alpha "$tmp/alpha.json")
[ "$(jq .completed <<<"$clash")" = 2000 ] || fail "coloc lost jobs"
[ "$(jq -c .response <<<"$ones")" != "$(jq -c .response <<<"$clash")" ] || fail "the matrix changed nothing"
echo "# coloc: mean response $(jq .response.mean <<<"$ones") s with alpha 1, $(jq .response.mean <<<"$clash") s with c1, c2 clashing"
check_exit 2 "--alpha goes with --policy coloc" sim --workload mishra --alpha "$tmp/alpha.json"
check_exit 1 "alpha\[0\]\[0\]: -1 is negative" sim --workload mishra --policy coloc --alpha "$tmp/negative.json"
# The simulator frees the jobs that ended as it goes (ctl_forget_ended; 4 times in this run, whose
# queue grows at load 1.1) and reads its figures from its own arrays: the summary and both CSVs
# are byte for byte those main 086bd4c printed, when every job stayed in memory. A change to what
# `colony sim` prints must recompute them (sha256sum of each output of this run).
"$COLONY_BIN/colony" sim --json --workload lotes-google --scale 5 --jobs 6000 --load 1.1 --seed 4 \
        --jobs-csv "$tmp/kept.csv" --depts-csv "$tmp/kept-depts.csv" >"$tmp/kept.json"
while read -r file sum; do
        [ "$(sha256sum <"$tmp/$file" | cut -d' ' -f1)" = "$sum" ] || fail "$file is not what main printed for the same run"
done <<EOF
kept.json bba7bc6cc22be9cabe898adee5c2b6d5530ef0bab4b307db6abb130ab7ab4472
kept.csv 097d09d27fce379891751420959328e65477929f5876c71b32ec3e3d72f82b4c
kept-depts.csv 1d861661db3ddd61b772d9d2fb1287cbd336342b2c20a13ef907209d9fdd2efb
EOF
echo "# 6000 jobs, ended ones freed as the run goes: the summary and the CSVs are main's"
echo PASS
