#!/usr/bin/env bash
# arrays.sh - job arrays written as Slurm users write them: a throttle (0-9%2) never lets more
# than two tasks run, the array's id cancels all of them, %A_%a names each task's output; a
# list (1,3,5-7) runs exactly those indexes, and A_3 names one task alone.
. "$(dirname "$0")/lib.sh"
cluster_up --agents 1 --agent-cpus 4 --agent-mem 1G

# tasks_of A [--all]: "index state reason" of each task of array A, a line each
tasks_of() {
        colony queue --json ${2:-} | jq -r --argjson a "$1" '.jobs[] | select(.array_first == $a)
                | "\(.array_index) \(.state) \(.reason // "-")"'
}

# 0-9%2: ten tasks of 0.1 CPU on 4 CPUs, each a second long; sampled while they drain, never
# more than two run, and the others wait for the reason "throttle".
a=$(colony submit --cpus 0.1 --mem 16M --array 0-9%2 -o 'out-%A_%a.txt' -- \
        /bin/sh -c 'sleep 1; echo "$COLONY_ARRAY_JOB_ID $COLONY_ARRAY_TASK_ID"')
[[ $a =~ ^[0-9]+$ ]] || fail "--array printed '$a', want the array's id alone"
folded=$(colony queue | awk -v a="$a" 'index($1, a "_[") == 1 { print $1 }')
max=0 samples=0 throttled=0 end=$((SECONDS + 300))
while ((SECONDS < end)); do
        tasks_of "$a" --all >"$DIR/sample"
        running=$(grep -c ' running ' "$DIR/sample" || true)
        ((running > max)) && max=$running
        grep -q ' pending throttle$' "$DIR/sample" && throttled=1
        samples=$((samples + 1))
        [ "$(grep -c ' completed ' "$DIR/sample" || true)" = 10 ] && break
        sleep 0.1
done
((max <= 2)) || fail "array $a ran $max tasks at once, its throttle is 2"
[ "$(grep -c ' completed ' "$DIR/sample" || true)" = 10 ] || fail "array $a did not complete: $(cat "$DIR/sample")"
[ $throttled = 1 ] || fail "no pending task of $a gave the reason 'throttle' in $samples samples"
note "0-9%2: at most $max running in $samples samples of colony queue --json; the queue folded it as $folded"
[[ $folded =~ ^${a}_\[[0-9,:-]+%2\]$ ]] || fail "colony queue did not fold the pending tasks: '$folded'"
colony wait "$a" >"$DIR/wait.out" || fail "colony wait $a: exit $?: $(cat "$DIR/wait.out")"
[ "$(grep -c completed "$DIR/wait.out")" = 10 ] || fail "colony wait $a did not wait for ten: $(cat "$DIR/wait.out")"
for i in $(seq 0 9); do
        [ "$(cat "out-${a}_$i.txt" 2>/dev/null)" = "$a $i" ] || fail "out-${a}_$i.txt holds '$(cat "out-${a}_$i.txt" 2>/dev/null)'"
done
[ "$(ls out-"$a"_*.txt | wc -l)" = 10 ] || fail "want ten output files: $(ls)"
note "ten files out-${a}_{0..9}.txt, each with COLONY_ARRAY_JOB_ID and COLONY_ARRAY_TASK_ID"

# The array's id cancels every task: the two running and the eight pending.
b=$(colony submit --cpus 0.1 --mem 16M --array 0-9%2 -- "$COLONY_BIN/colony-stress" sleep 600)
wait_state "$b" running
colony cancel "$b" >"$DIR/cancel.out" || fail "colony cancel $b: $(cat "$DIR/cancel.out")"
end=$((SECONDS + 120))
until [ "$(tasks_of "$b" --all | grep -c ' cancelled ' || true)" = 10 ]; do
        ((SECONDS < end)) || fail "colony cancel $b left: $(tasks_of "$b" --all | grep -v cancelled)"
        sleep 0.2
done
note "colony cancel $b: $(cat "$DIR/cancel.out"); all ten cancelled"

# 1,3,5-7 one at a time: c_3, pending behind the throttle, is cancelled alone; the rest run.
# Task 1 holds the throttle until the gate opens, after the cancel: c_3 is still pending then
# however slow the host (a `sleep 1` there let c_3 start first on a busy one).
c=$(colony submit --cpus 0.1 --mem 16M --array 1,3,5-7%1 -- /bin/sh -c \
        "until [ -e '$DIR/gate-c' ]; do sleep 0.1; done; echo \"\$COLONY_ARRAY_TASK_ID\"")
[ "$(tasks_of "$c" --all | cut -d' ' -f1 | tr '\n' ' ')" = "1 3 5 6 7 " ] || fail "array $c has the tasks $(tasks_of "$c" --all)"
colony cancel "${c}_3" >"$DIR/cancel3.out" || fail "colony cancel ${c}_3: $(cat "$DIR/cancel3.out")"
[ "$(colony show --json "${c}_3" | jq -r '.job | "\(.array_index) \(.state)"')" = "3 cancelled" ] ||
        fail "colony show ${c}_3: $(colony show --json "${c}_3")"
touch "$DIR/gate-c"
set +e; colony wait "$c" >"$DIR/wait.out"; rc=$?; set -e
[ $rc = 143 ] || fail "colony wait $c exited $rc, want 143 (a task was cancelled): $(cat "$DIR/wait.out")"
[ "$(tasks_of "$c" --all | tr '\n' ' ')" = "1 completed - 3 cancelled - 5 completed - 6 completed - 7 completed - " ] ||
        fail "array $c ended as $(tasks_of "$c" --all | tr '\n' ' ')"
for i in 1 5 6 7; do
        [ "$(cat "colony-${c}_$i.out")" = "$i" ] || fail "colony-${c}_$i.out holds '$(cat "colony-${c}_$i.out")'"
done
[ ! -e "colony-${c}_3.out" ] || fail "the cancelled task ${c}_3 ran"
note "1,3,5-7%1: ${c}_3 cancelled alone, tasks 1 5 6 7 ran with their own files"

# A_i in release and in a dependency: d_1 is released alone, e waits for it and runs; d_0
# stays held.
d=$(colony submit --hold --cpus 0.1 --mem 16M --array 0-1 -- /bin/true)
colony release "${d}_1" >/dev/null
e=$(colony submit --cpus 0.1 --mem 16M --afterok "${d}_1" -- /bin/true)
colony wait --timeout 120 "$e" >/dev/null || fail "job $e (after ${d}_1): $(colony show "$e")"
[ "$(tasks_of "$d" --all | tr '\n' ' ')" = "0 pending held 1 completed - " ] || fail "array $d: $(tasks_of "$d" --all | tr '\n' ' ')"
[ "$(job_field "$e" dependency)" = "afterok:$((d + 1))" ] || fail "job $e depends on '$(job_field "$e" dependency)'"
out=$(colony release "$d")
[ "$out" = "array $d: 1 tasks released, 1 left as they were (the first: job $((d + 1)) is completed: only a pending job can be held or released)" ] ||
        fail "colony release $d: $out"
colony wait --timeout 120 "$d" >/dev/null || fail "array $d after its release: $(tasks_of "$d" --all | tr '\n' ' ')"
note "release ${d}_1 and --afterok ${d}_1 named the task alone; release $d the rest: $out"

# Bad input: one clear line, nothing submitted.
set +e; err=$(colony submit --array 5-1 -- /bin/true 2>&1); rc=$?; set -e
[ $rc = 2 ] && [ "$err" = "colony: submit: --array '5-1': range 5-1 ends before it begins" ] ||
        fail "--array 5-1: exit $rc, '$err'"
set +e; err=$(colony cancel "${c}_4" 2>&1); rc=$?; set -e
[ $rc != 0 ] && grep -q "array $c has no task 4" <<<"$err" || fail "cancel ${c}_4: exit $rc, '$err'"
# A task the controller does not know is no such job, exit 1 (bad usage is 2), for every
# command of one job alike, as colony wait's usage says.
# A task that exits 1 does not end the wait for the others (1 is also wait's own failure code).
f=$(colony submit --cpus 0.2 --mem 16M --array 0-2 -- /bin/sh -c '[ "$COLONY_ARRAY_TASK_ID" = 1 ] && exit 1; [ "$COLONY_ARRAY_TASK_ID" = 2 ] && sleep 2; exit 0')
set +e; colony wait "$f" >"$DIR/wait.out"; rc=$?; set -e
[ $rc = 1 ] || fail "colony wait $f exited $rc, want 1 (a task exited 1): $(cat "$DIR/wait.out")"
[ "$(job_field $((f + 2)) state)" = completed ] ||
        fail "colony wait $f returned while task 2 was $(job_field $((f + 2)) state): $(cat "$DIR/wait.out")"
note "colony wait $f waited for all 3 tasks though task 1 exited 1"
for cmd in show wait attach; do
        set +e; err=$(colony $cmd "${c}_4" 2>&1); rc=$?; set -e
        [ $rc = 1 ] && grep -q "array $c has no task 4" <<<"$err" || fail "$cmd ${c}_4: exit $rc, '$err'"
done
echo "PASS"
