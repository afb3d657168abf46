#!/usr/bin/env bash
# cpuset.sh - cores of their own: on an agent of 2 CPUs, a --cpus 1 job sees one CPU (nproc,
# sched_getaffinity through Cpus_allowed_list), two such jobs get different cores, a fractional
# job shares the cores nobody holds, and an agent killed and started again (it adopts its jobs)
# still knows which core its running job holds.
. "$(dirname "$0")/lib.sh"
[ "$(nproc)" -ge 2 ] || { echo "SKIP: needs 2 CPUs"; exit $SKIP; }
cluster_up --agents 1 --agent-cpus 2 --agent-mem 512M
agent=${PREFIX}1
# The job prints nproc and its allowed CPUs, then stays until its flag file appears.
probe='nproc; sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status; while [ ! -e "$0" ]; do sleep 0.1; done'
sub() { colony submit --mem 16M "$@" -- /bin/sh -c "$probe" "$DIR/go"; }
out_ready() { # out_ready ID: wait until the job's output has its two lines
        local k
        for ((k = 0; k < 300; k++)); do [ "$(wc -l <"$DIR/colony-$1.out" 2>/dev/null || echo 0)" -ge 2 ] && return 0; sleep 0.1; done
        fail "job $1 printed nothing: $(job_field "$1" state) $(job_field "$1" error)"
}
one=$(sub --cpus 1)
two=$(sub --cpus 1)
out_ready "$one"
out_ready "$two"
grep -q "no cpuset controller here" "$DIR/$agent.log" && { echo "SKIP: cgroup v2 without the cpuset controller in the agent's cgroup"; exit $SKIP; }
[ "$(sed -n 1p "$DIR/colony-$one.out")" = 1 ] || fail "nproc in a --cpus 1 job: $(sed -n 1p "$DIR/colony-$one.out")"
[ "$(sed -n 1p "$DIR/colony-$two.out")" = 1 ] || fail "nproc in a --cpus 1 job: $(sed -n 1p "$DIR/colony-$two.out")"
c1=$(sed -n 2p "$DIR/colony-$one.out") c2=$(sed -n 2p "$DIR/colony-$two.out")
[ "$c1" != "$c2" ] || fail "two --cpus 1 jobs share core $c1"
note "two --cpus 1 jobs: nproc 1 each, cores $c1 and $c2"
touch "$DIR/go"
colony wait "$one" >/dev/null && colony wait "$two" >/dev/null || fail "the probes did not complete"
rm -f "$DIR/go"

# A fraction of a CPU beside a whole one: the core nobody holds.
whole=$(sub --cpus 1)
half=$(sub --cpus 0.5)
out_ready "$whole"
out_ready "$half"
cw=$(sed -n 2p "$DIR/colony-$whole.out") ch=$(sed -n 2p "$DIR/colony-$half.out")
[ "$ch" != "$cw" ] && [ "$(sed -n 1p "$DIR/colony-$half.out")" = 1 ] || fail "the 0.5 job runs on '$ch' beside the whole job's $cw"
note "a 0.5 job beside the whole one on $cw: $ch"
colony cancel "$half" >/dev/null
colony wait "$half" >/dev/null || true

# The agent dies and comes back: the job on core $cw runs on, and the next --cpus 1 job gets
# the other core.
apid=$(agent_pid "$agent")
mapfile -d '' -t agent_cmd <"/proc/$apid/cmdline"
kill -9 "$apid"
"${agent_cmd[@]}" >>"$DIR/$agent.log" 2>&1 &
echo $! >"$DIR/agent-$agent.pid"
STARTED_PIDS+=("$!")
for ((k = 0; k < 300; k++)); do grep -q "job=$whole .*holds cores $cw" "$DIR/$agent.log" && break; sleep 0.1; done
grep -q "job=$whole .*holds cores $cw" "$DIR/$agent.log" || fail "the restarted agent does not say job $whole holds $cw"
after=$(sub --cpus 1)
out_ready "$after"
ca=$(sed -n 2p "$DIR/colony-$after.out")
[ "$ca" != "$cw" ] || fail "after an agent restart a job got core $ca, which job $whole holds"
note "after an agent restart: job $whole keeps $cw, a new job gets $ca"
touch "$DIR/go"
colony wait "$whole" >/dev/null && colony wait "$after" >/dev/null || fail "the probes after the restart did not complete"
rm -f "$DIR/go"

# A fraction first, on both cores; a whole job then takes one, and the fraction moves off it.
half=$(sub --cpus 0.5)
out_ready "$half"
[ "$(sed -n 2p "$DIR/colony-$half.out")" = 0-1 ] || fail "a 0.5 job alone runs on $(sed -n 2p "$DIR/colony-$half.out")"
whole=$(sub --cpus 1)
out_ready "$whole"
cw=$(sed -n 2p "$DIR/colony-$whole.out")
pid=$(job_procs "$agent" "$half" | sed -n 1p)
now=$(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" "/proc/${pid%%:*}/status")
[ -n "$now" ] && [ "$now" != 0-1 ] && [ "$now" != "$cw" ] || fail "the 0.5 job runs on '$now' beside the whole job's $cw"
note "a 0.5 job on 0-1 moved to $now when a whole job took $cw"
touch "$DIR/go"
colony wait "$whole" >/dev/null && colony wait "$half" >/dev/null || fail "the last probes did not complete"
echo "PASS"
