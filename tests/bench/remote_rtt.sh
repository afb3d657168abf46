#!/usr/bin/env bash
# remote_rtt.sh - the round trip of `colony submit` from another host (a network namespace this
# script makes, its own munged, an unprivileged user) beside the same submission on the
# controller's host over the Unix socket: the whole command, as a user waits for it (colony's
# start, colony-connect's start, the TCP and TLS handshakes, the nonce, the MUNGE credential
# minted on the client's host and decoded on the controller's, the request and its reply). Twice:
# the client link over TLS, then plain TCP. The controller has no agent, so the held jobs stay
# pending and nothing else runs. Root; prints JSON: per link, p50, p90 and p99 in ms.
#
#   COLONY_BIN=build/bin tests/bench/remote_rtt.sh [N [CHUNK]]
#
# N submissions each way (default 500), in chunks of CHUNK (default 50), the two ways' chunks
# alternating so that other load on the machine falls on both alike.
set -euo pipefail
shopt -s inherit_errexit # a failed submission stops the run, inside $(run ...) too
n=${1:-500} chunk=${2:-50}
bin=$(cd "${COLONY_BIN:?set COLONY_BIN to the bin directory of a build}" && pwd)
for p in jq ip munged mungekey openssl setpriv nsenter; do command -v "$p" >/dev/null || { echo "$p is needed" >&2; exit 1; }; done
dir=$(mktemp -d /tmp/colony-remote-rtt-XXXXXX)
chmod 755 "$dir"
. "$(dirname "$0")/../integration/remote_lib.sh"
net=10.215.$(($$ % 250)) bridge=crt$$ ns=colony$$-rtt
ctl=""
cleanup() {
        set +e
        [ -n "$ctl" ] && kill -TERM "$ctl" 2>/dev/null && wait "$ctl" 2>/dev/null
        munged_stop
        ip netns del "$ns" 2>/dev/null
        ip link del "$bridge" 2>/dev/null
        rm -rf "$dir"
}
trap cleanup EXIT

ip link add "$bridge" type bridge
ip addr add "$net.1/24" dev "$bridge"
ip link set "$bridge" up
ip netns add "$ns"
ip link add "v$$rtt" type veth peer name eth0 netns "$ns"
ip link set "v$$rtt" master "$bridge" up
ip -n "$ns" addr add "$net.2/24" dev eth0
ip -n "$ns" link set eth0 up
ip -n "$ns" link set lo up

mungekey --create --keyfile="$dir/munge.key"
for h in ctl b; do munged_start "$dir" "$h" "$dir/munge.key"; done
remote_certs "$dir" "$net.1"
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$dir/secret"
chmod 600 "$dir/secret"
mkdir -m 1777 "$dir/work"
for h in ctl b; do munged_ready "$dir" "$h" || { echo "munged for $h did not start" >&2; exit 1; }; done

# loop N: N held submissions, each timed in the shell (no fork for the clock); one ms figure a line.
loop='for ((i = 0; i < $1; i++)); do t=$EPOCHREALTIME; "$0" submit --hold -- /bin/true >/dev/null || exit 1;
      echo "$EPOCHREALTIME $t" | awk "{ printf \"%.3f\\n\", (\$1 - \$2) * 1000 }"; done'
# quantiles FILE: {p50_ms, p90_ms, p99_ms, n}
quantiles() {
        jq -Rn '[inputs | tonumber] | sort as $s | ($s | length) as $n |
                { p50_ms: $s[($n * 0.5 | floor)], p90_ms: $s[($n * 0.9 | floor)], p99_ms: $s[($n * 0.99 | floor)], n: $n }' "$1"
}

# run TLS(yes|no): start a controller, time both ways, stop it; prints {"local": .., "remote": ..}
run() {
        local tls=$1 done=0
        rm -f "$dir/client.port" "$dir/controller.db"* "$dir/local.ms" "$dir/remote.ms"
        {
                echo "[controller]"
                [ "$tls" = no ] || printf 'tls_cert = %s\ntls_key = %s\n' "$dir/controller.pem" "$dir/controller.key"
                printf 'client_listen = %s:0\nclient_port_file = %s\nmunge_socket = %s\n' "$net.1" "$dir/client.port" \
                        "$dir/munge-ctl/sock"
                printf 'submit_hosts = %s\nlog_level = warning\n' "$net.2"
        } >"$dir/controller.conf"
        "$bin/colony-controller" --config "$dir/controller.conf" --secret-file "$dir/secret" \
                --socket "$dir/controller.sock" --agent-listen 127.0.0.1:0 --database "$dir/controller.db" \
                >>"$dir/controller.log" 2>&1 &
        ctl=$!
        for ((k = 0; k < 300; k++)); do [ -s "$dir/client.port" ] && break; sleep 0.1; done
        { printf '[client]\ncontroller = %s:%s\nmunge_socket = %s\n' "$net.1" "$(cat "$dir/client.port")" "$dir/munge-b/sock"
          [ "$tls" = no ] || printf 'tls_ca = %s\n' "$dir/ca.pem"; } >"$dir/b.conf"
        while ((done < n)); do
                (cd "$dir/work" && COLONY_SOCKET=$dir/controller.sock bash -c "$loop" "$bin/colony" "$chunk") >>"$dir/local.ms"
                (cd "$dir/work" && nsenter --net="/run/netns/$ns" setpriv --reuid 4201 --regid 4201 --clear-groups -- \
                        env -u COLONY_SOCKET COLONY_CONFIG="$dir/b.conf" bash -c "$loop" "$bin/colony" "$chunk") >>"$dir/remote.ms"
                done=$((done + chunk))
        done
        kill -TERM "$ctl" && wait "$ctl"
        ctl=""
        jq -n --argjson l "$(quantiles "$dir/local.ms")" --argjson r "$(quantiles "$dir/remote.ms")" '{ local: $l, remote: $r }'
}
jq -n --argjson tls "$(run yes)" --argjson plain "$(run no)" --arg nproc "$(nproc)" --arg load "$(cut -d' ' -f1-3 /proc/loadavg)" \
        '{ what: "colony submit --hold, whole command, ms", cpus: ($nproc | tonumber), loadavg: $load, tls: $tls, plain_tcp: $plain }'
