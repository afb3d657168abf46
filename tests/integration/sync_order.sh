#!/usr/bin/env bash
# sync_order.sh - nothing the controller says precedes the fsync of the write it depends on,
# and its loop does not wait for that fsync (sync_commits = yes, the default). The controller
# runs under fsync-gate.so, which holds every fsync of the job store's log while
# $DIR/gate/closed exists. With the gate closed, a submission is stored and its log's sync
# starts (the shim says so) but the client gets no job id, and another client's `colony queue`,
# read after it, gets no answer either (it would show the job); meanwhile /metrics, which the
# same loop serves, answers. Once the gate opens both answer, the queue with the job; after a
# SIGKILL and a restart the job is there. Then an fsync that fails (EIO) stops the controller
# without answering the submission it was for.
. "$(dirname "$0")/lib.sh"
command -v curl >/dev/null || { echo "SKIP: curl missing"; exit $SKIP; }
[ -f "$COLONY_BIN/fsync-gate.so" ] || fail "fsync-gate.so is not built beside the binaries"
conf=$DIR/controller.conf
printf '[controller]\nhttp_listen = 127.0.0.1:0\nhttp_port_file = %s\n' "$DIR/http.port" >"$conf"
cluster_up --agents 1 --agent-cpus 1 --agent-mem 256M --controller-config "$conf"

# The controller again, under the shim: stopped (SIGTERM, waited for), started with it.
cmdline=$(controller_cmdline)
pid=$(cat "$DIR/controller.pid")
kill -TERM "$pid"
for ((i = 0; i < 1200; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$pid" 2>/dev/null && fail "the controller did not stop on SIGTERM"
rm -f "$DIR/http.port"
mkdir "$DIR/gate"
controller_start "env LD_PRELOAD=$COLONY_BIN/fsync-gate.so FSYNC_GATE_DIR=$DIR/gate $cmdline"
HTTP=http://127.0.0.1:$(cat "$DIR/http.port")

# A commit that starts the log again from its beginning (the first after a start, the first
# after a complete checkpoint) fsyncs the log's new header inside the commit, as SQLite must:
# a first job takes that one, before the gate closes.
colony submit --cpus 1 --mem 16M -- /bin/true >/dev/null
touch "$DIR/gate/closed"
colony submit --cpus 1 --mem 16M -- /bin/true >"$DIR/id" 2>"$DIR/submit.err" &
submitter=$!
STARTED_PIDS+=("$submitter")
for ((i = 0; i < 2400; i++)); do [ -e "$DIR/gate/waiting" ] && break; sleep 0.05; done
[ -e "$DIR/gate/waiting" ] || fail "no fsync of the log came within 120 s of a submission"
colony queue --json >"$DIR/queue.json" 2>"$DIR/queue.err" &
queuer=$!
STARTED_PIDS+=("$queuer")
# Each /metrics is a turn of the loop at least; the last comes after the queue's request is read
# (curl's own connection is served in order with it, by then the socket holds the request).
for ((i = 0; i < 5; i++)); do
        curl -sf -m 120 "$HTTP/metrics" >/dev/null || fail "/metrics did not answer while the log's fsync waited: the loop waits for it"
done
kill -0 "$submitter" 2>/dev/null || fail "the submission was answered ($(cat "$DIR/id")) before its fsync ended"
kill -0 "$queuer" 2>/dev/null || fail "colony queue was answered before the fsync of the job it may show ended"
note "while the fsync waited: /metrics answered 5 times, the submission and the queue not"

rm "$DIR/gate/closed"
for ((i = 0; i < 2400; i++)); do kill -0 "$submitter" 2>/dev/null || break; sleep 0.05; done
wait "$submitter" || fail "the submission failed: $(cat "$DIR/submit.err")"
wait "$queuer" || fail "colony queue failed: $(cat "$DIR/queue.err")"
id=$(cat "$DIR/id")
[ -n "$id" ] || fail "the submission printed no job id"
jq -e --argjson id "$id" '[.jobs[].id] | index($id) != null' "$DIR/queue.json" >/dev/null ||
        fail "the queue answered after the fsync does not show job $id"
note "after the fsync: job $id acknowledged, and in the queue"

cmdline=$(controller_cmdline)
kill_wait "$(cat "$DIR/controller.pid")"
controller_start "env LD_PRELOAD=$COLONY_BIN/fsync-gate.so FSYNC_GATE_DIR=$DIR/gate $cmdline"
[ "$(job_field "$id" id)" = "$id" ] || fail "job $id is gone after a SIGKILL and a restart"
note "after a SIGKILL and a restart: job $id is there"

colony submit --cpus 1 --mem 16M -- /bin/true >/dev/null # the log's new header, as above
touch "$DIR/gate/fail"
pid=$(cat "$DIR/controller.pid")
if colony submit --cpus 1 --mem 16M -- /bin/true >"$DIR/id2" 2>"$DIR/submit2.err"; then
        fail "a submission whose fsync failed was answered: job $(cat "$DIR/id2")"
fi
[ ! -s "$DIR/id2" ] || fail "a submission whose fsync failed printed $(cat "$DIR/id2")"
for ((i = 0; i < 1200; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$pid" 2>/dev/null && fail "the controller goes on after a failed fsync of its log"
grep -q "fdatasync of the job store's write-ahead log" "$DIR/controller.log" ||
        fail "the controller's log does not say why it stopped: $(tail -3 "$DIR/controller.log")"
note "a failed fsync: the submission got $(head -c 100 "$DIR/submit2.err"), and the controller stopped"
rm "$DIR/gate/fail"
controller_start "$cmdline"
echo "PASS"
