#!/usr/bin/env bash
# format.sh - every C file the repository tracks is as .clang-format lays it out, so that a
# change's diff holds its meaning only. clang-format's output differs between its versions:
# this runs with 14, as Debian 12 packages it, and is skipped (77) with any other.
set -euo pipefail
top=$(git -C "$(dirname "$0")" rev-parse --show-toplevel 2>/dev/null) || { echo "skip: not a git checkout"; exit 77; }
fmt=$(command -v clang-format-14 || command -v clang-format || true)
[ -n "$fmt" ] || { echo "skip: no clang-format"; exit 77; }
"$fmt" --version | grep -q 'version 14\.' || { echo "skip: $("$fmt" --version) is not 14"; exit 77; }
cd "$top"
# One run over every file (a process per file took 19 s); each violation is a line
# "FILE:LINE:COL: error: code should be clang-formatted", so the files are its first fields.
rc=0
out=$(git ls-files -z -- '*.c' '*.h' | xargs -0 "$fmt" --dry-run --Werror 2>&1) || rc=$?
bad=$(sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' <<<"$out" | sort -u)
if [ -n "$bad" ]; then
        while IFS= read -r f; do echo "$f: not as .clang-format lays it out (clang-format -i $f)"; done <<<"$bad"
        echo "$(wc -l <<<"$bad") files to format"
        exit 1
fi
[ "$rc" -eq 0 ] || { echo "clang-format failed ($rc): $(head -n 3 <<<"$out")"; exit 1; }
echo "every tracked C file is formatted"
