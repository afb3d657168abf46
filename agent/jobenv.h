/* jobenv.h - what a launch becomes on its node (pure: no I/O): the job's environment, with its
 * COLONY_* variables and the usual thread-count variables, and its output file names with
 * their %-patterns (outpat.h) expanded. docs/vocabulary.md, "Job environment", lists them. */
#pragma once
#include "launchmsg.h"
#include <stddef.h>

/* Thread-count variables of the usual numeric libraries, set to the job's CPUs (rounded up, at
 * least 1) unless the submitter's environment has them. NULL-terminated. */
extern const char *const jobenv_thread_vars[];

/* Set m's COLONY_* variables (replacing inherited ones) and thread counts (keeping the user's) in
 * m->spec.env, and expand m->spec's stdout_path and stderr_path for node. Returns 0, or -EINVAL
 * (a bad pattern) or -ENOMEM with the reason in err. */
int jobenv_prepare(launch_msg *m, const char *node, char *err, size_t errlen);
/* The job's GPUs (ids, their indexes "0,2"; "" for none) in m->spec.env: COLONY_GPUS,
 * CUDA_VISIBLE_DEVICES and ROCR_VISIBLE_DEVICES, replacing inherited ones; a job of no GPU gets
 * none of them set. Returns 0 or -ENOMEM with the reason in err. */
int jobenv_gpus(launch_msg *m, const char *ids, char *err, size_t errlen);
