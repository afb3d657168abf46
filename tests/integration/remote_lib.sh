# remote_lib.sh - what remote.sh and tests/bench/remote_rtt.sh share: a CA with a controller
# certificate for an address, and munged instances under a directory, each with its own
# socket, pid file and seed (started in the foreground: the caller stops them by pid).

# remote_certs DIR ADDRESS: DIR/ca.pem, and DIR/controller.pem and DIR/controller.key naming
# the IP address ADDRESS.
remote_certs() {
        local dir=$1
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -keyout "$dir/ca.key" \
                -out "$dir/ca.pem" -subj "/CN=colony test ca" 2>/dev/null
        openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$dir/controller.key" \
                -out "$dir/controller.csr" -subj "/CN=controller" 2>/dev/null
        printf 'subjectAltName=IP:%s\nextendedKeyUsage=serverAuth\n' "$2" >"$dir/controller.ext"
        openssl x509 -req -in "$dir/controller.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial -days 2 \
                -out "$dir/controller.pem" -extfile "$dir/controller.ext" 2>/dev/null
        chmod 600 "$dir/ca.key" "$dir/controller.key"
        chmod 644 "$dir/ca.pem"
}

# munged_start DIR NAME KEY: a munged with key file KEY and socket DIR/munge-NAME/sock, its log
# DIR/munged-NAME.log; its pid is appended to MUNGED_PIDS.
MUNGED_PIDS=()
munged_start() {
        mkdir -m 755 "$1/munge-$2"
        munged -F --socket="$1/munge-$2/sock" --key-file="$3" --pid-file="$1/munge-$2/pid" \
                --seed-file="$1/munge-$2/seed" --log-file="$1/munged-$2.log" 2>>"$1/munged-$2.log" &
        MUNGED_PIDS+=($!)
}

# munged_ready DIR NAME: wait until its socket is there (10 s). Returns 1 if it never is.
munged_ready() {
        local k
        for ((k = 0; k < 100; k++)); do [ -S "$1/munge-$2/sock" ] && return 0; sleep 0.1; done
        return 1
}

# munged_stop: stop every munged started (resumed first, in case one was stopped) and wait.
munged_stop() {
        local pid
        for pid in "${MUNGED_PIDS[@]}"; do kill -CONT "$pid" 2>/dev/null; kill -TERM "$pid" 2>/dev/null; done
        for pid in "${MUNGED_PIDS[@]}"; do wait "$pid" 2>/dev/null; done
        return 0
}
