#!/usr/bin/env bash
# A job runs as the uid that submitted it; a user cannot cancel another's job; root can.
. "$(dirname "$0")/lib.sh"
cluster_up --agents 1 --agent-cpus 2 --agent-mem 1G
as_nobody() { setpriv --reuid 65534 --regid 65534 --clear-groups -- "$@"; }

work="$DIR/work"; mkdir -m 1777 "$work"
out="$work/id.out"
id=$(cd "$work" && as_nobody "$COLONY_BIN/colony" submit --name whoami --output "$out" -- "$COLONY_BIN/colony-stress" id)
colony wait "$id" >/dev/null || fail "job $id: $(job_field "$id" state) $(job_field "$id" error)"
[ "$(job_field "$id" uid)" = 65534 ] || fail "record says uid $(job_field "$id" uid)"
read -r uid gid < "$out"
[ "$uid" = 65534 ] && [ "$gid" = 65534 ] || fail "job ran as uid=$uid gid=$gid, want 65534"
[ "$(stat -c %u "$out")" = 65534 ] || fail "output file not owned by nobody"
note "nobody's job ran as uid=$uid gid=$gid"

# the job gets the submitter's environment and working directory
envout="$work/env.out"
e=$(cd "$work" && COLONY_ENV_CHECK="with spaces = and more" as_nobody "$COLONY_BIN/colony" submit --output "$envout" -- /usr/bin/env)
colony wait "$e" >/dev/null || fail "env job: $(job_field "$e" state)"
grep -qx "COLONY_ENV_CHECK=with spaces = and more" "$envout" || fail "the job did not get the submitter's environment"
note "the job saw COLONY_ENV_CHECK as submitted"

roots=$(cd "$work" && colony submit --name roots -- "$COLONY_BIN/colony-stress" sleep 60)
if err=$(as_nobody "$COLONY_BIN/colony" cancel "$roots" 2>&1); then fail "nobody cancelled root's job"; fi
note "nobody cancelling root's job: $err"
[ "$(job_field "$roots" state)" != cancelled ] || fail "root's job got cancelled"

theirs=$(cd "$work" && as_nobody "$COLONY_BIN/colony" submit --name theirs -- "$COLONY_BIN/colony-stress" sleep 60)
wait_state "$theirs" running
colony cancel "$theirs" >/dev/null || fail "root could not cancel nobody's job"
as_nobody "$COLONY_BIN/colony" cancel "$roots" >/dev/null 2>&1 && fail "second try: nobody cancelled root's job"
colony cancel "$roots" >/dev/null
wait_state "$theirs" cancelled
wait_state "$roots" cancelled
echo "PASS"
