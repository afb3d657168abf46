#!/usr/bin/env bash
# silent_agent.sh - an agent that stops talking (SIGSTOP: its connection stays open) leaves its
# node not-responding after the agent timeout, its jobs running; after the node-lost timeout the
# node is down and its job lost, while a job submitted with --requeue goes back to pending as
# attempt 2; once the agent talks again the node is back up, both jobs it still
# runs are ended as strays, the requeued job runs again only once its first run is gone (never
# two at once; its launch waits for the first run's cgroup to be removed, which an strace holds),
# and new jobs go there.
# With SILENT_AGENT_HANG=1 each rmdir of rq's first run's cgroup is held 4 s against a launch
# deadline of 3 s, as a cgroupfs that does not answer: attempt 2 waits aside no longer than that
# deadline, and fails naming why.
. "$(dirname "$0")/lib.sh"

hang=${SILENT_AGENT_HANG:-}
printf '[controller]\nagent_timeout_ms = 2000\nnode_lost_timeout_ms = 8000\n' >"$DIR/controller.conf"
cluster_up --agents 1 --agent-cpus 1 --agent-mem 256M --controller-config "$DIR/controller.conf" \
        ${hang:+--launch-timeout-ms 3000}
id=$(colony submit --name quiet --cpus 0.5 --mem 32M -- "$COLONY_BIN/colony-stress" sleep 120)
# each run of rq holds an flock on its lock file while it lives: a second run finding it taken
# records an overlap; the first run sleeps until killed, the second ends at once
rq=$(colony submit --name rq --requeue --cpus 0.25 --mem 16M -- /bin/sh -c '
        exec 9>>"$1/rq.lock"
        flock -n 9 || { echo overlap >>"$1/rq.runs"; exit 1; }
        echo "start $(cat "$1/rq.runs" 2>/dev/null | wc -l)" >>"$1/rq.runs"
        [ "$(wc -l <"$1/rq.runs")" -gt 1 ] || sleep 120' rq "$DIR")
wait_state "$id" running
wait_started "$rq"
node=$(job_field "$id" node)
pid=$(agent_pid "$node")

kill -STOP "$pid"
trap 'rc=$?; set +e; kill -CONT "$pid" 2>/dev/null; (exit $rc); teardown' EXIT
for ((i = 0; i < 300; i++)); do [ "$(node_state "$node")" = not-responding ] && break; sleep 0.1; done
[ "$(node_state "$node")" = not-responding ] || fail "node $node is $(node_state "$node") while its agent is silent"
note "silent agent -> node not-responding"
wait_state "$id" lost 30
[ "$(node_state "$node")" = down ] || fail "node $node is $(node_state "$node") while its agent is silent"
note "silent agent -> node down, job $id: $(job_field "$id" error)"
[ "$(job_field "$rq" state)" = pending ] || fail "requeue job $rq is $(job_field "$rq" state), not pending"
[ "$(job_field "$rq" attempt)" = 2 ] || fail "requeue job $rq is at attempt $(job_field "$rq" attempt)"
colony show "$rq" | grep -q '^attempt: *2 ' || fail "colony show does not give the attempt"
colony events --job "$rq" --json | jq -e 'select(.what == "requeued") | .reason | test("timed out")' >/dev/null ||
        fail "no requeued event for job $rq"
note "requeue job $rq -> pending, attempt 2: $(job_field "$rq" error)"

# Each rmdir of the agent's held 0.3 s (its sync thread removes the strays' cgroups, seven v1
# hierarchies each): attempt 2 of rq comes while its first run's cgroup is still there, and must
# wait for it to go, not make its own meanwhile and find the old one ("File exists").
if [ -z "$hang" ]; then
        strace_attach "$pid" "$DIR/strace.out" -f -qq -e trace=rmdir -e inject=rmdir:delay_enter=300000
else # rq's cgroups alone: the other stray's go at once, and its CPU with them
        held=()
        while read -r d; do held+=(-P "$d"); done < <(find /sys/fs/cgroup -maxdepth 8 -type d -path "*/colony-$node/job-$rq")
        [ ${#held[@]} -gt 0 ] || fail "no cgroup of job $rq found"
        strace_attach "$pid" "$DIR/strace.out" -f -qq "${held[@]}" -e trace=rmdir -e inject=rmdir:delay_enter=4000000
fi
kill -CONT "$pid"
for ((i = 0; i < 300; i++)); do [ "$(node_state "$node")" = up ] && break; sleep 0.1; done
[ "$(node_state "$node")" = up ] || fail "node $node is $(node_state "$node") after its agent resumed"
[ "$(job_field "$id" state)" = lost ] || fail "job $id changed from lost to $(job_field "$id" state)"
if [ -n "$hang" ]; then
        wait_state "$rq" failed 60
        err=$(job_field "$rq" error)
        [ "$err" = "its earlier run's cgroup was still being removed after 3 s" ] || fail "job $rq: unexpected error: $err"
        grep -q "job=$rq .*: waits for its earlier run's cgroup to be removed" "$DIR/$node.log" ||
                fail "attempt 2 of job $rq never waited for its first run's cgroup"
        [ "$(cat "$DIR/rq.runs")" = "start 0" ] || fail "job $rq's runs: $(cat "$DIR/rq.runs")"
        kill_wait "$STRACE_PID"
        note "cgroupfs held: attempt 2 of job $rq waited aside, then failed: $err"
        echo "PASS"
        exit 0
fi
colony wait "$rq" >/dev/null || fail "requeue job $rq: $(job_field "$rq" state) $(job_field "$rq" error)"
[ "$(job_field "$rq" attempt)" = 2 ] || fail "requeue job $rq ended at attempt $(job_field "$rq" attempt)"
[ "$(cat "$DIR/rq.runs")" = "$(printf 'start 0\nstart 1')" ] || fail "job $rq's runs: $(cat "$DIR/rq.runs")"
grep -q "job=$rq .*: waits for its earlier run's cgroup to be removed" "$DIR/$node.log" ||
        fail "attempt 2 of job $rq never waited for its first run's cgroup"
kill_wait "$STRACE_PID"
whats=$(colony events --job "$rq" --json | jq -r .what | tr '\n' ' ')
[ "$whats" = "submitted placed started requeued placed started completed " ] || fail "job $rq's events: $whats"
note "requeue job $rq: its first run stopped as a stray, then attempt 2 ran alone: $whats"
next=$(colony submit --name next --cpus 1 --mem 32M -- "$COLONY_BIN/colony-stress" sleep 0)
colony wait "$next" >/dev/null || fail "job $next on the resumed node: $(job_field "$next" state)"
note "agent resumed -> node up; a job needing its whole CPU ran there, so the stray was ended"
echo "PASS"
