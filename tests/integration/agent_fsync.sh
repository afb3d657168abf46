#!/usr/bin/env bash
# Neither the agent nor its shepherds make any fsync: on a loaded host one fsync of the state
# directory took 0.62 s (docs/benchmarks.md), and the loop's heartbeats wait for its turn. A
# state file has only a process crash to survive, which the page cache outlives: a job's record
# lets a restarted agent find the job; the shepherd's exit file serves it as the record does; a
# finished job's report is written (renamed into place) before it goes out, so that an agent
# killed before the controller's ack leaves it to the next, and needs no fsync, since the
# controller's log makes the end durable before anything acts on it. The agent's sync thread
# used to fsync each report and the directory before the report went out: 15-16 ms of each
# job's end. Watched with strace on the running agent's threads and its shepherds. Also: the
# `finished` of a job that left nothing behind goes out in the very turn of the loop that hears
# its shepherd's end, not a turn later for the cgroup's first kill round and another for the
# socket's EPOLLOUT (strace of endlaunch.sh: two turns of every job's end).
. "$(dirname "$0")/lib.sh"
command -v strace >/dev/null || { echo "SKIP: strace missing"; exit $SKIP; }

cluster_up --agents 1 --agent-cpus 4 --agent-mem 1G
node=${PREFIX}1
apid=$(cat "$DIR/agent-$node.pid")
# Every thread of the agent and (-f) the shepherds it forks; -f also makes strace begin each
# line with the thread's id.
strace_attach "$apid" "$DIR/strace.out" -f -qq -y -s 400 -e trace=fsync,fdatasync,syncfs,sync,rename,renameat,renameat2,sendto,write,epoll_wait,epoll_pwait,openat,pread64
spid=$STRACE_PID

ids=()
for ((i = 0; i < 4; i++)); do ids+=("$(colony submit --cpus 0.2 --mem 32M -- true)"); done
long=$(colony submit --cpus 0.2 --mem 32M -- sleep 300)
wait_state "$long" running 60
colony cancel "$long" >/dev/null # rewrites the job's record
for id in "${ids[@]}"; do wait_state "$id" completed 60; done
wait_state "$long" cancelled 60
kill "$spid"
wait "$spid" 2>/dev/null || true

# Before the sync thread, the loop made 18-22 here (two per record, two per report); with it,
# the sync thread two per report.
syncs=$(grep -cE "^[0-9]+ +(fsync|fdatasync|syncfs|sync)\\(" "$DIR/strace.out" || true)
[ "$syncs" = 0 ] || fail "$syncs fsyncs: $(grep -E "^[0-9]+ +(fsync|fdatasync|syncfs|sync)\\(" "$DIR/strace.out" | head -n 3)"
for id in "${ids[@]}" "$long"; do
        kept=$(grep -nE "^[0-9]+ +rename(at2?)?\(.*\"job-$id\.done\"" "$DIR/strace.out" | head -n 1 | cut -d: -f1 || true)
        sent=$(grep -n "<socket:" "$DIR/strace.out" | grep -F "\\\"type\\\":\\\"finished\\\",\\\"id\\\":$id," |
                head -n 1 | cut -d: -f1 || true)
        [ -n "$kept" ] || fail "job $id: its report was never renamed into place"
        [ -n "$sent" ] || fail "job $id: its finished report was not seen going out"
        [ "$kept" -lt "$sent" ] || fail "job $id: its report went out (line $sent) before it was kept (line $kept)"
done
note "no fsync by the agent nor its shepherds; the reports of jobs ${ids[*]} $long kept, then sent"
# The loop's thread is the agent's pid: the turn that sent each true job's finished (its lines
# since the last epoll_wait) is the one that read its exit file, once its shepherd had ended.
for id in "${ids[@]}"; do
        turn=$(awk -v t="$apid" -v id="$id" '
                $1 != t { next }
                $2 ~ /^epoll_p?wait\(/ { heard = 0; lines = ""; }
                $2 ~ /^openat\(/ && index($0, "/job-" id ".exit\"") { heard = 1 }
                { lines = lines " | " substr($0, 1, 80) }
                $2 ~ /^sendto\(/ && index($0, "\\\"type\\\":\\\"finished\\\",\\\"id\\\":" id ",") { print (heard ? "same" : "later") lines; exit }' "$DIR/strace.out")
        [ "${turn%% *}" = same ] || fail "job $id: its finished went out ${turn:-never} (not in the turn that read its exit file)"
done
note "each true job's finished sent in the turn that read its exit file"
# The loop's turn timing (main.c) reads schedstat twice a turn, not three times.
turns=$(grep -cE "^$apid +epoll_p?wait\(" "$DIR/strace.out" || true)
reads=$(grep -E "^$apid +pread64\(" "$DIR/strace.out" | grep -c "schedstat" || true)
((reads <= 2 * turns + 2)) || fail "$reads reads of schedstat in $turns turns of the agent's loop"
note "$reads reads of schedstat in $turns turns of the loop"
# The state files are written with write(2): a send(2) to a file is a failed system call more.
notsock=$(grep -E "^[0-9]+ +sendto\(" "$DIR/strace.out" | grep -vc "<socket:" || true)
[ "$notsock" = 0 ] || fail "$notsock sendto calls on files: $(grep -E "^[0-9]+ +sendto\(" "$DIR/strace.out" | grep -v "<socket:" | head -n 1)"
echo "PASS"
