#!/usr/bin/env bash
# What one job, user or local cluster can see of another: each job has a session keyring of its
# own and the submitter's umask; colony up's files are its owner's but the socket; two clusters
# on one host keep to their own cgroups, and an agent holds its cgroup subtree alone; colony up
# on a cluster whose controller or agent was killed starts them again and keeps the jobs.
. "$(dirname "$0")/lib.sh"
POKE="$COLONY_BIN/keyring-poke"
as_user() { local u=$1; shift; setpriv --reuid "$u" --regid "$u" --clear-groups -- "$@"; }
# field NAME LINE: the value of NAME= in keyring-poke's line.
field() { sed -n "s/.*\\b$1=\\([0-9]*\\).*/\\1/p" <<<"$2"; }
two="$DIR/two" three="$DIR/three" four="$DIR/four"
# The second and third clusters are stopped too, whatever happens.
trap 'rc=$?; set +e; for d in "$two" "$three" "$four"; do colony down --dir "$d" >/dev/null 2>&1; done; (exit $rc); teardown' EXIT

# The agents in a session keyring of their own, as under systemd or after a login: a job without
# a keyring of its own would share it with every other job.
# Started with a soft open files limit below the hard one, as a login or systemd gives.
(ulimit -Sn 1000 && ulimit -Hn 4096 && exec "$POKE" session "$COLONY_BIN/colony" up --dir "$DIR" \
        --name-prefix "$PREFIX" --agent-cpus 2 --agent-mem 1G --agent-timeout-ms 60000 >/dev/null)
work="$DIR/work"; mkdir -m 1777 "$work"

# ---- keyrings: nobody plants a key, daemon's later job must not find it
key="colony-isolation-$$"
a=$(cd "$work" && as_user 65534 "$COLONY_BIN/colony" submit --output "$work/add.out" -- "$POKE" add "$key")
colony wait "$a" >/dev/null || fail "key job $a: $(job_field "$a" state) $(job_field "$a" error)"
added=$(cat "$work/add.out")
b=$(cd "$work" && as_user 1 "$COLONY_BIN/colony" submit --output "$work/show.out" -- "$POKE" show "$key")
colony wait "$b" >/dev/null || fail "key job $b: $(job_field "$b" state) $(job_field "$b" error)"
shown=$(cat "$work/show.out")
note "nobody's job: $added; daemon's job: $shown"
[ "$(field key "$added")" != 0 ] || fail "nobody's job could not add its key: $added"
[ "$(field owner "$added")" = 65534 ] || fail "nobody's job ran in a session keyring of uid $(field owner "$added")"
[ "$(field owner "$shown")" = 1 ] || fail "daemon's job ran in a session keyring of uid $(field owner "$shown")"
[ "$(field session "$added")" != "$(field session "$shown")" ] || fail "two users' jobs shared session keyring $(field session "$added")"
[ "$(field key "$shown")" = 0 ] || fail "daemon's job found nobody's key $(field key "$shown")"

# ---- umask: the submitter's, for the output file and what the job makes; 022 for a client
# that sends none
for mask in 077 022; do
        m=$(cd "$work" && umask $mask && as_user 65534 "$COLONY_BIN/colony" submit --output "$work/u$mask.out" \
                -- /bin/sh -c "touch f$mask && mkdir d$mask")
        colony wait "$m" >/dev/null || fail "umask job $m: $(job_field "$m" state) $(job_field "$m" error)"
        [ "$(job_field "$m" umask)" = $((8#$mask)) ] || fail "job $m's record has umask $(job_field "$m" umask)"
        modes=$(stat -c %a "$work/u$mask.out" "$work/f$mask" "$work/d$mask" | tr '\n' ' ')
        want=$([ $mask = 077 ] && echo "600 600 700 " || echo "644 644 755 ")
        [ "$modes" = "$want" ] || fail "umask $mask: output, file, directory are $modes, want $want"
        note "umask $mask: output, file, directory $modes"
done
reply=$("$COLONY_BIN/proto-poke" "$COLONY_SOCKET" json \
        "{\"v\":1,\"type\":\"submit\",\"argv\":[\"/bin/true\"],\"cwd\":\"$work\",\"stdout_path\":\"$work/old.out\",\"mcpu\":100,\"mem\":16777216}")
old=$(jq -r '.id' <<<"$reply")
colony wait "$old" >/dev/null || fail "old client's job $old: $(job_field "$old" state)"
[ "$(stat -c %a "$work/old.out")" = 644 ] || fail "a submit without umask made its output $(stat -c %a "$work/old.out")"

# ---- open files: the agent takes the hard limit for its descriptors, its jobs get the soft
# one it was started with
n=$(colony submit --output "$work/nofile.out" -- /bin/sh -c 'ulimit -Sn; ulimit -Hn')
colony wait "$n" >/dev/null || fail "nofile job $n: $(job_field "$n" state) $(job_field "$n" error)"
agent_soft=$(awk '/^Max open files/ { print $4 }' "/proc/$(agent_pid "${PREFIX}1")/limits")
note "agent's soft limit $agent_soft; the job's soft and hard: $(tr '\n' ' ' <"$work/nofile.out")"
[ "$agent_soft" = 4096 ] || fail "the agent kept a soft open files limit of $agent_soft"
[ "$(tr '\n' ' ' <"$work/nofile.out")" = "1000 4096 " ] || fail "the job's open files limits: $(cat "$work/nofile.out")"

# ---- colony up's directory: the socket for everyone, nothing else
colony up --dir "$two" --agent-cpus 1 --agent-mem 512M >/dev/null
first=$(cd "$work" && COLONY_SOCKET="$two/controller.sock" colony submit -- /bin/true) # the database has its log now
COLONY_SOCKET="$two/controller.sock" colony wait "$first" >/dev/null || fail "job $first on $two did not complete"
for f in "$two" "$two"/controller.db "$two"/controller.db-wal "$two"/secret "$two"/controller.log "$two"/controller.sock; do
        note "$(stat -c '%A %n' "$f")"
done
[ "$(stat -c %a "$two")" = 711 ] || fail "colony up made $two $(stat -c %a "$two")"
for f in controller.db controller.db-wal controller.db-shm secret controller.log controller.port; do
        [ ! -e "$two/$f" ] || [ "$(stat -c %a "$two/$f")" = 600 ] || fail "$two/$f is $(stat -c %a "$two/$f")"
done
[ "$(stat -c %a "$two/controller.sock")" = 666 ] || fail "the socket is $(stat -c %a "$two/controller.sock")"
as_user 65534 ls "$two" >/dev/null 2>&1 && fail "nobody can list $two"
as_user 65534 cat "$two/controller.db" >/dev/null 2>&1 && fail "nobody can read the database"
t=$(cd "$work" && COLONY_SOCKET="$two/controller.sock" as_user 65534 "$COLONY_BIN/colony" submit -- /bin/true) ||
        fail "nobody cannot submit through $two's socket"
COLONY_SOCKET="$two/controller.sock" colony wait "$t" >/dev/null || fail "nobody's job $t on $two did not complete"

# ---- two clusters on one host, both named by default: stopping one leaves the other be
# The second on a host whose name is not set ("(none)", as in a bare VM), which no agent name
# may carry.
unshare --uts sh -c 'printf "(none)" >/proc/sys/kernel/hostname && exec "$1" up --dir "$2" --agent-cpus 1 --agent-mem 512M' - \
        "$COLONY_BIN/colony" "$three" >/dev/null || fail "a second cluster named by default did not start"
agent2=$(basename "$two"/agent-*.pid .pid); agent2=${agent2#agent-}
agent3=$(basename "$three"/agent-*.pid .pid); agent3=${agent3#agent-}
note "agents $agent2 and $agent3"
[[ $agent3 == none-* ]] || fail "on a host named (none), the agent was named $agent3"
[ "$agent2" != "$agent3" ] || fail "two clusters both named their agent $agent2"
long=$(cd "$work" && COLONY_SOCKET="$two/controller.sock" colony submit --cpus 0.5 --mem 64M -- "$COLONY_BIN/colony-stress" sleep 300)
COLONY_SOCKET="$two/controller.sock" wait_state "$long" running
colony down --dir "$three" >/dev/null
[ -z "$(find /sys/fs/cgroup -maxdepth 6 -type d \( -name "colony-$agent3" -o -name "colony-*-$agent3.scope" \) 2>/dev/null)" ] ||
        fail "$agent3's cgroups stayed"
COLONY_SOCKET="$two/controller.sock" wait_state "$long" running 1
after=$(cd "$work" && COLONY_SOCKET="$two/controller.sock" colony submit --cpus 0.5 --mem 64M -- /bin/true)
COLONY_SOCKET="$two/controller.sock" colony wait "$after" >/dev/null ||
        fail "after the other cluster stopped, job $after: $(COLONY_SOCKET="$two/controller.sock" job_field "$after" state)"

# ---- one agent per subtree: a cluster naming its agent as another's refuses, and leaves it be.
# In a login session each cluster's agents run in scopes of their own, named by its directory:
# there two clusters' agents of one name have a subtree each, and both run.
scope=$(agent_scope "${PREFIX}1")
if [ -n "$scope" ]; then
        colony up --dir "$four" --name-prefix "${agent2%1}" --agent-cpus 1 --agent-mem 512M >/dev/null ||
                fail "a second $agent2, of another cluster, did not start in a scope of its own"
        in2=$(cut -d: -f3 "/proc/$(cat "$two/agent-$agent2.pid")/cgroup")
        in4=$(cut -d: -f3 "/proc/$(cat "$four/agent-$agent2.pid")/cgroup")
        [ "$in2" != "$in4" ] || fail "two clusters' agents $agent2 share $in2"
        note "second $agent2, of another cluster: in $in4, beside $in2"
        colony down --dir "$four" >/dev/null
elif out=$(colony up --dir "$four" --name-prefix "${agent2%1}" --agent-cpus 1 --agent-mem 512M 2>&1); then
        fail "a second agent $agent2 started"
else
        note "second $agent2: $(grep -m1 'held by' <<<"$out")"
        grep -q "cgroup .*colony-$agent2 is held by another colony-agent" <<<"$out" || fail "no reason given: $out"
fi
# A second agent of the same name and cluster (in a login session: in the same scope, as the
# next colony up would start it) refuses.
out=$(timeout 30 "$COLONY_BIN/colony-agent" --name "${PREFIX}1" --controller 127.0.0.1:1 --secret-file "$DIR/secret" \
        ${scope:+--scope "$scope"} 2>&1) && fail "a second agent ${PREFIX}1 ran"
grep -q "held by another colony-agent" <<<"$out" || fail "the second ${PREFIX}1 gave no reason: $out"
COLONY_SOCKET="$two/controller.sock" wait_state "$long" running 1
colony down --dir "$two" >/dev/null
[ -z "$(find /sys/fs/cgroup -maxdepth 6 -type d \( -name "colony-$agent2" -o -name "colony-*-$agent2.scope" \) 2>/dev/null)" ] ||
        fail "$agent2's cgroups stayed"

# ---- colony up brings back a killed controller, then a killed agent, with the job running
j=$(cd "$work" && colony submit -- "$COLONY_BIN/colony-stress" sleep 300)
wait_state "$j" running
procs=$(job_procs "${PREFIX}1" "$j")
kill_wait "$(cat "$DIR/controller.pid")"
cluster_up --agent-cpus 2 --agent-mem 1G --agent-timeout-ms 60000 || fail "colony up after the controller was killed"
wait_state "$j" running 1
for p in $procs; do alive "$p" || fail "job $j's process $p ended with the controller"; done
q=$(cd "$work" && colony submit -- /bin/true)
colony wait "$q" >/dev/null || fail "job $q after the controller came back: $(job_field "$q" state)"
note "the controller came back, job $j runs on"
kill_wait "$(agent_pid "${PREFIX}1")"
# An up whose new agent cannot start (here: something else holds its subtree) leaves the dead
# one's jobs running and its pid file, for the next up to adopt or a down to end. The stand-in
# waits for the lock: a single try failed once, in a CI beside a heavy perf record on this
# 2-CPU host (what still held it then is not known).
bash -c 'exec 9<"$1" && flock -w 60 9 && : >"$2" && exec sleep 300' - "$(agent_subtree memory "${PREFIX}1")" "$DIR/held" &
STARTED_PIDS+=($!)
# Polled, not slept on: a busy guest took longer than half a second to take the lock.
for ((i = 0; i < 600; i++)); do [ -e "$DIR/held" ] && break; sleep 0.1; done
[ -e "$DIR/held" ] || fail "the stand-in never took the subtree's lock"
if out=$(cluster_up --agent-cpus 2 --agent-mem 1G --agent-timeout-ms 60000 2>&1); then
        fail "colony up started an agent on a subtree held by another process"
fi
note "up with the subtree held: $(head -n 1 <<<"$out")"
for p in $procs; do alive "$p" || fail "job $j's process $p ended with the failed up"; done
[ -f "$DIR/agent-${PREFIX}1.pid" ] || fail "the failed up removed ${PREFIX}1's pid file: a down would not end its jobs"
kill "${STARTED_PIDS[-1]}"
wait "${STARTED_PIDS[-1]}" 2>/dev/null || true
cluster_up --agent-cpus 2 --agent-mem 1G --agent-timeout-ms 60000 || fail "colony up after the agent was killed"
wait_state "$j" running 1
for p in $procs; do alive "$p" || fail "job $j's process $p ended with the agent"; done
colony cancel "$j" >/dev/null
wait_state "$j" cancelled
q=$(cd "$work" && colony submit -- /bin/true)
colony wait "$q" >/dev/null || fail "job $q after the agent came back: $(job_field "$q" state)"
note "the agent came back, adopted job $j and cancelled it"
echo "PASS"
