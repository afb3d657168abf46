#!/usr/bin/env bash
# LoTES through the CLI at CI size: colony lotes's stage results hold together, and LoTES,
# Tetris and Greedy each complete every job of lotes-google and lotes-phi:PHI at 0.97 lambda*
# (the paper's set-up, scaled down: tests/bench/lotes.sh runs it larger). Prints the mean waits.
set -euo pipefail
[ -x "${COLONY_BIN:-}/colony" ] || { echo "COLONY_BIN not set to the build's bin/"; exit 1; }
command -v jq >/dev/null || { echo "SKIP: jq missing"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
colony() { "$COLONY_BIN/colony" "$@"; }

# stage results: lambda* of each stage bounds the next, machines add up, bins use K_j only
for w in lotes-google lotes-phi:0.012 lotes-omega:0.1 mishra; do
        p=$(colony lotes --json --workload "$w" --scale 20)
        jq -e '.stage1.lambda > 0 and .stage2.lambda_lp <= .stage1.lambda * (1 + 1e-9)
               and .stage2.lambda <= .stage2.lambda_lp * (1 + 1e-9) and .stage2.lambda > 0' <<<"$p" >/dev/null ||
                fail "$w: lambdas $(jq -c '[.stage1.lambda, .stage2.lambda_lp, .stage2.lambda]' <<<"$p")"
        jq -e '[.stage2.configs[] | .machines == ([.used[].machines] | add)] | all' <<<"$p" >/dev/null ||
                fail "$w: the rounded bins do not add up to each configuration's machines"
        jq -e '[.stage2.configs[] | .classes as $k | .used[].jobs | keys[] | IN($k[])] | all' <<<"$p" >/dev/null ||
                fail "$w: a bin holds a class its configuration was not given"
        echo "# $w: lambda* $(jq -c '[.stage1.lambda, .stage2.lambda_lp, .stage2.lambda]' <<<"$p") (stage 1, 2, rounded)"
done
g=$(colony lotes --json --workload lotes-google --scale 6732)
jq -e '.stage1.seconds + .stage2.seconds < 1' <<<"$g" >/dev/null ||
        fail "lotes-google offline stages took $(jq '.stage1.seconds + .stage2.seconds' <<<"$g") s of CPU, goal < 1 s"
[ "$(colony lotes --workload lotes-phi:0.5 2>&1 >/dev/null; echo $?)" != 0 ] || fail "PHI 0.5 accepted"
msg=$(colony lotes --workload nope 2>&1 || true)
grep -q "lotes-phi:PHI" <<<"$msg" || fail "an unknown workload should list the known ones, not: $msg"

# the comparison, small: every policy completes every job. Only the PHI whose stage 2 is quick
# at this seed and scale: at PHI = 0 the classes are alike and stage 1 spreads six of them on the
# largest configuration, which then has a million bins (docs/policies.md); the bench runs them all.
jobs=6000
echo "# mean wait (s) at 0.97 lambda*, scale 5, $jobs jobs: workload lotes tetris greedy"
for w in lotes-google lotes-phi:0.012 lotes-omega:0.2; do
        row="# $w"
        for policy in lotes tetris greedy; do
                r=$(colony sim --json --workload "$w" --scale 5 --jobs $jobs --load 0.97 --capacity lotes --policy "$policy")
                [ "$(jq -c '[.completed, .refused]' <<<"$r")" = "[$jobs,0]" ] ||
                        fail "$w, $policy: completed, refused = $(jq -c '[.completed, .refused]' <<<"$r")"
                row="$row $(jq '.wait.mean * 100 | round / 100' <<<"$r")"
        done
        echo "$row"
done
a=$(colony sim --json --workload lotes-phi:0.012 --scale 5 --jobs 2000 --capacity lotes --policy lotes --seed 3)
[ "$a" = "$(colony sim --json --workload lotes-phi:0.012 --scale 5 --jobs 2000 --capacity lotes --policy lotes --seed 3)" ] ||
        fail "the same seed gave two LoTES runs"
colony sim --workload lotes-phi:0.009 --trace x.swf --policy lotes 2>/dev/null && fail "--trace with --workload accepted"
msg=$(colony sim --trace /dev/null --machines /dev/null --policy lotes 2>&1 || true)
grep -q "need a --workload" <<<"$msg" || fail "--policy lotes on a trace should say it needs a workload, not: $msg"
echo "PASS"
