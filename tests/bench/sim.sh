#!/usr/bin/env bash
# sim.sh - the scheduling core at scale, through `colony sim`, each run beside the same run with
# --scan (the reference scan of every machine, what every pass did before the machine index),
# in the same session. Not part of ctest: it is long. Prints JSON.
#
#   COLONY_BIN=build/bin tests/bench/sim.sh
#
# Measured (environment: JOBS, default 100000; REPLAY_JOBS, default 1000000; POLICIES):
#   core    decisions per CPU second of each policy at 10,000 machines (lotes-phi:0.009, scale
#           1000, load 0.9, backfill), through the whole core: completed jobs / CPU time of the
#           process, set-up included; index and scan. POLICIES defaults to the fit family and
#           Mix-Fit; max-jobs (five scans per decision, not indexed) takes minutes at this size
#   replay  issue 5's replay: REPLAY_JOBS lotes-google jobs on 12,583 machines (scale 6732),
#           First-Fit, strict FIFO: wall and CPU seconds, peak memory (getrusage's maxrss, as
#           /usr/bin/time reports it); index and scan, and whether both runs printed the same
# Other load on the machine inflates the wall times, not the CPU times.
set -euo pipefail
bin=${COLONY_BIN:?set COLONY_BIN to the bin directory of a build}
command -v jq >/dev/null || { echo "jq is needed" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "/usr/bin/time is needed" >&2; exit 1; }
jobs=${JOBS:-100000} replay_jobs=${REPLAY_JOBS:-1000000}
policies=${POLICIES:-first-fit best-fit-cores best-fit-mem worst-fit-cores worst-fit-mem mix-fit}
out=$(mktemp -d /tmp/colony-sim-bench-XXXXXX)
trap 'rm -rf "$out"' EXIT

# timed NAME ARGS...: colony sim ARGS into $out/NAME.json, its times into $out/NAME.time
timed() {
        local name=$1
        shift
        /usr/bin/time -f '{"wall_s": %e, "user_s": %U, "sys_s": %S, "maxrss_kb": %M}' -o "$out/$name.time" \
                "$bin/colony" sim --json "$@" >"$out/$name.json"
}

# measure EXPERIMENT POLICY ENGINE ARGS...: one run, one JSON line in $out/runs
measure() {
        local experiment=$1 policy=$2 engine=$3 name="$1-$2-$3"
        shift 3
        timed "$name" "$@" --policy "$policy" $([ "$engine" = scan ] && echo --scan)
        jq -c --arg e "$experiment" --arg engine "$engine" --slurpfile t "$out/$name.time" \
                '{experiment: $e, policy, engine: $engine, machines, jobs, completed, passes: .scheduling_passes}
                 + $t[0] + {decisions_per_cpu_s: (.completed / ($t[0].user_s + $t[0].sys_s) | round)}' \
                "$out/$name.json" >>"$out/runs"
}

for p in $policies; do
        for engine in index scan; do
                measure core "$p" "$engine" --workload lotes-phi:0.009 --scale 1000 --jobs "$jobs" --load 0.9 --order backfill
        done
done
for engine in index scan; do
        measure replay first-fit "$engine" --workload lotes-google --scale 6732 --jobs "$replay_jobs"
done
same=$(cmp -s "$out/replay-first-fit-index.json" "$out/replay-first-fit-scan.json" && echo true || echo false)
jq -s --argjson same "$same" --arg cpus "$(nproc)" --arg load "$(cut -d' ' -f1-3 /proc/loadavg)" \
        '{bench: "sim", cpus: ($cpus | tonumber), loadavg: $load, replay_same_output: $same, runs: .}' "$out/runs"
