#!/usr/bin/env bash
# colony history: finished jobs only, filtered by user, group, state and time, newest first,
# paged with --limit and --before, and by bytes (a page holds about 512 KiB of records).
. "$(dirname "$0")/lib.sh"
cluster_up --agents 1 --agent-cpus 2 --agent-mem 1G
as_nobody() { setpriv --reuid 65534 --regid 65534 --clear-groups -- "$@"; }
mkdir -m 1777 "$DIR/work" && cd "$DIR/work"
hist() { colony history --json "$@" | jq -c '[.jobs[].id]'; }

a=$(colony submit --group physics/astro -- "$COLONY_BIN/colony-stress" sleep 0)
b=$(colony submit --group physics/hep -- "$COLONY_BIN/colony-stress" bogus-mode)
c=$(as_nobody "$COLONY_BIN/colony" submit --group chemistry -- "$COLONY_BIN/colony-stress" sleep 0)
d=$(colony submit --group physicsx -- "$COLONY_BIN/colony-stress" sleep 0)
# Long enough to outlive the test on a slow guest: it ends by the teardown, never finished.
running=$(colony submit -- "$COLONY_BIN/colony-stress" sleep 3600)
for id in $a $b $c $d; do colony wait "$id" >/dev/null || true; done
wait_state "$running" running

[ "$(hist)" = "[$d,$c,$b,$a]" ] || fail "all finished, newest first: $(hist)"
[ "$(hist --user nobody)" = "[$c]" ] || fail "--user nobody: $(hist --user nobody)"
[ "$(hist --group physics)" = "[$b,$a]" ] || fail "--group physics (not physicsx): $(hist --group physics)"
[ "$(hist --state failed)" = "[$b]" ] || fail "--state failed: $(hist --state failed)"
[ "$(hist --since 1h)" = "[$d,$c,$b,$a]" ] || fail "--since 1h: $(hist --since 1h)"
[ "$(hist --until 1h)" = "[]" ] || fail "--until 1h ago: $(hist --until 1h)"
[ "$(hist --limit 2)" = "[$d,$c]" ] || fail "--limit 2: $(hist --limit 2)"
[ "$(colony history --json --limit 2 | jq .more)" = true ] || fail "--limit 2 should say there is more"
[ "$(hist --limit 2 --before "$c")" = "[$b,$a]" ] || fail "--before $c: $(hist --limit 2 --before "$c")"
colony history --limit 2 | tail -n 1 | grep -q -- "--before $c" || fail "the table does not say how to page"
note "$(colony history --group physics | head -n 3)"
if out=$(colony history --state running 2>&1); then fail "--state running accepted"; fi
grep -q "not a finished state" <<<"$out" || fail "--state running: $out"
if out=$(colony history --since yesterday-ish 2>&1); then fail "a bad time accepted"; fi
note "$out"

# pages are cut by bytes too: 12 finished jobs of a 100 kB argument each (1.2 MB of records,
# more than a message) page by a few at a time, and paging lists every one of them
pad=$(head -c 100000 /dev/zero | tr '\0' x)
big=()
for i in $(seq 12); do big+=("$(colony submit --name big -- /bin/true "$pad")"); done
for id in "${big[@]}"; do colony wait "$id" >/dev/null; done
page=$(colony history --json --limit 100) || fail "history of 1.2 MB of records: $page"
n=$(jq '.jobs | length' <<<"$page")
[ "$n" -lt 12 ] && [ "$(jq .more <<<"$page")" = true ] || fail "a page of $n jobs, more $(jq .more <<<"$page")"
seen=$n
while [ "$(jq .more <<<"$page")" = true ]; do
        page=$(colony history --json --limit 100 --before "$(jq '.jobs[-1].id' <<<"$page")")
        seen=$((seen + $(jq '.jobs | length' <<<"$page")))
done
[ "$seen" = 16 ] || fail "paging listed $seen finished jobs, want 16"
note "12 jobs of 100 kB: the first page holds $n, paging lists all"
colony cancel "$running" >/dev/null
echo "PASS"
