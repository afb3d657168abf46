/* arrays.h - job arrays in the controller: one name for a whole array (its id, the first task's)
 * and one for each task (A_i: the array's id and the task's index), and the throttle ("%N": at
 * most N tasks running at once) that a scheduling pass applies. An array's tasks are jobs with
 * consecutive ids from the array's id, in ascending order of their indexes (state.c,
 * ctl_array_more), so both names resolve by binary search over the jobs in id order. */
#pragma once
#include "state.h"

/* The last task's id of the array whose id is id, into *last. Returns 0, or -ENOENT with a
 * one-line reason in err (no such job, or not an array's first task). O(log jobs). */
int ctl_array_span(ctl_state *st, uint64_t id, uint64_t *last, char err[PROTO_ERRLEN]);
/* The id of task index of the array whose id is array, into *id. Returns 0, or -ENOENT with a
 * one-line reason in err. O(log jobs). */
int ctl_array_task(ctl_state *st, uint64_t array, uint32_t index, uint64_t *id, char err[PROTO_ERRLEN]);
/* Drop from the n jobs a pass offers (in its order) the tasks of throttled arrays beyond what
 * their throttle leaves, counting each array's running tasks and its tasks offered before, and
 * mark them JOB_WAIT_THROTTLE. Returns how many jobs are kept, in order. O(n log jobs +
 * running); a no-op while no throttled array was ever submitted (st->throttle_seen). */
size_t ctl_array_throttle(ctl_state *st, sched_job *jobs, size_t n);
