#!/usr/bin/env bash
# load-sweep.sh - mean wait against load for several policies, with colony sim.
#
#   contrib/plots/load-sweep.sh [-o sweep.png] [-w mishra] [-j JOBS] [-s SCALE] [-S SEED] [POLICY...]
#
# Prints a table (one row per load, one column per policy: mean wait in hours) and, when
# gnuplot is installed, draws it as a PNG. Loads run from 0.58 to 0.95, the NetBatch paper's
# arrival scaling. Policies default to first-fit (strict FIFO) and three backfilling ones.
set -euo pipefail
bin=${COLONY_BIN:-$(cd "$(dirname "$0")/../.." && pwd)/build/bin}
out=load-sweep.png workload=mishra jobs=30000 scale=10 seed=1
while getopts o:w:j:s:S: opt; do
        case $opt in
        o) out=$OPTARG ;; w) workload=$OPTARG ;; j) jobs=$OPTARG ;; s) scale=$OPTARG ;; S) seed=$OPTARG ;;
        *) echo "usage: $0 [-o PNG] [-w WORKLOAD] [-j JOBS] [-s SCALE] [-S SEED] [POLICY[:ORDER]...]" >&2; exit 2 ;;
        esac
done
shift $((OPTIND - 1))
policies=("$@")
[ ${#policies[@]} -gt 0 ] || policies=(first-fit:fifo first-fit:backfill best-fit-mem:backfill mix-fit:backfill)
command -v jq >/dev/null || { echo "load-sweep: needs jq" >&2; exit 1; }

data=$(mktemp)
trap 'rm -f "$data"' EXIT
printf '%-6s' load | tee "$data" >/dev/null
printf '%-6s' load
for p in "${policies[@]}"; do printf ' %22s' "$p"; printf ' "%s"' "$p" >>"$data"; done
echo; echo >>"$data"
for load in 0.58 0.65 0.70 0.75 0.80 0.85 0.90 0.95; do
        printf '%-6s' "$load"; printf '%s' "$load" >>"$data"
        for p in "${policies[@]}"; do
                wait=$("$bin/colony" sim --json --workload "$workload" --jobs "$jobs" --scale "$scale" --seed "$seed" \
                        --load "$load" --policy "${p%%:*}" --order "${p##*:}" | jq '.wait.mean / 3600')
                printf ' %22.3f' "$wait"; printf ' %s' "$wait" >>"$data"
        done
        echo; echo >>"$data"
done
echo "(mean wait in hours; $workload, $jobs jobs, $scale machines per configuration, seed $seed)"

if command -v gnuplot >/dev/null; then
        gnuplot <<GP
set terminal pngcairo size 900,560 enhanced font ",11"
set output "$out"
set title "colony sim: mean wait against load ($workload, $jobs jobs, seed $seed)"
set xlabel "load (fraction of the fluid capacity)"
set ylabel "mean wait (hours)"
set key top left
set grid
plot for [i=2:$((${#policies[@]} + 1))] "$data" using 1:i with linespoints lw 2 title columnheader(i)
GP
        echo "plot: $out"
else
        echo "(gnuplot not installed: no plot)"
fi
