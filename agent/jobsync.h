/* jobsync.h - the state directory's and the cgroups' slow work, on threads of their own, so
 * that the agent's loop never waits for the disk or cgroupfs (jobdir.c says what each file
 * needs).
 *
 * The loop queues operations, each to one of two lanes, a thread each: the files lane retires
 * the files of acknowledged jobs to spares; the cgroups lane removes the cgroups of ended jobs
 * and moves jobs sharing cores. Each thread takes what its lane has queued as one batch and
 * runs it in order; the two lanes go on apart, so that a cgroupfs that does not answer holds
 * no file's removal. The loop hears of a finished batch by an eventfd and logs what failed. No
 * report waits for the threads: none is fsynced (jobdir.c says why). The threads make system
 * calls only (no allocation, no logging), so that the agent's forks stay safe. */
#pragma once
#include "cgroup.h"
#include "jobfile.h"
#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

typedef struct jobsync jobsync;

/* Start the threads for state directory dir (copied) and watch their eventfd on e. Returns 0
 * or -errno. */
int jobsync_new(sd_event *e, const char *dir, jobsync **out);
/* Queue the removal of the job's files: every kind, or only its report (a later attempt of the
 * job runs here). A failure is logged when the loop hears of it. Returns 0 or -ENOMEM. */
int jobsync_remove(jobsync *s, uint64_t id, bool all);
/* Queue the removal of the job's emptied cgroup (cg_job_rmdir: up to 0.5 s of retries while
 * killed tasks leave, and the pruning of its departments), in order with the cgroups lane's
 * other operations; a later attempt's launch waits until jobsync_cgroup_pending says it is
 * done. cgroup is copied. A failure is logged when the loop hears of it. Returns 0 or -ENOMEM. */
int jobsync_remove_cgroup(jobsync *s, cg_backend *cg, uint64_t id, const char *cgroup);
/* Queue writing cpus (a cpuset list, copied) to the cpuset of the job's cgroup (cg_job_set_cpus),
 * in order with the cgroups lane's other operations: a job sharing cores moved as whole-core jobs
 * start and end. A cgroup gone or not made yet is no error; another failure is logged when
 * the loop hears of it. Returns 0 or -ENOMEM. */
int jobsync_set_cpus(jobsync *s, cg_backend *cg, uint64_t id, const char *cgroup, const char *cpus);
/* Replace the job's file of that kind with text (jobdir_replace, through a spare when there is
 * one), after any removal of the job's files still queued: the loop then waits for the files
 * lane (never for the cgroups lane), which happens only when a job comes back to this host the
 * moment its earlier run's report was acknowledged. Returns 0 or -errno. */
int jobsync_replace(jobsync *s, uint64_t id, jobfile_kind kind, const char *text);
/* Whether a removal of the job's files (jobsync_remove) is queued or under way: its report was
 * acknowledged, and is not to be sent again. */
bool jobsync_pending(jobsync *s, uint64_t id);
/* Whether a removal of the job's cgroup (jobsync_remove_cgroup) is queued or under way: a later
 * attempt of the job must not make its cgroup yet, or it finds the old one. */
bool jobsync_cgroup_pending(jobsync *s, uint64_t id);
/* Call fn(userdata) on the loop each time it hears of a finished batch (after logging what
 * failed in it), so that what waits for a removal may go on. */
void jobsync_on_done(jobsync *s, void (*fn)(void *userdata), void *userdata);
/* The number of a spare file (jobdir.h) now the caller's to take, 0 when there is none: the
 * removals above retire a job's files to spares (JOBDIR_SPARES_MAX at most, the rest are
 * removed), and the writes take them. */
uint64_t jobsync_take_spare(jobsync *s);
/* Wait for both lanes to finish everything queued, and log what failed. */
void jobsync_drain(jobsync *s);
/* Finish what is queued (failures are not logged), stop the threads and free everything. NULL is
 * fine. */
void jobsync_free(jobsync *s);
