/* jobstart.h - start a job the controller sent, without the agent's loop ever waiting on it.
 *
 * A launch enters the job table at once and waits in a queue; each queued job starts in a turn
 * of the loop of its own, after whatever else is pending: its cgroup is created, its shepherd
 * forked and recorded, and the launch goes on in the shepherd while the loop runs. The steps
 * the job's process begins and the outcome come back on a pipe watched by an event source, and
 * a launch not exec'd within launch_timeout_ms (stuck on a dead NFS server or a FUSE mount that
 * never answers) is killed and fails alone, naming its step. */
#pragma once
#include "agent-internal.h"
#include "launchmsg.h"

/* Set up the queue of launches waiting for their turn (a->launcher), the fork server the
 * shepherds come from (a->forker: before any thread), and the standby shepherd forked ahead for
 * the next one. Returns 0 or -errno. */
int jobstart_init(agent *a);
/* Drop the queue's event sources, and end the standby shepherd and the fork server (the jobs
 * are the caller's). */
void jobstart_free(agent *a);
/* Take a launch: m's spec moves into the job (m->spec is left empty). The job enters the table
 * at once, so that a hello lists it and a launch sent again finds it, and starts in a later
 * turn of the loop, a job per turn; a failure is reported. */
void jobstart_queue(agent *a, launch_msg *m);
/* An adopted job whose launch had not exec'd when the previous agent went gets what is left of
 * its deadline, counted from its recorded start; the step it hangs in is not known. */
void jobstart_adopted(agent_job *j);
/* jobsync's hook (jobsync_on_done, agent is the agent): a job whose earlier run's cgroup is
 * gone now goes back to the head of the queue. */
void jobstart_removals_done(void *agent);
/* A job still queued is dropped from the queue with its launch (agent_job_free does it). */
void jobstart_unqueue(agent_job *j);
