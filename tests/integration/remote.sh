#!/usr/bin/env bash
# remote.sh - colony from other hosts of the cluster, as their users. Four hosts: the controller's
# (the bridge), b (an agent host), login (no agent, in submit_hosts) and x (neither), in network
# namespaces this test creates, each with its own munged (started here, its socket, key and pid
# file under $DIR; munged speaks only on its Unix socket, so a socket per host is a munged per
# host), and a fifth munged with another key, a stranger's. The client link is TLS.
#
# A user on b submits, lists, waits for and cancels their own jobs through b, and cannot cancel
# another user's; root on b is squashed to nobody until trusted_root_hosts names b; login
# submits without an agent; x may not submit; hand-made credentials (another key, replayed,
# moved to another connection, garbage, none) are refused with "permission denied" and the
# controller serves on.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
for p in ip munged mungekey openssl setpriv nsenter; do
        command -v "$p" >/dev/null || { echo "SKIP: $p missing"; exit $SKIP; }
done

. "$here/remote_lib.sh"

net=10.214.$(($$ % 250))
hosts=(b login x)
ns() { netns_name "$1"; }
stop_all() {
        if [ -n "${agent_pid:-}" ]; then
                kill -TERM "$agent_pid" 2>/dev/null
                wait "$agent_pid" 2>/dev/null
        fi
        [ -n "${ctl_pid:-}" ] && kill -TERM "$ctl_pid" 2>/dev/null && wait "$ctl_pid" 2>/dev/null
        munged_stop
        netns_down
}
trap 'rc=$?; set +e; stop_all; (exit $rc); teardown' EXIT

netns_up "$net" "crb$$" "${hosts[@]}" || { echo "SKIP: cannot make a bridge here"; exit $SKIP; }
b=$net.2 login=$net.3 x=$net.4

# One MUNGE key for the cluster, another for a stranger; a munged per host.
mungekey --create --keyfile="$DIR/munge.key"
mungekey --create --keyfile="$DIR/foreign.key"
for h in ctl b login x; do munged_start "$DIR" "$h" "$DIR/munge.key"; done
munged_start "$DIR" foreign "$DIR/foreign.key"
for h in ctl b login x foreign; do
        munged_ready "$DIR" "$h" || fail "munged for $h did not start: $(tail -n 3 "$DIR/munged-$h.log")"
done

# TLS: the controller's certificate names its address on the bridge.
remote_certs "$DIR" "$net.1"

head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$DIR/secret"
chmod 600 "$DIR/secret"
write_conf() { # [trusted_root_hosts]
        cat >"$DIR/controller.conf" <<EOF
[controller]
tls_cert = $DIR/controller.pem
tls_key = $DIR/controller.key
client_listen = $net.1:0
client_port_file = $DIR/client.port
munge_socket = $DIR/munge-ctl/sock
submit_hosts = $login
${1:+trusted_root_hosts = $1}
EOF
}
write_conf
"$COLONY_BIN/colony-controller" --config "$DIR/controller.conf" --secret-file "$DIR/secret" \
        --socket "$DIR/controller.sock" --agent-listen "$net.1:0" --port-file "$DIR/controller.port" \
        --database "$DIR/controller.db" >"$DIR/controller.log" 2>&1 &
ctl_pid=$!
STARTED_PIDS+=("$ctl_pid")
for ((i = 0; i < 300; i++)); do [ -s "$DIR/client.port" ] && [ -s "$DIR/controller.port" ] && break; sleep 0.1; done
[ -s "$DIR/client.port" ] || fail "the controller has no client listener: $(tail -n 3 "$DIR/controller.log")"
addr=$net.1:$(cat "$DIR/client.port")

# b's agent, over TLS.
nsenter --net="/run/netns/$(ns b)" "$COLONY_BIN/colony-agent" --name "${PREFIX}b" \
        --controller "$net.1:$(cat "$DIR/controller.port")" --secret-file "$DIR/secret" --tls-ca "$DIR/ca.pem" \
        --state-dir "$DIR/state-b" --cpus 2 --mem 256M --stop-jobs-on-exit --scope "$(agent_unit "${PREFIX}b")" \
        >"$DIR/agent-b.log" 2>&1 &
agent_pid=$!
for ((k = 0; k < 300; k++)); do [ "$(node_state "${PREFIX}b")" = up ] && break; sleep 0.1; done
[ "$(node_state "${PREFIX}b")" = up ] || fail "b's agent never came up: $(tail -n 3 "$DIR/agent-b.log")"

# on HOST UID colony ARGS...: colony run on HOST as UID, with that host's client config (its
# munged, the CA, the controller's address) and no Unix socket in its environment.
for h in "${hosts[@]}"; do
        printf '[client]\ncontroller = %s\ntls_ca = %s\nmunge_socket = %s\n' "$addr" "$DIR/ca.pem" \
                "$DIR/munge-$h/sock" >"$DIR/$h.conf"
done
mkdir -m 1777 "$DIR/work"
on() {
        local h=$1 uid=$2
        shift 2
        (cd "$DIR/work" && nsenter --net="/run/netns/$(ns "$h")" setpriv --reuid "$uid" --regid "$uid" --clear-groups \
                -- env -u COLONY_SOCKET COLONY_CONFIG="$DIR/$h.conf" "$COLONY_BIN/$@")
}
u1=4201 u2=4202
sleeper() { echo "$COLONY_BIN/colony-stress" sleep "$1"; }

# A user on b: submit, list, show, wait, cancel their own; not another user's.
long=$(on b $u1 colony submit --name long --cpus 0.5 --mem 16M -- $(sleeper 300)) || fail "u1 on b cannot submit: $long"
wait_state "$long" running
[ "$(job_field "$long" uid)" = $u1 ] || fail "u1's job from b has uid $(job_field "$long" uid)"
on b $u1 colony queue | grep -q "^$long  *long" || fail "u1's queue on b does not list job $long: $(on b $u1 colony queue)"
[ "$(on b $u1 colony show --json "$long" | jget job.node)" = "${PREFIX}b" ] || fail "show through b"
short=$(on b $u1 colony submit --name short --mem 16M -- $(sleeper 0))
on b $u1 colony wait "$short" >/dev/null || fail "wait through b: job $short $(job_field "$short" state)"
note "u1 on b: job $long running as uid $u1, job $short waited for: $(job_field "$short" state)"
theirs=$(on b $u2 colony submit --name theirs --cpus 0.5 --mem 16M -- $(sleeper 300))
if err=$(on b $u1 colony cancel "$theirs" 2>&1); then fail "u1 on b cancelled u2's job"; fi
note "u1 cancelling u2's job through b: $err"
[ "$(job_field "$theirs" state)" != cancelled ] || fail "u2's job got cancelled by u1"
on b $u1 colony cancel "$long" >/dev/null || fail "u1 could not cancel their own job through b"
on b $u2 colony cancel "$theirs" >/dev/null || fail "u2 could not cancel their own job through b"
wait_state "$long" cancelled
wait_state "$theirs" cancelled
on b $u1 colony history | grep -q "^$short " || fail "u1's history through b lacks job $short"

# hold, update, release through b; and events --follow, which streams until it is stopped.
nsenter --net="/run/netns/$(ns b)" setpriv --reuid $u1 --regid $u1 --clear-groups -- env -u COLONY_SOCKET \
        COLONY_CONFIG="$DIR/b.conf" "$COLONY_BIN/colony" events --follow >"$DIR/follow.out" 2>&1 &
follow_pid=$!
STARTED_PIDS+=("$follow_pid")
held=$(on b $u1 colony submit --hold --name held --mem 16M -- $(sleeper 0))
on b $u1 colony update --nice 10 "$held" >/dev/null || fail "update through b"
[ "$(job_field "$held" state)" = pending ] || fail "held job $held is $(job_field "$held" state)"
on b $u1 colony release "$held" >/dev/null || fail "release through b"
on b $u1 colony wait "$held" >/dev/null || fail "job $held released through b: $(job_field "$held" state)"
for ((k = 0; k < 300; k++)); do grep -Eq "^[0-9]+ +[^ ]+ +$held +.*completed" "$DIR/follow.out" && break; sleep 0.1; done
grep -Eq "^[0-9]+ +[^ ]+ +$held +.*completed" "$DIR/follow.out" || fail "events --follow through b missed job $held: $(tail -n 3 "$DIR/follow.out")"
kill "$follow_pid"
wait "$follow_pid" 2>/dev/null || true
note "job $held held, updated, released and waited for through b; events --follow saw it complete"

# root on b: nobody, until the config trusts b's root.
sq=$(on b 0 colony submit --name squashed --mem 16M -- $(sleeper 0))
colony wait "$sq" >/dev/null || true
[ "$(job_field "$sq" uid)" = 65534 ] || fail "root's job from b has uid $(job_field "$sq" uid), want 65534 (nobody)"
write_conf "$b"
colony reload >/dev/null || fail "reload with trusted_root_hosts refused"
tr=$(on b 0 colony submit --name trusted --mem 16M -- $(sleeper 0))
[ "$(job_field "$tr" uid)" = 0 ] || fail "trusted root's job from b has uid $(job_field "$tr" uid), want 0"
note "root on b: uid 65534 by default, 0 once trusted_root_hosts = $b"

# A login host without an agent submits; a host that is neither may not.
lj=$(on login $u1 colony submit --name fromlogin --mem 16M -- $(sleeper 0)) || fail "login host cannot submit: $lj"
on login $u1 colony wait "$lj" >/dev/null || fail "job $lj from the login host: $(job_field "$lj" state)"
if err=$(on x $u1 colony queue 2>&1); then fail "x, neither an agent host nor in submit_hosts, could list the queue"; fi
grep -q "host $x may not submit" <<<"$err" || fail "x was refused with: $err"
note "login host: job $lj $(job_field "$lj" state); x: $err"

# Without a munged on the client's host: one line, and nothing sent.
sed "s|munge_socket = .*|munge_socket = $DIR/munge-none/sock|" "$DIR/b.conf" >"$DIR/nomunge.conf"
if err=$(cd "$DIR/work" && nsenter --net="/run/netns/$(ns b)" env -u COLONY_SOCKET COLONY_CONFIG="$DIR/nomunge.conf" \
        "$COLONY_BIN/colony" queue 2>&1); then fail "colony without a munged listed the queue"; fi
grep -q "cannot prove who you are" <<<"$err" || fail "colony without a munged: $err"
note "no munged on b: $err"
if err=$(cd "$DIR/work" && nsenter --net="/run/netns/$(ns b)" env -u COLONY_SOCKET COLONY_CONFIG="$DIR/b.conf" \
        COLONY_CONTROLLER="$net.1:1" "$COLONY_BIN/colony" queue 2>&1); then fail "colony listed a queue on port 1"; fi
grep -q "cannot reach the controller at $net.1:1: Connection refused" <<<"$err" || fail "no controller there: $err"

# Hand-made credentials, from b.
poke() { # MODE MUNGE-HOST
        nsenter --net="/run/netns/$(ns b)" setpriv --reuid $u1 --regid $u1 --clear-groups -- \
                "$COLONY_BIN/cred-poke" "$addr" "$DIR/ca.pem" "$1" "$DIR/munge-$2/sock" | tail -n 1
}
[ "$(poke mint b)" = welcome ] || fail "a credential from b's munged was refused: $(poke mint b)"
for m in "mint foreign" "replay b" "moved b" "garbage b" "noauth b"; do
        got=$(poke $m) || fail "poke $m: no answer"
        grep -q "permission denied" <<<"$got" || fail "poke $m: $got"
        note "$m: $got"
done
colony nodes >/dev/null || fail "the controller no longer answers"
kill -0 "$ctl_pid" || fail "the controller died"
# Every client above ended its TLS stream in order: the controller logged no TLS failure for one.
! grep -q "unexpected eof" "$DIR/controller.log" || fail "clients' ends logged as TLS failures: $(grep -m1 "unexpected eof" "$DIR/controller.log")"

# 300 idle strangers from b (an agent host, so let through to the nonce): at most 128 are kept
# waiting for their auth (the controller's descriptors say so: from the peers' side, one not
# accepted yet looks like one kept), the rest closed at accept; the auth deadline closes the
# others; root's `colony nodes` answers meanwhile.
nfds() { find "/proc/$ctl_pid/fd" -mindepth 1 | wc -l; }
fds_before=$(nfds)
nsenter --net="/run/netns/$(ns b)" "$COLONY_BIN/peer-flood" idle "$addr" 300 "$DIR/flood.status" 2>>"$DIR/flood.err" &
flood_pid=$!
STARTED_PIDS+=("$flood_pid")
fstatus() { awk -v f="$1" 'NR == 1 { for (i = 1; i < NF; i++) if ($i == f) print $(i + 1) }' "$DIR/flood.status" 2>/dev/null; }
most=0
for ((k = 0; k < 1200; k++)); do
        n=$(($(nfds) - fds_before))
        ((n > most)) && most=$n
        ((k != 10)) || colony nodes >/dev/null || fail "the controller did not answer during the flood"
        [ "$(fstatus closed)" = 300 ] && break
        sleep 0.1
done
[ "$(fstatus closed)" = 300 ] || fail "strangers still open after the auth deadline: $(head -n 1 "$DIR/flood.status")"
((most <= 128 + 8)) || fail "the controller held $most more descriptors during a flood of 300 strangers, want 128 at most (and a few)"
grep -q "connections have not authenticated yet" "$DIR/controller.log" || fail "no refusal of strangers logged"
kill "$flood_pid"
wait "$flood_pid" || true
note "300 strangers from b: the controller held at most $most more descriptors, the rest closed at accept"

# The controller's munged stopped: a client's credential waits for it on the controller's thread
# for credentials, while the loop serves on (root's `colony nodes` on the Unix socket answers);
# once munged goes on, that client is welcomed and its job submitted. A decode on the loop would
# hold `colony nodes` until libmunge gives up (10 s), and the client would be refused.
kill -STOP "${MUNGED_PIDS[0]}"
on b $u1 colony submit --name whilestopped --mem 16M -- $(sleeper 0) >"$DIR/stopped.out" 2>&1 &
sub=$!
pending() { ss -xlnH src "$DIR/munge-ctl/sock" | awk '{ print $3 }'; }
for ((k = 0; k < 300; k++)); do [ "$(pending)" = 0 ] || break; sleep 0.1; done
[ "$(pending)" != 0 ] || fail "the controller never asked its munged"
colony nodes >/dev/null || fail "the controller did not answer while its munged was stopped"
kill -CONT "${MUNGED_PIDS[0]}"
wait "$sub" || fail "the submission that waited for munged: $(cat "$DIR/stopped.out")"
note "munged stopped: the loop answered; then job $(cat "$DIR/stopped.out") was submitted"
echo "PASS"
