#!/usr/bin/env bash
# The end of every command's option loop (cli_opts_end): an operand where a command takes none
# is a usage error naming it, exit 2, one line, before anything is read, started or asked of a
# controller; --help exits 0. Needs no cluster: each command stops at its options.
set -euo pipefail
[ -x "${COLONY_BIN:-}/colony" ] || { echo "COLONY_BIN not set to the build's bin/"; exit 1; }
. "$(dirname "$0")/lib.sh"
# no controller may answer: a command that got past its options would fail another way
export COLONY_SOCKET=/nonexistent/colony-usage-test.sock

for cmd in place sim fair lotes coloc queue history events measure up demo nodes; do
        check_exit 2 "colony: $cmd: unexpected argument 'stray'" "$cmd" stray
        # --help prints the usage and stops there: nothing measured, started or asked
        err=$("$COLONY_BIN/colony" "$cmd" --help 2>&1 >/dev/null) || fail "colony $cmd --help: exit $?: $err"
        [ -z "$err" ] || fail "colony $cmd --help went on: $err"
done
# options first, then the operand: the loop ends at it
check_exit 2 "colony: place: unexpected argument 'stray'" place --policy best-fit-mem stray
check_exit 2 "colony: sim: unexpected argument 'stray'" sim --jobs 5 stray
check_exit 2 "colony: up: unexpected argument 'stray'" up --agents 2 stray
check_exit 2 "colony: queue: unexpected argument 'stray'" queue --all stray
echo "ok"
