#!/usr/bin/env bash
# google-synthetic.sh - write a small SYNTHETIC trace in the format of Google's cluster-data 2011
# (clusterdata-2011-2, schema v2.1): task_events.csv and machine_events.csv, plain CSV without a
# header, as colony sim --google and --google-machines read them. None of it comes from Google's
# data: it exercises every path of the reader (first runs that finish, fail, are killed or
# evicted and resubmitted; tasks killed before they run, tasks that never end, tasks without a
# SUBMIT or without requests, tasks larger than every machine, UPDATE_PENDING, events "after the end of the trace"; machines
# added at time 0, later, removed, updated, or without a capacity).
#
#   contrib/traces/google-synthetic.sh [-s SEED] [-j JOBS] [-m MACHINES] [-t SECONDS] DIR
#
# It prints what it made as key=value lines: tests/cli/sim_google.sh compares them with what
# colony sim counts. The same arguments give the same files with any awk (the generator is
# Park and Miller's minimal standard, exact in double arithmetic).
#
# For the real trace: download the task_events and machine_events part files (gsutil, see the
# schema document), then
#   zcat task_events/part-*-of-00500.csv.gz > task_events.csv   # the parts are in time order
#   zcat machine_events/part-00000-of-00001.csv.gz > machine_events.csv
set -euo pipefail
seed=1 jobs=60 machines=8 span=1800
usage() { sed -n '/^#   contrib/p' "$0" | sed 's/^#  *//' >&2; exit 2; }
while getopts s:j:m:t:h o; do
        case $o in
        s) seed=$OPTARG ;; j) jobs=$OPTARG ;; m) machines=$OPTARG ;; t) span=$OPTARG ;; *) usage ;;
        esac
done
shift $((OPTIND - 1))
[ $# = 1 ] || usage
dir=$1
mkdir -p "$dir"
export LC_ALL=C

awk -v seed="$seed" -v njobs="$jobs" -v nmachines="$machines" -v span="$span" \
    -v tasks_out="$dir/task_events.unsorted" -v machines_out="$dir/machine_events.unsorted" '
function rnd() { state = (state * 16807) % 2147483647; return state / 2147483647 }
function exprnd(mean) { return -mean * log(1 - rnd()) }
function pick(n) { return int(rnd() * n) }
function hash(   s, i) { # a 44-character base64 string, like the trace'"'"'s hashed names
        s = ""
        for (i = 0; i < 43; i++) s = s substr(b64, pick(64) + 1, 1)
        return s "="
}
function usec(t) { return sprintf("%.0f", t) }
# time,missing info,job ID,task index,machine ID,event type,user,scheduling class,priority,CPU,memory,disk,different machines
function ev(t, type, cpu, mem, m) {
        printf "%s,,%s,%d,%s,%d,%s,%d,%d,%s,%s,%.5f,%d\n", usec(t), job_id, task, m, type, user, cls, prio, cpu, mem,
                disk, diff > tasks_out
}
BEGIN {
        b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
        state = seed % 2147483646 + 1
        for (i = 0; i < 8; i++) users[i] = hash()
        for (i = 0; i < 3; i++) platforms[i] = hash()
        ncpus = split("0.25 0.5 0.5 0.5 1", cpus, " ")
        nmems = split("0.2493 0.4995 0.4995 0.749 1", mems, " ")
        for (i = 0; i < nmachines; i++) {
                mid[i] = sprintf("%.0f", 5 + i * 100000 + pick(100000)) # distinct
                c = pick(ncpus) + 1
                # one machine has no capacity in the trace: colony leaves it out
                if (i == 1) print "0," mid[i] ",0," platforms[0] ",," > machines_out
                else { print "0," mid[i] ",0," platforms[c % 3] "," cpus[c] "," mems[c] > machines_out; added++ }
        }
        # later events: a removal, an update, a machine added later
        print usec(span * 1e6 / 2) "," mid[2] ",1," platforms[0] "," cpus[1] "," mems[1] > machines_out
        print usec(span * 1e6 / 3) "," mid[3] ",2," platforms[0] ",0.5,0.2493" > machines_out
        print usec(span * 1e6 / 4) ",4820285492,0," platforms[1] ",0.5,0.4995" > machines_out
        ignored = 3

        t = 600e6 # the 2011 trace starts at 600 s
        for (j = 0; j < njobs; j++) {
                t += exprnd(span * 1e6 / njobs)
                job_id = sprintf("%.0f", 6251000000 + j * 7919 + pick(7919))
                user = users[pick(8)]; cls = pick(4); prio = pick(12)
                ntasks = 1 + pick(5)
                for (task = 0; task < ntasks; task++) {
                        tasks++
                        cpu = sprintf("%.5f", 0.00625 * (1 + pick(24)))
                        mem = sprintf("%.5f", 0.0025 * (1 + pick(40)))
                        disk = 0.0001 * pick(100); diff = pick(2)
                        m = mid[pick(nmachines)]
                        start = t + exprnd(2e6)
                        end = start + 1e6 + exprnd(600e6)
                        u = rnd()
                        if (u < 0.03) { # killed before it ran
                                ev(t, 0, cpu, mem, ""); ev(start, 5, cpu, mem, ""); never_ran++
                        } else if (u < 0.06) { # still running when the trace ends
                                ev(t, 0, cpu, mem, ""); ev(start, 1, cpu, mem, m); unfinished++
                                if (u < 0.045) printf "9223372036854775807,,%s,%d,%s,4,%s,%d,%d,,,,\n", job_id, task, m, user, cls, prio > tasks_out
                        } else if (u < 0.08) { # running before the trace: no SUBMIT in it
                                ev(t, 1, cpu, mem, m); ev(end, 4, cpu, mem, m); no_submit++
                        } else if (u < 0.09) { # no CPU request anywhere
                                ev(t, 0, "", mem, ""); ev(start, 1, "", mem, m); ev(end, 4, "", mem, m); no_request++
                        } else {
                                if (u < 0.095) { cpu = "1.50000"; refused++ } # larger than every machine
                                ev(t, 0, cpu, mem, "")
                                if (u < 0.2) { mem = sprintf("%.5f", mem * 2); ev((t + start) / 2, 7, "", mem, "") }
                                ev(start, 1, cpu, mem, m)
                                if (u < 0.25) { # evicted, then runs again: colony keeps the first run only
                                        ev(end, 2, cpu, mem, m); ev(end + 1e6, 0, cpu, mem, "")
                                        ev(end + 3e6, 1, cpu, mem, m); ev(end + 3e6 + exprnd(60e6), 4, cpu, mem, m)
                                        resubmitted++
                                } else {
                                        ev(end, u < 0.3 ? 3 : u < 0.33 ? 5 : 4, cpu, mem, m)
                                }
                                first_runs++
                        }
                }
        }
        printf "tasks=%d\njobs=%d\nrefused=%d\nnever_ran=%d\nunfinished=%d\nno_submit=%d\nno_request=%d\nresubmitted=%d\n",
                tasks, first_runs, refused, never_ran, unfinished, no_submit, no_request, resubmitted
        printf "machines=%d\nmachines_without_capacity=1\nmachine_events_ignored=%d\n", added, ignored
}'
# time order, as in the trace; equal times keep the order they were made in (SUBMIT first)
sort -s -t, -k1,1n "$dir/task_events.unsorted" >"$dir/task_events.csv"
sort -s -t, -k1,1n "$dir/machine_events.unsorted" >"$dir/machine_events.csv"
rm -f "$dir/task_events.unsorted" "$dir/machine_events.unsorted"
