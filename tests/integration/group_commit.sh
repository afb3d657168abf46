#!/usr/bin/env bash
# group_commit.sh - a job id is returned only once the job is on disk, also when many
# submissions share one commit: while 4 clients pipeline submissions (colony submit --stdin),
# the controller is SIGKILLed; after a restart every id a client printed is there, once.
# (An array, one request, is array_restart.sh's.)
. "$(dirname "$0")/lib.sh"
cluster_up --agents 1 --agent-cpus 1 --agent-mem 1G
command -v stdbuf >/dev/null || { echo "SKIP: stdbuf missing"; exit $SKIP; }

# every job asks for the whole node, so all but one stay pending and nothing ends meanwhile
cmdline=$(controller_cmdline)
clients=()
for c in 1 2 3 4; do
        # line-buffered, so that an id is in the file as soon as the client has it
        yes "$COLONY_BIN/colony-stress sleep 600" | head -n 20000 |
                stdbuf -oL "$COLONY_BIN/colony" submit --cpus 1 --mem 1M --stdin >"$DIR/acked-$c" 2>"$DIR/client-$c.err" &
        clients+=($!)
done
acked() { cat "$DIR"/acked-* | wc -l; }
for ((i = 0; i < 300; i++)); do [ "$(acked)" -ge 2000 ] && break; sleep 0.05; done
kill -9 "$(cat "$DIR/controller.pid")"
failed=0
for pid in "${clients[@]}"; do wait "$pid" || failed=$((failed + 1)); done
note "controller killed after $(acked) acknowledgements; $failed of 4 clients cut off"
[ "$failed" -gt 0 ] || note "(every client had finished before the kill: a weaker test this time)"

controller_start "$cmdline"

colony queue --all --json | jq -r '.jobs[].id' | sort >"$DIR/stored"
sort "$DIR"/acked-* >"$DIR/acked"
[ "$(uniq -d "$DIR/stored" | wc -l)" = 0 ] || fail "a job is stored twice"
[ "$(uniq -d "$DIR/acked" | wc -l)" = 0 ] || fail "an id was given twice"
missing=$(comm -23 "$DIR/acked" "$DIR/stored" | wc -l)
[ "$missing" = 0 ] || fail "$missing acknowledged jobs are gone after the restart, e.g. $(comm -23 "$DIR/acked" "$DIR/stored" | head -3 | tr '\n' ' ')"
note "$(wc -l <"$DIR/acked") acknowledged, $(wc -l <"$DIR/stored") stored after the restart (the rest were committed, their replies lost with the controller)"
[ "$(colony queue --json | jq '[.jobs[] | select(.state == "pending")] | length')" -ge "$(($(wc -l <"$DIR/acked") - 1))" ] ||
        fail "acknowledged jobs are not pending after the restart"
echo "PASS"
