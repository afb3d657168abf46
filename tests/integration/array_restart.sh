#!/usr/bin/env bash
# array_restart.sh - an array is one request, stored whole before its reply: the controller is
# SIGKILLed the moment colony submit --array has printed its ids, and after a restart every
# one of them is there, pending, with its index; then they all run, each with its own
# COLONY_ARRAY_INDEX and the environment stored once for the array.
. "$(dirname "$0")/lib.sh"
cluster_up --agents 1 --agent-cpus 1 --agent-mem 1G
n=100

# a job holding the whole node, so that the array waits in the queue through the kill
blocker=$(colony submit --cpus 1 --mem 16M -- "$COLONY_BIN/colony-stress" sleep 600)
wait_state "$blocker" running
cmdline=$(controller_cmdline)
MARK=kept-$$ colony submit --cpus 0.1 --mem 8M --array 0-$((n - 1)) -- /bin/sh -c 'echo "$COLONY_ARRAY_INDEX $MARK"' >"$DIR/ids"
kill -9 "$(cat "$DIR/controller.pid")"
mapfile -t out <"$DIR/ids"
[ "${#out[@]}" = 1 ] || fail "--array 0-$((n - 1)) printed ${#out[@]} ids, want the array's"
ids=()
for ((i = 0; i < n; i++)); do ids+=($((out[0] + i))); done
note "controller killed right after the reply for jobs ${ids[0]}..${ids[$((n - 1))]}"

controller_start "$cmdline"
colony queue --json | jq -c --argjson first "${ids[0]}" '[.jobs[] | select(.id >= $first)
        | [.id - $first, .state, .array_first, .array_index]]' >"$DIR/stored"
want=$(jq -nc --argjson first "${ids[0]}" --argjson n $n '[range($n) | [., "pending", $first, .]]')
[ "$(cat "$DIR/stored")" = "$want" ] || fail "after the restart the array is not all there, pending, with its indexes: $(head -c 300 "$DIR/stored")"
note "all $n stored, pending, array_first ${ids[0]} with indexes 0..$((n - 1))"

wait_node_up "${PREFIX}1"
colony cancel "$blocker" >/dev/null
colony wait "${ids[$((n - 1))]}" >/dev/null || fail "the array's last job: $(colony show "${ids[$((n - 1))]}")"
for ((i = 0; i < n; i++)); do
        colony wait "${ids[$i]}" >/dev/null || fail "job ${ids[$i]}: $(colony show "${ids[$i]}")"
        out=$(cat "colony-${ids[0]}_$i.out")
        [ "$out" = "$i kept-$$" ] || fail "job ${ids[$i]} printed '$out', want '$i kept-$$'"
done
note "all $n ran after the restart, each with its index and the array's environment"
echo "PASS"
