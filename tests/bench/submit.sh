#!/usr/bin/env bash
# submit.sh - how fast colony takes and runs jobs, beside Slurm measured in the same run.
#
#   COLONY_BIN=build/bin tests/bench/submit.sh [NJOBS]        (root; prints JSON on stdout)
#
# Like is compared with like:
#  * a process per submission: NJOBS `colony submit` from one shell loop, and the same from 8
#    concurrent loops, against Slurm's loop of `sbatch` (slurm-peer.sh submitonly) and 8
#    concurrent ones; a no-op `colony --version` loop is the process-start share of colony's
#    figure, and a static empty C program run from the same loop the ceiling of any such figure
#    on this machine (process_start_floor_per_s);
#  * a program submitting through the API, each submission waiting for its acknowledgement:
#    bench_submit (one connection per client) against slurm_submit (libslurm's
#    slurm_submit_batch_job, compiled here with cc), NJOBS from 1 client and from 8; colony's
#    twice: as configured by default (each commit fsynced) and with `sync_commits = no` (written
#    to the OS only: it survives a controller crash, not a power loss; skipped, null, when the
#    controller does not know the key). Each run starts on an empty queue, and nothing starts
#    while the clock runs: Slurm's jobs are submitted held, and colony's agent has its one CPU
#    taken by a job started before the clock (the first timed job would otherwise be launched
#    inside a window of 60 ms, its agent, shepherd and process taking 20 ms of CPU from the same
#    2 CPUs). Each figure is the median of API_REPEATS (5) runs, every run's rate kept beside
#    it: a colony run lasts 60 to 300 ms, in which this VM's noise is about 30%;
#  * acknowledged, then killed: PROBE_JOBS (20) submissions through the API loop, SIGKILL of the
#    controller (slurmctld) right after the last acknowledgement, a restart, and how many of the
#    acknowledged jobs exist afterwards (acked, recovered);
#  * many jobs from one command: `colony submit --array` (one request, its environment stored
#    once), BATCH jobs from 1 client and from 8 concurrent ones, against Slurm's
#    `sbatch --array` (one RPC makes an array job of up to 1000 tasks);
#  * 1000 trivial jobs (`true`, one CPU each, on a 2-CPU node on both sides) from the first
#    submission until the last has finished: colony through the process loop and through
#    --array, Slurm through its sbatch loop (slurm-peer.sh measure);
#  * controller memory: RSS growth while 100,000 jobs that cannot start are submitted.
# colony's submission runs use one 1-CPU agent and jobs asking for the whole CPU, so one runs
# and the rest wait: what is timed is the submission path (request, SQLite with fsync, reply).
# The agent is named bench<pid>-1, so that two runs at once never share its cgroups.
# Slurm: ../shared/tools/slurm-peer.sh (setup, start, submitonly, measure, stop) when it is
# there and SLURM=0 is not set; SCHED_PARAMS (default batch_sched_delay=0,sched_min_interval=0,
# the peer's tuned set-up: Slurm's defaults drain 3x slower) is passed to its set-up.
set -euo pipefail
njobs=${1:-1000}
batch=${BATCH:-20000}
drain_jobs=${DRAIN_JOBS:-1000}
mem_jobs=${MEM_JOBS:-100000}
probe_jobs=${PROBE_JOBS:-20}
api_repeats=${API_REPEATS:-5}
clients=8
bin=${COLONY_BIN:?set COLONY_BIN to the bin directory of a build}
bin=$(cd "$bin" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
peer=$(cd "$here/../../.." && pwd)/shared/tools/slurm-peer.sh
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
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
# gone PID: the process has ended (a zombie's sockets and files are closed too).
gone() {
        local stat
        read -r stat 2>/dev/null <"/proc/$1/stat" || return 0
        stat=${stat##*) }
        [ "${stat%% *}" = Z ]
}
kill_wait() { kill -9 "$1"; while ! gone "$1"; do sleep 0.01; done; }
# probe_json IDS: {acked, recovered}: the ids in the file IDS, and how many of them are among
# the ids on stdin.
probe_json() {
        local acked
        acked=$(wc -l <"$1")
        { grep -Fxc -f "$1" || true; } | jq -R --argjson acked "$acked" '{acked: $acked, recovered: tonumber}'
}
# loop_rate N CMD...: CMD run N times from one shell loop, in runs per second.
loop_rate() {
        local n=$1 i t0 t1
        shift
        t0=$(now); for ((i = 0; i < n; i++)); do "$@"; done; t1=$(now)
        rate "$n" "$t0" "$t1"
}
# loops_rate CMD...: the same from $clients concurrent loops of NJOBS/clients each, together.
loops_rate() {
        local c t0 t1
        t0=$(now)
        for ((c = 0; c < clients; c++)); do loop_rate $((njobs / clients)) "$@" >/dev/null & done
        wait
        t1=$(now)
        rate $((njobs / clients * clients)) "$t0" "$t1"
}

# A fresh cluster in $dir/c with one agent of $1 CPUs; extra arguments go to colony up.
cluster_up() {
        local cpus=$1
        shift
        "$bin/colony" down --dir "$dir/c" >/dev/null 2>&1 || true
        rm -rf "$dir/c"
        mkdir -p "$dir/c"
        "$bin/colony" up --dir "$dir/c" --agents 1 --agent-cpus "$cpus" --agent-mem 4G --name-prefix "bench$$-" "$@" >/dev/null || return
        export COLONY_SOCKET=$dir/c/controller.sock
        ctl=$(cat "$dir/c/controller.pid")
        cd "$dir/c"
}
unfinished() { "$bin/colony" queue --json | jq '.jobs | length'; }
# Until no job is pending or running. A poll that fails (a busy controller on a loaded machine)
# is retried, not read as "drained"; 50 failures in a row end the run.
wait_drained() {
        local n fails=0
        while :; do
                if n=$(unfinished 2>&1) && [[ $n =~ ^[0-9]+$ ]]; then
                        [ "$n" -gt 0 ] || return 0
                        fails=0
                elif ((++fails == 50)); then
                        log "colony queue keeps failing: $n"
                        exit 1
                fi
                sleep 0.1
        done
}
submit_one() { "$bin/colony" submit --cpus 1 --mem 1M -- "$bin/colony-stress" sleep 600 >/dev/null; }
noop_one() { "$bin/colony" --version >/dev/null; }
submit_array() { "$bin/colony" submit --cpus 1 --mem 1M --array "0-$(($1 - 1))" -- "$bin/colony-stress" sleep 600 >/dev/null; }
# api CLIENTS JOBS_EACH [bench_submit options]: the API loop's JSON line, on the cluster up now.
api() {
        local n=$1 m=$2
        shift 2
        "$bin/bench_submit" --socket "$COLONY_SOCKET" --clients "$n" --jobs "$m" "$@" --cpus 1 --mem 1M \
                -- "$bin/colony-stress" sleep 600
}
# median_of CMD...: CMD, printing one JSON line, run API_REPEATS times; the median run (by
# jobs_per_s), with every run's rate in order.
median_of() {
        local r
        for ((r = 0; r < api_repeats; r++)); do "$@" || return; done |
                jq -s 'map(.jobs_per_s) as $all | sort_by(.jobs_per_s) | .[length / 2 | floor] + {runs_jobs_per_s: $all}'
}
# One job takes the agent's only CPU and is running before the clock starts: the timed jobs,
# asking for the same CPU, all wait, and nothing is launched while the clock runs.
occupy() {
        submit_one
        until [ "$("$bin/colony" queue --json | jq '[.jobs[] | select(.state == "running")] | length')" = 1 ]; do
                sleep 0.05
        done
}
# api_fresh CLIENTS JOBS_EACH [colony up options]: api on a fresh 1-CPU cluster with its CPU taken.
api_fresh() {
        local n=$1 m=$2
        shift 2
        cluster_up 1 "$@" >&2 || return
        occupy
        api "$n" "$m"
}
# api_pair [colony up options]: {api_1_client, api_8_clients}, each median_of api_fresh.
api_pair() {
        local one eight
        one=$(median_of api_fresh 1 "$njobs" "$@")
        eight=$(median_of api_fresh "$clients" $((njobs / clients)) "$@")
        jq -n --argjson one "$one" --argjson eight "$eight" '{api_1_client: $one, api_8_clients: $eight}'
}
# kill_probe [colony up options]: {acked, recovered} after PROBE_JOBS acknowledged submissions,
# a SIGKILL of the controller and its restart (same command line, on the port the agent knows);
# null when the restarted controller does not answer.
kill_probe() {
        local port i cmd=()
        cluster_up 1 "$@"
        port=$(cat "$dir/c/controller.port")
        mapfile -d '' -t cmd <"/proc/$ctl/cmdline"
        cmd=("${cmd[@]/127.0.0.1:0/127.0.0.1:$port}")
        api 1 "$probe_jobs" --ids "$dir/acked" >/dev/null
        kill_wait "$ctl"
        ("${cmd[@]}" >>"$dir/c/controller.log" 2>&1 & echo $! >"$dir/c/controller.pid")
        ctl=$(cat "$dir/c/controller.pid")
        for ((i = 0; i < 100; i++)); do "$bin/colony" nodes >/dev/null 2>&1 && break; sleep 0.1; done
        "$bin/colony" queue --all --json >"$dir/after" || { echo null; return; }
        jq '.jobs[].id' "$dir/after" | probe_json "$dir/acked"
}

# ---- colony: submissions ----
cluster_up 1
log "colony: $njobs submissions, a process each, 1 client"
loop1=$(loop_rate "$njobs" submit_one)
log "colony: the same from $clients clients"
loop8=$(loops_rate submit_one)
noop=$(loop_rate "$njobs" noop_one)
printf 'int main(void) { return 0; }\n' >"$dir/empty.c"
cc -O2 -static -o "$dir/empty" "$dir/empty.c"
floor=$(loop_rate "$njobs" "$dir/empty")
log "colony: --array $batch from 1 client, then from $clients"
t0=$(now); submit_array "$batch"; t1=$(now)
batch1=$(rate "$batch" "$t0" "$t1")
t0=$(now)
for ((c = 0; c < clients; c++)); do submit_array $((batch / clients)) & done
wait
t1=$(now)
batch8=$(rate $((batch / clients * clients)) "$t0" "$t1")
pending_end=$("$bin/colony" queue --json | jq '[.jobs[] | select(.state == "pending")] | length')

# ---- colony: through the API, fsynced commits and not ----
log "colony: API loop, $njobs submissions from 1 client, then from $clients"
api_sync=$(api_pair)
probe_sync=$(kill_probe)
printf '[controller]\nsync_commits = no\n' >"$dir/nosync.conf"
api_nosync=null
probe_nosync=null
if cluster_up 1 --controller-config "$dir/nosync.conf" 2>"$dir/nosync.err"; then
        log "colony: the same with sync_commits = no"
        api_nosync=$(api_pair --controller-config "$dir/nosync.conf")
        probe_nosync=$(kill_probe --controller-config "$dir/nosync.conf")
else
        log "colony: the controller refuses sync_commits = no, skipped: $(tail -n 1 "$dir/nosync.err" | sed "s/^ *//")"
fi

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
"$bin/colony" submit --cpus 1 --mem 16M --array "0-$((drain_jobs - 1))" -- true >/dev/null
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
sbatch_one() { sbatch -H -Q --wrap=true -o /dev/null >/dev/null; }
slurm_empty() {
        scancel -u root
        while [ "$(squeue -h -o %i | wc -l)" -gt 0 ]; do sleep 0.5; done
}
# slurm_api_once CLIENTS JOBS_EACH: slurm_submit's JSON line; the queue is emptied after it.
slurm_api_once() {
        "$dir/slurm_submit" --clients "$1" --jobs "$2"
        slurm_empty
}
# slurm_api CLIENTS JOBS_EACH: median_of slurm_api_once.
slurm_api() { median_of slurm_api_once "$@"; }
# slurm_probe: kill_probe's counterpart, or null when slurmctld does not come back.
# slurm-peer.sh start restarts the slurmctld killed (it started it, from this script). Its pid
# file goes first: the killed daemon may stay a zombie for minutes (it is not our child, and
# not every init reaps at once), which the peer's kill -0 would take for alive. Only pending
# jobs named as slurm_submit names them count: the restart's own `srun true` may be given a
# lost job's id.
slurm_probe() {
        slurm_empty
        "$dir/slurm_submit" --clients 1 --jobs "$probe_jobs" --ids "$dir/slurm_acked" >/dev/null
        kill_wait "$(cat /run/slurm-peer/slurmctld.pid)"
        rm -f /run/slurm-peer/slurmctld.pid
        "$peer" start >&2 || { echo null; return; }
        squeue -h -t PD -n bench -o %i | probe_json "$dir/slurm_acked"
}
slurm=null
if [ "${SLURM:-1}" != 0 ] && [ -x "$peer" ]; then
        log "slurm: set-up (SchedulerParameters=$SCHED_PARAMS)"
        if "$peer" setup >&2 && { slurm_started=1; "$peer" start >&2; }; then
                log "slurm: $njobs sbatch, a process each"
                loop=$("$peer" submitonly 1 "$njobs" 2>/dev/null | tail -n 1)
                log "slurm: the same from $clients clients"
                sbatch8=$(loops_rate sbatch_one)
                slurm_empty
                log "slurm: API loop, $njobs submissions from 1 client, then from $clients"
                [ -f /usr/include/slurm/slurm.h ] || apt-get install -y libslurm-dev >&2
                cc -O2 -o "$dir/slurm_submit" "$here/slurm_submit.c" "$here/submit_loop.c" -lslurm -lm
                sapi1=$(slurm_api 1 "$njobs")
                sapi8=$(slurm_api "$clients" $((njobs / clients)))
                log "slurm: sbatch --array, $batch tasks in arrays of 1000"
                t0=$(now)
                for ((i = 0; i < batch / 1000; i++)); do
                        sbatch -H -Q --array=0-999 --wrap=true -o /dev/null >/dev/null
                done
                t1=$(now)
                array=$(rate $((batch / 1000 * 1000)) "$t0" "$t1")
                slurm_empty
                log "slurm: $drain_jobs true jobs, sbatch each, until all have ended (minutes)"
                drain=$("$peer" measure 1 "$drain_jobs" 1 2>/dev/null | tail -n 1)
                log "slurm: $probe_jobs acknowledged submissions, then SIGKILL of slurmctld and a restart"
                sprobe=$(slurm_probe)
                slurm=$(jq -n --argjson loop "$loop" --argjson drain "$drain" --arg sp "$SCHED_PARAMS" \
                        --argjson array "$array" --argjson sbatch8 "$sbatch8" --argjson api1 "$sapi1" \
                        --argjson api8 "$sapi8" --argjson probe "$sprobe" '{sbatch_loop: $loop,
                        sbatch_loop_jobs_per_s_8_clients: $sbatch8, api_1_client: $api1, api_8_clients: $api8,
                        sbatch_array_tasks_per_s: $array, drain: $drain, kill_probe: $probe,
                        scheduler_parameters: $sp}')
        fi
        "$peer" stop >&2 || true
        slurm_started=0
fi

jq -n --argjson njobs "$njobs" --argjson batch "$batch" --argjson clients "$clients" \
        --argjson drain_jobs "$drain_jobs" --argjson cpus "$(nproc)" --arg load "$(cut -d' ' -f1-3 /proc/loadavg)" \
        --arg load0 "$load_start" --argjson floor "$floor" --argjson probe_jobs "$probe_jobs" --argjson repeats "$api_repeats" \
        --argjson api "$api_sync" --argjson api_nosync "$api_nosync" \
        --argjson probe "$probe_sync" --argjson probe_nosync "$probe_nosync" \
        --argjson loop1 "$loop1" --argjson loop8 "$loop8" --argjson noop "$noop" \
        --argjson batch1 "$batch1" --argjson batch8 "$batch8" --argjson pending_end "$pending_end" \
        --argjson drain_loop "$drain_loop" --argjson drain_array "$drain_array" --argjson completed "$completed" \
        --argjson mem_pending "$mem_pending" --argjson rss0 "$rss0" --argjson rss1 "$rss1" --argjson per_100k "$per_100k" \
        --argjson slurm "$slurm" '
{njobs: $njobs, batch: $batch, clients: $clients, drain_jobs: $drain_jobs, probe_jobs: $probe_jobs, api_repeats: $repeats,
 host_cpus: $cpus, loadavg_at_start: $load0, loadavg_at_end: $load, process_start_floor_per_s: $floor,
 colony: {process_loop_jobs_per_s_1_client: $loop1, process_loop_jobs_per_s_8_clients: $loop8,
          cli_noop_per_s: $noop, api_1_client: $api.api_1_client, api_8_clients: $api.api_8_clients,
          api_1_client_nosync: $api_nosync.api_1_client, api_8_clients_nosync: $api_nosync.api_8_clients,
          kill_probe: $probe, kill_probe_nosync: $probe_nosync, array_jobs_per_s_1_client: $batch1, array_jobs_per_s_8_clients: $batch8,
          pending_at_end: $pending_end, drain_s_process_loop: $drain_loop, drain_s_array: $drain_array,
          drain_completed: $completed, pending_for_memory: $mem_pending, controller_rss_kib_before: $rss0,
          controller_rss_kib_after: $rss1, controller_mib_per_100k_pending: $per_100k},
 slurm: $slurm}
| if .slurm then .vs_slurm = {
    process_loop: (.colony.process_loop_jobs_per_s_1_client / (.slurm.sbatch_loop.held_submit_jobs_per_s | max)),
    process_loop_8_clients: (.colony.process_loop_jobs_per_s_8_clients / .slurm.sbatch_loop_jobs_per_s_8_clients),
    api_1_client: (.colony.api_1_client.jobs_per_s / .slurm.api_1_client.jobs_per_s),
    api_8_clients: (.colony.api_8_clients.jobs_per_s / .slurm.api_8_clients.jobs_per_s),
    api_1_client_nosync: (if .colony.api_1_client_nosync then .colony.api_1_client_nosync.jobs_per_s / .slurm.api_1_client.jobs_per_s else null end),
    api_8_clients_nosync: (if .colony.api_8_clients_nosync then .colony.api_8_clients_nosync.jobs_per_s / .slurm.api_8_clients.jobs_per_s else null end),
    array: (.colony.array_jobs_per_s_1_client / .slurm.sbatch_array_tasks_per_s),
    drain: ((.slurm.drain.drain_s | min) / .colony.drain_s_process_loop)} else . end'
