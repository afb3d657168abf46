#!/usr/bin/env bash
# gpu_share.sh - colony up --agents 3 splits the GPUs among its agents, none offered twice: of 4
# stand-in GPUs (char devices made with mknod in the test's directory, c 195:242-245: NVIDIA's
# major, minors past any host's GPU count), the first agent offers the first 2, the second and
# third one each, and the whole cluster offers 4; a job of --gpus 2 runs on the first agent.
. "$(dirname "$0")/lib.sh"
for i in 0 1 2 3; do mknod "$DIR/gpu$i" c 195 $((242 + i)); done
cluster_up --agents 3 --agent-cpus 1 --agent-mem 256M --agent-gpu-devices "$DIR/gpu0,$DIR/gpu1,$DIR/gpu2,$DIR/gpu3"
gpus_of() { colony nodes --json | jget "nodes[name=$1].gpus"; }
got="$(gpus_of "${PREFIX}1") $(gpus_of "${PREFIX}2") $(gpus_of "${PREFIX}3")"
[ "$got" = "2 1 1" ] || fail "the agents offer '$got' GPUs of 4, not '2 1 1'"
id=$(colony submit --cpus 0.1 --mem 16M --gpus 2 -- /bin/sh -c 'echo "$COLONY_GPUS"')
colony wait "$id" >/dev/null || fail "job $id: $(job_field "$id" state) $(job_field "$id" error)"
[ "$(job_field "$id" node)" = "${PREFIX}1" ] || fail "job $id of 2 GPUs ran on $(job_field "$id" node)"
note "3 agents of 4 GPUs offer 2, 1 and 1; a job of 2 ran on the first"
