#!/usr/bin/env bash
# lotes_live.sh - policy = lotes on a live cluster: first-fit until the first plan, a plan
# solved from the classes learned from a stream of jobs of two classes, re-solved when an agent
# of another capacity joins and again when it leaves; every job completes. A bad
# [lotes_classes] line stops the controller at start with the line named.
. "$(dirname "$0")/lib.sh"

cat >"$DIR/controller.conf" <<EOF
[controller]
policy = lotes
[lotes]
window_s = 120
EOF
controller_log="$DIR/controller.log"
cluster_up --agents 1 --agent-cpus 1 --agent-mem 256M --controller-config "$DIR/controller.conf"
[ -f "$controller_log" ] || fail "no controller log at $controller_log: $(ls "$DIR")"
colony nodes | grep -q "^policy: lotes: first-fit until the first plan" ||
        fail "no first-fit status before any job: $(colony nodes)"

# plan_count: how many plans the controller has solved so far (a learned mix that drifts as
# jobs finish and their times become known may add some).
plan_count() { grep -c "lotes: plan [0-9]* solved" "$controller_log" || true; }
# wait_plan N REASON: until a plan after the first N is solved for REASON.
wait_plan() {
        local k
        for ((k = 0; k < 150; k++)); do
                grep "lotes: plan [0-9]* solved" "$controller_log" | tail -n +$(($1 + 1)) | grep -q "($2)" && return 0
                sleep 0.1
        done
        fail "no plan after the first $1 for '$2'; the log says: $(grep 'lotes:' "$controller_log" | tail -n 5)"
}
# status CONFIGS: the status line names the latest plan, on CONFIGS configurations (read again
# if a plan landed between reading the line and counting the log's plans).
status() {
        local line k
        for ((k = 0; k < 5; k++)); do
                line=$(colony nodes | tail -n 1)
                [[ $line == "policy: lotes: plan $(plan_count), 2 classes on $1 configurations"* ]] && return 0
                sleep 0.5
        done
        fail "status: '$line', want plan $(plan_count) on $1 configurations"
}
# stream N: N jobs alternating the two classes; prints their ids.
stream() {
        local k
        for ((k = 0; k < $1; k++)); do
                if ((k % 2)); then
                        colony submit --cpus 1 --mem 128M -- "$COLONY_BIN/colony-stress" sleep 0.4
                else
                        colony submit --cpus 0.5 --mem 64M -- "$COLONY_BIN/colony-stress" sleep 0.2
                fi
        done
}
all_complete() {
        local id
        for id in "$@"; do wait_state "$id" completed 60; done
}

mapfile -t ids < <(stream 8)
wait_plan 0 "first plan"
all_complete "${ids[@]}"
sleep 1.5 # a tick: the mix learned from finished jobs may drift once more
status 1

# A larger agent joins: a second configuration, a new plan.
port=$(cat "$DIR/controller.port")
"$COLONY_BIN/colony-agent" --name "${PREFIX}big" --controller "127.0.0.1:$port" --secret-file "$DIR/secret" \
        --cpus 2 --mem 512M --stop-jobs-on-exit --state-dir "$DIR/big-state" --scope "$(agent_unit "${PREFIX}big")" \
        >"$DIR/big.log" 2>&1 &
big=$!
STARTED_PIDS+=("$big")
before=$(plan_count)
wait_plan "$before" "machines changed"
mapfile -t ids < <(stream 12)
all_complete "${ids[@]}"
status 2
nodes_used=$(for id in "${ids[@]}"; do job_field "$id" node; done | sort -u | tr '\n' ' ')
note "12 jobs under the plan for both agents ran on: $nodes_used"

# It leaves (idle, so no job is lost): back to one configuration.
before=$(plan_count)
kill -TERM "$big"
wait "$big" || true
wait_plan "$before" "machines changed"
mapfile -t ids < <(stream 4)
all_complete "${ids[@]}"
status 1
note "plans: $(grep -o 'lotes: plan [0-9]* solved ([a-z ]*)' "$controller_log" | sed 's/lotes: //' | tr '\n' ';')"

# Configured classes: a malformed line is refused at start, naming it.
printf '[controller]\npolicy = lotes\n[lotes_classes]\nsmall = 0.5 64M two 1\n' >"$DIR/bad.conf"
if out=$("$COLONY_BIN/colony-controller" --config "$DIR/bad.conf" --secret-file "$DIR/secret" \
        --socket "$DIR/bad.sock" --database "$DIR/bad.db" 2>&1); then
        fail "a bad [lotes_classes] line was accepted"
fi
echo "$out" | grep -q "bad.conf:4: lotes_classes.small: want CPUS MEM RUNTIME_S RATE_PER_S" ||
        fail "the refusal does not name the line: $out"
echo "PASS: $(plan_count) plans (first, join, leave among them), 24 jobs completed"
