#!/usr/bin/env bash
# submit_many.sh - colony submit --array and --stdin: every job runs with its own index or
# command line, ids come back in order, an array past the queue's cap is refused whole, a bad
# line is reported by its line number while the others go on, and the exit status says
# something was refused.
. "$(dirname "$0")/lib.sh"
printf '[controller]\nmax_pending = 50\n' >"$DIR/controller.conf"
cluster_up --agents 1 --agent-cpus 1 --agent-mem 512M --controller-config "$DIR/controller.conf"

# --array: fifty jobs in one request, each printing its index; the array's id is printed once,
# its tasks' ids are consecutive, in order. The submitter's own COLONY_ARRAY_INDEX (as if it
# were an array's job) is replaced.
mapfile -t out < <(COLONY_ARRAY_INDEX=77 colony submit --cpus 0.1 --mem 16M --array 0-49 -- \
        /bin/sh -c 'echo "$COLONY_ARRAY_INDEX $(env | grep -c ^COLONY_ARRAY_INDEX=)"')
[ "${#out[@]}" = 1 ] || fail "--array 0-49 printed ${#out[@]} ids, want the array's alone: ${out[*]}"
ids=()
for ((i = 0; i < 50; i++)); do ids+=($((out[0] + i))); done
for ((i = 0; i < 50; i++)); do
        colony wait "${ids[$i]}" >/dev/null || fail "job ${ids[$i]}: $(colony show "${ids[$i]}")"
        [ "$(cat "colony-${ids[0]}_$i.out")" = "$i 1" ] ||
                fail "job ${ids[$i]} printed '$(cat "colony-${ids[0]}_$i.out")', want '$i 1' (its index, once)"
done
[ "$(colony show --json "${ids[7]}" | jq -c '.job | [.array_first, .array_index]')" = "[${ids[0]},7]" ] ||
        fail "job ${ids[7]}'s record does not name its array: $(colony show --json "${ids[7]}")"
colony show "${ids[7]}" | grep -q "^array: *index 7 of the array from job ${ids[0]}$" || fail "colony show names no array"
note "--array 0-49: jobs ${ids[0]}..${ids[49]} printed their indexes 0..49"
reply=$(colony submit --json --cpus 0.1 --mem 16M --array 4,9 -- /bin/true)
[ "$(jq -c '.id as $f | [.type, .id > 0, .count, [.tasks[] | [.id - $f, .index]]]' <<<"$reply")" = '["submitted",true,2,[[0,4],[1,9]]]' ] ||
        fail "--array --json printed: $reply"
for id in $(jq '.id, .id + 1' <<<"$reply"); do colony wait "$id" >/dev/null || fail "job $id: $(colony show "$id")"; done

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

# a full queue: with the node busy, an array past max_pending = 50 is refused whole (nothing
# queued, nothing printed), one that fits is taken whole, and then a single job is refused
blocker=$(colony submit --cpus 1 --mem 16M -- "$COLONY_BIN/colony-stress" sleep 600)
wait_state "$blocker" running
pending() { colony queue --json | jq '[.jobs[] | select(.state == "pending")] | length'; }
set +e
out=$(colony submit --cpus 1 --mem 16M --array 0-50 -- "$COLONY_BIN/colony-stress" sleep 600 2>"$DIR/full.err")
rc=$?
set -e
[ "$rc" = 1 ] || fail "--array past the cap exited $rc, want 1"
[ -z "$out" ] || fail "a refused array printed ids: $out"
[ "$(wc -l <"$DIR/full.err")" = 1 ] || fail "want one line of error: $(cat "$DIR/full.err")"
grep -q "queue full: 0 jobs pending, and an array of 51 would pass max_pending (50): none submitted" "$DIR/full.err" ||
        fail "the refusal does not say why: $(cat "$DIR/full.err")"
[ "$(pending)" = 0 ] || fail "a refused array left $(pending) jobs pending"
note "--array 51 into a queue of 50: refused whole ($(cut -c1-90 "$DIR/full.err"))"
mapfile -t out < <(colony submit --cpus 1 --mem 16M --array 0-49 -- "$COLONY_BIN/colony-stress" sleep 600)
[ "${#out[@]}" = 1 ] && [ "$(pending)" = 50 ] || fail "--array 0-49 into a queue of 50: ${#out[@]} ids, $(pending) pending"
set +e
colony submit --cpus 1 --mem 16M -- "$COLONY_BIN/colony-stress" sleep 600 2>"$DIR/full.err"
rc=$?
set -e
[ "$rc" = 1 ] && grep -q "queue full: 50 jobs pending" "$DIR/full.err" || fail "a 51st job was not refused: $(cat "$DIR/full.err")"
note "--array 50 taken whole; then a single job refused"
for id in "${out[@]}" "$blocker"; do colony cancel "$id" >/dev/null; done
echo "PASS"
