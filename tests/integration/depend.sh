#!/usr/bin/env bash
# depend.sh - dependencies on real jobs: a chain a -> b -> c with --afterok runs in order (each
# starts after the one before ended); when its head fails the rest end cancelled with the reason,
# while --afterany and --afternotok run; a dependency on a whole array waits for all its jobs; an
# unknown id is refused; and a dependency survives a controller restart.
. "$(dirname "$0")/lib.sh"
cluster_up --agents 1 --agent-cpus 2 --agent-mem 1G

sub() { colony submit --cpus 0.25 --mem 32M "$@"; }
stress="$COLONY_BIN/colony-stress"

# The chain: each link waits for the one before to complete.
a=$(sub --name a -- "$stress" sleep 1)
b=$(sub --name b --afterok "$a" -- "$stress" sleep 1)
c=$(sub --name c -d "afterok:$b" -- "$stress" sleep 0)
[ "$(job_field "$b" state)" = pending ] || [ "$(job_field "$a" state)" = completed ] || fail "b started before a ended"
for id in "$a" "$b" "$c"; do colony wait --timeout 60 "$id" >/dev/null || fail "job $id: $(job_field "$id" state) $(job_field "$id" error)"; done
[ "$(job_field "$b" start_usec)" -ge "$(job_field "$a" end_usec)" ] || fail "b started before a ended"
[ "$(job_field "$c" start_usec)" -ge "$(job_field "$b" end_usec)" ] || fail "c started before b ended"
note "chain $a -> $b -> $c ran in order"

# While a link waits, its reason says so.
slow=$(sub --name slow -- "$stress" sleep 600) # cancelled below, however slow this host
waiter=$(sub --name waiter --afterok "$slow" -- "$stress" sleep 0)
wait_state "$slow" running
[ "$(job_field "$waiter" reason)" = dependency ] || fail "waiter's reason: $(job_field "$waiter" reason)"
colony queue | grep -E "^$waiter .* dependency *\$" >/dev/null || fail "queue does not show the dependency: $(colony queue)"

# A failed head: afterok dependents end cancelled, with the reason; afterany and afternotok run.
# The head is held until its dependents are in: on a slow host it failed, and ok_b was
# cancelled, before ok_c's submission, refused then as never to be met.
bad=$(sub --name bad -H -- /bin/false)
ok_b=$(sub --name ok_b --afterok "$bad" -- "$stress" sleep 0)
ok_c=$(sub --name ok_c --afterok "$ok_b" -- "$stress" sleep 0)
any=$(sub --name any --afterany "$bad" -- "$stress" sleep 0)
notok=$(sub --name notok --afternotok "$bad" -- "$stress" sleep 0)
colony release "$bad" >/dev/null || fail "release of $bad refused"
colony wait --timeout 60 "$bad" >/dev/null && fail "/bin/false completed"
for id in "$ok_b" "$ok_c"; do
        wait_state "$id" cancelled
        job_field "$id" error | grep -q "can never be met" || fail "job $id: no reason: $(job_field "$id" error)"
done
note "ok_b: $(job_field "$ok_b" error)"
note "ok_c: $(job_field "$ok_c" error)"
colony wait --timeout 60 "$any" >/dev/null || fail "afterany job: $(job_field "$any" state)"
colony wait --timeout 60 "$notok" >/dev/null || fail "afternotok job: $(job_field "$notok" state)"
[ "$(job_field "$any" start_usec)" -ge "$(job_field "$bad" end_usec)" ] || fail "afterany started before the end"

# Refused at submit: an unknown id, an impossible dependency, '?'.
err=$(sub --afterok 999999 -- "$stress" sleep 0 2>&1) && fail "a dependency on an unknown job was accepted"
echo "$err" | grep -q "no job 999999" || fail "unclear refusal: $err"
err=$(sub --afterok "$bad" -- "$stress" sleep 0 2>&1) && fail "an impossible dependency was accepted"
echo "$err" | grep -q "can never be met" || fail "unclear refusal: $err"
err=$(sub --dependency "afterok:$a?afterok:$b" -- "$stress" sleep 0 2>&1) && fail "'?' was accepted"
echo "$err" | grep -q "not supported" || fail "unclear refusal: $err"

# A whole array: its first id names all of it.
arr=$(sub --name arr --array 0-2 -- "$stress" sleep 1)
after_arr=$(sub --name after_arr --afterok "$arr" -- "$stress" sleep 0)
colony wait --timeout 60 "$after_arr" >/dev/null || fail "after_arr: $(job_field "$after_arr" state) $(job_field "$after_arr" error)"
for i in 0 1 2; do
        [ "$(job_field "$after_arr" start_usec)" -ge "$(job_field $((arr + i)) end_usec)" ] ||
                fail "after_arr started before array job $((arr + i)) ended"
done
note "after_arr waited for the 3 jobs of array $arr"

# Singleton: the second job of a name starts once the first stopped running.
one=$(sub --name solo -- "$stress" sleep 5)
two=$(sub --name solo --singleton -- "$stress" sleep 0)
wait_state "$one" running
[ "$(job_field "$two" reason)" = dependency ] || fail "singleton's reason: $(job_field "$two" reason)"
colony wait --timeout 60 "$two" >/dev/null || fail "singleton: $(job_field "$two" state)"
[ "$(job_field "$two" start_usec)" -ge "$(job_field "$one" end_usec)" ] || fail "singleton started beside its namesake"

# Across a controller restart: the waiter still waits, and runs once its job completes.
colony cancel "$slow" >/dev/null
colony wait --timeout 60 "$waiter" >/dev/null && fail "waiter of a cancelled job ran"
[ "$(job_field "$waiter" state)" = cancelled ] || fail "waiter: $(job_field "$waiter" state)"
head=$(sub --name head -- "$stress" sleep 4)
tail=$(sub --name tail --afterok "$head" -- "$stress" sleep 0)
held=$(sub --name held -H -- "$stress" sleep 0)
wait_state "$head" running
cmdline=$(controller_cmdline)
kill -9 "$(cat "$DIR/controller.pid")"
controller_start "$cmdline"
[ "$(job_field "$tail" state)" = pending ] || fail "tail is $(job_field "$tail" state) after the restart"
[ "$(job_field "$held" hold)" = true ] && [ "$(job_field "$held" state)" = pending ] ||
        fail "held is $(job_field "$held" state), hold $(job_field "$held" hold) after the restart"
colony wait --timeout 60 "$tail" >/dev/null || fail "tail: $(job_field "$tail" state) $(job_field "$tail" error)"
[ "$(job_field "$tail" start_usec)" -ge "$(job_field "$head" end_usec)" ] || fail "tail started before head ended"
[ "$(job_field "$held" state)" = pending ] || fail "held ran after the restart"
note "tail waited for head across a controller restart, and held stayed held"
echo "PASS"
