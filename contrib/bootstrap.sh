#!/usr/bin/env bash
# bootstrap.sh - the README's two commands, on a fresh Debian 12 machine as root.
#
#   contrib/bootstrap.sh demo   install what is missing, build, run the sample workload
#   contrib/bootstrap.sh test   install what is missing, build, run every test (the integration
#                               suite again in a cgroup v2 qemu guest, the unit tests again
#                               under ASan+UBSan, and each parser's fuzz target for a bounded
#                               time: tests/fuzz/README.md)
#   VM_SUITE=session contrib/bootstrap.sh test
#                               the same, and in the guest also the unit tests and the
#                               integration tests that make cgroups and restart agents from a
#                               root login session under systemd (vm_session_suite, label
#                               session: 9 minutes of both CPUs, 30 on a busy host, so not
#                               by default)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build="$top/build"
mode=${1:-}
vm_labels=vm
case ${VM_SUITE:-} in
"") ;;
session) vm_labels='vm|session' ;;
*) echo "bootstrap: VM_SUITE=${VM_SUITE}: unknown; the one extra guest suite is VM_SUITE=session" >&2; exit 2 ;;
esac

packages=(build-essential cmake pkg-config libsystemd-dev libcjson-dev libglpk-dev
          check libsqlite3-dev libssl-dev libmicrohttpd-dev jq util-linux gnuplot-nox file munge libmunge-dev zlib1g-dev
          libbpf-dev)
# Only for the tests: a qemu guest with the unified (v2) hierarchy (tests/vm/run-in-vm.sh),
# clang with its runtimes (libFuzzer, ASan, UBSan) for tests/fuzz, a headless browser and curl
# for the status page and /metrics (tests/web/status_page.sh, tests/integration/http.sh), and the
# openssl command that makes tests/integration/tls.sh's certificates, and strace, which watches
# the agent's loop for fsyncs (tests/integration/agent_fsync.sh), and clang-format 14, which
# checks that the tree is laid out as .clang-format says (tests/style/format.sh).
test_packages=(qemu-system-x86 linux-image-amd64 busybox-static cpio attr clang libclang-rt-14-dev
               chromium curl openssl strace clang-format)

install_missing() { # install_missing PACKAGE...
        local missing=() p
        for p in "$@"; do
                dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
        done
        [ ${#missing[@]} -eq 0 ] && return 0
        [ "$(id -u)" = 0 ] || { echo "bootstrap: run as root to install: ${missing[*]}" >&2; exit 1; }
        echo "bootstrap: installing ${missing[*]}"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

build_tree() { # build_tree DIR [cmake options...]
        local dir=$1; shift
        cmake -S "$top" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
        cmake --build "$dir" -j "$(nproc)" >/dev/null
}

case "$mode" in
demo)
        install_missing "${packages[@]}"
        build_tree "$build"
        exec "$build/bin/colony" demo
        ;;
test)
        install_missing "${packages[@]}" "${test_packages[@]}"
        build_tree "$build"
        # The guest's tests (20 minutes of an emulated CPU, one host core) run beside the rest,
        # which mostly waits on its processes: the suite takes as long as the longer of the two.
        # Two guests at a time: the integration suite's, and the short ones (systemd, the
        # packages, a login session) one after another beside it. Their report comes last.
        vm_log=$(mktemp /tmp/colony-vm-tests-XXXXXX.log)
        # In a session of their own, so that a stop ends the guests too.
        setsid bash -c 'cd "$1" && exec ctest --output-on-failure -j 2 -L "$2"' - "$build" "$vm_labels" >"$vm_log" 2>&1 &
        vm_pid=$!
        # || true: under set -e a failed kill (the guests' session already gone) would end the trap.
        trap 'kill -- -"$vm_pid" 2>/dev/null || true; rm -f "$vm_log"' EXIT
        rc=0
        (cd "$build" && ctest --output-on-failure -L 'unit|integration|cli|web|chaos|style') || rc=1
        build_tree "$top/build-asan" -DCOLONY_SANITIZE=ON
        (cd "$top/build-asan" && ctest --output-on-failure -L unit) || rc=1
        build_tree "$top/build-fuzz" -DCOLONY_FUZZ=ON -DCMAKE_C_COMPILER=clang
        (cd "$top/build-fuzz" && ctest --output-on-failure -j "$(nproc)" -L fuzz) || rc=1
        echo "bootstrap: the cgroup v2 guest's tests:"
        wait "$vm_pid" || rc=1
        cat "$vm_log"
        exit $rc
        ;;
*)
        echo "usage: contrib/bootstrap.sh demo|test" >&2
        exit 2
        ;;
esac
