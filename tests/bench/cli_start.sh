#!/usr/bin/env bash
# cli_start.sh - what starting `colony` costs, beside a baseline build measured in the same run:
# a `colony --version` loop (process start alone), a `colony submit` loop against a local
# cluster of the same build (one 1-CPU agent, jobs asking for the whole CPU: one runs, the
# rest wait), and a loop of /bin/true (a small dynamically linked program: the floor); plus
# the shared libraries each build's colony needs and loads. Root (colony up); prints JSON.
#
#   BASE_BIN=/path/to/baseline/bin COLONY_BIN=build/bin tests/bench/cli_start.sh [N [CHUNK]]
#
# Each loop runs N times in chunks of CHUNK (default 100), the builds' chunks alternating, so
# that other load on the machine falls on both alike. Per build and loop: runs per second of
# wall time, and the CPU time (user + system) of each run, which other load inflates less.
set -euo pipefail
n=${1:-1000} chunk=${2:-100}
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
cd "$dir" # the running jobs write their colony-<id>.out here
log() { echo "cli_start.sh: $*" >&2; }

TIMEFORMAT='%R %U %S'
declare -A wall cpu
# chunk_of KEY CMD...: CHUNK runs of CMD, their wall and CPU seconds added to KEY's
chunk_of() {
        local key=$1 t
        shift
        t=$( { time for ((i = 0; i < chunk; i++)); do "$@" >/dev/null 2>&1; done; } 2>&1)
        wall[$key]=$(awk -v a="${wall[$key]:-0}" -v t="$t" 'BEGIN { split(t, f, " "); print a + f[1] }')
        cpu[$key]=$(awk -v a="${cpu[$key]:-0}" -v t="$t" 'BEGIN { split(t, f, " "); print a + f[2] + f[3] }')
}
figures() { # figures KEY: {per_s, cpu_ms} of KEY's n runs
        jq -n --argjson n "$n" --argjson w "${wall[$1]}" --argjson c "${cpu[$1]}" \
                '{per_s: ($n / $w * 10 | round / 10), cpu_ms: ($c / $n * 1000 * 100 | round / 100)}'
}
libs() { # libs BIN: what its colony needs (NEEDED entries) and loads (ldd)
        jq -n --argjson needed "$(readelf -d "$1/colony" | grep -c '(NEEDED)')" \
                --argjson loaded "$(ldd "$1/colony" | grep -c '=>')" '{needed: $needed, ldd_libraries: $loaded}'
}

for b in base new; do
        "${!b}/colony" up --dir "$dir/$b" --agents 1 --agent-cpus 1 --agent-mem 4G --name-prefix "$b-" >/dev/null
done
log "$n runs of each loop, in chunks of $chunk"
for ((k = 0; k < n; k += chunk)); do
        for b in base new; do
                bin=${!b}
                chunk_of "$b-version" "$bin/colony" --version
                COLONY_SOCKET=$dir/$b/controller.sock chunk_of "$b-submit" "$bin/colony" submit --cpus 1 --mem 1M -- \
                        "$bin/colony-stress" sleep 600
        done
        chunk_of true /bin/true
done
pending=$(COLONY_SOCKET=$dir/new/controller.sock "$new/colony" queue --json | jq '[.jobs[] | select(.state == "pending")] | length')

jq -n --argjson n "$n" --argjson chunk "$chunk" --argjson cpus "$(nproc)" --arg load "$(cut -d' ' -f1-3 /proc/loadavg)" \
        --argjson bv "$(figures base-version)" --argjson nv "$(figures new-version)" \
        --argjson bs "$(figures base-submit)" --argjson ns "$(figures new-submit)" --argjson floor "$(figures true)" \
        --argjson blibs "$(libs "$base")" --argjson nlibs "$(libs "$new")" --argjson pending "$pending" '
{n: $n, chunk: $chunk, host_cpus: $cpus, loadavg_at_end: $load, bin_true: $floor,
 baseline: {version: $bv, submit: $bs, libraries: $blibs},
 colony: {version: $nv, submit: $ns, libraries: $nlibs, pending_at_end: $pending},
 colony_vs_baseline: {version_per_s: ($nv.per_s / $bv.per_s), submit_per_s: ($ns.per_s / $bs.per_s),
                      version_cpu: ($nv.cpu_ms / $bv.cpu_ms), submit_cpu: ($ns.cpu_ms / $bs.cpu_ms)}}'
