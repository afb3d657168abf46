/* agent-state.h - how a job ended: the state rules of docs/protocol.md and the error text.
 *
 * Pure functions over a job_result, so the rules are unit-tested without cgroups. */
#pragma once
#include "job.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The terminal state of a job whose main process ended with r's exit_code/signal and whose
 * cgroup counted r->oom_kills; cancelled says a cancel arrived before the main process ended.
 * Returns JOB_OOM_KILLED, JOB_CANCELLED, JOB_COMPLETED or JOB_FAILED. */
job_state agent_state_decide(const job_result *r, bool cancelled);

/* The one-line "error" for a job that ended in state s, written to buf: "killed by the OOM
 * killer (memory limit 64.0M)", "killed by signal 9 (SIGKILL)", "cancelled: killed by signal 15
 * (SIGTERM)". mem_limit is the job's memory limit in bytes (0 = none). Returns buf, or NULL
 * when there is nothing to say (completed, or failed with an exit code). */
const char *agent_state_error(job_state s, const job_result *r, int64_t mem_limit, char *buf, size_t len);
