#!/usr/bin/env bash
# colony place on the NetBatch paper's two examples (Figs. 3 and 4: two machines of 4 cores
# and 32 GB), and on broken input. Needs no cluster: the policy runs in the CLI.
set -euo pipefail
[ -x "${COLONY_BIN:-}/colony" ] || { echo "COLONY_BIN not set to the build's bin/"; exit 1; }
command -v jq >/dev/null || { echo "SKIP: jq missing"; exit 77; }
dir=$(mktemp -d /tmp/colony-place-XXXXXX)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

echo '{"machines": [{"name": "A", "cpus": 4, "mem": "32G"}, {"name": "B", "cpus": 4, "mem": "32G"}]}' >"$dir/m.json"
echo '{"jobs": [{"cpus": 1, "mem": "16G", "count": 2}, {"cpus": 1, "mem": "4G", "count": 6}]}' >"$dir/fig3.json"
echo '{"jobs": [{"cpus": 1, "mem": "8G", "count": 3}, {"cpus": 1, "mem": "32G"}]}' >"$dir/fig4.json"

placed() { "$COLONY_BIN/colony" place --json --policy "$1" --machines "$dir/m.json" --jobs "$dir/$2.json" | jq .placed; }
expect() { # expect FIG POLICY COUNT
        local got; got=$(placed "$2" "$1")
        [ "$got" = "$3" ] || fail "$1 with $2 placed $got jobs, the paper says $3"
        echo "# $1 $2: $got"
}
expect fig3 worst-fit-mem 8
expect fig3 best-fit-mem 6
expect fig3 mix-fit 8
expect fig4 best-fit-mem 4
expect fig4 worst-fit-mem 3
expect fig4 mix-fit 4
unplaced=$("$COLONY_BIN/colony" place --json --policy worst-fit-mem --machines "$dir/m.json" --jobs "$dir/fig4.json" | jq -c .unplaced)
[ "$unplaced" = "[4]" ] || fail "Worst-Fit should miss only the 32 GB job, missed $unplaced"

for fig in fig3 fig4; do
        best=$(placed max-jobs "$fig")
        for p in first-fit best-fit-cores best-fit-mem worst-fit-cores worst-fit-mem mix-fit; do
                [ "$best" -ge "$(placed "$p" "$fig")" ] || fail "$fig: max-jobs placed $best, fewer than $p"
        done
        echo "# $fig max-jobs: $best, no fewer than any single heuristic"
done

# GPUs where the instance has them: the jobs that ask some, every machine's free ones
echo '{"machines": [{"name": "A", "cpus": 4, "mem": "32G", "gpus": 2}, {"name": "B", "cpus": 4, "mem": "32G"}]}' >"$dir/mg.json"
echo '{"jobs": [{"cpus": 1, "mem": "1G", "gpus": 2}, {"cpus": 1, "mem": "1G", "gpus": 1}, {"cpus": 1, "mem": "1G"}]}' >"$dir/jg.json"
out=$("$COLONY_BIN/colony" place --policy first-fit --machines "$dir/mg.json" --jobs "$dir/jg.json")
grep -qx '  job 1 (1 CPUs, 1.0G, 2 GPUs) -> A' <<<"$out" && grep -qx '  job 2 (1 CPUs, 1.0G, 1 GPUs) -> not placed' <<<"$out" &&
        grep -qx '  job 3 (1 CPUs, 1.0G) -> A' <<<"$out" && grep -qx '  machine A: 2 CPUs, 30.0G and 0 GPUs free' <<<"$out" ||
        fail "colony place with GPUs printed: $out"
free=$("$COLONY_BIN/colony" place --json --policy first-fit --machines "$dir/mg.json" --jobs "$dir/jg.json" | jq -c '[.machines[].free_gpus]')
[ "$free" = "[0,0]" ] || fail "colony place --json: free_gpus $free, want [0,0]"
[ "$("$COLONY_BIN/colony" place --json --policy first-fit --machines "$dir/m.json" --jobs "$dir/fig3.json" | jq '.machines[0] | has("free_gpus")')" = false ] ||
        fail "colony place --json shows free_gpus on an instance without GPUs"
echo "# GPUs shown: the jobs' and the machines' free ones, and only where the instance has them"

# broken input: one line, exit 1 (bad file) or 2 (bad usage), nothing printed on stdout
echo '{"jobs": [{"cpus": -1, "mem": "1G"}]}' >"$dir/neg.json"
echo '{"jobs": [' >"$dir/trunc.json"
echo '{"machines": [{"cpus": 4, "mem": "32G", "free_cpus": 8}]}' >"$dir/over.json"
check_error() { # check_error CODE TEXT ARGS...
        local code=$1 want=$2 rc=0 out; shift 2
        out=$("$COLONY_BIN/colony" place "$@" 2>&1 >/dev/null) || rc=$?
        [ "$rc" = "$code" ] || fail "colony place $*: exit $rc, want $code"
        grep -q -- "$want" <<<"$out" || fail "colony place $*: '$out' lacks '$want'"
        [ "$(wc -l <<<"$out")" = 1 ] || fail "colony place $*: not one line: $out"
        echo "# $out"
}
check_error 1 "cpus" --policy first-fit --machines "$dir/m.json" --jobs "$dir/neg.json"
check_error 1 "not valid JSON" --policy first-fit --machines "$dir/m.json" --jobs "$dir/trunc.json"
check_error 1 "cannot exceed" --policy first-fit --machines "$dir/over.json" --jobs "$dir/fig3.json"
check_error 1 "No such file" --policy first-fit --machines "$dir/none.json" --jobs "$dir/fig3.json"
check_error 2 "unknown policy" --policy fastest --machines "$dir/m.json" --jobs "$dir/fig3.json"
check_error 2 "required" --policy first-fit --jobs "$dir/fig3.json"
echo PASS
