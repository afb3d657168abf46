#!/usr/bin/env bash
# contrib/plots/load-sweep.sh on a small run: a row per load, a column per policy, and a PNG.
set -euo pipefail
[ -x "${COLONY_BIN:-}/colony" ] || { echo "COLONY_BIN not set to the build's bin/"; exit 1; }
command -v gnuplot >/dev/null && command -v jq >/dev/null || { echo "SKIP: gnuplot or jq missing"; exit 77; }
dir=$(mktemp -d /tmp/colony-sweep-XXXXXX)
trap 'rm -rf "$dir"' EXIT
out=$("$(dirname "$0")/../../contrib/plots/load-sweep.sh" -o "$dir/sweep.png" -j 3000 -s 2 first-fit:fifo mix-fit:backfill)
echo "$out"
[ "$(grep -cE '^0\.[0-9]+ +[0-9.]+ +[0-9.]+$' <<<"$out")" = 8 ] || { echo "FAIL: expected 8 rows of 2 figures"; exit 1; }
[ "$(head -c 8 "$dir/sweep.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || { echo "FAIL: no PNG"; exit 1; }
echo PASS
