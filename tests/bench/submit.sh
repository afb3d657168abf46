#!/usr/bin/env bash
# submit.sh - how fast colony takes submissions, beside Slurm measured in the same run.
#
#   COLONY_BIN=build/bin tests/bench/submit.sh [NJOBS]        (root; prints JSON on stdout)
#
# colony: one local controller and one 1-CPU agent; every job asks for the whole CPU, so one
# runs and the rest stay pending, and what is timed is the submission path (CLI start, request,
# SQLite write with fsync, reply). Measured: NJOBS sequential submissions from one client, the
# same from 8 concurrent clients, a no-op `colony --version` loop (the process-start baseline
# inside those figures), and the controller's memory per pending job.
# Slurm: ../shared/tools/slurm-peer.sh (setup, start, submitonly, stop), when it is there and
# SLURM=0 is not set; sbatch of held jobs is the same measurement on its side.
set -euo pipefail
njobs=${1:-500}
clients=8
bin=${COLONY_BIN:?set COLONY_BIN to the bin directory of a build}
peer=$(cd "$(dirname "$0")/../../.." && pwd)/shared/tools/slurm-peer.sh
dir=$(mktemp -d /tmp/colony-bench-XXXXXX)
chmod 755 "$dir"
cleanup() { "$bin/colony" down --dir "$dir" >/dev/null 2>&1 || true; rm -rf "$dir"; }
trap cleanup EXIT

now() { date +%s.%N; }
rate() { awk -v n="$1" -v a="$2" -v b="$3" 'BEGIN { printf "%.1f", n / (b - a) }'; }
rss_kib() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status"; }

"$bin/colony" up --dir "$dir" --agents 1 --agent-cpus 1 --agent-mem 1G --name-prefix bench- >/dev/null
export COLONY_SOCKET=$dir/controller.sock
ctl=$(cat "$dir/controller.pid")
cd "$dir"
submit() { "$bin/colony" submit --cpus 1 --mem 1M -- "$bin/colony-stress" sleep 600 >/dev/null; }

rss0=$(rss_kib "$ctl")
t0=$(now); for ((i = 0; i < njobs; i++)); do submit; done; t1=$(now)
seq_rate=$(rate "$njobs" "$t0" "$t1")
rss1=$(rss_kib "$ctl")

t0=$(now)
for ((c = 0; c < clients; c++)); do
        { for ((i = 0; i < njobs / clients; i++)); do submit; done; } &
done
wait
t1=$(now)
total=$((njobs / clients * clients))
par_rate=$(rate "$total" "$t0" "$t1")

t0=$(now); for ((i = 0; i < njobs; i++)); do "$bin/colony" --version >/dev/null; done; t1=$(now)
noop_rate=$(rate "$njobs" "$t0" "$t1")
pending_filter='[.jobs[] | select(.state == "pending")] | length'
pending=$("$bin/colony" queue --json | jq "$pending_filter")
per_100k=$(awk -v a="$rss0" -v b="$rss1" -v n="$njobs" 'BEGIN { printf "%.0f", (b - a) / n * 100000 / 1024 }')
"$bin/colony" down --dir "$dir" >/dev/null

slurm=null
if [ "${SLURM:-1}" != 0 ] && [ -x "$peer" ]; then
        "$peer" setup >/dev/null 2>&1 && "$peer" start >/dev/null 2>&1 &&
                slurm=$("$peer" submitonly 1 "$njobs" 2>/dev/null | tail -n 1) || slurm=null
        "$peer" stop >/dev/null 2>&1 || true
        [ -n "$slurm" ] || slurm=null
fi

printf '{"njobs":%s,"clients":%s,"colony":{"submit_jobs_per_s_1_client":%s,"submit_jobs_per_s_%s_clients":%s,' \
        "$njobs" "$clients" "$seq_rate" "$clients" "$par_rate"
printf '"cli_noop_per_s":%s,"pending_at_end":%s,"controller_rss_kib_start":%s,"controller_rss_kib_after":%s,' \
        "$noop_rate" "$pending" "$rss0" "$rss1"
printf '"controller_mib_per_100k_pending":%s},"slurm":%s}\n' "$per_100k" "$slurm"
