#!/usr/bin/env bash
# queue_pages.sh - a queue larger than one protocol message (1 MiB) is listed whole: the
# controller answers a page at a time and the CLI asks until the listing ends.
. "$(dirname "$0")/lib.sh"

cluster_up --agents 1 --agent-cpus 1 --agent-mem 256M
pad=$(head -c 60000 /dev/zero | tr '\0' x) # one 60 kB argument: 20 such jobs make 1.2 MB of records
ids=()
for i in $(seq 20); do
        ids+=("$(colony submit --name "p$i" --cpus 1 --mem 1M -- /bin/sh -c "exec $COLONY_BIN/colony-stress sleep 600" "$pad")")
done

listed=$(colony queue --json | jq -r '[.jobs[].id] | join(" ")')
[ "$listed" = "${ids[*]}" ] || fail "queue listed '$listed', want '${ids[*]}'"
[ "$(colony queue | tail -n +2 | wc -l)" = 20 ] || fail "the table does not have 20 rows"
note "20 jobs with 1.2 MB of records listed whole, in order"

# One page by hand: the protocol's paging fields.
page=$("$COLONY_BIN/proto-poke" "$COLONY_SOCKET" json "{\"v\":1,\"type\":\"queue\",\"after_id\":${ids[4]},\"limit\":3}")
[ "$(jq -r '[.jobs[].id] | join(" ")' <<<"$page")" = "${ids[*]:5:3}" ] || fail "page after ${ids[4]}: $page"
[ "$(jq -r .more <<<"$page")" = true ] || fail "page after ${ids[4]} does not say more"
bad=$("$COLONY_BIN/proto-poke" "$COLONY_SOCKET" json '{"v":1,"type":"queue","limit":0}')
[ "$(jq -r .type <<<"$bad")" = error ] || fail "limit 0 accepted: $bad"
note "limit 0 -> $(jq -r .error <<<"$bad")"

for id in "${ids[@]}"; do colony cancel "$id" >/dev/null; done
echo "PASS"
