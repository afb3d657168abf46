#!/usr/bin/env bash
# completion.sh - the bash completion offers colony's commands and each command's options, as
# its --help lists them, and files where a file goes.
set -euo pipefail
bin=${COLONY_BIN:?}
export PATH="$bin:$PATH"
. "$(dirname "$0")/../../contrib/completion/colony.bash"
fail() { echo "FAIL: $*" >&2; exit 1; }

complete_line() { # complete_line WORD...: what TAB offers after these words
        COMP_WORDS=("$@")
        COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
        COMPREPLY=()
        _colony
        printf '%s\n' "${COMPREPLY[@]}"
}

[ "$(complete_line colony su)" = submit ] || fail "colony su<TAB>: '$(complete_line colony su)'"
cmds=$(complete_line colony "" | tr '\n' ' ')
for c in submit queue show cancel wait history nodes up down demo place sim shares reload; do
        grep -qw -- "$c" <<<"$cmds" || fail "command $c not offered: $cmds"
done
grep -qx -- --mem-high <<<"$(complete_line colony submit --mem)" || fail "submit --mem<TAB> lacks --mem-high"
grep -qx -- --policy <<<"$(complete_line colony sim --p)" || fail "sim --p<TAB> lacks --policy"
[ "$(complete_line colony sim --google-m)" = --google-machines ] || fail "sim --google-m<TAB>: '$(complete_line colony sim --google-m)'"
[ "$(complete_line colony sim --dept-by u)" = user ] || fail "sim --dept-by u<TAB>: '$(complete_line colony sim --dept-by u)'"
grep -qx worst-fit-mem <<<"$(complete_line colony place --policy wo)" || fail "no policy names"
grep -qx backfill <<<"$(complete_line colony up --order b)" || fail "no order names"
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
touch "$dir/machines.json"
[ "$(complete_line colony place --machines "$dir/ma")" = "$dir/machines.json" ] || fail "no file after --machines"
touch "$dir/task_events.csv"
[ "$(complete_line colony sim --google "$dir/ta")" = "$dir/task_events.csv" ] || fail "no file after --google"
[ -z "$(complete_line colony submit --cpus 1 -- nosuchcommandxyz)" ] || fail "completed a command that does not exist"
grep -qx colony-stress <<<"$(complete_line colony submit -- colony-str)" || fail "no command names after --"
echo "PASS: $(wc -w <<<"$cmds") commands, options and files offered"
