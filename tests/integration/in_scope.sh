#!/usr/bin/env bash
# in_scope.sh CMD... - run CMD, a test that builds an agent's cgroups below its own cgroup as the
# agent does (test_cgroup), where that can work. On cgroup v1 and in the v2 root cgroup: here.
# In any other v2 cgroup under systemd (a login session's scope delegates nothing; a delegated
# one holds ctest too): alone in a transient scope with Delegate=yes, as colony up starts its
# agents there (systemd-run --scope), and with CK_FORK=no: a forking Check runner would stay in
# that scope beside the test and keep it from handing controllers down. Without systemd, CMD
# runs here and says why it cannot (exit 77).
set -euo pipefail
own=$(awk -F: '$1 == "0" { print $3 }' /proc/self/cgroup)
if [ "$(stat -fc %T /sys/fs/cgroup)" != cgroup2fs ] || [ "$own" = / ] || [ "$(id -u)" != 0 ] ||
        [ "$(cat /proc/1/comm)" != systemd ]; then
        exec "$@"
fi
echo "# in a transient scope with Delegate=yes: $own delegates nothing to this test alone"
exec systemd-run --scope --quiet --collect -p Delegate=yes --unit "colony-test-$$.scope" -- env CK_FORK=no "$@"
