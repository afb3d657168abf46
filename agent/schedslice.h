/* schedslice.h - the time slice a thread asks the kernel's fair scheduler for.
 *
 * Since Linux 6.6 the fair scheduler is EEVDF: a task woken lets the one running finish its
 * slice (3 ms by default here) before it runs, whatever its cgroup's weight, unless it asks
 * for a shorter slice (sched_setattr's sched_runtime, honoured since 6.12), which gives it an
 * earlier deadline. The agent and its shepherds ask for a short one: their turns are short, and
 * a standby woken by its job's exec then runs at once instead of after the job's slice (perf,
 * docs/benchmarks.md). A job gets the kernel's default back before its exec. Older kernels
 * take the request and ignore it. */
#pragma once
#include <stdint.h>

/* The slice the agent asks for: a turn of its loop or a shepherd's step is shorter. */
#define SCHED_SLICE_AGENT_NS 100000

/* Ask for a slice of ns nanoseconds (0: the kernel's default) for the calling thread, keeping
 * its policy and nice value; threads and processes it starts after inherit it. Returns 0, or
 * -errno (a policy other than the fair one's: -EINVAL, the slice left alone). */
int sched_slice_set(uint64_t ns);
