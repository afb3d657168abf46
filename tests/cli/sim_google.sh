#!/usr/bin/env bash
# colony sim --google: a synthetic trace in the Google cluster-data 2011 format
# (tests/data/google-synthetic) replayed, with what it leaves out counted as its generator says
# it put in, the departments' and jobs' tables agreeing with the summary, and broken tables
# refused in one line.
set -euo pipefail
[ -x "${COLONY_BIN:-}/colony" ] || { echo "COLONY_BIN not set to the build's bin/"; exit 1; }
command -v jq >/dev/null || { echo "SKIP: jq missing"; exit 77; }
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d /tmp/colony-sim-google-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
top=$(dirname "$0")/../..
data=$top/tests/data/google-synthetic
tasks=$data/task_events.csv machines=$data/machine_events.csv

# the shipped trace is what the generator makes, and the generator says what is in it
"$top/contrib/traces/google-synthetic.sh" "$tmp/gen" >"$tmp/made"
cmp -s "$tmp/gen/task_events.csv" "$tasks" && cmp -s "$tmp/gen/machine_events.csv" "$machines" ||
        fail "contrib/traces/google-synthetic.sh no longer makes tests/data/google-synthetic"
made() { sed -n "s/^$1=//p" "$tmp/made"; }

sim() { "$COLONY_BIN/colony" sim --google "$tasks" --google-machines "$machines" "$@"; }
j=$(sim --json --jobs-csv "$tmp/jobs.csv" --depts-csv "$tmp/depts.csv")
got=$(jq -c '[.tasks, .jobs, .refused, .left_out.never_ran, .left_out.unfinished, .left_out.no_submit,
              .left_out.no_request, .left_out.resubmitted, .machines, .machines_without_capacity, .machine_events_ignored]' <<<"$j")
want="[$(made tasks),$(made jobs),$(made refused),$(made never_ran),$(made unfinished),$(made no_submit),$(made no_request),$(made resubmitted),$(made machines),$(made machines_without_capacity),$(made machine_events_ignored)]"
[ "$got" = "$want" ] || fail "tasks, jobs, refused, left out, machines: $got, the generator made $want"
[ "$(jq '.completed + .refused == .jobs' <<<"$j")" = true ] || fail "completed + refused != jobs"
echo "# $(jq -c '{jobs, completed, wait: .wait.mean, p95: .wait.p95, cpu: .mean_cpu_utilization}' <<<"$j")"

# departments: users by default; every job in one; the shares add up to 1
[ "$(jq -r .departments_by <<<"$j")" = user ] || fail "Google departments should be users by default"
jq -e '([.departments[].jobs] | add) == .jobs and (([.departments[].cpu_share] | add) - 1 | fabs) < 1e-9
       and ([.departments[].refused] | add) == .refused' <<<"$j" >/dev/null ||
        fail "departments do not add up: $(jq -c '[.departments[] | [.name, .jobs, .refused, .cpu_share]]' <<<"$j")"
n=$(jq '.departments | length' <<<"$j")
[ "$(($(wc -l <"$tmp/depts.csv") - 1))" = "$n" ] || fail "--depts-csv has $(wc -l <"$tmp/depts.csv") lines for $n departments"
awk -F, -v want="$(jq .jobs <<<"$j")" 'NR > 1 { s += $2 } END { exit s != want }' "$tmp/depts.csv" ||
        fail "--depts-csv jobs do not add up to $(jq .jobs <<<"$j")"
classes=$(sim --json --dept-by class | jq -c '[.departments[].name] | sort')
[ "$classes" = '["class0","class1","class2","class3"]' ] || fail "--dept-by class: $classes"

# --jobs-csv: one row per accepted job whose wait is start - arrival; their mean is the summary's
rows=$(($(wc -l <"$tmp/jobs.csv") - 1))
[ "$rows" = "$(jq .completed <<<"$j")" ] || fail "--jobs-csv has $rows jobs, completed $(jq .completed <<<"$j")"
awk -F, -v mean="$(jq .wait.mean <<<"$j")" 'NR > 1 {
                if ($7 < 0 || $7 - ($5 - $4) > 0.002 || $7 - ($5 - $4) < -0.002 || $8 < $7) bad = NR
                s += $7; n++ }
        END { d = s / n - mean; exit bad || d > 0.001 || d < -0.001 }' "$tmp/jobs.csv" ||
        fail "--jobs-csv waits disagree with the summary's mean $(jq .wait.mean <<<"$j")"

# normalized sizes: the same run whatever a size of 1.0 is read as
a=$(sim --json --google-scale 64,256G | jq -c '[.completed, .wait, .response]')
b=$(sim --json --google-scale 128,512G | jq -c '[.completed, .wait, .response]')
[ "$a" = "$b" ] || fail "doubling --google-scale changed the run: $a, $b"
# the cluster from a colony place file instead of machine_events
one=$("$COLONY_BIN/colony" sim --json --google "$tasks" --machines "$top/tests/data/one-machine.json" |
        jq -c '[.machines, .jobs == .completed + .refused]')
[ "$one" = "[1,true]" ] || fail "--machines with --google: $one"
sim | grep -q "^departments (by user):" || fail "the summary has no department table"

head -5 "$tasks" >"$tmp/t.csv"
sed -n 6p "$tasks" | cut -d, -f1-12 >>"$tmp/t.csv"
check_exit 1 "t.csv:6: fewer than 13 fields" sim --google "$tmp/t.csv" --google-machines "$machines"
{ sed -n 100p "$tasks"; sed -n 1p "$tasks"; } >"$tmp/order.csv"
check_exit 1 "order.csv:2: time goes backwards" sim --google "$tmp/order.csv" --google-machines "$machines"
{ cat "$machines"; sed -n 1p "$machines"; } >"$tmp/m.csv"
check_exit 1 "m.csv:$(($(wc -l <"$machines") + 1)): a machine added twice at time 0" sim --google "$tasks" --google-machines "$tmp/m.csv"
check_exit 1 "No such file" sim --google "$tmp/none.csv" --google-machines "$machines"
check_exit 2 "needs --google-machines" sim --google "$tasks"
check_exit 2 "--dept-by group: a Google trace" sim --google "$tasks" --google-machines "$machines" --dept-by group
check_exit 2 "--google-scale" sim --google "$tasks" --google-machines "$machines" --google-scale 64
check_exit 2 "give one of" sim --google "$tasks" --google-machines "$machines" --workload mishra
check_exit 1 "--jobs-csv /nonexistent/j.csv" sim --google "$tasks" --google-machines "$machines" --jobs-csv /nonexistent/j.csv
echo PASS
