#!/usr/bin/env bash
# What Slurm users type: a bare --mem is MiB (the job's cgroup gets that limit), under 1M is
# refused; the job's COLONY_* and thread-count variables; %-patterns in --output and an array's
# own default files.
. "$(dirname "$0")/lib.sh"
cluster_up --agents 1 --agent-cpus 4 --agent-mem 2G
node="${PREFIX}1"

# --mem 100: 100 MiB in the kernel's own file.
id=$(colony submit --name mem100 --cpus 0.1 --mem 100 -- /bin/sleep 60)
wait_started "$id" # placed is "running" already; its cgroup is there once it started
if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then
        limit=$(cat "$(job_cgroup "" "$node" "$id")/memory.max")
else
        limit=$(cat "$(job_cgroup memory "$node" "$id")/memory.limit_in_bytes")
fi
note "--mem 100: the job's cgroup limit is $limit bytes"
[ "$limit" = $((100 << 20)) ] || fail "--mem 100 gave a limit of $limit bytes, want $((100 << 20))"
colony cancel "$id" >/dev/null
set +e; colony wait --timeout 60 "$id" >/dev/null; set -e
[ "$(job_field "$id" mem)" = $((100 << 20)) ] || fail "the record's mem is $(job_field "$id" mem)"

# Under 1 MiB: refused with the reason, nothing queued.
before=$(colony queue --all --json | jq '.jobs | length')
for bad in "--mem 512K" "--mem-high 100K" "--mem 0"; do
        set +e; out=$(colony submit $bad -- /bin/true 2>&1); rc=$?; set -e
        [ $rc = 2 ] || fail "colony submit $bad exited $rc, want 2 (refused): $out"
        grep -q "less than 1M" <<<"$out" || fail "colony submit $bad: no reason: $out"
done
[ "$(colony queue --all --json | jq '.jobs | length')" = "$before" ] || fail "a refused --mem queued a job"

# The job's environment, with a user's OMP_NUM_THREADS kept and the rest set to its CPUs.
id=$(OMP_NUM_THREADS=3 COLONY_JOB_ID=999 colony submit --name envjob --cpus 1.5 --mem 64M --output "$DIR/env.txt" -- /usr/bin/env)
set +e; colony wait --timeout 60 "$id" >/dev/null; set -e
[ "$(job_field "$id" state)" = completed ] || fail "env job $id ended $(job_field "$id" state)"
want="COLONY_JOB_ID=$id COLONY_JOB_NAME=envjob COLONY_NODE=$node COLONY_CPUS=2 COLONY_MEM=64 COLONY_SUBMIT_DIR=$DIR
OMP_NUM_THREADS=3 OPENBLAS_NUM_THREADS=2 MKL_NUM_THREADS=2 NUMEXPR_NUM_THREADS=2"
for kv in $want; do grep -qx "$kv" "$DIR/env.txt" || fail "the job's environment lacks $kv: $(grep -E 'COLONY|THREADS' "$DIR/env.txt" | tr '\n' ' ')"; done
grep -q '^COLONY_ARRAY' "$DIR/env.txt" && fail "a job of no array has COLONY_ARRAY_* variables"
note "job $id: $(grep -E '^(COLONY|OMP|OPENBLAS)' "$DIR/env.txt" | sort | tr '\n' ' ')"

# --output with patterns, and an array's own default files.
id=$(colony submit -J pat -c 0.1 --mem 16M -o "out-%j-%u-%x.txt" -- /bin/echo hello)
set +e; colony wait --timeout 60 "$id" >/dev/null; set -e
[ "$(cat "$DIR/out-$id-root-pat.txt" 2>/dev/null)" = hello ] || fail "no out-$id-root-pat.txt with hello: $(ls "$DIR")"
arr=$(colony submit --array 0-2 --cpus 0.1 --mem 16M -- /bin/sh -c 'echo "$COLONY_ARRAY_JOB_ID $COLONY_ARRAY_TASK_ID $COLONY_ARRAY_INDEX"')
ids=("$arr" $((arr + 1)) $((arr + 2)))
for i in 0 1 2; do
        set +e; colony wait --timeout 60 "${ids[$i]}" >/dev/null; set -e
        f="$DIR/colony-${ids[0]}_$i.out"
        [ "$(cat "$f" 2>/dev/null)" = "${ids[0]} $i $i" ] || fail "$f holds '$(cat "$f" 2>/dev/null)', want '${ids[0]} $i $i'"
done
note "array ${ids[0]}: colony-${ids[0]}_{0,1,2}.out, each with its own index"
set +e; out=$(colony submit --output "out-%q.txt" -- /bin/true 2>&1); rc=$?; set -e
[ $rc != 0 ] && grep -q "unknown pattern %q" <<<"$out" || fail "--output out-%q.txt: exit $rc, $out"
echo "PASS"
