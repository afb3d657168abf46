#!/usr/bin/env bash
# A CPU hog under --cpus 0.5 uses at most 0.55 CPU-seconds per wall-second, by its cgroup's accounting.
. "$(dirname "$0")/lib.sh"
cluster_up --agents 1 --agent-cpus 2 --agent-mem 1G
agent="${PREFIX}1"

id=$(colony submit --name hog --cpus 0.5 --mem 32M -- "$COLONY_BIN/colony-stress" cpu 120) # cancelled below
wait_state "$id" running
sleep 0.5 # let the process get into its cgroup's accounting steady state

# "TIME USAGE": the usage read between two clock readings, timed at their midpoint, so that a
# slow read (a TCG guest forks slowly) skews neither end of the interval.
sample() {
        local a b u
        a=$(date +%s%N); u=$(job_cpu_usec "$agent" "$id"); b=$(date +%s%N)
        echo "$(((a + b) / 2)) $u"
}
read -r t0 u0 <<<"$(sample)"
sleep 3
read -r t1 u1 <<<"$(sample)"
rate=$(awk -v du=$((u1 - u0)) -v dt=$((t1 - t0)) 'BEGIN { printf "%.3f", du / (dt / 1000.0) }')
note "hog used $rate CPU-s per wall-second (limit 0.5)"
awk -v r="$rate" 'BEGIN { exit !(r <= 0.55) }' || fail "rate $rate above 0.55"
awk -v r="$rate" 'BEGIN { exit !(r >= 0.30) }' || fail "rate $rate: the hog barely ran, the measurement means nothing"

# the agent reports usage while the job runs (every 2 s): a sample no newer than the cgroup now
sampled=$(job_field "$id" cpu_usec)
now=$(job_cpu_usec "$agent" "$id")
[ "$sampled" -gt 0 ] && [ "$sampled" -le "$now" ] || fail "reported CPU time $sampled us, cgroup says $now us"
note "while running, colony show reports $sampled us of CPU (the cgroup: $now us)"

colony cancel "$id" >/dev/null
wait_state "$id" cancelled
echo "PASS"
