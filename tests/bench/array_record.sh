#!/usr/bin/env bash
# array_record.sh - issue 28's goals for an array kept as one record while its tasks wait, each
# figure beside its peer or baseline measured in the same run. Root; prints JSON on stdout.
#
#   COLONY_BIN=build/bin tests/bench/array_record.sh
#
#  * `colony submit --array 0-19999` against Slurm 22.05's `sbatch -H -Q --array=0-999` twenty
#    times (one RPC makes at most 1,000 tasks there), alternating ROUNDS (5) times on one
#    cluster, in tasks per second; each colony array cancelled before the next round;
#  * `colony submit --array 0-999999`, acknowledged after how long (the command's wall time,
#    process start included, beside a `colony --version` timed in the same loop), BIG (5) times;
#  * the controller's RSS before and after those BIG arrays (their 5,000,000 tasks pending);
#  * the controller's loop turns from /metrics while they arrive and one more array of
#    `/bin/true` drains for DRAIN_S (30) seconds: the longest, and how many of all took over
#    50 ms.
# Slurm: ../shared/tools/slurm-peer.sh (setup, start, stop) when it is there and SLURM=0 is not
# set; without it the Slurm figures are null.
COLONY_BIN=$(cd "${COLONY_BIN:?set COLONY_BIN to the bin directory of a build}" && pwd)
export COLONY_BIN
here=$(dirname "$(realpath "$0")")
peer=$(cd "$here/../../.." && pwd)/shared/tools/slurm-peer.sh
. "$here/../integration/lib.sh"
rounds=${ROUNDS:-5} big=${BIG:-5} drain_s=${DRAIN_S:-30}
now() { date +%s.%N; }
ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b - a) * 1000 }'; }
rate() { awk -v n="$1" -v a="$2" -v b="$3" 'BEGIN { printf "%.0f", n / (b - a) }'; }
rss_kib() { awk '/^VmRSS/ { print $2 }' "/proc/$(cat "$DIR/controller.pid")/status"; }
slurm=0
if [ "${SLURM:-1}" != 0 ] && [ -x "$peer" ] && "$peer" setup >&2 && "$peer" start >&2; then
        slurm=1
        trap '"$peer" stop >/dev/null 2>&1; teardown' EXIT
fi

# Room for every array at once: BIG + 1 of a million, and the rounds' (cancelled) ones.
cat >"$DIR/controller.conf" <<CONF
[controller]
http_listen = 127.0.0.1:0
http_port_file = $DIR/http.port
max_pending = $(((big + 2) * 1000000))
max_pending_per_user = $(((big + 2) * 1000000))
CONF
cluster_up --agents 1 --agent-cpus 2 --agent-mem 4G --controller-config "$DIR/controller.conf"
HTTP=http://127.0.0.1:$(cat "$DIR/http.port")
# Nothing of the arrays starts while the clock runs: a job holds the agent's two CPUs.
hold=$(colony submit --cpus 2 --mem 16M -- "$COLONY_BIN/colony-stress" sleep 3600)
wait_state "$hold" running

colony_rates=() slurm_rates=()
for ((r = 0; r < rounds; r++)); do
        t0=$(now); a=$(colony submit --cpus 1 --mem 1M --array 0-19999 -- /bin/true); t1=$(now)
        colony_rates+=("$(rate 20000 "$t0" "$t1")")
        colony cancel "$a" >/dev/null
        if [ $slurm = 1 ]; then
                t0=$(now)
                for ((i = 0; i < 20; i++)); do sbatch -H -Q --array=0-999 --wrap=true -o /dev/null >/dev/null; done
                t1=$(now)
                slurm_rates+=("$(rate 20000 "$t0" "$t1")")
                scancel -u root >/dev/null 2>&1 || true
        fi
done

rss0=$(rss_kib) acks=() starts=()
for ((b = 0; b < big; b++)); do
        t0=$(now); colony --version >/dev/null; t1=$(now)
        starts+=("$(ms "$t0" "$t1")")
        t0=$(now); colony submit --cpus 1 --mem 1M --array 0-999999 -- /bin/true >/dev/null; t1=$(now)
        acks+=("$(ms "$t0" "$t1")")
done
rss1=$(rss_kib)
colony cancel "$hold" >/dev/null
d=$(colony submit --cpus 0.1 --mem 1M --array 0-999999 -- /bin/true)
sleep "$drain_s"
done_tasks=$(curl -sf "$HTTP/metrics" | awk '/^colony_jobs_finished_total\{state="completed"\}/ { printf "%d", $2 }')
metrics=$(curl -sf "$HTTP/metrics")
turns=$(awk '/^colony_loop_turn_seconds_count/ { printf "%d", $2 }' <<<"$metrics")
within=$(awk '/^colony_loop_turn_seconds_bucket\{le="0.05"\}/ { printf "%d", $2 }' <<<"$metrics")
longest=$(awk '/^colony_loop_turn_max_seconds/ { printf "%.1f", $2 * 1000 }' <<<"$metrics")
colony cancel --user root >/dev/null

json_list() { printf '%s\n' "$@" | jq -s 'map(select(. != null))'; }
jq -n --argjson colony "$(json_list "${colony_rates[@]}")" --argjson slurm "$(json_list "${slurm_rates[@]:-}")" \
        --argjson acks "$(json_list "${acks[@]}")" --argjson starts "$(json_list "${starts[@]}")" \
        --argjson rss0 "$rss0" --argjson rss1 "$rss1" --argjson big "$big" --argjson turns "$turns" \
        --argjson within "$within" --argjson longest "$longest" --argjson drain_s "$drain_s" \
        --argjson drained "${done_tasks:-0}" --arg drain_id "$d" '
def median: if length == 0 then null else sort | .[length / 2 | floor] end;
{array_20000: {colony_tasks_per_s: $colony, slurm_tasks_per_s: (if $slurm == [] then null else $slurm end),
               colony_median: ($colony | median), slurm_median: ($slurm | median),
               ratio_per_round: (if $slurm == [] then null else [range($colony | length)] | map($colony[.] / $slurm[.]) end)},
 array_1000000: {acknowledged_ms: $acks, colony_version_ms: $starts,
                 rss_kib_before: $rss0, rss_kib_after: $rss1, rss_mib_per_million_pending: (($rss1 - $rss0) / 1024 / $big)},
 loop: {turns: $turns, over_50ms: ($turns - $within), longest_ms: $longest, drain_s: $drain_s,
        jobs_ended_in_all: $drained}}'
