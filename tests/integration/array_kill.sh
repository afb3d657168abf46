#!/usr/bin/env bash
# array_kill.sh - a controller SIGKILLed while a 100,000-task array is pending and draining:
# after a restart no task is lost or run twice, and the tasks pending before the kill are
# pending after it (but for those the killed controller had already launched), whether made or
# still in the array's record (its set, stored in the turn that makes tasks from it).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/array_lib.sh"
cluster_up --agents 1 --agent-cpus 2 --agent-mem 1G
n=100000

# every task appends its index to one file (O_APPEND: a line each), so a task run twice shows
a=$(colony submit --cpus 0.1 --mem 8M --array "0-$((n - 1))%8" -o "$DIR/runs" -- /bin/sh -c 'echo "$COLONY_ARRAY_TASK_ID"')
note "array $a of $n tasks submitted"

# tasks_of: "index state" of each of the array's tasks, made or still in its record
tasks_of() { array_tasks "$a" --all; }
completed() { grep -c ' completed$' "$1" || true; }

end=$((SECONDS + 600))
until [ "$(wc -l <"$DIR/runs" 2>/dev/null || echo 0)" -ge 20 ]; do
        ((SECONDS < end)) || fail "array $a has not drained 20 tasks in 600 s"
        sleep 0.5
done
# The agent stopped, nothing ends or starts meanwhile; the controller may still launch (to a
# stopped agent) between the sample and the kill.
agent=$(agent_pid "${PREFIX}1")
kill -STOP "$agent"
trap 'kill -CONT "$agent" 2>/dev/null; teardown' EXIT
tasks_of >"$DIR/before"
cmdline=$(controller_cmdline)
kill -9 "$(cat "$DIR/controller.pid")"
note "controller killed with $(grep -c ' pending$' "$DIR/before") tasks pending, $(completed "$DIR/before") completed"
controller_start "$cmdline"
tasks_of >"$DIR/after"
kill -CONT "$agent"

[ "$(wc -l <"$DIR/after")" = $n ] || fail "after the restart the array has $(wc -l <"$DIR/after") tasks, want $n"
[ "$(cut -d' ' -f1 "$DIR/after" | uniq | wc -l)" = $n ] || fail "after the restart an index is there twice"
[ "$(cut -d' ' -f1 "$DIR/after" | head -n 1) $(cut -d' ' -f1 "$DIR/after" | tail -n 1)" = "0 $((n - 1))" ] ||
        fail "after the restart the indexes are not 0..$((n - 1))"
# pending before and after: the same, but for tasks launched between the sample and the kill
comm -23 <(grep ' pending$' "$DIR/after") <(grep ' pending$' "$DIR/before") >"$DIR/new_pending"
[ ! -s "$DIR/new_pending" ] || fail "tasks pending after the restart that were not before: $(head -n 5 "$DIR/new_pending")"
moved=$(comm -13 <(grep ' pending$' "$DIR/after") <(grep ' pending$' "$DIR/before") | cut -d' ' -f1)
for i in $moved; do
        grep -qE "^$i (running|completed)$" "$DIR/after" || fail "task $i was pending before the kill and is $(grep "^$i " "$DIR/after") after"
done
comm -23 <(grep ' completed$' "$DIR/before") <(grep ' completed$' "$DIR/after") >"$DIR/lost"
[ ! -s "$DIR/lost" ] || fail "tasks completed before the kill are not after it: $(head -n 5 "$DIR/lost")"
note "after the restart: $n tasks, the pending set as before but $(wc -w <<<"$moved") launched just before the kill"

# It drains on; then the array is cancelled, and every task that ran, ran once.
done_before=$(completed "$DIR/after")
end=$((SECONDS + 600))
until [ "$(wc -l <"$DIR/runs")" -ge $((done_before + 20)) ]; do
        ((SECONDS < end)) || fail "array $a did not drain after the restart"
        sleep 0.5
done
colony cancel "$a" >/dev/null
end=$((SECONDS + 300))
until ! tasks_of | grep -qE ' (pending|running)$'; do
        ((SECONDS < end)) || fail "array $a still has live tasks after its cancel"
        sleep 1
done
tasks_of >"$DIR/final"
sort -n "$DIR/runs" >"$DIR/ran"
[ "$(uniq -d "$DIR/ran" | wc -l)" = 0 ] || fail "tasks run twice: $(uniq -d "$DIR/ran" | head -n 5 | tr '\n' ' ')"
# every completed task ran; one that ran may have been cancelled between its echo and its exit
comm -23 <(grep ' completed$' "$DIR/final" | cut -d' ' -f1 | sort) <(sort "$DIR/ran") >"$DIR/unran"
[ ! -s "$DIR/unran" ] || fail "completed tasks that never ran: $(head -n 5 "$DIR/unran" | tr '\n' ' ')"
while read -r i; do
        grep -qE "^$i (completed|cancelled)$" "$DIR/final" || fail "task $i ran and is $(grep "^$i " "$DIR/final")"
done <"$DIR/ran"
note "$(wc -l <"$DIR/ran") tasks ran, each once; $(completed "$DIR/final") completed, the others cancelled"
echo "PASS"
