#!/usr/bin/env bash
# submit_many.sh - colony submit --array and --stdin: every job runs with its own index or
# command line, ids come back in order, a refused job or a bad line is reported by its index or
# line number while the others go on, and the exit status says something was refused.
. "$(dirname "$0")/lib.sh"
printf '[controller]\nmax_pending = 8\n' >"$DIR/controller.conf"
cluster_up --agents 1 --agent-cpus 1 --agent-mem 512M --controller-config "$DIR/controller.conf"

# --array: five jobs, each printing its index; the ids are consecutive, in order (all five may
# arrive in one turn of the controller, and count as pending until its scheduling pass)
mapfile -t ids < <(colony submit --cpus 0.1 --mem 16M --array 5 -- /bin/sh -c 'echo "$COLONY_ARRAY_INDEX"')
[ "${#ids[@]}" = 5 ] || fail "--array 5 printed ${#ids[@]} ids: ${ids[*]}"
for i in 0 1 2 3 4; do
        [ "${ids[$i]}" = $((ids[0] + i)) ] || fail "ids not in order: ${ids[*]}"
        colony wait "${ids[$i]}" >/dev/null || fail "job ${ids[$i]}: $(colony show "${ids[$i]}")"
        [ "$(cat "colony-${ids[$i]}.out")" = "$i" ] || fail "job ${ids[$i]} printed '$(cat "colony-${ids[$i]}.out")', want $i"
done
note "--array 5: jobs ${ids[*]} printed their indexes 0..4"

# --stdin: one job per line; a comment, a blank line and an unknown command do not stop it
set +e
out=$(printf '/bin/echo first line\n\n# a comment\nno-such-command x\necho  second   line\n' |
        colony submit --cpus 0.1 --mem 16M --stdin 2>"$DIR/stdin.err")
rc=$?
set -e
mapfile -t ids <<<"$out"
[ "$rc" = 1 ] || fail "--stdin with a bad line exited $rc, want 1"
[ "${#ids[@]}" = 2 ] || fail "--stdin printed ${#ids[@]} ids: $out"
grep -q "no-such-command: command not found" "$DIR/stdin.err" || fail "no reason for the bad line: $(cat "$DIR/stdin.err")"
grep -q "line 4 skipped" "$DIR/stdin.err" || fail "the bad line's number is not given: $(cat "$DIR/stdin.err")"
for i in 0 1; do colony wait "${ids[$i]}" >/dev/null || fail "job ${ids[$i]}: $(colony show "${ids[$i]}")"; done
[ "$(cat "colony-${ids[0]}.out")" = "first line" ] || fail "line 1's job printed '$(cat "colony-${ids[0]}.out")'"
[ "$(cat "colony-${ids[1]}.out")" = "second line" ] || fail "line 5's job printed '$(cat "colony-${ids[1]}.out")'"
note "--stdin: lines 1 and 5 ran as jobs ${ids[*]}; line 4 reported and skipped"

# a full queue: with the node busy, max_pending = 8 jobs are accepted and the rest refused,
# each by its index, however the requests are split into commits
blocker=$(colony submit --cpus 1 --mem 16M -- "$COLONY_BIN/colony-stress" sleep 600)
wait_state "$blocker" running
set +e
out=$(colony submit --cpus 1 --mem 16M --array 10 -- "$COLONY_BIN/colony-stress" sleep 600 2>"$DIR/full.err")
rc=$?
set -e
[ "$rc" = 1 ] || fail "--array into a full queue exited $rc, want 1"
[ "$(wc -l <<<"$out")" = 8 ] || fail "want 8 jobs accepted, got: $out"
[ "$(grep -c "queue full" "$DIR/full.err")" = 2 ] || fail "want 2 refusals: $(cat "$DIR/full.err")"
grep -q "array index 9: queue full" "$DIR/full.err" || fail "a refusal does not name its index: $(cat "$DIR/full.err")"
note "--array 10 into a queue of 8: 8 accepted, 2 refused ($(head -n 1 "$DIR/full.err" | cut -c1-80))"
for id in $out "$blocker"; do colony cancel "$id" >/dev/null; done
echo "PASS"
