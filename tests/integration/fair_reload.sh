#!/usr/bin/env bash
# fair_reload.sh - the departments' caps, user lists and reloads, live: a user a department does
# not list is refused in one line; SIGHUP takes a new tree; a capped department never runs
# beyond its cap of the cluster, even with CPUs free; a broken file is refused with the error
# logged (and `colony reload` printing it) while the old tree stays; `colony reload` lifts the cap,
# and a new weight reaches the cgroup of a department whose jobs run on.
. "$(dirname "$0")/lib.sh"
as_nobody() { setpriv --reuid 65534 --regid 65534 --clear-groups -- "$@"; }

conf=$DIR/controller.conf
printf '[departments]\na = 1\n[department_users]\na = root\n' >"$conf"
cluster_up --agents 1 --agent-cpus 4 --agent-mem 512M --controller-config "$conf"
work="$DIR/work"
mkdir -m 1777 "$work"

if err=$(cd "$work" && as_nobody "$COLONY_BIN/colony" submit --group a -- /bin/true 2>&1); then
        fail "nobody submitted to a, whose list names root only"
fi
[[ $err == *"user nobody may not submit to 'a'"* ]] || fail "refusal: $err"
[ "$(wc -l <<<"$err")" = 1 ] || fail "the refusal is not one line: $err"
note "nobody to a -> $err"
if err=$(colony submit --group b -- /bin/true 2>&1); then fail "b accepted before it is configured"; fi

# dept JQ: the field of department b in `colony shares --json`.
dept_b() { colony shares --json | jq -r ".departments[] | select(.path == \"b\") | $1"; }

# SIGHUP: b appears, weight 2, capped at half the cluster, open to everyone.
printf '[departments]\na = 1\nb = 2\n[department_caps]\nb = 0.5\n[department_users]\na = root\n' >"$conf"
kill -HUP "$(cat "$DIR/controller.pid")"
for ((k = 0; k < 100; k++)); do [ "$(dept_b .weight)" = 2 ] && break; sleep 0.1; done
[ "$(dept_b .cap)" = 0.5 ] || fail "after SIGHUP, b is '$(dept_b .)'"
note "SIGHUP: b has weight $(dept_b .weight) and cap $(dept_b .cap)"

# Four one-CPU jobs of b on four CPUs: the cap holds it at two, and two CPUs stay free.
ids=()
for k in 1 2 3; do ids+=("$(colony submit --group b --cpus 1 --mem 16M -- "$COLONY_BIN/colony-stress" sleep 60)"); done
ids+=("$(cd "$work" && as_nobody "$COLONY_BIN/colony" submit --group b --cpus 1 --mem 16M -- "$COLONY_BIN/colony-stress" sleep 60)")
wait_state "${ids[0]}" running
wait_state "${ids[1]}" running
for k in 1 2 3 4 5; do # a few scheduling passes (every event and heartbeat) change nothing
        sleep 0.5
        [ "$(dept_b .running)" = 2 ] && [ "$(dept_b .pending)" = 2 ] || fail "b capped at 0.5 runs $(dept_b .running)"
done
[ "$(dept_b .held)" = true ] || fail "b's shares do not say it is held"
free=$(colony nodes --json | jq -r '.nodes[0].free_mcpu')
[ "$free" = 2000 ] || fail "the node has $free mCPU free, want 2000 left idle by the cap"
awk -v e="$(dept_b .entitled)" 'BEGIN { exit !(e <= 0.5) }' || fail "b is entitled to $(dept_b .entitled), above its cap"
note "b under cap 0.5: running 2, pending 2, 2 CPUs idle; $(colony shares --json | jq -r .next.why)"

# A broken file: SIGHUP logs why and keeps the tree; colony reload prints the error.
printf '[departments]\na = 1\nb = -2\n' >"$conf"
kill -HUP "$(cat "$DIR/controller.pid")"
for ((k = 0; k < 100; k++)); do grep -q "reload refused" "$DIR/controller.log" && break; sleep 0.1; done
line=$(grep "reload refused" "$DIR/controller.log") || fail "no refusal logged after SIGHUP with a broken file"
[[ $line == *"weight '-2'"* ]] || fail "the log does not say what is wrong: $line"
note "SIGHUP with a broken file, logged: ${line##*: reload}"
[ "$(dept_b .cap)" = 0.5 ] && [ "$(dept_b .weight)" = 2 ] || fail "the broken file changed b: $(dept_b .)"
if err=$(colony reload 2>&1); then fail "colony reload took a broken file"; fi
[[ $err == *"controller.conf:3: departments.b: weight '-2'"* ]] || fail "colony reload: $err"
note "colony reload -> $err"
if err=$(as_nobody "$COLONY_BIN/colony" reload 2>&1); then fail "nobody reloaded the controller"; fi
[ "$(dept_b .running)" = 2 ] || fail "the refused reload changed what runs"

# A good file without the cap: the held jobs start.
printf '[departments]\na = 1\nb = 2\n' >"$conf"
colony reload >/dev/null || fail "colony reload refused a good file"
for id in "${ids[@]}"; do wait_state "$id" running; done
note "reload without the cap: all 4 of b's jobs run"

# dept_weight DEPT: the kernel's CPU weight of the department's cgroup on the agent's host.
agent=${PREFIX}1
dept_weight() {
        if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then
                cat "$(agent_cgroup "" "$agent" "dept-$1")/cpu.weight"
        else
                cat "$(agent_cgroup cpu "$agent" "dept-$1")/cpu.shares"
        fi
}
if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then want2=200 want5=500; else want2=2048 want5=5120; fi
[ "$(dept_weight b)" = "$want2" ] || fail "b's cgroup weight is $(dept_weight b), want $want2"
# A new weight with no launch to carry it: the reload sends it to the agents. A launch sent
# before the reload carries the old weight, and its shepherd writes it when it makes the
# department's cgroup: after the reload's on a loaded host (CI saw b stay at 2048). strace
# holds that shepherd's first mkdir 2 s, past the reload; the agent gives the cgroup the
# reload's weight again once the launch is over. Only the first: on v1 a launch makes 14 (the
# department and the job in seven hierarchies), 28 s held in all against its 30 s deadline.
late=
if command -v strace >/dev/null; then
        colony cancel "${ids[3]}" >/dev/null
        wait_state "${ids[3]}" cancelled
        unset 'ids[3]' # ended: the last cancel takes the jobs that run
        strace_attach "$(agent_pid "$agent")" "$DIR/strace-mkdir.out" -f -qq -e trace=mkdir \
                -e inject=mkdir:delay_enter=2000000:when=1
        spid=$STRACE_PID
        late=$(colony submit --group b --cpus 1 --mem 16M -- "$COLONY_BIN/colony-stress" sleep 60)
        wait_state "$late" running # placed: its launch, with b = 2, is on its way
        ids+=("$late")
fi
printf '[departments]\na = 1\nb = 5\n' >"$conf"
colony reload >/dev/null || fail "colony reload refused b = 5"
if [ -n "$late" ]; then
        wait_started "$late" 60
        kill_wait "$spid"
fi
for ((k = 0; k < 50; k++)); do [ "$(dept_weight b)" = "$want5" ] && break; sleep 0.1; done
[ "$(dept_weight b)" = "$want5" ] || fail "after reload with b = 5, b's running cgroup has weight $(dept_weight b)"
[ -z "$late" ] || note "job $late launched with b = 2, its cgroup made after the reload to 5: b keeps $(dept_weight b)"
[ ! -d "$(agent_cgroup memory "$agent" dept-a)" ] || fail "the reload made a cgroup for a, which runs nothing here"
note "reload with b = 5: b's cgroup weight $want2 -> $(dept_weight b) while its jobs run; none made for a"
colony cancel "${ids[@]}" >/dev/null
echo "PASS"
