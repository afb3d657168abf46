#!/usr/bin/env bash
# agent_auth.sh - agents prove they know the cluster secret without sending it: an agent with
# the wrong secret is refused and stops, a replayed or forged hello is refused, and the node
# list never changes for either.
. "$(dirname "$0")/lib.sh"

cluster_up --agents 1 --agent-cpus 1 --agent-mem 256M
port=$(cat "$DIR/controller.port")
nodes() { colony nodes --json | jq -r '[.nodes[].name] | join(" ")'; }
before=$(nodes)

# An agent whose secret differs: the controller refuses its hello, the agent gives up.
printf 'not-the-secret\n' >"$DIR/wrong-secret"
chmod 600 "$DIR/wrong-secret"
"$COLONY_BIN/colony-agent" --name "${PREFIX}intruder" --controller "127.0.0.1:$port" \
        --secret-file "$DIR/wrong-secret" --cpus 1 --mem 64M --scope "$(agent_unit "${PREFIX}intruder")" \
        >"$DIR/intruder.log" 2>&1 &
intruder=$!
STARTED_PIDS+=("$intruder")
for ((i = 0; i < 100; i++)); do kill -0 "$intruder" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$intruder" 2>/dev/null; then fail "the agent with a wrong secret is still running"; fi
set +e; wait "$intruder"; rc=$?; set -e
[ "$rc" != 0 ] || fail "the agent with a wrong secret exited 0"
grep -q "wrong secret" "$DIR/intruder.log" || fail "the intruder's log does not say why: $(tail -n 3 "$DIR/intruder.log")"
note "wrong secret -> agent exit $rc: $(grep -m1 'refused' "$DIR/intruder.log" | cut -c25-)"

# A hello made for another connection (any nonce and proof but this link's) is refused.
forged='{"v":1,"type":"hello","name":"forger","nonce":"'$(printf 'ab%.0s' $(seq 32))'","proof":"'$(printf 'cd%.0s' $(seq 32))'","mcpu":1000,"mem":1048576,"pids":0,"cgroup_mode":"v1","cgroup_root":"/x","running":[]}'
out=$("$COLONY_BIN/proto-poke" "127.0.0.1:$port" json "$forged")
[ "$(head -n 1 <<<"$out" | jq -r .type)" = challenge ] || fail "the controller did not speak first: $out"
[ "$(tail -n 1 <<<"$out" | jq -r .type)" = error ] || fail "a forged hello was not refused: $out"
note "forged hello -> $(tail -n 1 <<<"$out" | jq -r .error)"
old='{"v":1,"type":"hello","name":"forger","secret":"'"$(cat "$DIR/secret")"'","mcpu":1000,"mem":1048576,"pids":0,"cgroup_mode":"v1","cgroup_root":"/x","running":[]}'
out=$("$COLONY_BIN/proto-poke" "127.0.0.1:$port" json "$old")
[ "$(tail -n 1 <<<"$out" | jq -r .type)" = error ] || fail "a hello with the secret in clear was accepted: $out"
note "the secret in clear -> $(tail -n 1 <<<"$out" | jq -r .error)"

[ "$(nodes)" = "$before" ] || fail "nodes changed: '$(nodes)', was '$before'"
id=$(colony submit --cpus 1 --mem 16M -- "$COLONY_BIN/colony-stress" sleep 0)
colony wait "$id" >/dev/null || fail "the real agent stopped working"
echo "PASS"
