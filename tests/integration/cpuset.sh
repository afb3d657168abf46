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
line() { sed -n "$2p" "$DIR/colony-$1.out"; } # line ID N: the N-th line the job printed
release() { # release ID...: let the probes end, and wait for them
        local id
        touch "$DIR/go"
        for id in "$@"; do colony wait "$id" >/dev/null || fail "probe $id: $(job_field "$id" state)"; done
        rm -f "$DIR/go"
}
one=$(sub --cpus 1)
two=$(sub --cpus 1)
out_ready "$one"
out_ready "$two"
grep -q "no cpuset controller here" "$DIR/$agent.log" && { echo "SKIP: cgroup v2 without the cpuset controller in the agent's cgroup"; exit $SKIP; }
for id in "$one" "$two"; do [ "$(line "$id" 1)" = 1 ] || fail "nproc in a --cpus 1 job: $(line "$id" 1)"; done
c1=$(line "$one" 2) c2=$(line "$two" 2)
[ "$c1" != "$c2" ] || fail "two --cpus 1 jobs share core $c1"
note "two --cpus 1 jobs: nproc 1 each, cores $c1 and $c2"
release "$one" "$two"

# A fraction of a CPU beside a whole one: the core nobody holds.
whole=$(sub --cpus 1)
half=$(sub --cpus 0.5)
out_ready "$whole"
out_ready "$half"
cw=$(line "$whole" 2) ch=$(line "$half" 2)
[ "$ch" != "$cw" ] && [ "$(line "$half" 1)" = 1 ] || fail "the 0.5 job runs on '$ch' beside the whole job's $cw"
note "a 0.5 job beside the whole one on $cw: $ch"
colony cancel "$half" >/dev/null
colony wait "$half" >/dev/null || true

# The agent dies and comes back: the job on core $cw runs on, and the next --cpus 1 job gets
# the other core.
agent_kill "$agent"
agent_start_again "$agent"
for ((k = 0; k < 300; k++)); do grep -q "job=$whole .*holds cores $cw" "$DIR/$agent.log" && break; sleep 0.1; done
grep -q "job=$whole .*holds cores $cw" "$DIR/$agent.log" || fail "the restarted agent does not say job $whole holds $cw"
after=$(sub --cpus 1)
out_ready "$after"
ca=$(line "$after" 2)
[ "$ca" != "$cw" ] || fail "after an agent restart a job got core $ca, which job $whole holds"
note "after an agent restart: job $whole keeps $cw, a new job gets $ca"
release "$whole" "$after"

# A fraction first, on both cores; a whole job then takes one, and the fraction moves off it.
half=$(sub --cpus 0.5)
out_ready "$half"
[ "$(line "$half" 2)" = 0-1 ] || fail "a 0.5 job alone runs on $(line "$half" 2)"
whole=$(sub --cpus 1)
out_ready "$whole"
cw=$(line "$whole" 2)
pid=$(job_procs "$agent" "$half" | sed -n 1p)
now=$(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" "/proc/${pid%%:*}/status")
[ -n "$now" ] && [ "$now" != 0-1 ] && [ "$now" != "$cw" ] || fail "the 0.5 job runs on '$now' beside the whole job's $cw"
note "a 0.5 job on 0-1 moved to $now when a whole job took $cw"
release "$whole" "$half"
echo "PASS"
