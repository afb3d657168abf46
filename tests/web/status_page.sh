#!/usr/bin/env bash
# status_page.sh [gpus] - headless Chromium renders the controller's status page for a live
# cluster with a job running, one pending, and some ended; the test reads the DOM the page's
# script built from /api/status (node, job ids, departments, the ended jobs, the plots) and keeps
# a screenshot in the directory it was started from (ctest: build/tests/web/status_page.png).
# With "gpus" the agent has two stand-in GPUs (mknod, as gpus.sh) and the running job one of
# them: the nodes, running and queue tables gain their GPU columns, which a cluster without
# GPUs does not show.
artifacts=$(pwd)
. "$(dirname "$0")/../integration/lib.sh"
browser=$(command -v chromium || command -v chromium-browser) || { echo "SKIP: chromium missing"; exit $SKIP; }

gpus=${1:-}
gpu_args=()
if [ "$gpus" = gpus ]; then
        mknod "$DIR/gpu0" c 195 240
        mknod "$DIR/gpu1" c 195 241
        gpu_args=(--agent-gpu-devices "$DIR/gpu0,$DIR/gpu1" --agent-gpu-type a100)
        SAMPLE_GPUS=1
fi
http_cluster_up 'physics = 3\ncs = 1' --agents 1 --agent-cpus 2 --agent-mem 1G "${gpu_args[@]}"
http_sample_jobs
agent=${PREFIX}1

# chromium LOG URL FLAG...: load URL headless, its own profile in $DIR, nothing fetched from
# anywhere but the URL, 5 s of virtual time for the script to fetch and render.
chromium() {
        local log=$1 url=$2
        shift 2
        timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
                --disable-background-networking --disable-component-update --disable-sync \
                --user-data-dir="$(mktemp -d "$DIR/chromium-XXXXXX")" --window-size=1280,900 \
                --virtual-time-budget=5000 "$@" "$url" 2>>"$DIR/$log"
}

shot=$artifacts/status_page${gpus:+_$gpus}.png # the two variants may run at once
rm -f "$shot"
chromium chromium-shot.log "$HTTP/" --screenshot="$shot" >/dev/null || fail "chromium --screenshot failed"
[ "$(head -c 8 "$shot" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "$shot is not a PNG"
size=$(od -An -tu1 -j16 -N8 "$shot" | awk '{ print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4 "x" $5 * 16777216 + $6 * 65536 + $7 * 256 + $8 }')
[ "$size" = 1280x900 ] || fail "screenshot is $size, want 1280x900"
note "screenshot: $shot ($(stat -c %s "$shot") bytes, $size)"

dom=$DIR/dom.html
chromium chromium-dom.log "$HTTP/" --dump-dom >"$dom" || fail "chromium --dump-dom failed"

# cells TABLE_ID: the table's rows as the browser built them, cells tab-separated, headers
# included (perl-base is essential on Debian; the DOM is one line per table).
cells() {
        perl -ne 'if (/<table id="'"$1"'">(.*?)<\/table>/) {
                for my $row ($1 =~ /<tr>(.*?)<\/tr>/g) {
                        my @c = map { s/<[^>]*>//gr } ($row =~ /<t[dh][^>]*>(.*?)<\/t[dh]>/g);
                        print join("\t", @c), "\n";
                } }' "$dom"
}
row() { # row TABLE_ID FIRST_CELL: the row of that table whose first cell is FIRST_CELL, or fail
        local r
        r=$(cells "$1" | awk -F'\t' -v k="$2" '$1 == k') && [ -n "$r" ] || fail "table $1 has no row $2:
$(cells "$1")"
        echo "$r"
}
field() { cut -f"$1"; } # field N: the N-th cell of a row on stdin

grep -q '<span id="err"></span>' "$dom" || fail "the page shows an error: $(grep -o '<span id="err">[^<]*' "$dom")"

r=$(row nodes "$agent")
[ "$(field 2 <<<"$r")" = up ] || fail "node $agent not shown up: $r"
[ "$(field 3 <<<"$r")" = "1 / 2" ] || fail "node $agent CPUs: $(field 3 <<<"$r"), want 1 / 2"
g=0 # the GPU columns shift the later ones by one
if [ "$gpus" = gpus ]; then
        g=1
        [ "$(field 5 <<<"$r")" = "1 / 2 a100" ] || fail "node $agent GPUs: $(field 5 <<<"$r"), want 1 / 2 a100"
        [ "$(cells running | head -1 | field 8)" = GPUs ] || fail "running table's headers: $(cells running | head -1)"
        [ "$(row running "$RUNNING_ID" | field 8)" = "$(job_field "$RUNNING_ID" gpu_ids)" ] ||
                fail "running row's GPUs: $(row running "$RUNNING_ID"), record's $(job_field "$RUNNING_ID" gpu_ids)"
        [ "$(cells queue | head -1 | field 7)" = GPUs ] || fail "queue table's headers: $(cells queue | head -1)"
else
        for t in nodes running queue; do cells $t | head -1; done | grep -q GPUs &&
                fail "GPU columns on a cluster without GPUs: $(cells nodes | head -1)"
fi
[ "$(field $((5 + g)) <<<"$r")" = 1 ] || fail "node $agent jobs: $(field $((5 + g)) <<<"$r")"

r=$(row running "$RUNNING_ID")
[ "$(field 2 <<<"$r") $(field 4 <<<"$r") $(field 5 <<<"$r")" = "sleeper physics $agent" ] || fail "running row: $r"
[ "$(cells running | wc -l)" = 2 ] || fail "running table: $(cells running)"
r=$(row queue "$PENDING_ID")
[ "$(field 2 <<<"$r") $(field 4 <<<"$r") $(field 5 <<<"$r")" = "big cs 2" ] || fail "queue row: $r"
[ "$(cells queue | wc -l)" = 2 ] || fail "queue table: $(cells queue)"

r=$(row depts physics)
[ "$(field 2 <<<"$r") $(field 3 <<<"$r") $(field 4 <<<"$r")" = "3 75.0% 1" ] || fail "physics: $r"
r=$(row depts cs)
[ "$(field 2 <<<"$r") $(field 3 <<<"$r") $(field 5 <<<"$r")" = "1 25.0% 1" ] || fail "cs: $r"

# The ended jobs, newest first, with their states.
ended=$(cells ended | tail -n +2 | awk -F'\t' '{ printf "%s:%s ", $2, $6 }')
[ "$ended" = "$CANCELLED_ID:cancelled $FAILED_ID:failed (1) $COMPLETED_ID:completed " ] || fail "ended: $ended"
# The event log, newest first (the table shows the latest 12): the cancel that came last, the
# pending job's submission and the failed job's end on its node.
events=$(cells events | tail -n +2 | awk -F'\t' '$2 != "" { printf "%s:%s:%s ", $3, $4, $5 }')
grep -q "^$CANCELLED_ID::cancelled " <<<"$events" || fail "the newest event is not $CANCELLED_ID's cancel: $events"
grep -q " $PENDING_ID::submitted " <<<"$events" || fail "no submitted event for $PENDING_ID: $events"
grep -q " $FAILED_ID:$agent:failed " <<<"$events" || fail "no failed event for $FAILED_ID: $events"
seqs=$(cells events | tail -n +2 | cut -f2 | grep .)
[ "$seqs" = "$(sort -rn <<<"$seqs")" ] || fail "events not newest first: $seqs"

# Three plots, each with a capacity or second line beside the first.
plots=$(grep -o '<polyline' "$dom" | wc -l)
[ "$plots" = 6 ] || fail "$plots plot lines, want 6"
grep -q '<div class="big">1 / 1</div>' "$dom" || fail "the nodes-up card is not 1 / 1"
note "page rendered: node $agent, jobs $RUNNING_ID running, $PENDING_ID pending, events $ended"
