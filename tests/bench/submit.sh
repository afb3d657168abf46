#!/usr/bin/env bash
# submit.sh - how fast colony takes and runs jobs, beside Slurm measured in the same run.
#
#   COLONY_BIN=build/bin tests/bench/submit.sh [NJOBS]        (root; prints JSON on stdout)
#
# Like is compared with like:
#  * a process per submission: NJOBS `colony submit` from one shell loop, and the same from 8
#    concurrent loops, against Slurm's loop of `sbatch` (slurm-peer.sh submitonly); a no-op
#    `colony --version` loop is the process-start share of colony's figure;
#  * many jobs from one command: `colony submit --array` (one request, its environment stored
#    once), BATCH jobs from 1 client and from 8 concurrent ones, against Slurm's
#    `sbatch --array` (one RPC makes an array job of up to 1000 tasks);
#  * 1000 trivial jobs (`true`, one CPU each, on a 2-CPU node on both sides) from the first
#    submission until the last has finished: colony through the process loop and through
#    --array, Slurm through its sbatch loop (slurm-peer.sh measure);
#  * controller memory: RSS growth while 100,000 jobs that cannot start are submitted.
# colony's submission runs use one 1-CPU agent and jobs asking for the whole CPU, so one runs
# and the rest wait: what is timed is the submission path (request, SQLite with fsync, reply).
# Slurm: ../shared/tools/slurm-peer.sh (setup, start, submitonly, measure, stop) when it is
# there and SLURM=0 is not set; SCHED_PARAMS (default batch_sched_delay=0,sched_min_interval=0,
# the peer's tuned set-up: Slurm's defaults drain 3x slower) is passed to its set-up.
set -euo pipefail
njobs=${1:-1000}
batch=${BATCH:-20000}
drain_jobs=${DRAIN_JOBS:-1000}
mem_jobs=${MEM_JOBS:-100000}
clients=8
bin=${COLONY_BIN:?set COLONY_BIN to the bin directory of a build}
bin=$(cd "$bin" && pwd)
peer=$(cd "$(dirname "$0")/../../.." && pwd)/shared/tools/slurm-peer.sh
export SCHED_PARAMS=${SCHED_PARAMS-batch_sched_delay=0,sched_min_interval=0}
dir=$(mktemp -d /tmp/colony-bench-XXXXXX)
chmod 755 "$dir"
slurm_started=0
cleanup() {
        set +e
        "$bin/colony" down --dir "$dir/c" >/dev/null 2>&1
        [ "$slurm_started" = 1 ] && "$peer" stop >/dev/null 2>&1
        rm -rf "$dir"
}
trap cleanup EXIT

now() { date +%s.%N; }
rate() { awk -v n="$1" -v a="$2" -v b="$3" 'BEGIN { printf "%.1f", n / (b - a) }'; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
rss_kib() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status"; }
log() { echo "submit.sh: $*" >&2; }

# A fresh cluster in $dir/c with one agent of $1 CPUs; extra arguments go to colony up.
cluster_up() {
        local cpus=$1
        shift
        "$bin/colony" down --dir "$dir/c" >/dev/null 2>&1 || true
        rm -rf "$dir/c"
        mkdir -p "$dir/c"
        "$bin/colony" up --dir "$dir/c" --agents 1 --agent-cpus "$cpus" --agent-mem 4G --name-prefix bench- "$@" >/dev/null
        export COLONY_SOCKET=$dir/c/controller.sock
        ctl=$(cat "$dir/c/controller.pid")
        cd "$dir/c"
}
unfinished() { "$bin/colony" queue --json | jq '.jobs | length'; }
wait_drained() { while [ "$(unfinished)" -gt 0 ]; do sleep 0.1; done; }
submit_one() { "$bin/colony" submit --cpus 1 --mem 1M -- "$bin/colony-stress" sleep 600 >/dev/null; }
submit_array() { "$bin/colony" submit --cpus 1 --mem 1M --array "$1" -- "$bin/colony-stress" sleep 600 >/dev/null; }

# ---- colony: submissions ----
cluster_up 1
log "colony: $njobs submissions, a process each, 1 client"
t0=$(now); for ((i = 0; i < njobs; i++)); do submit_one; done; t1=$(now)
loop1=$(rate "$njobs" "$t0" "$t1")
log "colony: the same from $clients clients"
t0=$(now)
for ((c = 0; c < clients; c++)); do
        { for ((i = 0; i < njobs / clients; i++)); do submit_one; done; } &
done
wait
t1=$(now)
loop8=$(rate $((njobs / clients * clients)) "$t0" "$t1")
t0=$(now); for ((i = 0; i < njobs; i++)); do "$bin/colony" --version >/dev/null; done; t1=$(now)
noop=$(rate "$njobs" "$t0" "$t1")
log "colony: --array $batch from 1 client, then from $clients"
t0=$(now); submit_array "$batch"; t1=$(now)
batch1=$(rate "$batch" "$t0" "$t1")
t0=$(now)
for ((c = 0; c < clients; c++)); do submit_array $((batch / clients)) & done
wait
t1=$(now)
batch8=$(rate $((batch / clients * clients)) "$t0" "$t1")
pending_end=$("$bin/colony" queue --json | jq '[.jobs[] | select(.state == "pending")] | length')

# ---- colony: 1000 trivial jobs on a 2-CPU node, first submission to last end ----
cluster_up 2
log "colony: $drain_jobs true jobs, a process each, until all have ended"
t0=$(now)
for ((i = 0; i < drain_jobs; i++)); do "$bin/colony" submit --cpus 1 --mem 16M -- true >/dev/null; done
wait_drained
t1=$(now)
drain_loop=$(elapsed "$t0" "$t1")
log "colony: $drain_jobs true jobs through --array, until all have ended"
t0=$(now)
"$bin/colony" submit --cpus 1 --mem 16M --array "$drain_jobs" -- true >/dev/null
wait_drained
t1=$(now)
drain_array=$(elapsed "$t0" "$t1")
completed=$("$bin/colony" history --json --state completed --limit 10000 | jq '.jobs | length')

# ---- colony: controller memory per 100,000 pending jobs ----
printf '[controller]\nmax_pending = %d\n' $((mem_jobs + 10)) >"$dir/controller.conf"
cluster_up 1 --controller-config "$dir/controller.conf"
log "colony: memory of $mem_jobs pending jobs"
rss0=$(rss_kib "$ctl")
submit_array "$mem_jobs"
rss1=$(rss_kib "$ctl")
mem_pending=$("$bin/colony" queue --json | jq '[.jobs[] | select(.state == "pending")] | length')
per_100k=$(awk -v a="$rss0" -v b="$rss1" -v n="$mem_pending" 'BEGIN { printf "%.1f", (b - a) / n * 100000 / 1024 }')
"$bin/colony" down --dir "$dir/c" >/dev/null
cd "$dir"

# ---- Slurm ----
slurm=null
if [ "${SLURM:-1}" != 0 ] && [ -x "$peer" ]; then
        log "slurm: set-up (SchedulerParameters=$SCHED_PARAMS)"
        if "$peer" setup >&2 && { slurm_started=1; "$peer" start >&2; }; then
                log "slurm: $njobs sbatch, a process each"
                loop=$("$peer" submitonly 1 "$njobs" 2>/dev/null | tail -n 1)
                log "slurm: sbatch --array, $batch tasks in arrays of 1000"
                t0=$(now)
                for ((i = 0; i < batch / 1000; i++)); do
                        sbatch -H -Q --array=0-999 --wrap=true -o /dev/null >/dev/null
                done
                t1=$(now)
                array=$(rate $((batch / 1000 * 1000)) "$t0" "$t1")
                scancel -u root
                while [ "$(squeue -h -o %i | wc -l)" -gt 0 ]; do sleep 0.5; done
                log "slurm: $drain_jobs true jobs, sbatch each, until all have ended (minutes)"
                drain=$("$peer" measure 1 "$drain_jobs" 1 2>/dev/null | tail -n 1)
                slurm=$(jq -n --argjson loop "$loop" --argjson drain "$drain" --arg sp "$SCHED_PARAMS" \
                        --argjson array "$array" '{sbatch_loop: $loop, sbatch_array_tasks_per_s: $array,
                        drain: $drain, scheduler_parameters: $sp}')
        fi
        "$peer" stop >&2 || true
        slurm_started=0
fi

jq -n --argjson njobs "$njobs" --argjson batch "$batch" --argjson clients "$clients" \
        --argjson drain_jobs "$drain_jobs" --argjson cpus "$(nproc)" --arg load "$(cut -d' ' -f1-3 /proc/loadavg)" \
        --argjson loop1 "$loop1" --argjson loop8 "$loop8" --argjson noop "$noop" \
        --argjson batch1 "$batch1" --argjson batch8 "$batch8" --argjson pending_end "$pending_end" \
        --argjson drain_loop "$drain_loop" --argjson drain_array "$drain_array" --argjson completed "$completed" \
        --argjson mem_pending "$mem_pending" --argjson rss0 "$rss0" --argjson rss1 "$rss1" --argjson per_100k "$per_100k" \
        --argjson slurm "$slurm" '
{njobs: $njobs, batch: $batch, clients: $clients, drain_jobs: $drain_jobs, host_cpus: $cpus, loadavg_at_end: $load,
 colony: {process_loop_jobs_per_s_1_client: $loop1, process_loop_jobs_per_s_8_clients: $loop8,
          cli_noop_per_s: $noop, array_jobs_per_s_1_client: $batch1, array_jobs_per_s_8_clients: $batch8,
          pending_at_end: $pending_end, drain_s_process_loop: $drain_loop, drain_s_array: $drain_array,
          drain_completed: $completed, pending_for_memory: $mem_pending, controller_rss_kib_before: $rss0,
          controller_rss_kib_after: $rss1, controller_mib_per_100k_pending: $per_100k},
 slurm: $slurm}
| if .slurm then .vs_slurm = {
    process_loop: (.colony.process_loop_jobs_per_s_1_client / (.slurm.sbatch_loop.held_submit_jobs_per_s | max)),
    array: (.colony.array_jobs_per_s_1_client / .slurm.sbatch_array_tasks_per_s),
    drain: ((.slurm.drain.drain_s | min) / .colony.drain_s_process_loop)} else . end'
