#!/usr/bin/env bash
# launch.sh - what a launch costs, beside the physical floor and the peers, all in the same run.
#
#   [SLURM=0] [BASE_BIN=/path/to/baseline/bin] [ROUNDS=2] COLONY_BIN=build/bin tests/bench/launch.sh [N]
#
# Root; prints JSON on stdout, each figure {p50, p99} in ms over N (default 1,000) launches:
#  * floor: fork and exec of /bin/true in a fresh memory cgroup (launch_floor: v2 clone3 into
#    it; v1 the child writes itself in), from before the mkdir until the exec is known;
#  * floor_spaced: the same, n/5 launches 50 ms apart (a move through cgroup.procs would then
#    wait for an RCU grace period that back-to-back launches share; v1's through tasks does not);
#  * floor_job: the same, back to back, into the cgroups a colony job of one CPU gets, with its
#    limits (launch_floor ... job: v1 one per hierarchy colony uses, each joined in turn): the
#    kernel's part of colony's launch, so that agent_p50_over_floor_job is colony's own;
#  * colony, one job at a time on a local one-agent cluster (2 CPUs), N times `colony submit
#    --cpus 1 -- /bin/true` then `colony wait`: agent_alone, the agent's launch message to its
#    exec, as the agent logs it ("started ... N ms after its launch message"; null for builds
#    that do not say); submit_to_start, the controller's submit stamp to the agent's start
#    stamp; submit_to_end, to the end the agent reports; client, the wall clock of the
#    submit and the wait (what a user waits, the CLI's two process starts included); run, the
#    wall clock of N/5 `colony run --cpus 1 -- /bin/true` after those (one process: the issue's
#    "submit -> the client sees its end"); agent_spaced, agent_alone of N/5 more jobs submitted
#    50 ms after the previous one ended, as a user's jobs come (floor_spaced's peer);
#  * drain_s: N `true` jobs, one CPU each, on the 2 CPUs, from the array's submission to the
#    last end the agent reports; the script waits with `colony wait` on the array (one blocked
#    client), not by polling the queue, so that its own load stays out of the drain;
#    drain_agent_cpu_ms and drain_agent_faults, the agent's CPU (ms, all its threads) and minor
#    page faults a job over it (/proc/PID/stat: the copy on write after its forks shows there);
#  * systemd-run --scope true, where systemd is PID 1 ("skipped" otherwise);
#  * Slurm's `srun true` on a one-node Slurm (../shared/tools/slurm-peer.sh, as submit.sh uses
#    it; SLURM=0 or no peer: "skipped").
# With BASE_BIN the colony figures are measured for that build too, the two alternating in
# ROUNDS (default 2) rounds of N/ROUNDS jobs (and in which goes first), so that other load on
# the machine falls on both alike.
set -euo pipefail
n=${1:-1000}
rounds=${ROUNDS:-2}
new=$(cd "${COLONY_BIN:?set COLONY_BIN to the bin directory of a build}" && pwd)
base=${BASE_BIN:+$(cd "$BASE_BIN" && pwd)}
here=$(cd "$(dirname "$0")" && pwd)
peer=$(cd "$here/../../.." && pwd)/shared/tools/slurm-peer.sh
command -v jq >/dev/null || { echo "jq is needed" >&2; exit 1; }
dir=$(mktemp -d /tmp/colony-launch-XXXXXX)
chmod 755 "$dir"
slurm_started=0
cleanup() {
        set +e
        for c in "$dir"/c.*; do
                for b in "$new" $base; do "$b/colony" down --dir "$c" >/dev/null 2>&1; done
        done
        [ "$slurm_started" = 1 ] && "$peer" stop >/dev/null 2>&1
        rm -rf "$dir"
}
trap cleanup EXIT
log() { echo "launch.sh: $*" >&2; }

# stats: {p50, p99, n} in ms of the numbers (ms) on stdin.
stats() {
        jq -sc 'sort as $s | ($s | length) as $n |
                if $n == 0 then null else
                {p50: ($s[($n / 2) | floor] * 100 | round / 100), p99: ($s[($n * 0.99) | floor] * 100 | round / 100), n: $n} end'
}
# timed N CMD...: CMD run N times; stats of the ms of each, or "failed" when a run fails.
timed() {
        local i t0 reps=$1
        shift
        : >"$dir/timed"
        for ((i = 0; i < reps; i++)); do
                t0=$EPOCHREALTIME
                "$@" >/dev/null 2>"$dir/timed.err" || { log "$* failed: $(cat "$dir/timed.err")"; echo '"failed"'; return; }
                awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f\n", (b - a) * 1000 }' >>"$dir/timed"
        done
        stats <"$dir/timed"
}

# cluster BIN: a fresh local cluster of BIN in a new directory $c, one agent of 2 CPUs. The
# directories of earlier ones stay until the end: on ext4 without a journal (this host's root) a
# new inode is not one freed in the last 60 s (300 s while its inode table block is unwritten),
# and each file created after the removal of a thousand looked at every one of them (perf:
# ext4_create in recently_deleted, 1.2 ms a job's output file): that timed the script's rm -rf.
cluster() {
        c=$(mktemp -d "$dir/c.XXXXXX") && chmod 755 "$c" && cd "$c"
        export COLONY_SOCKET=$c/controller.sock
        "$1/colony" up --dir "$c" --name-prefix "launch$$-" --agents 1 --agent-cpus 2 --agent-mem 2G >/dev/null
}

# one_by_one BIN N TAG: N jobs one at a time; the figures' raw values into $dir/TAG.*.
one_by_one() {
        local bin=$1 reps=$2 tag=$3 i t0 id logged
        cluster "$bin"
        for ((i = 0; i < reps; i++)); do
                t0=$EPOCHREALTIME
                id=$("$bin/colony" submit --cpus 1 --mem 16M -- /bin/true)
                "$bin/colony" wait "$id" >/dev/null
                awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f\n", (b - a) * 1000 }' >>"$dir/$tag.client"
        done
        "$bin/colony" queue --all --json | jq -r '.jobs[] | "\((.start_usec - .submit_usec) / 1000) \((.end_usec - .submit_usec) / 1000)"' |
                while read -r s e; do echo "$s" >>"$dir/$tag.start"; echo "$e" >>"$dir/$tag.end"; done
        logged=$(wc -l <"$c/launch$$-1.log") # nor in agent_alone
        for ((i = 0; i < (reps + 4) / 5; i++)); do # after the stamps above: not in them
                t0=$EPOCHREALTIME
                "$bin/colony" run --cpus 1 --mem 16M -- /bin/true >/dev/null
                awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f\n", (b - a) * 1000 }' >>"$dir/$tag.run"
        done
        spaced_from=$(wc -l <"$c/launch$$-1.log")
        for ((i = 0; i < (reps + 4) / 5; i++)); do
                sleep 0.05
                id=$("$bin/colony" submit --cpus 1 --mem 16M -- /bin/true)
                "$bin/colony" wait "$id" >/dev/null
        done
        "$bin/colony" down --dir "$c" >/dev/null
        agent_times() { sed -n 's/.*: started pid .*, \([0-9.]*\) ms after its launch message.*/\1/p'; }
        head -n "$logged" "$c/launch$$-1.log" | agent_times >>"$dir/$tag.agent"
        tail -n +$((spaced_from + 1)) "$c/launch$$-1.log" | agent_times >>"$dir/$tag.spaced"
}

# agent_usage PID: the agent's minor page faults and CPU ticks (user and system, all its
# threads, not its children) so far, from /proc/PID/stat.
agent_usage() { sed 's/^.*) //' "/proc/$1/stat" | awk '{ print $8, $12 + $13 }'; }

# drain BIN: {s, agent_cpu_ms, agent_faults}: seconds from the array's submission of N `true`
# jobs to the last end, and the agent's CPU and page faults a job meanwhile.
drain() {
        local bin=$1 left array apid faults0 ticks0 faults1 ticks1 secs
        cluster "$bin"
        apid=$(cat "$c/agent-launch$$-1.pid")
        read -r faults0 ticks0 < <(agent_usage "$apid")
        array=$("$bin/colony" submit --array "0-$((n - 1))" --cpus 1 --mem 16M -- /bin/true | sed -n 1p)
        # One client blocked on each task's end in turn: no poll of the queue (a `queue --json |
        # jq` every 0.1 s was an eighth of the host's CPU during the drain).
        "$bin/colony" wait --timeout 600 "$array" >/dev/null || true
        read -r faults1 ticks1 < <(agent_usage "$apid")
        left=$("$bin/colony" queue --json | jq '.jobs | length')
        [ "$left" = 0 ] || { log "$left jobs not ended after 10 minutes"; exit 1; }
        secs=$("$bin/colony" queue --all --json | jq '[.jobs[].submit_usec] as $s | [.jobs[].end_usec] as $e |
                (($e | max) - ($s | min)) / 1e6 * 100 | round / 100')
        jq -nc --argjson s "$secs" --argjson hz "$(getconf CLK_TCK)" --argjson n "$n" \
                --argjson f "$((faults1 - faults0))" --argjson t "$((ticks1 - ticks0))" \
                '{s: $s, agent_cpu_ms: ($t * 1000 / $hz / $n * 100 | round / 100), agent_faults: ($f / $n * 10 | round / 10)}'
        "$bin/colony" down --dir "$c" >/dev/null
}

colony_figures() { # TAG
        jq -n --argjson agent "$(stats <"$dir/$1.agent")" --argjson start "$(stats <"$dir/$1.start")" \
                --argjson fin "$(stats <"$dir/$1.end")" --argjson client "$(stats <"$dir/$1.client")" \
                --argjson drain "$2" --argjson run "$(stats <"$dir/$1.run")" --argjson spaced "$(stats <"$dir/$1.spaced")" \
                '{agent_alone: $agent, agent_spaced: $spaced, submit_to_start: $start, submit_to_end: $fin, client: $client,
                  drain_s: $drain.s, drain_agent_cpu_ms: $drain.agent_cpu_ms, drain_agent_faults: $drain.agent_faults,
                  run: $run}'
}

log "floor: $n launches of /bin/true in a fresh memory cgroup"
mode=$(stat -fc %T /sys/fs/cgroup) # tmpfs: v1
floor=$("$new/launch_floor" "$n" | stats)
log "floor: $((n / 5)) launches 50 ms apart, as colony's one at a time"
floor_spaced=$("$new/launch_floor" $((n / 5)) 50 2>/dev/null | stats)
log "floor: $n launches into the cgroups, with the limits, of a colony job"
floor_job=$("$new/launch_floor" "$n" 0 job 2>/dev/null | stats)
touch "$dir/new.agent" "$dir/base.agent" "$dir/new.spaced" "$dir/base.spaced"
# The build measured first in a round came out a few percent slower, whichever it was (three
# runs of 2026-11-27): each round swaps them. More rounds average a drifting host out (the
# base's p50 went from 1.43 to 1.74 ms between two runs of 600 in two halves).
for ((round = 1; round <= rounds; round++)); do
        log "colony: $((n / rounds)) jobs one at a time (round $round of $rounds)"
        [ $((round % 2)) = 0 ] || one_by_one "$new" $((n / rounds)) new
        [ -z "$base" ] || one_by_one "$base" $((n / rounds)) base
        [ $((round % 2)) = 1 ] || one_by_one "$new" $((n / rounds)) new
done
log "colony: drain of $n jobs"
drain_new=$(drain "$new")
drain_base=null
[ -z "$base" ] || drain_base=$(drain "$base")

systemd='"skipped: systemd is not PID 1"'
if [ "$(cat /proc/1/comm)" = systemd ]; then
        log "systemd-run --scope true, $n times"
        systemd=$(timed "$n" systemd-run --quiet --scope true)
fi
slurm='"skipped"'
if [ "${SLURM:-1}" != 0 ] && [ -x "$peer" ]; then
        log "slurm: set-up and start"
        cd "$dir" # srun needs a working directory that exists (the last cluster's is gone)
        if "$peer" setup >&2 && { slurm_started=1; "$peer" start >&2; }; then
                log "slurm: srun true, $n times"
                slurm=$(timed "$n" srun -n1 true)
        fi
fi
jq -n --argjson n "$n" --arg mode "$mode" --argjson floor "$floor" --argjson spaced "$floor_spaced" --argjson floor_job "$floor_job" \
        --argjson new "$(colony_figures new "$drain_new")" \
        --argjson base "$([ -z "$base" ] && echo null || colony_figures base "$drain_base")" \
        --argjson systemd "$systemd" --argjson slurm "$slurm" \
        'def over($f): if $new.agent_alone then ($new.agent_alone.p50 / $f.p50 * 100 | round / 100) else null end;
         {launches: $n, cgroup_fs: $mode, floor: $floor, floor_spaced: $spaced, floor_job: $floor_job, colony: $new,
          colony_base: $base, systemd_run_scope: $systemd, srun: $slurm,
          agent_p50_over_floor: over($floor), agent_p50_over_floor_job: over($floor_job)}'
