#!/usr/bin/env bash
# http.sh - the controller's HTTP side: off by default; when on, /metrics is well-formed
# Prometheus text whose values are the cluster's (checked against the CLI's JSON and the jobs
# this test ran), /api/status agrees, only GET and HEAD are served (HEAD without a body),
# unknown paths are 404, an oversized request is refused, and a client that sends half a
# request stalls nothing and is closed once idle.
. "$(dirname "$0")/lib.sh"
command -v curl >/dev/null || { echo "SKIP: curl missing"; exit $SKIP; }

# Off by default: the controller listens on TCP for its agents only.
cluster_up --agents 1 --agent-cpus 2 --agent-mem 1G
ctl_pid=$(cat "$DIR/controller.pid")
listening=$(ss -Hltnp | grep -c "pid=$ctl_pid,") || true
[ "$listening" = 1 ] || fail "without http_listen the controller has $listening TCP listeners, want 1 (agents)"
colony down --dir "$DIR" >/dev/null

http_cluster_up 'physics = 3\ncs = 1' --agents 1 --agent-cpus 2 --agent-mem 1G
ctl_pid=$(cat "$DIR/controller.pid")
addr=$(ss -Hltnp | grep "pid=$ctl_pid," | awk '{ print $4 }' | grep -v ":$(cat "$DIR/controller.port")\$") ||
        fail "no http listener"
[ "$addr" = "127.0.0.1:${HTTP##*:}" ] || fail "http listens on $addr, want 127.0.0.1:${HTTP##*:}"
http_sample_jobs
agent=${PREFIX}1

# Parse the exposition strictly (format 0.0.4): every sample belongs to a family declared by
# HELP and TYPE before it, names and labels are well-formed, values are numbers, no series twice.
# Prints "series value" lines, the series as written (name{labels}).
parse_metrics() {
        awk '
        function bad(why) { printf "line %d: %s: %s\n", NR, why, $0 > "/dev/stderr"; failed = 1; exit 1 }
        /^# HELP / { help[$3] = 1; next }
        /^# TYPE / { if (!($3 in help)) bad("TYPE before HELP"); if ($4 !~ /^(counter|gauge|histogram|summary|untyped)$/) bad("type"); type[$3] = $4; next }
        /^#/ || /^$/ { next }
        {
                if (!match($0, /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*"(,[a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*")*\})? /))
                        bad("malformed sample")
                series = substr($0, 1, RLENGTH - 1); value = substr($0, RLENGTH + 1)
                if (value !~ /^[-+]?([0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?|Inf|NaN)$/) bad("value")
                name = series; sub(/\{.*/, "", name); base = name
                if (!(base in type)) { sub(/_(bucket|sum|count)$/, "", base); if (type[base] != "histogram") bad("no TYPE for " name) }
                if (series in seen) bad("duplicate series"); seen[series] = 1
                print series, value
        }
        END { if (failed) exit 1 }'
}

metrics=$DIR/metrics.txt
curl -fsS "$HTTP/metrics" | parse_metrics >"$metrics" || fail "/metrics is not valid exposition text"
note "/metrics: $(wc -l <"$metrics") series"
m() { # m SERIES: its value, or fail
        local v
        v=$(awk -v s="$1" '$1 == s { print $2; found = 1 } END { exit !found }' "$metrics") || fail "no series $1"
        echo "$v"
}
expect() { # expect SERIES WANT
        local got
        got=$(m "$1")
        awk -v a="$got" -v b="$2" 'BEGIN { exit !(a + 0 == b + 0) }' || fail "$1 = $got, want $2"
}

# Against what this test did.
expect colony_queue_length 1
expect colony_jobs_running 1
expect colony_jobs_submitted_total 5
expect 'colony_jobs_finished_total{state="completed"}' 1
expect 'colony_jobs_finished_total{state="failed"}' 1
expect 'colony_jobs_finished_total{state="cancelled"}' 1
expect 'colony_jobs_finished_total{state="lost"}' 0
expect "colony_node_up{node=\"$agent\"}" 1
expect "colony_node_running_jobs{node=\"$agent\"}" 1
expect "colony_node_cpu_allocated_cores{node=\"$agent\"}" 1
expect "colony_node_memory_allocated_bytes{node=\"$agent\"}" $((64 << 20))
expect 'colony_department_running_jobs{department="physics"}' 1
expect 'colony_department_cpu_allocated_cores{department="physics"}' 1
expect 'colony_department_pending_jobs{department="cs"}' 1
expect 'colony_department_running_jobs{department="cs"}' 0
expect 'colony_department_share_ratio{department="physics"}' 0.75
# The running, completed and failed jobs started; the pending and cancelled ones never did.
expect colony_job_wait_seconds_count 3
expect 'colony_job_wait_seconds_bucket{le="+Inf"}' 3
awk '$1 ~ /^colony_job_wait_seconds_bucket/ { if ($2 + 0 < prev) exit 1; prev = $2 + 0 }' "$metrics" ||
        fail "colony_job_wait_seconds buckets are not cumulative"
[ "$(m colony_schedule_pass_seconds_count)" -ge 1 ] || fail "no scheduling pass counted"

# Against the CLI's view of the same cluster.
nodes=$(colony nodes --json)
expect "colony_node_cpu_capacity_cores{node=\"$agent\"}" "$(jq '.nodes[0].mcpu / 1000' <<<"$nodes")"
expect "colony_node_memory_capacity_bytes{node=\"$agent\"}" "$(jq '.nodes[0].mem' <<<"$nodes")"
expect colony_queue_length "$(colony queue --json | jq '[.jobs[] | select(.state == "pending")] | length')"
uptime=$(m colony_controller_uptime_seconds)
awk -v u="$uptime" 'BEGIN { exit !(u > 0) }' || fail "uptime $uptime"

# /api/status tells the same story.
status=$(curl -fsS "$HTTP/api/status")
check() { # check JQ_EXPR: must be true of the status document
        jq -e "$1" <<<"$status" >/dev/null || fail "/api/status: not $1"
}
check ".jobs.pending == 1 and .jobs.running == 1 and .jobs.completed == 1 and .jobs.failed == 1"
check ".queue_total == 1 and .queue[0].id == $PENDING_ID and .running[0].id == $RUNNING_ID"
check ".nodes[0].name == \"$agent\" and .nodes[0].mcpu == 2000 and .nodes[0].free_mcpu == 1000"
check '[.departments[].path] == ["physics", "cs"] and .departments[1].pending == 1'
check "[.recent_finished[].id] == [$CANCELLED_ID, $FAILED_ID, $COMPLETED_ID]"
check "[.events[].seq] == ([.events[].seq] | sort | reverse) and (.events | length) >= 10"
check "any(.events[]; .job == $PENDING_ID and .what == \"submitted\") and any(.events[]; .job == $COMPLETED_ID and .what == \"completed\")"
check '.samples.interval_usec == 5000000 and (.samples.time_usec | length) >= 1'
check ".cluster.used_mcpu == 1000 and .cluster.mcpu == 2000"

# Read-only: other methods are refused with Allow; unknown paths are 404; HEAD has no body.
for method in POST PUT DELETE PATCH; do
        out=$(curl -sS -o /dev/null -D - -X "$method" --data x "$HTTP/metrics")
        grep -q '^HTTP/1.1 405' <<<"$out" || fail "$method /metrics: $(head -n1 <<<"$out")"
        grep -qi '^Allow: GET, HEAD' <<<"$out" || fail "$method /metrics: no Allow header"
done
code=$(curl -sS -o /dev/null -w '%{http_code}' "$HTTP/nope")
[ "$code" = 404 ] || fail "GET /nope: $code, want 404"
# HEAD over HTTP/1.0, read until the server closes: headers, the blank line, and nothing after.
exec 3<>"/dev/tcp/127.0.0.1/${HTTP##*:}"
printf 'HEAD /metrics HTTP/1.0\r\n\r\n' >&3
head_out=$(timeout 20 cat <&3 | tr -d '\r') || fail "HEAD /metrics: no answer"
exec 3>&-
grep -q '^HTTP/1.[01] 200' <<<"$head_out" || fail "HEAD /metrics: $(head -n1 <<<"$head_out")"
grep -qi '^Content-Type: text/plain; version=0.0.4' <<<"$head_out" || fail "/metrics content type"
[ -z "$(sed '1,/^$/d' <<<"$head_out")" ] || fail "HEAD /metrics sent a body"

# A 100 KB header is refused (the request memory is bounded), and the controller goes on.
code=$(curl -sS -o /dev/null -w '%{http_code}' -H "X-Big: $(head -c 100000 /dev/zero | tr '\0' a)" "$HTTP/metrics" 2>/dev/null) || true
case $code in 4*|000) note "100 KB header -> $code" ;; *) fail "a 100 KB header got $code" ;; esac

# A client that sends half a request and waits holds a slot, not the loop: the CLI and
# another HTTP client are answered meanwhile.
exec 3<>"/dev/tcp/127.0.0.1/${HTTP##*:}"
printf 'GET /metrics HTTP/1.1\r\nHost: x\r\n' >&3
colony show "$RUNNING_ID" >/dev/null || fail "the CLI got no answer while an HTTP client stalled"
curl -fsS --max-time 5 "$HTTP/api/status" >/dev/null || fail "/api/status got no answer while another client stalled"
# ...and the server closes it once idle for 10 s (libmicrohttpd's timeout, run by the loop's timer).
timeout 30 cat <&3 >/dev/null || fail "a stalled HTTP client was not closed within 30 s"
exec 3>&-
note "metrics, status, methods, limits: ok"
