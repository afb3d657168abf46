#!/usr/bin/env bash
# gpus.sh - GPUs on the live path, with an agent of 2 stand-in GPUs (char devices made with
# mknod in the test's directory, c 195:240-241: NVIDIA's major, minors past any host's GPU count):
# the node offers them with their type; two --gpus 1 jobs get different ones (their COLONY_GPUS,
# CUDA_VISIBLE_DEVICES and ROCR_VISIBLE_DEVICES say which, show and history name them); a third
# waits with reason resources and starts on the one freed; a job asking 3 is refused at submit;
# a restarted agent keeps who holds which; /metrics, the status page and update --gpus see them.
# End to end, a job opens its own GPU and gets EPERM on the other (the backends' device control).
. "$(dirname "$0")/lib.sh"
mknod "$DIR/gpu0" c 195 240
mknod "$DIR/gpu1" c 195 241
command -v curl >/dev/null || { echo "SKIP: curl missing"; exit $SKIP; }
http_cluster_up 'ml = 1\ncs = 1' --agent-cpus 2 --agent-mem 1G --agent-gpu-devices "$DIR/gpu0,$DIR/gpu1" --agent-gpu-type a100
agent=${PREFIX}1
node_field() { colony nodes --json | jget "nodes[name=$agent].$1"; }
[ "$(node_field gpus)" = 2 ] && [ "$(node_field free_gpus)" = 2 ] && [ "$(node_field gpu_type)" = a100 ] ||
        fail "the node offers gpus=$(node_field gpus) free=$(node_field free_gpus) type=$(node_field gpu_type)"

# A job writes what it was given, then waits until the test lets it go (its file "go-ID").
job() {
        colony submit --cpus 0.1 --mem 16M "$@" -- /bin/sh -c \
                'echo "$COLONY_GPUS $CUDA_VISIBLE_DEVICES $ROCR_VISIBLE_DEVICES" >"env-$COLONY_JOB_ID.tmp" &&
                 mv "env-$COLONY_JOB_ID.tmp" "env-$COLONY_JOB_ID"; while [ ! -e "go-$COLONY_JOB_ID" ]; do sleep 0.1; done'
}
given() { # ID: its COLONY_GPUS, once it wrote it; fails when the three variables differ
        local k
        for ((k = 0; k < 600; k++)); do [ -e "env-$1" ] && break; sleep 0.1; done
        [ -e "env-$1" ] || fail "job $1 wrote no environment ($(job_field "$1" state) $(job_field "$1" error))"
        read -r colony cuda rocr <"env-$1"
        [ "$colony" = "$cuda" ] && [ "$colony" = "$rocr" ] || fail "job $1: COLONY_GPUS $colony, CUDA $cuda, ROCR $rocr"
        echo "$colony"
}
release() { for id in "$@"; do touch "go-$id"; done; for id in "$@"; do colony wait "$id" >/dev/null || fail "job $id: $(job_field "$id" state) $(job_field "$id" error)"; done; }

a=$(job --gpus 1)
b=$(job --gres gpu:a100:1 --group ml)
ga=$(given "$a") gb=$(given "$b")
[ -n "$ga" ] && [ -n "$gb" ] && [ "$ga" != "$gb" ] || fail "two --gpus 1 jobs were given '$ga' and '$gb'"
# shares: the GPUs each department's running jobs hold, a column where the cluster has GPUs
[ "$(colony shares --json | jget "departments[path=ml].gpus")" = 1 ] &&
        [ "$(colony shares --json | jget "departments[path=cs].gpus")" = 0 ] ||
        fail "shares gives ml $(colony shares --json | jget "departments[path=ml].gpus") GPUs, cs $(colony shares --json | jget "departments[path=cs].gpus")"
colony shares | awk '$1 == "DEPARTMENT" { g = $NF } $1 == "ml" { m = $NF } END { exit !(g == "GPUS" && m == 1) }' ||
        fail "colony shares shows no GPUS column with ml's 1: $(colony shares)"
[ "$(job_field "$a" gpu_ids)" = "$ga" ] && [ "$(job_field "$b" gpu_ids)" = "$gb" ] ||
        fail "the records say gpu_ids $(job_field "$a" gpu_ids) and $(job_field "$b" gpu_ids), the jobs $ga and $gb"
colony show "$a" | grep -q "^gpus: *1 ($ga)\$" || fail "show does not name job $a's GPU: $(colony show "$a" | grep gpus)"
[ "$(job_field "$b" constraint)" = a100 ] || fail "--gres gpu:a100:1 gave the constraint '$(job_field "$b" constraint)'"
[ "$(node_field free_gpus)" = 0 ] || fail "with both GPUs held the node has $(node_field free_gpus) free"
metrics=$(curl -fsS "$HTTP/metrics")
grep -qx "colony_node_gpu_capacity{node=\"$agent\"} 2" <<<"$metrics" &&
        grep -qx "colony_node_gpu_allocated{node=\"$agent\"} 2" <<<"$metrics" ||
        fail "/metrics on GPUs: $(grep gpu <<<"$metrics")"
[ "$(curl -fsS "$HTTP/api/status" | jget "running[id=$a].gpu_ids")" = "$ga" ] ||
        fail "the status page's running job $a has no gpu_ids $ga"
note "two --gpus 1 jobs: $a got GPU $ga, $b got GPU $gb"

# No GPU left: the third waits for resources, though CPUs and memory are free.
c=$(job --gpus 1)
reason_is "$c" resources 60
out=$(colony update --gpus 3 "$c" 2>&1) && fail "an update to 3 of 2 GPUs was accepted: $out"
grep -q "no node has 3 GPUs" <<<"$out" || fail "the refusal of update --gpus 3 without its reason: $out"
[ "$(job_field "$c" gpus)" = 1 ] || fail "a refused update left job $c asking $(job_field "$c" gpus) GPUs"
out=$(colony submit --cpus 0.1 --mem 16M --gpus 3 -- /bin/true 2>&1) && fail "a job asking 3 of 2 GPUs was accepted: $out"
grep -q "no node has 3 GPUs (largest: 2)" <<<"$out" || fail "the refusal of --gpus 3 without its reason: $out"
note "third job waits (resources); --gpus 3 refused: ${out#colony: }"

# The agent dies and comes back: it still knows who holds which. b's end frees b's GPU, which
# c must then get: an agent that forgot a's would give c the lowest index, a's when a has 0.
agent_kill "$agent"
agent_start_again "$agent"
wait_node_up "$agent"
for ((k = 0; k < 600; k++)); do grep -q "job=$a .*holds GPUs $ga" "$DIR/$agent.log" && break; sleep 0.1; done
grep -q "job=$a .*holds GPUs $ga" "$DIR/$agent.log" || fail "the restarted agent does not say job $a holds GPU $ga"
[ "$(job_field "$c" state)" = pending ] || fail "job $c is $(job_field "$c" state) while both GPUs are held"
release "$b"
gc=$(given "$c")
[ "$gc" = "$gb" ] || fail "after an agent restart job $c got GPU $gc, not $gb which job $b freed (job $a holds $ga)"
note "after an agent restart job $a keeps $ga; job $c got $gc when job $b ended"
release "$a" "$c"
[ "$(node_field free_gpus)" = 2 ] || fail "every job ended, the node has $(node_field free_gpus) GPUs free"
colony history | grep -E "^$c " | grep -q " $gc " || fail "history does not name job $c's GPU: $(colony history | grep -E "^$c ")"

# A configuration naming a missing path or a file that is no device stops the agent at once,
# with one line naming it.
for bad in "$DIR/gpu9" /etc/passwd; do
        out=$("$COLONY_BIN/colony-agent" --name "${PREFIX}x" --controller 127.0.0.1:1 --secret-file "$DIR/secret" \
                --gpu-devices "$DIR/gpu0,$bad" 2>&1) && fail "an agent with GPU $bad started"
        [ "$(wc -l <<<"$out")" = 1 ] && grep -q "GPU $bad: " <<<"$out" || fail "the agent's refusal of GPU $bad: $out"
done
note "refused: ${out#*error: }"

# End to end with the cgroup backends' device control: a job opens its own GPU's node (the
# stand-in has no driver: ENXIO) and is refused the other's (EPERM); a job of no GPU is refused
# both.
opens() { # opens ID: how each of the two nodes opened in job ID, one word each
        colony wait "$1" >/dev/null || fail "job $1: $(job_field "$1" state) $(job_field "$1" error)"
        sed -e 's/.*No such device or address$/open/' -e 's/.*Operation not permitted$/EPERM/' "colony-$1.out" | tr '\n' ' '
}
probe='for d in gpu0 gpu1; do (exec 3<"$d") 2>&1; done; true'
one=$(colony submit --cpus 0.1 --mem 16M --gpus 1 -- /bin/sh -c "$probe")
none=$(colony submit --cpus 0.1 --mem 16M -- /bin/sh -c "$probe")
[ "$(opens "$one")" = "open EPERM " ] || fail "job $one given GPU $(job_field "$one" gpu_ids): $(cat "colony-$one.out")"
[ "$(opens "$none")" = "EPERM EPERM " ] || fail "job $none of no GPU: $(cat "colony-$none.out")"
note "job $one opens its GPU $(job_field "$one" gpu_ids) and gets EPERM on the other; job $none of none gets EPERM on both"

# An array too long to make at once keeps its tasks' GPUs in its record, through a restart of
# the controller: the tasks it makes later ask for them too.
cmdline=$(controller_cmdline)
arr=$(colony submit --cpus 0.1 --mem 16M --gpus 1 --hold --array 0-299 -- /bin/true)
kill_wait "$(cat "$DIR/controller.pid")"
controller_start "$cmdline"
[ "$(colony queue --json | jget "records[id=$arr].gpus")" = 1 ] ||
        fail "after a restart array $arr's tasks not made yet ask $(colony queue --json | jget "records[id=$arr].gpus") GPUs"
row=$(colony queue | grep -E "^${arr}_\[256-299\] ") || fail "no row for array $arr's record: $(colony queue)"
[ "$(awk '{ print $8 }' <<<"$row")" = 1 ] || fail "colony queue's GPUS of array $arr's record: $row"
colony cancel "$arr" >/dev/null
note "array $arr: its record's tasks still ask 1 GPU after a controller restart"
