#!/usr/bin/env bash
# slow_agent.sh - slow is not dead. An agent stopped (SIGSTOP) for 30 s, far past the agent
# timeout (2 s here) but within the controller's default node-lost timeout, leaves its node
# not-responding: no new job is placed there and its jobs stay running, one of them ending
# meanwhile. Continued (SIGCONT), the node is up again, the job that ended while it was stopped
# is reported completed, the others run to their end, the job that waited runs there, and no
# job was ever lost or requeued.
. "$(dirname "$0")/lib.sh"

printf '[controller]\nagent_timeout_ms = 2000\n' >"$DIR/controller.conf"
cluster_up --agents 1 --agent-cpus 1 --agent-mem 256M --controller-config "$DIR/controller.conf"
# gated NAME GATE [OPTS...]: a job that runs until the file $DIR/GATE exists
gated() {
        local name=$1 gate=$2
        shift 2
        colony submit --name "$name" --cpus 0.25 --mem 16M "$@" -- /bin/sh -c \
                'until [ -e "$1" ]; do sleep 0.1; done' gated "$DIR/$gate"
}
early=$(gated early gate-early)
late=$(gated late gate-late)
rq=$(gated rq gate-late --requeue)
for id in "$early" "$late" "$rq"; do wait_started "$id"; done
node=$(job_field "$early" node)
pid=$(agent_pid "$node")
# no_job_lost: none of the three ended lost, and none was requeued
no_job_lost() {
        local id
        for id in "$early" "$late" "$rq"; do
                [ "$(job_field "$id" state)" != lost ] || fail "job $id lost: $(job_field "$id" error)"
                [ "$(job_field "$id" attempt)" = 1 ] || fail "job $id requeued: $(job_field "$id" error)"
        done
}

kill -STOP "$pid"
stopped_at=$SECONDS
trap 'rc=$?; set +e; kill -CONT "$pid" 2>/dev/null; (exit $rc); teardown' EXIT
for ((i = 0; i < 300; i++)); do [ "$(node_state "$node")" = not-responding ] && break; sleep 0.1; done
[ "$(node_state "$node")" = not-responding ] || fail "node $node is $(node_state "$node") while its agent is stopped"
for id in "$early" "$late" "$rq"; do
        [ "$(job_field "$id" state)" = running ] || fail "job $id is $(job_field "$id" state) on a not-responding node"
done
note "agent stopped -> node $node not-responding after $((SECONDS - stopped_at)) s, its jobs running"
waiter=$(colony submit --name waiter --cpus 0.25 --mem 16M -- "$COLONY_BIN/colony-stress" sleep 0)
touch "$DIR/gate-early" # ends while its agent is stopped: the shepherd keeps its status
while ((SECONDS - stopped_at < 30)); do
        [ "$(node_state "$node")" = not-responding ] || fail "node $node is $(node_state "$node") $((SECONDS - stopped_at)) s into the stop"
        [ "$(job_field "$waiter" state)" = pending ] || fail "job $waiter is $(job_field "$waiter" state) on a not-responding node"
        no_job_lost
        sleep 1
done
note "30 s stopped: node $node stayed not-responding, job $waiter pending, no job lost"

kill -CONT "$pid"
for ((i = 0; i < 300; i++)); do [ "$(node_state "$node")" = up ] && break; sleep 0.1; done
[ "$(node_state "$node")" = up ] || fail "node $node is $(node_state "$node") after its agent continued"
colony wait "$early" >/dev/null || fail "job $early: $(job_field "$early" state) $(job_field "$early" error)"
colony wait "$waiter" >/dev/null || fail "job $waiter: $(job_field "$waiter" state) $(job_field "$waiter" error)"
[ "$(job_field "$waiter" node)" = "$node" ] || fail "job $waiter ran on $(job_field "$waiter" node)"
touch "$DIR/gate-late"
for id in "$late" "$rq"; do colony wait "$id" >/dev/null || fail "job $id: $(job_field "$id" state) $(job_field "$id" error)"; done
no_job_lost
for id in "$early" "$late" "$rq"; do
        whats=$(colony events --job "$id" --json | jq -r .what | tr '\n' ' ')
        [ "$whats" = "submitted placed started completed " ] || fail "job $id's events: $whats"
done
colony events --json | jq -s -e --arg n "$node" 'any(.[]; .node == $n and .what == "node-not-responding") and
        any(.[]; .node == $n and .what == "node-up" and (.reason | test("responding again")))' >/dev/null ||
        fail "no node-not-responding and node-up events for $node: $(colony events)"
note "agent continued -> node up; jobs $early $late $rq completed as their first attempt, job $waiter ran there"
echo "PASS"
