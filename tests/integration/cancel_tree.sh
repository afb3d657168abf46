#!/usr/bin/env bash
# Cancel kills a whole tree whose members ignore SIGTERM; the job's cgroup and processes are gone.
. "$(dirname "$0")/lib.sh"
cluster_up --agents 1 --agent-cpus 2 --agent-mem 1G
agent="${PREFIX}1"

id=$(colony submit --name tree --cpus 0.5 --mem 64M -- "$COLONY_BIN/colony-stress" tree 3 120)
wait_state "$id" running
for ((i = 0; i < 50; i++)); do # parent + 3 children + 3 grandchildren
        [ "$(job_procs "$agent" "$id" | wc -l)" -ge 7 ] && break
        sleep 0.1
done
mapfile -t procs < <(job_procs "$agent" "$id")
[ "${#procs[@]}" -ge 7 ] || fail "expected 7 processes in the job's cgroup, found ${#procs[@]}"
note "job $id has ${#procs[@]} processes, all ignoring SIGTERM"

colony cancel "$id" >/dev/null
set +e; colony wait "$id" >/dev/null; set -e
[ "$(job_field "$id" state)" = cancelled ] || fail "state $(job_field "$id" state), want cancelled"
for p in "${procs[@]}"; do alive "$p" && fail "process ${p%%:*} survived the cancel"; done
# The agent's sync thread removes the emptied cgroup beside the report, not before it.
for ctl in cpu memory pids; do
        d=$(job_cgroup "$ctl" "$agent" "$id")
        for ((i = 0; i < 300; i++)); do [ -e "$d" ] || break; sleep 0.1; done
        [ -e "$d" ] && fail "cgroup $d still exists"
done
echo "PASS"
