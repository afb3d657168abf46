#!/usr/bin/env bash
# Bad input gets a clear one-line error, changes nothing, and the controller keeps serving;
# a job's command line and environment are capped at 128 KiB each.
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
        local want=$1 reply error
        reply=$("$POKE" "$COLONY_SOCKET" "$2" "$3") || fail "no reply to $2 '$3'"
        [ "$(jget type <<<"$reply")" = error ] || fail "reply to '$3' is not an error: $reply"
        error=$(jget error <<<"$reply")
        grep -qi -- "$want" <<<"$error" || fail "error for '$3' lacks '$want': $reply"
        [ "$(wc -l <<<"$error")" = 1 ] || fail "error is not one line: $reply"
        note "$2 $(head -c 60 <<<"$3") -> $error"
}
expect_error "json" json '{"v":1,"type":'
expect_error "json" json 'not json at all'
expect_error "exceeds" header 2000000
expect_error "version" json '{"v":2,"type":"queue"}'
expect_error "unknown" json '{"v":1,"type":"frobnicate"}'
expect_error "bogus" json '{"v":1,"type":"queue","bogus":1}'
expect_error "bogus" json '{"v":1,"type":"nodes","bogus":1}'
expect_error "bogus" json '{"v":1,"type":"reload","bogus":1}'
expect_error "argv: must be an array of strings" json '{"v":1,"type":"submit","argv":"/bin/true","cwd":"/","mcpu":1000,"mem":1024}'
expect_error "mem" json '{"v":1,"type":"submit","argv":["/bin/true"],"cwd":"/","mcpu":1000,"mem":-1}'
expect_error "argv" json '{"v":1,"type":"submit","argv":[],"cwd":"/","mcpu":1000,"mem":1024}'
expect_error "no job" json '{"v":1,"type":"show","id":999999}'
# Strings that are not UTF-8 (here Latin-1) would make every JSON listing of the job invalid.
expect_error "argv item 1: not valid UTF-8 (byte 3, after \"caf\")" json \
        $'{"v":1,"type":"submit","argv":["/bin/echo","caf\xe9"],"cwd":"/","mcpu":1000,"mem":1048576}'
expect_error "env item 1: not valid UTF-8" json \
        $'{"v":1,"type":"submit","argv":["/bin/true"],"env":["A=1","B=\xff"],"cwd":"/","mcpu":1000,"mem":1048576}'
expect_error "cwd: not valid UTF-8" json $'{"v":1,"type":"submit","argv":["/bin/true"],"cwd":"/t\xe9","mcpu":1000,"mem":1048576}'
expect_error "id: required" json '{"v":1,"type":"cancel"}'
expect_error "pending or running" json '{"v":1,"type":"cancel","state":"completed"}'
expect_error "ranges" json '{"v":1,"type":"cancel","ranges":[[5,2]]}'

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
expect_cli_error 1 "argv item 1: not valid UTF-8" submit -- /bin/echo $'caf\xe9'
# size caps: a 1 MB command line, or 200 kB of environment, is refused with the sizes
big=$(head -c 100000 /dev/zero | tr '\0' x)
expect_cli_error 1 "argv: 1000020 bytes, more than the 131072 a job may have" submit -- /bin/echo \
        "$big" "$big" "$big" "$big" "$big" "$big" "$big" "$big" "$big" "$big"
set +e
out=$(BIG1=$big BIG2=$big "$COLONY_BIN/colony" submit -- /bin/true 2>&1)
rc=$?
set -e
[ "$rc" = 1 ] && grep -q "env: 2[0-9]* bytes, more than the 131072 a job may have" <<<"$out" ||
        fail "200 kB of environment: exit $rc, $out"
note "200 kB of environment -> $out"

[ "$(njobs)" = "$before" ] || fail "bad input changed the job table ($before -> $(njobs) jobs)"
[ "$(job_field "$running" state)" = running ] || fail "the running job was disturbed"

# A --stdin line that is not UTF-8 is refused by its number, not sent with its bytes replaced.
set +e
out=$(printf '%s\n' '/bin/echo one' $'/bin/echo caf\xe9' | "$COLONY_BIN/colony" submit --stdin --cpus 0.1 --mem 16M 2>&1)
rc=$?
set -e
note "--stdin with a Latin-1 line: exit $rc, $(tr '\n' ' ' <<<"$out")"
[ "$rc" = 1 ] && grep -q 'line 2: argv item 1: not valid UTF-8 (byte 3, after "caf")' <<<"$out" ||
        fail "--stdin with a Latin-1 line: exit $rc, $out"
[ "$(grep -c '^[0-9]*$' <<<"$out")" = 1 ] || fail "--stdin with a Latin-1 line submitted $(grep -c '^[0-9]*$' <<<"$out") jobs"

# A job whose executable vanished between submit and launch fails with the reason.
reply=$("$POKE" "$COLONY_SOCKET" json '{"v":1,"type":"submit","argv":["/no/such/exe"],"cwd":"'"$DIR"'","mcpu":100,"mem":1048576}')
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
[ "$(node_state "$node")" = down ] ||
        fail "node $node not marked down"
note "agent $node killed -> job $running $(job_field "$running" state): $(job_field "$running" error)"
after=$(colony submit --name after --cpus 0.5 --mem 32M -- "$COLONY_BIN/colony-stress" sleep 0)
colony wait "$after" >/dev/null || fail "the controller stopped serving after losing an agent"
[ "$(job_field "$after" node)" != "$node" ] || fail "job placed on the dead node"
echo "PASS"
