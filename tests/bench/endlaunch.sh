#!/usr/bin/env bash
# endlaunch.sh - a job's end to the next job's launch, with a long queue behind and without.
#
#   COLONY_BIN=build/bin tests/bench/endlaunch.sh [PENDING [N]]
#
# Root; prints one JSON line. On a local one-agent cluster of ONE CPU, `true` jobs of one CPU
# each run one after another, so the gap from a job's end (the agent's stamp of its shepherd's
# reaping) to the next job's start (the agent's stamp as it spawns the next shepherd) is the
# whole loop: the agent's report, the controller's turn, its pass, the commit's fdatasync, the
# launch, the agent's turn. Measured twice in the same run, p50 and p99 in ms:
#  * baseline: N jobs submitted at once, nothing else queued (at most N pending);
#  * queued: PENDING (default 100,000) jobs submitted by four API clients (bench_submit, one
#    connection each), then the gaps of the next N (default 500) jobs that start while the rest
#    wait (and the controller's CPU a job meanwhile, ms: its passes' cost); then every job left
#    is cancelled in one request.
# CONTROLLER_CONFIG: a controller config file for the cluster (colony up --controller-config),
# e.g. EASY backfill and a running limit per user.
# CAPPED=1: the PENDING jobs wait for a department cap instead. Two departments, "capped" (cap
# 0.5) and "open", on an agent of two CPUs: a long job of "capped" holds its half, the PENDING
# jobs are submitted to "capped" (submit.json: at what rate), and the N measured jobs to "open",
# before them (baseline) and after them (queued); ORDER sets the order (default fifo). It writes
# its own controller config, in place of CONTROLLER_CONFIG.
# HELD=K: K jobs on hold are submitted before the PENDING ones (the queue's head, which no pass
# may start), and cancelled with them.
# NICE=K: K jobs of nice 10 are queued ahead of the PENDING ones, of the same user, while a
# job of 2 s holds the CPU: each place of theirs goes to the user's next job of nice 0, which
# passes find by nice value (they are cancelled with the rest).
# THROTTLED=K: an array of K tasks, one at a time (%1), on hold, is queued ahead of the PENDING
# ones: while it waits, a nice order has its user's places go to tasks its throttle leaves
# (with NICE=K, the case where passes read the whole queue until 2026-11-28).
# BEGIN=K: K jobs that wait for a begin time an hour away are queued after the NICE ones, of the
# same user: with NICE=K, the front of the user's nice order (each pass read them all until
# 2026-11-28).
# Issue 22's goal: the queued p50 <= 2 ms, a pass whose cost does not grow with the queue.
set -euo pipefail
pending=${1:-100000}
n=${2:-500}
capped=${CAPPED:-0}
held_first=${HELD:-0}
nice_first=${NICE:-0}
throttled=${THROTTLED:-0}
begin_first=${BEGIN:-0}
bin=$(cd "${COLONY_BIN:?set COLONY_BIN to the bin directory of a build}" && pwd)
command -v jq >/dev/null || { echo "jq is needed" >&2; exit 1; }
dir=$(mktemp -d /tmp/colony-endlaunch-XXXXXX)
chmod 755 "$dir"
cleanup() {
        set +e
        "$bin/colony" down --dir "$dir" >/dev/null 2>&1
        rm -rf "$dir"
}
trap cleanup EXIT
log() { echo "endlaunch.sh: $*" >&2; }
cd "$dir"
export COLONY_SOCKET=$dir/controller.sock
cpus=1 open=() held=()
if [ "$capped" = 1 ]; then
        printf '[controller]\norder = %s\n[departments]\ncapped = 1\nopen = 1\n[department_caps]\ncapped = 0.5\n' \
                "${ORDER:-fifo}" >"$dir/capped.conf"
        CONTROLLER_CONFIG=$dir/capped.conf cpus=2 open=(--group open) held=(--group capped)
fi
"$bin/colony" up --dir "$dir" --name-prefix "endl$$-" --agents 1 --agent-cpus "$cpus" --agent-mem 2G \
        ${CONTROLLER_CONFIG:+--controller-config "$CONTROLLER_CONFIG"} >/dev/null
# capped: the long job (no end: no gap) that holds its department's half of the two CPUs
[ "$capped" = 1 ] && "$bin/colony" submit --group capped --cpus 1 --mem 1M -- /bin/sleep 3600 >/dev/null

# gaps FROM_USEC COUNT: stats of start(k+1) - end(k), ms, over the first COUNT jobs started at or
# after FROM_USEC (jobs run one at a time: sorted by start, each follows the one before), and the
# gap before the first of them, but in CAPPED mode (the job before ended before the submissions).
gaps() {
        "$bin/colony" queue --all --json | jq -c --argjson from "$1" --argjson count "$2" --argjson alone "$capped" '
                [.jobs[] | select(.start_usec > 0 and .end_usec > 0)] | sort_by(.start_usec) |
                [.[] | select(.start_usec >= $from)] as $after |
                (if $alone == 1 then null else [.[] | select(.start_usec < $from)] | last end) as $before |
                ([$before // empty] + $after)[: $count + 1] as $run |
                [range(1; $run | length) | ($run[.].start_usec - $run[. - 1].end_usec) / 1000] | sort as $g |
                ($g | length) as $k |
                if $k == 0 then null else
                {p50: ($g[($k / 2) | floor] * 100 | round / 100), p99: ($g[($k * 0.99) | floor] * 100 | round / 100), n: $k} end'
}

log "baseline: $n jobs, nothing else queued"
t0=$(date +%s%6N)
"$bin/bench_submit" --socket "$COLONY_SOCKET" --clients 1 --jobs "$n" --cpus 1 --mem 1M "${open[@]}" >/dev/null
last=$("$bin/colony" queue --all --json | jq '[.jobs[].id] | max')
"$bin/colony" wait "$last" >/dev/null
for ((i = 0; i < 600; i++)); do # all ended (but capped's long job)
        [ "$("$bin/colony" queue --json | jq '[.jobs[] | select(.group != "capped")] | length')" = 0 ] && break
        sleep 0.5
done
baseline=$(gaps "$t0" "$n")

log "queued: $pending jobs from four clients, after $held_first on hold, after $nice_first of nice 10," \
        "after a held array of $throttled tasks, one at a time, after $begin_first waiting for their begin time"
if [ "$throttled" -gt 0 ]; then
        "$bin/colony" submit --array "0-$((throttled - 1))%1" --hold --cpus 1 --mem 1M -- /bin/true >/dev/null
fi
if [ "$held_first" -gt 0 ]; then
        "$bin/bench_submit" --socket "$COLONY_SOCKET" --clients 1 --jobs "$held_first" --cpus 1 --mem 1M --hold >/dev/null
fi
if [ "$nice_first" -gt 0 ]; then
        "$bin/colony" submit --cpus 1 --mem 1M "${held[@]}" -- /bin/sleep 2 >/dev/null
        for ((i = 0; i < nice_first; i++)); do
                "$bin/colony" submit --nice 10 --cpus 1 --mem 1M "${held[@]}" -- /bin/true >/dev/null
        done
fi
if [ "$begin_first" -gt 0 ]; then
        "$bin/bench_submit" --socket "$COLONY_SOCKET" --clients 1 --jobs "$begin_first" --cpus 1 --mem 1M --begin-in 3600 \
                "${held[@]}" >/dev/null
fi
"$bin/bench_submit" --socket "$COLONY_SOCKET" --clients 4 --jobs $((pending / 4)) --cpus 1 --mem 1M "${held[@]}" \
        >"$dir/submit.json"
t1=$(date +%s%6N)
# the jobs that may start: the first, and the n-th after it (the begin time's are between)
read -r left first last < <("$bin/colony" queue --json |
        jq -r --argjson n "$n" '[.jobs[] | select(.state == "pending" and .reason != "held" and .reason != "begin time") | .id] |
                sort | "\(length) \(.[0]) \(.[$n] // .[-1])"')
log "all submitted ($(jq -c . "$dir/submit.json")); $left pending; job $first and the $n after it"
if [ "$capped" = 1 ]; then # the cap holds them all: the next n jobs are "open"'s, submitted now
        "$bin/bench_submit" --socket "$COLONY_SOCKET" --clients 1 --jobs "$n" --cpus 1 --mem 1M "${open[@]}" >/dev/null
        last=$("$bin/colony" queue --json | jq '[.jobs[].id] | max')
        first=$((last - n))
        shown=$("$bin/colony" queue --json | jq '[.jobs[] | select(.group == "capped" and .reason == "department cap")] | length')
        log "$shown of the capped department's pending jobs show 'department cap'"
fi
# FIFO on one CPU: once job last has ended, the n gaps before it are measured (no poll of a
# queue of $pending jobs while they are), and the controller's CPU meanwhile (user and system
# ticks, /proc/PID/stat), a job at a time: its passes' cost beside the gaps
cpid=$(cat "$dir/controller.pid")
cpu_ticks() { sed 's/^.*) //' "/proc/$cpid/stat" | awk '{ print $12 + $13 }'; }
ticks0=$(cpu_ticks)
"$bin/colony" wait "$last" >/dev/null
ticks1=$(cpu_ticks)
"$bin/colony" cancel --state pending >/dev/null
queued=$(gaps "$t1" "$n")
jq -nc --argjson pending "$pending" --argjson base "$baseline" --argjson queued "$queued" --argjson left "$left" \
        --argjson submit "$(cat "$dir/submit.json")" --argjson capped "$capped" --argjson held "$held_first" \
        --argjson nice "$nice_first" --argjson throttled "$throttled" --argjson begin "$begin_first" \
        --argjson cpu "$(((ticks1 - ticks0) * 1000 / $(getconf CLK_TCK)))" --argjson n "$n" \
        '{end_to_next_launch_ms: {baseline: $base, queued: $queued}, controller_cpu_ms_per_job_queued: ($cpu / $n),
          pending: $pending, pending_when_measured: $left,
          held_first: $held, nice_first: $nice, throttled_held: $throttled, begin_first: $begin, capped: ($capped == 1),
          submitted_per_s: $submit.jobs_per_s}'
