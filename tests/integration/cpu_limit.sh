#!/usr/bin/env bash
# A CPU hog under --cpus 0.5 uses at most its quota per wall-second, by its cgroup's accounting,
# plus the slack CFS bandwidth control allows: each CPU's run queue draws its runtime from the
# period's quota in slices (sched_cfs_bandwidth_slice_us, 5 ms), so a period may see one more
# slice per CPU spent (0.05 a CPU at the 100 ms period). The TCG guest's first CI run saw 0.569.
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
slice_us=$(cat /proc/sys/kernel/sched_cfs_bandwidth_slice_us 2>/dev/null || echo 5000)
ceiling=$(awk -v n="$(nproc)" -v s="$slice_us" 'BEGIN { printf "%.3f", 0.5 + n * s / 100000 }')
# Up to three 3-second windows: every one must stay under the ceiling, and one must show the hog
# running near it (on a host busy with other work a window may catch it starved).
for window in 1 2 3; do
        read -r t0 u0 <<<"$(sample)"
        sleep 3
        read -r t1 u1 <<<"$(sample)"
        rate=$(awk -v du=$((u1 - u0)) -v dt=$((t1 - t0)) 'BEGIN { printf "%.3f", du / (dt / 1000.0) }')
        note "window $window: hog used $rate CPU-s per wall-second (limit 0.5)"
        awk -v r="$rate" -v c="$ceiling" 'BEGIN { exit !(r <= c) }' || fail "rate $rate above $ceiling"
        awk -v r="$rate" 'BEGIN { exit !(r >= 0.30) }' && break
done
awk -v r="$rate" 'BEGIN { exit !(r > 0.01) }' || fail "rate $rate: the hog did not run at all"
# Below 0.30 in every window the host gave the hog less than its limit: the ceiling held, but
# whether the limit lets it reach half a core could not be seen. Said at the end, as a skip.
starved=$(awk -v r="$rate" 'BEGIN { print (r < 0.30) }')

# the agent reports usage while the job runs (every 2 s): a sample no newer than the cgroup now
sampled=$(job_field "$id" cpu_usec)
now=$(job_cpu_usec "$agent" "$id")
[ "$sampled" -gt 0 ] && [ "$sampled" -le "$now" ] || fail "reported CPU time $sampled us, cgroup says $now us"
note "while running, colony show reports $sampled us of CPU (the cgroup: $now us)"

# pressure (PSI): the host's wherever the kernel has it, the job's on cgroup v2
if [ -r /proc/pressure/cpu ]; then
        host=$(colony nodes --json | jq -c '.nodes[0].psi.cpu')
        jq -e '.some_avg10 >= 0 and .some_avg10 <= 100 and .some_usec > 0' <<<"$host" >/dev/null ||
                fail "the node reports no sane host CPU pressure: $host"
        note "host cpu pressure: $host; colony nodes: $(colony nodes | tail -n 1 | awk '{ print $NF }')"
fi
if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then
        psi=$(colony show --json "$id" | jq -c '.job.psi')
        jq -e '.cpu.some_avg10 >= 0 and .memory.some_avg10 >= 0 and .io.some_avg10 >= 0' <<<"$psi" >/dev/null ||
                fail "the running job reports no pressure: $psi"
        colony show "$id" | grep -q '^pressure:' || fail "colony show prints no pressure line"
        note "job pressure: $(colony show "$id" | grep '^pressure:')"
fi

colony cancel "$id" >/dev/null
wait_state "$id" cancelled
if [ "$starved" = 1 ]; then
        echo "SKIP: the host is too busy: the hog got under 0.30 of a core in every window (last $rate), so only the ceiling was tested"
        exit 77
fi
echo "PASS"
