#!/usr/bin/env bash
# cli_start.sh - what starting `colony` costs, beside a baseline build measured in the same run:
# a `colony --version` loop (process start alone), a `colony submit` loop against a local
# cluster of the same build (one 1-CPU agent, jobs asking for the whole CPU: one runs, the
# rest wait), and a loop of /bin/true (the start of a small dynamically linked program: the
# floor), in ROUNDS rounds that alternate which build goes first; plus the shared libraries
# each build's colony loads. Root (colony up); prints JSON, medians of the rounds.
#
#   BASE_BIN=/path/to/baseline/bin COLONY_BIN=build/bin tests/bench/cli_start.sh [N [ROUNDS]]
set -euo pipefail
n=${1:-1000} rounds=${2:-3}
new=$(cd "${COLONY_BIN:?set COLONY_BIN to the bin directory of a build}" && pwd)
base=$(cd "${BASE_BIN:?set BASE_BIN to the bin directory of the baseline build}" && pwd)
command -v jq >/dev/null || { echo "jq is needed" >&2; exit 1; }
dir=$(mktemp -d /tmp/colony-cli-start-XXXXXX)
chmod 755 "$dir"
cleanup() {
        set +e
        "$base/colony" down --dir "$dir/base" >/dev/null 2>&1
        "$new/colony" down --dir "$dir/new" >/dev/null 2>&1
        rm -rf "$dir"
}
trap cleanup EXIT
log() { echo "cli_start.sh: $*" >&2; }
now() { date +%s.%N; }
rate() { awk -v n="$1" -v a="$2" -v b="$3" 'BEGIN { printf "%.1f", n / (b - a) }'; }
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# loop_rate CMD...: runs of CMD per second over n runs
loop_rate() {
        local t0 t1
        t0=$(now)
        for ((i = 0; i < n; i++)); do "$@" >/dev/null; done
        t1=$(now)
        rate "$n" "$t0" "$t1"
}
libs_json() { # libs_json BIN: what its colony needs and loads
        jq -n --argjson needed "$(readelf -d "$1/colony" | grep -c '(NEEDED)')" \
                --argjson loaded "$(ldd "$1/colony" | grep -c '=>')" '{needed: $needed, ldd_libraries: $loaded}'
}

for b in base new; do
        bin=${!b}
        "$bin/colony" up --dir "$dir/$b" --agents 1 --agent-cpus 1 --agent-mem 4G --name-prefix "$b-" >/dev/null
done
declare -A version submit
floor=()
for ((r = 0; r < rounds; r++)); do
        order="base new"
        [ $((r % 2)) = 1 ] && order="new base"
        for b in $order; do
                bin=${!b}
                log "round $((r + 1)): $b: $n colony --version, $n colony submit"
                version[$b]+="$(loop_rate "$bin/colony" --version) "
                submit[$b]+="$(COLONY_SOCKET=$dir/$b/controller.sock loop_rate "$bin/colony" submit --cpus 1 --mem 1M -- \
                        "$bin/colony-stress" sleep 600) "
        done
        floor+=("$(loop_rate /bin/true)")
done
pending=$(COLONY_SOCKET=$dir/new/controller.sock "$new/colony" queue --json | jq '[.jobs[] | select(.state == "pending")] | length')

# shellcheck disable=SC2086 # the lists are space-separated on purpose
jq -n --argjson n "$n" --argjson rounds "$rounds" --argjson cpus "$(nproc)" --arg load "$(cut -d' ' -f1-3 /proc/loadavg)" \
        --argjson bv "$(median ${version[base]})" --argjson nv "$(median ${version[new]})" \
        --argjson bs "$(median ${submit[base]})" --argjson ns "$(median ${submit[new]})" \
        --argjson floor "$(median "${floor[@]}")" --argjson pending "$pending" \
        --argjson blibs "$(libs_json "$base")" --argjson nlibs "$(libs_json "$new")" \
        --arg bvr "${version[base]}" --arg nvr "${version[new]}" --arg bsr "${submit[base]}" --arg nsr "${submit[new]}" '
def runs: [splits(" +") | select(. != "") | tonumber];
{n: $n, rounds: $rounds, host_cpus: $cpus, loadavg_at_end: $load, bin_true_per_s: $floor,
 baseline: {version_per_s: $bv, submit_per_s: $bs, version_runs: ($bvr | runs), submit_runs: ($bsr | runs), libraries: $blibs},
 colony: {version_per_s: $nv, submit_per_s: $ns, version_runs: ($nvr | runs), submit_runs: ($nsr | runs), libraries: $nlibs,
          pending_at_end: $pending},
 speedup: {version: ($nv / $bv), submit: ($ns / $bs)}}'
