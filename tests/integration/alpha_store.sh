#!/usr/bin/env bash
# alpha_store.sh - the controller's interference matrix: colony measure --upload stores
# versions 1, 2, ...; --show prints the latest or any version, as a table or JSON, and draws a
# heatmap with gnuplot; bad matrices (wrong sizes, negative, not finite, bad names) and
# non-root users are refused with one line; the latest survives a controller restart.
. "$(dirname "$0")/lib.sh"
cluster_up --agents 1 --agent-cpus 1 --agent-mem 256M

out=$(colony measure --show 2>&1) && fail "--show with nothing stored succeeded: $out"
[ "$out" = "colony: measure: no interference matrix stored yet (colony measure)" ] || fail "empty store: $out"

cat >"$DIR/m1.json" <<'J'
{"types": ["cpu", "io"], "alpha": [[1.0, 0.25], [0.5, 1.0]],
 "ci95_low": [[0.9, 0.2], [0.4, 0.8]], "ci95_high": [[1.1, 0.3], [0.6, 1.2]], "reps": 3, "pin": "0"}
J
cat >"$DIR/m2.json" <<'J'
{"types": ["A", "B", "C"], "alpha": [[1, 4, 0], [4, 1, 0], [0, 0, 1]]}
J
[ "$(colony measure --upload "$DIR/m1.json")" = "stored as interference matrix version 1" ] || fail "first upload"
[ "$(colony measure --upload "$DIR/m2.json")" = "stored as interference matrix version 2" ] || fail "second upload"

latest=$(colony measure --show --json)
[ "$(jq -c '[.version, .types, .alpha]' <<<"$latest")" = '[2,["A","B","C"],[[1,4,0],[4,1,0],[0,0,1]]]' ] ||
        fail "latest: $latest"
first=$(colony measure --show --version 1 --json)
[ "$(jq -c '[.version, .types, .alpha[1], .ci95_low[1], .ci95_high[1]]' <<<"$first")" = \
        '[1,["cpu","io"],[0.5,1],[0.4,0.8],[0.6,1.2]]' ] || fail "version 1: $first"
table=$(colony measure --show --version 1)
note "$(head -n 1 <<<"$table")"
grep -q "^io  *0.500 \[0.400,0.600\]  *1.000 \[0.800,1.200\]$" <<<"$table" || fail "table: $table"
out=$(colony measure --show --version 9 2>&1) && fail "version 9 shown: $out"
[ "$out" = "colony: measure: no interference matrix version 9" ] || fail "missing version: $out"

colony measure --show --png "$DIR/alpha.png" >/dev/null
[ "$(head -c 8 "$DIR/alpha.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "--png did not write a PNG"
note "heatmap: $(stat -c %s "$DIR/alpha.png") bytes"

# bad matrices: one line each, naming the field; nothing stored
refuse() { # refuse JSON EXPECTED: upload JSON, expect the one-line error EXPECTED
        printf '%s\n' "$1" >"$DIR/bad.json"
        local out
        out=$(colony measure --upload "$DIR/bad.json" 2>&1) && fail "accepted: $1"
        [ "$(wc -l <<<"$out")" = 1 ] || fail "more than one line for $1: $out"
        [[ $out == *"$2"* ]] || fail "for $1: '$out', want '$2'"
}
refuse '{"types": ["a", "b"], "alpha": [[1, 0], [0, 1], [1, 1]]}' "alpha: want 2 rows, one per type"
refuse '{"types": ["a", "b"], "alpha": [[1, 0], [0]]}' "alpha[1]: want 2 numbers, one per type"
refuse '{"types": ["a", "b"], "alpha": [[1, 0], [-0.5, 1]]}' "alpha[1][0]: -0.5 is negative"
refuse '{"types": ["a", "b"], "alpha": [[1, 0], [1e999, 1]]}' "alpha[1][0]: not a finite number"
refuse '{"types": ["a", "b"], "alpha": [[1, null], [0, 1]]}' "alpha[0][1]: not a finite number"
refuse '{"types": ["a", "b"], "alpha": [[1, NaN], [0, 1]]}' "not a JSON object"
refuse '{"types": ["a", "a"], "alpha": [[1, 0], [0, 1]]}' "types: 'a' is given twice"
refuse '{"types": ["a b"], "alpha": [[1]]}' "types[0]: want a name"
refuse '{"types": [], "alpha": []}' "types: want an array of 1 to 64 type names"
refuse '{"types": ["a"], "alpha": [[1]], "ci95_low": [[0]]}' "ci95_low and ci95_high come together"
refuse '{"types": ["a"], "alpha": [[1]], "ci95_low": [[2]], "ci95_high": [[1]]}' "ci95_low[0][0] is above ci95_high"
as_nobody() { setpriv --reuid 65534 --regid 65534 --clear-groups -- "$@"; }
out=$(as_nobody "$COLONY_BIN/colony" measure --upload "$DIR/m1.json" 2>&1) && fail "nobody stored a matrix"
[[ $out == *"only root or the controller's user may store an interference matrix" ]] || fail "nobody: $out"
[ "$(colony measure --show --json | jq .version)" = 2 ] || fail "a refused matrix changed the latest"
as_nobody "$COLONY_BIN/colony" measure --show >/dev/null || fail "anyone may read the matrix"

# a restarted controller keeps the versions; the next one is 3
cmdline=$(tr '\0' ' ' <"/proc/$(cat "$DIR/controller.pid")/cmdline")
kill -TERM "$(cat "$DIR/controller.pid")"
for ((i = 0; i < 50; i++)); do kill -0 "$(cat "$DIR/controller.pid")" 2>/dev/null || break; sleep 0.1; done
$cmdline >>"$DIR/controller.log" 2>&1 &
echo $! >"$DIR/controller.pid"
STARTED_PIDS+=("$!")
for ((i = 0; i < 100; i++)); do colony nodes >/dev/null 2>&1 && break; sleep 0.1; done
[ "$(colony measure --show --json | jq .version)" = 2 ] || fail "the latest matrix was not reloaded"
[ "$(colony measure --upload "$DIR/m1.json")" = "stored as interference matrix version 3" ] || fail "upload after restart"
echo "PASS: versions 1-3 stored and shown, 11 bad matrices and a non-root upload refused"
