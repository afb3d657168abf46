#!/usr/bin/env bash
# reasons.sh - every reason a pending job waits for, as `colony queue` shows it: resources and
# priority (strict FIFO), dependency, held, department cap (also for a job behind the one the cap
# holds, which no pass reads), begin time; then, after a reload sets
# max_running_per_user = 1, user limit: a user's second job waits while another user's job runs,
# and starts when the user's first ends; then max_cpus_per_user (user limit) and
# max_running_per_dept (department cap) the same way.
. "$(dirname "$0")/lib.sh"
conf=$DIR/controller.conf
write_conf() { # EXTRA_CONTROLLER_LINES
        printf '[controller]\norder = fifo\n%s\n[departments]\nphysics = 1\ncs = 1\n[department_caps]\nphysics = 0.5\n' \
                "$1" >"$conf"
}
write_conf ""
cluster_up --agents 1 --agent-cpus 2 --agent-mem 1G --controller-config "$conf"
stress="$COLONY_BIN/colony-stress"
as_nobody() { setpriv --reuid 65534 --regid 65534 --clear-groups -- "$@"; }
work="$DIR/work"; mkdir -m 1777 "$work"; cd "$work"

# queue_reason ID REASON [TIMEOUT_S]: poll until colony queue's row of ID ends with REASON
queue_reason() {
        local end=$((SECONDS + ${3:-30}))
        while ((SECONDS <= end)); do
                colony queue | grep -E "^$1 .* $2 *\$" >/dev/null && return 0
                sleep 0.1
        done
        fail "job $1 does not wait '$2' in colony queue: $(colony queue | grep -E "^$1 ")"
}
sub() { colony submit --mem 32M "$@"; }

p1=$(sub --name p1 --group physics --cpus 1 -- "$stress" sleep 300)
c1=$(sub --name c1 --group cs --cpus 1 -- "$stress" sleep 300)
wait_state "$p1" running
wait_state "$c1" running
p2=$(sub --name p2 --group physics --cpus 0.5 -- "$stress" sleep 0)
p3=$(sub --name p3 --group physics --cpus 0.25 -- "$stress" sleep 0) # behind p2: no pass reads it
big=$(sub --name big --group cs --cpus 1 -- "$stress" sleep 0)
behind=$(sub --name behind --group cs --cpus 0.25 -- "$stress" sleep 0)
held=$(sub --name held --group cs -H --cpus 0.25 -- "$stress" sleep 0)
dep=$(sub --name dep --group cs --afterok "$c1" --cpus 0.25 -- "$stress" sleep 0)
later=$(sub --name later --group cs --begin now+600 --cpus 0.25 -- "$stress" sleep 0)
queue_reason "$p2" "department cap"
queue_reason "$p3" "department cap"
colony show "$p3" | grep -E '^reason: +department cap$' >/dev/null || fail "colony show $p3: $(colony show "$p3")"
queue_reason "$big" resources
queue_reason "$behind" priority
queue_reason "$held" held
queue_reason "$dep" dependency
queue_reason "$later" "begin time"
note "$(colony queue)"
# The dependent job first: once c1 is cancelled its dependency can never be met, and the
# controller may cancel it before this request reaches it ("already cancelled", exit 1). The
# running ones last: the CPU either frees may start a waiting one, which ends at once ("already
# completed", as array_record.sh saw).
colony cancel "$dep" "$p2" "$p3" "$big" "$behind" "$held" "$later" "$p1" "$c1" >/dev/null

# User limit: one running job per user, read by a reload.
write_conf "max_running_per_user = 1"
colony reload >/dev/null || fail "reload refused"
mine=$(sub --name mine --group cs --cpus 0.25 -- "$stress" sleep 300)
wait_state "$mine" running
theirs=$(as_nobody "$COLONY_BIN/colony" submit --mem 32M --name theirs --group cs --cpus 0.25 -- "$stress" sleep 300)
second=$(sub --name second --group cs --cpus 0.25 -- "$stress" sleep 0)
wait_state "$theirs" running
queue_reason "$second" "user limit"
[ "$(job_field "$second" state)" = pending ] || fail "second passed root's limit"
note "$(colony queue)"
colony cancel "$mine" >/dev/null
colony wait --timeout 60 "$second" >/dev/null || fail "second: $(job_field "$second" state)"
[ "$(job_field "$theirs" state)" = running ] || fail "theirs: $(job_field "$theirs" state)"
colony cancel "$theirs" >/dev/null

# limited A B REASON: A runs, B waits REASON while it does, and starts once A is cancelled.
limited() {
        wait_state "$1" running
        queue_reason "$2" "$3"
        [ "$(job_field "$2" state)" = pending ] || fail "job $2 passed the limit"
        colony cancel "$1" >/dev/null
        wait_state "$2" running 60
        colony cancel "$2" >/dev/null
}
# CPUs a user's running jobs hold together.
write_conf "max_cpus_per_user = 0.5"
colony reload >/dev/null || fail "reload refused"
a=$(sub --name a --group cs --cpus 0.25 -- "$stress" sleep 300)
wait_state "$a" running
b=$(sub --name b --group cs --cpus 0.5 -- "$stress" sleep 300)
limited "$a" "$b" "user limit"
# Running jobs of a top-level department.
write_conf "max_running_per_dept = 1"
colony reload >/dev/null || fail "reload refused"
a=$(sub --name a --group cs --cpus 0.25 -- "$stress" sleep 300)
wait_state "$a" running
b=$(as_nobody "$COLONY_BIN/colony" submit --mem 32M --name b --group cs --cpus 0.25 -- "$stress" sleep 300)
limited "$a" "$b" "department cap"
echo "PASS"
