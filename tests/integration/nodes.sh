#!/usr/bin/env bash
# nodes.sh - node choice and drain on a 2-agent cluster: agent 1 has features ssd,avx512 and
# agent 2 gpu. --constraint, --nodelist and --exclude send each job to the right agent, a list
# naming no such node is refused, a feature no node has leaves the job pending; --exclusive takes
# the idle node only and keeps others off it. Drain: the running job finishes, a job for the
# drained node waits, and stays waiting across a controller restart (the drain is stored) and its
# agent's restart; resume lets it run.
. "$(dirname "$0")/lib.sh"
cluster_up --agents 2 --agent-cpus 1 --agent-mem 512M --agent-features ssd,avx512 --agent-features gpu
a1=${PREFIX}1 a2=${PREFIX}2
node_field() { colony nodes --json | jq -r --arg n "$1" ".nodes[] | select(.name == \$n) | .$2 // \"\""; }
[ "$(node_field "$a1" features)" = ssd,avx512 ] || fail "agent 1's features: '$(node_field "$a1" features)'"
[ "$(node_field "$a2" features)" = gpu ] || fail "agent 2's features: '$(node_field "$a2" features)'"
sub() { colony submit --cpus 0.1 --mem 16M "$@"; }
sleeper=("$COLONY_BIN/colony-stress" sleep 60)

# Each option alone picks its agent; both agents are free, so a wrong choice would show.
declare -A want
id=$(sub --constraint 'ssd&avx512' -- "${sleeper[@]}"); want[$id]=$a1
id=$(sub --constraint gpu -- "${sleeper[@]}"); want[$id]=$a2
id=$(sub --constraint 'nvme|avx512' -- "${sleeper[@]}"); want[$id]=$a1
id=$(sub --constraint 'ssd,gpu|gpu' -- "${sleeper[@]}"); want[$id]=$a2
id=$(sub --nodelist "$a2" -- "${sleeper[@]}"); want[$id]=$a2
id=$(sub --nodelist "$a1,$a2" --exclude "$a2" -- "${sleeper[@]}"); want[$id]=$a1
id=$(sub --exclude "$a1" -- "${sleeper[@]}"); want[$id]=$a2; ex=$id
for id in "${!want[@]}"; do
        wait_state "$id" running
        [ "$(job_field "$id" node)" = "${want[$id]}" ] || fail "job $id ($(job_field "$id" constraint) $(job_field "$id" nodelist) $(job_field "$id" exclude)) ran on $(job_field "$id" node), want ${want[$id]}"
done
note "constraint, nodelist and exclude: ${#want[@]} jobs each on its agent"
shown=$(colony show "$ex" | sed -n 's/^nodes: *//p')
[ "$shown" = "not $a1" ] || fail "colony show says nodes: '$shown' for --exclude $a1"

# A list of nodes that do not exist is refused with the reason; so is a bad expression.
out=$(sub --nodelist "$a1,nosuch" -- "${sleeper[@]}" 2>&1) && fail "a nodelist naming no node was accepted: $out"
grep -q "no node named nosuch" <<<"$out" || fail "nodelist refusal without its reason: $out"
out=$(sub --constraint 'ssd&&gpu' -- "${sleeper[@]}" 2>&1) && fail "a bad constraint was accepted: $out"
note "refused: ${out##*: }"
# A feature no node has: pending, while later jobs are placed (a pass ran past it).
nvme=$(sub --constraint nvme -- "${sleeper[@]}")
later=$(sub -- "${sleeper[@]}")
wait_state "$later" running
[ "$(job_field "$nvme" state)" = pending ] || fail "a job for a feature no node has is $(job_field "$nvme" state)"
colony show "$nvme" | grep -q "^waiting: *no connected, undrained node is one it may run on" ||
        fail "colony show gives no reason for a job no node may take: $(colony show "$nvme")"
colony cancel "${!want[@]}" "$later" "$nvme" >/dev/null
for id in "${!want[@]}" "$later"; do colony wait "$id" >/dev/null || true; done

# --exclusive: agent 1 busy, so agent 2; then nothing else goes to agent 2 while it runs.
busy=$(sub --nodelist "$a1" -- "${sleeper[@]}")
wait_state "$busy" running
excl=$(sub --exclusive -- "$COLONY_BIN/colony-stress" sleep 3)
wait_state "$excl" running
[ "$(job_field "$excl" node)" = "$a2" ] || fail "the exclusive job went to busy $(job_field "$excl" node)"
# a2 has 0.9 CPUs free, but this job waits for the exclusive one to end
beside=$(sub --nodelist "$a2" -- "$COLONY_BIN/colony-stress" sleep 0)
colony wait "$excl" >/dev/null || fail "exclusive job: $(job_field "$excl" state) $(job_field "$excl" error)"
colony wait "$beside" >/dev/null || fail "the job after the exclusive one: $(job_field "$beside" state)"
[ "$(job_field "$beside" start_usec)" -ge "$(job_field "$excl" end_usec)" ] || fail "started beside the exclusive job"
note "exclusive: alone on $a2 from $(job_field "$excl" start_usec) to $(job_field "$excl" end_usec)"
colony cancel "$busy" >/dev/null
colony wait "$busy" >/dev/null || true

# Drain agent 1 while a job runs there: it finishes; a job only it may take waits.
running=$(sub --nodelist "$a1" -- "$COLONY_BIN/colony-stress" sleep 3)
wait_state "$running" running
out=$(setpriv --reuid 65534 --regid 65534 --clear-groups "$COLONY_BIN/colony" drain "$a1" 2>&1) &&
        fail "a user drained a node: $out"
grep -q "only root" <<<"$out" || fail "drain by a user refused without the reason: $out"
colony drain "$a1" --reason "disk swap" >/dev/null
[ "$(node_field "$a1" state)" = draining ] || fail "drained node with a job: $(node_field "$a1" state)"
waiting=$(sub --nodelist "$a1" -- "$COLONY_BIN/colony-stress" sleep 0)
colony wait "$running" >/dev/null || fail "the job running at the drain: $(job_field "$running" state)"
[ "$(node_field "$a1" state)" = drained ] || fail "drained node with no job: $(node_field "$a1" state)"
[ "$(node_field "$a1" reason)" = "disk swap" ] || fail "drain reason: '$(node_field "$a1" reason)'"
[ "$(job_field "$waiting" state)" = pending ] || fail "a job was placed on a drained node: $(job_field "$waiting" state)"
colony nodes | grep "$a1" | grep -q "disk swap" || fail "colony nodes does not show the reason: $(colony nodes)"
note "drain: $(colony nodes | grep "$a1")"

# The controller restarts (its agents reconnect): still drained, the job still waits.
cmdline=$(controller_cmdline)
kill -9 "$(cat "$DIR/controller.pid")"
controller_start "$cmdline"
for ((k = 0; k < 300; k++)); do [ "$(node_field "$a1" state)" = drained ] && [ "$(node_field "$a2" state)" = up ] && break; sleep 0.1; done
[ "$(node_field "$a1" state)" = drained ] || fail "after a restart the drained node is $(node_field "$a1" state)"
probe=$(sub --nodelist "$a2" -- "$COLONY_BIN/colony-stress" sleep 0)
colony wait "$probe" >/dev/null || fail "a job on the other node after the restart: $(job_field "$probe" state)"
[ "$(job_field "$waiting" state)" = pending ] || fail "after a restart a job ran on the drained node"
note "after a controller restart: $(node_field "$a1" state), $(node_field "$a1" reason)"

# Its own agent restarts (killed, started again with its command line): still drained.
agent_kill "$a1"
agent_start_again "$a1"
for ((k = 0; k < 300; k++)); do [ "$(node_field "$a1" state)" = drained ] && break; sleep 0.1; done
[ "$(node_field "$a1" state)" = drained ] || fail "after its agent's restart the drained node is $(node_field "$a1" state)"
probe=$(sub --nodelist "$a2" -- "$COLONY_BIN/colony-stress" sleep 0)
colony wait "$probe" >/dev/null || fail "a job on the other node after the agent's restart: $(job_field "$probe" state)"
[ "$(job_field "$waiting" state)" = pending ] || fail "after its agent's restart a job ran on the drained node"
note "after its agent's restart: $(node_field "$a1" state), $(node_field "$a1" reason)"

out=$(colony resume "$a1")
[ "$out" = "$a1: up" ] || fail "resume said '$out'"
colony wait "$waiting" >/dev/null || fail "the waiting job after resume: $(job_field "$waiting" state)"
out=$(colony resume "$a1" 2>&1) && fail "resuming an undrained node: $out"
note "resumed: job $waiting ran on $(job_field "$waiting" node)"
echo "PASS"
