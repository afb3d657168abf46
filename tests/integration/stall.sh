#!/usr/bin/env bash
# A job whose --output is on a file system that never answers (a FUSE mount whose daemon never
# reads its requests, as a dead NFS server or a hostile user's FUSE would) fails alone, naming
# the path, once the agent's launch deadline passes; meanwhile the agent's loop keeps
# heartbeating, so its node stays up and the other jobs on it run and complete. So does a
# follower's read of a job's output that hangs there (colony attach).
. "$(dirname "$0")/lib.sh"
[ -c /dev/fuse ] && grep -qw fuse /proc/filesystems || { echo "SKIP: no FUSE here"; exit $SKIP; }

MNT=$(mktemp -d /tmp/colony-stall-XXXXXX)
FUSE_PID=
# Before lib.sh's teardown: nothing may touch the mount once its cluster is gone.
stall_teardown() {
        local rc=$?
        set +e
        [ -n "$FUSE_PID" ] && kill -9 "$FUSE_PID" 2>/dev/null && wait "$FUSE_PID" 2>/dev/null
        if grep -q " $MNT fuse" /proc/mounts; then
                for c in /sys/fs/fuse/connections/*/abort; do [ -e "$c" ] && echo 1 >"$c"; done 2>/dev/null
                umount -l "$MNT"
        fi
        rmdir "$MNT"
        (exit $rc)
        teardown
}
trap stall_teardown EXIT

"$COLONY_BIN/fuse-stall" "$MNT" >"$DIR/fuse.out" 2>&1 &
FUSE_PID=$!
for ((i = 0; i < 100; i++)); do grep -q ready "$DIR/fuse.out" && break; sleep 0.1; done
grep -q ready "$DIR/fuse.out" || { cat "$DIR/fuse.out"; echo "SKIP: cannot mount FUSE here"; exit $SKIP; }

cluster_up --agents 1 --agent-cpus 2 --agent-mem 1G --launch-timeout-ms 3000
node=${PREFIX}1
first=$(colony submit --name before --cpus 0.2 --mem 32M -- sleep 3)
stalled=$(colony submit --name stalled --cpus 0.2 --mem 32M --output "$MNT/out" -- true)
after=$(colony submit --name after --cpus 0.2 --mem 32M -- true)

# The deadline is 3 s; 60 s is for a slow, busy host. Without the fix the agent's loop hangs on
# the stalled launch for good: no heartbeat, the node goes down and every job on it is lost.
wait_state "$after" completed 60
wait_state "$first" completed 60
wait_state "$stalled" failed 60
err=$(job_field "$stalled" error)
case $err in *"$MNT/out"*) ;; *) fail "the stalled job's error does not name the path: $err" ;; esac
case $err in "launch stalled for 3 s at: open $MNT/out") ;; *) fail "unexpected error: $err" ;; esac
# The loop never waited on the stalled launch: a job submitted after it ended before it failed.
[ "$(job_field "$after" end_usec)" -lt "$(job_field "$stalled" end_usec)" ] ||
        fail "job $after ended only after the stalled launch gave up"
[ "$(node_state "$node")" = up ] ||
        fail "node $node is not up"
downs=$(colony events --since 0 --limit 1000 --json | jq -r --arg n "$node" 'select(.node == $n) | .what' |
        grep -cE 'down|disconnected' || true)
[ "$downs" = 0 ] || fail "node $node went down or lost its link $downs times while a launch stalled"
note "stalled job $stalled failed alone: $err; jobs $first and $after completed, node $node stayed up"

# An agent killed while a launch hangs: the next one adopts the job, sees that its process has
# not exec'd, and still fails it at the deadline counted from its start. Without that the
# adopted job would hang for good, listed as running.
stalled2=$(colony submit --name stalled2 --cpus 0.2 --mem 32M --output "$MNT/out2" -- true)
# Killed once the launch has begun (the shepherd told to go, logged right after): killed
# between the record and that, the shepherd never launches and the job is lost instead.
wait_for 'grep -q "job=$stalled2 .*: launching" "$DIR/$node.log"' "job $stalled2's launch" 30
agent_kill "$node"
agent_start_again "$node"
wait_state "$stalled2" failed 60
err2=$(job_field "$stalled2" error)
case $err2 in "launch stalled for 3 s at: a step begun before the agent restarted") ;;
*) fail "job $stalled2, adopted while its launch hung: unexpected error: $err2" ;; esac
note "adopted while its launch hung, job $stalled2 failed too: $err2"

# The same, the launch handed to the agent's standby shepherd, which is stopped before it reads
# the request (a loaded host): the next agent finds the recorded shepherd still named
# colony-standby, gives the launch its deadline all the same, and fails it once it stalls.
# Taken for finished instead, the launch would hang for good, listed as running.
agent=$(agent_pid "$node")
standby=$(wait_standby "$agent")
kill -STOP "$standby"
test_cleanup() { kill -CONT "$standby" 2>/dev/null; }
stalled3=$(colony submit --name stalled3 --cpus 0.2 --mem 32M --output "$MNT/out3" -- true)
wait_for 'grep -q "job=$stalled3 .*: launching" "$DIR/$node.log"' "job $stalled3's launch" 30
[ "$(cat "/proc/$standby/comm")" = colony-standby ] || fail "standby $standby read its request while stopped"
agent_kill "$node"
agent_start_again "$node"
wait_for 'grep -q "job=$stalled3 .*its launch has not exec.d yet" "$DIR/$node.log"' \
        "the next agent's taking job $stalled3's launch for unfinished" 60
kill -CONT "$standby"
wait_state "$stalled3" failed 60
err3=$(job_field "$stalled3" error)
case $err3 in "launch stalled for 3 s at: a step begun before the agent restarted") ;;
*) fail "job $stalled3, adopted before its standby read it: unexpected error: $err3" ;; esac
note "adopted before its standby read the request, job $stalled3 failed too: $err3"

# A follower (colony attach) of a running job whose output path leads, by then, into the mount
# that never answers: the read hangs on a thread of the agent, never in its loop, so the node
# stays up and jobs start and complete meanwhile.
mkdir "$DIR/via"
followed=$(colony submit --name followed --cpus 0.2 --mem 32M --output "$DIR/via/out" -- sh -c 'echo hi; exec sleep 300')
for ((i = 0; i < 600; i++)); do [ "$(cat "$DIR/via/out" 2>/dev/null)" = hi ] && break; sleep 0.1; done
[ "$(cat "$DIR/via/out" 2>/dev/null)" = hi ] || fail "job $followed wrote nothing (is $(job_field "$followed" state))"
# the job keeps its open file; the path leads into the mount now (no ln -f: it would stat the
# mount, and hang)
mv "$DIR/via" "$DIR/real"
ln -s "$MNT" "$DIR/via"
agent=$(agent_pid "$node")
threads() { ls "/proc/$agent/task" | wc -l; }
before=$(threads)
"$COLONY_BIN/colony" attach "$followed" >"$DIR/attach.out" 2>&1 &
attach=$!
STARTED_PIDS+=("$attach")
for ((i = 0; i < 600; i++)); do [ "$(threads)" -gt "$before" ] && break; sleep 0.1; done
[ "$(threads)" -gt "$before" ] || fail "no reader thread appeared in the agent for the attach ($before threads): $(cat "$DIR/attach.out")"
late=$(colony submit --name late --cpus 0.2 --mem 32M -- true)
wait_state "$late" completed 60
kill -0 "$attach" 2>/dev/null || fail "the attach ended: $(cat "$DIR/attach.out")"
[ ! -s "$DIR/attach.out" ] || fail "the attach printed: $(cat "$DIR/attach.out")"
[ "$(node_state "$node")" = up ] || fail "node $node is not up while a follower's read hangs"
kill "$attach"
colony cancel "$followed" >/dev/null
wait_state "$followed" cancelled 60
note "a follower's read of job $followed hung in the mount on a thread; job $late completed meanwhile, node $node stayed up"
echo "PASS"
