#!/usr/bin/env bash
# delegation.sh TEST_CGROUP COLONY_STRESS - run inside the v2 guest (run-in-vm.sh): the cgroup
# backend in a cgroup that systemd would have delegated (trusted.delegate=1: the agent enables
# the controllers itself) and in one that was not (the agent refuses and writes nothing there).
set -euo pipefail
test_cgroup=$1 stress=$2
root=/sys/fs/cgroup
fail() { echo "FAIL: $*"; exit 1; }

# run_alone CGROUP CMD...: CMD as the only task of CGROUP (a new child of the root).
run_alone() {
        local cg=$root/$1; shift
        bash -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg" "$@"
}
cleanup() { rmdir "$root/plain" "$root/delegated" 2>/dev/null || true; }
trap cleanup EXIT

mkdir "$root/plain" "$root/delegated"
setfattr -n trusted.delegate -v 1 "$root/delegated"

set +e
out=$(run_alone plain env CK_FORK=no "$test_cgroup" "$stress" 2>&1)
rc=$?
set -e
echo "$out" | tail -n 3
[ "$rc" = 77 ] || fail "undelegated cgroup: test_cgroup exited $rc, expected a refusal (77)"
echo "$out" | grep -q "is not delegated" || fail "undelegated cgroup: no clear reason given"
[ -z "$(cat "$root/plain/cgroup.subtree_control")" ] || fail "the agent wrote subtree_control of a cgroup not delegated to it"
echo "ok: refused in an undelegated cgroup, nothing written there"

run_alone delegated env CK_FORK=no "$test_cgroup" "$stress" || fail "delegated cgroup: test_cgroup failed"
[ -z "$(cat "$root/delegated/cgroup.subtree_control")" ] || fail "the agent left controllers enabled in its delegated cgroup"
[ "$(ls -d "$root"/delegated/*/ 2>/dev/null | wc -l)" = 0 ] || fail "cgroups left in the delegated cgroup"
echo "ok: the backend works in a delegated cgroup and undoes what it enabled"
echo PASS
