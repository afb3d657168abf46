#!/usr/bin/env bash
# Bad input gets a clear one-line error, changes nothing, and the controller keeps serving.
. "$(dirname "$0")/lib.sh"
# a vanished agent's job is lost after the node-lost timeout: seconds here, not the default 5 min
printf '[controller]\nagent_timeout_ms = 2000\nnode_lost_timeout_ms = 4000\n' >"$DIR/controller.conf"
cluster_up --agents 2 --agent-cpus 2 --agent-mem 1G --controller-config "$DIR/controller.conf"
POKE="$COLONY_BIN/proto-poke"
njobs() { colony queue --all --json | jq '.jobs | length'; }

running=$(colony submit --name survivor --cpus 0.5 --mem 32M -- "$COLONY_BIN/colony-stress" sleep 300)
wait_state "$running" running
before=$(njobs)

# expect_error TEXT-IN-ERROR MODE ARG: the controller answers with an error naming the problem.
expect_error() {
        local want=$1 reply
        reply=$("$POKE" "$COLONY_SOCKET" "$2" "$3") || fail "no reply to $2 '$3'"
        [ "$(jq -r .type <<<"$reply")" = error ] || fail "reply to '$3' is not an error: $reply"
        grep -qi -- "$want" <<<"$(jq -r .error <<<"$reply")" || fail "error for '$3' lacks '$want': $reply"
        [ "$(jq -r .error <<<"$reply" | wc -l)" = 1 ] || fail "error is not one line: $reply"
        note "$2 $(head -c 60 <<<"$3") -> $(jq -r .error <<<"$reply")"
}
expect_error "json" json '{"v":1,"type":'
expect_error "json" json 'not json at all'
expect_error "exceeds" header 2000000
expect_error "version" json '{"v":2,"type":"queue"}'
expect_error "unknown" json '{"v":1,"type":"frobnicate"}'
expect_error "bogus" json '{"v":1,"type":"queue","bogus":1}'
expect_error "mem" json '{"v":1,"type":"submit","argv":["/bin/true"],"cwd":"/","mcpu":1000,"mem":-1}'
expect_error "argv" json '{"v":1,"type":"submit","argv":[],"cwd":"/","mcpu":1000,"mem":1024}'
expect_error "no job" json '{"v":1,"type":"show","id":999999}'

# expect_cli_error EXIT TEXT ARGS...: the CLI refuses with one line and the given exit code.
expect_cli_error() {
        local code=$1 want=$2 rc=0 out; shift 2
        out=$(colony "$@" 2>&1) || rc=$?
        [ "$rc" = "$code" ] || fail "colony $* exited $rc, want $code: $out"
        grep -qi -- "$want" <<<"$out" || fail "colony $*: message lacks '$want': $out"
        [ "$(wc -l <<<"$out")" = 1 ] || fail "colony $*: not one line: $out"
        note "colony $* -> $out"
}
expect_cli_error 2 "mem" submit --mem -1 -- /bin/true
expect_cli_error 2 "cpus" submit --cpus abc -- /bin/true
expect_cli_error 1 "no node" submit --cpus 100000 -- /bin/true
expect_cli_error 1 "not found" submit -- /no/such/program
expect_cli_error 1 "not found" submit -- no-such-program-anywhere
expect_cli_error 1 "no job" cancel 999999

[ "$(njobs)" = "$before" ] || fail "bad input changed the job table ($before -> $(njobs) jobs)"
[ "$(job_field "$running" state)" = running ] || fail "the running job was disturbed"

# A job whose executable vanished between submit and launch fails with the reason.
reply=$("$POKE" "$COLONY_SOCKET" json '{"v":1,"type":"submit","argv":["/no/such/exe"],"cwd":"/tmp","mcpu":100,"mem":1048576}')
gone=$(jq -r .id <<<"$reply")
set +e; colony wait "$gone" >/dev/null; rc=$?; set -e
[ "$(job_field "$gone" state)" = failed ] || fail "job $gone: $(job_field "$gone" state), want failed"
[ "$rc" = 127 ] || fail "colony wait for a job that could not start exited $rc, want 127"
grep -q "No such file" <<<"$(job_field "$gone" error)" || fail "error: $(job_field "$gone" error)"
note "missing executable -> $(job_field "$gone" error)"

# An agent that vanishes: its job is lost, the node is down, the controller keeps serving.
node=$(job_field "$running" node)
kill -9 "$(agent_pid "$node")"
wait_state "$running" lost
[ "$(colony nodes --json | jq -r --arg n "$node" '.nodes[] | select(.name == $n) | .state')" = down ] ||
        fail "node $node not marked down"
note "agent $node killed -> job $running $(job_field "$running" state): $(job_field "$running" error)"
after=$(colony submit --name after --cpus 0.5 --mem 32M -- "$COLONY_BIN/colony-stress" sleep 0)
colony wait "$after" >/dev/null || fail "the controller stopped serving after losing an agent"
[ "$(job_field "$after" node)" != "$node" ] || fail "job placed on the dead node"
echo "PASS"
