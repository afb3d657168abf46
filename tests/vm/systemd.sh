#!/usr/bin/env bash
# systemd.sh BUILD_DIR - run inside a guest booted with systemd as PID 1 (VM_SYSTEMD=1
# run-in-vm.sh): install the build (`cmake --install`: binaries, units, example configs) into the
# guest's throw-away root, start colony-controller.service and colony-agent.service with
# systemctl (over systemd's private socket: the guest has no D-Bus daemon), and check
#  - both are Type=notify units that reached READY=1, show STATUS= text and send WATCHDOG=1;
#  - both log to the journal natively (their own library's sink), not through their stderr;
#  - the agent lives in its delegated unit cgroup (trusted.delegate=1), in the leaf
#    colony-<name>/agent, and runs a job as its user in colony-<name>/job-<id> with the limits;
#  - `systemctl stop` (KillMode=mixed: the agent alone is signalled) ends the running job
#    as cancelled and leaves no cgroup; the agent starts again in the same unit;
#  - after a SIGKILL of the agent, systemd kills its job and restarts it; the next agent reports
#    the job lost, and runs jobs again;
#  - both stop cleanly (exit 0).
# Waits poll with generous bounds; nothing here depends on how fast the guest is.
set -euo pipefail
build=${1:?usage: systemd.sh BUILD_DIR}
SKIP=77
NAME=vmnode
CTL=colony-controller.service
AGENT=colony-agent.service

. "$(dirname "$0")/units-lib.sh"

need_systemd
command -v cmake >/dev/null || { echo "SKIP: cmake missing in the guest"; exit $SKIP; }
note "test unit in $(cut -d: -f3 /proc/self/cgroup)"

# --- install, as a package would, into the guest's root (an overlay on a tmpfs) ---
note "booted"
cmake --install "$build" >/dev/null || fail "cmake --install $build"
installed() { grep -m1 -- "/$1\$" "$build/install_manifest.txt"; }
ctl_unit=$(installed $CTL) agent_unit=$(installed $AGENT) colony=$(installed bin/colony) || fail "nothing installed?"
stress=$(installed colony-stress) conf=$(installed colony/agent.conf) || fail "colony-stress or agent.conf not installed"
grep -q -- "--config $conf\( \|\$\)" "$agent_unit" || fail "$agent_unit does not read $conf"
confdir=$(dirname "$conf")
[ "$(command -v colony)" = "$colony" ] || fail "colony installed as $colony, not on PATH"
note "installed $ctl_unit $agent_unit $conf"

site_config "$confdir" $NAME
# A reconnect window far longer than the agent's RestartSec=5s: after the crash below, the next
# agent, not the controller's timeout, tells that the job is lost (the default 5 s made that a
# race, and the test passes either way only since both say `lost`). The jobs of the killed agent
# wait for node_lost_timeout_ms, 300 s by default; 60 s here bounds the hello's window too.
printf 'agent_timeout_ms = 60000\n' >>"$confdir/controller.conf"
# Pings every WatchdogSec/2 or so: a shorter interval lets this test see several.
for u in $CTL $AGENT; do
        mkdir -p "/etc/systemd/system/$u.d"
        printf '[Service]\nWatchdogSec=20s\n' >"/etc/systemd/system/$u.d/test.conf"
done
systemctl daemon-reload
for u in $CTL $AGENT; do
        [ "$(prop $u LoadState)" = loaded ] || fail "$u not found after install (unit dir not searched by systemd?)"
done
note "units loaded"

# --- start: systemctl returns once each unit sent READY=1 ---
start_units
for u in $CTL $AGENT; do
        [ "$(prop $u Type)" = notify ] && [ "$(prop $u NotifyAccess)" = main ] || fail "$u: not Type=notify, NotifyAccess=main"
done
note "$CTL: $(prop $CTL StatusText)"
note "$AGENT: $(prop $AGENT StatusText)"
ctl_pid=$(prop $CTL MainPID) agent_pid=$(prop $AGENT MainPID)
native_log() { [ -n "$(journalctl --no-pager -q _TRANSPORT=journal SYSLOG_IDENTIFIER="$1" _PID="$2" | head -n 1)" ]; }
poll native_log colony-controller "$ctl_pid" || fail "no native journal entry of colony-controller"
poll native_log colony-agent "$agent_pid" || fail "no native journal entry of colony-agent"
note "both log to the journal: $(journalctl --no-pager -q -o cat _TRANSPORT=journal _PID="$agent_pid" | head -n 1)"
declare -A wd0
for u in $CTL $AGENT; do wd0[$u]=$(prop $u WatchdogTimestampMonotonic); done

# --- the agent in its delegated cgroup ---
unit_cg=$(prop $AGENT ControlGroup)
[ "$unit_cg" = /system.slice/$AGENT ] || fail "agent unit cgroup is $unit_cg"
ucg=/sys/fs/cgroup$unit_cg
[ "$(getfattr --only-values -n trusted.delegate "$ucg" 2>/dev/null)" = 1 ] || fail "$ucg is not marked trusted.delegate=1"
[ "$(cut -d: -f3 /proc/"$agent_pid"/cgroup)" = "$unit_cg/colony-$NAME/agent" ] ||
        fail "agent runs in $(cut -d: -f3 /proc/"$agent_pid"/cgroup), want $unit_cg/colony-$NAME/agent"
for c in cpu memory pids; do
        grep -qw $c "$ucg/cgroup.subtree_control" || fail "agent did not enable $c in $ucg/cgroup.subtree_control"
done
[ -z "$(cat "$ucg/cgroup.procs")" ] || fail "processes left in the inner node $ucg"
note "agent pid $agent_pid in $unit_cg/colony-$NAME/agent; $unit_cg delegates: $(cat "$ucg/cgroup.subtree_control")"

# --- a job of an ordinary user in the delegated subtree ---
work=$(mktemp -d /tmp/colony-systemd-XXXXXX)
chmod 1777 "$work"
cd "$work"
gone() { [ ! -e /proc/"$1" ] || grep -q '^State:[[:space:]]*Z' /proc/"$1"/status; } # a zombie counts

id=$(as_nobody colony submit --name held --cpus 0.5 --mem 64M -- "$stress" sleep 600) || fail "colony submit"
poll in_state "$id" running || fail "job $id is $(job_state "$id"), not running"
jcg=$ucg/colony-$NAME/job-$id
has_procs() { [ -n "$(cat "$jcg/cgroup.procs" 2>/dev/null)" ]; }
poll has_procs || fail "no process in $jcg"
jpid=$(head -n1 "$jcg/cgroup.procs")
[ "$(cut -d: -f3 /proc/"$jpid"/cgroup)" = "$unit_cg/colony-$NAME/job-$id" ] ||
        fail "job process $jpid in $(cut -d: -f3 /proc/"$jpid"/cgroup)"
[ "$(awk '/^Uid:/ { print $2 }' /proc/"$jpid"/status)" = 65534 ] || fail "job process $jpid does not run as nobody"
[ "$(cat "$jcg/cpu.max")" = "50000 100000" ] || fail "cpu.max is '$(cat "$jcg/cpu.max")'"
[ "$(cat "$jcg/memory.max")" = $((64 << 20)) ] || fail "memory.max is '$(cat "$jcg/memory.max")'"
note "job $id: pid $jpid (uid 65534) in $unit_cg/colony-$NAME/job-$id, cpu.max $(cat "$jcg/cpu.max"), memory.max $(cat "$jcg/memory.max")"

done_id=$(as_nobody colony submit --name whoami --output "$work/id.out" -- "$stress" id) || fail "colony submit"
colony wait --timeout 300 "$done_id" >/dev/null || fail "job $done_id: $(job_state "$done_id")"
[ "$(cat "$work/id.out")" = "65534 65534" ] || fail "job $done_id printed '$(cat "$work/id.out")'"
note "job $done_id ran as nobody and completed; colony wait exited 0"

# --- WATCHDOG=1: systemd records each ping's time ---
pinged() { [ "$(prop "$1" WatchdogTimestampMonotonic)" != "$2" ]; }
for u in $CTL $AGENT; do
        [ "$(prop $u WatchdogUSec)" = 20s ] || fail "$u: WatchdogUSec=$(prop $u WatchdogUSec)"
        poll pinged $u "${wd0[$u]}" || fail "$u sent no WATCHDOG=1"
        t=$(prop $u WatchdogTimestampMonotonic)
        poll pinged $u "$t" || fail "$u stopped sending WATCHDOG=1"
done
[ "$(prop $CTL MainPID)/$(prop $AGENT MainPID)" = "$ctl_pid/$agent_pid" ] || fail "a daemon was restarted"
[ "$(prop $CTL NRestarts)/$(prop $AGENT NRestarts)" = 0/0 ] || fail "a daemon was restarted"
note "both daemons keep pinging the watchdog; no restart"

# --- stop the agent: it ends its job itself, reports it, and removes its cgroups ---
systemctl stop $AGENT || fail "systemctl stop $AGENT"
[ "$(prop $AGENT Result)" = success ] && [ "$(prop $AGENT ExecMainStatus)" = 0 ] ||
        fail "agent stop: Result=$(prop $AGENT Result) status $(prop $AGENT ExecMainStatus)"
poll gone "$jpid" || fail "job process $jpid survived the agent's stop"
[ ! -e "$ucg/colony-$NAME" ] || fail "$ucg/colony-$NAME left behind"
poll in_state "$id" cancelled || fail "job $id is $(job_state "$id") after the agent stopped, want cancelled"
note "systemctl stop $AGENT: job $id cancelled, no cgroup left"

# ... and it starts again in the same unit, and runs jobs.
systemctl start $AGENT || fail "second systemctl start $AGENT"
poll agent_connected || fail "agent status after restart: '$(prop $AGENT StatusText)'"
again=$(as_nobody colony submit --name again -- "$stress" sleep 0) || fail "colony submit"
colony wait --timeout 300 "$again" >/dev/null || fail "job $again after the restart: $(job_state "$again")"
note "agent started again; job $again completed"

# --- a crash: the agent SIGKILLed while a job runs. KillMode=mixed: systemd kills what it
# left, removes the unit's cgroup and restarts it (Restart=on-failure); the next agent finds the
# job's shepherd gone and reports the job lost. ---
crash=$(as_nobody colony submit --name crash -- "$stress" sleep 600) || fail "colony submit"
poll in_state "$crash" running || fail "job $crash is $(job_state "$crash"), not running"
jcg=$ucg/colony-$NAME/job-$crash
poll has_procs || fail "no process in $jcg"
jpid=$(head -n1 "$jcg/cgroup.procs") old_pid=$(prop $AGENT MainPID) old_restarts=$(prop $AGENT NRestarts)
kill -9 "$old_pid"
restarted() {
        [ "$(prop $AGENT NRestarts)" -gt "$old_restarts" ] && [ "$(prop $AGENT ActiveState)" = active ] &&
                [ "$(prop $AGENT MainPID)" != "$old_pid" ]
}
poll restarted || fail "agent not restarted after SIGKILL: $(prop $AGENT ActiveState), status $(prop $AGENT ExecMainStatus)"
poll agent_connected || fail "agent status after the crash: '$(prop $AGENT StatusText)'"
poll gone "$jpid" || fail "job process $jpid survived the agent's crash"
poll in_state "$crash" lost || fail "job $crash is $(job_state "$crash") after the crash, want lost"
why=$(colony show --json "$crash" | jq -r .job.error)
[[ $why == *"ended without recording it"* ]] || fail "job $crash lost, but not by the next agent's report: '$why'"
after=$(as_nobody colony submit --name after-crash -- "$stress" sleep 0) || fail "colony submit"
colony wait --timeout 300 "$after" >/dev/null || fail "job $after after the crash: $(job_state "$after")"
note "agent SIGKILLed: restarted by systemd (pid $(prop $AGENT MainPID)), job $crash killed and lost ($why), job $after completed"

systemctl stop $AGENT $CTL || fail "systemctl stop"
for u in $CTL $AGENT; do
        [ "$(prop $u Result)" = success ] && [ "$(prop $u ExecMainStatus)" = 0 ] ||
                fail "$u: Result=$(prop $u Result) status $(prop $u ExecMainStatus)"
done
[ ! -e "$ucg" ] || [ -z "$(ls -d "$ucg"/*/ 2>/dev/null)" ] || fail "cgroups left in $ucg"
[ ! -e /run/colony/controller.sock ] || fail "controller socket left behind"
cd /
rm -rf "$work"
echo PASS
