#!/usr/bin/env bash
# mapreduce.sh - MapReduce jobs as the earlier LoTES report runs them (Tran and Beck, "Report:
# Google data center scheduling", sections 6-7, Figures 5 and 6): each job 200 maps and 100
# reduces of a Mishra et al. class, reduces after the job's last map, on the report's 10
# machine configurations; LoTES against Greedy (and Tetris) at loads 0.70 to 0.90 of LoTES's
# lambda*, over several seeds, flow time relative to the one on unlimited machines. Not part of
# ctest: it is long.
#
#   COLONY_BIN=build/bin tests/bench/mapreduce.sh        (prints a JSON line per run, then a table)
#
# Environment: SCALE (machines per configuration, default 10: the report has 1000), JOBS per run
# (default 2000 MapReduce jobs, 600,000 tasks), SEEDS (default "1 2 3"; the report 20), LOADS
# (default "0.70 0.75 0.80 0.85 0.90"), POLICIES (default "lotes greedy tetris"), WARMUP
# seconds (default 1728000, 20 days: the longest classes' tasks take 18-22 h on average and a
# job's flow about 11 of them). Only jobs that arrive after the warm-up count; each run also
# gives the means of the two halves of what follows it, which agree when the run is steady.
#
# SCALING=1 measures instead what a replay costs as it grows (issue 22): `colony sim --workload
# mishra-mapreduce` with its defaults (First-Fit, strict FIFO, scale 100, load 0.8) at each count
# of SCALING_JOBS (default "400 2000 20000": 120,300 to 6,000,300 tasks), CPU seconds (user +
# sys) per million tasks, and each over the first count's, the baseline measured in the same run
# (at 400 the queues stay short): a pass whose cost is bounded by what it places keeps the ratio
# near 1 (main 5044faf: the queue's bursts made a pass visit 1,024 jobs and move the queue's
# tail; 2,000 jobs took 17.5 s a million tasks, 20,000 22.5 s, 135 s of CPU).
#
# Flow time: the job's arrival to the end of its last reduce; ideal: its longest map plus its
# longest reduce (every task started the moment it could, as on unlimited machines). "mean" is
# the mean flow over the mean ideal flow (the report divides its mean flow time by the one a
# job alone would have), "median" the same with medians.
set -euo pipefail
bin=${COLONY_BIN:?set COLONY_BIN to the bin directory of a build}
command -v jq >/dev/null || { echo "jq is needed" >&2; exit 1; }
scale=${SCALE:-10} jobs=${JOBS:-2000} seeds=${SEEDS:-1 2 3}
loads=${LOADS:-0.70 0.75 0.80 0.85 0.90} policies=${POLICIES:-lotes greedy tetris}
warmup=${WARMUP:-1728000}
out=$(mktemp /tmp/colony-mapreduce-bench-XXXXXX)
trap 'rm -f "$out" "$out.jobs"' EXIT

# scaling: CPU per million tasks at each count of SCALING_JOBS, against the first
scaling() {
        [ -x /usr/bin/time ] || { echo "/usr/bin/time is needed" >&2; exit 1; }
        local base="" n
        for n in ${SCALING_JOBS:-400 2000 20000}; do
                /usr/bin/time -f '%U %S' -o "$out.jobs" "$bin/colony" sim --workload mishra-mapreduce --jobs "$n" --json \
                        | jq -c '{jobs: .jobs, completed, passes: .scheduling_passes}' >"$out"
                read -r user sys <"$out.jobs"
                per=$(awk -v u="$user" -v s="$sys" -v t="$(jq .jobs "$out")" 'BEGIN { printf "%.3f", (u + s) / t * 1e6 }')
                base=${base:-$per}
                jq -c --argjson n "$n" --argjson cpu "$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')" \
                        --argjson per "$per" --argjson base "$base" \
                        '{mapreduce_jobs: $n, tasks: .jobs, completed, passes, cpu_s: $cpu, cpu_s_per_million_tasks: $per,
                          over_baseline: ($per / $base * 100 | round / 100)}' "$out"
        done
}
if [ "${SCALING:-0}" = 1 ]; then
        scaling
        exit 0
fi

# flows WARMUP < JOBS_CSV: per job (family) after the warm-up, as JSON
flows() {
        awk -F, -v cut="$1" 'NR == 1 { next }
                $11 == "" { next }
                {
                        f = $11; ran = $6 - $5
                        if ($12 == "map") { if (!(f in arr) || $4 < arr[f]) arr[f] = $4; if (ran > lm[f]) lm[f] = ran }
                        else if (ran > lr[f]) lr[f] = ran
                        if ($6 > end[f]) end[f] = $6
                }
                END {
                        for (f in arr) if (arr[f] >= cut) { n++; fl[n] = end[f] - arr[f]; id[n] = lm[f] + lr[f]; at[n] = arr[f]; if (at[n] > last) last = at[n] }
                        for (i = 1; i <= n; i++) { sf += fl[i]; si += id[i] }
                        mid = (cut + last) / 2
                        for (i = 1; i <= n; i++) if (at[i] < mid) { n1++; f1 += fl[i]; i1 += id[i] } else { n2++; f2 += fl[i]; i2 += id[i] }
                        # medians by sorting copies
                        m = n; for (i = 1; i <= m; i++) { a[i] = fl[i]; b[i] = id[i] }
                        asort_num(a, m); asort_num(b, m)
                        printf "{\"jobs_after\": %d", n
                        printf ", \"mean\": %s", n && si ? sprintf("%.4f", sf / si) : "null"
                        printf ", \"median\": %s", n && b[int((m + 1) / 2)] ? sprintf("%.4f", a[int((m + 1) / 2)] / b[int((m + 1) / 2)]) : "null"
                        printf ", \"halves\": [%s, %s]}\n", n1 && i1 ? sprintf("%.4f", f1 / i1) : "null", n2 && i2 ? sprintf("%.4f", f2 / i2) : "null"
                }
                function asort_num(v, k,   i, j, t) { for (i = 2; i <= k; i++) { t = v[i]; for (j = i - 1; j >= 1 && v[j] > t; j--) v[j + 1] = v[j]; v[j + 1] = t } }'
}

for load in $loads; do
        for seed in $seeds; do
                for p in $policies; do
                        res=$("$bin/colony" sim --workload mishra-mapreduce --scale "$scale" --jobs "$jobs" --load "$load" \
                                --capacity lotes --seed "$seed" --policy "$p" --json --jobs-csv "$out.jobs")
                        jq -c --argjson after "$(flows "$warmup" <"$out.jobs")" --arg p "$p" --argjson load "$load" \
                                --argjson seed "$seed" \
                                '{policy: $p, load: $load, seed: $seed, jobs: .mapreduce.jobs, whole: .mapreduce.whole,
                                  all_mean: .mapreduce.relative_mean, all_median: .mapreduce.relative_median,
                                  after: $after}' <<<"$res" | tee -a "$out"
                done
        done
done
echo
echo "flow time relative to unlimited machines, after the warm-up, mean over seeds (mean / median)"
echo "load  $policies"
jq -rs --arg policies "$policies" '($policies | split(" ")) as $ps
        | group_by(.load)[] | . as $g
        | [($g[0].load | tostring)] + [$ps[] as $p | [$g[] | select(.policy == $p) | .after]
            | "\((map(.mean) | add / length * 1000 | round / 1000)) / \((map(.median) | add / length * 1000 | round / 1000))"]
        | join("  ")' "$out"
