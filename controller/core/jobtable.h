/* jobtable.h - the controller's jobs by id: an idmap (idmap.h) of job pointers, so that a lookup
 * is O(1) whatever ids the jobs kept have: all of them in the controller, the live ones only in a
 * simulator that forgets the jobs that ended (ctl_forget_ended). st->jobs keeps the order by id.
 * These wrappers only give idmap's calls their job type. */
#pragma once
#include "idmap.h"
#include "job.h"
#include <stddef.h>
#include <stdint.h>

typedef idmap jobtable;

_Static_assert(offsetof(job, id) == 0, "a job's id is its key in the jobtable (idmap.h)");

/* Make room for more jobs, so that adding them cannot fail. Returns 0 or -ENOMEM. */
static inline int jobtable_reserve(jobtable *t, size_t more) { return idmap_reserve(t, more); }
/* Add j, whose id t does not hold (the caller's to check). Returns 0 or -ENOMEM. */
static inline int jobtable_add(jobtable *t, job *j) { return idmap_add(t, j); }
/* The job with that id, or NULL. O(1). */
static inline job *jobtable_find(const jobtable *t, uint64_t id) { return idmap_find(t, id); }
/* Drop the job with that id (nothing when t has none); the job is the caller's. O(1). */
static inline void jobtable_remove(jobtable *t, uint64_t id) { (void)idmap_remove(t, id); }
/* Give back the memory of a table that shrank below an eighth of its slots (after removals).
 * Returns 0, or -ENOMEM with t left as it was. */
static inline int jobtable_fit(jobtable *t) { return idmap_fit(t); }
/* Free the slots (not the jobs). */
static inline void jobtable_free(jobtable *t) { idmap_free(t); }
