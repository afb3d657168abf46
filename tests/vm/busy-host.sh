#!/usr/bin/env bash
# busy-host.sh BUILD_DIR [RUNS] - the integration suite in the cgroup v2 guest while two CPU
# hogs run on this host, RUNS times (default 3), one JSON line of run times and results.
#
# The guest is a TCG emulation: with the host's CPUs taken, every step in it is slower still,
# which is what the suite must survive (an agent that stalls its loop, a controller that
# mistakes a slow agent for a dead one). Not part of `contrib/bootstrap.sh test` (it takes
# RUNS times the guest's integration suite, 20-30 minutes each on a quiet host, each allowed
# VM_TIMEOUT seconds, default 7200): `ctest -L busy`.
set -euo pipefail

build=$(realpath "$1")
runs=${2:-3}
run_timeout=${VM_TIMEOUT:-7200} # seconds a run may take
hogs=()
stop_hogs() { for pid in "${hogs[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap stop_hogs EXIT

for _ in 1 2; do
        sh -c 'while :; do :; done' &
        hogs+=($!)
done

passed=0 times=()
for i in $(seq 1 "$runs"); do
        start=$(date +%s)
        # The guest directly, not ctest's vm_integration: its 40-minute cap is for a quiet host,
        # and a busy one takes longer (over 40 minutes beside two hogs and six builds).
        if VM_SHARE=$build VM_TIMEOUT=$run_timeout "$(dirname "$0")/run-in-vm.sh" \
                ctest --test-dir "$build" -L integration -LE host-only --output-on-failure; then
                passed=$((passed + 1))
        fi
        times+=($(( $(date +%s) - start )))
        echo "# run $i of $runs: ${times[-1]} s, $passed passed so far"
done
printf '{"runs":%d,"passed":%d,"seconds":[%s],"host_hogs":2}\n' "$runs" "$passed" "$(IFS=,; echo "${times[*]}")"
[ "$passed" -eq "$runs" ]
