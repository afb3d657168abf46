#!/usr/bin/env bash
# cpuset.sh - a threaded program in a --cpus 1 job on a 2-CPU agent whose other core is busy
# (a --cpus 1 job spinning beside it): its run time with cores of their own (the cpuset: the job
# on one core, the spinner on the other) against the CFS quota alone (colony up
# --agent-no-cpuset: the job's threads spread over both cores, beside the spinner, throttled to
# one CPU's worth per 100 ms). spin_threads does a fixed amount of work (THREADS x UNITS). Root
# (colony up); prints JSON: per mode the median of RUNS runs (default 5), the modes alternating,
# so that other load on the machine falls on both alike.
#
#   COLONY_BIN=build/bin tests/bench/cpuset.sh [THREADS [UNITS [RUNS]]]
set -euo pipefail
threads=${1:-4} units=${2:-400} runs=${3:-5}
bin=$(cd "${COLONY_BIN:?set COLONY_BIN to the bin directory of a build}" && pwd)
command -v jq >/dev/null || { echo "jq is needed" >&2; exit 1; }
[ "$(nproc)" -ge 2 ] || { echo "cpuset.sh: needs 2 CPUs" >&2; exit 1; }
dir=$(mktemp -d /tmp/colony-bench-cpuset-XXXXXX)
chmod 755 "$dir"
cleanup() {
        set +e
        "$bin/colony" down --dir "$dir/run" >/dev/null 2>&1
        rm -rf "$dir"
}
trap cleanup EXIT

# one MODE (cpuset or quota): one run on a fresh cluster; prints the job's run time in seconds.
one() {
        local run=$dir/run hog id
        mkdir -p "$run" && chmod 755 "$run" && cd "$run"
        export COLONY_SOCKET=$run/controller.sock
        "$bin/colony" up --dir "$run" --name-prefix "bcs$$-" --agent-cpus 2 --agent-mem 512M \
                $([ "$1" = quota ] && echo --agent-no-cpuset) >/dev/null
        hog=$("$bin/colony" submit --cpus 1 --mem 16M -- "$bin/colony-stress" cpu 600)
        for ((i = 0; i < 300; i++)); do
                [ "$("$bin/colony" show --json "$hog" | jq -r '.job.start_usec')" != 0 ] && break
                sleep 0.1
        done
        id=$("$bin/colony" submit --cpus 1 --mem 64M -- "$bin/spin_threads" "$threads" "$units")
        "$bin/colony" wait "$id" >/dev/null
        cat "$run/colony-$id.out"
        "$bin/colony" down --dir "$run" >/dev/null
        cd "$dir" && rm -rf "$run"
}

declare -A results
for ((r = 0; r < runs; r++)); do
        results[cpuset]+="$(one cpuset) "
        results[quota]+="$(one quota) "
done
figures() {
        echo "${results[$1]}" | jq -Rn '[inputs | split(" ")[] | select(. != "") | tonumber] as $r |
                {median_s: ($r | sort | .[length / 2 | floor]), runs_s: $r}'
}
jq -n --argjson threads "$threads" --argjson units "$units" --argjson runs "$runs" \
        --argjson cpuset "$(figures cpuset)" --argjson quota "$(figures quota)" \
        '{threads: $threads, units: $units, runs: $runs, cpuset: $cpuset, quota_only: $quota,
          quota_over_cpuset: (($quota.median_s / $cpuset.median_s) * 100 | round / 100)}'
