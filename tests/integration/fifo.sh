#!/usr/bin/env bash
# Jobs beyond the free capacity stay pending and start as capacity frees, in submission order.
. "$(dirname "$0")/lib.sh"
cluster_up --agents 1 --agent-cpus 1 --agent-mem 1G

ids=()
for i in 1 2 3 4 5; do
        ids+=("$(colony submit --name "f$i" --cpus 0.5 --mem 32M -- "$COLONY_BIN/colony-stress" sleep 2)")
done
wait_started "${ids[0]}"
# Only meaningful while jobs 1 and 2 still fill the agent: on a slow host (a TCG guest) they may
# end before this looks; the start and end times below prove the order either way.
s3=$(job_field "${ids[2]}" state) s5=$(job_field "${ids[4]}" state)
if [ "$(job_field "${ids[0]}" state)" = running ] && [ "$(job_field "${ids[1]}" state)" = running ]; then
        [ "$s3" = pending ] || fail "third job should wait for capacity"
        [ "$s5" = pending ] || fail "fifth job should wait for capacity"
fi

for id in "${ids[@]}"; do colony wait "$id" >/dev/null || fail "job $id did not complete"; done
prev=0
for id in "${ids[@]}"; do
        start=$(job_field "$id" start_usec)
        [ "$start" -ge "$prev" ] || fail "job $id started before the job submitted ahead of it"
        prev=$start
done
# with room for two at a time, job 3 can only start once job 1 or 2 has ended
first_end=$(( $(job_field "${ids[0]}" end_usec) < $(job_field "${ids[1]}" end_usec) ? $(job_field "${ids[0]}" end_usec) : $(job_field "${ids[1]}" end_usec) ))
[ "$(job_field "${ids[2]}" start_usec)" -ge "$first_end" ] || fail "job 3 started before capacity freed"
note "5 jobs of 0.5 CPU on 1 CPU ran two at a time in submission order"
echo "PASS"
