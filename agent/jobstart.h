/* jobstart.h - start a job the controller sent, without the agent's loop ever waiting on it.
 *
 * The job's cgroup is created, its shepherd forked and recorded, and the launch goes on in the
 * shepherd while the loop runs: the steps the job's process begins and the outcome come back on
 * a pipe watched by an event source, and a launch not exec'd within launch_timeout_ms (stuck on
 * a dead NFS server or a FUSE mount that never answers) is killed and fails alone, naming its
 * step. */
#pragma once
#include "agent-internal.h"
#include "launchmsg.h"

/* Start the job m describes (borrowed for the call): it enters the table, or its failure is
 * reported. */
void jobstart_launch(agent *a, launch_msg *m);
