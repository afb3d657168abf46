#!/usr/bin/env bash
# Launches their agent gives up or dies during. A launch whose record cannot be written never
# runs and leaves nothing behind: the job's shepherd makes its cgroup while the agent writes the
# record (agent/shepherd.h); when the record fails, the agent never gives the go, and the
# shepherd removes the cgroup and exits before the agent reports the job failed. The agent's
# state directory is made immutable (chattr +i) for one submit, then made writable again: the
# agent runs the next job. Then the agent is SIGKILLed while a job's process is between two of
# the steps it tells the agent (its chdir held by strace): the next step's report meets a
# closed pipe, and the job runs all the same; the restarted agent reports it completed.
. "$(dirname "$0")/lib.sh"
command -v chattr >/dev/null || { echo "SKIP: chattr missing"; exit $SKIP; }
command -v strace >/dev/null || { echo "SKIP: strace missing"; exit $SKIP; }

cluster_up --agents 1 --agent-cpus 2 --agent-mem 1G
node=${PREFIX}1
state=$DIR/agent-$node.state
apid=$(agent_pid "$node")
first=$(colony submit --cpus 1 --mem 32M -- true)
wait_state "$first" completed 60

# The attribute goes before the teardown's rm -rf, however the test ends.
test_cleanup() { chattr -i "$state" 2>/dev/null; }
chattr +i "$state" 2>/dev/null || { echo "SKIP: chattr +i fails on $state's file system"; exit $SKIP; }
id=$(colony submit --cpus 1 --mem 32M -- /bin/touch "$DIR/ran")
wait_state "$id" failed 60
error=$(job_field "$id" error)
[[ $error == *"cannot write the job's record"* ]] || fail "job $id failed with '$error', not for its record"
[ ! -e "$DIR/ran" ] || fail "job $id ran though its record was never written"
# Reported failed only once its shepherd was reaped: by then the cgroup must be gone already.
left=$(find /sys/fs/cgroup -maxdepth 8 -type d -name "job-$id" -path "*/colony-$node/*" 2>/dev/null || true)
[ -z "$left" ] || fail "job $id's cgroup outlived its aborted launch: $left"
for child in $(pgrep -P "$apid" || true); do
        comm=$(cat "/proc/$child/comm" 2>/dev/null || true)
        [[ $comm != colony-launch && $comm != colony-shepherd ]] || fail "shepherd $child ($comm) outlived its aborted launch"
done
note "job $id: '$error'; no cgroup, no shepherd left"

chattr -i "$state"
next=$(colony submit --cpus 1 --mem 32M -- true)
wait_state "$next" completed 60

# Only the job's process calls chdir: held 2 s, while the agent is killed.
strace_attach "$apid" "$DIR/strace.out" -f -qq -e trace=chdir -e inject=chdir:delay_enter=2000000
spid=$STRACE_PID
orphan=$(colony submit --cpus 1 --mem 32M -- /bin/sh -c "echo ran >'$DIR/orphan-ran'")
wait_for '[ -n "$(job_procs "$node" "$orphan" 2>/dev/null)" ]' "job $orphan's process in its cgroup" 15
agent_kill "$node"
wait_for '[ -e "$DIR/orphan-ran" ]' \
        "job $orphan's run once its agent was gone (a step's report to the dead agent may have killed it)" 20
kill_wait "$spid"
agent_start_again "$node"
wait_state "$orphan" completed 60
note "job $orphan: ran on while its agent was dead in its launch, reported completed"
