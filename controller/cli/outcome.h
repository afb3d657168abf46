/* outcome.h - what a job's end means, for a shell (`colony wait`'s exit status) and for a reader
 * ("exit 3", "SIGKILL"). The mapping is documented in `colony wait --help`. */
#pragma once
#include "job.h"
#include <stddef.h>

/* The exit status that mirrors the job: completed 0; exited N -> N; killed by signal S
 * (oom-killed or cancelled included) -> 128 + S; cancelled before it ran -> 128 + SIGTERM;
 * failed to start -> 127; lost -> 1. A job still pending or running gives -1. */
int outcome_exit_status(const job *j);
/* How the main process ended: "exit 0", "exit 3", "SIGKILL", "not started", "unknown" (lost),
 * "-" while pending or running. Returns buf. */
char *outcome_describe(const job *j, char *buf, size_t len);
