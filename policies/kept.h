/* kept.h - the waiting jobs a dispatcher keeps between passes (dispatch.h, ops.by_id), so that
 * an exit reads its own list instead of every pending job the core would offer: what it reads
 * of each job, in id order, taken from a whole pass (sched_dispatch) and from the arrivals that
 * wait; a job the core no longer offers is dropped when it would start (sched_kept_take). */
#pragma once
#include "dispatch.h"

typedef struct sched_kept_job {
        sched_job job; /* job.id 0: dropped; job.type borrowed from the core's job, which outlives its wait */
        size_t tag;    /* the policy's own (LoTES: the job's class) */
} sched_kept_job;

typedef struct sched_kept {
        sched_kept_job *v;
        size_t n, cap, ndropped;
        uint64_t top; /* the largest id added since the last clear */
} sched_kept;

/* Add job with tag in id order: at the end for an arrival, O(1); a fresh job's (dispatch.h)
 * goes back past the later ones. Returns 0 or -ENOMEM. */
int sched_kept_push(sched_kept *k, const sched_job *job, size_t tag);
/* Empty k, keeping its memory. */
void sched_kept_clear(sched_kept *k);
/* sched_pass_keep each job k holds, in whole pass p. O(k's jobs). */
void sched_kept_mark(const sched_kept *k, const sched_pass *p);
/* ops.on_whole for a policy with k its one list: mark the jobs k holds, then, but in a run, make
 * k the jobs of p up to the last arrival (ids <= seen) marked kept, tag 0. Returns 0 or
 * -ENOMEM. */
int sched_kept_whole(sched_kept *k, const sched_pass *p, uint64_t seen);
/* Remove the dropped entries once they are half of k (O(1) amortised per drop); before a scan. */
void sched_kept_tidy(sched_kept *k);
/* Entry i is to start in pass p: its position in p->jobs (sched_pass_lookup), the entry dropped;
 * -1 when the core no longer offers it (dropped too), or -ENOMEM. */
long sched_kept_take(sched_kept *k, size_t i, sched_pass *p);
/* Free k's memory. */
void sched_kept_free(sched_kept *k);
