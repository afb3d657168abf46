#!/usr/bin/env bash
# mapreduce.sh - a MapReduce job as a lab writes it live: an array of maps and an array of
# reduces submitted with --afterok on the maps' array id. No reduce starts before the last map
# has ended (each reduce finds every map's end mark, and its start is after every map's end);
# the two arrays are shown as one family with its flow time, after a restart too; a failed map
# means its reduces never run, and the family shows them.
. "$(dirname "$0")/lib.sh"
cluster_up --agents 1 --agent-cpus 4 --agent-mem 1G

# Six maps of different lengths (0.2 to 1.7 s), each leaving a mark as its last act; three
# reduces that count the marks when they start.
maps=$(colony submit --cpus 0.2 --mem 16M --array 0-5 -- \
        /bin/sh -c 'sleep "$(( COLONY_ARRAY_TASK_ID % 3 )).$(( 2 + COLONY_ARRAY_TASK_ID ))"; : >"map-$COLONY_ARRAY_TASK_ID.done"')
reduces=$(colony submit --cpus 0.2 --mem 16M --array 0-2 --afterok "$maps" -- \
        /bin/sh -c 'ls map-*.done | wc -l >"reduce-$COLONY_ARRAY_TASK_ID.saw"')
[[ $maps =~ ^[0-9]+$ && $reduces =~ ^[0-9]+$ ]] || fail "submit printed '$maps' and '$reduces'"
colony wait "$reduces" >"$DIR/wait.out" || fail "colony wait $reduces: exit $?: $(cat "$DIR/wait.out")"
colony queue --json --all >"$DIR/queue.json"
last_map_end=$(jq --argjson a "$maps" '[.jobs[] | select(.array_first == $a) | .end_usec] | max' "$DIR/queue.json")
first_reduce_start=$(jq --argjson a "$reduces" '[.jobs[] | select(.array_first == $a) | .start_usec] | min' "$DIR/queue.json")
[ "$(jq --argjson a "$maps" '[.jobs[] | select(.array_first == $a and .state == "completed")] | length' "$DIR/queue.json")" = 6 ] ||
        fail "the maps did not all complete: $(jq -c --argjson a "$maps" '.jobs[] | select(.array_first == $a) | [.id, .state]' "$DIR/queue.json")"
((first_reduce_start >= last_map_end)) ||
        fail "a reduce started at $first_reduce_start us, before the last map ended at $last_map_end us"
for i in 0 1 2; do
        [ "$(cat "reduce-$i.saw" 2>/dev/null)" = 6 ] || fail "reduce $i saw '$(cat "reduce-$i.saw" 2>/dev/null)' map marks, want 6"
done
note "maps $maps ended by $last_map_end us; reduces $reduces started from $first_reduce_start us, each saw 6 marks"

# The two arrays are one family, named by the maps' id, in show, queue and history: its counts
# add up, its flow time is the last reduce's end minus the first map's submit (the records'
# times), and the flow time with unlimited machines is the longest map's run plus the longest
# reduce's (both submitted before any map ended).
colony show --json "$reduces" >"$DIR/show.json"
fam() { jq -r "$@" "$DIR/show.json"; }
[ "$(fam .family.id)" = "$maps" ] || fail "the reduces' family is '$(fam .family.id)', not the maps' $maps: $(fam -c .family)"
[ "$(fam '[.family.units[].id] | join(",")')" = "$maps,$reduces" ] || fail "the family's units: $(fam -c .family.units)"
[ "$(fam '.family.members, .family.counts.completed, (.family.units | map(.members) | add), .family.ended' | paste -sd' ')" = "9 9 9 true" ] ||
        fail "the family's counts do not add up to 9 completed: $(fam -c .family)"
first_submit=$(jq --argjson a "$maps" '[.jobs[] | select(.array_first == $a) | .submit_usec] | min' "$DIR/queue.json")
last_reduce_end=$(jq --argjson a "$reduces" '[.jobs[] | select(.array_first == $a) | .end_usec] | max' "$DIR/queue.json")
[ "$(fam .family.flow_usec)" = $((last_reduce_end - first_submit)) ] ||
        fail "flow time $(fam .family.flow_usec) us, want $last_reduce_end - $first_submit = $((last_reduce_end - first_submit)) us"
longest() { jq --argjson a "$1" '[.jobs[] | select(.array_first == $a) | .end_usec - .start_usec] | max' "$DIR/queue.json"; }
reduce_submit=$(jq --argjson a "$reduces" '[.jobs[] | select(.array_first == $a) | .submit_usec] | min' "$DIR/queue.json")
unlimited=$(($(longest "$maps") + $(longest "$reduces")))
(( reduce_submit - first_submit < $(longest "$maps") )) || fail "the reduces were submitted after the longest map's run"
[ "$(fam .family.unlimited_flow_usec)" = "$unlimited" ] ||
        fail "flow time with unlimited machines $(fam .family.unlimited_flow_usec) us, want $unlimited us"
colony show "$maps" >"$DIR/show.txt"
grep -q "^family: *$maps: 2 jobs and arrays, 9 jobs: 9 completed" "$DIR/show.txt" &&
        grep -q "array $reduces (sh, .*): 3 jobs: 3 completed; afterok:$maps" "$DIR/show.txt" ||
        fail "colony show $maps: no family section: $(cat "$DIR/show.txt")"
# Each listed record carries its family's id; --families gives one line per family.
[ "$(jq --argjson a "$maps" '[.jobs[] | select(.family == $a)] | length' "$DIR/queue.json")" = 9 ] ||
        fail "queue --all: the family ids: $(jq -c '[.jobs[] | [.id, .family]]' "$DIR/queue.json")"
colony history --families --json >"$DIR/families.json"
[ "$(jq --argjson a "$maps" '[.families[] | select(.id == $a)][0].flow_usec' "$DIR/families.json")" = "$(fam .family.flow_usec)" ] ||
        fail "history --families: $(jq -c . "$DIR/families.json")"
colony history --families | grep -Eq "^$maps +sh +[^ ]+ +ended +2 +9 +0 +0 +9 +0 " ||
        fail "history --families: $(colony history --families)"
note "family $maps: 9 jobs, flow time $(fam .family.flow_usec) us, $unlimited us with unlimited machines"

# A restarted controller links the family again from the stored dependencies: the same answer.
cmdline=$(controller_cmdline)
kill "$(cat "$DIR/controller.pid")"
end=$((SECONDS + 120))
while kill -0 "$(cat "$DIR/controller.pid")" 2>/dev/null; do
        ((SECONDS < end)) || fail "the controller did not stop on SIGTERM"
        sleep 0.1
done
controller_start "$cmdline"
[ "$(colony show --json "$maps" | jq -c .family)" = "$(jq -c .family "$DIR/show.json")" ] ||
        fail "after a restart, the family: $(colony show --json "$maps" | jq -c .family), before: $(jq -c .family "$DIR/show.json")"

# A map that fails: the reduces' dependency can never be met, and none of them runs.
bad=$(colony submit --cpus 0.2 --mem 16M --array 0-2 -- /bin/sh -c 'sleep 0.3; exit "$COLONY_ARRAY_TASK_ID"')
never=$(colony submit --cpus 0.2 --mem 16M --array 0-1 --afterok "$bad" -- /bin/sh -c ': >"never-$COLONY_ARRAY_TASK_ID"')
set +e; colony wait "$bad" >/dev/null; set -e
end=$((SECONDS + 120))
until colony queue --json --all | jq -e --argjson a "$never" \
        '[.jobs[] | select(.array_first == $a) | select(.state == "cancelled" or .reason == "dependency never met")] | length == 2' >/dev/null; do
        ((SECONDS < end)) || fail "the reduces of failed maps: $(colony queue --json --all | jq -c --argjson a "$never" '.jobs[] | select(.array_first == $a) | [.id, .state, .reason]')"
        sleep 0.2
done
[ ! -e never-0 ] && [ ! -e never-1 ] || fail "a reduce ran after a failed map"
# Its family counts the 3 maps and 2 reduces, by state; none ran, so no flow time with
# unlimited machines is told.
colony show --json "$bad" >"$DIR/bad.json"
[ "$(jq '.family | [.id, .members, (.counts | add), .counts.failed, .counts.completed, has("unlimited_flow_usec")] | map(tostring) | join(" ")' -r "$DIR/bad.json")" = "$bad 5 5 2 1 false" ] ||
        fail "the family of a failed map: $(jq -c .family "$DIR/bad.json")"
note "maps $bad with a failure: reduces $never never ran"
echo PASS
