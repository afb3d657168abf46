#!/usr/bin/env bash
# colony fair on the MCH paper's Fig. 4, the DRF paper's example, the partial-type counterexample
# to "MCH equals H-DRF" (docs/policies.md), and on broken input. Needs no cluster.
set -euo pipefail
[ -x "${COLONY_BIN:-}/colony" ] || { echo "COLONY_BIN not set to the build's bin/"; exit 1; }
command -v jq >/dev/null || { echo "SKIP: jq missing"; exit 77; }
data=$(cd "$(dirname "$0")/../data" && pwd)
dir=$(mktemp -d /tmp/colony-fair-XXXXXX)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

fair() { # fair ALGO NAME: the JSON reply on tests/data/fair-NAME-{tree,demands}.json
        "$COLONY_BIN/colony" fair --json --algo "$1" --tree "$data/fair-$2-tree.json" --demands "$data/fair-$2-demands.json"
}
# near JSON FIELD WANT...: the leaves' FIELD, in file order, each within 0.01 of WANT
near() {
        local got; got=$(jq -r --arg f "$2" '[.nodes[] | select(.leaf) | .[$f]] | @tsv' <<<"$1")
        jq -e -n --arg got "$got" --arg want "${*:3}" \
                '[$got | split("\t")[] | tonumber] as $g | [$want | split(" ")[] | tonumber] as $w |
                 ($g | length) == ($w | length) and all(range($w | length); ($g[.] - $w[.]) | fabs <= 0.01)' >/dev/null ||
                fail "$2: got $got, want ${*:3}"
}

for algo in mch hdrf; do
        out=$(fair $algo fig4)
        near "$out" dominant_share 0.33 0.5 0.165 0.165 0.5 0.33
        echo "# fig4 $algo shares: $(jq -c '[.nodes[] | select(.leaf) | .dominant_share]' <<<"$out")"
done
out=$(fair mch fig4)
near "$out" flat_weight 1 1 0.5 0.5 1 1
[ "$(jq -r .first_saturated <<<"$out")" = cpu ] || fail "fig4: first saturated resource is not cpu"
echo "# fig4 mch weights: $(jq -c '[.nodes[] | select(.leaf) | .flat_weight]' <<<"$out")"

echo '{"nodes": [{"name": "root"}, {"name": "A", "parent": "root"}, {"name": "B", "parent": "root"}]}' >"$dir/t.json"
echo '{"capacity": {"cpus": 9, "mem": "18G"}, "demands": [{"node": "A", "cpus": 1, "mem": "4G", "tasks": 50},
      {"node": "B", "cpus": 3, "mem": "1G", "tasks": 50}]}' >"$dir/d.json"
for algo in drf wdrf hdrf mch; do
        got=$("$COLONY_BIN/colony" fair --json --algo $algo --tree "$dir/t.json" --demands "$dir/d.json" |
              jq -c '[.nodes[] | select(.leaf) | .tasks]')
        [ "$got" = "[3,2]" ] || fail "DRF example with $algo: $got tasks, the paper says [3,2]"
done
echo "# DRF paper example: A 3 tasks, B 2"

q() { jq '.nodes[] | select(.name == "q") | .tasks' <<<"$(fair "$1" partial)"; }
[ "$(q hdrf)" = 50 ] && [ "$(q mch)" = 33 ] || fail "partial-type counterexample: q gets $(q hdrf) under H-DRF, $(q mch) under MCH"
echo "# counterexample: q gets 50 tasks under H-DRF, 33 under MCH"
"$COLONY_BIN/colony" fair --algo mch --tree "$data/fair-fig4-tree.json" --demands "$data/fair-fig4-demands.json" |
        grep -q '^    n2,1 .* 34 .*0.170$' || fail "the table lacks n2,1's row"

# finite demands (docs/policies.md): n2,2 wants 10 tasks; MCH leaves n2 at 0.4 of its guaranteed
# 0.5, and colony fair says so; H-DRF keeps it.
echo '{"nodes": [{"name": "root"}, {"name": "n1", "parent": "root"}, {"name": "n2", "parent": "root"},
      {"name": "n1,1", "parent": "n1"}, {"name": "n2,1", "parent": "n2"}, {"name": "n2,2", "parent": "n2"}]}' >"$dir/finite-tree.json"
echo '{"capacity": {"cpus": 100, "mem": "100G"}, "demands": [{"node": "n1,1", "cpus": 1, "mem": "1G", "tasks": 1000},
      {"node": "n2,1", "cpus": 1, "mem": "1G", "tasks": 1000}, {"node": "n2,2", "cpus": 1, "mem": "1G", "tasks": 10}]}' >"$dir/finite-demands.json"
out=$("$COLONY_BIN/colony" fair --json --algo mch --tree "$dir/finite-tree.json" --demands "$dir/finite-demands.json")
jq -e '.largest_shortfall.node == "n2" and (.largest_shortfall.shortfall - 0.1 | fabs) < 1e-9 and
       .versus.algo == "hdrf" and (.versus.largest_gap - 0.1 | fabs) < 1e-9' <<<"$out" >/dev/null ||
        fail "mch's shortfall on the finite-demand tree: $(jq -c '[.largest_shortfall, .versus]' <<<"$out")"
"$COLONY_BIN/colony" fair --json --algo hdrf --tree "$dir/finite-tree.json" --demands "$dir/finite-demands.json" |
        jq -e '.largest_shortfall == null' >/dev/null || fail "hdrf falls short of a guarantee on the finite-demand tree"
"$COLONY_BIN/colony" fair --algo mch --tree "$dir/finite-tree.json" --demands "$dir/finite-demands.json" |
        grep -q '^under mch, n2 holds 0.400 of a guaranteed 0.500, 0.100 short$' || fail "the table does not say n2 is short"
echo "# finite demands: under mch n2 holds 0.4 of its guaranteed 0.5; hdrf keeps it"

# GPUs as a third resource (issue 25): on 64 cores and 8 GPUs, ml's tasks (1 GPU + 2 cores) have
# the GPU as dominant resource (1/8), physics' (8 cores) the cores (1/8): DRF gives ml the 8
# GPUs and physics the 48 cores left (tests/unit/test_fair.c computes it by hand).
echo '{"nodes": [{"name": "root"}, {"name": "ml", "parent": "root"}, {"name": "physics", "parent": "root"}]}' >"$dir/gpu-tree.json"
echo '{"capacity": {"cpus": 64, "mem": "512G", "gpus": 8}, "demands": [{"node": "ml", "cpus": 2, "mem": "1G", "gpus": 1,
      "tasks": 100}, {"node": "physics", "cpus": 8, "mem": "1G", "tasks": 100}]}' >"$dir/gpu-demands.json"
for algo in drf hdrf mch; do
        out=$("$COLONY_BIN/colony" fair --json --algo $algo --tree "$dir/gpu-tree.json" --demands "$dir/gpu-demands.json")
        jq -e '[.nodes[] | select(.leaf) | [.tasks, .gpus]] == [[8, 8], [6, 0]] and .capacity.gpus == 8' <<<"$out" \
                >/dev/null || fail "GPU example with $algo: $(jq -c '[.nodes[] | select(.leaf)]' <<<"$out")"
done
"$COLONY_BIN/colony" fair --algo drf --tree "$dir/gpu-tree.json" --demands "$dir/gpu-demands.json" >"$dir/gpu.txt"
grep -q '^drf: 14 tasks on 64 CPUs, 512.0G and 8 GPUs' "$dir/gpu.txt" && grep -q '^  ml .* 1.000  8$' "$dir/gpu.txt" ||
        fail "the GPU table: $(cat "$dir/gpu.txt")"
echo "# GPUs dominant: ml 8 tasks (8 GPUs), physics 6 (48 cores)"

# broken input: one line on stderr, exit 2, nothing on stdout
check_error() { # check_error TEXT TREE DEMANDS [ALGO]
        local want=$1 rc=0 out
        out=$("$COLONY_BIN/colony" fair --algo "${4:-mch}" --tree "$2" --demands "$3" 2>&1 >/dev/null) || rc=$?
        [ "$rc" = 2 ] || fail "colony fair $*: exit $rc, want 2"
        grep -q -- "$want" <<<"$out" || fail "colony fair $*: '$out' lacks '$want'"
        [ "$(wc -l <<<"$out")" = 1 ] || fail "colony fair $*: not one line: $out"
        echo "# $out"
}
tree() { echo "{\"nodes\": [$1]}" >"$dir/$2.json"; }
tree '{"name": "root"}, {"name": "A", "parent": "B"}, {"name": "B", "parent": "A"}' cycle
tree '{"name": "root"}, {"name": "A", "parent": "nobody"}' orphan
tree '{"name": "root"}, {"name": "A", "parent": "root", "weight": -2}, {"name": "B", "parent": "root"}' negative
tree '{"name": "root"}, {"name": "A", "parent": "root"}, {"name": "A", "parent": "root"}' twice
echo '{"nodes": [' >"$dir/trunc.json"
echo '{"capacity": {"cpus": 9, "mem": "18G"}, "demands": [{"node": "A", "cpus": 10, "tasks": 1}]}' >"$dir/big.json"
echo '{"capacity": {"cpus": 9, "mem": "18G"}, "demands": [{"node": "root", "cpus": 1}]}' >"$dir/inner.json"
echo '{"capacity": {"cpus": 9, "mem": "18G"}, "demands": [{"node": "Z", "cpus": 1}]}' >"$dir/unknown.json"
echo '{"demands": []}' >"$dir/nocap.json"
echo '{"capacity": {"cpus": 9, "mem": "18G"}, "demands": []}' >"$dir/empty.json"
echo '{"capacity": {"cpus": 9, "mem": "18G"}, "demands": [{"node": "A", "cpus": 1, "gpus": 1}]}' >"$dir/nogpus.json"
echo '{"capacity": {"cpus": 9, "mem": "18G", "gpus": 1.5}, "demands": []}' >"$dir/halfgpu.json"
echo '{"capacity": {"cpus": 9, "mem": "18G", "gpus": 2}, "demands": [{"node": "A", "cpus": 1, "gpus": 4}]}' >"$dir/manygpus.json"
check_error "in a cycle" "$dir/cycle.json" "$dir/empty.json"
check_error "unknown parent 'nobody'" "$dir/orphan.json" "$dir/empty.json"
check_error "node A: weight must be a positive number" "$dir/negative.json" "$dir/empty.json"
check_error "node A: given twice" "$dir/twice.json" "$dir/empty.json"
check_error "not valid JSON" "$dir/trunc.json" "$dir/empty.json"
check_error "node A: a task needs more cpu than the cluster has" "$dir/t.json" "$dir/big.json"
check_error "has children" "$dir/t.json" "$dir/inner.json"
check_error "no node 'Z'" "$dir/t.json" "$dir/unknown.json"
check_error "capacity" "$dir/t.json" "$dir/nocap.json"
check_error "demand 1: asks gpus, but the capacity has none" "$dir/t.json" "$dir/nogpus.json"
check_error "capacity: gpus: a whole number" "$dir/t.json" "$dir/halfgpu.json"
check_error "node A: a task needs more gpus than the cluster has" "$dir/t.json" "$dir/manygpus.json"
check_error "No such file" "$dir/none.json" "$dir/d.json"
check_error "unknown\|--algo" "$dir/t.json" "$dir/d.json" fastest
echo PASS
