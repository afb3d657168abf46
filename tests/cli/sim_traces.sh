#!/usr/bin/env bash
# colony sim reads traces as users have them: gzip'd, from standard input, with header and
# comment lines, with the SWF's -1 (unknown) fields, on machines that keep their names; a
# broken line, plain or gzip'd, is one line naming file:line.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
sim_test_start traces
top=$(dirname "$0")/../..
data=$top/tests/data
one=$data/one-machine.json
figures='[.jobs, .completed, .refused, .skipped, .wait, .response, .departments]'
sim() { "$COLONY_BIN/colony" sim --json --machines "$one" "$@"; }

# gzip'd, standard input, and both: the run of the plain file
want=$(sim --trace "$data/tiny.swf" | jq -c "$figures")
gzip -c "$data/tiny.swf" >"$tmp/tiny.swf.gz"
[ "$(sim --trace "$tmp/tiny.swf.gz" | jq -c "$figures")" = "$want" ] || fail "tiny.swf.gz is not read as tiny.swf"
[ "$(sim --trace - <"$data/tiny.swf" | jq -c "$figures")" = "$want" ] || fail "--trace - is not read as tiny.swf"
[ "$(sim --trace - <"$tmp/tiny.swf.gz" | jq -c "$figures")" = "$want" ] || fail "gzip'd standard input"
echo "# tiny.swf plain, gzip'd, from standard input: $want"

# -1 as the format defines it: no run time, or no processors requested nor allocated, or no
# submit time: skipped and counted, not an abort; requested processors -1 fall back to the
# allocated ones (job 7: 2 of them, so it waits for jobs 1 to 3 as a 2-processor job would)
{
        cat "$data/tiny.swf"
        echo "6  105  -1 -1 -1 -1 -1 -1 -1 -1 1 1 1 1 1 -1 -1 -1"
        echo "7  106  -1  5  2 -1 -1 -1  5 1048576 1 1 1 1 1 -1 -1 -1"
        echo "8   -1  -1  5  1 -1 -1  1  5 1048576 1 1 1 1 1 -1 -1 -1"
        echo "9  107  -1  5  0 -1 -1  0  5 1048576 1 1 1 1 1 -1 -1 -1"
} >"$tmp/unknown.swf"
u=$(sim --trace "$tmp/unknown.swf" --jobs-csv "$tmp/jobs.csv")
[ "$(jq -c '[.jobs, .completed, .refused, .skipped, .skipped_no_processors, .skipped_no_submit_time]' <<<"$u")" = \
        "[5,4,1,2,1,1]" ] ||
        fail "unknown.swf: jobs, completed, refused, skipped = $(jq -c '[.jobs, .completed, .refused, .skipped, .skipped_no_processors, .skipped_no_submit_time]' <<<"$u")"
# job 7 (id 4: the refused job 5 got none) arrives at 6 s, starts when jobs 2 and 3 end at 15
[ "$(grep -c '^4,g1,solo,6.000,15.000,20.000,9.000,14.000,2.000,' "$tmp/jobs.csv")" = 1 ] ||
        fail "job 7 did not run as 2 processors from 15 to 20 s: $(cat "$tmp/jobs.csv")"
"$COLONY_BIN/colony" sim --trace "$tmp/unknown.swf" --machines "$one" | grep -q \
        "skipped: 2 without a run time, 1 without a processor count, 1 without a submit time" ||
        fail "the summary does not count the skipped jobs"
echo "# -1 fields: 2 without a run time, 1 without processors, 1 without a submit time skipped"

# machine names of --machines are kept, in the per-job CSV
[ "$(grep -c '^[0-9]*,g1,solo,' "$tmp/jobs.csv")" = 4 ] || fail "the machine's name is not in --jobs-csv: $(cat "$tmp/jobs.csv")"
echo '{"machines": [{"name": "a", "cpus": 2, "mem": "8G"}, {"name": "a", "cpus": 4, "mem": "8G"}]}' >"$tmp/twice.json"
check_exit 1 "two machines are named a" sim --trace "$data/tiny.swf" --machines "$tmp/twice.json"

# a Google table with a header line, gzip'd: the run of the plain one
g=$data/google-synthetic
gsim() { "$COLONY_BIN/colony" sim --json --google "$@" | jq -c '[.tasks, .jobs, .completed, .wait, .machines]'; }
want=$(gsim "$g/task_events.csv" --google-machines "$g/machine_events.csv")
{ echo "time,missing info,job ID,task index,machine ID,event type,user,scheduling class,priority,CPU request,memory request,disk space request,different machine restriction"
  cat "$g/task_events.csv"; } | gzip -c >"$tmp/task_events.csv.gz"
{ echo "time,machine ID,event type,platform ID,CPUs,memory"; cat "$g/machine_events.csv"; } >"$tmp/machine_events.csv"
[ "$(gsim "$tmp/task_events.csv.gz" --google-machines "$tmp/machine_events.csv")" = "$want" ] ||
        fail "a gzip'd task_events with a header is not read as the plain one"
[ "$(gsim - --google-machines "$tmp/machine_events.csv" <"$tmp/task_events.csv.gz")" = "$want" ] ||
        fail "--google - is not read as the plain table"
echo "# Google tables with headers, gzip'd, from standard input: $want"
check_exit 2 "cannot both read standard input" sim --google - --google-machines - </dev/null

# broken lines name file:line, gzip'd or not; a truncated gzip stream is an error, not an end
{ sed -n 1,9p "$data/tiny.swf"; echo "2 101 -1 5 1 -1 -1 1 5"; } | gzip -c >"$tmp/short.swf.gz"
check_exit 1 "short.swf.gz:10: fewer than 18 fields" sim --trace "$tmp/short.swf.gz" --machines "$one"
check_exit 1 "standard input:10: fewer than 18 fields" sim --trace - --machines "$one" <"$tmp/short.swf.gz"
{ cat "$data/tiny.swf"; for i in $(seq 10 5000); do echo "$i 200 -1 5 1 -1 -1 1 5 1048576 1 1 1 1 1 -1 -1 -1"; done; } |
        gzip -c >"$tmp/long.swf.gz"
head -c $(($(stat -c %s "$tmp/long.swf.gz") / 2)) "$tmp/long.swf.gz" >"$tmp/cut.swf.gz"
check_exit 1 "cut.swf.gz:[0-9]*: unexpected end of file" sim --trace "$tmp/cut.swf.gz" --machines "$one"
check_exit 1 "No such file" sim --trace "$tmp/none.swf.gz" --machines "$one"
