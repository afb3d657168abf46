#!/usr/bin/env bash
# sim_memory.sh - the simulator's memory per job (issue 22: 25,000,000 jobs in a few GiB):
# lotes-google replays on 12,583 machines (scale 6732, First-Fit, FIFO, load LOAD) of each size
# in SIZES, through this build and through a baseline build (BASE_BIN, e.g. main's from before
# the simulator freed the jobs that ended), in the same session. Not part of ctest: it is long.
# Prints JSON: per run, wall and CPU seconds and peak memory (getrusage's maxrss, as /usr/bin/time
# reports it); per build, the bytes one more job costs (the slope of peak memory from the
# smallest size to the largest, the fixed part apart) and peak memory extrapolated to
# 25,000,000 jobs along that slope; and whether both builds printed the same results.
#
#   COLONY_BIN=build/bin BASE_BIN=/tmp/main/build/bin tests/bench/sim_memory.sh
#
# Environment: SIZES (default "1000000 5000000", ascending), LOAD (default 0.8). The baseline
# needs about 630 bytes a job (3 GiB at 5,000,000). Other load on the machine inflates the wall
# times, not the memory.
set -euo pipefail
bin=${COLONY_BIN:?set COLONY_BIN to the bin directory of a build}
base=${BASE_BIN:?set BASE_BIN to the bin directory of the baseline build}
command -v jq >/dev/null || { echo "jq is needed" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "/usr/bin/time is needed" >&2; exit 1; }
sizes=${SIZES:-1000000 5000000} load=${LOAD:-0.8}
out=$(mktemp -d /tmp/colony-sim-memory-XXXXXX)
trap 'rm -rf "$out"' EXIT

# run BUILD DIR JOBS: one replay, its results in $out/BUILD-JOBS.json, one JSON line in $out/runs
run() {
        local build=$1 dir=$2 jobs=$3 name="$1-$3"
        /usr/bin/time -f '{"wall_s": %e, "user_s": %U, "sys_s": %S, "maxrss_kb": %M}' -o "$out/$name.time" \
                "$dir/colony" sim --json --workload lotes-google --scale 6732 --jobs "$jobs" --load "$load" \
                >"$out/$name.json"
        jq -c --arg build "$build" --slurpfile t "$out/$name.time" \
                '{build: $build, jobs, machines, completed} + $t[0]' "$out/$name.json" >>"$out/runs"
}

same=true
for jobs in $sizes; do
        run change "$bin" "$jobs"
        run baseline "$base" "$jobs"
        cmp -s "$out/change-$jobs.json" "$out/baseline-$jobs.json" || same=false
done
jq -s --argjson same "$same" --arg cpus "$(nproc)" --arg load "$(cut -d' ' -f1-3 /proc/loadavg)" '
        def per_build(b): [.[] | select(.build == b)] | (first) as $s | (last) as $l
                | (($l.maxrss_kb - $s.maxrss_kb) * 1024 / ($l.jobs - $s.jobs)) as $slope
                | {build: b, bytes_per_job: ($slope | round), bytes_per_job_peak_over_jobs: ($l.maxrss_kb * 1024 / $l.jobs | round),
                   gib_at_25m: (($l.maxrss_kb * 1024 + (25000000 - $l.jobs) * $slope) / 1073741824 * 100 | round / 100)};
        {bench: "sim_memory", cpus: ($cpus | tonumber), loadavg: $load, same_results: $same,
         builds: [per_build("change"), per_build("baseline")], runs: .}' "$out/runs"
