#!/usr/bin/env bash
# sync_per_job.sh - one fsync of the controller's log per job that runs, not one for its start
# and another for its end. A job's start is a commit that nobody is told of (the agent reports
# it again after any reconnect, and with the job's end), so it waits, in the kernel, for the next
# commit that someone waits for: the end's, whose fsync then does not queue behind the start's
# (commit.c). The controller runs under fsync-gate.so, which counts every fsync of the job
# store's log (the gate itself stays open). An array of N short jobs runs one after another on
# one CPU, each job's start and end in turns of their own (`sleep 0.2`): the array's submission
# takes one fsync and each job's end one (its ack and the next launch); before, each start took
# one more, about 2N in all. Then the jobs are all completed, and a SIGKILL and a restart find
# them so.
. "$(dirname "$0")/lib.sh"
[ -f "$COLONY_BIN/fsync-gate.so" ] || fail "fsync-gate.so is not built beside the binaries"
n=24
cluster_up --agents 1 --agent-cpus 1 --agent-mem 256M

cmdline=$(controller_cmdline)
kill_wait "$(cat "$DIR/controller.pid")"
mkdir "$DIR/gate"
controller_start "env LD_PRELOAD=$COLONY_BIN/fsync-gate.so FSYNC_GATE_DIR=$DIR/gate $cmdline"
wait_node_up "${PREFIX}1"

# A commit that starts the log again from its beginning fsyncs its header inside the commit
# (sync_order.sh): a first job takes that one, before the count.
first=$(colony submit --cpus 1 --mem 16M -- /bin/true)
colony wait "$first" >/dev/null || fail "job $first did not complete"
before=$(wc -l <"$DIR/gate/syncs")
array=$(colony submit --array "0-$((n - 1))" --cpus 1 --mem 16M -- /bin/sleep 0.2)
[[ $array =~ ^[0-9]+$ ]] || fail "--array printed '$array', want the array's id alone"
last=$((array + n - 1)) # a task's id is the array's plus its index's place among the indexes
colony wait "$last" >/dev/null || fail "task $((n - 1)) of array $array (job $last) did not complete"
syncs=$(($(wc -l <"$DIR/gate/syncs") - before))
note "$n jobs of 0.2 s in a row: $syncs fsyncs of the log"
((syncs <= n + n / 4 + 2)) || fail "$syncs fsyncs of the log for $n jobs: a job's start takes one of its own"

for ((id = array; id <= last; id++)); do
        [ "$(job_field "$id" state)" = completed ] || fail "job $id: $(job_field "$id" state), not completed"
done
cmdline=$(controller_cmdline)
kill_wait "$(cat "$DIR/controller.pid")"
controller_start "$cmdline"
for ((id = array; id <= last; id++)); do
        [ "$(job_field "$id" state)" = completed ] || fail "after a SIGKILL and a restart, job $id: $(job_field "$id" state)"
done
note "all $n completed, and so after a SIGKILL and a restart"
echo "PASS"
