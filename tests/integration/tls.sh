#!/usr/bin/env bash
# tls.sh - the controller-agent link over TLS, with certificates this test makes: an agent that
# trusts the right CA and has a client certificate runs a job; an agent trusting another CA,
# one checking for another host name, one without a client certificate and one speaking
# plaintext are refused, each with its reason in a log, and never become nodes.
. "$(dirname "$0")/lib.sh"
command -v openssl >/dev/null || { echo "SKIP: openssl missing"; exit $SKIP; }

AGENTS=() # names of the agents this test starts itself (colony down knows nothing of them)
stop_agents() {
        local name pid
        for name in "${AGENTS[@]}"; do
                pid=$(cat "$DIR/$name.agentpid" 2>/dev/null) || continue
                kill -TERM "$pid" 2>/dev/null
                for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
                kill -9 "$pid" 2>/dev/null && "$COLONY_BIN/colony-agent" --cleanup --name "$name" \
                        --state-dir "$DIR/state-$name" --scope "$(agent_unit "$name")" >/dev/null 2>&1
        done
        [ -n "${ctl_pid:-}" ] && kill -TERM "$ctl_pid" 2>/dev/null && wait "$ctl_pid" 2>/dev/null
        return 0
}
trap 'rc=$?; set +e; stop_agents; (exit $rc); teardown' EXIT

# Certificates: two CAs; the controller's names 127.0.0.1, the agent's is a client certificate.
mkca() {
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
                -keyout "$DIR/$1.key" -out "$DIR/$1.pem" -subj "/CN=colony test $1" 2>/dev/null
}
mkcert() { # CA NAME SUBJECT-ALT-NAME
        openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$DIR/$2.key" \
                -out "$DIR/$2.csr" -subj "/CN=$2" 2>/dev/null
        printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth,clientAuth\n' "$3" >"$DIR/$2.ext"
        openssl x509 -req -in "$DIR/$2.csr" -CA "$DIR/$1.pem" -CAkey "$DIR/$1.key" -CAcreateserial -days 2 \
                -out "$DIR/$2.pem" -extfile "$DIR/$2.ext" 2>/dev/null
}
mkca ca
mkca other-ca
mkcert ca controller IP:127.0.0.1
mkcert ca agent DNS:agent.test
chmod 600 "$DIR"/*.key

# The controller, with TLS from its config file, checking agents' certificates too.
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$DIR/secret"
chmod 600 "$DIR/secret"
cat >"$DIR/controller.conf" <<EOF
[controller]
tls_cert = $DIR/controller.pem
tls_key = $DIR/controller.key
tls_ca = $DIR/ca.pem
EOF
"$COLONY_BIN/colony-controller" --config "$DIR/controller.conf" --secret-file "$DIR/secret" \
        --socket "$DIR/controller.sock" --agent-listen 127.0.0.1:0 --port-file "$DIR/controller.port" \
        --database "$DIR/controller.db" >"$DIR/controller.log" 2>&1 &
ctl_pid=$!
STARTED_PIDS+=("$ctl_pid")
for ((i = 0; i < 100; i++)); do [ -s "$DIR/controller.port" ] && [ -S "$DIR/controller.sock" ] && break; sleep 0.1; done
port=$(cat "$DIR/controller.port")
grep -q "TLS, agents' certificates checked" "$DIR/controller.log" || fail "the controller does not say it uses TLS"

# start_agent SUFFIX [OPTIONS...]: an agent named $PREFIX<SUFFIX> with those options.
start_agent() {
        local name=$PREFIX$1
        shift
        "$COLONY_BIN/colony-agent" --name "$name" --controller "127.0.0.1:$port" --secret-file "$DIR/secret" \
                --state-dir "$DIR/state-$name" --cpus 1 --mem 256M --stop-jobs-on-exit --scope "$(agent_unit "$name")" \
                "$@" >"$DIR/$name.log" 2>&1 &
        echo $! >"$DIR/$name.agentpid"
        AGENTS+=("$name")
}
# wait_log FILE TEXT: poll until FILE has TEXT (fixed string).
wait_log() {
        for ((i = 0; i < 150; i++)); do grep -qF "$2" "$1" && return 0; sleep 0.1; done
        fail "$(basename "$1") never said '$2': $(tail -n 3 "$1")"
}
up_nodes() { colony nodes --json | jq -r '[.nodes[] | select(.state == "up") | .name] | sort | join(" ")'; }

# The good agent: our CA, our client certificate, the controller's address as the name to check.
start_agent good --tls-ca "$DIR/ca.pem" --tls-cert "$DIR/agent.pem" --tls-key "$DIR/agent.key"
wait_log "$DIR/${PREFIX}good.log" "connected (heartbeat"
id=$(colony submit --cpus 1 --mem 16M -- /bin/echo over tls)
colony wait "$id" >/dev/null || fail "job $id did not complete: $(colony show "$id")"
[ "$(cat "colony-$id.out")" = "over tls" ] || fail "job $id's output: $(cat "colony-$id.out")"
note "TLS agent ran job $id on $(job_field "$id" node)"

# The refused ones, all at once.
start_agent wrongca --tls-ca "$DIR/other-ca.pem" --tls-cert "$DIR/agent.pem" --tls-key "$DIR/agent.key"
start_agent wrongname --tls-ca "$DIR/ca.pem" --tls-cert "$DIR/agent.pem" --tls-key "$DIR/agent.key" \
        --tls-server-name controller.elsewhere
start_agent nocert --tls-ca "$DIR/ca.pem"
start_agent plain
wait_log "$DIR/${PREFIX}wrongca.log" "TLS handshake failed: certificate verify failed"
wait_log "$DIR/${PREFIX}wrongname.log" "certificate verify failed: hostname mismatch"
wait_log "$DIR/controller.log" "TLS handshake failed: peer did not return a certificate"
wait_log "$DIR/controller.log" "no TLS handshake within"
wait_log "$DIR/${PREFIX}plain.log" "does it expect TLS?"
for a in wrongca wrongname nocert plain; do
        note "$a: $(grep -m1 -E 'error|closed before' "$DIR/$PREFIX$a.log" | cut -c25-)"
done
[ "$(up_nodes)" = "${PREFIX}good" ] || fail "up nodes: '$(up_nodes)', want only ${PREFIX}good"
grep -q '"secret"\|'"$(cat "$DIR/secret")" "$DIR"/*.log && fail "the secret appears in a log"

# The good link still works after all that.
id=$(colony submit --cpus 1 --mem 16M -- /bin/true)
colony wait "$id" >/dev/null || fail "job $id after the refusals: $(colony show "$id")"
echo "PASS"
