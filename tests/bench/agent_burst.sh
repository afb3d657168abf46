#!/usr/bin/env bash
# agent_burst.sh - the agent's longest turn of its loop while it launches a burst of N jobs
# (default 200, one array of `true`) on a local one-agent cluster: the loop must never stall, or
# heartbeats stop and the controller loses every job on the host. The agent logs its longest
# turn (prepare and dispatch, not the wait) when it exits. Root (colony up); prints JSON.
#
#   COLONY_BIN=build/bin tests/bench/agent_burst.sh [N]
set -euo pipefail
n=${1:-200}
bin=$(cd "${COLONY_BIN:?set COLONY_BIN to the bin directory of a build}" && pwd)
command -v jq >/dev/null || { echo "jq is needed" >&2; exit 1; }
dir=$(mktemp -d /tmp/colony-agent-burst-XXXXXX)
chmod 755 "$dir"
export COLONY_SOCKET=$dir/controller.sock
cleanup() {
        set +e
        "$bin/colony" down --dir "$dir" >/dev/null 2>&1
        rm -rf "$dir"
}
trap cleanup EXIT
cd "$dir" # the jobs write their colony-<id>.out here

"$bin/colony" up --dir "$dir" --name-prefix "burst$$-" --agent-cpus "$n" --agent-mem "$((n * 16))M" >/dev/null
first=$("$bin/colony" submit --array "$n" --cpus 1 --mem 16M -- /bin/true | head -n 1)
start=$(date +%s.%N)
left=$n
for ((i = 0; i < 1200 && left > 0; i++)); do
        left=$("$bin/colony" queue --all --json | jq '[.jobs[] | select(.state == "pending" or .state == "running")] | length')
        [ "$left" = 0 ] || sleep 0.1
done
[ "$left" = 0 ] || { echo "agent_burst.sh: $left jobs still not ended after 2 minutes" >&2; exit 1; }
drain=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.2f", e - s }')
completed=$("$bin/colony" queue --all --json | jq '[.jobs[] | select(.state == "completed")] | length')
"$bin/colony" down --dir "$dir" >/dev/null
longest=$(sed -n 's/.*longest turn of the loop: \([0-9.]*\) ms.*/\1/p' "$dir/burst$$-1.log" | tail -n 1)
jq -n --argjson n "$n" --argjson completed "$completed" --argjson drain "$drain" --argjson longest "${longest:-null}" \
        --argjson first "$first" '{launches: $n, first_id: $first, completed: $completed, drain_s: $drain,
        agent_longest_turn_ms: $longest}'
