#!/usr/bin/env bash
# bootstrap.sh - the README's two commands, on a fresh Debian 12 machine as root.
#
#   contrib/bootstrap.sh demo   install what is missing, build, run the sample workload
#   contrib/bootstrap.sh test   install what is missing, build, run every test (the integration
#                               suite again in a cgroup v2 qemu guest, the unit tests again
#                               under ASan+UBSan, and each parser's fuzz target for a bounded
#                               time: tests/fuzz/README.md)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build="$top/build"
mode=${1:-}

packages=(build-essential cmake pkg-config libsystemd-dev libcjson-dev libglpk-dev
          check libsqlite3-dev libssl-dev libmicrohttpd-dev jq util-linux gnuplot-nox file)
# Only for the tests: a qemu guest with the unified (v2) hierarchy (tests/vm/run-in-vm.sh),
# clang with its runtimes (libFuzzer, ASan, UBSan) for tests/fuzz, a headless browser and curl
# for the status page and /metrics (tests/web/status_page.sh, tests/integration/http.sh), and the
# openssl command that makes tests/integration/tls.sh's certificates.
test_packages=(qemu-system-x86 linux-image-amd64 busybox-static cpio attr clang libclang-rt-14-dev
               chromium curl openssl)

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
        (cd "$build" && ctest --output-on-failure -L 'unit|integration|cli|web|vm|chaos')
        build_tree "$top/build-asan" -DCOLONY_SANITIZE=ON
        (cd "$top/build-asan" && ctest --output-on-failure -L unit)
        build_tree "$top/build-fuzz" -DCOLONY_FUZZ=ON -DCMAKE_C_COMPILER=clang
        (cd "$top/build-fuzz" && ctest --output-on-failure -j "$(nproc)" -L fuzz)
        ;;
*)
        echo "usage: contrib/bootstrap.sh demo|test" >&2
        exit 2
        ;;
esac
