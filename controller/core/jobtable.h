/* jobtable.h - the controller's jobs by id: an open-addressing hash table of job pointers (linear
 * probing, backward-shift deletion, at most half full), so that a lookup is O(1) whatever ids
 * the jobs kept have: all of them in the controller, the live ones only in a simulator that
 * forgets the jobs that ended (ctl_forget_ended). st->jobs keeps the order by id. */
#pragma once
#include "job.h"
#include <stddef.h>
#include <stdint.h>

typedef struct jobtable {
        job **slots; /* NULL: a free slot; a job's id is its key */
        size_t cap;  /* a power of two, or 0 */
        size_t n;
} jobtable;

/* Make room for more jobs, so that adding them cannot fail. Returns 0 or -ENOMEM. */
int jobtable_reserve(jobtable *t, size_t more);
/* Add j, whose id t does not hold (the caller's to check). Returns 0 or -ENOMEM. */
int jobtable_add(jobtable *t, job *j);
/* The job with that id, or NULL. O(1). */
job *jobtable_find(const jobtable *t, uint64_t id);
/* Drop the job with that id (nothing when t has none); the job is the caller's. O(1). */
void jobtable_remove(jobtable *t, uint64_t id);
/* Give back the memory of a table that shrank below an eighth of its slots (after removals).
 * Returns 0, or -ENOMEM with t left as it was. */
int jobtable_fit(jobtable *t);
/* Free the slots (not the jobs). */
void jobtable_free(jobtable *t);
