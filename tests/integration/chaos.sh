#!/usr/bin/env bash
# chaos.sh - a controller and two agents on loopback, a stream of short submissions (every third
# with --requeue), and CHAOS_ROUNDS (default 100) SIGKILLs of the controller, an agent, or both,
# at random moments, each restarted at once. Then, once every job has ended:
#   - every acknowledged job (an id colony submit printed) is in a terminal state, and the event
#     log holds exactly one terminal event for it, matching that state;
#   - no job ran twice at once: each run takes an flock on its job's lock file, which the kernel
#     holds while the run lives (SIGKILL included), and a run that finds it taken says so;
#   - a job without --requeue started at most once, a completed job's last run ended normally;
#   - no job cgroup, job process or agent state file is left.
# It prints its counts. CHAOS_SEED makes the kills repeatable (the timing never is exactly).
. "$(dirname "$0")/lib.sh"

ROUNDS=${CHAOS_ROUNDS:-100}
RANDOM=${CHAOS_SEED:-$$}
# Restarts take well under a second: the reconnect window only has to outlast them, so that a
# job is requeued only when its agent really never had it.
cluster_up --agents 2 --agent-cpus 2 --agent-mem 1G --agent-timeout-ms 4000
agents=("${PREFIX}1" "${PREFIX}2")
mkdir -p "$DIR/runs" "$DIR/locks"
port=$(cat "$DIR/controller.port")
ctl_cmd=()
mapfile -d '' -t ctl_cmd <"/proc/$(cat "$DIR/controller.pid")/cmdline"
ctl_cmd=("${ctl_cmd[@]/127.0.0.1:0/127.0.0.1:$port}")
declare -A agent_cmd
for a in "${agents[@]}"; do
        agent_cmd[$a]=$(tr '\0' '\n' <"/proc/$(agent_pid "$a")/cmdline")
done

# Daemons are started from a subshell, so that this shell neither reaps nor reports them.
restart_controller() {
        ("${ctl_cmd[@]}" >>"$DIR/controller.log" 2>&1 & echo $! >"$DIR/controller.pid")
        STARTED_PIDS+=("$(cat "$DIR/controller.pid")")
}

restart_agent() {
        local cmd=()
        mapfile -t cmd <<<"${agent_cmd[$1]}"
        ("${cmd[@]}" >>"$DIR/$1.log" 2>&1 & echo $! >"$DIR/agent-$1.pid")
        STARTED_PIDS+=("$(agent_pid "$1")")
}

# The job each submission runs: it takes its lock without waiting, notes its start and end with
# its pid; a run that finds the lock taken notes an overlap and does nothing else.
job_script='exec 9>>"$1/locks/$2"
if flock -n 9; then
        echo "start $$" >>"$1/runs/$2"
        sleep "$3"
        echo "end $$" >>"$1/runs/$2"
else
        echo "$2 $$" >>"$1/overlaps"
fi'

# submitter K: submit until $DIR/stop exists; each acknowledged job is one line "id token requeue".
submitter() {
        local n=0 id requeue tok
        set +e
        while [ ! -e "$DIR/stop" ]; do
                n=$((n + 1))
                requeue=$((n % 3 == 0))
                tok="s$1-$n"
                id=$(colony submit --name "$tok" --cpus 0.25 --mem 16M $( ((requeue)) && echo --requeue) -- \
                        /bin/sh -c "$job_script" job "$DIR" "$tok" "0.$((RANDOM % 10))" 2>/dev/null)
                [ -n "$id" ] && echo "$id $tok $requeue" >>"$DIR/acked"
                echo "$SECONDS" >>"$DIR/tried"
                sleep 0.0$((RANDOM % 10))
        done
}
submitter 1 &
sub_pids=("$!")
submitter 2 &
sub_pids+=("$!")
trap 'rc=$?; set +e; touch "$DIR/stop"; kill "${sub_pids[@]}" 2>/dev/null; wait "${sub_pids[@]}"; (exit $rc); teardown' EXIT

kills_ctl=0 kills_agent=0 kills_both=0
started_at=$SECONDS
for ((round = 1; round <= ROUNDS; round++)); do
        sleep 0.$((RANDOM % 5)) # 0 to 0.4 s into the stream
        victim=${agents[RANDOM % 2]}
        case $((RANDOM % 6)) in
        0 | 1)
                kill_wait "$(cat "$DIR/controller.pid")"
                kills_ctl=$((kills_ctl + 1))
                sleep 0.$((RANDOM % 3))
                restart_controller
                ;;
        2 | 3 | 4)
                kill_wait "$(cat "$DIR/agent-$victim.pid")"
                kills_agent=$((kills_agent + 1))
                sleep 0.$((RANDOM % 3))
                restart_agent "$victim"
                ;;
        5)
                kill_wait "$(cat "$DIR/controller.pid")"
                kill_wait "$(cat "$DIR/agent-$victim.pid")"
                kills_both=$((kills_both + 1))
                sleep 0.$((RANDOM % 3))
                restart_controller
                restart_agent "$victim"
                ;;
        esac
done
chaos_s=$((SECONDS - started_at))
touch "$DIR/stop"
wait "${sub_pids[@]}"
note "$ROUNDS rounds in ${chaos_s}s: $kills_ctl controller kills, $kills_agent agent kills, $kills_both of both"

# Every job ends: the longest wait is a reconnect window after the last restart.
drain_from=$SECONDS
for ((i = 0; i < 600; i++)); do
        left=$(colony queue --json 2>/dev/null | jq '.jobs | length') || left=
        [ "$left" = 0 ] && break
        sleep 0.1
done
[ "$left" = 0 ] || fail "$left jobs still pending or running a minute after the last kill"
note "every job ended $((SECONDS - drain_from))s after the last kill; $(wc -l <"$DIR/tried") submissions tried"
[ -z "${CHAOS_DEBUG:-}" ] || cp -r "$DIR" "$CHAOS_DEBUG"

colony queue --all --json >"$DIR/jobs.json"
colony events --since 0 --limit 1000 --json >"$DIR/events.jsonl"
acked=$(wc -l <"$DIR/acked")
[ "$acked" -gt 0 ] || fail "no submission was acknowledged"

# What each job's runs left: token, runs started, first word of the last line ("end" when the
# last run ended normally).
awk 'FNR == 1 && NR > 1 { print tok, starts, last } FNR == 1 { n = split(FILENAME, p, "/"); tok = p[n]; starts = 0 }
     /^start/ { starts++ } { last = $1 } END { if (NR) print tok, starts, last }' "$DIR"/runs/* >"$DIR/runs.txt" 2>/dev/null || true
# Each acknowledged job against its record, its events and its runs, in one pass: every broken
# rule is a line "FAIL ...", then the counts.
verdict=$(jq -rn --slurpfile ev "$DIR/events.jsonl" --slurpfile q "$DIR/jobs.json" --rawfile acked "$DIR/acked" \
        --rawfile runs "$DIR/runs.txt" '
        def lines($t): $t | split("\n") | map(select(. != "") | split(" "));
        def terminal: IN("completed", "failed", "cancelled", "oom-killed", "lost");
        ($ev | map(select(.job > 0)) | group_by(.job) | map({key: (.[0].job | tostring), value: .}) | from_entries) as $by
        | ($q[0].jobs | map({key: (.id | tostring), value: .}) | from_entries) as $rec
        | (lines($runs) | map({key: .[0], value: {starts: (.[1] | tonumber), last: .[2]}}) | from_entries) as $run
        | [lines($acked)[] | . as [$id, $tok, $rq]
           | ($by[$id] // []) as $e | ($e | map(select(.what | terminal))) as $t
           | {id: $id, tok: $tok, rq: ($rq == "1"), state: ($rec[$id].state // "missing"),
              attempt: ($rec[$id].attempt // 0), nterm: ($t | length), twhat: ($t[0].what // "-"),
              why: ($t[0].reason // "" | gsub("[0-9]+"; "N")),
              nreq: ($e | map(select(.what == "requeued")) | length),
              starts: ($run[$tok].starts // 0), last: ($run[$tok].last // "-")}] as $jobs
        | ($jobs[] | "job \(.id) (\(.tok))" as $j
           | (if (.state | terminal) | not then "FAIL \($j) is \(.state)" else empty end),
             (if .nterm != 1 then "FAIL \($j) has \(.nterm) terminal events" else empty end),
             (if .nterm == 1 and .twhat != .state then "FAIL \($j) is \(.state), its terminal event says \(.twhat)"
              else empty end),
             (if .nreq != .attempt - 1 then "FAIL \($j) is at attempt \(.attempt) after \(.nreq) requeues" else empty end),
             (if (.rq | not) and .nreq > 0 then "FAIL \($j) was requeued without --requeue" else empty end),
             (if (.rq | not) and .starts > 1 then "FAIL \($j), without --requeue, started \(.starts) times" else empty end),
             (if .starts > .attempt then "FAIL \($j) started \(.starts) times in \(.attempt) attempts" else empty end),
             (if .state == "completed" and .last != "end" then "FAIL \($j) completed, but its last run did not end"
              else empty end),
             (if .state == "lost" and .last == "end" then "FAIL \($j) ran to its end but was declared lost"
              else empty end)),
          ([$jobs[] | select(.state != "completed") | "\(.state): \(.why)"] | group_by(.)[]
           | "WHY \(length) \(.[0])"),
          "COUNTS \($jobs | length) \([$jobs[] | select(.state == "completed")] | length)" +
          " \([$jobs[] | select(.state == "failed")] | length) \([$jobs[] | select(.state == "cancelled")] | length)" +
          " \([$jobs[] | select(.state == "oom-killed")] | length) \([$jobs[] | select(.state == "lost")] | length)" +
          " \([$jobs[].nreq] | add) \([$jobs[] | select(.nreq > 0)] | length) \([$jobs[].starts] | add)"')
if grep '^FAIL' <<<"$verdict"; then fail "$(grep -c '^FAIL' <<<"$verdict") broken rules (above)"; fi
read -r _ nacked completed failed cancelled oom lost requeues requeued_jobs starts < <(grep '^COUNTS' <<<"$verdict")
[ "$nacked" = "$acked" ] || fail "$acked jobs acknowledged, $nacked checked"
[ ! -s "$DIR/overlaps" ] || fail "jobs ran twice at once: $(cat "$DIR/overlaps")"

# Nothing is left while the agents still run: no job cgroup, no job process, no state file. The
# agents' sync threads remove an ended job's cgroup beside its report, not before it.
for ((i = 0; i < 300; i++)); do
        left_cg=$(find /sys/fs/cgroup -maxdepth 7 -type d -path "*/colony-$PREFIX*/*" -name 'job-*' 2>/dev/null)
        [ -z "$left_cg" ] && break
        sleep 0.1
done
[ -z "$left_cg" ] || fail "job cgroups left: $left_cg"
echo "$job_script" | head -n1 >"$DIR/pattern" # from a file: grep's own command line must not match
# This run's only ($DIR is each one's first argument): another chaos run on the host (a CI run
# beside a developer's) has processes of the same script.
left_procs=$(grep -lsFf "$DIR/pattern" /proc/[0-9]*/cmdline | xargs -r grep -lsF -- "$DIR" || true)
[ -z "$left_procs" ] || fail "job processes left: $left_procs"
for a in "${agents[@]}"; do
        sd="$DIR/agent-$a.state"
        # but spares: files the agent recycles, no job's (docs/architecture.md, "Spare files")
        left=$(ls -A "$sd" 2>/dev/null | grep -v '^\.spare-[0-9]*$' || true)
        [ -z "$left" ] || fail "agent $a's state directory keeps $left"
done

note "jobs acknowledged: $acked; completed $completed, failed $failed, cancelled $cancelled, oom-killed $oom, lost $lost"
grep '^WHY' <<<"$verdict" | sed 's/^WHY /# not completed: /' || true
note "requeues: $requeues of $requeued_jobs jobs; runs started: $starts; events: $(wc -l <"$DIR/events.jsonl")"
note "kills: controller $kills_ctl, agent $kills_agent, controller and agent $kills_both"
echo "PASS"
