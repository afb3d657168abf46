/* idset.h - jobs ordered by id, with stale entries left in place and compacted in bulk. */
#pragma once
#include "job.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Jobs ordered by id, so that a bulk cancel reaches the k jobs it ends in O(k log n) without
 * walking the others (state.c, "indexes"): the jobs in one state (JOB_PENDING, JOB_RUNNING) or
 * live (state -1: either). A job that leaves stays as a stale entry until stale ones pass half
 * and the set is compacted, so that leaving is O(1) amortised; joining appends (ids grow),
 * but for a requeued job, which goes back in its place. */
typedef struct ctl_idset {
        job **v; /* by id, stale entries included */
        size_t n, cap, nstale;
        int state;
} ctl_idset;

/* The position of the first of v[lo..hi), in id order, whose id is >= id. O(log n). */
size_t ctl_jobs_rank(job *const *v, size_t lo, size_t hi, uint64_t id);
/* Whether j, an entry of s, is a member of it (not a stale entry). */
bool ctl_idset_member(const ctl_idset *s, const job *j);
/* The position in s of the first entry whose id is >= id. O(log n). */
size_t ctl_idset_rank(const ctl_idset *s, uint64_t id);
/* Make room in s for n more entries, so that joining cannot fail. Returns 0 or -ENOMEM. */
int ctl_idset_reserve(ctl_idset *s, size_t n);
/* j, not a member of s, became one. Returns 0 or -ENOMEM. O(1) for a new job, else O(n). */
int ctl_idset_join(ctl_idset *s, job *j);
/* The same, with j's position in s into *at (set when it fails too: where it would be). */
int ctl_idset_join_at(ctl_idset *s, job *j, size_t *at);
/* A member of s left it (its state has changed): its entry is stale, and the set is compacted
 * when stale entries pass half of it, O(1) amortised. */
void ctl_idset_leave(ctl_idset *s);
/* Drop the stale entries of s. O(n). */
void ctl_idset_compact(ctl_idset *s);
/* Free s's entries; s is empty after. */
void ctl_idset_free(ctl_idset *s);
