#!/usr/bin/env bash
# fair_live.sh - departments a and b, weighted 2:1, flood a two-host cluster of 6 one-CPU slots
# with short jobs (a first, then b): the controller starts each next job from the department
# furthest below its entitlement, so their running shares settle at 2:1; c (weight 3) arrives
# later and takes its half as jobs end, while a and b keep 2:1 of the rest. Every verdict is a
# ratio over samples of `colony shares --json`, never a time.
. "$(dirname "$0")/lib.sh"

conf=$DIR/controller.conf
printf '[departments]\na = 2\nb = 1\nc = 3\n' >"$conf"
cluster_up --agents 2 --agent-cpus 3 --agent-mem 512M --controller-config "$conf"

# The jobs last long enough for the 6 slots to fill before the first ends: 3 s here, more where
# launches are slow (the TCG guest, where launches of whole-CPU jobs also re-pin the others):
# three times what 6 probe jobs took to fill the slots, from the first submission to the last
# start.
probes=()
for ((i = 0; i < 6; i++)); do probes+=("$(colony submit --cpus 1 --mem 16M -- /bin/true)"); done
first=0 last=0
for id in "${probes[@]}"; do
        colony wait --timeout 120 "$id" >/dev/null || fail "probe job $id: $(job_field "$id" state)"
        s=$(job_field "$id" submit_usec) t=$(job_field "$id" start_usec)
        ((first == 0 || s < first)) && first=$s
        ((t > last)) && last=$t
done
fill_ms=$(((last - first) / 1000))
JOB_S=$((fill_ms * 3 / 1000 > 3 ? fill_ms * 3 / 1000 : 3))
note "6 jobs filled the slots in $fill_ms ms: jobs of $JOB_S s"

# flood DEPT N: N jobs of one CPU each, JOB_S seconds long.
flood() {
        local i
        for ((i = 0; i < $2; i++)); do
                colony submit --group "$1" --cpus 1 --mem 16M -- /bin/sleep "$JOB_S" >/dev/null
        done
}

# running: "a b c", the running jobs of each department now.
running() {
        local -a n
        mapfile -t n < <(colony shares --json | jget 'departments[path=a].running' 'departments[path=b].running' \
                'departments[path=c].running')
        echo "${n[0]:-null} ${n[1]:-null} ${n[2]:-null}"
}

# settle WANT_A WANT_B WANT_C MAX_SAMPLES: sample every 0.2 s until the last WINDOW samples hold
# running jobs in the ratio WANT_A:WANT_B:WANT_C, each department within 10% of its part, with
# every department that should run running in every one of them (none starves). Fails after
# MAX_SAMPLES. Prints the samples it took.
WINDOW=20
settle() {
        local want=("$1" "$2" "$3") max=$4 k s
        local -a hist=()
        for ((k = 1; k <= max; k++)); do
                s=$(running)
                hist+=("$s")
                if ((${#hist[@]} >= WINDOW)) && printf '%s\n' "${hist[@]: -$WINDOW}" |
                        awk -v wa="${want[0]}" -v wb="${want[1]}" -v wc="${want[2]}" '
                        { a += $1; b += $2; c += $3; n++
                          if ((wa && !$1) || (wb && !$2) || (wc && !$3)) starved = 1 }
                        END {
                          tot = a + b + c; wt = wa + wb + wc
                          if (starved || tot == 0) exit 1
                          split(a " " b " " c, got); split(wa " " wb " " wc, w)
                          for (i = 1; i <= 3; i++) {
                                  share = got[i] / tot; part = w[i] / wt
                                  if (share < part * 0.9 || share > part * 1.1) exit 1
                          }
                        }'; then
                        echo "$k"
                        return 0
                fi
                sleep 0.2
        done
        printf '%s\n' "${hist[@]: -$WINDOW}" | tr '\n' ';' >&2
        fail "running jobs (a b c) never held $1:$2:$3 within 10% over $WINDOW samples in $max"
}

window_sums() { # the sums of the last WINDOW samples, for the notes
        local k s a=0 b=0 c=0
        for ((k = 0; k < WINDOW; k++)); do
                read -r s1 s2 s3 <<<"$(running)"
                a=$((a + s1)) b=$((b + s2)) c=$((c + s3))
                sleep 0.1
        done
        echo "a=$a b=$b c=$c"
}

# keep_pending DEPT: submit 12 jobs of DEPT, then keep at least 8 pending until killed, so the
# department floods the cluster however fast its jobs start or this machine runs.
keep_pending() {
        local p
        flood "$1" 12
        while :; do
                p=$(colony shares --json | jget "departments[path=$1].pending") || p=0
                if ((p < 8)); then flood "$1" 4; else sleep 0.2; fi
        done
}
KEEPERS=()
stop_floods() {
        local pid
        for pid in "${KEEPERS[@]}"; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true; done
        KEEPERS=()
        return 0
}
trap 'rc=$?; set +e; stop_floods; (exit $rc); teardown' EXIT
start_flood() {
        keep_pending "$1" &
        KEEPERS+=($!)
        STARTED_PIDS+=($!)
}

# a alone takes every slot first: the start is as unfair as it gets.
start_flood a
for ((k = 0; k < 300; k++)); do now=$(running) && [ "$now" = "6 0 0" ] && break; sleep 0.1; done
[ "$now" = "6 0 0" ] || fail "a alone does not run on all 6 slots: $now"
start=$SECONDS
start_flood b
n=$(settle 2 1 0 150)
note "a:b from 6:0 to 2:1 within 10% over $WINDOW samples after $n samples ($((SECONDS - start)) s)"
note "over $WINDOW more: $(window_sums)"
[ "$(colony shares --json | jq -r .fairness)" = hdrf ] || fail "the default fairness is not hdrf"
[ "$(colony shares --json | jq -r .versus.algo)" = mch ] || fail "colony shares does not compare hdrf with mch"
why=$(colony shares --json | jq -r .next.why)
note "next: $why"

start=$SECONDS
start_flood c
n=$(settle 2 1 3 150)
note "c (weight 3) arrives: a:b:c from 4:2:0 to 2:1:3 after $n samples ($((SECONDS - start)) s)"
note "over $WINDOW more: $(window_sums)"
colony shares

# Stop the flood: cancel what still waits (teardown ends the rest).
stop_floods
mapfile -t pending < <(colony queue --json | jq -r '.jobs[] | select(.state == "pending") | .id')
((${#pending[@]} == 0)) || colony cancel "${pending[@]}" >/dev/null
echo "PASS"
