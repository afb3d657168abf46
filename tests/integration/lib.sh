# lib.sh - fixtures for colony's end-to-end tests: a private cluster per test, torn down always.
#
# Each test sources this file, calls cluster_up, and exits through the EXIT trap, which stops
# the cluster with `colony down`, then fails the test if any cgroup or process it made is left.
# Needs: root, $COLONY_BIN (the build's bin/ directory), jq.
set -euo pipefail

SKIP=77
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (cgroups, other users)"; exit $SKIP; }
[ -n "${COLONY_BIN:-}" ] && [ -x "$COLONY_BIN/colony" ] || { echo "COLONY_BIN not set to the build's bin/"; exit 1; }
command -v jq >/dev/null || { echo "SKIP: jq missing"; exit $SKIP; }

TEST_NAME=$(basename "$0" .sh)
PREFIX="ct$$-"
DIR=$(mktemp -d "/tmp/colony-$TEST_NAME-XXXXXX")
chmod 755 "$DIR"
cd "$DIR" # jobs write colony-<id>.out into their working directory
export COLONY_SOCKET="$DIR/controller.sock"
STARTED_PIDS=()

colony() { "$COLONY_BIN/colony" "$@"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
note() { echo "# $*"; }

# Every cgroup directory colony made for this test's agents, in every hierarchy: their
# subtrees and, in a login session, the transient scopes they ran in (colony-*-<agent>.scope).
leftover_cgroups() {
        find /sys/fs/cgroup -maxdepth 6 -type d \( -name "colony-$PREFIX*" -o -name "colony-*-$PREFIX*.scope" \) \
                2>/dev/null || true
}

# A test that changes something teardown must undo first (an attribute that keeps rm -rf out)
# defines test_cleanup.
teardown() {
        local rc=$?
        set +e
        declare -F test_cleanup >/dev/null && test_cleanup
        colony down --dir "$DIR" >/dev/null 2>&1
        for pid in "${STARTED_PIDS[@]}"; do kill -9 "$pid" 2>/dev/null; done
        local left i
        # systemd removes an agent's scope once its last process is gone, not at once.
        for ((i = 0; i < 300; i++)); do
                left=$(leftover_cgroups)
                [ -z "$left" ] && break
                sleep 0.1
        done
        if [ -n "$left" ]; then
                echo "FAIL: cgroups left behind:" >&2; echo "$left" >&2
                rc=1
        fi
        if [ $rc -ne 0 ] && [ $rc -ne $SKIP ]; then
                for log in "$DIR"/*.log; do [ -f "$log" ] && { echo "--- $log"; tail -n 30 "$log"; }; done >&2
        fi
        rm -rf "$DIR"
        exit $rc
}
trap teardown EXIT

# cluster_up [colony up options...]: a private cluster in $DIR with agents named $PREFIX<i>.
cluster_up() {
        colony up --dir "$DIR" --name-prefix "$PREFIX" "$@" >/dev/null
}

# controller_cmdline: the controller's command line as colony up started it, on the port its
# agents know, to start it again after killing it.
controller_cmdline() {
        tr '\0' ' ' <"/proc/$(cat "$DIR/controller.pid")/cmdline" | sed "s/127.0.0.1:0/127.0.0.1:$(cat "$DIR/controller.port")/"
}

# controller_start CMDLINE: start the controller from controller_cmdline's output; return once
# it answers.
controller_start() {
        $1 >>"$DIR/controller.log" 2>&1 &
        echo $! >"$DIR/controller.pid"
        STARTED_PIDS+=("$!")
        local i
        for ((i = 0; i < 300; i++)); do colony nodes >/dev/null 2>&1 && return 0; sleep 0.1; done
        fail "the controller did not come back"
}

# jget PATH...: fields of the JSON document on stdin, a line each (tests/integration/jget.c:
# jq's syntax for the few paths the polls need, at a tenth of jq's start-up cost in the guest).
jget() { "$COLONY_BIN/jget" "$@"; }

# job_field ID FIELD: one field of a job record.
job_field() { colony show --json "$1" | jget "job.$2//$2"; }

# node_state NAME: the state of the node NAME (up, not-responding, down), or null.
node_state() { colony nodes --json | jget "nodes[name=$1].state"; }

# wait_node_up NAME: until node NAME is up: after a controller's restart its agent comes back on
# its own, and until then a cancel of one of its running jobs is refused.
wait_node_up() {
        local k
        for ((k = 0; k < 1200; k++)); do [ "$(node_state "$1")" = up ] && return 0; sleep 0.1; done
        fail "node $1 did not come back up: $(node_state "$1")"
}

# wait_state ID STATE [TIMEOUT_S]: poll until the job is in STATE; fail at once if it ended in
# another state, which it can never leave.
wait_state() {
        local id=$1 want=$2 limit=${3:-20} end=$((SECONDS + ${3:-20})) state
        while ((SECONDS <= end)); do
                state=$(job_field "$id" state)
                [ "$state" = "$want" ] && return 0
                case $state in completed | failed | cancelled | oom-killed | lost | timeout)
                        fail "job $id ended $state while waiting for $want" ;;
                esac
                sleep 0.1
        done
        fail "job $id not $want after ${limit}s (is $(job_field "$id" state))"
}

# wait_started ID [TIMEOUT_S]: poll until the job has started (it may have ended since).
wait_started() {
        local id=$1 end=$((SECONDS + ${2:-20}))
        while ((SECONDS <= end)); do
                [ "$(job_field "$id" start_usec)" != 0 ] && return 0
                sleep 0.1
        done
        fail "job $id not started after ${2:-20}s (is $(job_field "$id" state))"
}

# agent_pid NAME: pid of an agent this test's cluster started.
agent_pid() { cat "$DIR/agent-$1.pid"; }

# cgroup_dir CONTROLLER: this process's own cgroup directory in a v1 hierarchy, or the v2 one.
cgroup_dir() {
        local ctl=$1 path
        if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then
                path=$(awk -F: '$1 == "0" { print $3 }' /proc/self/cgroup)
                echo "/sys/fs/cgroup${path%/}"
                return
        fi
        path=$(awk -F: -v c="$ctl" '{ n = split($2, a, ","); for (i = 1; i <= n; i++) if (a[i] == c) print $3 }' /proc/self/cgroup)
        local mnt
        mnt=$(awk -v c="$ctl" '$9 == "cgroup" { n = split($NF, o, ","); for (i = 1; i <= n; i++) if (o[i] == c) print $5 }' /proc/self/mountinfo | head -n1)
        echo "$mnt${path%/}"
}

# agent_subtree CONTROLLER AGENT: the agent's subtree, colony-AGENT, in CONTROLLER's v1
# hierarchy (below this test's own cgroup, as v1 agents never move) or in the v2 one: where the
# agent moved to, its leaf colony-AGENT/agent, from /proc/PID/cgroup. That is below this
# test's cgroup, or, in a login session, in the transient scope colony up started it in. Kept
# in $DIR once known: the agent may be dead when asked again, and its successor uses the same.
agent_subtree() {
        local keep=$DIR/subtree-$2 path= pid i
        if [ "$(stat -fc %T /sys/fs/cgroup)" != cgroup2fs ]; then
                echo "$(cgroup_dir "$1")/colony-$2"
                return
        fi
        [ -s "$keep" ] && { cat "$keep"; return; }
        # A starting agent moves to its scope, then to its leaf.
        for ((i = 0; i < 600; i++)); do
                pid=$(agent_pid "$2")
                if ended "$pid"; then
                        # A dead agent's subtree outlives it (its jobs run on): found by its name.
                        path=$(find /sys/fs/cgroup -maxdepth 6 -type d -name "colony-$2" 2>/dev/null)
                        [ -n "$path" ] && [ "$(wc -l <<<"$path")" = 1 ] || fail "agent $2 is dead, its subtree not one: '$path'"
                        echo "$path" | tee "$keep"
                        return
                fi
                path=$(awk -F: '$1 == "0" { print $3 }' "/proc/$pid/cgroup" 2>/dev/null) || path=
                [[ $path == */colony-$2/agent ]] && break
                sleep 0.1
        done
        [[ $path == */colony-$2/agent ]] || fail "agent $2 (pid $pid) is not in its leaf colony-$2/agent: '$path'"
        echo "/sys/fs/cgroup${path%/agent}" | tee "$keep"
}

# agent_cgroup CONTROLLER AGENT REL: the directory REL (e.g. job-7, dept-cs) in an agent's subtree.
agent_cgroup() { echo "$(agent_subtree "$1" "$2")/$3"; }

# agent_scope AGENT: the transient scope colony up started the agent in (a login session's
# host), or nothing where the agent runs below this test's own cgroup.
agent_scope() {
        local up
        up=$(agent_subtree memory "$1")
        up=${up%/colony-$1}
        [[ ${up##*/} != colony-*-$1.scope ]] || echo "${up##*/}"
}

# agent_unit AGENT: the transient scope for an agent this test starts by hand
# (colony-agent --scope UNIT), which it enters only where its cgroup is not delegated to it, as
# in a login session; named as colony up names its agents' (colony-<tag>-AGENT.scope).
agent_unit() { echo "colony-$$-$1.scope"; }

# job_cgroup CONTROLLER AGENT ID: the directory of a job's cgroup (a job of no department).
job_cgroup() { agent_cgroup "$1" "$2" "job-$3"; }

# cgroup_cpu_usec AGENT REL: CPU time of a cgroup in an agent's subtree, from the kernel.
cgroup_cpu_usec() {
        if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then
                awk '$1 == "usage_usec" { print $2 }' "$(agent_cgroup cpu "$1" "$2")/cpu.stat"
        else
                local ns
                ns=$(cat "$(agent_cgroup cpuacct "$1" "$2")/cpuacct.usage")
                echo $((ns / 1000))
        fi
}

# job_cpu_usec AGENT ID: CPU time of a job's cgroup.
job_cpu_usec() { cgroup_cpu_usec "$1" "job-$2"; }

# stat_fields PID: the fields of /proc/PID/stat after the command name, from the state on
# (so a name with spaces or parentheses cannot shift them): $1 state, $20 start time.
stat_fields() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null; }

# job_procs AGENT ID: "pid:starttime" of every process in a job's cgroup (pid reuse proof).
job_procs() {
        local dir pid
        dir=$(job_cgroup pids "$1" "$2")
        [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] && dir=$(job_cgroup "" "$1" "$2")
        for pid in $(cat "$dir/cgroup.procs"); do
                echo "$pid:$(stat_fields "$pid" | awk '{ print $20 }')"
        done
}

# alive PID:STARTTIME: true while that very process exists and has not exited (a zombie has:
# it only waits for its parent, or init, to collect its status).
alive() {
        local pid=${1%%:*} start=${1##*:} fields
        fields=$(stat_fields "$pid") || return 1
        [ -n "$fields" ] && [ "$(awk '{ print $20 }' <<<"$fields")" = "$start" ] && [ "$(awk '{ print $1 }' <<<"$fields")" != Z ]
}

# ended PID: the process is gone, or a zombie with no thread left. A killed process's main
# thread turns zombie while another (the agent's jobsync, the controller's fsync thread) may
# still be in a slow system call, holding the descriptor table and so its locks and sockets:
# only the last thread's exit releases them. Without a fork: chaos.sh polls it hundreds of
# times on a busy CI machine.
ended() {
        local stat tasks
        read -r stat 2>/dev/null <"/proc/$1/stat" || return 0
        stat=${stat##*) }
        [ "${stat%% *}" = Z ] || return 1
        tasks=("/proc/$1/task/"*)
        [ "${#tasks[@]}" -le 1 ]
}

# kill_wait PID: SIGKILL a process this test started and wait until it has ended: a killed
# agent holds its subtree's lock until its last thread is gone, which an fsync in progress
# delays on a busy host, and the next agent must not start before.
kill_wait() {
        local i
        kill -9 "$1" 2>/dev/null || true
        for ((i = 0; i < 3000; i++)); do ended "$1" && return 0; sleep 0.01; done
        fail "pid $1 survived SIGKILL"
}

# agent_kill NAME: SIGKILL the agent NAME and wait for its end (kill_wait), its command line
# kept in KILLED_AGENT_CMD for agent_start_again.
KILLED_AGENT_CMD=()
agent_kill() {
        local pid
        pid=$(agent_pid "$1")
        mapfile -d '' -t KILLED_AGENT_CMD <"/proc/$pid/cmdline"
        kill_wait "$pid"
}

# agent_start_again NAME: start the agent agent_kill ended, with its command line, its log
# and its pid file, as a supervisor would.
agent_start_again() {
        "${KILLED_AGENT_CMD[@]}" >>"$DIR/$1.log" 2>&1 &
        echo $! >"$DIR/agent-$1.pid"
        STARTED_PIDS+=("$!")
}

# http_cluster_up DEPARTMENTS [colony up options...]: cluster_up with the controller's HTTP side
# on a loopback port it picks, and DEPARTMENTS ("physics = 3\ncs = 1", printf-escaped) as its
# [departments]; sets HTTP to the base URL.
http_cluster_up() {
        local depts=$1 conf=$DIR/controller.conf
        shift
        printf "[controller]\nhttp_listen = 127.0.0.1:0\nhttp_port_file = %s\n[departments]\n$depts\n" \
                "$DIR/http.port" >"$conf"
        cluster_up --controller-config "$conf" "$@"
        HTTP=http://127.0.0.1:$(cat "$DIR/http.port")
}

# http_sample_jobs: on a one-agent cluster of 2 CPUs with departments physics and cs, a job in
# each state the status page shows: RUNNING_ID (physics, 1 CPU, 64M, one GPU when SAMPLE_GPUS
# is set), COMPLETED_ID, FAILED_ID,
# then PENDING_ID (cs, 2 CPUs: waits behind the running one) and CANCELLED_ID (cancelled while
# it waited behind PENDING_ID).
http_sample_jobs() {
        RUNNING_ID=$(colony submit --name sleeper --group physics --cpus 1 --mem 64M ${SAMPLE_GPUS:+--gpus 1} -- sleep 300)
        wait_state "$RUNNING_ID" running
        wait_started "$RUNNING_ID" # placed is "running"; its start (the wait histogram's) may come later
        COMPLETED_ID=$(colony submit --name quick --cpus 0.5 --mem 32M -- true)
        wait_state "$COMPLETED_ID" completed
        FAILED_ID=$(colony submit --name broken --group cs --cpus 0.5 --mem 32M -- false)
        wait_state "$FAILED_ID" failed
        PENDING_ID=$(colony submit --name big --group cs --cpus 2 --mem 128M -- sleep 300)
        CANCELLED_ID=$(colony submit --name changed-my-mind --cpus 0.5 --mem 32M -- sleep 300)
        wait_state "$PENDING_ID" pending 1
        colony cancel "$CANCELLED_ID" >/dev/null
        wait_state "$CANCELLED_ID" cancelled
}

# netns_up NET BRIDGE HOST...: a bridge BRIDGE with NET.1/24, and per HOST a network namespace
# $(netns_name HOST) joined to it by the veth v$$HOST, its eth0 at NET.2, NET.3... in order.
# netns_down removes them all (call it from the test's trap). Returns 77 (skip) when this host
# cannot make a bridge.
netns_name() { echo "colony$$-$1"; }
NETNS_HOSTS=() NETNS_BRIDGE=""
netns_up() {
        local net=$1 i=1 h
        NETNS_BRIDGE=$2
        shift 2
        ip link add "$NETNS_BRIDGE" type bridge || return $SKIP
        ip addr add "$net.1/24" dev "$NETNS_BRIDGE"
        ip link set "$NETNS_BRIDGE" up
        for h in "$@"; do
                i=$((i + 1))
                NETNS_HOSTS+=("$h")
                ip netns add "$(netns_name "$h")"
                ip link add "v$$$h" type veth peer name eth0 netns "$(netns_name "$h")"
                ip link set "v$$$h" master "$NETNS_BRIDGE" up
                ip -n "$(netns_name "$h")" addr add "$net.$i/24" dev eth0
                ip -n "$(netns_name "$h")" link set eth0 up
                ip -n "$(netns_name "$h")" link set lo up
        done
}
netns_down() {
        local h
        for h in "${NETNS_HOSTS[@]}"; do ip netns del "$(netns_name "$h")" 2>/dev/null; done
        [ -z "$NETNS_BRIDGE" ] || ip link del "$NETNS_BRIDGE" 2>/dev/null
        return 0
}

# reason_is ID REASON [TIMEOUT_S]: poll until the pending job's reason is REASON (20 s by default).
reason_is() {
        local end=$((SECONDS + ${3:-20}))
        while ((SECONDS <= end)); do
                [ "$(job_field "$1" reason)" = "$2" ] && return 0
                sleep 0.1
        done
        fail "job $1's reason is '$(job_field "$1" reason)', not '$2'"
}

# children_named PID COMM: the pids of PID's children whose name (comm) is COMM.
children_named() {
        local c
        for c in $(pgrep -P "$1" || true); do
                [ "$(cat "/proc/$c/comm" 2>/dev/null)" = "$2" ] && echo "$c"
        done
        return 0
}
# standby_of AGENT_PID: the pid of the agent's standby shepherd (agent/shepherd.h), or nothing.
standby_of() { children_named "$1" colony-standby; }
# forker_of AGENT_PID: the pid of the agent's fork server (agent/forkserver.h), or nothing.
forker_of() { children_named "$1" colony-forker; }
# standby_procs AGENT_PID: the agent's standby and the child it started ahead of its job, if
# any (standby_ahead_run in agent/shepherd.c: the standby waits for that child's exec).
standby_procs() {
        local s
        for s in $(standby_of "$1"); do
                echo "$s"
                pgrep -P "$s" || true
        done
}
# wait_standby AGENT_PID [NOT_PID]: until the agent has a standby other than NOT_PID, waiting
# for its request (asleep reading its pipe, in pipe_read, since Linux 6.x anon_pipe_read: it has
# said it is ready, and the agent hands it the next launch; where it started a child ahead, the
# standby waits for that child, and the child, in its spare cgroup, reads the pipe); the
# standby's pid.
wait_standby() {
        local s p end=$((SECONDS + 30))
        while ((SECONDS <= end)); do
                s=$(standby_of "$1")
                if [ -n "$s" ] && [ "$s" != "${2:-}" ]; then
                        p=$(pgrep -P "$s" || echo "$s")
                        [[ "$(cat "/proc/$p/wchan" 2>/dev/null)" == *pipe_read ]] && { echo "$s"; return 0; }
                fi
                sleep 0.05
        done
        fail "agent $1 has no standby shepherd (besides ${2:-none}) waiting for a request after 30 s"
}

# strace_attach PID OUT STRACE_ARGS...: strace PID (and, with -f among the arguments, what it
# forks) into OUT, returning once it is attached; its pid in STRACE_PID, ended by teardown.
STRACE_PID=
strace_attach() {
        local pid=$1 out=$2 i c more=()
        shift 2
        # With the agent's standby shepherd and its child, forked before strace came (-f follows
        # later forks), and its fork server, which forks the later shepherds
        # (agent/forkserver.h).
        for c in $(standby_procs "$pid") $(forker_of "$pid"); do more+=(-p "$c"); done
        strace "$@" -o "$out" -p "$pid" "${more[@]}" &
        STRACE_PID=$!
        STARTED_PIDS+=("$STRACE_PID")
        for ((i = 0; i < 300; i++)); do
                [ "$(awk '/^TracerPid:/ { print $2 }' "/proc/$pid/status")" = "$STRACE_PID" ] && return 0
                sleep 0.1
        done
        fail "strace did not attach to $pid"
}

# now: the time, in seconds with nanoseconds, for notes and order checks.
now() { date +%s.%N; }
# wait_for COND_CMD WHAT [S]: poll until COND_CMD succeeds, failing after S seconds (60).
wait_for() {
        local end=$((SECONDS + ${3:-60}))
        until eval "$1"; do ((SECONDS <= end)) || fail "$2 not within ${3:-60}s"; sleep 0.05; done
}
