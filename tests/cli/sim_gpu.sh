#!/usr/bin/env bash
# colony sim --workload gpu-lab (issue 25): under every policy, no machine's GPUs are ever
# oversubscribed in the per-job CSV's timeline and GPU jobs run only on GPU machines; Best-Fit
# and Mix-Fit keep the CPU jobs off idle GPU machines more than First-Fit; with --fair drf the GPU-dominant
# departments hold the GPUs in DRF's proportions while FIFO lets llm take half; the report's
# GPU figures add up; a machine file's "gpus" column is read and a broken one refused.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
sim_test_start gpu
data=$(cd "$(dirname "$0")/../data" && pwd)
# 16 machines at scale 8, in workload.c's order: m1-m4 8 GPUs, m5-m8 4, m9-m16 none.
sim() { "$COLONY_BIN/colony" sim --workload gpu-lab --scale 8 --jobs 3000 --load 1.5 --seed 3 "$@"; }

# gpus_ok CSV: at no instant does a machine run jobs asking more GPUs than it has (ends before
# starts at the same instant: a job may start as another leaves), and some job asks GPUs (a CSV
# that lost its gpus column must not pass). Prints the peak per machine.
gpus_ok() {
        awk -F, 'NR > 1 && $5 != "" && $13 > 0 { print $3 "," $5 "," $13; print $3 "," $6 "," (0 - $13) }' "$1" |
                sort -t, -k1,1 -k2,2g -k3,3n |
                awk -F, '{ n = substr($1, 2) + 0; cap = n <= 4 ? 8 : n <= 8 ? 4 : 0
                           used[$1] += $3; if (used[$1] > cap) { print "over: " $1 " holds " used[$1] " of " cap " GPUs at " $2; bad = 1 }
                           if (used[$1] > peak[$1]) peak[$1] = used[$1] }
                         END { for (m in peak) printf "%s=%d ", m, peak[m]; print ""
                               if (length(peak) == 0) print "no job with GPUs in the CSV"; exit bad || length(peak) == 0 }'
}

for p in "first-fit --order fifo" "first-fit --order backfill" "best-fit-cores --order backfill" \
        "worst-fit-mem --order reserve" "mix-fit" "max-jobs" "tetris" "greedy" "lotes" "coloc"; do
        # shellcheck disable=SC2086 # the policy and its order are two words
        sim --policy $p --jobs-csv "$tmp/jobs.csv" --json >"$tmp/out.json"
        peaks=$(gpus_ok "$tmp/jobs.csv") || fail "--policy $p oversubscribed GPUs: $peaks"
        jq -e '.completed == 3000 and .refused == 0 and .gpus == 48 and .mean_gpu_utilization > 0 and
               .mean_gpu_utilization <= 1' "$tmp/out.json" >/dev/null ||
                fail "--policy $p: $(jq -c '[.completed, .refused, .gpus, .mean_gpu_utilization]' "$tmp/out.json")"
        echo "# $p: GPU utilization $(jq .mean_gpu_utilization "$tmp/out.json"); peaks $peaks"
done

# The report's GPU figures: the departments' GPU shares add to 1, physics asks none, and the
# per-job CSV's GPU-seconds are the departments' own.
out=$(sim --json --jobs-csv "$tmp/jobs.csv")
jq -e '(([.departments[].gpu_share] | add) - 1 | fabs) < 1e-9 and
       (.departments[] | select(.name == "physics") | .gpu_seconds) == 0 and
       ([.utilization[].gpu] | length) == (.utilization | length)' <<<"$out" >/dev/null ||
        fail "department GPU figures: $(jq -c '[.departments[] | [.name, .gpu_share, .gpu_seconds]]' <<<"$out")"
want=$(jq -r '.departments[] | select(.name == "llm") | .gpu_seconds' <<<"$out")
got=$(awk -F, '$2 == "llm" && $5 != "" { s += $13 * ($6 - $5) } END { printf "%.0f", s }' "$tmp/jobs.csv")
awk -v a="$want" -v b="$got" 'BEGIN { exit !((a - b) ^ 2 < (0.001 * a) ^ 2) }' ||
        fail "llm's GPU-seconds: $want in the report, $got in the per-job CSV"
[ "$out" = "$(sim --json)" ] || fail "the same seed gave two different runs"
sim | grep -q '^utilization: cpu .*, gpus .*% of 48 (time-averaged)$' || fail "the summary lacks the GPU utilization"
sim | grep -q '^department .* gpu share$' || fail "the department table lacks the GPU share"
[ "$(sim --csv --sample 3600 | head -1)" = t,cpu,mem,gpu ] || fail "--csv has no gpu column"
sim --csv --sample 3600 | awk -F, 'NR > 1 && ($4 < 0 || $4 > 1) { exit 1 }' || fail "--csv: a GPU fraction out of [0, 1]"

# CPU jobs on the GPU machines (m1-m8), at load 0.5 where GPUs often idle: Best-Fit takes a
# machine whose GPUs idle only when no other fits, Mix-Fit sees idle GPUs bend the angle, First-Fit
# (the GPU machines come first) takes the first that fits.
on_gpu_machines() { # on_gpu_machines POLICY: physics jobs started on m1-m8
        sim --load 0.5 --policy "$1" --order backfill --jobs-csv "$tmp/p.csv" >/dev/null
        awk -F, '$2 == "physics" && $3 != "" && substr($3, 2) + 0 <= 8 { n++ } END { print n + 0 }' "$tmp/p.csv"
}
ff=$(on_gpu_machines first-fit)
bf=$(on_gpu_machines best-fit-cores)
mf=$(on_gpu_machines mix-fit)
echo "# physics jobs on GPU machines at load 0.5: $ff under first-fit, $bf under best-fit-cores, $mf under mix-fit"
[ "$bf" -lt "$ff" ] && [ "$mf" -lt "$bf" ] ||
        fail "physics jobs on GPU machines: first-fit $ff, best-fit-cores $bf, mix-fit $mf"

# DRF: over the middle half of the arrivals every GPU department has a backlog. Under --fair drf
# llm, rl and nlp hold about DRF's level of the GPUs (each near 0.3, nlp its 0.24 of demand);
# in submission order llm's 8-GPU jobs take half of them, nlp 0.15.
shares() { # shares CSV: each department's GPU share over the middle half of the arrivals
        awk -F, 'NR > 1 { if ($4 > last) last = $4; row[NR] = $0 }
                 END { t1 = last / 4; t2 = 3 * last / 4
                       for (i in row) { split(row[i], f, ","); if (f[5] == "") continue
                               s = f[5] > t1 ? f[5] : t1; e = f[6] < t2 ? f[6] : t2
                               if (e > s) g[f[2]] += f[13] * (e - s) }
                       for (d in g) printf "%s=%.3f\n", d, g[d] / 48 / (t2 - t1) }' "$1" | sort
}
share_of() { sed -n "s/^$2=//p" <<<"$1"; }
sim --order backfill --jobs-csv "$tmp/fifo.csv" >/dev/null
sim --order backfill --fair drf --jobs-csv "$tmp/drf.csv" >/dev/null
fifo=$(shares "$tmp/fifo.csv")
drf=$(shares "$tmp/drf.csv")
echo "# GPU shares in submission order: $(echo $fifo); under --fair drf: $(echo $drf)"
awk -v l="$(share_of "$drf" llm)" -v r="$(share_of "$drf" rl)" -v n="$(share_of "$drf" nlp)" \
        'BEGIN { exit !(l - n < 0.1 && r - n < 0.1 && n > 0.2 && l < 0.4) }' ||
        fail "--fair drf: llm, rl and nlp do not share the GPUs as DRF does: $(echo $drf)"
awk -v l="$(share_of "$fifo" llm)" -v n="$(share_of "$fifo" nlp)" 'BEGIN { exit !(l - n > 0.2) }' ||
        fail "in submission order llm no longer takes the GPUs from nlp: $(echo $fifo); the DRF check proves nothing"
check_exit 2 "--fair: 'fastest' is not valid" sim --workload gpu-lab --fair fastest
check_exit 2 "not with --dept-by none" sim --workload gpu-lab --fair drf --dept-by none

# A machine file's "gpus": a trace has no GPU jobs, so they idle, and the summary says of how many;
# a broken value names the machine.
echo '{"machines": [{"name": "g", "cpus": 64, "mem": "256G", "gpus": 8}, {"name": "c", "cpus": 64, "mem": "256G"}]}' \
        >"$tmp/m.json"
"$COLONY_BIN/colony" sim --trace "$data/tiny.swf" --machines "$tmp/m.json" |
        grep -q '^utilization: .*, gpus 0.0% of 8 (time-averaged)$' || fail "the machine file's GPUs are not counted"
echo '{"machines": [{"cpus": 4, "mem": "8G"}, {"cpus": 4, "mem": "8G", "gpus": -1}]}' >"$tmp/bad.json"
check_exit 1 "bad.json: machine 2: gpus: a whole number of devices from 0 to 1024" sim --trace "$data/tiny.swf" \
        --machines "$tmp/bad.json"
echo PASS
