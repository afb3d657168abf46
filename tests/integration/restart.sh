#!/usr/bin/env bash
# SIGKILL the controller with jobs pending and running, and while it is away let a job end:
# after a restart every acknowledged job is there, pending ones run, the agent's report of the
# job that ended meanwhile is delivered, and nothing runs twice: the restarted controller sends
# that job's launch again (its agent no longer lists it), and the agent, which remembers the
# report it keeps, ignores the launch.
. "$(dirname "$0")/lib.sh"
cluster_up --agents 1 --agent-cpus 1 --agent-mem 1G

# short ends once the test says so, after the kill: on a slow host (the TCG guest) the steps
# before the kill took longer than a fixed sleep of it.
short=$(colony submit --name short --cpus 0.5 --mem 32M -- sh -c "echo ran >>'$DIR/short.runs'; while [ ! -e '$DIR/short.go' ]; do sleep 0.05; done")
long=$(colony submit --name long --cpus 0.5 --mem 32M -- "$COLONY_BIN/colony-stress" sleep 6)
queued=$(colony submit --name queued --cpus 1 --mem 32M -- "$COLONY_BIN/colony-stress" sleep 0)
wait_state "$long" running
[ "$(job_field "$queued" state)" = pending ] || fail "queued should wait for the two running jobs"

cmdline=$(controller_cmdline)
kill -9 "$(cat "$DIR/controller.pid")"
note "controller killed; job $short ends while it is away"
touch "$DIR/short.go"
for ((i = 0; i < 300; i++)); do
        grep -q "job=$short cgroup=.*: completed" "$DIR/${PREFIX}1.log" && break
        sleep 0.1
done
grep -q "job=$short cgroup=.*: completed" "$DIR/${PREFIX}1.log" || fail "job $short did not end within 30 s"
controller_start "$cmdline"

for id in "$short" "$long" "$queued"; do
        colony wait "$id" >/dev/null || fail "job $id: $(job_field "$id" state) $(job_field "$id" error)"
done
for id in "$short" "$long" "$queued"; do
        note "job $id $(job_field "$id" name): $(job_field "$id" state), started $(job_field "$id" start_usec)"
done
[ "$(colony queue --all --json | jq '.jobs | length')" = 3 ] || fail "the restarted controller does not have 3 jobs"
[ "$(job_field "$queued" start_usec)" -ge "$(job_field "$long" end_usec)" ] ||
        fail "queued started before long ended: it would have run beside it on a full node"
[ "$(wc -l <"$DIR/short.runs")" = 1 ] || fail "job $short ran $(wc -l <"$DIR/short.runs") times"
grep -q "job=$short: launch ignored, attempt 1 already ran here" "$DIR/${PREFIX}1.log" ||
        fail "the agent did not say it ignored job $short's launch sent again"
echo "PASS"
