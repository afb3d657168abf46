#!/usr/bin/env bash
# The standby shepherd (agent/shepherd.h): once idle, the agent forks the next launch's shepherd
# ahead, and the next job runs in it. Checked: a job's recorded shepherd is the standby seen
# before its submit, and a script of 30 KB and an environment variable of 20 KB arrive whole
# through its pipe; a request the pipe cannot hold (an environment of 100 KB) gets a shepherd
# forked as before and runs all the same, the standby kept for the next; a standby killed from
# outside is reaped, and the next job runs; the agent's SIGKILL ends its standby, and the
# restarted agent forks its own.
# On v1 the standby starts its next job's process ahead, in a spare cgroup beside the last job's
# (standby_ahead_run): checked, that process waits in spare-<standby> in every hierarchy; the
# job then runs in job-<id> in every hierarchy with the spare gone; a job of another department
# runs in that department's cgroup, the spare removed; a standby killed leaves no spare, nor
# does a shepherd killed while it launches a job of another department.
. "$(dirname "$0")/lib.sh"

cluster_up --agents 1 --agent-cpus 2 --agent-mem 1G
node=${PREFIX}1
state=$DIR/agent-$node.state

# recorded_shepherd ID: the shepherd pid in a running job's record. The controller calls a job
# running once placed, before the agent's record (CI under load saw it 21 ms later); started,
# its record is on disk.
recorded_shepherd() {
        wait_started "$1" 30 >&2
        jq -r .shepherd_pid "$state/job-$1.json"
}

v1=0
[ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] || v1=1
# cgroups_of PID: the lines of /proc/PID/cgroup in this agent's subtree.
cgroups_of() { grep "/colony-$node/" "/proc/$1/cgroup" || true; }
# in_everywhere PID REL: PID is in the subtree's REL in every v1 hierarchy colony uses (five at least).
in_everywhere() {
        local lines
        lines=$(cgroups_of "$1")
        [ "$(grep -c . <<<"$lines")" -ge 5 ] && ! grep -v "/colony-$node/$2\$" <<<"$lines" >/dev/null
}
# spares_of STANDBY: the spare cgroups of that standby left in any hierarchy.
spares_of() { find /sys/fs/cgroup -maxdepth 8 -type d -name "spare-$1" 2>/dev/null || true; }
# ahead_child STANDBY: the process it started ahead.
ahead_child() { pgrep -P "$1" || true; }

apid=$(agent_pid "$node")
first=$(colony submit --cpus 1 --mem 32M -- true)
wait_state "$first" completed 60

# A job whose output proves both texts came whole: the script prints the length of the line it
# carries and of the variable, then waits for the gate, so that its record can be read.
standby=$(wait_standby "$apid")
filler=$(head -c 20000 /dev/zero | tr '\0' x)
{
        echo '#!/bin/sh'
        echo "line='$(head -c 30000 /dev/zero | tr '\0' y)'"
        echo 'echo "script ${#line} env ${#FILLER}"'
        echo "while [ ! -e '$DIR/gate' ]; do sleep 0.05; done"
} >"$DIR/job.sh"
if [ "$v1" = 1 ]; then
        child=$(ahead_child "$standby")
        [ -n "$child" ] && in_everywhere "$child" "spare-$standby" ||
                fail "standby $standby: no process waits in spare-$standby: ${child:-none}: $(cgroups_of "${child:-self}")"
fi
id=$(FILLER=$filler colony submit --cpus 1 --mem 32M -o "$DIR/out-%j" "$DIR/job.sh")
wait_state "$id" running 60
[ "$(recorded_shepherd "$id")" = "$standby" ] || fail "job $id's shepherd is $(recorded_shepherd "$id"), not standby $standby"
if [ "$v1" = 1 ]; then
        pid=$(job_procs "$node" "$id" | awk 'NR == 1')
        pid=${pid%%:*}
        [ "$pid" = "$child" ] || fail "job $id runs as ${pid:-nothing}, not as $child, started ahead"
        in_everywhere "$pid" "job-$id" || fail "job $id's process is not in job-$id everywhere: $(cgroups_of "$pid")"
        [ -z "$(spares_of "$standby")" ] || fail "job $id: spare-$standby is left: $(spares_of "$standby")"
        note "job $id's process $pid, started ahead in spare-$standby, runs in job-$id in every hierarchy"
fi
# The agent asks for a short time slice, which its shepherds inherit; the job gets the kernel's
# default back (agent/schedslice.h). Where the kernel says (scheduler debug) and honours it.
slice() { awk '/^se.slice/ { print $3 }' "/proc/$1/sched" 2>/dev/null || true; }
pid=$(job_procs "$node" "$id" | awk 'NR == 1')
pid=${pid%%:*}
if [ "$(slice "$apid")" = 100000 ]; then
        [ "$(slice "$standby")" = 100000 ] || fail "standby $standby's slice is $(slice "$standby"), not the agent's"
        [ "$(slice "$pid")" = "$(slice $$)" ] || fail "job $id's slice is $(slice "$pid"), not the default $(slice $$)"
        note "job $id schedules with the default slice ($(slice "$pid") ns), its shepherd with the agent's 100000"
fi
touch "$DIR/gate"
wait_state "$id" completed 60
[ "$(cat "$DIR/out-$id")" = "script 30000 env 20000" ] || fail "job $id printed '$(cat "$DIR/out-$id")'"
note "job $id ran in standby $standby, its 30 KB script and 20 KB variable whole"

# 100 KB of environment: more than the standby's pipe takes at once.
standby=$(wait_standby "$apid")
rm -f "$DIR/gate"
big=$(head -c 100000 /dev/zero | tr '\0' z)
id=$(BIG=$big colony submit --cpus 1 --mem 32M -o "$DIR/out-%j" -- /bin/sh -c \
        "echo \${#BIG}; while [ ! -e '$DIR/gate' ]; do sleep 0.05; done")
wait_state "$id" running 60
shepherd=$(recorded_shepherd "$id")
[ "$shepherd" != "$standby" ] || fail "job $id's 100 KB request went through standby $standby"
[ "$(standby_of "$apid")" = "$standby" ] || fail "standby $standby not kept for the next job: $(standby_of "$apid")"
touch "$DIR/gate"
wait_state "$id" completed 60
[ "$(cat "$DIR/out-$id")" = 100000 ] || fail "job $id printed '$(cat "$DIR/out-$id")'"
note "job $id: its 100 KB request got shepherd $shepherd forked for it; standby $standby kept"

# A job of another department than the last one's: its cgroup is made there, and the spare
# beside the last job goes.
standby=$(wait_standby "$apid")
rm -f "$DIR/gate"
id=$(colony submit --cpus 1 --mem 32M --group physics -- /bin/sh -c "while [ ! -e '$DIR/gate' ]; do sleep 0.05; done")
wait_state "$id" running 60
[ "$(recorded_shepherd "$id")" = "$standby" ] || fail "job $id's shepherd is $(recorded_shepherd "$id"), not standby $standby"
if [ "$v1" = 1 ]; then
        pid=$(awk 'NR == 1' "$(agent_cgroup pids "$node" "dept-physics/job-$id")/cgroup.procs")
        in_everywhere "$pid" "dept-physics/job-$id" ||
                fail "job $id's process is not in dept-physics/job-$id everywhere: $(cgroups_of "$pid")"
        wait_for '[ -z "$(spares_of "$standby")" ]' "the removal of spare-$standby, beside another department" 10
fi
touch "$DIR/gate"
wait_state "$id" completed 60
note "job $id of department physics ran in its department's cgroup; standby $standby's spare beside the last job's removed"

# A shepherd killed while it launches a job of another department, its child held by strace in
# the mkdir there: the spare it had yet to remove goes all the same (the agent's).
if [ "$v1" = 1 ] && command -v strace >/dev/null; then
        standby=$(wait_standby "$apid")
        strace_attach "$apid" "$DIR/strace-spare.out" -f -qq -e trace=mkdir,mkdirat \
                -e inject=mkdir,mkdirat:delay_enter=300000000:when=1
        id=$(colony submit --cpus 1 --mem 32M --group chemistry -- true)
        wait_for "grep -q dept-chemistry '$DIR/strace-spare.out'" "job $id's department held in mkdir" 30
        kill -9 "$standby"
        kill_wait "$STRACE_PID" # the child, let go, dies with its parent (PR_SET_PDEATHSIG)
        wait_state "$id" failed 60
        wait_for '[ -z "$(spares_of "$standby")" ]' "the removal of spare-$standby, its shepherd killed" 10
        note "job $id: shepherd $standby killed as it made another department's cgroup; its spare removed"
fi

# A standby killed from outside (the one kept): reaped, and the next job runs.
standby=$(wait_standby "$apid" "$standby")
kill -9 "$standby"
wait_for "[ ! -e /proc/$standby ]" "the killed standby $standby reaped" 10
[ "$v1" = 0 ] || wait_for '[ -z "$(spares_of "$standby")" ]' "the removal of the killed standby's spare-$standby" 10
id=$(colony submit --cpus 1 --mem 32M -- true)
wait_state "$id" completed 60
note "standby $standby killed: reaped, job $id ran"

# The agent's SIGKILL ends its standby; the next agent forks its own and runs jobs in it.
standby=$(wait_standby "$apid")
agent_kill "$node"
wait_for "ended $standby" "standby $standby's end with its agent" 10
agent_start_again "$node"
apid=$(agent_pid "$node")
wait_node_up "$node"
standby=$(wait_standby "$apid")
rm -f "$DIR/gate"
id=$(colony submit --cpus 1 --mem 32M -- /bin/sh -c "while [ ! -e '$DIR/gate' ]; do sleep 0.05; done")
wait_state "$id" running 60
[ "$(recorded_shepherd "$id")" = "$standby" ] || fail "job $id's shepherd is $(recorded_shepherd "$id"), not the new agent's standby $standby"
touch "$DIR/gate"
wait_state "$id" completed 60
note "the killed agent's standby ended with it; the restarted agent's standby $standby ran job $id"

# The agent forks no shepherd itself: its fork server does (agent/forkserver.h), with
# CLONE_PARENT, so that each is the agent's child all the same. Checked: the standby's parent is
# the agent; strace of the agent's threads sees no fork over three launches (a job of 100 KB
# among them would: the server takes 64 KiB); the server killed, the jobs still run, and a
# standby later a new server is there, its loss logged.
forker=$(forker_of "$apid")
[ -n "$forker" ] || fail "agent $apid has no fork server (colony-forker)"
standby=$(wait_standby "$apid")
[ "$(ps -o ppid= -p "$standby" | tr -d ' ')" = "$apid" ] ||
        fail "standby $standby's parent is $(ps -o ppid= -p "$standby"), not the agent $apid"
traced=()
for t in /proc/"$apid"/task/*; do traced+=(-p "${t##*/}"); done
strace -qq -e trace=clone,clone3,fork,vfork -o "$DIR/strace-clone.out" "${traced[@]}" &
STRACE_PID=$!
STARTED_PIDS+=("$STRACE_PID")
wait_for "[ \"\$(awk '/^TracerPid:/ { print \$2 }' /proc/$apid/status)\" = $STRACE_PID ]" "strace on agent $apid" 30
for ((i = 0; i < 3; i++)); do
        id=$(colony submit --cpus 1 --mem 32M -- true)
        wait_state "$id" completed 60
        wait_standby "$apid" >/dev/null # forked after the launch: within the trace
done
kill_wait "$STRACE_PID"
! grep -E "clone|fork" "$DIR/strace-clone.out" >/dev/null ||
        fail "the agent forked itself over three launches: $(grep -E "clone|fork" "$DIR/strace-clone.out" | head -n 3)"
note "three launches and their standbys, no fork of the agent's own; standby $standby the agent's child"

kill -9 "$forker"
for ((i = 0; i < 2; i++)); do
        id=$(colony submit --cpus 1 --mem 32M -- true)
        wait_state "$id" completed 60
done
wait_for "[ -n \"\$(forker_of $apid)\" ] && [ \"\$(forker_of $apid)\" != $forker ]" "a fork server started again" 30
grep -q "fork server $forker had gone; started another" "$DIR/$node.log" ||
        fail "the fork server's loss is not logged: $(grep -i "fork server" "$DIR/$node.log" | tail -n 2)"
note "fork server $forker killed: jobs ran, and fork server $(forker_of "$apid") took its place"
