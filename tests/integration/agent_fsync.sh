#!/usr/bin/env bash
# The agent's loop makes no fsync: on a loaded host one fsync of the state directory took 0.62 s
# (docs/benchmarks.md), and the loop's heartbeats wait for its turn. A job's record needs none (a
# restarted agent finds it in the page cache); a finished job's report is fsynced by the agent's
# sync thread, and sent only after, so that a result the controller may act on is one a rebooted
# host keeps until acknowledged. Nor do the shepherds fsync the exit file they write: it serves a
# restarted agent as the record does, and its two fsyncs stood between each job's end and the
# agent hearing of it. Watched with strace on the running agent's threads and its shepherds.
. "$(dirname "$0")/lib.sh"
command -v strace >/dev/null || { echo "SKIP: strace missing"; exit $SKIP; }

cluster_up --agents 1 --agent-cpus 4 --agent-mem 1G
node=${PREFIX}1
apid=$(cat "$DIR/agent-$node.pid")
state=$DIR/agent-$node.state
# Every thread of the agent and (-f) the shepherds it forks; -f also makes strace begin each
# line with the thread's id.
strace_attach "$apid" "$DIR/strace.out" -f -qq -y -s 400 -e trace=fsync,fdatasync,syncfs,sync,sendto,write
spid=$STRACE_PID

ids=()
for ((i = 0; i < 4; i++)); do ids+=("$(colony submit --cpus 0.2 --mem 32M -- true)"); done
long=$(colony submit --cpus 0.2 --mem 32M -- sleep 300)
wait_state "$long" running 60
colony cancel "$long" >/dev/null # rewrites the job's record
for id in "${ids[@]}"; do wait_state "$id" completed 60; done
wait_state "$long" cancelled 60
kill "$spid"
wait "$spid" 2>/dev/null || true

# Without the sync thread, the loop made 18-22 here (two per record, two per report).
loop_sync="^$apid +(fsync|fdatasync|syncfs|sync)\\("
loop_syncs=$(grep -cE "$loop_sync" "$DIR/strace.out" || true)
[ "$loop_syncs" = 0 ] || fail "the loop made $loop_syncs fsyncs: $(grep -E "$loop_sync" "$DIR/strace.out" | head -n 3)"
for id in "${ids[@]}" "$long"; do
        synced=$(grep -nE "^[0-9]+ +fsync\([0-9]+<$state/job-$id\.done>" "$DIR/strace.out" | head -n 1 | cut -d: -f1 || true)
        sent=$(grep -n "<socket:" "$DIR/strace.out" | grep -F "\\\"type\\\":\\\"finished\\\",\\\"id\\\":$id," |
                head -n 1 | cut -d: -f1 || true)
        [ -n "$synced" ] || fail "job $id: its report was never fsynced"
        [ -n "$sent" ] || fail "job $id: its finished report was not seen going out"
        [ "$synced" -lt "$sent" ] || fail "job $id: its report went out (line $sent) before its fsync (line $synced)"
done
# Before, each shepherd fsynced its exit file and then the state directory.
exit_syncs=$(grep -cE "^[0-9]+ +fsync\([0-9]+<$state/[^>]*\.exit>" "$DIR/strace.out" || true)
[ "$exit_syncs" = 0 ] || fail "the shepherds made $exit_syncs fsyncs of exit files"
syncers=$(grep -E "^[0-9]+ +fsync\([0-9]+<$state/job-[0-9]+\.done>" "$DIR/strace.out" | awk '{print $1}' | sort -u)
dir_syncs=$(grep -E "^[0-9]+ +fsync\([0-9]+<$state>" "$DIR/strace.out" | awk '{print $1}' | grep -cvxF "$syncers" || true)
[ "$dir_syncs" = 0 ] || fail "$dir_syncs fsyncs of the state directory by others than the sync thread"
note "no fsync on the loop nor in the shepherds; the reports of jobs ${ids[*]} $long fsynced by the sync thread, then sent"
echo "PASS"
