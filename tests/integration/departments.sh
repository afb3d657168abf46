#!/usr/bin/env bash
# departments.sh - departments with CPU weights 3:1, each running CPU hogs on the same core,
# get 75% / 25% of it: the agent gives each department a cgroup whose weight (v2 cpu.weight,
# v1 cpu.shares) follows the controller's [departments], and the kernel does the rest.
. "$(dirname "$0")/lib.sh"

conf=$DIR/controller.conf
printf '[departments]\nphysics = 3\ncs = 1\n' >"$conf"
cluster_up --agents 1 --agent-cpus 2 --agent-mem 512M --controller-config "$conf"
agent=${PREFIX}1

if err=$(colony submit --group chemistry -- true 2>&1); then fail "a job of an unknown department was accepted"; fi
note "unknown department -> $err"

# Two hogs per department, all pinned to CPU 0: the departments contend for that one core.
ids=()
for d in physics cs; do
        for i in 1 2; do
                ids+=("$(colony submit --name "$d$i" --group "$d" --cpus 0.5 --mem 32M -- \
                        taskset -c 0 "$COLONY_BIN/colony-stress" cpu 60)")
        done
done
# A job is running once placed, before its agent has made the cgroups (under load a while
# before): started, it has them.
for id in "${ids[@]}"; do wait_state "$id" running && wait_started "$id"; done

# weight_file DEPT: the department's CPU weight in the kernel.
v2=0
[ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] && v2=1
weight_file() {
        if [ "$v2" = 1 ]; then
                echo "$(agent_cgroup "" "$agent" "dept-$1")/cpu.weight"
        else
                echo "$(agent_cgroup cpu "$agent" "dept-$1")/cpu.shares"
        fi
}
weights="$(cat "$(weight_file physics)") $(cat "$(weight_file cs)")"
if [ "$v2" = 1 ]; then
        [ "$weights" = "300 100" ] || fail "cpu.weight of physics and cs: $weights, want 300 100"
else
        [ "$weights" = "3072 1024" ] || fail "cpu.shares of physics and cs: $weights, want 3072 1024"
fi
note "department weights in the kernel: $weights"

sleep 1 # every hog is spinning
p0=$(cgroup_cpu_usec "$agent" dept-physics) c0=$(cgroup_cpu_usec "$agent" dept-cs)
sleep 6
p1=$(cgroup_cpu_usec "$agent" dept-physics) c1=$(cgroup_cpu_usec "$agent" dept-cs)
share=$(awk -v p=$((p1 - p0)) -v c=$((c1 - c0)) 'BEGIN { printf "%.3f", p / (p + c) }')
note "physics got $share of the contended core (cpu-us physics $((p1 - p0)), cs $((c1 - c0))), want 0.75"
# Within 0.1: equal weights would give 0.5. A guest emulated on a busy host measured 0.682
# (its vCPU stolen in slices the guest's scheduler cannot see).
awk -v s="$share" 'BEGIN { exit !(s >= 0.65 && s <= 0.85) }' || fail "physics share $share not within 0.1 of 0.75"

for id in "${ids[@]}"; do colony cancel "$id" >/dev/null; done
for id in "${ids[@]}"; do colony wait "$id" >/dev/null 2>&1 || true; done
# The department's cgroup goes with its last job, unless the agent's standby waits there with
# its spare (v1: spare-<pid> beside the last job it saw, agent/shepherd.h). Launched last, cs
# holds it, but a standby still in its start when cs's jobs came (a loaded host) stays one
# made beside physics's, until the next launch: then physics keeps that spare alone.
physics=$(agent_cgroup memory "$agent" dept-physics)
for ((i = 0; i < 50; i++)); do [ -d "$physics" ] || break; sleep 0.1; done
if [ -d "$physics" ]; then
        left=$(find "$physics" -mindepth 1 -maxdepth 1 -type d -printf '%f\n')
        standby=$(standby_of "$(agent_pid "$agent")")
        [ -n "$standby" ] && [ "$left" = "spare-$standby" ] ||
                fail "the physics cgroup outlived its last job: it holds ${left:-nothing} (standby ${standby:-none})"
        note "physics's cgroup kept for the standby $standby's spare, made beside its jobs before cs's came"
else
        note "physics's cgroup removed with its last job"
fi
echo "PASS"
