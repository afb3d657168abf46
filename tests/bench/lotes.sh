#!/usr/bin/env bash
# lotes.sh - LoTES against the Tetris and Greedy baselines on the LoTES paper's set-ups
# (Tran et al., "Multi-stage resource-aware scheduling for data centers with heterogeneous
# servers", section 5), and what LoTES costs. Not part of ctest: it is long.
#
#   COLONY_BIN=build/bin tests/bench/lotes.sh            (prints JSON, then the tables)
#
# Sizes (environment): SCALE_GOOGLE (default 6732: Table 1's 12,583 machines), SCALE_GEN
# (default 1000 machines per configuration, as in 5.4), JOBS per run (default 200000), SEEDS
# (the generated instances, default "1 2 3 4 5" as in the paper), LOADS (lotes-google's, default
# "0.5 0.8 0.9 0.95 0.97" of lambda*), PHIS, OMEGAS. The paper simulates a month (Google) and 100
# hours (generated); JOBS decides how long we do.
#
# Warm-up. Every run starts with empty machines, so its first jobs find room a steady state
# would not give them: waits count only for jobs that arrive after WARMUP_GOOGLE seconds
# (default 1800: 12 mean run times of lotes-google's longest class, 0.04 h) or WARMUP_GEN
# (default 10800: the generated classes' mean times are U[0, 1] h, so 3 of the longest). Each
# run also reports the mean wait over all its jobs ("whole": the figure before the cut) and over
# the two halves of what follows the cut, which agree when the warm-up was long enough. JOBS
# must take the arrivals well past the warm-up (the script says when a run has no job after it).
#
# Measured:
#   offline  CPU seconds of stages 1 and 2 on lotes-google at full size (goal: under 1 s)
#   dispatch scheduling decisions per CPU second at 10,000 machines (lotes-phi:0.009, scale
#            1000), through the whole scheduling core, for each policy and first-fit beside it
#   google   mean wait after the warm-up on lotes-google at each of LOADS, per job class
#   phi      the same on lotes-phi:PHI at 0.97 lambda*, averaged over SEEDS (Fig. 11)
#   omega    lotes-omega:OMEGA at loads 0.90 and 0.95 (Figs. 12 and 13)
# The paper's "response time" is the time from arrival to the start of processing: our wait.
set -euo pipefail
bin=${COLONY_BIN:?set COLONY_BIN to the bin directory of a build}
command -v jq >/dev/null || { echo "jq is needed" >&2; exit 1; }
scale_google=${SCALE_GOOGLE:-6732} scale_gen=${SCALE_GEN:-1000} jobs=${JOBS:-200000}
seeds=${SEEDS:-1 2 3 4 5}
loads=${LOADS:-0.5 0.8 0.9 0.95 0.97}
phis=${PHIS:-0 0.003 0.006 0.009 0.012 0.015}
omegas=${OMEGAS:-0 0.1 0.2 0.3}
warmup_google=${WARMUP_GOOGLE:-1800} warmup_gen=${WARMUP_GEN:-10800}
policies="lotes tetris greedy"
out=$(mktemp /tmp/colony-lotes-bench-XXXXXX)
trap 'rm -f "$out" "$out.cpu" "$out.jobs"' EXIT

# after WARMUP < JOBS_CSV: the waits of the jobs that arrived after WARMUP seconds, as JSON: their
# count, mean, mean by class (the department column), the means of the two halves of that
# stretch, and the mean over every job
after() {
        awk -F, -v cut="$1" 'NR == 1 { next }
                { all += $7; nall++; if ($4 > last) last = $4 }
                $4 >= cut { n++; w += $7; nk[$2]++; wk[$2] += $7; a[n] = $4; x[n] = $7 }
                END {
                        mid = (cut + last) / 2
                        for (i = 1; i <= n; i++) if (a[i] < mid) { n1++; w1 += x[i] } else { n2++; w2 += x[i] }
                        printf "{\"warmup\": %s, \"jobs_after\": %d, \"whole\": %.6f", cut, n, nall ? all / nall : 0
                        printf ", \"wait\": %s", n ? sprintf("%.6f", w / n) : "null"
                        printf ", \"halves\": [%s, %s]", n1 ? sprintf("%.6f", w1 / n1) : "null", n2 ? sprintf("%.6f", w2 / n2) : "null"
                        printf ", \"by_class\": {"
                        sep = ""
                        for (k in nk) { printf "%s\"%s\": %.6f", sep, k, wk[k] / nk[k]; sep = ", " }
                        printf "}}\n"
                }'
}

# run EXPERIMENT WORKLOAD SCALE LOAD POLICY SEED WARMUP: one simulation, one JSON line in $out.
# The dispatch runs write no table of jobs, which would count in their CPU time.
run() {
        local r csv=(--jobs-csv "$out.jobs")
        [ "$1" != dispatch ] || { csv=(); echo "id,department,machine,arrival,start,end,wait" >"$out.jobs"; }
        r=$(/usr/bin/time -f "%U" -o "$out.cpu" "$bin/colony" sim --json --workload "$2" --scale "$3" --jobs "$jobs" \
                --load "$4" --capacity lotes --policy "$5" --seed "$6" "${csv[@]}") || {
                echo "{\"experiment\":\"$1\",\"workload\":\"$2\",\"policy\":\"$5\",\"seed\":$6,\"error\":true}" >>"$out"
                return 0
        }
        jq -c --arg e "$1" --argjson cpu "$(tail -n 1 "$out.cpu")" --argjson after "$(after "$7" <"$out.jobs")" \
                '{experiment: $e, workload, policy, seed, load, machines, completed, cpu_seconds: $cpu,
                  wait: $after.wait, wait_whole: $after.whole, halves: $after.halves, by_class: $after.by_class,
                  jobs_after: $after.jobs_after, warmup: $after.warmup, wait_p99: .wait.p99,
                  response: .response.mean, lambda: .lotes_lambda}' <<<"$r" >>"$out"
        [ "$1" = dispatch ] || [ "$(jq -s '.[-1].jobs_after' "$out")" -gt 0 ] || echo "lotes.sh: $2 at load $4: no job arrived after the warm-up; raise JOBS" >&2
}

offline=$("$bin/colony" lotes --json --workload lotes-google --scale 6732 |
          jq -c '{lambda1: .stage1.lambda, lambda2: .stage2.lambda_lp, stage1_seconds: .stage1.seconds,
                  stage2_seconds: .stage2.seconds, bins: ([.stage2.configs[].bins] | add)}')
if [ -z "${SKIP_DISPATCH:-}" ]; then
        for p in first-fit $policies; do
                run dispatch lotes-phi:0.009 1000 0.97 "$p" 1 0
        done
fi
for load in $loads; do
        for p in $policies; do
                run "google-$load" lotes-google "$scale_google" "$load" "$p" 1 "$warmup_google"
        done
done
for phi in $phis; do
        for s in $seeds; do
                for p in $policies; do
                        run phi "lotes-phi:$phi" "$scale_gen" 0.97 "$p" "$s" "$warmup_gen"
                done
        done
done
for load in 0.90 0.95; do
        for omega in $omegas; do
                for s in $seeds; do
                        for p in $policies; do
                                run "omega-$load" "lotes-omega:$omega" "$scale_gen" "$load" "$p" "$s" "$warmup_gen"
                        done
                done
        done
done

jq -s --argjson offline "$offline" '{offline: $offline, runs: .}' "$out"

echo
echo "offline stages on lotes-google (12,583 machines): $(jq -r '"\(.stage1_seconds + .stage2_seconds | . * 1000 | round) ms of CPU, \(.bins) bins (paper: under a minute)"' <<<"$offline")"
echo "decisions per CPU second at 10,000 machines, through the scheduling core (completed jobs / CPU time):"
jq -rs '.[] | select(.experiment == "dispatch") | "  \(.policy): \(if .error then "failed" else (.completed / .cpu_seconds | round) end)"' "$out"
# table EXPERIMENT KEY: mean wait by policy for each value of the workload parameter, with ratios
table() {
        jq -rs --arg e "$1" '
          [.[] | select(.experiment == $e and (.error | not))] | group_by(.workload)[] |
          (map(select(.policy == "lotes")) | map(.wait) | add / length) as $l |
          (map(select(.policy == "tetris")) | map(.wait) | add / length) as $t |
          (map(select(.policy == "greedy")) | map(.wait) | add / length) as $g |
          (if $l > 0 then "\($t / $l | . * 10 | round / 10)x \($g / $l | . * 10 | round / 10)x" else "-" end) as $r |
          "| \(.[0].workload) | \($l | . * 100 | round / 100) | \($t | . * 100 | round / 100) | \($g | . * 100 | round / 100) | \($r) |"' "$out"
}
echo
echo "lotes-google, mean wait in seconds of the jobs arriving after ${warmup_google} s, by class; whole: every job, warm-up included"
echo "| load | policy | all | c1 | c2 | c3 | c4 | halves after the cut | whole |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
jq -rs '.[] | select((.experiment | startswith("google-")) and (.error | not)) |
        def r: if . == null then "-" else (. * 1000 | round / 1000 | tostring) end;
        "| \(.load) | \(.policy) | \(.wait | r) | \(.by_class.c1 | r) | \(.by_class.c2 | r) | \(.by_class.c3 | r) | \(.by_class.c4 | r) | \(.halves[0] | r), \(.halves[1] | r) | \(.wait_whole | r) |"' "$out"
echo
echo "mean wait in seconds (the paper's response time) after ${warmup_gen} s, averaged over seeds $seeds; ratios to LoTES"
echo "| workload | LoTES | Tetris | Greedy | Tetris/LoTES, Greedy/LoTES |"
echo "| --- | --- | --- | --- | --- |"
table phi
echo "paper: Google trace, Greedy 15-20 min, Tetris about 10x LoTES; Fig. 11, Tetris much worse than LoTES as PHI grows, Greedy unstable"
for load in 0.90 0.95; do
        echo
        echo "omega at load $load (paper: Figs. 12-13, LoTES near 0 at 0.90, Tetris growing with OMEGA; Greedy unstable)"
        echo "| workload | LoTES | Tetris | Greedy | Tetris/LoTES, Greedy/LoTES |"
        echo "| --- | --- | --- | --- | --- |"
        table "omega-$load"
done
