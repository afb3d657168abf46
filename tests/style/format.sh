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
bad=0
while IFS= read -r -d '' f; do
        if ! "$fmt" --dry-run --Werror "$f" 2>/dev/null; then
                echo "$f: not as .clang-format lays it out (clang-format -i $f)"
                bad=$((bad + 1))
        fi
done < <(git ls-files -z -- '*.c' '*.h')
[ "$bad" -eq 0 ] || { echo "$bad files to format"; exit 1; }
echo "every tracked C file is formatted"
