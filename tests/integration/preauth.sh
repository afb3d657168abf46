#!/usr/bin/env bash
# preauth.sh - strangers on every listener at once cost the controller little and lock nobody
# out: 200 TCP peers that announce a 1 MiB frame are cut at its header; then 1,000 idle TCP
# peers on the agent port (128 wait for their hello, the rest are closed at accept, all are
# closed after the 10 s hello deadline), 1,000 idle Unix-socket clients of one unprivileged user
# (256 kept, the rest refused with an error) and 100 slow HTTP clients from one address, all
# held while the controller has 512 descriptors. Before that, out of descriptors, accept rests
# 250 ms at a time and logs it once per 10 s. Meanwhile its RSS grows by less than 50 MiB,
# `colony nodes` answers in under 1 s (or 5 times its time before the flood, where that is
# slower) each of 5 times (the median is printed), /metrics answers
# a client from another address, its log grows by less than 1 MB, and its agents stay up.
. "$(dirname "$0")/lib.sh"
command -v curl >/dev/null || { echo "SKIP: curl missing"; exit $SKIP; }
command -v prlimit >/dev/null || { echo "SKIP: prlimit missing"; exit $SKIP; }
FLOOD=$COLONY_BIN/peer-flood

# The controller starts with systemd's default soft limit and takes the hard one.
ulimit -Sn 1024
ulimit -Hn 8192
http_cluster_up 'physics = 1' --agents 2 --agent-cpus 1 --agent-mem 256M
ulimit -Sn 8192 # the floods below hold some 2,300 descriptors
ctl_pid=$(cat "$DIR/controller.pid")
limits=$(awk '/^Max open files/ { print $4, $5 }' "/proc/$ctl_pid/limits")
[ "$limits" = "8192 8192" ] || fail "the controller's open files limit is $limits, want its hard limit 8192 8192"
agents_before=$(colony nodes --json | jq '[.nodes[] | select(.state == "up")] | length')
[ "$agents_before" = 2 ] || fail "$agents_before agents up before the flood, want 2"

rss_kib() { awk '/^VmRSS/ { print $2 }' "/proc/$ctl_pid/status"; }
hwm_kib() { awk '/^VmHWM/ { print $2 }' "/proc/$ctl_pid/status"; }
rss_before=$(rss_kib)
log_before=$(stat -c %s "$DIR/controller.log")
agent_addr=127.0.0.1:$(cat "$DIR/controller.port")

# flood MODE ADDRESS N NAME [runner...]: start peer-flood in the background (killed by the trap),
# its status in $FLOODS/NAME.status.
FLOODS=$DIR/floods
install -d -o nobody -g nogroup "$FLOODS" # the Unix flood runs as nobody
flood() {
        local mode=$1 addr=$2 n=$3 name=$4
        shift 4
        "$@" "$FLOOD" "$mode" "$addr" "$n" "$FLOODS/$name.status" 2>>"$FLOODS/$name.err" &
        STARTED_PIDS+=("$!")
}
# status NAME FIELD: a number from a flood's status line (connected, open, closed).
status() { awk -v f="$2" 'NR == 1 { for (i = 1; i < NF; i++) if ($i == f) print $(i + 1) }' "$FLOODS/$1.status" 2>/dev/null; }
# wait_closed NAME WANT SECONDS: until at least WANT of the flood's connections were closed.
wait_closed() {
        local end=$((SECONDS + $3))
        while ((SECONDS <= end)); do
                [ "$(status "$1" closed || true)" -ge "$2" ] 2>/dev/null && return 0
                sleep 0.5
        done
        fail "$1: $(head -n1 "$FLOODS/$1.status" 2>/dev/null), want $2 closed within $3 s"
}
# wait_connected NAME N: until the flood has opened its connections (up to 120 s on a busy host).
wait_connected() {
        local end=$((SECONDS + 120))
        while ((SECONDS <= end)); do
                [ -s "$FLOODS/$1.status" ] && break
                sleep 0.5
        done
        [ "$(status "$1" connected)" = "$2" ] || fail "$1: $(head -n1 "$FLOODS/$1.status" 2>/dev/null), want $2 connected"
}

nfds() { find "/proc/$ctl_pid/fd" -mindepth 1 | wc -l; }

# 1. Out of descriptors, accept rests instead of failing (and logging) on every turn of the loop:
# 100 clients with room for 40. Once the limit is raised again they are all taken.
# (The hard limit goes down too, to 512, as the test may not raise another process's.)
limit=$(($(nfds) + 40))
prlimit --pid "$ctl_pid" --nofile=$limit:512
flood idle "$DIR/controller.sock" 100 exhaust setpriv --reuid=nobody --regid=nogroup --clear-groups
exhaust_pid=$!
wait_connected exhaust 100 # the backlog holds those not accepted
for ((i = 0; i < 300; i++)); do (($(nfds) >= limit)) && break; sleep 0.1; done
(($(nfds) >= limit)) || fail "the controller holds $(nfds) descriptors, never its limit $limit"
sleep 3 # out of descriptors for a while: this is when a spinning accept would fill the log
log_growth=$(($(stat -c %s "$DIR/controller.log") - log_before))
note "out of descriptors for 3 s: log +$log_growth bytes"
((log_growth < 100000)) || fail "the controller's log grew by $log_growth bytes in 3 s out of descriptors"
grep -q "accept on the client listener: resting 250 ms" "$DIR/controller.log" || fail "no accept backoff logged"
prlimit --pid "$ctl_pid" --nofile=512:512 # the rest of the test: fewer than the floods would take
for ((i = 0; i < 300; i++)); do (($(nfds) >= limit + 60)) && timeout 5 "$COLONY_BIN/colony" nodes >/dev/null 2>&1 && break; sleep 0.1; done
timeout 10 "$COLONY_BIN/colony" nodes >/dev/null || fail "colony nodes unanswered once descriptors were free again"
kill "$exhaust_pid"
wait "$exhaust_pid" || true

# 2. A 1 MiB frame announced before authentication is cut at its header, not buffered.
flood partial "$agent_addr" 200 partial
wait_connected partial 200
wait_closed partial 200 60
grep -q "before authentication (a larger frame): cut" "$DIR/controller.log" || fail "no partial frame was cut for its size"

# 3. Everything at once, held. `colony nodes` must answer within 1 s, or within 5 times its
# slowest answer before the flood where this host (an emulated guest, a busy machine) is slower
# than that to begin with: the flood must cost little, whatever the host costs.
quiet_ms=0
for i in 1 2 3; do
        t0=$(date +%s%N)
        colony nodes >/dev/null || fail "colony nodes failed before the flood"
        ms=$((($(date +%s%N) - t0) / 1000000))
        ((ms > quiet_ms)) && quiet_ms=$ms
done
bound_ms=$((quiet_ms * 5 > 1000 ? quiet_ms * 5 : 1000))
flood idle "$agent_addr" 1000 tcp
flood idle "$DIR/controller.sock" 1000 unix setpriv --reuid=nobody --regid=nogroup --clear-groups
flood slow-http "127.0.0.1:$(cat "$DIR/http.port")" 100 http
wait_connected tcp 1000
wait_connected unix 1000
wait_connected http 100

times=()
for i in 1 2 3 4 5; do
        t0=$(date +%s%N)
        timeout 10 "$COLONY_BIN/colony" nodes >/dev/null || fail "colony nodes failed during the flood"
        ms=$((($(date +%s%N) - t0) / 1000000))
        # one answer may meet a host busy with guests (1.8 s once in CI): a stall is any over 5x
        ((ms < 5 * bound_ms)) || fail "colony nodes took $ms ms during the flood, want < $((5 * bound_ms))"
        times+=("$ms")
done
median=$(printf '%s\n' "${times[@]}" | sort -n | sed -n 3p)
((median < bound_ms)) || fail "colony nodes took a median $median ms during the flood (${times[*]}), want < $bound_ms"
note "colony nodes during the flood: ${times[*]} ms, median $median ms (before it: $quiet_ms ms)"
curl -fsS --max-time 5 --interface 127.0.0.2 "http://127.0.0.1:$(cat "$DIR/http.port")/metrics" >/dev/null ||
        fail "/metrics unanswered from another address while 100 slow clients held one"

# A user's connections past 256 are refused with an error; the 256 stay.
wait_closed unix 744 60
[ "$(status unix open)" -le 256 ] || fail "unix: $(head -n1 "$FLOODS/unix.status"), want at most 256 open"
grep -q "too many connections: uid 65534" "$FLOODS/unix.status" || fail "unix: the refusal said $(sed -n 2p "$FLOODS/unix.status")"
# Every agent-port stranger is closed: at accept past 128, the others at the hello deadline.
wait_closed tcp 1000 60
grep -q "no hello within 10 s: closed" "$DIR/controller.log" || fail "no hello deadline in the log"

rss_growth=$(($(hwm_kib) - rss_before))
log_growth=$(($(stat -c %s "$DIR/controller.log") - log_before))
note "controller: peak RSS $((rss_growth / 1024)) MiB above the $((rss_before / 1024)) MiB before, log +$log_growth bytes"
((rss_growth < 50 * 1024)) || fail "the controller's RSS grew by $((rss_growth / 1024)) MiB, want < 50"
((log_growth < 1000000)) || fail "the controller's log grew by $log_growth bytes, want < 1 MB"
up=$(timeout 10 "$COLONY_BIN/colony" nodes --json | jq '[.nodes[] | select(.state == "up")] | length')
[ "$up" = 2 ] || fail "$up agents up after the flood, want 2"
for a in 1 2; do kill -0 "$(agent_pid "$PREFIX$a")" || fail "agent $PREFIX$a died"; done
note "floods held and refused: ok"
