#!/usr/bin/env bash
# session-suite.sh BUILD_DIR CTEST_ARGS... - run inside a guest booted with systemd as PID 1
# and logind (VM_SYSTEMD=1 VM_LOGIND=1 run-in-vm.sh): the build's tests (`ctest CTEST_ARGS`)
# from a root login session, as `contrib/bootstrap.sh test` runs them on a stock Debian 12 host
# (unified hierarchy only, the shell in user.slice/user-0.slice/session-N.scope, which delegates
# nothing: colony up starts each agent in a transient scope of its own, Delegate=yes). Then no
# colony unit and no colony cgroup may be left.
set -euo pipefail
build=${1:?usage: session-suite.sh BUILD_DIR CTEST_ARGS...}
shift
CTL=none AGENT='colony-*.scope' # for units-lib's journal on failure
. "$(dirname "$0")/units-lib.sh"

if [ "${1:-}" != --in-session ]; then
        session_run "$0" "$build" --in-session "$@"
        exit 0
fi

# --- in the session ---
shift
in_login_session
exec ctest --test-dir "$build" --output-on-failure "$@"
