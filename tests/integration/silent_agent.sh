#!/usr/bin/env bash
# silent_agent.sh - an agent that stops talking (SIGSTOP: its connection stays open) is marked
# down after the agent timeout and its job lost; once it talks again the node is back up, the
# job it still runs is ended as a stray, and new jobs go there.
. "$(dirname "$0")/lib.sh"

cluster_up --agents 1 --agent-cpus 1 --agent-mem 256M
id=$(colony submit --name quiet --cpus 0.5 --mem 32M -- "$COLONY_BIN/colony-stress" sleep 120)
wait_state "$id" running
node=$(job_field "$id" node)
pid=$(agent_pid "$node")
node_state() { colony nodes --json | jq -r --arg n "$node" '.nodes[] | select(.name == $n) | .state'; }

kill -STOP "$pid"
trap 'rc=$?; set +e; kill -CONT "$pid" 2>/dev/null; (exit $rc); teardown' EXIT
wait_state "$id" lost 30
[ "$(node_state)" = down ] || fail "node $node is $(node_state) while its agent is silent"
note "silent agent -> node down, job $id: $(job_field "$id" error)"

kill -CONT "$pid"
for ((i = 0; i < 300; i++)); do [ "$(node_state)" = up ] && break; sleep 0.1; done
[ "$(node_state)" = up ] || fail "node $node is $(node_state) after its agent resumed"
[ "$(job_field "$id" state)" = lost ] || fail "job $id changed from lost to $(job_field "$id" state)"
next=$(colony submit --name next --cpus 1 --mem 32M -- "$COLONY_BIN/colony-stress" sleep 0)
colony wait "$next" >/dev/null || fail "job $next on the resumed node: $(job_field "$next" state)"
note "agent resumed -> node up; a job needing its whole CPU ran there, so the stray was ended"
echo "PASS"
