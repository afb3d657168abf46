# lib.sh - what the colony sim tests share; source it after setting COLONY_BIN.
fail() { echo "FAIL: $*" >&2; exit 1; }

# check_exit STATUS TEXT ARGS...: colony ARGS exits with STATUS, saying one line on stderr that
# contains TEXT (a usage error: 2; a broken input file: 1).
check_exit() {
        local status=$1 want=$2 rc=0 out; shift 2
        out=$("$COLONY_BIN/colony" "$@" 2>&1 >/dev/null) || rc=$?
        [ "$rc" = "$status" ] || fail "colony $*: exit $rc, want $status"
        grep -q -- "$want" <<<"$out" || fail "colony $*: '$out' lacks '$want'"
        [ "$(wc -l <<<"$out")" = 1 ] || fail "colony $*: not one line: $out"
        echo "# $out"
}

# sim_test_start NAME: what a colony sim test needs before it starts: COLONY_BIN, jq (else the
# test is skipped), and $tmp, a directory of its own removed when the test exits.
sim_test_start() {
        [ -x "${COLONY_BIN:-}/colony" ] || { echo "COLONY_BIN not set to the build's bin/"; exit 1; }
        command -v jq >/dev/null || { echo "SKIP: jq missing"; exit 77; }
        tmp=$(mktemp -d "/tmp/colony-sim-$1-XXXXXX")
        trap 'rm -rf "$tmp"' EXIT
}
