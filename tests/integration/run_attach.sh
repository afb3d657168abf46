#!/usr/bin/env bash
# colony run and colony attach: output streamed as it is written (a line read before the next
# is written), the job's exit status, SIGINT turned into a cancel (the job's processes gone);
# attach prints what a job wrote before it and follows the rest; an agent or the controller
# killed and restarted mid-run loses and doubles nothing. (A follower that does not read:
# run_flood.sh.)
. "$(dirname "$0")/lib.sh"
cluster_up --agents 1 --agent-cpus 4 --agent-mem 2G
node="${PREFIX}1"

# 1. The brief's line: "a" is read before "b" is written, b comes too, exit 3.
set +e
colony run --mem 32M -- sh -c 'echo a; sleep 1; echo b >&2; exit 3' 2>run1.err |
        while IFS= read -r l; do echo "$(now) $l"; done >run1.txt
rc=${PIPESTATUS[0]}
set -e
id=$(colony queue --all --json | jq '.jobs[-1].id')
b_written=$(stat -c %.9Y "colony-$id.out") # its last write was b's
a_read=$(awk '$2 == "a" { print $1 }' run1.txt)
note "job $id: a read at $a_read, b written at $b_written; run exited $rc"
[ "$rc" = 3 ] || fail "colony run exited $rc, want 3"
[ "$(awk '{ print $2 }' run1.txt | tr '\n' ' ')" = "a b " ] || fail "run printed: $(cat run1.txt)"
awk -v a="$a_read" -v b="$b_written" 'BEGIN { exit !(a < b) }' || fail "a was read at $a_read, after b was written at $b_written"
[ ! -s run1.err ] || fail "run said on stderr: $(cat run1.err)"

# stderr apart when the job has a file for it.
set +e; colony run --mem 32M --error "$DIR/e.txt" -- sh -c 'echo out; echo err >&2; exit 0' >run2.out 2>run2.err; rc=$?; set -e
[ $rc = 0 ] && [ "$(cat run2.out)" = out ] && [ "$(cat run2.err)" = err ] ||
        fail "--error apart: exit $rc, stdout '$(cat run2.out)', stderr '$(cat run2.err)'"

# Output to /dev/null: nothing to follow, nothing printed, the job's status all the same.
set +e; out=$(colony run --mem 32M --output /dev/null -- sh -c 'echo hidden; exit 4' 2>&1); rc=$?; set -e
[ $rc = 4 ] && [ -z "$out" ] || fail "--output /dev/null: exit $rc, printed '$out'"

# 2. SIGINT cancels the job: its processes are gone, run says so and exits non-zero.
# the binary itself, not lib.sh's function: $! must be the process the signals are for
"$COLONY_BIN/colony" run --mem 32M -- sh -c 'echo started; exec sleep 300' >run3.out 2>run3.err &
run=$!
STARTED_PIDS+=("$run")
wait_for '[ "$(cat run3.out 2>/dev/null)" = started ]' "the job's first line at colony run"
id=$(colony queue --json | jq '.jobs[-1].id')
mapfile -t procs < <(job_procs "$node" "$id")
[ "${#procs[@]}" -gt 0 ] || fail "job $id has no process"
kill -INT "$run"
set +e; wait "$run"; rc=$?; set -e
note "SIGINT: run exited $rc and said: $(cat run3.err)"
[ "$rc" != 0 ] || fail "colony run exited 0 after SIGINT"
grep -q "job $id cancelled" run3.err || fail "run did not say it cancelled job $id: $(cat run3.err)"
[ "$(wc -l <run3.err)" = 1 ] || fail "run said more than one line: $(cat run3.err)"
[ "$(job_field "$id" state)" = cancelled ] || fail "job $id is $(job_field "$id" state) after SIGINT to run"
for p in "${procs[@]}"; do alive "$p" && fail "job $id's process ${p%%:*} lives on after the cancel"; done

# 3. attach: what the job wrote before, then the rest as it comes.
id=$(colony submit --mem 32M -- sh -c 'for i in $(seq 1 40); do echo "line $i"; sleep 0.05; done; exit 5')
wait_for '[ "$(wc -l <"colony-$id.out" 2>/dev/null || echo 0)" -ge 5 ]' "job $id's first lines"
set +e; colony attach "$id" >att.txt; rc=$?; set -e
[ $rc = 5 ] || fail "attach exited $rc, want the job's 5"
seq 1 40 | sed 's/^/line /' | cmp -s - att.txt || fail "attach printed: $(head -c 300 att.txt)"
set +e; colony attach "$id" >att2.txt; rc=$?; set -e # an ended job: all of it, at once
[ $rc = 5 ] && cmp -s att.txt att2.txt || fail "attach of the ended job: exit $rc, $(wc -c <att2.txt) bytes"
# An array's task by its name A_i, as everywhere a job id is taken.
arr=$(colony submit --array 0-1 --cpus 0.1 --mem 16M -- sh -c 'echo "task $COLONY_ARRAY_TASK_ID"; exit 4')
set +e; out=$(colony attach "${arr}_1"); rc=$?; set -e
[ $rc = 4 ] && [ "$out" = "task 1" ] || fail "attach ${arr}_1: exit $rc, printed '$out'"
set +e; out=$(colony attach 99999 2>&1); rc=$?; set -e
[ $rc = 1 ] && grep -q "no job 99999" <<<"$out" || fail "attach of no job: exit $rc, $out"
if id -u nobody >/dev/null 2>&1; then
        set +e; out=$(setpriv --reuid nobody --regid nogroup --clear-groups "$COLONY_BIN/colony" attach "$id" 2>&1); rc=$?; set -e
        [ $rc = 1 ] && grep -q "of yours" <<<"$out" || fail "nobody attached root's job $id: exit $rc, $out"
fi

# 4. The agent killed and restarted mid-run: nothing lost, nothing doubled.
"$COLONY_BIN/colony" run --mem 32M -- sh -c 'i=0; while [ $i -lt 300 ]; do i=$((i + 1)); echo "n $i"; sleep 0.01; done' >re.out &
run=$!
STARTED_PIDS+=("$run")
wait_for '[ "$(wc -l <re.out)" -ge 20 ]' "the restart job's first lines"
agent_kill "$node"
sleep 0.5
agent_start_again "$node"
set +e; wait "$run"; rc=$?; set -e
seq 1 300 | sed 's/^/n /' | cmp -s - re.out || fail "after an agent restart run printed $(wc -l <re.out) lines: $(sort re.out | uniq -d | head -3)"
[ $rc = 0 ] || fail "run exited $rc across the agent's restart"
# 5. The controller killed and restarted mid-run: the follower reconnects and asks from where it was.
"$COLONY_BIN/colony" run --mem 32M -- sh -c 'i=0; while [ $i -lt 300 ]; do i=$((i + 1)); echo "c $i"; sleep 0.01; done' >rc.out &
run=$!
STARTED_PIDS+=("$run")
wait_for '[ "$(wc -l <rc.out)" -ge 20 ]' "the controller-restart job's first lines"
cmdline=$(controller_cmdline)
kill -9 "$(cat "$DIR/controller.pid")"
sleep 0.5
controller_start "$cmdline"
set +e; wait "$run"; rc=$?; set -e
seq 1 300 | sed 's/^/c /' | cmp -s - rc.out || fail "after a controller restart run printed $(wc -l <rc.out) lines: $(sort rc.out | uniq -d | head -3)"
[ $rc = 0 ] || fail "run exited $rc across the controller's restart"

# read_in_background ID OUT_OFFSET FILE: a follower's read of job ID's output from OUT_OFFSET
# that may wait 5 s, made in the background, its answer into FILE; its pid in $poke.
read_in_background() {
        "$COLONY_BIN/proto-poke" "$COLONY_SOCKET" json \
                "{\"v\":1,\"type\":\"output\",\"id\":$1,\"out_offset\":$2,\"err_offset\":0,\"wait_ms\":5000}" >"$3" &
        poke=$!
        STARTED_PIDS+=("$poke")
}

# 6. A follower's read of a job that has not started is held until it starts, and answered with
# its first output, not with "pending" (which made colony run sleep 200 ms between its asks).
blocker=$(colony submit --mem 32M -- sleep 300)
held=$(colony submit --mem 32M --afterany "$blocker" -- sh -c 'echo held-started; sleep 300')
wait_for '[ "$(job_field "$blocker" state)" = running ]' "the blocker's start"
read_in_background "$held" 0 held.json
sleep 1 # the read reaches the controller while the job waits (a later one is answered alike)
colony cancel "$blocker" >/dev/null
wait "$poke" || fail "the held read got no reply"
[ "$(jq -r '.out // empty' held.json | base64 -d)" = held-started ] ||
        fail "a read of job $held made while it waited was answered $(cat held.json), not with its output"
colony cancel "$held" >/dev/null
note "a read made while the job waited was answered with its first line once it started"

# 7. Short jobs run back to back: each one's follower is answered at its end and asks for the
# rest at once; none is told the node is busy or that its output may be incomplete.
for ((i = 0; i < 20; i++)); do
        colony run --mem 32M -- /bin/echo "quick $i" >>quick.out 2>>quick.err || fail "colony run $i of a quick job failed"
done
[ ! -s quick.err ] || fail "quick runs said: $(sort -u quick.err | head -3)"
seq 0 19 | sed 's/^/quick /' | cmp -s - quick.out || fail "quick runs printed: $(head -3 quick.out)"
note "20 quick jobs run back to back, each printed once, nothing said on stderr"

# 8. A read waiting on the node when its job ends is answered as one made after the end: "ended",
# every byte, and the job's record, so that a follower asks nothing more (no second read, no
# "wait"); colony run sends no "wait".
id=$(colony submit --mem 32M -- sh -c "echo first; while [ ! -e '$DIR/gate8' ]; do sleep 0.02; done; exit 6")
wait_for '[ "$(cat "colony-$id.out" 2>/dev/null)" = first ]' "job $id's first line"
read_in_background "$id" 6 end.json
sleep 1 # the read reaches the node while the job runs (a later one is answered alike)
touch "$DIR/gate8"
wait "$poke" || fail "the read waiting at job $id's end got no reply"
jq -e '.ended == true and .out == "" and .out_eof == true and .job.id == '"$id"' and .job.state == "failed" and
        .job.exit_code == 6' end.json >/dev/null || fail "the read waiting at job $id's end was answered $(cat end.json)"
if command -v strace >/dev/null; then
        set +e
        out=$(strace -f -qq -s 300 -e trace=sendto -o run8.trace "$COLONY_BIN/colony" run --mem 32M -- sh -c 'echo eight; exit 7')
        rc=$?
        set -e
        [ $rc = 7 ] && [ "$out" = eight ] || fail "colony run under strace: exit $rc, printed '$out'"
        ! grep -q 'type\\":\\"wait' run8.trace || fail "colony run asked for its job's record: $(grep 'type\\":\\"wait' run8.trace)"
fi
note "a read waiting at its job's end was answered with the end's bytes and the job's record"
note "done"; echo "PASS"
