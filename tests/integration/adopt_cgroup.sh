#!/usr/bin/env bash
# An agent killed while a job's shepherd makes the job's cgroup: the next agent adopts the job
# from its record, sees that the launch is not over, fails it at the deadline naming the step
# and removes what the shepherd made. Twice: the record on disk and no cgroup yet (the first
# mkdir held), then the cgroup half-made (v1: made in one hierarchy, the second mkdir held).
# On v1 the standby's child makes it by renaming the spare cgroup it waits in (agent/shepherd.c,
# standby_ahead_run): its renames are held as the mkdirs are (rename(2), which the cgroup code
# calls and the agent's records, renameat(2), do not).
# strace holds the shepherd's mkdir (inject delay_enter, counted per process) for 5 minutes, in a
# ptrace stop that even SIGKILL waits out: the test ends strace once the agent has killed.
. "$(dirname "$0")/lib.sh"
command -v strace >/dev/null || { echo "SKIP: strace missing"; exit $SKIP; }

cluster_up --agents 1 --agent-cpus 2 --agent-mem 1G --launch-timeout-ms 3000
node=${PREFIX}1

# The job's cgroup directories in every hierarchy (one on v2).
job_dirs() { find /sys/fs/cgroup -maxdepth 8 -type d -path "*/colony-$node/job-$1" 2>/dev/null || true; }

# held WHEN: a job whose shepherd's WHEN-th mkdir strace holds while the agent is killed and
# started again; the job must fail at its deadline with nothing of its cgroup left.
held() {
        local when=$1 spid id made i err
        strace_attach "$(agent_pid "$node")" "$DIR/strace-$when.out" -f -qq -e trace=mkdir,mkdirat,rename \
                -e inject=mkdir,mkdirat,rename:delay_enter=300000000:when="$when"
        spid=$STRACE_PID
        id=$(colony submit --cpus 0.2 --mem 32M -- /bin/touch "$DIR/ran-$when")
        # Held once strace reports the mkdir begun and, for when > 1, the earlier ones made.
        for ((i = 0; i < 600; i++)); do
                grep -q "job-$id\"" "$DIR/strace-$when.out" && made=$(job_dirs "$id" | wc -l) &&
                        [ "$made" = $((when - 1)) ] && break
                sleep 0.1
        done
        [ "${made:-}" = $((when - 1)) ] || fail "job $id: the shepherd never reached mkdir $when (${made:-0} made)"
        # The loop writes the record as the shepherd makes the cgroup, and lets it go once on disk.
        wait_for '[ -f "$DIR/agent-$node.state/job-$id.json" ]' "job $id's record while its cgroup is made" 10
        agent_kill "$node"
        agent_start_again "$node"
        killing() { grep -q "job=$id .*: launch stalled for 3 s at: .*; killing it" "$DIR/$node.log"; }
        for ((i = 0; i < 600; i++)); do killing && break; sleep 0.1; done
        killing || fail "job $id: the adopting agent never killed its stalled launch"
        kill_wait "$spid" # the shepherd, SIGKILLed, leaves the ptrace stop and dies
        wait_state "$id" failed 120
        err=$(job_field "$id" error)
        case $err in "launch stalled for 3 s at: a step begun before the agent restarted") ;;
        *) fail "job $id, adopted while its cgroup was made: unexpected error: $err" ;; esac
        # Had the agent not killed the shepherd, it would have gone on and run the job.
        [ ! -e "$DIR/ran-$when" ] || fail "job $id ran after its launch had failed"
        [ -z "$(job_dirs "$id")" ] || fail "job $id: its cgroup is left: $(job_dirs "$id")"
        note "job $id, agent killed with $made of its cgroup's directories made: $err, nothing left"
}

held 1
[ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] || held 2

# A cgroup of the job's name that is there already is not the job's: the launch fails, and the
# cgroup is neither killed nor removed (the shepherd finds it; the loop no longer looks first).
id=$(colony submit --hold --cpus 0.2 --mem 32M -- /bin/touch "$DIR/ran-foreign")
ctl=memory
[ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] && ctl=
foreign=$(agent_cgroup "$ctl" "$node" "job-$id")
mkdir "$foreign"
colony release "$id" >/dev/null
wait_state "$id" failed 120
err=$(job_field "$id" error)
case $err in *"$foreign"*"File exists"*) ;; *) fail "job $id, its cgroup there already: unexpected error: $err" ;; esac
[ -d "$foreign" ] || fail "job $id: the cgroup that was there already was removed"
[ ! -e "$DIR/ran-foreign" ] || fail "job $id ran in a cgroup that was there already"
rmdir "$foreign"
note "job $id, its cgroup there already: $err; that cgroup left as it was"
echo "PASS"
