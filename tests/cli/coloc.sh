#!/usr/bin/env bash
# colony coloc: the colocation algorithms on sample instances (tests/data/coloc-*.json), every
# algorithm's cost against the bound, a tiny run of the paper's experiment, and broken input.
set -euo pipefail
[ -x "${COLONY_BIN:-}/colony" ] || { echo "COLONY_BIN not set to the build's bin/"; exit 1; }
command -v jq >/dev/null || { echo "SKIP: jq missing"; exit 77; }
data=$(cd "$(dirname "$0")/../data" && pwd)
dir=$(mktemp -d /tmp/colony-coloc-XXXXXX)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
coloc() { "$COLONY_BIN/colony" coloc "$@"; }

# two compatible types (alpha 0.4) on 2 machines: pairing a 5 of each type costs 5 + 0.4 * 5 = 7,
# the optimum; the LP bound is 10/2 + 0.4 * 8/2 = 6.6
r=$(coloc --json --algo best-schedule --instance "$data/coloc-two-types.json")
[ "$(jq -c '[.max_cost, .lower_bound, .bound.p_max, .jobs, .machines]' <<<"$r")" = "[7,6.6,5,4,2]" ] ||
        fail "best-schedule: $(jq -c '[.max_cost, .lower_bound, .bound.p_max, .jobs, .machines]' <<<"$r")"
[ "$(jq '[.assignments[] | select(.machine == 1)] | length' <<<"$r")" = 2 ] || fail "best-schedule: not 2 jobs a machine"
echo "# two types, best-schedule: max cost 7, bound 6.6"

for algo in fill-greedy sched-mixed sched-juxtapose best-schedule greedy-dedicated greedy-dedicated-mixed \
        greedy-dedicated-juxtapose greedy-for-2-types fill-rebalance; do
        for inst in two-types clashing; do
                r=$(coloc --json --algo "$algo" --instance "$data/coloc-$inst.json")
                jq -e '.max_cost >= .lower_bound and .normalized_cost >= 1 and (.assignments | length) == .jobs
                       and ([.machine_costs[]] | max) == .max_cost' <<<"$r" >/dev/null ||
                        fail "$algo on $inst: $(jq -c '[.max_cost, .lower_bound, .normalized_cost]' <<<"$r")"
        done
        echo "# $algo: $(jq -c '[.max_cost, .normalized_cost]' <<<"$r") on the clashing instance"
done
# the counterexample to the paper's Proposition 12 (docs/policies.md): 150 against an optimum of 101
[ "$(coloc --json --algo d-best --instance "$data/coloc-clashing.json" | jq .max_cost)" = 150 ] ||
        fail "greedy-dedicated on the clashing instance should cost 150"
human=$(coloc --algo fill-rebalance --instance "$data/coloc-clashing.json")
grep -q "^max cost 101, lower bound" <<<"$human" || fail "fill-rebalance should find the optimum 101: $human"
grep -q "^MACHINE  COST  LOAD  JOBS" <<<"$human" || fail "no machine table: $human"

# the paper's experiment, one instance per combination: every regime and algorithm reported
e=$(coloc --json --experiment small --instances 1 --seed 3)
[ "$(jq -c '[.instances[]]' <<<"$e")" = "[84,63,63,56]" ] || fail "experiment instances: $(jq -c .instances <<<"$e")"
jq -e '[.mean_normalized_cost[][]] | length == 21 and min >= 1' <<<"$e" >/dev/null || fail "experiment means: $e"
[ "$e" = "$(coloc --json --experiment small --instances 1 --seed 3)" ] || fail "the same seed gave two runs"
echo "# experiment, best on compatible: $(jq '.mean_normalized_cost["best-schedule"].compatible' <<<"$e") (paper $(jq '.paper["best-schedule"].compatible' <<<"$e"))"
coloc --experiment small --instances 1 | grep -q "^best  *[0-9.]* (1.04)" || fail "no table for the experiment"

# broken input: one line on stderr, exit 2, nothing on stdout
two=$data/coloc-two-types.json
with() { jq "$1" "$two" >"$dir/bad.json"; echo "$dir/bad.json"; }
echo '{"types": ["a"], "alpha": [[1]], "machines": 2, "jobs": [' >"$dir/trunc.json"
check_error() { # check_error TEXT ARGS...
        local want=$1 rc=0 out err; shift
        out=$(coloc "$@" 2>"$dir/err") || rc=$?
        err=$(cat "$dir/err")
        [ "$rc" = 2 ] || fail "colony coloc $*: exit $rc, want 2"
        [ -z "$out" ] || fail "colony coloc $*: printed '$out'"
        grep -q -- "$want" <<<"$err" || fail "colony coloc $*: '$err' lacks '$want'"
        [ "$(wc -l <<<"$err")" = 1 ] || fail "colony coloc $*: not one line: $err"
        echo "# $err"
}
check_error "not valid JSON" --algo mix --instance "$dir/trunc.json"
check_error "No such file" --algo mix --instance "$dir/none.json"
check_error "unknown algorithm 'fastest'" --algo fastest --instance "$two"
check_error "job entry 2: type" --algo mix --instance "$(with '.jobs[1].type = "gpu"')"
check_error "job entry 1: load" --algo mix --instance "$(with '.jobs[0].load = -5')"
check_error "alpha\[0\]\[1\]" --algo mix --instance "$(with '.alpha[0][1] = -0.5')"
check_error "row 2 does not have 2" --algo mix --instance "$(with '.alpha[1] = [1]')"
check_error "2 rows of 2" --algo mix --instance "$(with '.alpha = [[1, 0.4]]')"
check_error "machines" --algo mix --instance "$(with '.machines = 0')"
check_error "'mem' twice" --algo mix --instance "$(with '.types = ["mem", "mem"]')"
check_error "count" --algo mix --instance "$(with '.jobs[0].count = 0')"
check_error "\"jobs\" array" --algo mix --instance "$(with 'del(.jobs)')"
check_error "more clusters of compatible types than machines" --algo fill-greedy \
        --instance "$(with '.alpha = [[1, 2], [2, 1]] | .machines = 1')"
check_error "small or large" --experiment medium
check_error "either --algo and --instance, or --experiment" --experiment small --algo mix
check_error "go together" --algo mix
check_error "instances" --experiment small --instances 0
echo PASS
