#!/usr/bin/env bash
# mapreduce.sh - a MapReduce job as a lab writes it live: an array of maps and an array of
# reduces submitted with --afterok on the maps' array id. No reduce starts before the last map
# has ended (each reduce finds every map's end mark, and its start is after every map's end);
# a failed map means its reduces never run.
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
note "maps $bad with a failure: reduces $never never ran"
echo PASS
