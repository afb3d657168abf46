#!/usr/bin/env bash
# agent_burst.sh - the agent's longest turn of its loop while it launches a burst of N jobs
# (default 200, one array of `true`) on a local one-agent cluster: the loop must never stall, or
# heartbeats stop and the controller loses every job on the host. The agent logs its longest
# turn (prepare and dispatch, not the wait) when it exits, with the CPU time that turn took, its
# wait for a CPU (the rest is the wait for the disk or a lock) and the most CPU time any turn
# took; builds from before that log give null. Root (colony up); prints JSON: per build,
# the median of RUNS runs (default 5), the builds' runs alternating, so that other load on the
# machine falls on both alike.
#
#   [BASE_BIN=/path/to/baseline/bin] COLONY_BIN=build/bin tests/bench/agent_burst.sh [N [RUNS]]
set -euo pipefail
n=${1:-200} runs=${2:-5}
new=$(cd "${COLONY_BIN:?set COLONY_BIN to the bin directory of a build}" && pwd)
base=${BASE_BIN:+$(cd "$BASE_BIN" && pwd)}
command -v jq >/dev/null || { echo "jq is needed" >&2; exit 1; }
dir=$(mktemp -d /tmp/colony-agent-burst-XXXXXX)
chmod 755 "$dir"
cleanup() {
        set +e
        for b in "$new" $base; do "$b/colony" down --dir "$dir/run" >/dev/null 2>&1; done
        rm -rf "$dir"
}
trap cleanup EXIT

# burst BIN: one run on a fresh cluster of BIN; prints "longest_turn_ms drain_s longest_turn_cpu_ms
# most_cpu_ms longest_turn_cpu_wait_ms" (null when the agent did not say).
burst() {
        local bin=$1 run=$dir/run left=$n start i longest cpu most wait
        mkdir -p "$run" && chmod 755 "$run" && cd "$run" # the jobs write their colony-<id>.out here
        export COLONY_SOCKET=$run/controller.sock
        "$bin/colony" up --dir "$run" --name-prefix "burst$$-" --agent-cpus "$n" --agent-mem "$((n * 16))M" >/dev/null
        "$bin/colony" submit --array "0-$((n - 1))" --cpus 1 --mem 16M -- /bin/true >/dev/null
        start=$(date +%s.%N)
        for ((i = 0; i < 1200 && left > 0; i++)); do
                left=$("$bin/colony" queue --all --json |
                        jq '[.jobs[] | select(.state == "pending" or .state == "running")] | length')
                [ "$left" = 0 ] || sleep 0.1
        done
        [ "$left" = 0 ] || { echo "agent_burst.sh: $left jobs not ended after 2 minutes" >&2; exit 1; }
        echo -n "$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.2f", e - s }') " >"$dir/drain"
        "$bin/colony" down --dir "$run" >/dev/null
        longest=$(sed -n 's/.*longest turn of the loop: \([0-9.]*\) ms.*/\1/p' "$run/burst$$-1.log" | tail -n 1)
        cpu=$(sed -n 's/.*longest turn of the loop: [0-9.]* ms, \([0-9.]*\) ms of CPU.*/\1/p' "$run/burst$$-1.log" | tail -n 1)
        wait=$(sed -n 's/.*of CPU, \([0-9.]*\) ms waiting for a CPU.*/\1/p' "$run/burst$$-1.log" | tail -n 1)
        most=$(sed -n 's/.*most CPU in one turn: \([0-9.]*\) ms.*/\1/p' "$run/burst$$-1.log" | tail -n 1)
        echo "${longest:-null} $(cat "$dir/drain")${cpu:-null} ${most:-null} ${wait:-null}"
        cd "$dir" && rm -rf "$run"
}

declare -A results
for ((r = 0; r < runs; r++)); do
        results[new]+="$(burst "$new")"$'\n'
        [ -z "$base" ] || results[base]+="$(burst "$base")"$'\n'
done
# figures KEY: {longest_turn_ms, drain_s, longest_turn_cpu_ms, most_cpu_ms,
# longest_turn_cpu_wait_ms} medians, and every run's longest turn
figures() {
        printf '%s' "${results[$1]}" | jq -Rn '[inputs | select(. != "") | split(" ") | map(fromjson? // null)] as $r |
                def median: sort | .[length / 2 | floor];
                def median_of($i): $r | map(.[$i]) | if any(. == null) then null else median end;
                {longest_turn_ms: median_of(0), drain_s: median_of(1), longest_turn_cpu_ms: median_of(2),
                 most_cpu_ms: median_of(3), longest_turn_cpu_wait_ms: median_of(4),
                 longest_turn_ms_runs: ($r | map(.[0]))}'
}
jq -n --argjson n "$n" --argjson runs "$runs" --argjson new "$(figures new)" \
        --argjson base "$([ -z "$base" ] && echo null || figures base)" \
        '{launches: $n, runs: $runs, new: $new, base: $base}'
