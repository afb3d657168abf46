/* timelimit.h - a job's time limit on its agent: SIGTERM once the job's process has run for
 * time_limit_usec, the whole cgroup SIGKILLed kill_wait later; the job then ends timeout.
 * The run is counted from the exec, as the agent learns it (exec_usec): the launch (the
 * cgroup's making, a v1 move that waits for an RCU grace period, the fork on a loaded host:
 * 1.4 s was seen) is colony's time, not the job's. A re-adopted job's is counted from its
 * recorded start (start_usec, when its shepherd was made), which a restart keeps: at most the
 * launch's length early. */
#pragma once
#include "agent-internal.h"

/* Arm (or move) the job's time limit timer (none when it has no limit), on the wall clock from
 * its exec (exec_usec), or from its recorded start when re-adopted. A launch that hangs is the
 * launch deadline's (launch_timeout_ms). A limit already passed fires at once. Returns 0 or
 * -errno (logged: the job then runs without limit). */
int timelimit_arm(agent_job *j);
