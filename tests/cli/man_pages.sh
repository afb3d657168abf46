#!/usr/bin/env bash
# Every man page in docs/man (colony(1), colony-stress(1), colony.conf(5), colony-controller(8),
# colony-agent(8)) formats without a warning from man --warnings (groff's and
# man's own: bad requests, unknown macros, lines that cannot be broken), and colony.conf(5) has
# every configuration key the daemons accept.
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

# colony.conf(5) documents every key the daemons accept: their config_keys[] lists, as
# "section.key" (or "section.*"), each under its section's heading as ".B key".
src=$dir/../..
keys=$(for f in "$src/controller/daemon/options.c" "$src/agent/agentconf.c"; do
        sed -n '/config_keys\[\] = {/,/};/p' "$f" | grep -o '"[a-z_]*\.[a-z_*]*"' | tr -d '"'
done)
[ "$(wc -l <<<"$keys")" -gt 10 ] || { echo "FAIL: config_keys[] not found in the sources: $keys"; exit 1; }
for k in $keys; do
        section=${k%%.*} key=${k#*.}
        # The lines from the section's heading to the next heading.
        body=$(sed -n "/^\.SH \[$section\]\$/,/^\.SH /p" "$dir/colony.conf.5")
        [ -n "$body" ] || { echo "FAIL: colony.conf.5 has no section [$section] (for $k)"; exit 1; }
        [ "$key" = '*' ] || grep -qx "\.B $key" <<<"$body" || { echo "FAIL: colony.conf.5 [$section] lacks $key"; exit 1; }
done
echo "PASS: $n pages; colony.conf(5) has all $(wc -l <<<"$keys") keys"
