/* timelimit.h - a job's time limit on its agent: SIGTERM when start_usec + time_limit_usec has
 * passed, the whole cgroup SIGKILLed kill_wait later; the job then ends timeout. */
#pragma once
#include "agent-internal.h"

/* Arm the job's time limit timer (none when it has no limit), on the wall clock from its
 * recorded start, so that a restarted agent keeps the same end. A limit already passed fires at
 * once. Returns 0 or -errno (logged: the job then runs without limit). */
int timelimit_arm(agent_job *j);
