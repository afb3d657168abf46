#!/usr/bin/env bash
# array_record.sh - an array of 1,000,000 tasks is one record while they wait: acknowledged in
# one request (its time printed), listed folded (12_[256-999999]) and in --json as a record,
# the controller's memory bounded (RSS growth under 64 MiB, printed); one task not made yet is
# cancelled, or held, alone, the record's set losing it; the array is held and released whole
# (its record with it) in one request each; afterok on the array waits for every
# task, made or not, and ends as never met once one is cancelled; the array's bulk cancel ends
# every task left at once (a task not made then shows cancelled). Then a throttled array of 300
# (a record too) runs at most 3 tasks at once, and afterok on it starts once all completed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/array_lib.sh"
cat >"$DIR/controller.conf" <<EOF
[controller]
max_pending = 2000000
max_pending_per_user = 1500000
http_listen = 127.0.0.1:0
http_port_file = $DIR/http.port
EOF
cluster_up --agents 1 --agent-cpus 2 --agent-mem 1G --controller-config "$DIR/controller.conf"
HTTP=http://127.0.0.1:$(cat "$DIR/http.port")
rss_kib() { awk '/^VmRSS/ { print $2 }' "/proc/$(cat "$DIR/controller.pid")/status"; }
pending_set() { colony queue --json | jq -r --argjson a "$1" '.records[] | select(.id == $a) | .pending'; }

# a job holding the node, so that the array waits
blocker=$(colony submit --cpus 2 --mem 16M -- "$COLONY_BIN/colony-stress" sleep 600)
wait_state "$blocker" running
rss0=$(rss_kib)
t0=$(date +%s%N)
a=$(colony submit --cpus 1 --mem 8M --array 0-999999 -- /bin/true) || fail "--array 0-999999 refused"
t1=$(date +%s%N)
rss1=$(rss_kib)
note "--array 0-999999: id $a in $(((t1 - t0) / 1000000)) ms (colony's start included); controller RSS $((rss0 / 1024)) -> $((rss1 / 1024)) MiB"
[ $((rss1 - rss0)) -lt $((64 * 1024)) ] || fail "1,000,000 pending tasks grew the controller by $(((rss1 - rss0) / 1024)) MiB"
colony queue | grep -E "^${a}_\[256-999999\] .* pending " >/dev/null || fail "queue has no folded row for the record: $(colony queue | head -n 5)"
[ "$(colony queue --json | jq --argjson a "$a" '.records[] | select(.id == $a) | .count')" = 999744 ] ||
        fail "queue --json's record: $(colony queue --json | jq -c .records)"
[ "$(job_field $((a + 999999)) array_index)" = 999999 ] || fail "show of the last task: $(colony show $((a + 999999)))"
[ "$(pending_set "$a")" = "256-999998" ] || fail "show did not make the last task alone: $(pending_set "$a")"
note "listed folded: $(colony queue | grep -E "^${a}_\[" | head -n 2 | awk '{ print $1 }' | tr '\n' ' ')"

# afterok on the array waits for all its tasks; afterany too
ok=$(colony submit --cpus 0.1 --mem 8M --dependency "afterok:$a" -- /bin/true)
any=$(colony submit --cpus 0.1 --mem 8M --dependency "afterany:$a" -- /bin/true)
reason_is "$ok" dependency
reason_is "$any" dependency

# one task not made yet, alone: cancelled, or held
colony cancel "${a}_500000" >/dev/null || fail "cancel ${a}_500000"
[ "$(job_field $((a + 500000)) state)" = cancelled ] || fail "${a}_500000 is $(job_field $((a + 500000)) state)"
colony hold "${a}_600000" >/dev/null || fail "hold ${a}_600000"
[ "$(job_field $((a + 600000)) hold)" = true ] && [ "$(job_field $((a + 600000)) state)" = pending ] ||
        fail "${a}_600000 after its hold: $(colony show $((a + 600000)))"
[ "$(pending_set "$a")" = "256-499999,500001-599999,600001-999998" ] || fail "the record's set after them: $(pending_set "$a")"
wait_state "$ok" cancelled
job_field "$ok" error | grep -q "can never be met" || fail "afterok: $(job_field "$ok" error)"
reason_is "$any" dependency
note "${a}_500000 cancelled and ${a}_600000 held alone; afterok:$a ended: $(job_field "$ok" error)"

# the whole array held, then released, in one request each: its record too
out=$(colony hold "$a")
[[ $out == "array $a: 999998 tasks held, 2 left as they were (the first: "* ]] || fail "hold $a: $out"
[ "$(colony queue --json | jq --argjson a "$a" '.records[] | select(.id == $a) | .hold')" = true ] || fail "the record is not held"
colony queue | grep -E "^${a}_\[256-499999,.* held *\$" >/dev/null || fail "the record's row is not held: $(colony queue | grep -E "^${a}_")"
out=$(colony release "$a")
[[ $out == "array $a: 999999 tasks released, 1 left as they were (the first: "* ]] || fail "release $a: $out"
[ "$(job_field $((a + 600000)) hold)" != true ] || fail "${a}_600000 is still held"
note "hold $a / release $a: $out"

# the array's bulk cancel: every task left, made or not, at once
out=$(colony cancel "$a")
[ "$out" = "cancelled 999999 pending jobs, asked 0 running jobs to stop" ] || fail "cancel $a: $out"
[ "$(colony queue --json | jq '.records | length')" = 0 ] || fail "records left: $(colony queue --json | jq -c .records)"
[ "$(job_field $((a + 700000)) state)" = cancelled ] || fail "${a}_700000 is $(job_field $((a + 700000)) state)"
[ "$(job_field $((a + 100)) state)" = cancelled ] || fail "${a}_100 is $(job_field $((a + 100)) state)"
wait_state "$ok" cancelled
reason_is "$any" resources
note "cancel $a: $out; afterany:$a waits for resources now"
# any first: the blocker's end frees the node, and any, placed then, ran and ended in 3 ms
# (CI of d7b2807: "cancel: job ... already completed")
colony cancel "$any" >/dev/null
colony cancel "$blocker" >/dev/null

# a throttled array of 300: at most 3 at once, each task's span inside its run
b=$(colony submit --cpus 0.1 --mem 8M --array "0-299%3" -o /dev/null -- /bin/sh -c \
        "s=\$(date +%s%N); sleep 0.05; echo \"\$s \$(date +%s%N)\" >>$DIR/spans")
after=$(colony submit --cpus 0.1 --mem 8M --dependency "afterok:$b" -- /bin/true)
colony wait --timeout 600 "$after" >/dev/null || fail "afterok:$b: $(job_field "$after" state) $(job_field "$after" error)"
[ "$(array_tasks "$b" --all | grep -c ' completed$')" = 300 ] || fail "array $b: $(array_tasks "$b" --all | grep -vc ' completed$') not completed"
[ "$(wc -l <"$DIR/spans")" = 300 ] || fail "array $b's tasks wrote $(wc -l <"$DIR/spans") spans"
most=$(awk '{ print $1, 1; print $2, -1 }' "$DIR/spans" | sort -n -k1,1 -k2,2n | awk '{ n += $2; if (n > m) m = n } END { print m }')
[ "$most" -le 3 ] || fail "array $b ran $most tasks at once, throttle 3"
last_end=$(colony queue --all --json | jq --argjson b "$b" '[.jobs[] | select(.array_first == $b) | .end_usec] | max')
[ "$(job_field "$after" start_usec)" -ge "$last_end" ] || fail "afterok:$b started before its last task ended"
note "array $b%3: 300 completed, at most $most at once; afterok:$b started after the last"
turn=$(curl -sf "$HTTP/metrics" | awk '/^colony_loop_turn_max_seconds/ { print $2 * 1000 }')
note "controller's longest loop turn: $turn ms"
echo "PASS"
