#!/usr/bin/env bash
# Batch scripts as sbatch takes them: #SBATCH and #COLONY lines give the job its limits (read
# from its cgroup while it runs), the command line goes over them, an option colony lacks is a
# one-line warning, a bad #COLONY value fails the submit naming its line; the job runs the text
# stored at submit (the file deleted at once), with its "#!" interpreter or /bin/sh, and its
# arguments; colony show --script gives the text back; an array's is stored once.
. "$(dirname "$0")/lib.sh"
cluster_up --agents 1 --agent-cpus 4 --agent-mem 2G
node="${PREFIX}1"
v2=false
[ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] && v2=true

cat >job.sh <<'SCRIPT'
#!/bin/bash
# a lab's script, as Slurm runs it
#SBATCH --cpus-per-task=2 --mem=100M --time=1
#SBATCH --partition=gpu
#SBATCH -J batchy -o out-%j.txt
echo "args: $# $1|$2"
echo "bash: ${BASH_VERSION:+yes}"
while [ ! -e go ]; do sleep 0.1; done
SCRIPT
cp job.sh job.copy
id=$(colony submit job.sh one "two words" 2>warn.txt)
rm job.sh # the job runs what was submitted
note "submit printed $id and warned: $(cat warn.txt)"
[ "$(wc -l <warn.txt)" = 1 ] && grep -q "job.sh: line 4: #SBATCH --partition: colony has no such option; ignored" warn.txt ||
        fail "the warning for --partition: $(cat warn.txt)"
wait_state "$id" running
wait_started "$id" # its cgroup is there once it started, not once placed
if $v2; then
        mem=$(cat "$(job_cgroup "" "$node" "$id")/memory.max")
        cpu=$(cut -d' ' -f1 "$(job_cgroup "" "$node" "$id")/cpu.max")
else
        mem=$(cat "$(job_cgroup memory "$node" "$id")/memory.limit_in_bytes")
        cpu=$(cat "$(job_cgroup cpu "$node" "$id")/cpu.cfs_quota_us")
fi
note "job $id runs with memory $mem bytes, CPU quota $cpu us per 100 ms, time limit $(job_field "$id" time_limit_usec) us"
[ "$mem" = $((100 << 20)) ] || fail "--mem=100M gave a memory limit of $mem"
[ "$cpu" = 200000 ] || fail "--cpus-per-task=2 gave a CPU quota of $cpu"
[ "$(job_field "$id" time_limit_usec)" = 60000000 ] || fail "--time=1 gave $(job_field "$id" time_limit_usec)"
[ "$(job_field "$id" name)" = batchy ] || fail "-J batchy gave the name $(job_field "$id" name)"
colony show --script "$id" >shown.txt || fail "colony show --script: $?"
cmp -s shown.txt job.copy || fail "colony show --script differs from the script submitted: $(diff shown.txt job.copy)"
touch go
set +e; colony wait --timeout 60 "$id" >/dev/null; set -e
[ "$(job_field "$id" state)" = completed ] || fail "job $id ended $(job_field "$id" state): $(job_field "$id" error)"
printf 'args: 2 one|two words\nbash: yes\n' | cmp -s - "out-$id.txt" || fail "out-$id.txt holds: $(cat "out-$id.txt")"

# The command line over the script's lines; no "#!": /bin/sh; --script for a file of any name.
printf '#COLONY --mem 100M --cpus 0.1\n#SBATCH --output=plain-%%j.txt\necho "sh: $0 $1"\n' >plain.txt
id=$(colony submit --mem 64M --script plain.txt arg1)
set +e; colony wait --timeout 60 "$id" >/dev/null; set -e
[ "$(job_field "$id" state)" = completed ] || fail "job $id ended $(job_field "$id" state): $(job_field "$id" error)"
[ "$(job_field "$id" mem)" = $((64 << 20)) ] || fail "--mem 64M on the command line did not win: $(job_field "$id" mem)"
grep -qx "sh: /dev/fd/[0-9]* arg1" "plain-$id.txt" || fail "plain-$id.txt holds: $(cat "plain-$id.txt")"
note "a script without #! ran under /bin/sh: $(cat "plain-$id.txt")"

# An array from a script: the text is stored once, with the array's first job, and each job
# has it again after a controller restart.
printf '#!/bin/sh\n#SBATCH --array=0-2 --mem=16M -c 0.1\n# marker-%s\necho "task $COLONY_ARRAY_TASK_ID"\n' $$ >arr.sh
array=$(colony submit arr.sh)
ids=("${array}_0" "${array}_1" "${array}_2")
[ "$(colony queue --all --json | jq --argjson a "$array" '[.jobs[] | select(.array_first == $a)] | length')" = 3 ] ||
        fail "#SBATCH --array=0-2 did not make 3 jobs of array $array"
for i in 0 1 2; do
        set +e; colony wait --timeout 60 "${ids[$i]}" >/dev/null; set -e
        [ "$(cat "colony-${array}_$i.out")" = "task $i" ] || fail "array task $i wrote: $(cat "colony-${array}_$i.out")"
done
cmdline=$(controller_cmdline)
kill -9 "$(cat "$DIR/controller.pid")"
stored=$(sqlite3 "$DIR/controller.db" "SELECT count(*) FROM jobs WHERE record LIKE '%marker-$$%'")
[ "$stored" = 1 ] || fail "the array's script is in $stored records, want 1"
controller_start "$cmdline"
colony show --script "${ids[2]}" | cmp -s - arr.sh || fail "after a restart, array job ${ids[2]}'s script is: $(colony show --script "${ids[2]}" 2>&1)"

# Refused with one line naming the line, nothing queued: a bad #COLONY value, a script too big.
before=$(colony queue --all --json | jq '.jobs | length')
printf '#!/bin/sh\n#COLONY --cpus 0.1\n#COLONY --mem lots\ntrue\n' >bad.sh
set +e; out=$(colony submit bad.sh 2>&1); rc=$?; set -e
[ $rc = 2 ] && [ "$(wc -l <<<"$out")" = 1 ] && grep -q "bad.sh: line 3: #COLONY: --mem: 'lots' is not a memory size" <<<"$out" ||
        fail "a bad #COLONY value: exit $rc, $out"
{ echo '#!/bin/sh'; head -c 70000 /dev/zero | tr '\0' '#'; echo; } >big.sh
set +e; out=$(colony submit big.sh 2>&1); rc=$?; set -e
[ $rc != 0 ] && grep -q "more than the 65536 bytes a batch script may have" <<<"$out" || fail "a 70 KB script: exit $rc, $out"
[ "$(colony queue --all --json | jq '.jobs | length')" = "$before" ] || fail "a refused script queued a job"
echo "PASS"
