#!/usr/bin/env bash
# nvml.sh - the jobs' GPU use through NVML, with a stand-in library built by the tests
# (nvml-standin.c: GPU of minor 240 + i is 10 * (i + 1) % utilised and uses (i + 1) * 256 MiB)
# and an agent of 2 stand-in GPUs (char devices made with mknod in the test's directory,
# c 195:240-241). Without the library nothing is reported: no gpu_util, no "gpu use:" line, no
# sample in /metrics. An nvml_library that does not load, or is no NVML, stops an agent with one
# line. The agent restarted with agent.nvml_library naming it reports each job's own GPUs'
# figures: show, show --json and /metrics.
. "$(dirname "$0")/lib.sh"
mknod "$DIR/gpu0" c 195 240
mknod "$DIR/gpu1" c 195 241
command -v curl >/dev/null || { echo "SKIP: curl missing"; exit $SKIP; }
http_cluster_up "" --agent-cpus 2 --agent-mem 1G --agent-gpu-devices "$DIR/gpu0,$DIR/gpu1"
agent=${PREFIX}1
job() { colony submit --cpus 0.1 --mem 16M --gpus 1 -- /bin/sh -c 'while [ ! -e "go-$COLONY_JOB_ID" ]; do sleep 0.1; done'; }
# sampled ID: the job's agent has reported its usage at least once
sampled() { [ "$(job_field "$1" mem_peak)" != 0 ] && [ "$(job_field "$1" mem_peak)" != null ]; }

a=$(job)
wait_state "$a" running 60
wait_for "sampled $a" "a usage report of job $a"
[ "$(job_field "$a" gpu_util)" = null ] && [ "$(job_field "$a" gpu_mem)" = null ] ||
        fail "without NVML job $a reports gpu_util $(job_field "$a" gpu_util), gpu_mem $(job_field "$a" gpu_mem)"
! colony show "$a" | grep -q "gpu use:" || fail "without NVML colony show says: $(colony show "$a" | grep "gpu use:")"
! curl -fsS "$HTTP/metrics" | grep -q '^colony_job_gpu' || fail "without NVML /metrics has a job's GPU sample"
note "without NVML: no GPU figures for job $a"

# an nvml_library that cannot be loaded, or is no NVML, stops an agent at once, with one line
for bad in "$DIR/none.so" libm.so.6; do
        out=$("$COLONY_BIN/colony-agent" --name "${PREFIX}x" --controller 127.0.0.1:1 --secret-file "$DIR/secret" \
                --gpu-devices "$DIR/gpu0" --nvml-library "$bad" 2>&1) && fail "an agent with nvml_library $bad started"
        [ "$(wc -l <<<"$out")" = 1 ] && grep -q "nvml_library: NVML $bad: " <<<"$out" ||
                fail "the agent's refusal of nvml_library $bad: $out"
        note "refused: ${out#*error: }"
done

# the same agent again, with the stand-in as its NVML (its config file's agent.nvml_library)
printf "[agent]\nnvml_library = %s\n" "$COLONY_BIN/nvml-standin.so" >"$DIR/agent.conf"
agent_kill "$agent"
KILLED_AGENT_CMD+=(--config "$DIR/agent.conf")
agent_start_again "$agent"
wait_node_up "$agent"
grep -q "NVML $COLONY_BIN/nvml-standin.so: the jobs' GPU use is reported" "$DIR/$agent.log" ||
        fail "the agent does not say it reads NVML: $(tail -5 "$DIR/$agent.log")"
b=$(job)
wait_state "$b" running 60
wait_for '[ "$(job_field "$a" gpu_util)" = 10 ] && [ "$(job_field "$b" gpu_util)" = 20 ]' \
        "the stand-in's figures for jobs $a and $b ($(job_field "$a" gpu_ids), $(job_field "$b" gpu_ids))"
[ "$(job_field "$a" gpu_mem)" = $((256 << 20)) ] && [ "$(job_field "$b" gpu_mem)" = $((512 << 20)) ] ||
        fail "gpu_mem of jobs $a and $b: $(job_field "$a" gpu_mem), $(job_field "$b" gpu_mem)"
line=$(colony show "$b" | grep "gpu use:") && grep -q "20% utilised, 512.0M of device memory" <<<"$line" ||
        fail "colony show $b: '$line'"
metrics=$(curl -fsS "$HTTP/metrics")
grep -qx "colony_job_gpu_utilization_ratio{job=\"$a\"} 0.1" <<<"$metrics" &&
        grep -qx "colony_job_gpu_memory_used_bytes{job=\"$b\"} $((512 << 20))" <<<"$metrics" ||
        fail "/metrics: $(grep colony_job_gpu <<<"$metrics")"
note "with the stand-in NVML: job $a 10% and 256M, job $b 20% and 512M, in show, --json and /metrics"
touch "go-$a" "go-$b"
for id in "$a" "$b"; do colony wait "$id" >/dev/null || fail "job $id: $(job_field "$id" state) $(job_field "$id" error)"; done
