#!/usr/bin/env bash
# A --mem 64M job that touches 256 MB is OOM-killed and reported so; another job keeps running.
. "$(dirname "$0")/lib.sh"
cluster_up --agent-cpus 2 --agent-mem 2G

bystander=$(colony submit --name bystander --cpus 0.5 --mem 64M -- "$COLONY_BIN/colony-stress" sleep 4)
hog=$(colony submit --name hog --cpus 0.5 --mem 64M -- "$COLONY_BIN/colony-stress" mem 256M 2)

set +e; colony wait "$hog" >/dev/null; rc=$?; set -e
[ "$(job_field "$hog" state)" = oom-killed ] || fail "hog state is $(job_field "$hog" state), want oom-killed"
[ "$(job_field "$hog" oom_kills)" -ge 1 ] || fail "hog reports no OOM kill"
[ "$rc" = 137 ] || fail "colony wait exit code $rc, want 137 (128 + SIGKILL)"
peak=$(job_field "$hog" mem_peak)
[ "$peak" -le $((64 << 20)) ] || fail "hog peak memory $peak exceeds its 64M limit"
note "hog: oom-killed, oom_kills=$(job_field "$hog" oom_kills), peak=$peak bytes"

# Still running, or (on a slow host, e.g. a TCG guest) already done on its own, never killed.
state=$(job_field "$bystander" state)
[ "$state" = running ] || [ "$state" = completed ] || fail "bystander is $state while hog died"
[ "$(job_field "$bystander" oom_kills)" = 0 ] || fail "bystander reports OOM kills"
colony wait "$bystander" >/dev/null || fail "bystander did not complete"
[ "$(job_field "$bystander" state)" = completed ] || fail "bystander state $(job_field "$bystander" state)"

# A soft limit reaches the kernel (v2 memory.high, v1 memory.soft_limit_in_bytes).
soft=$(colony submit --name soft --cpus 0.5 --mem 64M --mem-high 48M -- "$COLONY_BIN/colony-stress" sleep 30)
wait_state "$soft" running
wait_started "$soft" # its cgroup is there once it started, not once placed
agent="${PREFIX}1"
if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then
        value=$(cat "$(job_cgroup "" "$agent" "$soft")/memory.high")
else
        value=$(cat "$(job_cgroup memory "$agent" "$soft")/memory.soft_limit_in_bytes")
fi
[ "$value" = $((48 << 20)) ] || fail "soft limit in the kernel: $value, want $((48 << 20))"
colony show "$soft" | grep -q "soft limit 48.0M" || fail "colony show does not give the soft limit"
if err=$(colony submit --mem 64M --mem-high 65M -- true 2>&1); then fail "a soft limit above --mem was accepted"; fi
note "soft limit: $value bytes in the kernel; above --mem -> $err"
colony cancel "$soft" >/dev/null
echo "PASS"
