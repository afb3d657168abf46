#!/usr/bin/env bash
# A job gets its user's supplementary groups from the group database, as a login gives them, and
# a change to /etc/group shows in the very next job, though the standby shepherd looked that
# user's groups up ahead (agent/usergroups.h): a member added, then one taken out with the
# file's size unchanged (its change time alone tells). A job of the same user with no change
# between gets the same groups. A name service that does not answer (/etc/group a FIFO nobody
# writes) fails the launch at its deadline, naming the lookup; the standby stuck in the same
# lookup holds no launch: once the file answers again, the next job runs, in a shepherd forked
# for it. The test runs in a mount namespace of its own, where a copy of /etc/group is
# bind-mounted over it: it edits the copy, never the host's file.
if [ -z "${COLONY_GROUPS_NS:-}" ]; then
        exec unshare --mount --propagation private env COLONY_GROUPS_NS=1 "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"

# Two group ids the host does not use, for nobody (65534) to be a member of.
free_gid() { local g=$1; while getent group "$g" >/dev/null; do g=$((g + 1)); done; echo "$g"; }
g1=$(free_gid 61000)
g2=$(free_gid $((g1 + 1)))
cp /etc/group "$DIR/group.host"
cp /etc/group "$DIR/group"
mount --bind "$DIR/group" /etc/group
# members M1 M2: the two test groups' member lists, written into the copy in place (the bind
# mount's inode stays; its size or change time tells).
members() {
        { cat "$DIR/group.host"; echo "colonyg1:x:$g1:$1"; echo "colonyg2:x:$g2:$2"; } >"$DIR/group.next"
        cat "$DIR/group.next" >"$DIR/group"
}
members nobody ""

cluster_up --agents 1 --agent-cpus 2 --agent-mem 1G --launch-timeout-ms 5000
apid=$(agent_pid "${PREFIX}1")
[ "$(readlink "/proc/$apid/ns/mnt")" = "$(readlink /proc/self/ns/mnt)" ] ||
        { echo "SKIP: the agent runs outside this test's mount namespace (started by systemd)"; exit $SKIP; }
work=$DIR/work
mkdir -m 1777 "$work"

submit_as_nobody() { (cd "$work" && setpriv --reuid 65534 --regid 65534 --clear-groups -- "$COLONY_BIN/colony" submit "$@"); }
# groups_of_job: nobody's next job's `id -G`, sorted.
groups_of_job() {
        local id out
        out=$work/id-$((++n)).out
        id=$(submit_as_nobody --output "$out" -- /usr/bin/id -G)
        colony wait "$id" >/dev/null || fail "job $id: $(job_field "$id" state) $(job_field "$id" error)"
        tr ' ' '\n' <"$out" | sort -n | tr '\n' ' '
}
# standby_ready: until the agent's standby shepherd, forked after nobody's job, waits for its
# request: it has looked nobody's groups up by then.
standby_ready() { wait_standby "$apid" >/dev/null; }
n=0

got=$(groups_of_job)
[ "$got" = "$g1 65534 " ] || fail "nobody in colonyg1 ($g1): the job had groups '$got'"
note "first job: groups $got"

standby_ready
members nobody nobody
got=$(groups_of_job)
[ "$got" = "$g1 $g2 65534 " ] || fail "nobody added to colonyg2 ($g2) after the standby's lookup: the job had '$got'"
note "added to $g2 after the standby looked up: the next job had $got"

standby_ready
got=$(groups_of_job)
[ "$got" = "$g1 $g2 65534 " ] || fail "nothing changed: the job had '$got'"

# The same length: "nobody" for "xobody", a user that does not exist.
standby_ready
members xobody nobody
got=$(groups_of_job)
[ "$got" = "$g2 65534 " ] || fail "nobody taken out of colonyg1 ($g1), the file's size the same: the job had '$got'"
note "taken out of $g1, the size unchanged: the next job had $got"

# The group database stops answering: every open of /etc/group waits for a writer of the FIFO.
mkfifo "$DIR/group.fifo"
# Whatever still waits in that open gets its end of file (O_RDWR does not wait on Linux).
release_fifo() { { exec 3<>"$DIR/group.fifo" && exec 3>&-; } 2>/dev/null || true; }
test_cleanup() { release_fifo; while umount -l /etc/group 2>/dev/null; do :; done; }
mount --bind "$DIR/group.fifo" /etc/group
hung=$(cd "$work" && colony submit -- /bin/true) # root's: setpriv itself would read the FIFO
wait_state "$hung" failed 60
err=$(job_field "$hung" error)
[ "$err" = "launch stalled for 5 s at: look up the groups of uid 0" ] || fail "job $hung: unexpected error: $err"
note "job $hung: $err"
# The standby forked after it is stuck in the same lookup.
wait_for 's=$(standby_of "$apid"); [ -n "$s" ] && [ "$(cat "/proc/$s/wchan" 2>/dev/null)" = wait_for_partner ]' \
        "a standby stuck opening the FIFO" 30
umount -l /etc/group # lazily: the standby's open holds the FIFO's mount
got=$(groups_of_job)
[ "$got" = "$g2 65534 " ] || fail "the group file back, the standby $s still stuck: the job had '$got'"
[ "$(cat "/proc/$s/wchan" 2>/dev/null)" = wait_for_partner ] || fail "standby $s got out of its lookup before the FIFO's release"
note "standby $s stuck in the lookup; the next job ran beside it with $got"
release_fifo
[ "$(wait_standby "$apid")" = "$s" ] || fail "standby $s did not come to wait for a request once its lookup ended"
got=$(groups_of_job)
[ "$got" = "$g2 65534 " ] || fail "after the FIFO's release: the job had '$got'"
echo "PASS"
