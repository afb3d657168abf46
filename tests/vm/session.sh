#!/usr/bin/env bash
# session.sh BUILD_DIR - run inside a guest booted with systemd as PID 1 (VM_SYSTEMD=1
# run-in-vm.sh): the README's first commands from a root login session, as on a stock Debian 12
# host (unified hierarchy only, the shell in user.slice/user-0.slice/session-N.scope, which
# delegates nothing). The guest runs D-Bus and systemd-logind (VM_LOGIND=1), and root logs in
# through PAM on a pseudo-terminal (`script` + `runuser -l`: pam_systemd asks logind for the
# session, as login(1) on a getty or sshd does), so the shell is in a real logind session of
# class user and type tty. Checks, from there, with the build's colony:
#  - `colony demo` runs its four jobs with their limits (the hog gets at most half a core, the
#    256M job is OOM-killed under its 64M limit), each agent in its own transient scope;
#  - `colony up --agents 2` starts both agents in delegated transient scopes (trusted.delegate),
#    and a job runs with its limits in the agent's subtree there;
#  - after one agent was SIGKILLed with a job running, `colony up` starts a new one that joins
#    the dead agent's scope and adopts the job, still running;
#  - `colony down` ends that job and leaves no colony unit and no colony cgroup.
# Waits poll with generous bounds; nothing here depends on how fast the guest is.
set -euo pipefail
build=${1:?usage: session.sh BUILD_DIR}
CTL=none AGENT='colony-*.scope' # for units-lib's journal on failure
. "$(dirname "$0")/units-lib.sh"
colony=$build/bin/colony stress=$build/bin/colony-stress

# Without systemd (the plain guest, colony in the root cgroup): the same from a child cgroup
# that is not delegated, where only a scope of its own would do and nothing can make one.
if [ "$(cat /proc/1/comm)" != systemd ]; then
        sess=/sys/fs/cgroup/session-c1
        mkdir "$sess"
        trap 'rmdir "$sess"' EXIT
        dir=$(mktemp -d /tmp/colony-session-XXXXXX)
        set +e
        out=$(bash -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$sess" "$colony" up --dir "$dir" --agents 1 --name-prefix s 2>&1)
        rc=$?
        set -e
        echo "$out" | head -n 3
        [ "$rc" != 0 ] || fail "colony up succeeded in an undelegated cgroup without systemd"
        head -n 1 <<<"$out" | grep -q "systemd is not PID 1 to make one: start colony from the root cgroup" ||
                fail "colony up's error does not say what to do"
        [ -z "$(colony_cgroups)" ] || fail "cgroups left behind: $(colony_cgroups | tr '\n' ' ')"
        [ -z "$(cat "$sess/cgroup.procs")" ] || fail "processes left in $sess: $(cat "$sess/cgroup.procs")"
        rm -rf "$dir"
        note "no systemd: colony up refused in one line, nothing left"
        echo PASS
        exit 0
fi

if [ "${2:-}" != --in-session ]; then
        note "test unit in $(cut -d: -f3 /proc/self/cgroup)"
        session_run "$0" "$build" --in-session
        exit 0
fi

# --- in the session ---
in_login_session
work=$(mktemp -d /tmp/colony-session-XXXXXX)
cd "$work"

# --- colony demo ---
rc=0
"$colony" demo --json >demo.json 2>demo.err || rc=$?
[ "$rc" = 0 ] || { cat demo.err; fail "colony demo: exit $rc"; }
jq -e '.ok == true and (.jobs | length) == 4' demo.json >/dev/null || fail "demo: $(cat demo.json demo.err)"
state() { jq -r --arg n "$1" '.jobs[] | select(.name == $n) | .state' demo.json; }
for j in cpu-half:completed mem-fits:completed mem-over:oom-killed queued:completed; do
        [ "$(state "${j%%:*}")" = "${j#*:}" ] || fail "demo job ${j%%:*} is $(state "${j%%:*}"), want ${j#*:}"
done
jq -e '.jobs[] | select(.name == "mem-over") | .oom_kills >= 1' demo.json >/dev/null || fail "mem-over: no OOM kill counted"
# Half a core: at most 0.7 of the hog's wall time on the CPU, a ratio within this run.
share=$(jq -r '.jobs[] | select(.name == "cpu-half") | .cpu_usec / (.end_usec - .start_usec)' demo.json)
awk -v s="$share" 'BEGIN { exit !(s > 0.1 && s <= 0.7) }' || fail "cpu-half got $share of a core, want 0.5"
scopes=$(journalctl --no-pager -o cat -u 'colony-*.scope' | grep -c '^Started colony-.*\.scope - colony agent demo' || true)
[ "$scopes" -ge 1 ] || fail "the demo's agent did not run in a transient scope: $(journalctl --no-pager -o cat -u 'colony-*.scope' | tail -n 5)"
[ -z "$(colony_units)" ] || fail "the demo left units: $(colony_units | tr '\n' ' ')"
note "colony demo: 4 jobs as expected (cpu-half got $share of a core, mem-over OOM-killed), agent in a scope, no unit left"

# --- colony up --agents 2, a job, an agent crash, colony down ---
dir=$work/lab
"$colony" up --dir "$dir" --agents 2 --name-prefix s || fail "colony up"
export COLONY_SOCKET=$dir/controller.sock
for name in s1 s2; do
        pid=$(cat "$dir/agent-$name.pid")
        cg=$(cut -d: -f3 /proc/"$pid"/cgroup)
        [[ $cg == /system.slice/colony-*-$name.scope/colony-$name/agent ]] || fail "agent $name (pid $pid) runs in $cg"
        unit=${cg#/system.slice/} unit=${unit%%/*}
        [ "$(systemctl show -P ActiveState "$unit")" = active ] || fail "$unit is not active"
        [ "$(getfattr --only-values -n trusted.delegate "/sys/fs/cgroup/system.slice/$unit")" = 1 ] ||
                fail "$unit is not delegated"
        note "agent $name: pid $pid in $cg"
done
[ "$(colony_units | wc -l)" = 2 ] || fail "units: $(colony_units | tr '\n' ' ')"

id=$("$colony" submit --name held --cpus 0.5 --mem 64M -- "$stress" sleep 600) || fail "colony submit"
running() { [ "$("$colony" show --json "$id" | jq -r '.job.state // .state')" = running ]; }
poll running || fail "job $id did not start"
node=$("$colony" show --json "$id" | jq -r '.job.node // .node')
jcg=$(find /sys/fs/cgroup/system.slice -path "*colony-*-$node.scope/colony-$node/job-$id" -type d)
has_procs() { [ -n "$(cat "$jcg/cgroup.procs" 2>/dev/null)" ]; }
poll has_procs || fail "no process in the job's cgroup '$jcg'"
jpid=$(head -n1 "$jcg/cgroup.procs")
[ "$(cat "$jcg/cpu.max")" = "50000 100000" ] && [ "$(cat "$jcg/memory.max")" = $((64 << 20)) ] ||
        fail "job $id: cpu.max '$(cat "$jcg/cpu.max")', memory.max '$(cat "$jcg/memory.max")'"
note "job $id: pid $jpid in ${jcg#/sys/fs/cgroup}, cpu.max $(cat "$jcg/cpu.max"), memory.max $(cat "$jcg/memory.max")"
done_id=$("$colony" submit --name quick -- "$stress" sleep 0) || fail "colony submit"
"$colony" wait --timeout 300 "$done_id" >/dev/null || fail "job $done_id did not complete"

# The job's agent dies without cleaning up: its scope still holds the job. `colony up` starts
# a new agent, which joins that scope, in the dead agent's leaf, and adopts the job.
unit=$(cut -d: -f3 /proc/"$(cat "$dir/agent-$node.pid")"/cgroup) unit=${unit#/system.slice/} unit=${unit%%/*}
kill -9 "$(cat "$dir/agent-$node.pid")"
"$colony" up --dir "$dir" >/dev/null || fail "colony up after agent $node died: $(tail -n 5 "$dir/$node.log")"
cg=$(cut -d: -f3 /proc/"$(cat "$dir/agent-$node.pid")"/cgroup)
[ "$cg" = "/system.slice/$unit/colony-$node/agent" ] || fail "the new agent $node runs in $cg, not in $unit"
[ "$(colony_units | wc -l)" = 2 ] || fail "colony up added agents to the running cluster: $(colony_units | tr '\n' ' ')"
adopted() { grep -q "job=$id .*re-adopted" "$dir/$node.log"; }
poll adopted || fail "the new agent did not adopt job $id: $(tail -n 5 "$dir/$node.log")"
node_up() { [ "$("$colony" nodes --json | jq -r --arg n "$node" '.nodes[] | select(.name == $n) | .state')" = up ]; }
poll node_up || fail "node $node is not up again"
[ -e /proc/"$jpid" ] && running || fail "job $id (pid $jpid) did not survive its agent's death"
note "agent $node SIGKILLed; colony up's new agent joined $unit and adopted job $id, still running"

# colony down ends the job and leaves nothing.
"$colony" down --dir "$dir" || fail "colony down"
gone() { [ ! -e /proc/"$1" ] || grep -q '^State:[[:space:]]*Z' /proc/"$1"/status; }
gone "$jpid" || fail "job process $jpid survived colony down"
[ -z "$(colony_units)" ] || fail "colony down left units: $(colony_units | tr '\n' ' ')"
[ -z "$(colony_cgroups)" ] || fail "colony down left cgroups: $(colony_cgroups | tr '\n' ' ')"
note "colony down ended job $id, no unit or cgroup left"
cd /
rm -rf "$work"
