#!/usr/bin/env bash
# sim_orders.sh - what a scheduling pass costs while a queue waits, order by order (issue 22: a
# pass bounded by the jobs it can place, not by the queue's length): the LCG-like trace (Poisson
# arrivals every 5 s, exponential run times of mean 2 h, one core each, ten users; awk's rand,
# seed 7) on 150 machines of 8 cores, where the queue grows to thousands, replayed in strict FIFO,
# EASY backfill, and the fair order of the users as departments under H-DRF and DRF, by this build
# and a baseline build (BASE_BIN), one after the other, at each size of SIZES. Not part of ctest.
# Prints JSON: per run the user CPU seconds and whether both builds printed the same results; per
# order and build, the CPU's growth from the smallest size to the largest beside the jobs' growth
# (a pass bounded by what it places grows like the jobs; one that visits the queue, faster).
#
#   COLONY_BIN=build/bin BASE_BIN=/tmp/main/build/bin tests/bench/sim_orders.sh
#
# Environment: SIZES (default "20000 40000", ascending, at most 188041), ORDERS (default "fifo
# backfill hdrf drf"; also "reserve", NetBatch's reservations).
set -euo pipefail
bin=${COLONY_BIN:?set COLONY_BIN to the bin directory of a build}
base=${BASE_BIN:?set BASE_BIN to the bin directory of the baseline build}
command -v jq >/dev/null || { echo "jq is needed" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "/usr/bin/time is needed" >&2; exit 1; }
sizes=${SIZES:-20000 40000} orders=${ORDERS:-fifo backfill hdrf drf}
out=$(mktemp -d /tmp/colony-sim-orders-XXXXXX)
trap 'rm -rf "$out"' EXIT

awk 'BEGIN { srand(7); t = 0
        for (i = 1; i <= 188041; i++) {
                t += -5 * log(1 - rand()); r = int(-7200 * log(1 - rand())) + 1; u = int(rand() * 10) + 1
                printf "%d %d -1 %d 1 -1 -1 1 -1 -1 1 %d %d -1 -1 -1 -1 -1\n", i, int(t), r, u, u
        } }' >"$out/lcg.swf"
{
        printf '{"machines": ['
        for i in $(seq 0 149); do printf '%s{"name": "n%03d", "cpus": 8, "mem": "32G"}' "$([ "$i" = 0 ] || echo ', ')" "$i"; done
        printf ']}\n'
} >"$out/machines.json"

flags() {
        case $1 in
        fifo) ;;
        backfill) echo --order backfill ;;
        reserve) echo --order reserve ;;
        hdrf | drf) echo --dept-by user --fair "$1" ;;
        *) echo "unknown order $1" >&2; exit 1 ;;
        esac
}

# run BUILD DIR ORDER JOBS: one replay, its results in $out/BUILD-ORDER-JOBS.json, a JSON line in $out/runs
run() {
        local build=$1 dir=$2 order=$3 jobs=$4 name="$1-$3-$4"
        # shellcheck disable=SC2046 # flags() gives words
        /usr/bin/time -f '{"user_s": %U, "sys_s": %S, "maxrss_kb": %M}' -o "$out/$name.time" \
                "$dir/colony" sim --json --trace "$out/lcg-$jobs.swf" --machines "$out/machines.json" $(flags "$order") \
                >"$out/$name.json"
        jq -c --arg build "$build" --arg order "$order" --slurpfile t "$out/$name.time" \
                '{build: $build, order: $order, jobs, wait_mean_s: .wait.mean} + $t[0]' "$out/$name.json" >>"$out/runs"
}

: >"$out/same"
for jobs in $sizes; do
        head -n "$jobs" "$out/lcg.swf" >"$out/lcg-$jobs.swf"
        for order in $orders; do
                run change "$bin" "$order" "$jobs"
                run baseline "$base" "$order" "$jobs"
                cmp -s "$out/change-$order-$jobs.json" "$out/baseline-$order-$jobs.json" ||
                        echo "$order $jobs" >>"$out/same"
        done
done
jq -s --rawfile differ "$out/same" --arg cpus "$(nproc)" --arg load "$(cut -d' ' -f1-3 /proc/loadavg)" '
        def growth(o; b): [.[] | select(.order == o and .build == b)] | (first) as $s | (last) as $l
                | {order: o, build: b, jobs_growth: ($l.jobs / $s.jobs),
                   cpu_growth: ((($l.user_s + $l.sys_s) / ([$s.user_s + $s.sys_s, 0.01] | max)) * 100 | round / 100)};
        ([.[].order] | unique) as $orders
        | {bench: "sim_orders", cpus: ($cpus | tonumber), loadavg: $load,
           differing_results: ($differ | split("\n") | map(select(. != ""))),
           growth: [$orders[] as $o | growth($o; "change"), growth($o; "baseline")], runs: .}' "$out/runs"
