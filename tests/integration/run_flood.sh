#!/usr/bin/env bash
# colony run's follower that does not read (SIGSTOPped) while its job writes 100 MB: the
# controller's and the agent's memory stay within a bound, neither the job nor other clients
# are blocked, and the follower gets every byte once it reads again. The relay's buffers are
# the subject, not the job's cgroup: host-only (in the TCG guest 100 MB through two daemons
# and three checksums took minutes).
. "$(dirname "$0")/lib.sh"
cluster_up --agents 1 --agent-cpus 4 --agent-mem 2G
node="${PREFIX}1"

# A follower stopped while its job writes 100 MB.
rss_kb() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status"; }
ctl=$(cat "$DIR/controller.pid")
agent=$(agent_pid "$node")
ctl0=$(rss_kb "$ctl") agent0=$(rss_kb "$agent")
"$COLONY_BIN/colony" run --mem 256M -- sh -c 'sleep 0.5; head -c 100000000 /dev/urandom; echo end' >big.out &
run=$!
STARTED_PIDS+=("$run")
id=""
wait_for '[ -n "$(colony queue --json | jq ".jobs[] | select(.state == \"running\") | .id")" ]' "the 100 MB job running"
id=$(colony queue --json | jq '.jobs[] | select(.state == "running") | .id')
kill -STOP "$run"
ctl_max=$ctl0 agent_max=$agent0 t0=$(now)
while [ "$(job_field "$id" state)" = running ]; do
        c=$(rss_kb "$ctl") a=$(rss_kb "$agent")
        ((c > ctl_max)) && ctl_max=$c
        ((a > agent_max)) && agent_max=$a
        colony nodes >/dev/null || fail "colony nodes failed while a follower was stopped"
        (($(date +%s) - ${t0%.*} < 300)) || fail "job $id did not end in 300 s while its follower was stopped"
        sleep 0.1
done
ended_in=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
[ "$(job_field "$id" state)" = completed ] || fail "job $id ended $(job_field "$id" state)"
size=$(stat -c %s "colony-$id.out")
# another follower is served meanwhile, all of it
colony attach "$id" | sha256sum >other.sum
note "100 MB job $id ended ${ended_in}s after its follower stopped; controller RSS $ctl0 -> max $ctl_max KiB, agent $agent0 -> max $agent_max KiB; file $size bytes"
((ctl_max - ctl0 < 16384)) || fail "the controller grew by $((ctl_max - ctl0)) KiB for one stopped follower (bound 16 MiB)"
((agent_max - agent0 < 16384)) || fail "the agent grew by $((agent_max - agent0)) KiB for one stopped follower (bound 16 MiB)"
kill -CONT "$run"
set +e; wait "$run"; rc=$?; set -e
[ $rc = 0 ] || fail "the stopped run exited $rc"
want=$(sha256sum <"colony-$id.out")
[ "$(sha256sum <big.out)" = "$want" ] || fail "the stopped follower got $(stat -c %s big.out) bytes, not the file's $size"
[ "$(cat other.sum)" = "$want" ] || fail "the other follower's copy differs from the file"

note "done"; echo "PASS"
