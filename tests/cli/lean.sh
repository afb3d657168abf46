#!/usr/bin/env bash
# colony loads only libc, libm and libcjson, since every job command starts it: the offline
# commands (place, sim, fair, coloc, lotes) run in colony-offline, which colony execs with its
# own argv. colony still lists them, their options, output and exit statuses are colony's, and
# without colony-offline they fail with one line while the job commands still work. The daemons
# keep libsystemd (they log to the journal).
set -euo pipefail
bin=${COLONY_BIN:?set COLONY_BIN to the build tree bin directory}
command -v readelf >/dev/null || { echo "SKIP: readelf missing"; exit 77; }
command -v jq >/dev/null || { echo "SKIP: jq missing"; exit 77; }
data=$(cd "$(dirname "$0")/../data" && pwd)
. "$(dirname "$0")/lib.sh"
dir=$(mktemp -d /tmp/colony-lean-XXXXXX)
trap 'rm -rf "$dir"' EXIT

needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' '; }
libs=$(needed "$bin/colony")
for lib in $libs; do
        case $lib in libc.so.*|libm.so.*|libcjson.so.*) ;; *) fail "colony needs $lib (all: $libs)" ;; esac
done
echo "# colony needs: $libs"
for daemon in colony-controller colony-agent; do
        grep -q libsystemd <<<"$(needed "$bin/$daemon")" || fail "$daemon does not link libsystemd: $(needed "$bin/$daemon")"
done
grep -q libglpk <<<"$(needed "$bin/colony-offline")" || fail "colony-offline does not link GLPK: $(needed "$bin/colony-offline")"

help=$("$bin/colony" --help)
for c in place sim fair coloc lotes; do
        grep -Eq "^  $c +[a-z]" <<<"$help" || fail "colony --help does not list $c with its summary"
        first=$("$bin/colony" "$c" --help | head -1)
        [[ $first == "Usage: colony $c "* ]] || fail "colony $c --help begins '$first'"
done

# Global options before the command reach colony-offline as they would colony.
args=(fair --algo mch --tree "$data/fair-fig4-tree.json" --demands "$data/fair-fig4-demands.json")
before=$("$bin/colony" --json "${args[@]}")
after=$("$bin/colony" "${args[@]}" --json)
[ "$before" = "$after" ] || fail "colony --json fair differs from colony fair --json"
jq -e '.nodes | length > 0' <<<"$before" >/dev/null || fail "colony --json fair is not its JSON: $before"

# Exit statuses and messages come through: 2 for usage, 1 for a bad file.
check_exit 2 "colony: place: unknown option '--bogus'" place --bogus
check_exit 1 "colony: sim: $dir/none.swf" sim --trace "$dir/none.swf" --machines "$data/one-machine.json"

# colony alone: no colony-offline next to it (nor installed): one line, exit 1; the rest works.
cp "$bin/colony" "$dir/colony"
rc=0 out=$("$dir/colony" sim --help 2>&1 >/dev/null) || rc=$?
if [ "$rc" = 0 ]; then
        echo "# an installed colony-offline answered; not checking its absence"
else
        [ "$rc" = 1 ] || fail "colony sim without colony-offline: exit $rc, want 1"
        grep -q "^colony: sim: colony-offline is neither next to colony nor in /" <<<"$out" || fail "without colony-offline: '$out'"
        echo "# $out"
fi
[ "$("$dir/colony" --version)" = "$("$bin/colony" --version)" ] || fail "colony alone: --version"
echo "PASS: colony needs only $libs; the offline commands run in colony-offline"
