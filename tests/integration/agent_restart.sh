#!/usr/bin/env bash
# SIGKILL the agent while jobs run: the restarted agent re-adopts them. Jobs that end while no
# agent runs are reported with their own exit status, long ones keep running and reporting
# usage, one is cancelled through its adopted cgroup, and none is started twice. Then SIGKILL
# the controller and the agent together, SIGTERM an agent started without --stop-jobs-on-exit,
# SIGKILL the agent with its jobs, and SIGKILL it while the stopped controller has read neither
# a job's end nor another's start, and SIGKILL it stopped after a job exec'd unheard (and once
# more after such a job also ended unwatched): each start is reported once. At the end no
# cgroup, process or state file is left.
. "$(dirname "$0")/lib.sh"
# A reconnect window wide enough for a slow (TCG) guest: what is tested is what happens inside it.
cluster_up --agents 1 --agent-cpus 4 --agent-mem 2G --agent-timeout-ms 30000
node="${PREFIX}1"
state_dir="$DIR/agent-$node.state"
runs="$DIR/runs" # every job appends its name when it starts: a job started twice shows twice
procs=()         # pid:starttime of every job process and shepherd seen, checked gone at the end

# submit NAME GATE STATUS [CMD]: a job that notes its start, runs CMD (default: nothing) until
# the file $DIR/GATE exists, then exits with STATUS (a number, or "signal" for SIGTERM). The
# test opens the gates, so which jobs end while no agent runs does not depend on timing.
submit() {
        local end="exit $3"
        [ "$3" = signal ] && end='kill -TERM $$'
        colony submit --name "$1" --cpus "${5:-0.2}" --mem 32M ${SUBMIT_OPTS:-} -- /bin/sh -c \
                "echo $1 >>'$runs'; echo $1; until [ -e '$DIR/$2' ]; do ${4:-sleep 0.1}; done; $end"
}
open_gate() { touch "$DIR/$1"; }

# note_procs ID...: remember the jobs' processes and their shepherds.
note_procs() {
        local id rec
        for id in "$@"; do
                mapfile -t -O "${#procs[@]}" procs < <(job_procs "$node" "$id")
                rec="$state_dir/job-$id.json"
                [ -f "$rec" ] || fail "job $id has no record in $state_dir"
                procs+=("$(jq -r '"\(.shepherd_pid):\(.shepherd_start)"' "$rec")")
        done
}

# wait_exit_files ID...: until the shepherds of these jobs have recorded their ends.
wait_exit_files() {
        local id i
        for id in "$@"; do
                for ((i = 0; i < 100; i++)); do [ -f "$state_dir/job-$id.exit" ] && break; sleep 0.1; done
                [ -f "$state_dir/job-$id.exit" ] || fail "job $id ended, but its shepherd recorded no exit"
        done
}

# restart_agent: start the agent again with the command line colony up gave it.
restart_agent() {
        "${agent_cmd[@]}" >>"$DIR/$node.log" 2>&1 &
        echo $! >"$DIR/agent-$node.pid"
        STARTED_PIDS+=("$!")
}

# expect ID STATE EXIT_CODE SIGNAL
expect() {
        local id=$1 st
        set +e; colony wait "$id" >/dev/null; set -e
        st=$(colony show --json "$id" | jq -r '.job | "\(.state) \(.exit_code) \(.signal)"')
        [ "$st" = "$2 $3 $4" ] || fail "job $id ($(job_field "$id" name)): $st ($(job_field "$id" error)), want $2 $3 $4"
}

cpu_of() { job_field "$1" cpu_usec; }

# --- round 1: the agent alone is killed ---
long=$(submit long gate-long 0)
hog=$(submit hog gate-long 0 : 0.5) # spins: its CPU time shows whether usage reports arrive
victim=$(submit victim never 0)
orphans=$(submit orphans gate-long 0 "sleep 0.1; (sleep 300 &)") # leaves orphans for its shepherd
s3=$(submit s3 gate-short 3)
s0=$(submit s0 gate-short 0)
sig=$(submit sig gate-short signal)
round1=("$long" "$hog" "$victim" "$orphans" "$s3" "$s0" "$sig")
for id in "${round1[@]}"; do wait_state "$id" running; done
for ((i = 0; i < 50; i++)); do [ "$(wc -l <"$runs")" -ge 7 ] && [ "$(cpu_of "$hog")" -gt 0 ] && break; sleep 0.1; done
note_procs "${round1[@]}"

apid=$(agent_pid "$node")
mapfile -d '' -t agent_cmd <"/proc/$apid/cmdline"
cpu_before=$(cpu_of "$hog")
kill -9 "$apid"
killed_at=$(date +%s%6N)
note "agent $apid killed with ${#round1[@]} jobs running; three of them end while it is away"
open_gate gate-short
wait_exit_files "$s3" "$s0" "$sig"
[ -d "$(job_cgroup pids "$node" "$long")" ] || fail "job $long's cgroup is gone while no agent ran"
restart_agent
restarted_at=$(date +%s%6N)
note "agent restarted after $(((restarted_at - killed_at) / 1000)) ms"

expect "$s3" failed 3 0
expect "$s0" completed 0 0
expect "$sig" failed 0 15
for id in "$s3" "$s0" "$sig"; do
        [ "$(job_field "$id" end_usec)" -lt "$restarted_at" ] || fail "job $id: its end time is the report's, not its own"
done
for ((i = 0; i < 80; i++)); do
        [ "$(cpu_of "$hog")" -gt $((cpu_before + 500000)) ] && break
        sleep 0.1
done
cpu_after=$(cpu_of "$hog")
[ "$cpu_after" -gt $((cpu_before + 500000)) ] || fail "no usage arrives for the adopted job $hog ($cpu_before -> $cpu_after us)"
note "usage of the adopted hog: $cpu_before -> $cpu_after us of CPU"
colony cancel "$victim" >/dev/null
expect "$victim" cancelled 0 15
open_gate gate-long
expect "$long" completed 0 0
expect "$orphans" completed 0 0
expect "$hog" completed 0 0

# --- round 2: the controller and the agent are killed together ---
s5=$(submit s5 gate2-short 5)
long2=$(submit long2 gate2-long 4)
for id in "$s5" "$long2"; do wait_state "$id" running; done
for ((i = 0; i < 50; i++)); do [ "$(grep -c long2 "$runs")" -ge 1 ] && break; sleep 0.1; done
note_procs "$s5" "$long2"
port=$(cat "$DIR/controller.port")
cmdline=$(tr '\0' ' ' < "/proc/$(cat "$DIR/controller.pid")/cmdline" | sed "s/127.0.0.1:0/127.0.0.1:$port/")
apid=$(agent_pid "$node")
kill -9 "$(cat "$DIR/controller.pid")" "$apid"
note "controller and agent killed together"
open_gate gate2-short
wait_exit_files "$s5"
$cmdline >>"$DIR/controller.log" 2>&1 &
echo $! >"$DIR/controller.pid"
STARTED_PIDS+=("$!")
restart_agent
for ((i = 0; i < 100; i++)); do colony nodes >/dev/null 2>&1 && break; sleep 0.1; done
expect "$s5" failed 5 0
open_gate gate2-long
expect "$long2" failed 4 0

# --- round 3: a plain SIGTERM (no --stop-jobs-on-exit) leaves the job to the next agent ---
long3=$(submit long3 gate3 6)
wait_state "$long3" running
for ((i = 0; i < 50; i++)); do [ "$(grep -c long3 "$runs")" -ge 1 ] && break; sleep 0.1; done
note_procs "$long3"
kill_wait "$(agent_pid "$node")"
plain_cmd=()
for arg in "${agent_cmd[@]}"; do [ "$arg" = --stop-jobs-on-exit ] || plain_cmd+=("$arg"); done
"${plain_cmd[@]}" >>"$DIR/$node.log" 2>&1 &
plain=$!
STARTED_PIDS+=("$plain")
for ((i = 0; i < 100; i++)); do grep -q "job=$long3 .*re-adopted" "$DIR/$node.log" && break; sleep 0.1; done
kill -TERM "$plain"
for ((i = 0; i < 100; i++)); do kill -0 "$plain" 2>/dev/null || break; sleep 0.1; done
kill -0 "$plain" 2>/dev/null && fail "the agent did not stop on SIGTERM"
[ -d "$(job_cgroup pids "$node" "$long3")" ] || fail "SIGTERM without --stop-jobs-on-exit removed job $long3's cgroup"
[ -f "$state_dir/job-$long3.json" ] || fail "SIGTERM without --stop-jobs-on-exit removed job $long3's record"
note "plain SIGTERM: job $long3 left running for the next agent"
restart_agent
open_gate gate3
expect "$long3" failed 6 0

# --- round 4: the agent is killed with its jobs' processes, shepherds first (systemd's
# KillMode=mixed does that to a crashed agent's unit), and restarted within the reconnect
# window: the jobs' ends are unknown, so they are lost, as they would be had the controller's
# timeout come first; the one submitted with --requeue runs again as its second attempt. ---
crashed=$(submit crashed never 0)
rq=$(SUBMIT_OPTS=--requeue submit rq gate4 0)
for id in "$crashed" "$rq"; do wait_state "$id" running; done
for ((i = 0; i < 50; i++)); do [ "$(grep -c -e crashed -e rq "$runs")" -ge 2 ] && break; sleep 0.1; done
note_procs "$crashed" "$rq"
kill_wait "$(agent_pid "$node")"
for id in "$crashed" "$rq"; do
        shepherd=$(jq -r '"\(.shepherd_pid):\(.shepherd_start)"' "$state_dir/job-$id.json")
        # || true: the process may end between the check and the kill (the shepherd's child
        # follows it), and a failed last command of an && list ends the script under set -e.
        alive "$shepherd" && { kill -9 "${shepherd%%:*}" 2>/dev/null || true; }
        for ((i = 0; i < 50; i++)); do alive "$shepherd" || break; sleep 0.1; done
        for p in $(job_procs "$node" "$id"); do alive "$p" && { kill -9 "${p%%:*}" 2>/dev/null || true; }; done
done
restart_agent
expect "$crashed" lost 0 0
crashed_error=$(job_field "$crashed" error)
grep -q "ended without recording" <<<"$crashed_error" || fail "job $crashed lost with error '$crashed_error'"
grep -q "job=$crashed .*timed out" "$DIR/controller.log" && fail "the controller timed the agent out: its report was not what ended job $crashed"
wait_state "$rq" running 30
[ "$(job_field "$rq" attempt)" = 2 ] || fail "job $rq runs attempt $(job_field "$rq" attempt), want 2"
open_gate gate4
expect "$rq" completed 0 0
[ "$(grep -cx rq "$runs")" = 2 ] || fail "job $rq started $(grep -cx rq "$runs") times, want 2 (its attempts)"
# A requeued run appends to its output file: the first attempt's output stays.
rq_out=$(job_field "$rq" stdout_path)
[ "$(cat "$rq_out")" = $'rq\nrq' ] || fail "job $rq's output after two attempts: '$(cat "$rq_out")', want rq twice"
note "agent killed with its jobs: job $crashed lost ($crashed_error), job $rq requeued and completed as attempt 2"

# --- round 5: the agent is killed between a job's end and the controller's ack, and just after
# another's launch: the controller is stopped (SIGSTOP) as the launch's record appears (the
# started report comes after the shepherd's cgroups and exec, so most often unread) and before
# the first job ends, and continued once the next agent runs. The kept report, written but not
# fsynced (the controller's log makes the end durable), goes again from the next agent; the
# launched job is re-adopted; each ends once, with its own status. ---
cpid=$(cat "$DIR/controller.pid")
stopped_fail() { kill -CONT "$cpid"; fail "$@"; }
e5=$(submit e5 gate5-end 7)
wait_state "$e5" running
for ((i = 0; i < 50; i++)); do [ "$(grep -cx e5 "$runs")" -ge 1 ] && break; sleep 0.1; done
r5=$(submit r5 gate5-run 0)
# The record is written as the launch arrives, before the shepherd may start the job.
for ((i = 0; i < 6000; i++)); do [ -f "$state_dir/job-$r5.json" ] && break; sleep 0.01; done
kill -STOP "$cpid"
[ -f "$state_dir/job-$r5.json" ] || stopped_fail "job $r5 never reached its agent"
for ((i = 0; i < 300; i++)); do [ "$(grep -cx r5 "$runs")" -ge 1 ] && break; sleep 0.1; done
[ "$(grep -cx r5 "$runs")" = 1 ] || stopped_fail "job $r5 did not start while the controller was stopped"
note_procs "$e5" "$r5"
open_gate gate5-end
for ((i = 0; i < 300; i++)); do [ -f "$state_dir/job-$e5.done" ] && break; sleep 0.1; done
[ -f "$state_dir/job-$e5.done" ] || stopped_fail "job $e5 ended, but its agent kept no report"
kill_wait "$(agent_pid "$node")"
restart_agent
for ((i = 0; i < 300; i++)); do
        grep -q "job=$e5: sending its kept report again" "$DIR/$node.log" && break
        sleep 0.1
done
grep -q "job=$e5: sending its kept report again" "$DIR/$node.log" ||
        stopped_fail "the next agent did not send job $e5's kept report"
kill -CONT "$cpid"
note "agent killed with job $e5's report unacknowledged and job $r5 launched as the controller stopped"
expect "$e5" failed 7 0
wait_state "$r5" running 30
open_gate gate5-run
expect "$r5" completed 0 0
for ((i = 0; i < 300; i++)); do [ -e "$state_dir/job-$e5.done" ] || break; sleep 0.1; done
[ ! -e "$state_dir/job-$e5.done" ] || fail "job $e5's report is still kept after its ack"
# One start and one end each: r5's started report may have died unread with the agent, and the
# next agent reports its adopted job's start again after the welcome, with the time it kept.
for id in "$e5" "$r5"; do
        seen=$(colony events --job "$id" --json | jq -r .what | tr '\n' ' ')
        st=$(job_field "$id" state)
        [ "$(grep -ow "$st" <<<"$seen" | wc -l)" = 1 ] && [ "$(grep -ow started <<<"$seen" | wc -l)" = 1 ] ||
                fail "job $id's events: $seen"
        start=$(job_field "$id" start_usec)
        [ "$start" -gt 0 ] && [ "$start" -le "$(job_field "$id" end_usec)" ] ||
                fail "job $id: start time $start, end time $(job_field "$id" end_usec)"
        note "job $id's events: $seen"
done

# --- round 6: the agent is killed after a job's process started but before it heard so (it is
# SIGSTOPped as the launch's record appears): no start was ever reported. The next agent
# re-adopts the job and reports its start once, with the time the record kept. ---
s6=$(submit s6 gate6 0)
for ((i = 0; i < 6000; i++)); do [ -f "$state_dir/job-$s6.json" ] && break; sleep 0.01; done
apid=$(agent_pid "$node")
kill -STOP "$apid"
agent_stopped_fail() { kill -CONT "$apid"; fail "$@"; }
[ -f "$state_dir/job-$s6.json" ] || agent_stopped_fail "job $s6 never reached its agent"
for ((i = 0; i < 300; i++)); do [ "$(grep -cx s6 "$runs")" -ge 1 ] && break; sleep 0.1; done
if [ "$(grep -cx s6 "$runs")" = 0 ]; then
        # Stopped between the record and letting the shepherd go: let it go (the round is weaker).
        kill -CONT "$apid"
        for ((i = 0; i < 300; i++)); do [ "$(grep -cx s6 "$runs")" -ge 1 ] && break; sleep 0.1; done
        note "the agent was stopped before it let job $s6's shepherd go: its start was heard"
fi
note_procs "$s6"
kill_wait "$apid"
killed_at=$(date +%s%6N)
restart_agent
for ((i = 0; i < 300; i++)); do [ "$(job_field "$s6" start_usec)" -gt 0 ] && break; sleep 0.1; done
start=$(job_field "$s6" start_usec)
[ "$start" -gt 0 ] && [ "$start" -lt "$killed_at" ] || fail "job $s6's start time is $start, not the first agent's"
open_gate gate6
expect "$s6" completed 0 0
seen=$(colony events --job "$s6" --json | jq -r .what | tr '\n' ' ')
[ "$seen" = "submitted placed started completed " ] || fail "job $s6's events: $seen"
note "agent killed after job $s6 exec'd unheard: the next agent reported its start once ($seen)"

# --- round 7: as round 6, but the job also ends while its agent is stopped: no agent ever
# watched it run. The next agent reports its end from the exit file, with the start the record
# kept (an exit file is written only after the exec): the job has its start, and one event
# of it. ---
s7=$(submit s7 gate7 0)
for ((i = 0; i < 6000; i++)); do [ -f "$state_dir/job-$s7.json" ] && break; sleep 0.01; done
apid=$(agent_pid "$node")
kill -STOP "$apid"
[ -f "$state_dir/job-$s7.json" ] || agent_stopped_fail "job $s7 never reached its agent"
for ((i = 0; i < 300; i++)); do [ "$(grep -cx s7 "$runs")" -ge 1 ] && break; sleep 0.1; done
if [ "$(grep -cx s7 "$runs")" = 0 ]; then
        kill -CONT "$apid"
        for ((i = 0; i < 300; i++)); do [ "$(grep -cx s7 "$runs")" -ge 1 ] && break; sleep 0.1; done
        kill -STOP "$apid"
        note "the agent was stopped before it let job $s7's shepherd go: its start was heard"
fi
open_gate gate7
for ((i = 0; i < 600; i++)); do [ -f "$state_dir/job-$s7.exit" ] && break; sleep 0.1; done
[ -f "$state_dir/job-$s7.exit" ] || agent_stopped_fail "job $s7's shepherd wrote no exit file"
kill_wait "$apid"
killed_at=$(date +%s%6N)
restart_agent
expect "$s7" completed 0 0
start=$(job_field "$s7" start_usec)
[ "$start" -gt 0 ] && [ "$start" -lt "$killed_at" ] || fail "job $s7, ended unwatched: its start time is $start"
seen=$(colony events --job "$s7" --json | jq -r .what | tr '\n' ' ')
[ "$seen" = "submitted placed started completed " ] || fail "job $s7's events: $seen"
note "job $s7 ran and ended while its agent was stopped, then killed: its start came with its end ($seen)"

# --- every job ended once, none ran twice (but the requeued one), nothing is left ---
all=("${round1[@]}" "$s5" "$long2" "$long3" "$crashed" "$e5" "$r5" "$s6" "$s7")
jobs=$(colony queue --all --json)
[ "$(jq '.jobs | length' <<<"$jobs")" = $((${#all[@]} + 1)) ] || fail "the controller has $(jq '.jobs | length' <<<"$jobs") jobs"
for id in "${all[@]}"; do
        read -r name st code sig < <(jq -r --argjson id "$id" \
                '.jobs[] | select(.id == $id) | "\(.name) \(.state) \(.exit_code) \(.signal)"' <<<"$jobs")
        [ "$(grep -cx "$name" "$runs")" = 1 ] || fail "job $id ($name) started $(grep -cx "$name" "$runs") times"
        note "job $id $name: $st, exit $code, signal $sig"
done
grep -q "re-adopted" "$DIR/$node.log" || fail "the agent's log never says it re-adopted a job"
colony down --dir "$DIR" >/dev/null
for p in "${procs[@]}"; do alive "$p" && fail "process ${p%%:*} outlived colony down"; done
[ -z "$(leftover_cgroups)" ] || fail "cgroups left: $(leftover_cgroups)"
[ ! -e "$state_dir" ] || fail "state directory left: $(ls -A "$state_dir")"
note "$((${#all[@]} + 1)) jobs through 7 agent kills (one with the controller, one with its jobs, one with the controller stopped, two stopped themselves) and a SIGTERM: each ended once, none ran twice but by requeue"
echo "PASS"
