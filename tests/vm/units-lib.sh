# shellcheck shell=bash
# units-lib.sh - sourced by the guest scripts that drive colony's systemd units under systemd as
# PID 1 (systemd.sh, package-guest.sh) or log root in under it (session.sh, session-suite.sh).
# The caller sets CTL and AGENT (the unit names, for the journal on failure).

fail() {
        echo "FAIL: $*"
        journalctl --no-pager -o short-monotonic -u "$CTL" -u "$AGENT" 2>/dev/null | tail -n 80
        exit 1
}
note() { echo "# [$(cut -d' ' -f1 /proc/uptime)s] $*"; }
prop() { systemctl show -P "$2" "$1"; }

# poll CONDITION-COMMAND...: true once the command succeeds, false when it has not for 300 s
# (a bound on the wall clock, for failures only: far above what a TCG guest on a loaded host
# needs, and far below the guest's own time limit, so that a failure still prints its journal).
poll() {
        local deadline=$((SECONDS + 300))
        while ((SECONDS < deadline)); do
                "$@" && return 0
                sleep 0.1
        done
        "$@"
}

need_systemd() { # skip unless PID 1 is systemd on cgroup v2
        [ "$(cat /proc/1/comm)" = systemd ] || { echo "SKIP: PID 1 is not systemd"; exit 77; }
        [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] || fail "systemd did not mount cgroup v2"
}

# The secret in CONFDIR and this host's name and size in its agent.conf: the site's part.
site_config() { # site_config CONFDIR NAME
        (umask 077; head -c 32 /dev/urandom | base64 >"$1/secret")
        printf 'name = %s\ncpus = 2\nmem = 512M\n' "$2" >>"$1/agent.conf"
}

# Both units running, the agent connected and the controller seeing its node.
agent_connected() { prop "$AGENT" StatusText | grep -q '^connected to controller'; }
ctl_sees_node() { prop "$CTL" StatusText | grep -q ', 1 nodes$'; }
start_units() {
        local u
        systemctl start "$CTL" || fail "systemctl start $CTL"
        systemctl start "$AGENT" || fail "systemctl start $AGENT"
        for u in "$CTL" "$AGENT"; do
                [ "$(prop "$u" ActiveState)/$(prop "$u" SubState)" = active/running ] ||
                        fail "$u: $(prop "$u" ActiveState)/$(prop "$u" SubState) after start"
        done
        poll agent_connected || fail "agent status: '$(prop "$AGENT" StatusText)'"
        poll ctl_sees_node || fail "controller status: '$(prop "$CTL" StatusText)'"
}

# Jobs, as an ordinary user of the installed controller (a user's CLI defaults to a development
# cluster's socket).
export COLONY_SOCKET=/run/colony/controller.sock
as_nobody() { setpriv --reuid 65534 --regid 65534 --clear-groups -- "$@"; }
job_state() { colony show --json "$1" | jq -r '.job.state // .state'; }
in_state() { [ "$(job_state "$1")" = "$2" ]; }

# login_root CMD...: run CMD in a root login: PAM's session stack (pam_systemd) on a
# pseudo-terminal, which logind answers with a session scope, as for a getty or ssh login.
# Needs D-Bus and systemd-logind (VM_LOGIND=1). Returns CMD's status.
login_root() {
        systemctl is-active --quiet systemd-logind.service || fail "systemd-logind is not running (VM_LOGIND=1?)"
        script -qec "runuser -l root -c '$(printf '%q ' "$@")'" /dev/null </dev/null
}

# session_run CMD...: under systemd, with no colony unit or cgroup yet, run CMD in a root login
# (login_root); fail if it failed or left a colony unit or cgroup, else print PASS.
session_run() {
        need_systemd
        [ -z "$(colony_units)$(colony_cgroups)" ] || fail "colony units or cgroups before the test"
        login_root "$@" || fail "in the session: exit $?"
        [ -z "$(colony_units)" ] || fail "units left behind: $(colony_units | tr '\n' ' ')"
        [ -z "$(colony_cgroups)" ] || fail "cgroups left behind: $(colony_cgroups | tr '\n' ' ')"
        note "no colony unit and no colony cgroup left"
        echo PASS
}

# in_login_session: fail unless this shell is in logind's active tty session of root, in its
# session scope, which is not delegated (as on a stock Debian 12 host).
in_login_session() {
        local own sid login want
        own=$(cut -d: -f3 /proc/self/cgroup)
        [[ $own == /user.slice/user-0.slice/session-*.scope ]] || fail "the login shell is in $own, not a session of user-0.slice"
        sid=${own##*/session-} sid=${sid%.scope}
        login=$(loginctl show-session "$sid" -p Class -p Type -p State)
        for want in Class=user Type=tty State=active; do
                grep -qx "$want" <<<"$login" || fail "logind's session $sid: $(paste -sd' ' <<<"$login"), want $want"
        done
        note "logged in: logind session $sid (class user, type tty)"
        [ -z "$(getfattr --only-values -n trusted.delegate "/sys/fs/cgroup$own" 2>/dev/null)" ] ||
                fail "/sys/fs/cgroup$own is delegated: not a login session's scope"
        note "shell in $own, not delegated (controllers there: '$(cat "/sys/fs/cgroup$own/cgroup.controllers")')"
}

# What colony made: agents' scopes and cgroups (the test's own unit is colony-vm-test.service).
colony_units() { systemctl list-units --all --plain --no-legend 'colony-*.scope' | awk '{ print $1 }'; }
colony_cgroups() { find /sys/fs/cgroup -name 'colony-*' ! -name colony-vm-test.service -type d; }
