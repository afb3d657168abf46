#!/usr/bin/env bash
# group_commit.sh - a job id is returned only once the job is stored, also when many
# submissions share one commit: while 4 clients pipeline submissions (colony submit --stdin),
# the controller is SIGKILLed; after a restart every id a client printed is there, once. Run
# with the default (each commit fsynced) and with sync_commits = no (commits written to the
# kernel only), which promises the same across a crash of the controller. (An array, one
# request, is array_restart.sh's.) The write-ahead log is not copied into the database file
# inside a commit: the restarted controller copies what the killed one left, and after a burst
# a tick copies it (checked once: the commit mode does not change it).
. "$(dirname "$0")/lib.sh"
command -v stdbuf >/dev/null || { echo "SKIP: stdbuf missing"; exit $SKIP; }

acked() { cat "$DIR"/acked-* | wc -l; }

# Kill the controller in the middle of 4 pipelined streams of submissions, restart it and
# check that every acknowledged job is stored once and pending; $1 names the run.
kill_and_check() {
        # every job asks for the whole node, so all but one stay pending and nothing ends meanwhile
        local cmdline clients=() failed=0 missing
        cmdline=$(controller_cmdline)
        rm -f "$DIR"/acked-*
        for c in 1 2 3 4; do
                # line-buffered, so that an id is in the file as soon as the client has it
                yes "$COLONY_BIN/colony-stress sleep 600" | head -n 20000 |
                        stdbuf -oL "$COLONY_BIN/colony" submit --cpus 1 --mem 1M --stdin >"$DIR/acked-$c" 2>"$DIR/client-$c.err" &
                clients+=($!)
        done
        for ((i = 0; i < 300; i++)); do [ "$(acked)" -ge 2000 ] && break; sleep 0.05; done
        kill -9 "$(cat "$DIR/controller.pid")"
        for pid in "${clients[@]}"; do wait "$pid" || failed=$((failed + 1)); done
        note "$1: controller killed after $(acked) acknowledgements; $failed of 4 clients cut off"
        [ "$failed" -gt 0 ] || note "(every client had finished before the kill: a weaker test this time)"

        controller_start "$cmdline"

        colony queue --all --json | jq -r '.jobs[].id' | sort >"$DIR/stored"
        sort "$DIR"/acked-* >"$DIR/acked"
        [ "$(uniq -d "$DIR/stored" | wc -l)" = 0 ] || fail "$1: a job is stored twice"
        [ "$(uniq -d "$DIR/acked" | wc -l)" = 0 ] || fail "$1: an id was given twice"
        missing=$(comm -23 "$DIR/acked" "$DIR/stored" | wc -l)
        [ "$missing" = 0 ] || fail "$1: $missing acknowledged jobs are gone after the restart, e.g. $(comm -23 "$DIR/acked" "$DIR/stored" | head -3 | tr '\n' ' ')"
        note "$1: $(wc -l <"$DIR/acked") acknowledged, $(wc -l <"$DIR/stored") stored after the restart (the rest were committed, their replies lost with the controller)"
        [ "$(colony queue --json | jq '[.jobs[] | select(.state == "pending")] | length')" -ge "$(($(wc -l <"$DIR/acked") - 1))" ] ||
                fail "$1: acknowledged jobs are not pending after the restart"
        [ "$(db_size)" -ge $(($(wc -l <"$DIR/stored") * 200)) ] ||
                fail "$1: the restarted controller left the killed one's log uncopied ($(db_size) bytes in the database file)"
}

db_size() { stat -c %s "$DIR/controller.db"; }

# 32 arrays of 250 are 8,000 jobs in 32 requests, more than 1000 pages of log (a row, an event
# and an index entry per job: about 5 MB), past the size the next tick checkpoints at; until
# then the database file does not grow. (Few requests: 400 single submissions took minutes in
# the test VM. Arrays of 250, made whole: a larger one waits in its record, a row.)
checkpoint_after_burst() {
        local before
        before=$(db_size)
        for ((i = 0; i < 32; i++)); do
                colony submit --cpus 1 --mem 1M --array 0-249 -- "$COLONY_BIN/colony-stress" sleep 600 >/dev/null
        done
        for ((i = 0; i < 100; i++)); do [ "$(db_size)" -ge $((before + 65536)) ] && break; sleep 0.1; done
        [ "$(db_size)" -ge $((before + 65536)) ] || fail "$1: no checkpoint within 10 s of a burst ($before -> $(db_size) bytes)"
        note "$1: database file $before -> $(db_size) bytes after an array of 8,000 and a tick"
}

cluster_up --agents 1 --agent-cpus 1 --agent-mem 1G
kill_and_check "fsync"
checkpoint_after_burst "fsync"
colony down --dir "$DIR" >/dev/null
rm -f "$DIR"/controller.db*
printf '[controller]\nsync_commits = no\n' >"$DIR/sync-off.conf"
cluster_up --agents 1 --agent-cpus 1 --agent-mem 1G --controller-config "$DIR/sync-off.conf"
grep -q "sync_commits = no" "$DIR/controller.log" || fail "the controller did not take sync_commits = no"
kill_and_check "sync_commits = no"
echo "PASS"
