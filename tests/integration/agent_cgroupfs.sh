#!/usr/bin/env bash
# The agent's loop never waits on cgroupfs: one mkdir there took 341 ms on a loaded host (perf
# trace), and the loop's heartbeats wait for its turn. Each job's shepherd, a forked process,
# makes the job's cgroup (its department's too; on v1 a standby's child renames the spare it
# waits in), writes its limits and puts the job in it; at
# the job's end the agent's sync thread removes it (rmdir per v1 hierarchy, retried while
# killed tasks leave) and prunes the department left empty.
# Watched with strace on the running agent and the shepherds it forks, during a burst.
. "$(dirname "$0")/lib.sh"
command -v strace >/dev/null || { echo "SKIP: strace missing"; exit $SKIP; }

cluster_up --agents 1 --agent-cpus 4 --agent-mem 1G
node=${PREFIX}1
apid=$(cat "$DIR/agent-$node.pid")
# -f: the shepherds too, each line begun with the thread's id; -y names each descriptor's file.
strace_attach "$apid" "$DIR/strace.out" -f -qq -y -s 200 -e trace=mkdir,mkdirat,rename,renameat,renameat2,write,pwrite64,rmdir
spid=$STRACE_PID

ids=()
for ((i = 0; i < 6; i++)); do ids+=("$(colony submit --cpus 0.2 --mem 32M -- true)"); done
for ((i = 0; i < 3; i++)); do ids+=("$(colony submit --cpus 0.2 --mem 32M --group physics/astro -- true)"); done
for id in "${ids[@]}"; do wait_state "$id" completed 120; done
# A whole-core job's start and end move the jobs sharing cores (a write to their cpuset.cpus).
sharer=$(colony submit --cpus 0.2 --mem 32M -- sleep 300)
wait_state "$sharer" running 120
whole=$(colony submit --cpus 1 --mem 32M -- true)
wait_state "$whole" completed 120
colony cancel "$sharer" >/dev/null
wait_state "$sharer" cancelled 120
kill "$spid"
wait "$spid" 2>/dev/null || true

# Before, the loop made 172 mkdirs and writes in cgroupfs here (v1: a directory per hierarchy
# for the job and for each department level, the limits, the weights).
# A path argument (mkdir, rename) or a descriptor's file (-y: write(5</sys/fs/cgroup/...>), not the log's.
cg_op='(mkdir\("|mkdirat\([^,]*, "|rename\("|renameat2?\([^,]*, "|write\([0-9]+<|pwrite64\([0-9]+<)/sys/fs/cgroup/'
# off_loop OP WHAT WHO: no OP (a regex) on the loop's thread; every job's cgroup and the
# department's were seen under OP by some other process or thread (WHO).
off_loop() {
        local op=$1 what=$2 who=$3 n id
        n=$(grep -cE "^$apid +$op" "$DIR/strace.out" || true)
        [ "$n" = 0 ] || fail "the loop made $n $what in cgroupfs: $(grep -E "^$apid +$op" "$DIR/strace.out" | head -n 3)"
        for id in "${ids[@]}"; do
                grep -qE "^[0-9]+ +$op.*/job-$id\"" "$DIR/strace.out" || fail "job $id: no $who was seen"
        done
        grep -qE "^[0-9]+ +$op.*/dept-physics/dept-astro\"" "$DIR/strace.out" ||
                fail "department physics/astro: no $who was seen"
}
off_loop "$cg_op" "mkdirs or writes" "process making its cgroup"
# Before, the loop removed each job's cgroup, 5 rmdirs each on v1, and the emptied department's.
off_loop 'rmdir\("/sys/fs/cgroup/' "rmdirs" "thread removing its cgroup"
# Before, the loop wrote the sharer's cpuset.cpus at the whole job's start and at its end.
grep -qE "^[0-9]+ +(write|pwrite64)\([0-9]+</sys/fs/cgroup/[^>]*/job-$sharer/cpuset.cpus>" "$DIR/strace.out" ||
        fail "job $sharer: no thread was seen moving it off the whole job's core"
note "no mkdir, write or rmdir in cgroupfs on the loop; the shepherds made the cgroups of jobs ${ids[*]}, a thread removed them"
echo "PASS"
