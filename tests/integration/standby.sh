#!/usr/bin/env bash
# The standby shepherd (agent/shepherd.h): once idle, the agent forks the next launch's shepherd
# ahead, and the next job runs in it. Checked: a job's recorded shepherd is the standby seen
# before its submit, and a script of 30 KB and an environment variable of 20 KB arrive whole
# through its pipe; a request the pipe cannot hold (an environment of 100 KB) gets a shepherd
# forked as before and runs all the same, the standby kept for the next; a standby killed from
# outside is reaped, and the next job runs; the agent's SIGKILL ends its standby, and the
# restarted agent forks its own.
. "$(dirname "$0")/lib.sh"

cluster_up --agents 1 --agent-cpus 2 --agent-mem 1G
node=${PREFIX}1
state=$DIR/agent-$node.state

# recorded_shepherd ID: the shepherd pid in a running job's record.
recorded_shepherd() { jq -r .shepherd_pid "$state/job-$1.json"; }

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
id=$(FILLER=$filler colony submit --cpus 1 --mem 32M -o "$DIR/out-%j" "$DIR/job.sh")
wait_state "$id" running 60
[ "$(recorded_shepherd "$id")" = "$standby" ] || fail "job $id's shepherd is $(recorded_shepherd "$id"), not standby $standby"
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

# A standby killed from outside (the one kept): reaped, and the next job runs.
kill -9 "$standby"
wait_for "[ ! -e /proc/$standby ]" "the killed standby $standby reaped" 10
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
