#!/usr/bin/env bash
# Every man page in docs/man formats without a warning from man --warnings (groff's and
# man's own: bad requests, unknown macros, lines that cannot be broken).
set -euo pipefail
command -v man >/dev/null && command -v groff >/dev/null || { echo "SKIP: man or groff missing"; exit 77; }
dir=$(dirname "$(realpath "$0")")/../../docs/man
n=0
for page in "$dir"/*.[0-9]; do
        warnings=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
        [ -z "$warnings" ] || { echo "FAIL: $(basename "$page"):"; echo "$warnings"; exit 1; }
        n=$((n + 1))
done
[ "$n" -gt 0 ] || { echo "FAIL: no man page in $dir"; exit 1; }
echo "PASS: $n pages"
